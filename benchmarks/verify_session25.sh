#!/usr/bin/env bash
# Session 25's device calls (kind nvidia-h200), each under 10 minutes; logs under $OUT, a table last.
#   STEP=1  the several-layers file set (tests/test_gpu_layers.py: every layers_*.py on both engines, 16 bits,
#           autocast, torch.compile), the random fp32 chains (they now draw pools), and issue 15's step at the
#           headline in bf16 / fp16 (benchmarks/step_gaps.py: accumulating and fresh gradients, kernels alone)
#   STEP=2  the rest of STEP 1's layers (16 bits, autocast, torch.compile: the step ran out of time there), then
#           PART=real_use of benchmarks/device_suite.sh
#   STEP=3  PART=dtypes beside STEP 2's layers under autocast and compile (they ran out of time);  STEP=4  PART=rewrites;  STEP=5 / 6  PART=chains in its two halves;  STEP=7  PART=module
#           and PART=mutations
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
  2)
    PART=layers K='float16 or autocast or compile' SUITE_TIMEOUT=300 run layers 310 bash benchmarks/device_suite.sh
    PART=real_use SUITE_TIMEOUT=230 run real_use 240 bash benchmarks/device_suite.sh ;;
  3)  # side by side (both mostly wait on nvcc, which 16 cores serve)
    PART=layers K='autocast or compile' SUITE_TIMEOUT=560 run layers 570 bash benchmarks/device_suite.sh &
    PART=dtypes SUITE_TIMEOUT=570 run dtypes 580 bash benchmarks/device_suite.sh
    wait ;;
  4) PART=rewrites SUITE_TIMEOUT=570 run rewrites 580 bash benchmarks/device_suite.sh ;;
  5) PART=chains K='model_file and sm90' SUITE_TIMEOUT=570 run chains90 580 bash benchmarks/device_suite.sh ;;
  6) PART=chains K='not (model_file and sm90)' SUITE_TIMEOUT=570 run chains80 580 bash benchmarks/device_suite.sh ;;
  7) PART=module SUITE_TIMEOUT=330 run module 335 bash benchmarks/device_suite.sh
     PART=mutations run mutations 240 bash benchmarks/device_suite.sh ;;
  *) echo "STEP must be 1 to 7, got ${STEP}" >&2; exit 2 ;;
esac
cat "$OUT/table.txt"
