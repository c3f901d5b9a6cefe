#!/usr/bin/env bash
# Session 36, run 4: the grouped tile order (RASTER_ROWS) on the 16-bit modules, and where the fp32 forward's time
# beyond dx's goes (logs under $OUT, a table last). ab/old_bfloat16.py: the previous commit's render of the bf16
# headline; ab/new_bfloat16.py: this one's. On an H200 it runs issue 17's targets instead.
#   bf16: build; old and new the same bit for bit; A/B with kernels side by side; the 16-bit wgmma module tests.
#   fp32 3xtf32: epilogue_variants.py without the forward's z, stats, output; tf32: the group size swept.
#   device (kind nvidia-h200): PYTHONPATH=. bash benchmarks/verify_session36c.sh
set -uo pipefail
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  STEP=1 exec bash "$(dirname "$0")/verify_h200_targets.sh"
fi
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
run build 200 python3 -c "import sys, pathlib; sys.path.insert(0, '.'); from fusegen.tools.tune import _build_all; \
f = _build_all([pathlib.Path('ab/' + n + '.py') for n in ('new_bfloat16', 'old_bfloat16')], 2); \
print('failed', f); sys.exit(1 if f else 0)"
run same_bf16 60 python3 benchmarks/same_results.py ab/old_bfloat16.py ab/new_bfloat16.py --init 8192,8192,512 \
  --batch 1024 --dtype bfloat16
run ab_bf16 120 python3 benchmarks/ab_modules.py ab/old_bfloat16.py ab/new_bfloat16.py --init 8192,8192,512 \
  --batch 1024 --dtype bfloat16 --rounds 15 --kernels --kernel-rounds 5
run fwd_variants 150 python3 benchmarks/epilogue_variants.py --dtype float32 --precision 3xtf32 \
  --variants base,no_z,no_stats,no_out --reps 10
run tf32_raster 150 python3 benchmarks/epilogue_variants.py --dtype float32 --precision tf32 \
  --variants base,raster_4,raster_16 --reps 10
run dtypes 220 python3 -m pytest -q -x tests/test_gpu_dtypes.py -k "wgmma and half_module and bfloat16" \
  -p no:cacheprovider
cat "$OUT/table.txt"
grep -E "^(FAILED|ERROR)" "$OUT/dtypes.txt" | head -n 8
tail -n 1 "$OUT/same_bf16.txt"
grep DIFFERENT "$OUT/same_bf16.txt" | head -n 6
grep -E "B / A|^A |^B |persistent|wgmma_forward|total" "$OUT/ab_bf16.txt"
for f in fwd_variants tf32_raster; do grep -A 6 "us a step per kernel" "$OUT/$f.txt" | cut -c1-120; done
