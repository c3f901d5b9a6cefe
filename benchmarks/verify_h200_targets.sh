#!/usr/bin/env bash
# Issues 15 and 17's targets on an H200, in two calls (each under the 10-minute limit; logs under $OUT):
#   STEP=1: the 3xtf32 and tf32 modes at the headline beside eager and torch.compile (benchmarks/tf32_scaled.py:
#           accuracy on every distribution, forward / forward+backward), then bench.py's per-GEMM report
#           (TFLOP/s against each engine's ceiling, the operands' per-call kernels) without torch.compile.
#   STEP=2: issue 15's step in bf16 and fp16 (benchmarks/step_gaps.py).
#   device (kind nvidia-h200): STEP=1 PYTHONPATH=. bash benchmarks/verify_h200_targets.sh
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
if [ "${STEP:-1}" = 1 ]; then
  run 3xtf32 250 python3 benchmarks/tf32_scaled.py --precision 3xtf32
  run tf32 150 python3 benchmarks/tf32_scaled.py --precision tf32
  run bench 150 python3 benchmarks/bench.py --precisions 3xtf32,tf32 --no-compile --reps 20 --out "$OUT/bench"
  cat "$OUT/table.txt"
  grep -v Warn "$OUT/3xtf32.txt" | tail -n 8
  grep -v Warn "$OUT/tf32.txt" | tail -n 5
  tail -n 6 "$OUT/bench.txt"
else
  run gaps 300 python3 benchmarks/step_gaps.py --dtypes bfloat16,float16
  cat "$OUT/table.txt"
  tail -n 8 "$OUT/gaps.txt"
fi
