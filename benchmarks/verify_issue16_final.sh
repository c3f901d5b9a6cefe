#!/usr/bin/env bash
# Issue 16's last device calls: the suite's parts that session 26 did not run on main as it is now (session 25 ran
# them before the two branches, the accuracy bar's kinks and the tiny-GEMM threshold landed), one call each:
# dtypes (~450 s on an H100 with its builds), rewrites (~560 s), layers, real_use, and the planted bugs in thirds.
# Logs under $OUT (only a few files: the device returns a limited count), a table last.
#   device: STEP=dtypes|rest|rewrites|layers|real_use|mut0|mut1|mut2 PYTHONPATH=. bash benchmarks/verify_issue16_final.sh
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
case "${STEP:-}" in
  dtypes|rewrites|layers|real_use)
    PART=$STEP SUITE_TIMEOUT=570 run "$STEP" 580 bash benchmarks/device_suite.sh
    rm -f "$OUT/accuracy-$STEP.jsonl" ;;
  rest)  # what PART=dtypes, rewrites and layers reached last, one call (each ran out of 570 s on a fresh machine)
    run dtypes_rest 250 python3 -m pytest tests/test_gpu_dtypes.py -m gpu -q -p no:cacheprovider -rfE \
      -k "(narrow_groups and float16) or random_shapes_per_dtype or random_chains_per_dtype"
    run rewrites_rest 180 python3 -m pytest tests/test_gpu_dropout.py tests/test_gpu_input_residual.py -m gpu -q \
      -p no:cacheprovider -rfE -k "torch_compile_drops or input_residual"
    run layers_rest 130 python3 -m pytest tests/test_gpu_layers.py -m gpu -q -p no:cacheprovider -rfE \
      -k "inside_torch_compile" ;;
  mut0|mut1|mut2)  # each mutant writes a log: those out of $OUT; the summary table comes back as $OUT/$STEP.txt
    run "$STEP" 570 env OUT=/tmp/fusegen-mutants-out PART=mutations MUT_PART="${STEP#mut}/3" \
      bash benchmarks/device_suite.sh ;;
  *) echo "STEP must be dtypes, rest, rewrites, layers, real_use, mut0, mut1 or mut2, got '${STEP:-}'" >&2; exit 2 ;;
esac
cat "$OUT/table.txt"
