#!/usr/bin/env bash
# Session 44, on the statistics' stores spread over each group's lanes (runs 4-5: the same bit for bit in four
# modes, the 16-bit module tests on both wgmma tiles and 3xtf32's hard shapes passed): issue 15's step, another
# sample, then the module tests that reach the forward's fragment GroupNorm in other ways: random chains per dtype
# and the autocast modules (fp32 GroupNorm output from 16-bit GEMMs).
#   device (kind nvidia-h200): PYTHONPATH=. bash benchmarks/verify_session44e.sh
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
run step 120 python3 benchmarks/step_gaps.py --dtypes float16,bfloat16 --rounds 3
run chains 110 python3 -m pytest -q tests/test_gpu_dtypes.py -k "random_chains_per_dtype" -p no:cacheprovider
run autocast 200 python3 -m pytest -q tests/test_gpu_autocast.py -p no:cacheprovider
cat "$OUT/table.txt"
grep -hE "^(FAILED|ERROR)" "$OUT/chains.txt" "$OUT/autocast.txt" | head -n 6
tail -n 6 "$OUT/step.txt"
