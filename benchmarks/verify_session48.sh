#!/usr/bin/env bash
# Issue 15's step on the kernels of session 46 (unchanged since), timed both ways a step can be timed:
# step_gaps.py's samples of 5 calls back to back (the GPU kept busy, as in a training loop) and, with --breakdown,
# one synchronized call between two events (the host's issue of the step counted, as bench.py and the peers' table
# time it). First fusegen and eager, 3 alternating rounds; then one round with torch.compile max-autotune beside
# them (its autotuning takes minutes: the second step may hit its limit, the first's figures stand alone).
#   device (kind nvidia-h200): PYTHONPATH=. bash benchmarks/verify_session48.sh
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
run steps 200 python3 benchmarks/step_gaps.py --rounds 3 --breakdown
run compile 370 python3 benchmarks/step_gaps.py --rounds 1 --breakdown --compile max-autotune-no-cudagraphs
cat "$OUT/table.txt"
for f in steps compile; do
  echo "== $f"; grep -A 12 "^NVIDIA\|^one synchronized call (us" "$OUT/$f.txt" | grep -v "^--"
done
true
