#!/usr/bin/env bash
# Session 45, after run 4 (verify_session45d.sh: the output the same bit for bit in all four modes, the 16-bit
# module tests, grad_out's layouts, offsets past 32 bits, narrow groups and the random chains: 42 passed). The
# timing half of the change it checked (8 channels a thread, chunks for one wave, the combine spread over the sums;
# the forward's sums from -0 and xhat from v - mean). Predicted: bf16 and fp16 GroupNorm backward 24.8 + 3.0 ->
# ~19.5 + 1.5 us, the forward -2-3 us; tf32's and 3xtf32's kernels (chunks for one wave: 4 and 2 where 8) within
# noise. ab/ as in run 4.
#   1. A/B per kernel (all four modes), medians of 3 alternating profiles;
#   2. the GroupNorm backward's geometry with chunks for one wave (bf16 variants);
#   3. issue 15's step (step_gaps, 3 rounds alternating).
#   device (kind nvidia-h200): PYTHONPATH=. bash benchmarks/verify_session45e.sh
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
run build 150 python3 -c "import sys, pathlib; sys.path.insert(0, '.'); from fusegen.tools.tune import _build_all; \
f = _build_all(sorted(pathlib.Path('ab').glob('[AB]_*.py')), 8); print('failed', f); sys.exit(1 if f else 0)"
for d in bfloat16 float16 float32 tf32; do
  dt=$d; [ $d = tf32 ] && dt=float32
  run ab_$d 60 python3 benchmarks/ab_modules.py ab/A_$d.py ab/B_$d.py --init 8192,8192,512 --batch 1024 --rounds 3 \
    --kernels --kernel-rounds 3 --dtype $dt
done
run variants 150 python3 benchmarks/epilogue_variants.py --dtype bfloat16 \
  --variants base,gn_bwd_ch2_b4_r2,gn_bwd_ch4_b4_r1,gn_bwd_ch8_b2_r2_w2,gn_bwd_ch8_b3_r1,gn_bwd_ch8_b2_r1,gn_bwd_ch8_b2_r3
run step 100 python3 benchmarks/step_gaps.py --dtypes bfloat16,float16 --rounds 3
cat "$OUT/table.txt"
for d in bfloat16 float16 float32 tf32; do echo "== $d"
  grep -E "B / A|wgmma|one_pass|combine|total" "$OUT/ab_$d.txt" | sed 's/(CUtensorMap_st.\{60\}//;s/(fg::BackwardArgs[^ ]*//' | cut -c1-120; done
grep -A 8 "us a step per kernel" "$OUT/variants.txt" | grep -E "kernel |one_pass|combine"
tail -n 6 "$OUT/step.txt"
