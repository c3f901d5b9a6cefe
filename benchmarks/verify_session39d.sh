#!/usr/bin/env bash
# Session 39, fourth call: the one-pass GroupNorm backward at 4 blocks an SM with fp32 statistics
# (Plan.gn_backward_blocks, run 3's fastest), checked and timed in whole layers:
#   1. the 16-bit module tests through that kernel (bf16; groups of 16 and 32; mma.sync and wgmma);
#   2. tf32 at the headline: every distribution against fp64, the layer beside torch.compile with TF32
#      (forward, forward+backward accumulating and with fresh gradients);
#   3. bf16's step: accumulating and fresh gradients, kernels and idle GPU (step_gaps.py).
#   device (kind nvidia-h200): PYTHONPATH=. bash benchmarks/verify_session39d.sh
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
run dtypes 200 python3 -m pytest -q tests/test_gpu_dtypes.py -k \
  "test_half_module and bfloat16 and not m128 and (37x200x160x10 or 1024x1024x1024x32)"
run tf32 200 python3 benchmarks/tf32_scaled.py --precision tf32
run gaps 180 python3 benchmarks/step_gaps.py --dtypes bfloat16
cat "$OUT/table.txt"
grep -v Warn "$OUT/tf32.txt" | tail -n 6
tail -n 8 "$OUT/gaps.txt"
