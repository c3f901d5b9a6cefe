#!/usr/bin/env bash
# The card's clocks, power and throttle reasons under a sustained step (benchmarks/power_clocks.py), bf16 and fp16:
# is the step's ~0.1 ms over its profiled kernels the card clocking down, and under which limit.
#   device (kind nvidia-h200): PYTHONPATH=. bash benchmarks/verify_session47b.sh
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
nvidia-smi --query-gpu=clocks_event_reasons.active,clocks.sm,power.draw --format=csv | tee "$OUT/smi_probe.txt"
run power 400 python3 benchmarks/power_clocks.py --dtypes bfloat16,float16 --seconds 4
cat "$OUT/table.txt"
tail -n 12 "$OUT/power.txt"
