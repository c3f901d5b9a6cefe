#!/usr/bin/env bash
# Session 41, last call (e73d00e's kernels again after the GroupNorm backward experiment was reverted): the parts of
# the 16-bit GPU suite that session 40's stmatrix stores have not yet run through (run 1 reached them after its
# time: 108 of test_gpu_dtypes.py's module tests passed), both files at once so that their builds overlap.
#   device (kind nvidia-h200): PYTHONPATH=. bash benchmarks/verify_session41d.sh
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
run dtypes_rest 290 python3 -m pytest -q tests/test_gpu_dtypes.py -k \
  "scalar_parameters or stage_before_narrow or random_chains" &
run autocast 290 python3 -m pytest -q tests/test_gpu_autocast.py &
wait
cat "$OUT/table.txt"
tail -n 3 "$OUT/dtypes_rest.txt" "$OUT/autocast.txt"
