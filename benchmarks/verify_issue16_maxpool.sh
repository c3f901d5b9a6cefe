#!/usr/bin/env bash
# Issue 16 part 2's MaxPool1d over the features on the GPU, one device call of under 10 minutes (kind nvidia-h200);
# logs under $OUT, a table last: tests/test_gpu_max_pool.py (each pool_max file against fp64 at its own and scaled
# size, exact ties, bfloat16 and autocast, torch.compile), the pool files and two existing row files on both engine
# families (tests/test_gpu_chains.py: the row kernels changed around them), the examples' speed at 1024 x 8192 ->
# 8192 against eager and torch.compile, and planted bugs (benchmarks/mutations.py)
#   device: PYTHONPATH=. bash benchmarks/verify_issue16_maxpool.sh
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
run maxpool 240 python3 -m pytest -m gpu tests/test_gpu_max_pool.py -v -s -p no:cacheprovider -rfE --durations=5
run chains 200 python3 -m pytest -m gpu tests/test_gpu_chains.py -v -s -p no:cacheprovider -rfE \
  -k "pool_max or row_gn_softmax or row_max_center"
run bench 100 python3 -m fusegen from-model examples/maxpool_sum_scale_8192.py --out "$OUT/generated" --bench --reps 30
tail -n 6 "$OUT/bench.txt"
[ "$SECONDS" -lt 400 ] && run bench_gn 90 python3 -m fusegen from-model examples/maxpool_gn_gelu_8192.py \
  --out "$OUT/generated" --bench --reps 30
tail -n 6 "$OUT/bench_gn.txt" 2>/dev/null
[ "$SECONDS" -lt 440 ] && run mutants 130 python3 benchmarks/mutations.py --only max_pool_tie,max_pool_overlap \
  --out "$OUT/mutants"
grep -E "pool_max.*\[|FAILED" "$OUT/maxpool.txt" "$OUT/chains.txt" | head -n 40
tail -n 5 "$OUT/mutants.txt" 2>/dev/null
cat "$OUT/table.txt"
