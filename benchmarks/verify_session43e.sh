#!/usr/bin/env bash
# Session 43, on 74a0e38 (the 16-bit wgmma engine's R from shared memory; generated/ re-rendered): the engine's
# other users at real sizes.
#   1. the committed headline module (3xtf32 on two fp16 planes) and a bf16 module judged the benchmark's way, NaN
#      and Inf propagating as in the reference;
#   2. the scaled planes' extreme rows at batches 300 and 1024 (tf32, 3xtf32);
#   3. the autocast modules (the 16-bit engine under fp32 parameters).
#   device (kind nvidia-h200): PYTHONPATH=. bash benchmarks/verify_session43e.sh
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
run real_use 130 python3 -m pytest -q tests/test_gpu_real_use.py -k "committed_file or bf16_module or nan_and_inf" \
  -p no:cacheprovider
run planes 130 python3 -m pytest -q tests/test_gpu_scaled_planes.py -k "extreme_rows" -p no:cacheprovider
run autocast 230 python3 -m pytest -q tests/test_gpu_autocast.py -p no:cacheprovider
cat "$OUT/table.txt"
grep -hE "^(FAILED|ERROR)" "$OUT"/real_use.txt "$OUT"/planes.txt "$OUT"/autocast.txt | head -n 8
