#!/usr/bin/env bash
# The step runs at the card's power cap (verify_session47b: sw power cap in every sample, ~690 W, SM 1485-1620 MHz
# against 1980): so what costs energy, not profiled time, is what to cut. What the operands' bytes from L2 cost:
# epilogue_variants' p_loaded_once / r_loaded_once (the producer loads P's or R's stages only on the ring's first
# pass) and the forward's epilogue (no_fwd_epilogue), each timed back to back for 3 s (--sustained), bf16.
#   device (kind nvidia-h200): PYTHONPATH=. bash benchmarks/verify_session47c.sh
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
run variants 420 python3 benchmarks/epilogue_variants.py --dtype bfloat16 --reps 5 --sustained 3 --rounds 2 \
  --variants base,p_loaded_once,r_loaded_once,no_fwd_epilogue
cat "$OUT/table.txt"
grep -A 12 "us a step per kernel" "$OUT/variants.txt" | cut -c1-40,60-120
grep -A 6 "^sustained" "$OUT/variants.txt"
