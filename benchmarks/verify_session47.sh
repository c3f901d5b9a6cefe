#!/usr/bin/env bash
# Prepared in session 46 (not run: its device time was spent). First, the persistent 16-bit forward at sizes other
# than the headline: tests/test_gpu_dtypes.py's PERSISTENT_FORWARD_SHAPES (every smaller shape there is split
# along K, so only the headline ran that kernel; tests/test_schedule.py checks their schedule on the CPU) on the
# planned wgmma tile and the 128-row one, and the mutation planted in it (gn_staged_stats_row), which must be
# caught; then the mma.sync module cases (not re-run since session 44); then what the chain's last rounding, the
# store's own in 16 bits, costs the forward (epilogue_variants fwd_last_round_off).
# Two calls, each within the 600 s a device call may run:
#   device (kind nvidia-h200): PYTHONPATH=. bash benchmarks/verify_session47.sh 1   (persistent, mutation, variants)
#   device (kind nvidia-h200): PYTHONPATH=. bash benchmarks/verify_session47.sh 2   (mma; run 2 of session 47 ran
#   "half_module and mma", which matches wgmma's names too: all 132)
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
if [ "${1:-1}" = 1 ]; then
  run persistent 200 python3 -m pytest -q tests/test_gpu_dtypes.py -k "half_module and wgmma and (1000x264x4104x513 or 777x520x8192x512)"
  run mutation 120 python3 benchmarks/mutations.py --only gn_staged_stats_row --out "$OUT/mutations"
  run variants 150 python3 benchmarks/epilogue_variants.py --dtype bfloat16 --variants base,fwd_last_round_off
else
  run mma 500 python3 -m pytest -q tests/test_gpu_dtypes.py -k "half_module and not wgmma"
fi
cat "$OUT/table.txt"
grep -E "passed|failed|Error" "$OUT"/persistent.txt "$OUT"/mma.txt 2>/dev/null | tail -n 6
[ -f "$OUT/mutation.txt" ] && tail -n 3 "$OUT/mutation.txt" | cut -c1-300
[ -f "$OUT/variants.txt" ] && grep -A 4 "us a step per kernel" "$OUT/variants.txt" | cut -c1-40,60-120
true
