#!/usr/bin/env bash
# Session 46, calls 6-7: the persistent 16-bit forward's GroupNorm under the next tile's products
# (epilogue_gn_items.cuh): the consumers write z (staged, bulk stores) and start the next tile; after each of its
# k tiles' products are issued they take one item (a row's 16 columns) of the tile before's GroupNorm from z in L2.
# (call 7: the next item's z loaded one item ahead, the columns' parameters once a tile; call 6 read both in
# the item, and its items under the products ran ~as slow as after them.) Predicted: bf16 forward ~190 -> ~178-182 us (the first tile's ~10 us epilogue under the second's products; the
# last tile's items, ~2.4k instructions a thread against the fragment epilogue's ~5.8k, after them); fp16 alike;
# the output within an ulp of the old module's (the group sums in another order). ab/: A rendered from b60e4b4
# (a worktree: the kernels of HEAD before this change), B from the working tree, --gpu "NVIDIA H200" --arch 9.0.
#   device (kind nvidia-h200): PYTHONPATH=. bash benchmarks/verify_session46f.sh
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
run build 150 python3 -c "import sys, pathlib; sys.path.insert(0, '.'); from fusegen.tools.tune import _build_all; \
f = _build_all(sorted(pathlib.Path('ab').glob('[AB]_*.py')), 4); print('failed', f); sys.exit(1 if f else 0)"
for d in bfloat16 float16; do
  run same_$d 60 python3 benchmarks/same_results.py ab/A_$d.py ab/B_$d.py --init 8192,8192,512 --batch 1024 --dtype $d
done
for d in bfloat16 float16; do
  run ab_$d 60 python3 benchmarks/ab_modules.py ab/A_$d.py ab/B_$d.py --init 8192,8192,512 --batch 1024 --rounds 3 \
    --kernels --kernel-rounds 3 --dtype $d
done
run variants 150 python3 benchmarks/epilogue_variants.py --dtype bfloat16 --variants base,no_fwd_epilogue,fwd_items_after
run step 100 python3 benchmarks/step_gaps.py --dtypes bfloat16,float16 --rounds 3
cat "$OUT/table.txt"
for d in bfloat16 float16; do echo "== $d"; grep -E "out|results differ" "$OUT/same_$d.txt" | head -5
  grep -E "B / A|forward_persistent|total" "$OUT/ab_$d.txt" | sed 's/(CUtensorMap_st.\{60\}//' | cut -c1-120; done
grep -A 4 "us a step per kernel" "$OUT/variants.txt" | cut -c1-40,60-120
tail -n 6 "$OUT/step.txt"
