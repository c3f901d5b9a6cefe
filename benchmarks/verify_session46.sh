#!/usr/bin/env bash
# Prepared in session 45 (CPU-checked: `python benchmarks/epilogue_variants.py --check "NVIDIA H200"` finds every
# text below in the bf16 headline module, and both new variants compile for sm_90a; not yet run). The question
# from perf notes v0.45: what dW's staging (~12 us at the bf16 headline) costs through: its barriers and buffer
# waits (no_staging_waits, racy) or its shared-memory bytes (staging_twice: written twice; if dW grows ~12 us more,
# the bytes are the cost), against no_bulk_store and no_tile_staging of session 45's run 1; and the forward's
# statistics' stores (no_stats: ~8.6 us for 8 MB, each 8-byte value its own sector) stored group-major instead
# (fwd_stats_group_major: a warp's store 256 contiguous bytes; timing only). Then issue 15's step again.
#   device (kind nvidia-h200): PYTHONPATH=. bash benchmarks/verify_session46.sh
# First, to land with it: the one-pass GroupNorm backward's grad_out read element by element through one pointer
# stepped by sg1 (its 64-bit form spills 8 bytes on sm_80 in fp16 with the 8 offsets held at once; tests/test_dtypes.py
# lists that spill as known until then): apply it, then grad_out in every layout, offsets past 32 bits.
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
run layouts 150 python3 -m pytest -q -x tests/test_gpu_dtypes.py -k "grad_out_layout or past_32_bits"
run variants 300 python3 benchmarks/epilogue_variants.py --dtype bfloat16 \
  --variants base,no_bulk_store,no_tile_staging,no_staging_waits,staging_twice,no_stats,fwd_stats_group_major
run step 100 python3 benchmarks/step_gaps.py --dtypes bfloat16,float16 --rounds 3
cat "$OUT/table.txt"
grep -E "passed|failed" "$OUT/layouts.txt" | tail -n 2
grep -A 8 "us a step per kernel" "$OUT/variants.txt" | cut -c1-60,61-200
tail -n 6 "$OUT/step.txt"
