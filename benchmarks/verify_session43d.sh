#!/usr/bin/env bash
# Session 43, on cf583ba (the one-pass GroupNorm backward's leaner loop; the 16-bit wgmma engine's R from shared
# memory): issue 15's step, and the 16-bit module tests through both.
#   1. the step (step_gaps, 3 rounds alternating the layers, medians), bf16 and fp16;
#   2. test_half_module on the planned wgmma tile (9 shapes x 2 distributions x 2 dtypes);
#   3. the random chains per dtype (the chains' gradients now start at -0).
#   device (kind nvidia-h200): PYTHONPATH=. bash benchmarks/verify_session43d.sh
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
run step 170 python3 benchmarks/step_gaps.py --dtypes bfloat16,float16 --rounds 3
run half 200 python3 -m pytest -q tests/test_gpu_dtypes.py -k "test_half_module and wgmma and not m128" \
  -p no:cacheprovider
run chains 110 python3 -m pytest -q tests/test_gpu_dtypes.py -k "random_chains_per_dtype" -p no:cacheprovider
cat "$OUT/table.txt"
tail -n 7 "$OUT/step.txt"
grep -E "^(FAILED|ERROR)" "$OUT/half.txt" "$OUT/chains.txt" | head -n 6
