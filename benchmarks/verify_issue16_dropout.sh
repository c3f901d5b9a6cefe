#!/usr/bin/env bash
# Issue 16 part 6 (dropout in training) on the GPU, one device call of under 10 minutes (kind nvidia-h200); logs
# under $OUT, a table last: tests/test_gpu_dropout.py (each dropout file against fp64 with our mask at its own and
# scaled size, eval, the masks' statistics, the gradient where dropped, manual_seed, bf16, torch.compile), the
# example's speed at 1024 x 8192 -> 8192 against eager and torch.compile, its kernels' times, two planted bugs
# (benchmarks/mutations.py), then the chain suites' stage files on the row-threaded templates (their PTX is
# unchanged: benchmarks/ptx_same.py; run as a spot check while time is left)
#   device: PYTHONPATH=. bash benchmarks/verify_issue16_dropout.sh
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
run dropout 330 python3 -m pytest -m gpu tests/test_gpu_dropout.py -v -s -p no:cacheprovider -rfE --durations=5
run bench 110 python3 -m fusegen from-model examples/dropout_gn_gelu_8192.py --out "$OUT/generated" --bench --reps 30
tail -n 6 "$OUT/bench.txt"
[ "$SECONDS" -lt 430 ] && run kernels 60 python3 benchmarks/kernel_times.py examples/dropout_gn_gelu_8192.py --reps 10
[ "$SECONDS" -lt 470 ] && run mutants 100 python3 benchmarks/mutations.py --only dropout_bwd_mask,dropout_scale \
  --out "$OUT/mutants"
grep -E "dropout.*(PASS|FAIL|\[)" "$OUT/dropout.txt" | head -n 30
cat "$OUT/table.txt"
