#!/usr/bin/env bash
# Session 38, run 7: the persistent forward on the epilogues run 1 cleared it for (no GroupNorm; the row strategy),
# timed: ab/pfA_*.py one tile a block (the session-37 rule), ab/pfB_*.py persistent (the planner's rule now);
# relu_scale.py and row_amax_tuple_dim.py at 1024 x 8192 -> 8192 in bf16 (/tmp/s38/render_pf.py rendered them).
#   device: PYTHONPATH=. bash benchmarks/verify_session38g.sh
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
run build 75 python3 -c "import sys, pathlib; sys.path.insert(0, '.'); from fusegen.tools.tune import _build_all; \
f = _build_all([pathlib.Path('ab/pf' + t + '_' + n + '.py') for t in 'AB' for n in ('relu_scale', \
'row_amax_tuple_dim')], 4); print('failed', f); sys.exit(1 if f else 0)"
for n in relu_scale row_amax_tuple_dim; do
  run "ab_$n" 25 python3 benchmarks/ab_modules.py "ab/pfA_$n.py" "ab/pfB_$n.py" --init 8192,8192 --batch 1024 \
    --rounds 5 --kernels --kernel-rounds 3 --dtype bfloat16
done
cat "$OUT/table.txt"
for n in relu_scale row_amax_tuple_dim; do grep -E "B / A|wgmma_forward|total" "$OUT/ab_$n.txt" | cut -c1-130; done
