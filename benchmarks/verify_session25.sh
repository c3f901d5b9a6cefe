#!/usr/bin/env bash
# Session 25's device calls (kind nvidia-h200), each under 10 minutes; logs under $OUT, a table last.
#   STEP=1  the several-layers file set (tests/test_gpu_layers.py: every layers_*.py on both engines, 16 bits,
#           autocast, torch.compile), the random fp32 chains (they now draw pools), and issue 15's step at the
#           headline in bf16 / fp16 (benchmarks/step_gaps.py: accumulating and fresh gradients, kernels alone)
#   device: STEP=1 PYTHONPATH=. bash benchmarks/verify_session25.sh
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
PYTEST=(python3 -m pytest -m gpu -v -p no:cacheprovider -rfE --durations=6)
case "${STEP:-1}" in
  1)
    run gaps 130 python3 benchmarks/step_gaps.py --dtypes bfloat16,float16
    run layers 300 "${PYTEST[@]}" tests/test_gpu_layers.py
    [ "$SECONDS" -lt 440 ] && run chains 130 "${PYTEST[@]}" tests/test_gpu_chains.py -k random
    tail -n 14 "$OUT/gaps.txt"
    grep -E "FAILED|ERROR" "$OUT"/layers.txt "$OUT"/chains.txt | head -n 20 ;;
  *) echo "STEP must be 1, got ${STEP}" >&2; exit 2 ;;
esac
cat "$OUT/table.txt"
