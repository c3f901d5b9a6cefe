#!/usr/bin/env bash
# Session 35's last device call: the row-plane kernels' folded form built to nearest only (the folded SAFE forms
# were never launched). ab/old_3xtf32.py: the previous commit's render of the headline; ab/new_3xtf32.py: this
# one's. Same output and gradients bit for bit; the scaled-planes tests (dz's folded rows, the weight's SAFE rows,
# extreme rows) on tf32, 3xtf32 and sm_80's planes engine; the committed module's test.
#   device: PYTHONPATH=. bash benchmarks/verify_session35d.sh
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
run build 150 python3 -c "import sys, pathlib; sys.path.insert(0, '.'); from fusegen.tools.tune import _build_all; \
f = _build_all([pathlib.Path('ab/' + n + '.py') for n in ('new_3xtf32', 'old_3xtf32')], 2); \
print('failed', f); sys.exit(1 if f else 0)"
run same 60 python3 benchmarks/same_results.py ab/old_3xtf32.py ab/new_3xtf32.py --init 8192,8192,512 --batch 1024
run planes 220 env FUSEGEN_PRECISIONS=3xtf32,tf32 python3 -m pytest -q tests/test_gpu_scaled_planes.py -p no:cacheprovider
run module 100 python3 -m pytest -q tests/test_gpu_module.py -k headline_committed -p no:cacheprovider
cat "$OUT/table.txt"
tail -n 1 "$OUT/same.txt"
grep -E "^(FAILED|ERROR)" "$OUT/planes.txt" "$OUT/module.txt" | head -n 8
