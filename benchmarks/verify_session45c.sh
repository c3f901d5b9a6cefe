#!/usr/bin/env bash
# Session 45, after run 2 (verify_session45b.sh): 8 channels a thread made the one-pass GroupNorm backward slower
# (27.6 us at 2 blocks an SM against 24.8; its combine 3.0 -> 7.3 us for the 4x chunks), and its geometry variants
# put 4 channels, 4 blocks, 1 row in flight first (22.1 us). Now planned so (Plan.gn_backward_channels, _rows), and
# the combine spread a thread a sum and column (blockIdx.y the sum: 96 blocks at hidden 8192, not 32). Predicted:
# the backward's two kernels 27.8 -> ~24 us; the forward's -2-3 us of run 2 again. ab/ (untracked): A = HEAD's
# bf16 and fp16 headline modules, B = the working tree's.
#   1. same_results: the output the same bit for bit, the gradients close (a group's sums in another order);
#   2. A/B per kernel (bf16, fp16), medians of 3 alternating profiles;
#   3. the 16-bit module tests (wgmma's planned tile; group widths 1 to 32 and wider: 1, 4, 8 and 16 channels of
#      the one-pass kernel's), grad_out in every layout, offsets past 32 bits, a stage before narrow groups;
#   4. the GroupNorm backward's geometry and chunks (bf16 variants);
#   5. issue 15's step (step_gaps, 3 rounds alternating).
#   device (kind nvidia-h200): PYTHONPATH=. bash benchmarks/verify_session45c.sh
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
run build 240 python3 -c "import sys, pathlib; sys.path.insert(0, '.'); from fusegen.tools.tune import _build_all; \
f = _build_all(sorted(pathlib.Path('ab').glob('[AB]_*.py')), 4); print('failed', f); sys.exit(1 if f else 0)"
for d in bfloat16 float16; do
  run same_$d 40 python3 benchmarks/same_results.py ab/A_$d.py ab/B_$d.py --init 8192,8192,512 --batch 1024 --dtype $d
  run ab_$d 60 python3 benchmarks/ab_modules.py ab/A_$d.py ab/B_$d.py --init 8192,8192,512 --batch 1024 --rounds 3 \
    --kernels --kernel-rounds 3 --dtype $d
done
run tests 200 python3 -m pytest -q -x tests/test_gpu_dtypes.py \
  -k "(half_module and wgmma and not m128) or grad_out_layout or past_32_bits or narrow_groups"
run variants 150 python3 benchmarks/epilogue_variants.py --dtype bfloat16 \
  --variants base,gn_bwd_ch2_b4_r2,gn_bwd_ch4_b4_r1_t17,gn_bwd_ch4_b4_r1_t16,gn_bwd_ch4_b4_r1_t19,gn_bwd_ch8_b2_r2_t16
run step 100 python3 benchmarks/step_gaps.py --dtypes bfloat16,float16 --rounds 3
cat "$OUT/table.txt"
for d in bfloat16 float16; do echo "== $d"; grep -c "same " "$OUT/same_$d.txt"; grep -E "^[a-z_]+ +out" "$OUT/same_$d.txt" | grep -c same
  grep -E "B / A|wgmma|one_pass|combine|total" "$OUT/ab_$d.txt" | cut -c1-150; done
grep -E "passed|failed|Error" "$OUT/tests.txt" | tail -n 5
grep -A 8 "us a step per kernel" "$OUT/variants.txt" | cut -c1-60,61-200
tail -n 6 "$OUT/step.txt"
