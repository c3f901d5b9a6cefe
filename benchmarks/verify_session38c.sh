#!/usr/bin/env bash
# Session 38, run 3: the 16-bit forward's GroupNorm epilogue (46 of bf16's 216 us in run 2) split into its stores
# and its arithmetic: base, without z's store, without both stores (the arithmetic kept), without the epilogue;
# bf16 and tf32 (scaled planes), the headline on this card.
#   device: PYTHONPATH=. bash benchmarks/verify_session38c.sh
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
V=base,no_z,no_fwd_stores,no_fwd_epilogue
run var_bf16 200 python3 benchmarks/epilogue_variants.py --dtype bfloat16 --variants $V --reps 10
run var_tf32 200 python3 benchmarks/epilogue_variants.py --dtype float32 --precision tf32 --variants $V --reps 10
cat "$OUT/table.txt"
for f in var_bf16 var_tf32; do grep -A 4 "us a step per kernel" "$OUT/$f.txt" | cut -c1-120; done
