#!/usr/bin/env bash
# Session 46, call 5: run 4 had every wgmma GEMM 12-18 us slower on a ring of 3 stages than of 4, so waiting on its
# loads' latency. Does a bulk tensor prefetch into L2 of the k tile 2, 4 or 8 past each one loaded (the producer's
# thread; W comes from DRAM in the forward and dx) take some of that wait away? (epilogue_variants tma_prefetch_N)
#   device (kind nvidia-h200): PYTHONPATH=. bash benchmarks/verify_session46e.sh
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
run variants 300 python3 benchmarks/epilogue_variants.py --dtype bfloat16 \
  --variants base,tma_prefetch_2,tma_prefetch_4,tma_prefetch_8
run variants16 300 python3 benchmarks/epilogue_variants.py --dtype float16 --variants base,tma_prefetch_4
cat "$OUT/table.txt"
grep -A 10 "us a step per kernel" "$OUT/variants.txt" | cut -c1-36,60-140
grep -A 10 "us a step per kernel" "$OUT/variants16.txt" | cut -c1-36,60-140
