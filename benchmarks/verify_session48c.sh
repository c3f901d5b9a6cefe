#!/usr/bin/env bash
# Issue 15's GPU tests on the head, besides the module cases (tests/test_gpu_dtypes.py -k half_module: 132 passed
# on these kernels in session 47): the random shapes and chains per dtype, the benchmark-way test, the scalar
# parameters and narrow groups, and tests/test_gpu_autocast.py.
#   device (kind nvidia-h200): PYTHONPATH=. bash benchmarks/verify_session48c.sh
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
run dtypes 300 python3 -m pytest -q -rs tests/test_gpu_dtypes.py -k "not half_module"
run autocast 250 python3 -m pytest -q -rs tests/test_gpu_autocast.py
cat "$OUT/table.txt"
grep -hE "passed|failed|FAILED|Error" "$OUT"/dtypes.txt "$OUT"/autocast.txt | tail -n 8
true
