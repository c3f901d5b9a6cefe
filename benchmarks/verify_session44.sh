#!/usr/bin/env bash
# Session 44: the persistent backward GEMMs start a tile's first products under the previous tile's stores
# (Wgmma::begin_tile, called by the store epilogue once the tile is packed to 16 bits in registers: acc is free).
# Prediction: dW's staging (~15 us at the bf16 headline: s42 run 7's no_tile_staging, 207.9 -> 192.6) mostly hidden,
# dW ~201 -> ~188 us; dx (~4 tiles a block) a little; the forward's PTX is unchanged (3xtf32's and tf32's whole
# PTX too: their output is fp32). ab/ (untracked): A = HEAD's headline modules (bf16, fp16), B = the working tree's,
# C = B with 3 stages begun, D = B with 1; T = the new test's modules (prebuilt here).
#   1. the output and every gradient the same bit for bit (A/B both dtypes, B/C, B/D);
#   2. A/B per kernel (medians of 3 alternating profiles);
#   3. the new test: several tiles a block, 1, 2, 3 and many k tiles a tile, partial tiles;
#   4. issue 15's step (step_gaps, 3 rounds alternating);
#   5. B against C and D per kernel.
#   device (kind nvidia-h200): PYTHONPATH=. bash benchmarks/verify_session44.sh
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
run build 240 python3 -c "import sys, pathlib; sys.path.insert(0, '.'); from fusegen.tools.tune import _build_all; \
f = _build_all(sorted(pathlib.Path('ab').glob('[ABCDT]_*.py')), 8); print('failed', f); sys.exit(1 if f else 0)"
run same_bf16 40 python3 benchmarks/same_results.py ab/A_bfloat16.py ab/B_bfloat16.py --init 8192,8192,512 --batch 1024 --dtype bfloat16
run same_fp16 40 python3 benchmarks/same_results.py ab/A_float16.py ab/B_float16.py --init 8192,8192,512 --batch 1024 --dtype float16
run same_C 40 python3 benchmarks/same_results.py ab/B_bfloat16.py ab/C_bfloat16.py --init 8192,8192,512 --batch 1024 --dtype bfloat16
run same_D 40 python3 benchmarks/same_results.py ab/B_bfloat16.py ab/D_bfloat16.py --init 8192,8192,512 --batch 1024 --dtype bfloat16
for d in bfloat16 float16; do
  run ab_$d 60 python3 benchmarks/ab_modules.py ab/A_$d.py ab/B_$d.py --init 8192,8192,512 --batch 1024 --rounds 3 \
    --kernels --kernel-rounds 3 --dtype $d
done
run test 120 python3 -m pytest -q tests/test_gpu_dtypes.py -k "started_under" -p no:cacheprovider
run step 100 python3 benchmarks/step_gaps.py --dtypes bfloat16,float16 --rounds 3
for v in C D; do
  run ab_$v 50 python3 benchmarks/ab_modules.py ab/B_bfloat16.py ab/${v}_bfloat16.py --init 8192,8192,512 --batch 1024 \
    --rounds 1 --kernels --kernel-rounds 3 --dtype bfloat16
done
cat "$OUT/table.txt"
tail -q -n 1 "$OUT"/same_*.txt
grep DIFFERENT "$OUT"/same_*.txt | head -n 6
for d in bfloat16 float16 C D; do echo "== $d"; grep -E "B / A|wgmma|total" "$OUT/ab_$d.txt" | cut -c1-150; done
grep -E "^(FAILED|ERROR)|Error|error" "$OUT/test.txt" | head -n 6
tail -n 6 "$OUT/step.txt"
