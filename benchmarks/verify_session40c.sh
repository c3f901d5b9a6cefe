#!/usr/bin/env bash
# Session 40: the 16-bit persistent forward's out and z staged by stmatrix and written by bulk tensor stores
# (Plan.forward_staged_stores). B = the headline modules with the stmatrix dW only (177a38a), C = with the staged
# forward too (ab/, untracked).
#   1. same_results: C's output and every gradient bit for bit B's (bf16 and fp16; four distributions);
#   2. A/B timing, B against C, per-kernel medians;
#   3. the 16-bit module tests on the wgmma engines where the forward is the fragment GroupNorm's (37 x 200 -> 160,
#      groups of 16: partial tiles; 129 x 264 -> 256, one channel a group).
#   device (kind nvidia-h200): PYTHONPATH=. bash benchmarks/verify_session40c.sh
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
run build 150 python3 -c "import sys, pathlib; sys.path.insert(0, '.'); from fusegen.tools.tune import _build_all; \
f = _build_all(sorted(pathlib.Path('ab').glob('[BC]_*.py')), 4); print('failed', f); sys.exit(1 if f else 0)"
for dt in bfloat16 float16; do
  run "same_$dt" 60 python3 benchmarks/same_results.py "ab/B_$dt.py" "ab/C_$dt.py" --init 8192,8192,512 --batch 1024 \
    --dtype "$dt"
  run "ab_$dt" 60 python3 benchmarks/ab_modules.py "ab/B_$dt.py" "ab/C_$dt.py" --init 8192,8192,512 --batch 1024 \
    --rounds 7 --kernels --kernel-rounds 5 --dtype "$dt"
done
run dtypes 200 python3 -m pytest -q tests/test_gpu_dtypes.py -k \
  "test_half_module and wgmma and (37x200x160x10 or 129x264x256x256)"
cat "$OUT/table.txt"
for dt in bfloat16 float16; do tail -n 4 "$OUT/same_$dt.txt"; grep -E "B / A|persistent|total" "$OUT/ab_$dt.txt" | cut -c1-140; done
