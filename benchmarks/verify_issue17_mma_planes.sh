#!/usr/bin/env bash
# 3xFP16 on mma.sync (engine Planes, plan(arch=(8, 0), scaled_planes=True): opt-in, THREE_FP16_MMA) inside modules,
# on an sm_90 GPU running its sm_80 code, in two calls (logs under $OUT, a table last):
#   STEP=1: the scaled-planes tests (every variant: tf32, 3xtf32 and 3xtf32-sm80 — extreme rows, the weight's planes
#           following each update, x's planes kept), the property tests' 3xtf32-sm80-planes variant (random shapes,
#           hard shapes), and the committed headline module (its source changed in session 31: host code and the
#           forward's epilogue boundary)
#   STEP=2: the headline on sm_80 plans, 3xfp16 (Planes) against 3xTF32 (mma_tf32), one machine, alternating rounds
#           (benchmarks/ab_modules.py --kernels), then torch.compile / CUDA graphs / DDP (real_use)
#   device: STEP=1 PYTHONPATH=. bash benchmarks/verify_issue17_mma_planes.sh
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
if [ "${STEP:-1}" = 1 ]; then
  run planes 260 python3 -m pytest -q tests/test_gpu_scaled_planes.py -p no:cacheprovider
  run property 300 env FUSEGEN_PRECISIONS=3xtf32 FUSEGEN_GPU_EXAMPLES=30 python3 -m pytest -q \
    tests/test_gpu_module.py -k "planes or headline_committed" -p no:cacheprovider
else
  python3 - "$OUT/modules" <<'PY'
import sys
import fusegen
for planes in (True, False):
    p = fusegen.plan(fusegen.Spec(8192, 8192, 512), arch=(8, 0), scaled_planes=planes)
    print(fusegen.write_module(p, f"{sys.argv[1]}/{p.mainloop}"))
PY
  run ab 280 python3 benchmarks/ab_modules.py "$OUT"/modules/mma_tf32/*.py "$OUT"/modules/mma_3xf16s/*.py \
    --init 8192,8192,512 --batch 1024 --rounds 5 --kernels
  run real_use 250 python3 -m pytest -q tests/test_gpu_real_use.py -p no:cacheprovider
fi
cat "$OUT/table.txt"
for f in planes property ab real_use; do [ -f "$OUT/$f.txt" ] && grep -v Warn "$OUT/$f.txt" | tail -n 14; done
exit 0
