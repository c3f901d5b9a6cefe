#!/usr/bin/env bash
# Issue 16 part 2's pools in the row kernels on the GPU (the MaxPool1d, and the AvgPool1d of 16-bit layers and
# autocast), one device call of under 10 minutes (kind nvidia-h200); logs under $OUT, a table last:
#   tests/test_gpu_max_pool.py (each pool_max file against fp64 at its own and scaled size, rows over 1024 features
#   on the block team, exact ties, bfloat16, autocast, torch.compile), tests/test_gpu_pool.py (the fp32 pooled
#   weight as before, the 16-bit average pools in the row kernels against the reference in its type), the row files
#   on the wgmma engine (tests/test_gpu_chains.py: the row kernels changed around them) and a planted bug
#   device: PYTHONPATH=. bash benchmarks/verify_issue16_pools_rows.sh
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
run maxpool 200 python3 -m pytest -m gpu tests/test_gpu_max_pool.py -v -s -p no:cacheprovider -rfE --durations=5
run avgpool 200 python3 -m pytest -m gpu tests/test_gpu_pool.py -v -s -p no:cacheprovider -rfE --durations=5
[ "$SECONDS" -lt 330 ] && run rows 200 python3 -m pytest -m gpu tests/test_gpu_chains.py -v -s -p no:cacheprovider \
  -rfE -k "sm90 and (row_ or dropout_rows or input_residual_rows) and not narrow"
[ "$SECONDS" -lt 470 ] && run mutants 100 python3 benchmarks/mutations.py --only avg_pool_rows_divisor \
  --out "$OUT/mutants"
grep -E "FAILED|Error" "$OUT/maxpool.txt" "$OUT/avgpool.txt" "$OUT/rows.txt" | head -n 20
grep -E "wide max pool|autocast|bfloat16|float16" "$OUT/maxpool.txt" "$OUT/avgpool.txt" | grep -v "^.*tests/" | head -n 20
tail -n 4 "$OUT/mutants.txt" 2>/dev/null
cat "$OUT/table.txt"
