#!/usr/bin/env bash
# Prepared in session 38 for the next session's first device call (logs under $OUT, a table last). On an H200:
# issue 17's targets (verify_h200_targets.sh STEP=1; STEP=2, issue 15's, is the call after). On any other card:
#   1. The persistent forward on the epilogues session 38 cleared it for (no GroupNorm, the row strategy), timed
#      against one tile a block (persistent_forward_ab.py renders A and B; bf16, 1024 x 8192 -> 8192). Session 38
#      ran out of device time before this: the rule stands on correctness (run 1) and the fragment case's gain.
#   2. The one-pass GroupNorm backward at 3 blocks an SM (epilogue_variants.py gn_bwd_blocks_3; bf16 and 3xtf32):
#      session 38's Nsight Compute had it at 25% occupancy (register-limited) and 36% of DRAM bandwidth.
#   (tf32's and bf16's steps with fresh gradients moved to the session's later call: this one would pass the
#   device's 600 s a command with them.)
#   device (kind nvidia-h200): PYTHONPATH=. bash benchmarks/verify_session39.sh
set -uo pipefail
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  STEP=1 exec bash "$(dirname "$0")/verify_h200_targets.sh"
fi
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
run render 60 python3 benchmarks/persistent_forward_ab.py
run build 150 python3 -c "import sys, pathlib; sys.path.insert(0, '.'); from fusegen.tools.tune import _build_all; \
f = _build_all(sorted(pathlib.Path('ab').glob('pf[AB]_*.py')), 4); print('failed', f); sys.exit(1 if f else 0)"
for n in relu_scale row_amax_tuple_dim; do
  run "ab_$n" 60 python3 benchmarks/ab_modules.py "ab/pfA_$n.py" "ab/pfB_$n.py" --init 8192,8192 --batch 1024 \
    --rounds 9 --kernels --kernel-rounds 5 --dtype bfloat16
done
run gnb_bf16 120 python3 benchmarks/epilogue_variants.py --dtype bfloat16 --variants base,gn_bwd_blocks_3 --reps 10
run gnb_x3 150 python3 benchmarks/epilogue_variants.py --dtype float32 --variants base,gn_bwd_blocks_3 --reps 10
cat "$OUT/table.txt"
for n in relu_scale row_amax_tuple_dim; do grep -E "B / A|wgmma_forward|total" "$OUT/ab_$n.txt" | cut -c1-130; done
for f in gnb_bf16 gnb_x3; do grep -E "kernel  |one_pass" "$OUT/$f.txt" | cut -c1-110; done
