#!/usr/bin/env bash
# Prepared in session 44 (CPU-checked: `python benchmarks/epilogue_variants.py --check "NVIDIA H200"` finds every
# text below in the bf16 headline module; not yet run). Three questions from perf notes v0.44:
#   1. the 16-bit forward's epilogue (5766 warp instructions a warp a tile before a9b88b0): what the rsqrt's denormal
#      path, the row sums' 0 + v and xhat's second v - mean cost (fwd_rstd_ftz, fwd_sums_neg_zero,
#      fwd_xhat_from_d), against the epilogue left out;
#   2. dW's ~15 us over its products: the staging and the bulk stores apart (begin_tile, which ran the next tile's
#      products under the staging, gained nothing: do the staging's shared-memory traffic or the stores slow the
#      products?);
#   3. the one-pass GroupNorm backward's batch kept as loaded (gn_bwd_stats_raw: the fp64 statistics; gn_bwd_batch_raw:
#      z and grad_out too), converted where used: its loads' conversions sat right after the loads in the prefetched
#      batch, 40% of the loop's samples on them (run 3 of session 44). Both compile for sm_90a without spills
#      (bf16 56 registers, the 32-bit forms). If one gains, it goes into the template and same_results.py checks it.
#   device (kind nvidia-h200): PYTHONPATH=. bash benchmarks/verify_session45.sh
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
run variants 400 python3 benchmarks/epilogue_variants.py --dtype bfloat16 \
  --variants base,no_fwd_epilogue,no_stats,fwd_rstd_ftz,fwd_sums_neg_zero,fwd_xhat_from_d,no_bulk_store,no_tile_staging,\
gn_bwd_stats_raw,gn_bwd_batch_raw
cat "$OUT/table.txt"
tail -n 30 "$OUT/variants.txt"
