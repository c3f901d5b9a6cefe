#!/usr/bin/env bash
# Prepared in session 39 for the next session's first device call (logs under $OUT, a table last). On an H200:
# issue 17's targets (verify_h200_targets.sh STEP=1; STEP=2, issue 15's, is the call after). On any other card:
#   1. the persistent forward with the row strategy timed against one tile a block (persistent_forward_ab.py; its
#      A/B failed twice in session 39 on script errors, since fixed): bf16, 1024 x 8192 -> 8255;
#   2. fp16's step (step_gaps.py), not timed since session 35, with the 4-block GroupNorm backward;
#   3. the 16-bit module tests of fp16 and of the wgmma 128-row tile through that kernel.
#   device (kind nvidia-h200): PYTHONPATH=. bash benchmarks/verify_session40.sh
set -uo pipefail
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  STEP=1 exec bash "$(dirname "$0")/verify_h200_targets.sh"
fi
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
run render 60 python3 benchmarks/persistent_forward_ab.py --files row_amax_tuple_dim.py
run build 120 python3 -c "import sys, pathlib; sys.path.insert(0, '.'); from fusegen.tools.tune import _build_all; \
f = _build_all(sorted(pathlib.Path('ab').glob('pf[AB]_*.py')), 2); print('failed', f); sys.exit(1 if f else 0)"
run ab_rows 60 python3 benchmarks/ab_modules.py ab/pfA_row_amax_tuple_dim.py ab/pfB_row_amax_tuple_dim.py \
  --init 8192,8255 --batch 1024 --rounds 9 --kernels --kernel-rounds 5 --dtype bfloat16
run gaps 150 python3 benchmarks/step_gaps.py --dtypes float16
run dtypes 200 python3 -m pytest -q tests/test_gpu_dtypes.py -k \
  "test_half_module and (float16 and not m128 or bfloat16 and m128) and (37x200x160x10 or 1024x1024x1024x32)"
cat "$OUT/table.txt"
grep -E "B / A|wgmma_forward|total" "$OUT/ab_rows.txt" | cut -c1-130
tail -n 6 "$OUT/gaps.txt"
