#!/usr/bin/env bash
# Session 37, run 2: the persistent forward (plan.persistent_forward: a block an SM walks the output tiles through
# one ring, the producer filling the next tile's stages during a tile's GroupNorm epilogue). ab/old_*.py: the
# previous commit's renders of the headline (3xtf32, tf32, bf16); ab/new_*.py: this one's.
#   Build; old and new the same bit for bit (each tile's arithmetic is unchanged); A/B with kernels side by side;
#   the forward's boundary piece by piece (epilogue_variants.py: one tile a block, without the epilogue); the fp32
#   random-shape suite and the 16-bit wgmma module tests on the new code.
#   device: PYTHONPATH=. bash benchmarks/verify_session37b.sh
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
run build 220 python3 -c "import sys, pathlib; sys.path.insert(0, '.'); from fusegen.tools.tune import _build_all; \
f = _build_all([pathlib.Path('ab/' + n + '.py') for n in ('new_3xtf32', 'old_3xtf32', 'new_tf32', 'old_tf32', \
'new_bfloat16', 'old_bfloat16')], 6); print('failed', f); sys.exit(1 if f else 0)"
for p in 3xtf32 tf32; do
  run "same_$p" 60 python3 benchmarks/same_results.py "ab/old_$p.py" "ab/new_$p.py" --init 8192,8192,512 --batch 1024
done
run same_bf16 60 python3 benchmarks/same_results.py ab/old_bfloat16.py ab/new_bfloat16.py --init 8192,8192,512 \
  --batch 1024 --dtype bfloat16
run ab_3xtf32 150 python3 benchmarks/ab_modules.py ab/old_3xtf32.py ab/new_3xtf32.py --init 8192,8192,512 \
  --batch 1024 --rounds 15 --kernels --kernel-rounds 5
run ab_tf32 120 python3 benchmarks/ab_modules.py ab/old_tf32.py ab/new_tf32.py --init 8192,8192,512 --batch 1024 \
  --rounds 9 --kernels --kernel-rounds 5
run ab_bf16 120 python3 benchmarks/ab_modules.py ab/old_bfloat16.py ab/new_bfloat16.py --init 8192,8192,512 \
  --batch 1024 --rounds 9 --kernels --kernel-rounds 5 --dtype bfloat16
run variants 200 python3 benchmarks/epilogue_variants.py --dtype float32 --precision 3xtf32 \
  --variants base,fwd_tile_a_block,no_fwd_epilogue --reps 10
run module 250 env FUSEGEN_PRECISIONS=3xtf32 python3 -m pytest -q tests/test_gpu_module.py \
  -k "headline_committed or (random_shapes and not sm80)" -p no:cacheprovider
run dtypes 200 python3 -m pytest -q tests/test_gpu_dtypes.py -k "wgmma and half_module and bfloat16" \
  -p no:cacheprovider
cat "$OUT/table.txt"
grep -E "^(FAILED|ERROR)" "$OUT/module.txt" "$OUT/dtypes.txt" | head -n 8
tail -q -n 1 "$OUT/same_3xtf32.txt" "$OUT/same_tf32.txt" "$OUT/same_bf16.txt"
grep DIFFERENT "$OUT"/same_*.txt | head -n 6
for f in ab_3xtf32 ab_tf32 ab_bf16; do grep -E "B / A|^A |^B |persistent|wgmma_forward|total" "$OUT/$f.txt" | cut -c1-130; done
grep -A 8 "us a step per kernel" "$OUT/variants.txt" | cut -c1-110
