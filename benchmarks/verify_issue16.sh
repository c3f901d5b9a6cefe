#!/usr/bin/env bash
# Issue 16's GPU checks of what branch issue16-next wrote on the CPU (perf notes v0.18), two device calls of under
# 10 minutes each (kind nvidia-h200); logs under $OUT, a short table last.
#   STEP=1  models of several GEMMs in fp32 on wgmma and mma.sync (tests/test_gpu_layers.py) and the MLP example's
#           speed against eager and torch.compile
#   STEP=2  the same models in bf16 / fp16 and inside torch.compile; the new stage files (min / max / clamp against
#           parameters, scalar parameters, detached residuals, a Linear alone) on both engines
#   STEP=3  the random chains (fp32, per dtype) that draw those spellings, the models of several GEMMs inside
#           torch.compile (again: STEP=2's 16-bit checks left it no time), and the speed of the new examples at
#           1024 x 8192 -> 8192 (scalar parameters with a max, a detached residual) against eager and torch.compile
#   device: STEP=1 PYTHONPATH=. bash benchmarks/verify_issue16.sh
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
case "${STEP:-1}" in
  1)
    run layers 330 python3 -m pytest -m gpu tests/test_gpu_layers.py -v -p no:cacheprovider -rfE -k fp64
    run mlp 200 python3 -m fusegen from-model examples/mlp_relu_8192.py --out "$OUT/generated" --bench --reps 20 ;;
  2)
    run layers16 270 python3 -m pytest -m gpu tests/test_gpu_layers.py -v -p no:cacheprovider -rfE --durations=5 \
      -k "16_bits or torch_compile"
    run stages 280 python3 -m pytest -m gpu tests/test_gpu_chains.py -v -p no:cacheprovider -rfE -k \
      "stage_channel or stage_residual or stage_scalar or stage_linear_alone or detached" ;;
  3)
    run random 220 python3 -m pytest -m gpu tests/test_gpu_chains.py tests/test_gpu_dtypes.py -v -p no:cacheprovider \
      -rfE --durations=5 -k "random_chains"
    run compile 150 python3 -m pytest -m gpu tests/test_gpu_layers.py -v -p no:cacheprovider -rfE --durations=5 \
      -k torch_compile
    for f in scalar_max_tanh_8192 detached_residual_8192; do
      [ "$SECONDS" -lt 420 ] || { echo "$f: skipped, no time left in this call" >> "$OUT/table.txt"; continue; }
      run "$f" 150 python3 -m fusegen from-model "examples/$f.py" --out "$OUT/generated" --bench --reps 20
      tail -n 6 "$OUT/$f.txt"
    done ;;
  *) echo "STEP must be 1, 2 or 3, got $STEP" >&2; exit 2 ;;
esac
tail -n 25 "$OUT/mlp.txt" 2>/dev/null
cat "$OUT/table.txt"
