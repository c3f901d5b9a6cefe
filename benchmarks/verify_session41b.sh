#!/usr/bin/env bash
# (Ran on code since reverted: 498fec3 less its prefetch, with 8 channels a thread in 16 bits; its variants are not in
# later epilogue_variants.py. Session 41, run 2.)
# Session 41: the one-pass GroupNorm backward reads a thread's channels as one 16-byte vector (z, grad_out, dz;
# Plan.gn_backward_channels: 8 in 16 bits, 4 in tf32), without the next rows' prefetch. A = the headline modules
# before (HEAD), B = after (ab/, untracked).
#   1. A/B timing at the headline, per-kernel medians (bf16, fp16);
#   2. the kernel's geometry as variants of B (channels a thread, blocks an SM, rows at once, threads in all);
#   3. the 16-bit module tests on wgmma where its groups are 1, 8, 16 and 32 channels, and grad_out in any layout.
#   device (kind nvidia-h200): PYTHONPATH=. bash benchmarks/verify_session41b.sh
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
run build 120 python3 -c "import sys, pathlib; sys.path.insert(0, '.'); from fusegen.tools.tune import _build_all; \
f = _build_all(sorted(pathlib.Path('ab').glob('[AB]_*.py')), 4); print('failed', f); sys.exit(1 if f else 0)"
for dt in bfloat16 float16; do
  run "ab_$dt" 50 python3 benchmarks/ab_modules.py "ab/A_$dt.py" "ab/B_$dt.py" --init 8192,8192,512 --batch 1024 \
    --rounds 7 --kernels --kernel-rounds 5 --dtype "$dt"
done
run variants 200 python3 benchmarks/epilogue_variants.py --dtype bfloat16 --variants \
  base,gn_bwd_ch8_b4_r1,gn_bwd_ch8_b3_r1,gn_bwd_ch8_b3_r2,gn_bwd_ch8_b2_r2,gn_bwd_ch4_b4_r2,gn_bwd_ch4_b4_r4,gn_bwd_ch4_b3_r4,gn_bwd_threads_17,gn_bwd_threads_19
run dtypes 150 python3 -m pytest -q tests/test_gpu_dtypes.py -k "grad_out_of_any or (test_half_module and wgmma \
and not m128 and (3x17x24x3 or 37x200x160x10 or 129x264x256x256 or 16x1024x1024x32))"
cat "$OUT/table.txt"
for dt in bfloat16 float16; do grep -E "B / A|gn_backward|total" "$OUT/ab_$dt.txt" | cut -c1-150; done
grep -E "gn_backward|^kernel" "$OUT/variants.txt" | cut -c1-200
