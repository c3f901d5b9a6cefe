#!/usr/bin/env bash
# Prepared in session 41 for the next session's first device call (logs under $OUT, a table last):
#   1. issue 15's step with fp16 first and the layers alternating over 3 rounds (step_gaps.py --rounds): fp16's
#      kernels ran 0.634 -> 0.721 ms against bf16's in run 1 of session 41, timed after bf16 on a warmer card;
#   2. the one-pass GroupNorm backward piece by piece (epilogue_variants.py: without its shuffles, its statistics'
#      loads, its grad_out loads, its dz stores), since no geometry moved its ~32-34 us (session 41, runs 2-3);
#   3. the random chains per dtype, the one part of test_gpu_dtypes.py not yet run on session 40's stmatrix stores.
#   device (kind nvidia-h200): PYTHONPATH=. bash benchmarks/verify_session42.sh
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
run gaps 150 python3 benchmarks/step_gaps.py --dtypes float16,bfloat16 --rounds 3
run gn_pieces 100 python3 benchmarks/epilogue_variants.py --dtype bfloat16 --variants \
  base,gn_bwd_no_shuffle,gn_bwd_no_stats_load,gn_bwd_no_grad_load,gn_bwd_no_dz_store,gn_bwd_z_and_dz_only
run chains 320 python3 -m pytest -q tests/test_gpu_dtypes.py -k random_chains
cat "$OUT/table.txt"
tail -n 6 "$OUT/gaps.txt"
grep -E "gn_backward|^kernel" "$OUT/gn_pieces.txt" | cut -c1-200
