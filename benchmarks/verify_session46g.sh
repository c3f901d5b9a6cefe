#!/usr/bin/env bash
# Session 46, call 8: the persistent 16-bit forward's GroupNorm in items from z, after the next tile's products (the
# final form of calls 6-7: no items between the products, which gained nothing). A/B against b60e4b4's kernels
# (ab/ as in calls 6-7), the module tests that run the staged forward (the planned wgmma tile's shapes, a stage
# before narrow groups, random shapes and chains per dtype), and the new mutation gn_item_cols.
#   device (kind nvidia-h200): PYTHONPATH=. bash benchmarks/verify_session46g.sh
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
run build 150 python3 -c "import sys, pathlib; sys.path.insert(0, '.'); from fusegen.tools.tune import _build_all; \
f = _build_all(sorted(pathlib.Path('ab').glob('[AB]_*.py')), 4); print('failed', f); sys.exit(1 if f else 0)"
for d in bfloat16 float16; do
  run same_$d 60 python3 benchmarks/same_results.py ab/A_$d.py ab/B_$d.py --init 8192,8192,512 --batch 1024 --dtype $d
  run ab_$d 60 python3 benchmarks/ab_modules.py ab/A_$d.py ab/B_$d.py --init 8192,8192,512 --batch 1024 --rounds 3 \
    --kernels --kernel-rounds 3 --dtype $d
done
run tests 320 python3 -m pytest -q -x tests/test_gpu_dtypes.py \
  -k "(half_module and wgmma and not m128) or narrow_groups or random_chains or random_shapes"
run mutation 100 python3 benchmarks/mutations.py --only gn_item_cols --out "$OUT/mutations"
cat "$OUT/table.txt"
for d in bfloat16 float16; do echo "== $d"; grep -E "results differ|grad" "$OUT/same_$d.txt" | sort -k5 -g | tail -3
  grep -E "B / A|forward_persistent|total" "$OUT/ab_$d.txt" | sed 's/(CUtensorMap_st.\{60\}//' | cut -c1-120; done
grep -E "passed|failed|Error" "$OUT/tests.txt" | tail -n 4
tail -n 5 "$OUT/mutation.txt"
