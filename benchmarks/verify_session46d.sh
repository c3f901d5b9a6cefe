#!/usr/bin/env bash
# Session 46, call 4: dW's staging (~12 us at the bf16 headline, perf notes v0.45) asked through variants of the
# current kernels: its barriers and buffer waits (no_staging_waits, racy), its shared-memory bytes (staging_twice),
# the ring at 3 stages with the output stage as before (stages_3) or twice the rows a pass (stages_3_out_rows_128:
# two passes a 256-row tile, not four), against base and no_tile_staging. (Run 3 had the forward's mainloop on 3
# stages 12-18 us slower than on 4: each GEMM's row of the table says what 3 stages cost it.)
#   device (kind nvidia-h200): PYTHONPATH=. bash benchmarks/verify_session46d.sh
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
run variants 300 python3 benchmarks/epilogue_variants.py --dtype bfloat16 \
  --variants base,no_staging_waits,staging_twice,stages_3,stages_3_out_rows_128,no_tile_staging
cat "$OUT/table.txt"
grep -A 14 "us a step per kernel" "$OUT/variants.txt" | cut -c1-36,60-140
