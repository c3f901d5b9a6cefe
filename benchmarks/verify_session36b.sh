#!/usr/bin/env bash
# Session 36, run 3: the persistent GEMMs walk their tiles in groups of RASTER_ROWS row tiles (the row tile fastest
# within a group) instead of the row tile fastest over all rows: dW's 132 tiles at once read 8 P tiles and ~17 R
# tiles, not all 64 P tiles, which the output's stores pushed out of L2 between waves (ncu s35: dW at DRAM 60%).
# ab/old_*.py: the previous commit's renders of the headline (3xtf32, tf32); ab/new_*.py: this one's. On an H200 it
# runs issue 17's targets instead (verify_h200_targets.sh STEP=1).
#   Build; old and new the same bit for bit (each tile's arithmetic is unchanged); A/B of both steps with kernels
#   side by side; the group size swept (epilogue_variants.py raster_N, 3xtf32); the scaled-planes tests.
#   device (kind nvidia-h200): PYTHONPATH=. bash benchmarks/verify_session36b.sh
set -uo pipefail
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  STEP=1 exec bash "$(dirname "$0")/verify_h200_targets.sh"
fi
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
run build 220 python3 -c "import sys, pathlib; sys.path.insert(0, '.'); from fusegen.tools.tune import _build_all; \
f = _build_all([pathlib.Path('ab/' + n + '.py') for n in ('new_tf32', 'old_tf32', 'new_3xtf32', 'old_3xtf32')], 4); \
print('failed', f); sys.exit(1 if f else 0)"
for p in 3xtf32 tf32; do
  run "same_$p" 60 python3 benchmarks/same_results.py "ab/old_$p.py" "ab/new_$p.py" --init 8192,8192,512 --batch 1024
done
run ab_3xtf32 150 python3 benchmarks/ab_modules.py ab/old_3xtf32.py ab/new_3xtf32.py --init 8192,8192,512 \
  --batch 1024 --rounds 15 --kernels --kernel-rounds 5
run ab_tf32 120 python3 benchmarks/ab_modules.py ab/old_tf32.py ab/new_tf32.py --init 8192,8192,512 --batch 1024 \
  --rounds 7 --kernels --kernel-rounds 5
run variants 200 python3 benchmarks/epilogue_variants.py --dtype float32 --precision 3xtf32 \
  --variants base,raster_2,raster_4,raster_16,raster_65536 --reps 10
run planes 200 env FUSEGEN_PRECISIONS=3xtf32,tf32 python3 -m pytest -q tests/test_gpu_scaled_planes.py \
  -p no:cacheprovider
cat "$OUT/table.txt"
grep -E "^(FAILED|ERROR)" "$OUT/planes.txt" | head -n 8
tail -n 1 "$OUT/same_3xtf32.txt" "$OUT/same_tf32.txt"
grep DIFFERENT "$OUT/same_3xtf32.txt" "$OUT/same_tf32.txt" | head -n 6
for f in ab_3xtf32 ab_tf32; do grep -E "B / A|^A |^B |persistent|wgmma_forward|total" "$OUT/$f.txt"; done
grep -A 5 "us a step per kernel" "$OUT/variants.txt" | cut -c1-140
