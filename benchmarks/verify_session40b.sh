#!/usr/bin/env bash
# Session 40: the 16-bit output stage by stmatrix (stage_rows: 16 warp instructions a 256-row tile where per-value
# 2-byte stores took 128 a thread). A = the headline modules rendered before the change, B = after (ab/, untracked).
#   1. A/B, bf16 and fp16, 1024 x 8192 -> 8192: layer times and per-kernel medians (dW and dx run the stage);
#   2. the 16-bit module tests on the wgmma engines (partial tiles: 129 x 264; the persistent GEMMs at 512 x 4096);
#   3. the wgmma 16-bit engine alone against fp64.
#   device (kind nvidia-h200): PYTHONPATH=. bash benchmarks/verify_session40b.sh
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
run build 150 python3 -c "import sys, pathlib; sys.path.insert(0, '.'); from fusegen.tools.tune import _build_all; \
f = _build_all(sorted(pathlib.Path('ab').glob('[AB]_*.py')), 4); print('failed', f); sys.exit(1 if f else 0)"
for dt in bfloat16 float16; do
  run "ab_$dt" 90 python3 benchmarks/ab_modules.py "ab/A_$dt.py" "ab/B_$dt.py" --init 8192,8192,512 --batch 1024 \
    --rounds 7 --kernels --kernel-rounds 5 --dtype "$dt"
done
run dtypes 280 python3 -m pytest -q tests/test_gpu_dtypes.py -k \
  "test_half_module and wgmma and (37x200x160x10 or 129x264x256x256 or 512x4096x4096x128)"
run engine 100 python3 -m pytest -q tests/test_gpu_engines.py -k "wgmma_half"
cat "$OUT/table.txt"
for dt in bfloat16 float16; do grep -E "B / A|store_persistent|forward_persistent|total" "$OUT/ab_$dt.txt" | cut -c1-140; done
