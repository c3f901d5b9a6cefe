#!/usr/bin/env bash
# Session 36: the persistent backward GEMMs' tile scales fetched into shared memory as a tile starts (cp.async)
# instead of read from global memory after its products (logs under $OUT, a table last). On an H200 it runs issue
# 17's targets instead (verify_h200_targets.sh STEP=1). ab/old_*.py: the previous commit's renders of the headline
# (3xtf32, tf32); ab/new_*.py: this one's.
#   STEP=1: build; old and new give the same output and gradients bit for bit (the same products and scales, in
#           the same order); A/B of the 3xtf32 step with its kernels side by side (15 rounds; kernels: medians of
#           5 alternating profiles); the scaled-planes tests (extreme rows; wide shapes with a partial last tile).
#   STEP=2: where the persistent GEMMs' tile boundary goes, piece by piece (epilogue_variants.py: unscale, the
#           bulk stores, the buffer waits, the whole epilogue left out, 3xtf32); the fp32 module suite's random
#           shapes (3xtf32) and the committed module.
#   device (kind nvidia-h200): STEP=1 PYTHONPATH=. bash benchmarks/verify_session36.sh
set -uo pipefail
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  STEP=1 exec bash "$(dirname "$0")/verify_h200_targets.sh"
fi
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
if [ "${STEP:-1}" = 1 ]; then
  run build 220 python3 -c "import sys, pathlib; sys.path.insert(0, '.'); from fusegen.tools.tune import _build_all; \
f = _build_all([pathlib.Path('ab/' + n + '.py') for n in ('new_tf32', 'old_tf32', 'new_3xtf32', 'old_3xtf32')], 4); \
print('failed', f); sys.exit(1 if f else 0)"
  for p in 3xtf32 tf32; do
    run "same_$p" 60 python3 benchmarks/same_results.py "ab/old_$p.py" "ab/new_$p.py" --init 8192,8192,512 --batch 1024
  done
  run ab_3xtf32 150 python3 benchmarks/ab_modules.py ab/old_3xtf32.py ab/new_3xtf32.py --init 8192,8192,512 \
    --batch 1024 --rounds 15 --kernels --kernel-rounds 5
  run planes 200 env FUSEGEN_PRECISIONS=3xtf32,tf32 python3 -m pytest -q tests/test_gpu_scaled_planes.py \
    -p no:cacheprovider
  cat "$OUT/table.txt"
  grep -E "^(FAILED|ERROR)" "$OUT/planes.txt" | head -n 8
  tail -n 1 "$OUT/same_3xtf32.txt" "$OUT/same_tf32.txt"
  grep DIFFERENT "$OUT/same_3xtf32.txt" "$OUT/same_tf32.txt" | head -n 6
  grep -E "B / A|^A |^B |persistent|wgmma_forward|total" "$OUT/ab_3xtf32.txt"
else
  run variants 330 python3 benchmarks/epilogue_variants.py --dtype float32 --precision 3xtf32 \
    --variants base,no_unscale,no_bulk_store,no_store_wait,no_tile_epilogue --reps 10
  run module 240 env FUSEGEN_PRECISIONS=3xtf32 python3 -m pytest -q tests/test_gpu_module.py \
    -k "headline_committed or (random_shapes and not sm80)" -p no:cacheprovider
  cat "$OUT/table.txt"
  grep -E "^(FAILED|ERROR)" "$OUT/module.txt" | head -n 8
  grep -A 30 "us a step per kernel" "$OUT/variants.txt" | cut -c1-130
fi
