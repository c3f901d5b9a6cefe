#!/usr/bin/env bash
# Session 39, second call: the GroupNorm normalized after the wgmma forward (Plan.normalize_after), A / B at the
# headline (A: the fused epilogue, B: z and the statistics from the GEMM, then gn_after_kernel), bf16 and tf32:
#   1. each pair against fp64 beside the reference in its dtype (normalize_after_ab.py --check);
#   2. the layers timed in alternating rounds, each step's kernels side by side (ab_modules.py);
#   3. the 16-bit module tests on the wgmma engine at the shapes that take the new kernel's two forms (gw 1 with
#      N 256: 16-byte vectors of several groups; gw 4 with N 100: one channel a thread).
#   device (kind nvidia-h200): PYTHONPATH=. bash benchmarks/verify_session39b.sh
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
run render 60 python3 benchmarks/normalize_after_ab.py --modes bfloat16,tf32
run build 200 python3 -c "import sys, pathlib; sys.path.insert(0, '.'); from fusegen.tools.tune import _build_all; \
f = _build_all(sorted(pathlib.Path('ab').glob('na[AB]_*.py')), 4); print('failed', f); sys.exit(1 if f else 0)"
run check 120 python3 benchmarks/normalize_after_ab.py --check --modes bfloat16,tf32
run ab_bf16 70 python3 benchmarks/ab_modules.py ab/naA_bfloat16.py ab/naB_bfloat16.py --init 8192,8192,512 \
  --batch 1024 --rounds 9 --kernels --kernel-rounds 5 --dtype bfloat16
run ab_tf32 70 python3 benchmarks/ab_modules.py ab/naA_tf32.py ab/naB_tf32.py --init 8192,8192,512 \
  --batch 1024 --rounds 9 --kernels --kernel-rounds 5
# (call 1's row-strategy A / B had the wrong sizes: the resized file's hidden is 8255)
run pf_render 60 python3 benchmarks/persistent_forward_ab.py --files row_amax_tuple_dim.py
run pf_build 120 python3 -c "import sys, pathlib; sys.path.insert(0, '.'); from fusegen.tools.tune import _build_all; \
f = _build_all(sorted(pathlib.Path('ab').glob('pf[AB]_*.py')), 2); print('failed', f); sys.exit(1 if f else 0)"
run ab_rows 60 python3 benchmarks/ab_modules.py ab/pfA_row_amax_tuple_dim.py ab/pfB_row_amax_tuple_dim.py \
  --init 8192,8255 --batch 1024 --rounds 9 --kernels --kernel-rounds 5 --dtype bfloat16
run dtypes 200 python3 -m pytest -q -x tests/test_gpu_dtypes.py -k \
  "test_half_module and wgmma and not m128 and (129x264x256x256 or 257x136x100x25)"
cat "$OUT/table.txt"
grep -E "checks failed|allclose" "$OUT/check.txt" | cut -c1-150
for m in bf16 tf32 rows; do grep -E "B / A|forward|gn_after|total" "$OUT/ab_$m.txt" | cut -c1-130; done
