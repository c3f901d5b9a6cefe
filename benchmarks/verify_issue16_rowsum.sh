#!/usr/bin/env bash
# Issue 16 part 7 (the row-sum rewrite, plan/row_sum.py) on the GPU: one device call of under 10 minutes (kind
# nvidia-h200); logs under $OUT, a short table last.
#   - tests/test_gpu_row_sum.py: each rewrite file forward and every gradient against fp64 at its own size and
#     scaled to real use, the cached weight reduction following the weights, torch.compile
#   - tests/test_gpu_layers.py -k rowsum: the MLP whose last layer is a row sum (a composite with a rewrite layer)
#   - the example's speed at 1024 x 8192 -> 8192 against eager and torch.compile (issue 16's target: >= 50x eager
#     forward, the weight reduction cached)
#   device: PYTHONPATH=. bash benchmarks/verify_issue16_rowsum.sh
set -uo pipefail
OUT=${OUT:-/tmp/fusegen-out}
mkdir -p "$OUT"
export PYTHONPATH=${PYTHONPATH:-.} PYTHONUNBUFFERED=1 FUSEGEN_CACHE_DIR=${FUSEGEN_CACHE_DIR:-/tmp/fusegen-cache}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
run() {  # name, seconds, command...
  local name=$1 limit=$2; shift 2
  local start=$SECONDS
  timeout "$limit" "$@" > "$OUT/$name.txt" 2>&1
  local rc=$?
  printf '%-10s rc=%-3s %4ss  %s\n' "$name" "$rc" "$((SECONDS - start))" \
    "$(grep -E '[0-9]+ (passed|failed)' "$OUT/$name.txt" | tail -n 1)" >> "$OUT/table.txt"
}
: > "$OUT/table.txt"
run rowsum 240 python3 -m pytest -m gpu tests/test_gpu_row_sum.py -v -p no:cacheprovider -rfE --durations=5
run layers 150 python3 -m pytest -m gpu tests/test_gpu_layers.py -v -p no:cacheprovider -rfE -k "rowsum and fp64"
run bench 150 python3 -m fusegen from-model examples/rowsum_matmul_div_sum_scale_8192.py --out "$OUT/generated" \
  --bench --reps 50
tail -n 8 "$OUT/bench.txt"
cat "$OUT/table.txt"
