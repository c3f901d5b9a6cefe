#!/usr/bin/env bash
# Where the epilogues' bytes go at the power cap: dW's and dx's staging and bulk stores (no_tile_staging,
# no_bulk_store) and the forward's z and out stores (no_fwd_stores, its arithmetic kept), sustained (3 s back to
# back, 2 alternating rounds) beside their profiled kernels; bf16. Which of them a next change should take on.
#   device (kind nvidia-h200): PYTHONPATH=. bash benchmarks/verify_session47f.sh
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
run variants 400 python3 benchmarks/epilogue_variants.py --dtype bfloat16 --reps 5 --sustained 3 --rounds 2 \
  --variants base,no_tile_staging,no_bulk_store,no_fwd_stores
cat "$OUT/table.txt"
grep -A 6 "us a step per kernel" "$OUT/variants.txt" | cut -c1-40,60-130
grep -A 6 "^sustained" "$OUT/variants.txt"
