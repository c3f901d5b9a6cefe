#!/usr/bin/env bash
# What issue 16's closing still needs on the GPU after session 25 (which ran layers, dtypes, rewrites and real_use
# on this code: tests/gpu-results/h100-2026-11-26-s25/): the model files of tests/test_gpu_chains.py on both engine
# families, in four shards (one call each: ~32 module builds), then the headline module's suite and the planted
# bugs. Logs under $OUT, a table last.
#   device: STEP=0..3 PYTHONPATH=. bash benchmarks/verify_issue16_close.sh   (shard STEP of 4)
#           STEP=module PYTHONPATH=. bash benchmarks/verify_issue16_close.sh
#           STEP=branches PYTHONPATH=. bash benchmarks/verify_issue16_close.sh   (session 25's two branches' tests)
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
case "${STEP:-0}" in
  0|1|2|3) PART=chains K=model_file FUSEGEN_SHARD="$STEP/4" SUITE_TIMEOUT=570 run "chains$STEP" 580 \
             bash benchmarks/device_suite.sh ;;
  module)
    PART=module SUITE_TIMEOUT=330 run module 335 bash benchmarks/device_suite.sh
    PART=mutations run mutations 240 bash benchmarks/device_suite.sh ;;
  branches)
    run residual 200 python3 -m pytest tests/test_gpu_input_residual.py -m gpu -v -p no:cacheprovider -rfE -k autocast
    run scalar 300 python3 -m pytest tests/test_gpu_dtypes.py -m gpu -v -p no:cacheprovider -rfE -k scalar ;;
  *) echo "STEP must be 0, 1, 2, 3, module or branches, got ${STEP}" >&2; exit 2 ;;
esac
cat "$OUT/table.txt"
