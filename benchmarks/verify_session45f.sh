#!/usr/bin/env bash
# Session 45, after run 5 (the 8-channel one-pass GroupNorm backward: bf16 24.5 + 3.0 -> 19.4 + 1.6 us). Its teeth
# and the autocast modules it now serves:
#   1. mutation gn_vec_grad (a thread's vector of grad_out read reversed where loaded as one): the grad_out layout
#      test must fail;
#   2. the headline under autocast (bf16 and fp16 autocast, wgmma's planned tile: z bf16 / fp16, fp32 statistics,
#      so 8 channels a thread).
#   device (kind nvidia-h200): PYTHONPATH=. bash benchmarks/verify_session45f.sh
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
run mutation 100 python3 benchmarks/mutations.py --only gn_vec_grad --out "$OUT/mutants"
run autocast 110 python3 -m pytest -q -x tests/test_gpu_autocast.py -k "headline and wgmma and not m128"
cat "$OUT/table.txt"
tail -n 6 "$OUT/mutation.txt"
grep -E "passed|failed|Error|FAILED" "$OUT/autocast.txt" | tail -n 6
