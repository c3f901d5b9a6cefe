#!/usr/bin/env bash
# Branch issue16-rowsum on the GPU (issue 16 part 7: the row-sum rewrite, plan/row_sum.py, and the chain folds,
# plan/algebra.py): two device calls of under 10 minutes each (kind nvidia-h200); logs under $OUT, a table last.
#   STEP=1  tests/test_gpu_row_sum.py (each rewrite file's forward and every gradient against fp64 at its own size
#           and scaled to real use, in bf16 / fp16 against the 16-bit reference, the cached weight reduction
#           following the weights, torch.compile) and the example's speed at 1024 x 8192 -> 8192 against eager and
#           torch.compile (issue 16's target: >= 50x eager forward, the weight reduction cached)
#   STEP=2  the folds and the rewrite where the GEMM suites reach them: tests/models/fold_scales.py on both engines,
#           the random chains (fp32 and per dtype, which draw folded chains and row sums), the MLP whose last layer
#           is a row sum
#   STEP=3  the 16-bit bar's fused yardstick (a stage's rounding before narrow groups): the chain that failed it
#           in bf16 / fp16, a probe of how far torch.compile and the fused reference stray, the per-dtype random chains
#   STEP=4  issue 16's examples at 1024 x 8192 -> 8192 on the H200 against eager and torch.compile (the MLP, scalar
#           parameters with a max, a detached residual, the row sum), and the row sum's phases
#   device: STEP=1 PYTHONPATH=. bash benchmarks/verify_issue16_rowsum.sh
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
case "${STEP:-1}" in
  1)
    run rowsum 300 python3 -m pytest -m gpu tests/test_gpu_row_sum.py -v -p no:cacheprovider -rfE --durations=5
    run bench 150 python3 -m fusegen from-model examples/rowsum_matmul_div_sum_scale_8192.py --out "$OUT/generated" \
      --bench --reps 50
    tail -n 8 "$OUT/bench.txt"
    run phases 90 python3 benchmarks/row_sum_speed.py
    cat "$OUT/phases.txt" ;;
  2)
    run folds 200 python3 -m pytest -m gpu tests/test_gpu_chains.py -v -p no:cacheprovider -rfE -k "fold_scales"
    run random 240 python3 -m pytest -m gpu tests/test_gpu_chains.py tests/test_gpu_dtypes.py -v -p no:cacheprovider \
      -rfE --durations=5 -k "random_chains"
    run layers 120 python3 -m pytest -m gpu tests/test_gpu_layers.py -v -p no:cacheprovider -rfE -k "rowsum and fp64" ;;
  3)
    run narrow 150 python3 -m pytest -m gpu tests/test_gpu_dtypes.py -v -p no:cacheprovider -rfE -s -k "narrow_groups"
    run probe 120 python3 benchmarks/probe_narrow_groups_bf16.py
    cat "$OUT/probe.txt" | tail -n 12
    run random16 240 python3 -m pytest -m gpu tests/test_gpu_dtypes.py -v -p no:cacheprovider -rfE -s \
      --durations=5 -k "random_chains" ;;
  4)
    for f in mlp_relu_8192 scalar_max_tanh_8192 detached_residual_8192 rowsum_matmul_div_sum_scale_8192; do
      [ "$SECONDS" -lt 450 ] || { echo "$f: skipped, no time left in this call" >> "$OUT/table.txt"; continue; }
      run "$f" 200 python3 -m fusegen from-model "examples/$f.py" --out "$OUT/generated" --bench --reps 30
      tail -n 6 "$OUT/$f.txt"
    done
    run phases 90 python3 benchmarks/row_sum_speed.py --reps 200
    cat "$OUT/phases.txt" ;;
  *) echo "STEP must be 1, 2, 3 or 4, got $STEP" >&2; exit 2 ;;
esac
cat "$OUT/table.txt"
