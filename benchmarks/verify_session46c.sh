#!/usr/bin/env bash
# Session 46, call 3: run 2 had the epilogue-warps forward slower (bf16 190.0 -> 200.4 us, fp16 196.7 -> 206.1).
# Where it goes: its mainloop alone on the ring of 3 stages (no_fwd_epilogue; 4 stages ran 169.5 in session 45),
# the staging and handshake alone (fwd_staging_only), against base.
#   device (kind nvidia-h200): PYTHONPATH=. bash benchmarks/verify_session46c.sh
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
run variants 200 python3 benchmarks/epilogue_variants.py --dtype bfloat16 --variants base,no_fwd_epilogue,fwd_staging_only,no_stats
cat "$OUT/table.txt"
grep -A 12 "us a step per kernel" "$OUT/variants.txt" | cut -c1-40,60-120
