#!/bin/bash
# Issue 17 part 1 on an sm_90 GPU: 3xtf32 over two scaled fp16 planes an operand (3xfp16: mainloop wgmma_3xf16s).
# STEP=1: the modules built side by side, then the extreme-rows tests (tf32 and 3xtf32), the headline's accuracy on
# every distribution and speed beside the 3xTF32 engine and eager / torch.compile fp32 (benchmarks/tf32_scaled.py
# --precision 3xtf32), the step's kernels (kernel_times.py). STEP=2: the property tests of the 3xtf32 and tf32
# wgmma plans (FUSEGEN_GPU_EXAMPLES, default 30), then tf32's headline again (its templates changed too).
# Logs under $OUT.   STEP=1 PYTHONPATH=. bash benchmarks/verify_issue17_3xfp16.sh
set -u
OUT=${OUT:-/tmp/verify_issue17_3xfp16}
STEP=${STEP:-1}
mkdir -p "$OUT"
export PYTHONPATH=${PYTHONPATH:-.}
export FUSEGEN_CACHE_DIR=${FUSEGEN_CACHE_DIR:-$HOME/.cache/fusegen}
EXAMPLES=${FUSEGEN_GPU_EXAMPLES:-30}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"

if [ "$STEP" = 1 ]; then
# the headline on both engines and the Linear-alone modules of the extreme-rows test, built at once (the later
# steps find them in the cache)
python - <<'PY' 2>&1 | tail -5 | tee "$OUT/prebuild.log"
import pathlib, tempfile, torch
import fusegen
from fusegen.frontend import model_spec
from fusegen.tools.tune import _build_all
arch, gpu = tuple(torch.cuda.get_device_capability()), torch.cuda.get_device_name()
out = pathlib.Path(tempfile.mkdtemp())
head = fusegen.Spec(8192, 8192, 512)
plans = [fusegen.plan(head, gpu=gpu, arch=arch, scaled_planes=True),
         fusegen.plan(head, gpu=gpu, arch=arch, scaled_planes=False)]
plans += [fusegen.plan(model_spec("tests/models/stage_linear_alone.py", precision=p)[0], arch=arch, fixed_sizes=False,
                       scaled_planes=True) for p in ("3xtf32", "tf32")]
paths = [fusegen.write_module(p, out) for p in plans]
failed = _build_all(paths, jobs=len(paths))
print("prebuilt", [p.name for p in paths], "failed:", {p.name: o[-3000:] for p, o in failed.items()})
PY
timeout 200 python -m pytest -q tests/test_gpu_scaled_planes.py -p no:cacheprovider 2>&1 | tail -25 \
    | tee "$OUT/extreme_rows.log"
timeout 300 python benchmarks/tf32_scaled.py --precision 3xtf32 ${NO_COMPILE:+--no-compile} 2>&1 | grep -v Warning \
    | tail -30 | tee "$OUT/3xfp16_headline.log"
timeout 100 python benchmarks/kernel_times.py tests/reference_model.py --precision 3xtf32 --reps 5 2>&1 \
    | grep -v Warn | tail -16 | tee "$OUT/kernel_times.log"
fi

if [ "$STEP" = 2 ]; then
FUSEGEN_PRECISIONS=3xtf32,tf32 FUSEGEN_GPU_EXAMPLES=$EXAMPLES timeout ${PROPERTY_S:-420} python -m pytest -q \
    tests/test_gpu_module.py -k "sm90 and (random_shapes or known_hard)" -p no:cacheprovider 2>&1 | tail -25 \
    | tee "$OUT/property.log"
timeout 150 python benchmarks/tf32_scaled.py --precision tf32 --no-compile 2>&1 | grep -v Warning | tail -16 \
    | tee "$OUT/tf32_headline.log"
fi
