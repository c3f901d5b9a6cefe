#!/usr/bin/env bash
# Issue 17, part 2 (a write through `.data`) and part 5 (SASS), in one call (logs under $OUT):
#   the scaled-planes tests (the weight's fingerprint among them) beside three planted bugs of the scaled path
#   (benchmarks/mutations.py), then, alone on the GPU, bench.py's per-GEMM report (the fingerprint's cost is in the forward's and
#   grad_input's other kernels), then the SASS of every built extension's GEMM and operand kernels.
#   device: PYTHONPATH=. bash benchmarks/verify_issue17_fingerprint.sh
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
run planes 300 python3 -m pytest -q -x tests/test_gpu_scaled_planes.py &
run mutants 320 python3 benchmarks/mutations.py --only fingerprint_blind,grad_w_element,w_split_nearest \
  --out "$OUT/mutants" &
wait  # (then timed alone)
run bench 200 python3 benchmarks/bench.py --precisions 3xtf32,tf32 --no-compile --reps 20 --out "$OUT/bench"
find "$FUSEGEN_CACHE_DIR" -name '*.so' | grep -v mutants > "$OUT/extensions.txt"
run sass 60 python3 benchmarks/sass_report.py \
  --kernels 'wgmma|scale_rows|scale_cols|col_exps|fingerprint' $(cat "$OUT/extensions.txt")
cat "$OUT/table.txt"
tail -n 12 "$OUT/mutants.txt"
tail -n 6 "$OUT/bench.txt"
grep -E "wgmma_forward|persistent|fingerprint" "$OUT/sass.txt" | cut -c1-220 | head -n 12
