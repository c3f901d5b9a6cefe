#!/usr/bin/env bash
# Session 34, after the scales went down to float's subnormal powers (a row of tiny values keeps its bits) and
# mma.sync's unscale multiplies the accumulator by the row's scale first: the scaled-planes tests (extreme rows of
# x and of the output's gradient, every engine) and the fp32 module suite's random shapes (sm_90 and sm_80 plans)
# with the committed module. Logs under $OUT, a table last.
#   device: PYTHONPATH=. bash benchmarks/verify_session34c.sh
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
run planes 330 env FUSEGEN_PRECISIONS=3xtf32,tf32 python3 -m pytest -q tests/test_gpu_scaled_planes.py -p no:cacheprovider
run module 250 env FUSEGEN_PRECISIONS=3xtf32,tf32 FUSEGEN_GPU_EXAMPLES=15 python3 -m pytest -q tests/test_gpu_module.py \
  -k "headline_committed or random_shapes" -p no:cacheprovider
cat "$OUT/table.txt"
grep -E "^(FAILED|ERROR)" "$OUT/planes.txt" "$OUT/module.txt" | head -n 10
