#!/usr/bin/env bash
# Session 34's kernel changes on the GPU (logs under $OUT, a table last): the row-plane kernel without a folded
# factor (x, W) takes the row's largest |value| as an integer maximum and its two scale factors once a row; the
# persistent backward GEMMs hand their output tiles to the copy engine (bulk tensor stores from a double-buffered,
# swizzled stage) instead of copying them out with the consumers' threads.
#   STEP=1: A/B of the headline's tf32 and 3xtf32 modules (ab/old_*.py: the previous commit's render; ab/new_*.py)
#           with the step's kernels side by side, then the scaled-planes tests (extreme rows, partial tiles, the
#           weight plane's updates) on tf32, 3xtf32 and sm_80's planes engine.
#   STEP=3: STEP=1's A/B and tests again after dz's row planes (W's scales folded) moved to the exponent's bits
#           (ab/old_*.py: the previous commit's renders), then the mutant of that path's exact fallback.
#   STEP=2: the 16-bit modules on the wgmma engines (bf16 / fp16 persistent stores: 256- and 128-row tiles, every
#           shape), the fp32 module suite's random shapes and the committed module.
#   device: STEP=1 PYTHONPATH=. bash benchmarks/verify_session34b.sh
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
if [ "${STEP:-1}" = 1 ] || [ "${STEP:-1}" = 3 ]; then
  run build 200 python3 -c "import sys, pathlib; sys.path.insert(0, '.'); from fusegen.tools.tune import _build_all; \
f = _build_all([pathlib.Path('ab/' + n + '.py') for n in ('new_tf32', 'old_tf32', 'new_3xtf32', 'old_3xtf32')], 4); \
print('failed', f); sys.exit(1 if f else 0)"
  run ab_tf32 120 python3 benchmarks/ab_modules.py ab/old_tf32.py ab/new_tf32.py --init 8192,8192,512 --batch 1024 \
    --rounds 7 --kernels
  run ab_3xtf32 150 python3 benchmarks/ab_modules.py ab/old_3xtf32.py ab/new_3xtf32.py --init 8192,8192,512 \
    --batch 1024 --rounds 7 --kernels
  run planes 280 env FUSEGEN_PRECISIONS=3xtf32,tf32 python3 -m pytest -q tests/test_gpu_scaled_planes.py -p no:cacheprovider
  cat "$OUT/table.txt"
  grep -E "^(FAILED|ERROR)" "$OUT/planes.txt" | head -n 8
  for f in ab_tf32 ab_3xtf32; do grep -E "B / A|^A |^B |scale_rows|persistent|col_exps|scale_cols|total" "$OUT/$f.txt"; done
  if [ "${STEP:-1}" = 3 ]; then
    run mutant 200 python3 benchmarks/mutations.py --only fold_rare_skipped --out "$OUT/mut"
    tail -n 3 "$OUT/mutant.txt"
  fi
else
  run dtypes 330 python3 -m pytest -q tests/test_gpu_dtypes.py -k "wgmma and half_module" -p no:cacheprovider
  run module 240 env FUSEGEN_PRECISIONS=3xtf32,tf32 FUSEGEN_GPU_EXAMPLES=15 python3 -m pytest -q \
    tests/test_gpu_module.py -k "headline_committed or (random_shapes and not sm80)" -p no:cacheprovider
  cat "$OUT/table.txt"
  for f in dtypes module; do grep -E "^(FAILED|ERROR)" "$OUT/$f.txt" | head -n 8; done
fi
