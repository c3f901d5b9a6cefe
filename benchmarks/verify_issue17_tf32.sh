#!/bin/bash
# Issue 17 part 4 on an sm_90 GPU: the tf32 mode over scaled fp16 planes (templates/engines/operand_scale.cuh.j2).
# One call: the modules built side by side first, then the extreme-rows test, the headline's accuracy and speed
# (benchmarks/tf32_scaled.py), the step's kernels (benchmarks/kernel_times.py), then the property tests of the tf32 wgmma plan (FUSEGEN_GPU_EXAMPLES, default 30).
# Logs under $OUT.   PYTHONPATH=. bash benchmarks/verify_issue17_tf32.sh
set -u
OUT=${OUT:-/tmp/verify_issue17_tf32}
mkdir -p "$OUT"
export PYTHONPATH=${PYTHONPATH:-.}
export FUSEGEN_CACHE_DIR=${FUSEGEN_CACHE_DIR:-$HOME/.cache/fusegen}
EXAMPLES=${FUSEGEN_GPU_EXAMPLES:-30}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"

# the headline tf32 module and the Linear-alone one, built at once (the later steps find them in the cache)
python - <<'EOF' 2>&1 | tail -5 | tee "$OUT/prebuild.log"
import pathlib, tempfile, torch
import fusegen
from fusegen.frontend import model_spec
from fusegen.tools.tune import _build_all
arch = tuple(torch.cuda.get_device_capability())
out = pathlib.Path(tempfile.mkdtemp())
paths = [fusegen.write_module(fusegen.plan(fusegen.Spec(8192, 8192, 512, precision="tf32"),
                                           gpu=torch.cuda.get_device_name(), arch=arch), out),
         fusegen.write_module(fusegen.plan(model_spec("tests/models/stage_linear_alone.py", precision="tf32")[0],
                                           arch=arch, fixed_sizes=False), out)]
failed = _build_all(paths, jobs=len(paths))
print("prebuilt", [p.name for p in paths], "failed:", {p.name: o[-2000:] for p, o in failed.items()})
EOF

timeout 150 python -m pytest -q tests/test_gpu_scaled_planes.py -p no:cacheprovider 2>&1 | tail -15 \
    | tee "$OUT/extreme_rows.log"
timeout 240 python benchmarks/tf32_scaled.py ${NO_COMPILE:+--no-compile} 2>&1 | grep -v Warning | tail -20 \
    | tee "$OUT/tf32_headline.log"
timeout 120 python benchmarks/kernel_times.py tests/reference_model.py --precision tf32 --reps 5 2>&1 | grep -v Warn \
    | tail -14 | tee "$OUT/kernel_times.log"
FUSEGEN_PRECISIONS=tf32 FUSEGEN_GPU_EXAMPLES=$EXAMPLES timeout ${PROPERTY_S:-300} python -m pytest -q -x \
    tests/test_gpu_module.py -k "sm90 and (random_shapes or known_hard)" -p no:cacheprovider 2>&1 | tail -15 \
    | tee "$OUT/property.log"
