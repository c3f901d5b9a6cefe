#!/usr/bin/env bash
# Issue 15's last device call, on an H200 (its targets are H200 figures): the step three ways
# (benchmarks/step_gaps.py: forward, forward+backward with the gradients accumulating and set to None, the kernels'
# share) and each kernel's TFLOP/s beside eager and torch.compile in the same dtype (benchmarks/dtype_bench.py),
# bf16 and fp16 at the headline size. Logs under $OUT, a table last.
#   device (kind nvidia-h200): PYTHONPATH=. bash benchmarks/verify_issue15_final.sh
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
run gaps 240 python3 benchmarks/step_gaps.py --dtypes bfloat16,float16
run bench 300 python3 benchmarks/dtype_bench.py --dtypes bfloat16,float16 --reps 15 --compile
cat "$OUT/table.txt"
tail -n 6 "$OUT/gaps.txt"
grep -E "TFLOP|forward:|dw:|dx:|fusegen|eager|compile" "$OUT/bench.txt" | tail -n 16
