#!/usr/bin/env bash
# Issue 16 part 5's residual of the layer's input on the GPU, one device call of under 10 minutes (kind
# nvidia-h200); logs under $OUT, a table last: tests/test_gpu_input_residual.py (each file against fp64 at its own and
# scaled size, x through any strides, torch.compile), the example's speed at 1024 x 8192 -> 8192 against eager and
# torch.compile, a planted bug (benchmarks/mutations.py)
#   device: PYTHONPATH=. bash benchmarks/verify_issue16_input_residual.sh
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
run xres 300 python3 -m pytest -m gpu tests/test_gpu_input_residual.py -v -s -p no:cacheprovider -rfE --durations=5
run bench 110 python3 -m fusegen from-model examples/input_residual_gn_gelu_8192.py --out "$OUT/generated" --bench \
  --reps 30
tail -n 6 "$OUT/bench.txt"
[ "$SECONDS" -lt 440 ] && run mutants 130 python3 benchmarks/mutations.py --only input_grad --out "$OUT/mutants"
grep -E "input_residual.*\[|stage_input.*\[|PASSED|FAILED" "$OUT/xres.txt" | head -n 30
tail -n 4 "$OUT/mutants.txt" 2>/dev/null
cat "$OUT/table.txt"
