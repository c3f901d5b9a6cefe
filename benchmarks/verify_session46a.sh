#!/usr/bin/env bash
# Session 46, call 1: the one-pass GroupNorm backward's stepped grad_out pointer (b60e4b4) through the grad_out
# layout and past-32-bit tests, then issue 15's step as the session starts.
#   device (kind nvidia-h200): PYTHONPATH=. bash benchmarks/verify_session46a.sh
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
run layouts 200 python3 -m pytest -q -x tests/test_gpu_dtypes.py -k "grad_out_layout or past_32_bits"
run step 120 python3 benchmarks/step_gaps.py --dtypes bfloat16,float16 --rounds 3
cat "$OUT/table.txt"
grep -E "passed|failed|Error" "$OUT/layouts.txt" | tail -n 5
tail -n 6 "$OUT/step.txt"
