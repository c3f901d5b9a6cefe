#!/usr/bin/env bash
# (Ran on 498fec3, since reverted; its gn_bwd_ch* variants are that commit's epilogue_variants.py. Session 41, run 3.)
# Session 41, after run 2 (16-byte vectors without the prefetch: no gain; a grid of 2-3 waves of 4-row walks left a
# load latency exposed each row). The one-pass GroupNorm backward now: a thread's channels one vector access a row
# (Plan.gn_backward_channels), the next rows' loads in flight while these compute, and one wave of blocks, each
# thread walking its chunk's rows (gn_backward_chunks). A = the headline modules before (HEAD), B = after (ab/).
#   1. A/B timing at the headline, per-kernel medians: bf16, fp16, tf32, 3xtf32;
#   2. the geometry as variants of B in bf16 (channels a thread, blocks an SM, rows at once, waves);
#   3. the 16-bit module tests on wgmma where the groups are 1, 8, 16 and 32 channels, grad_out in any layout;
#   4. fp32: the committed headline module against the reference, an expanded grad, random shapes (tf32, 3xtf32).
#   device (kind nvidia-h200): PYTHONPATH=. bash benchmarks/verify_session41c.sh
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
run build 100 python3 -c "import sys, pathlib; sys.path.insert(0, '.'); from fusegen.tools.tune import _build_all; \
f = _build_all(sorted(pathlib.Path('ab').glob('[AB]_*.py')), 8); print('failed', f); sys.exit(1 if f else 0)"
for m in bfloat16 float16 tf32 3xtf32; do
  dt=$m; [ "$m" = tf32 ] || [ "$m" = 3xtf32 ] && dt=float32
  run "ab_$m" 35 python3 benchmarks/ab_modules.py "ab/A_$m.py" "ab/B_$m.py" --init 8192,8192,512 --batch 1024 \
    --rounds 5 --kernels --kernel-rounds 5 --dtype "$dt"
done
run variants 110 python3 benchmarks/epilogue_variants.py --dtype bfloat16 --variants \
  base,gn_bwd_ch4_b4_r1,gn_bwd_ch4_b2_r2,gn_bwd_ch4_b3_r2_w2,gn_bwd_ch8_b2_r1,gn_bwd_ch8_b2_r2,gn_bwd_ch8_b3_r1,gn_bwd_ch2_b4_r2
run dtypes 120 python3 -m pytest -q tests/test_gpu_dtypes.py -k "grad_out_of_any or (test_half_module and wgmma \
and not m128 and (3x17x24x3 or 37x200x160x10 or 129x264x256x256 or 16x1024x1024x32))"
run fp32 100 env FUSEGEN_PRECISIONS=3xtf32,tf32 FUSEGEN_GPU_EXAMPLES=8 python3 -m pytest -q tests/test_gpu_module.py -k \
  "headline_committed or noncontiguous or (random_shapes and not sm80 and not planes)"
cat "$OUT/table.txt"
for m in bfloat16 float16 tf32 3xtf32; do echo "$m"; grep -E "B / A|gn_backward|total" "$OUT/ab_$m.txt" | cut -c1-150; done
grep -E "gn_backward|^kernel" "$OUT/variants.txt" | cut -c1-200
