#!/usr/bin/env bash
# Prepared in session 37 for the next session's first device call (logs under $OUT, a table last). On an H200:
# issue 17's targets (verify_h200_targets.sh STEP=1; STEP=2, issue 15's, is the call after). On any other card:
#   1. The persistent forward on the epilogues the planner does not yet give it (no GroupNorm, the row and the
#      column strategies) at an unsplit size, against fp64 (persistent_forward_check.py --widen): where it passes,
#      Plan.persistent_forward takes the candidate rule (TILE_LOCAL and TWO_STAGE excluded).
#   2. The committed module's GPU test (the persistent forward in the committed headline module).
#   3. The 3xtf32 headline beside eager and torch.compile on this card (tf32_scaled.py, the targets script's
#      first step), for the record of the persistent forward.
#   device (kind nvidia-h200): PYTHONPATH=. bash benchmarks/verify_session38.sh
set -uo pipefail
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  STEP=1 exec bash "$(dirname "$0")/verify_h200_targets.sh"
fi
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
run persist 200 python3 benchmarks/persistent_forward_check.py --widen
run module 200 env FUSEGEN_PRECISIONS=3xtf32 python3 -m pytest -q tests/test_gpu_module.py -k headline_committed \
  -p no:cacheprovider
run x3 190 python3 benchmarks/tf32_scaled.py --precision 3xtf32
cat "$OUT/table.txt"
grep -E "\[|failed" "$OUT/persist.txt" | cut -c1-200
grep -E "^(FAILED|ERROR)" "$OUT/module.txt" | head -n 5
grep -v Warn "$OUT/x3.txt" | tail -n 8
