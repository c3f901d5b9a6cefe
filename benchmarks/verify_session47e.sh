#!/usr/bin/env bash
# What an instruction costs a sustained step (the card at its power cap, verify_session47b): each consumer warp
# runs 32 or 64 extra rotate-xor pairs a k tile beside its products (epilogue_variants mainloop_pad_N). Hidden in
# a profile; if instructions are energy, the sustained step slows in proportion. The mainloop issues ~83 warp
# instructions a k tile (4 of them HGMMA: perf notes v0.44), so this says what trimming them could be worth.
#   device (kind nvidia-h200): PYTHONPATH=. bash benchmarks/verify_session47e.sh
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
run variants 400 python3 benchmarks/epilogue_variants.py --dtype bfloat16 --reps 5 --sustained 3 --rounds 2 \
  --variants base,mainloop_pad_32,mainloop_pad_64
cat "$OUT/table.txt"
grep -A 6 "us a step per kernel" "$OUT/variants.txt" | cut -c1-40,60-120
grep -A 5 "^sustained" "$OUT/variants.txt"
