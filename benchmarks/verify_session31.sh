#!/usr/bin/env bash
# Session 31's device calls, one script that follows the GPU it is given (logs under $OUT, a table last):
#   on an H200, STEP=1: issue 17's targets (benchmarks/verify_h200_targets.sh STEP=1); STEP=2: issue 15's step and
#     one synchronized call of each fp32 mode split into host lead, GPU idle and kernels (step_gaps --breakdown);
#   on another GPU, STEP=1: that split, then the property tests of the 3xtf32 and tf32 plans (sm90 and sm80) on the
#     row-plane kernel of 9e88fa0, not run on them yet; STEP=2: x's planes kept for grad_weight (the scaled-planes
#     tests, the mutant x_planes_unwritten beside them, torch.compile / CUDA graphs / DDP, then the split).
#   device (kind nvidia-h200): STEP=1 PYTHONPATH=. bash benchmarks/verify_session31.sh
set -uo pipefail
here=$(dirname "$0")
source "$here/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
split() { run split "$1" python3 benchmarks/step_gaps.py --dtypes float32:3xtf32,float32:tf32 --breakdown --reps 15; }
if grep -q H200 "$OUT/gpu.txt"; then
  if [ "${STEP:-1}" = 1 ]; then STEP=1 bash "$here/verify_h200_targets.sh"; exit; fi
  run gaps 300 python3 benchmarks/step_gaps.py --dtypes bfloat16,float16
  split 240
elif [ "${STEP:-1}" = 2 ]; then  # x's planes kept from forward for grad_weight: tests, the mutant, then the split
  timeout 420 python3 benchmarks/mutations.py --out "$OUT/mutants" --only x_planes_unwritten > "$OUT/mutant.txt" 2>&1 &
  run planes 240 python3 -m pytest -q tests/test_gpu_scaled_planes.py -p no:cacheprovider
  run real_use 240 python3 -m pytest -q tests/test_gpu_real_use.py -k "compile or graph or data_parallel" \
    -p no:cacheprovider
  wait
  tail -n 4 "$OUT/mutant.txt" >> "$OUT/table.txt"
  split 150
else
  split 240
  run property 320 env FUSEGEN_PRECISIONS=3xtf32,tf32 FUSEGEN_GPU_EXAMPLES=30 python3 -m pytest -q tests/test_gpu_module.py \
    -k "random_shapes or known_hard" -p no:cacheprovider
fi
cat "$OUT/table.txt"
for f in gaps split property planes real_use; do [ -f "$OUT/$f.txt" ] && grep -v Warn "$OUT/$f.txt" | tail -n 12; done
exit 0
