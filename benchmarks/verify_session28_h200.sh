#!/usr/bin/env bash
# Session 28's H200 call: the tf32 mode over scaled fp16 planes at the headline (accuracy on every distribution,
# speed beside eager and torch.compile with TF32 on: benchmarks/tf32_scaled.py; its step's kernels:
# benchmarks/kernel_times.py), then issue 15's step in bf16 and fp16 (benchmarks/step_gaps.py). Logs under $OUT.
#   device (kind nvidia-h200): PYTHONPATH=. bash benchmarks/verify_session28_h200.sh
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
run tf32 270 python3 benchmarks/tf32_scaled.py
run kernels 90 python3 benchmarks/kernel_times.py tests/reference_model.py --precision tf32 --reps 5
run gaps 230 python3 benchmarks/step_gaps.py --dtypes bfloat16,float16
cat "$OUT/table.txt"
grep -v Warn "$OUT/tf32.txt" | tail -n 14
grep -E "us/step|^ +[0-9]" "$OUT/kernels.txt" | head -n 10
tail -n 8 "$OUT/gaps.txt"
