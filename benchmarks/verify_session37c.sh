#!/usr/bin/env bash
# Session 37, run 3: the persistent forward on every forward epilogue it takes (plan.persistent_forward: no
# GroupNorm, the row and column strategies, GroupNorm on the fragments) and on the scaled planes' awkward shapes:
# every model file on sm_90 at its own and at a scaled size (the scaled one runs wgmma) against fp64, and the
# scaled-planes tests (tf32, 3xtf32: wide shapes, partial row groups). Logs in one archive (logs.tgz).
#   device: PYTHONPATH=. bash benchmarks/verify_session37c.sh
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
run chains 330 python3 -m pytest -q -s tests/test_gpu_chains.py -m gpu -k "model_file and sm90" -p no:cacheprovider
run planes 230 env FUSEGEN_PRECISIONS=3xtf32,tf32 python3 -m pytest -q tests/test_gpu_scaled_planes.py \
  -p no:cacheprovider
cat "$OUT/table.txt"
grep -hE "^(FAILED|ERROR)" "$OUT/chains.txt" "$OUT/planes.txt" | head -n 12
grep -hoiE "\[wgmma[^,]*, [a-z_]*" "$OUT/chains.txt" | sort | uniq -c | head -n 12
tar czf "$OUT/logs.tgz" -C "$OUT" chains.txt planes.txt table.txt gpu.txt && rm "$OUT/chains.txt" "$OUT/planes.txt"
