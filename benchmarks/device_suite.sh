#!/usr/bin/env bash
# The GPU suite in parts, each one device call under its 10-minute limit (logs under $OUT, a short table last):
#   PART=module     tests/test_gpu_module.py: property tests over random shapes (half above EXACT_MAX_MACS),
#                   known hard shapes, the committed headline module (~4 min on an H200)
#   PART=chains     tests/test_gpu_chains.py: every model file at its own size and scaled to the tensor-core
#                   engines, on wgmma and mma.sync, and the random chains. On a fresh machine its ~130 modules' builds
#                   alone outlast a call (session 25, two halves side by side: neither finished building in 570 s):
#                   run it in shards, FUSEGEN_SHARD=0/4 .. 3/4 (the model files; K='random' the random chains)
#   PART=real_use   tests/test_gpu_real_use.py: torch.compile / DDP / CLI (~3.5 min)
#   PART=layers     tests/test_gpu_layers.py: models of several GEMMs (tests/models/layers_*.py), each at its own
#                   size and scaled up, on wgmma and mma.sync
#   PART=dtypes     tests/test_gpu_engines.py and tests/test_gpu_dtypes.py: the bf16 / fp16 engine alone, then
#                   bf16 / fp16 modules against the reference in their dtype and fp64 (~3 min on an H200)
#   PART=rewrites   issue 16's own files: the pools (pooled weight, row kernels' max and 16-bit average), the
#                   row-sum GEMV, dropout (our masks fixed in the reference), the residual of the layer's input
#   PART=mutations  benchmarks/mutations.py: planted bugs, each must fail the tests of its path; all at once
#                   outlast a call (session 26): MUT_PART=0/3 .. 2/3, one call each (a log per mutant in $OUT)
#   PART=bench      benchmarks/bench.py and the SASS check
#   PART=examples   `fusegen from-model F --bench` for each example layer (EXAMPLES, default examples/*.py), their
#                   modules built in parallel first
#   K: a pytest -k expression selecting tests of the part (PYTEST_ARGS: more arguments, split at spaces)
#   device: PART=module PYTHONPATH=. bash benchmarks/device_suite.sh
set -uo pipefail
OUT=${OUT:-/tmp/fusegen-out}
PART=${PART:-module}
mkdir -p "$OUT"
export PYTHONPATH=${PYTHONPATH:-.} PYTHONUNBUFFERED=1 FUSEGEN_CACHE_DIR=${FUSEGEN_CACHE_DIR:-/tmp/fusegen-cache} \
  FUSEGEN_FAILED_CHAINS=${FUSEGEN_FAILED_CHAINS:-$OUT/failed-chains}  # random chains that miss the bar, kept
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee "$OUT/gpu.txt"
start=$(date +%s)
case "$PART" in
  module) tests="tests/test_gpu_module.py" ;;
  chains) tests="tests/test_gpu_chains.py" ;;
  real_use) tests="tests/test_gpu_real_use.py" ;;
  layers) tests="tests/test_gpu_layers.py" ;;
  dtypes) tests="tests/test_gpu_engines.py tests/test_gpu_dtypes.py" ;;
  rewrites) tests="tests/test_gpu_pool.py tests/test_gpu_max_pool.py tests/test_gpu_row_sum.py tests/test_gpu_dropout.py
                   tests/test_gpu_input_residual.py" ;;
  mutations)
    python3 benchmarks/mutations.py --out "$OUT" --part "${MUT_PART:-0/1}" 2>&1 | tee "$OUT/mutations.txt"
    exit "${PIPESTATUS[0]}" ;;
  bench)
    python3 benchmarks/bench.py --out "$OUT" ${BENCH_ARGS:-} 2>&1 | tee "$OUT/bench.txt"
    command -v cuobjdump >/dev/null && python3 benchmarks/sass_check.py > "$OUT/sass.txt" 2>&1
    exit 0 ;;
  examples)
    files=${EXAMPLES:-$(ls examples/*.py)}
    # shellcheck disable=SC2086
    for f in $files; do python3 -m fusegen from-model "$f" --out "$OUT/examples" > /dev/null || exit 1; done
    python3 -c "import sys; sys.path.insert(0, 'tests'); from helpers import prebuild; import glob; \
import pathlib; prebuild(sorted(pathlib.Path(p) for p in glob.glob('$OUT/examples/*.py')))" || exit 1
    for f in $files; do
      echo "== $f"; python3 -m fusegen from-model "$f" --out "$OUT/examples" --bench --reps "${REPS:-30}"
    done 2>&1 | tee "$OUT/examples.txt"
    exit "${PIPESTATUS[0]}" ;;
  *) echo "PART must be module, chains, real_use, layers, dtypes, rewrites, mutations, bench or examples, got $PART" >&2
     exit 2 ;;
esac
rm -f "$OUT/accuracy-$PART.jsonl"
# shellcheck disable=SC2086
FUSEGEN_ACCURACY_LOG="$OUT/accuracy-$PART.jsonl" timeout "${SUITE_TIMEOUT:-570}" python3 -m pytest $tests -m gpu -v \
  -p no:cacheprovider -rfE --durations=8 ${K:+-k "$K"} ${PYTEST_ARGS:-} > "$OUT/gpu-$PART.txt" 2>&1
tests_rc=$?
echo "gpu tests ($PART): rc=$tests_rc in $(( $(date +%s) - start )) s" | tee -a "$OUT/gpu-$PART.txt"
[ -f "$OUT/accuracy-$PART.jsonl" ] && python3 benchmarks/accuracy_summary.py "$OUT/accuracy-$PART.jsonl" \
  > "$OUT/accuracy-$PART.txt" && head -n 14 "$OUT/accuracy-$PART.txt"
grep -E "^(FAILED|ERROR)|passed|failed" "$OUT/gpu-$PART.txt" | tail -n 8
exit $tests_rc
