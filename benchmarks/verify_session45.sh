#!/usr/bin/env bash
# Prepared in session 44 (CPU-checked: `python benchmarks/epilogue_variants.py --check "NVIDIA H200"` finds every
# text below in the bf16 headline module; not yet run). Two questions from perf notes v0.44:
#   1. the 16-bit forward's epilogue (5766 warp instructions a warp a tile before a9b88b0): what the rsqrt's denormal
#      path and the row sums' 0 + v cost (fwd_rstd_ftz, fwd_sums_neg_zero), against the epilogue left out;
#   2. dW's ~15 us over its products: the staging and the bulk stores apart (begin_tile, which ran the next tile's
#      products under the staging, gained nothing: do the staging's shared-memory traffic or the stores slow the
#      products?).
#   device (kind nvidia-h200): PYTHONPATH=. bash benchmarks/verify_session45.sh
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
run variants 400 python3 benchmarks/epilogue_variants.py --dtype bfloat16 \
  --variants base,no_fwd_epilogue,no_stats,fwd_rstd_ftz,fwd_sums_neg_zero,no_bulk_store,no_tile_staging
cat "$OUT/table.txt"
tail -n 30 "$OUT/variants.txt"
