#!/usr/bin/env bash
# Prepared in session 40 for the next session's first device call (logs under $OUT, a table last): what session 40
# changed (the 16-bit GEMMs' output tiles and the 16-bit persistent forward's out and z staged by stmatrix) through
# the rest of the 16-bit GPU suite, which its device time did not reach, then issue 15's step again.
#   1. tests/test_gpu_dtypes.py whole (the tested shapes on every engine, random shapes and chains per dtype,
#      autocast's chains);
#   2. tests/test_gpu_autocast.py;
#   3. issue 15's step (step_gaps.py, bf16 and fp16), on an H200 comparable with the targets.
#   device (kind nvidia-h200): PYTHONPATH=. bash benchmarks/verify_session41.sh
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
run dtypes 330 python3 -m pytest -q tests/test_gpu_dtypes.py
run autocast 120 python3 -m pytest -q tests/test_gpu_autocast.py
run gaps 100 python3 benchmarks/step_gaps.py --dtypes bfloat16,float16
cat "$OUT/table.txt"
tail -n 6 "$OUT/gaps.txt"
