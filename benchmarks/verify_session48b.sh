#!/usr/bin/env bash
# Every kernel of a 16-bit step for fusegen, eager and torch.compile max-autotune, and cuBLAS's three GEMMs alone:
# whether the step's GPU time has anything left that is ours to cut (benchmarks/gemm_peers.py).
#   device (kind nvidia-h200): PYTHONPATH=. bash benchmarks/verify_session48b.sh
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
run peers 500 python3 benchmarks/gemm_peers.py --compile max-autotune-no-cudagraphs
cat "$OUT/table.txt"
sed -n '/^NVIDIA/,$p' "$OUT/peers.txt"
true
