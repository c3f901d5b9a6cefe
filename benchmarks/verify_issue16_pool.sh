#!/usr/bin/env bash
# Issue 16 part 2 (an AvgPool1d over the features, run as the Linear with its weight pooled) on the GPU, one device
# call of under 10 minutes (kind nvidia-h200); logs under $OUT, a table last:
#   tests/test_gpu_pool.py (each pool file against fp64 at its own and scaled size, the cached pooled weight
#   following the weights, torch.compile), the example's speed at 1024 x 8192 -> 8192 against eager and
#   torch.compile, its kernels' times (benchmarks/kernel_times.py), and the GEMM suites' fp32 stage files again
#   (the planner and templates changed around them)
#   device: PYTHONPATH=. bash benchmarks/verify_issue16_pool.sh
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
run pool 300 python3 -m pytest -m gpu tests/test_gpu_pool.py -v -s -p no:cacheprovider -rfE --durations=5
run bench 150 python3 -m fusegen from-model examples/avgpool_gelu_scale_max_8192.py --out "$OUT/generated" --bench \
  --reps 30
tail -n 6 "$OUT/bench.txt"
run kernels 120 python3 benchmarks/kernel_times.py examples/avgpool_gelu_scale_max_8192.py --reps 10
tail -n 12 "$OUT/kernels.txt"
[ "$SECONDS" -lt 420 ] && run headline 120 python3 -m pytest -m gpu tests/test_gpu_chains.py -v -p no:cacheprovider \
  -rfE -k "stage_headline_variants or stage_linear_alone"
grep -E "pool_avg.*\[" "$OUT/pool.txt" | head -n 20
cat "$OUT/table.txt"
