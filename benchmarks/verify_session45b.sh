#!/usr/bin/env bash
# Session 45, after run 1 (verify_session45.sh: the one-pass GroupNorm backward's statistics or whole batch
# converted at use gained nothing, 24.6 -> 24.8 us). The kernel runs ~51 instructions an element at 2 channels a
# thread, a row's statistics' loads, conversions, addresses and 3 + 3 shuffles shared by 2 values. Changed: 8
# channels a thread (Plan.gn_backward_channels: one 16-byte vector of 16-bit z, grad_out and dz; 1 shuffle a sum
# at 16-channel groups), 2 blocks an SM for its ~125 registers; and the staged forward's two small ones (its sums
# from -0, xhat from the variance's v - mean: -1.3 and -2.3 us in run 1). Predicted: the GroupNorm backward
# 24.6 -> ~15 us (bound by its bytes, ~56 MB), the forward ~-3 us. ab/ (untracked): A = HEAD's bf16 and fp16
# headline modules, B = the working tree's.
#   1. same_results: the output the same bit for bit (the forward's arithmetic is), the gradients not (a group's
#      sums in another order) and close;
#   2. A/B per kernel (bf16, fp16), medians of 3 alternating profiles;
#   3. the GroupNorm backward's geometry: channels a thread, blocks an SM, rows in flight (bf16 variants).
#   device (kind nvidia-h200): PYTHONPATH=. bash benchmarks/verify_session45b.sh
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
run build 240 python3 -c "import sys, pathlib; sys.path.insert(0, '.'); from fusegen.tools.tune import _build_all; \
f = _build_all(sorted(pathlib.Path('ab').glob('[AB]_*.py')), 4); print('failed', f); sys.exit(1 if f else 0)"
for d in bfloat16 float16; do
  run same_$d 40 python3 benchmarks/same_results.py ab/A_$d.py ab/B_$d.py --init 8192,8192,512 --batch 1024 --dtype $d
  run ab_$d 60 python3 benchmarks/ab_modules.py ab/A_$d.py ab/B_$d.py --init 8192,8192,512 --batch 1024 --rounds 3 \
    --kernels --kernel-rounds 3 --dtype $d
done
run variants 300 python3 benchmarks/epilogue_variants.py --dtype bfloat16 \
  --variants base,gn_bwd_ch2_b4_r2,gn_bwd_ch4_b3_r2,gn_bwd_ch4_b4_r1,gn_bwd_ch8_b2_r1,gn_bwd_ch8_b3_r1,gn_bwd_ch8_b2_r3
cat "$OUT/table.txt"
for d in bfloat16 float16; do echo "== $d"; cut -c1-100 "$OUT/same_$d.txt" | grep -v "same " | tail -n 12
  grep -E "B / A|wgmma|one_pass|combine|total" "$OUT/ab_$d.txt" | cut -c1-150; done
grep -A 12 "us a step per kernel" "$OUT/variants.txt" | cut -c1-60,61-200
