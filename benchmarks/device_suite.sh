#!/usr/bin/env bash
# One device call: GPU tests (logs under $OUT) then the benchmark; prints a short table last.
#   device: PYTHONPATH=. bash benchmarks/device_suite.sh
set -uo pipefail
OUT=${OUT:-/tmp/fusegen-out}
mkdir -p "$OUT"
export PYTHONPATH=${PYTHONPATH:-.} PYTHONUNBUFFERED=1 FUSEGEN_CACHE_DIR=${FUSEGEN_CACHE_DIR:-/tmp/fusegen-cache}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee "$OUT/gpu.txt"
start=$(date +%s)
rm -f "$OUT/accuracy.jsonl"
FUSEGEN_ACCURACY_LOG="$OUT/accuracy.jsonl" python3 -m pytest tests -m gpu -v -p no:cacheprovider ${PYTEST_ARGS:-} 2>&1 | tee "$OUT/gpu-tests.txt"
tests_rc=${PIPESTATUS[0]}
echo "gpu tests: rc=$tests_rc in $(( $(date +%s) - start )) s" | tee -a "$OUT/gpu-tests.txt"
if [ "${SKIP_BENCH:-0}" != 1 ]; then
  python3 benchmarks/bench.py --out "$OUT" ${BENCH_ARGS:-} 2>&1 | tee "$OUT/bench.txt"
fi
command -v cuobjdump >/dev/null && python3 benchmarks/sass_check.py > "$OUT/sass.txt" 2>&1
[ -f "$OUT/accuracy.jsonl" ] && python3 benchmarks/accuracy_summary.py "$OUT/accuracy.jsonl" | tee "$OUT/accuracy.txt"
tail -n 3 "$OUT/gpu-tests.txt"
exit $tests_rc
