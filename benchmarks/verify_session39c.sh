#!/usr/bin/env bash
# Session 39, third call: the one-pass GroupNorm backward's occupancy with float statistics (bf16, tf32). Call 1:
# 3 blocks an SM took bf16's 43.5 -> 36.7 us, with 8 bytes spilled (4 rows in flight a thread). Here 3 blocks with
# 4, 3 and 2 rows in flight, and 4 blocks with 2 (64 registers, no spills), side by side.
#   device (kind nvidia-h200): PYTHONPATH=. bash benchmarks/verify_session39c.sh
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
V=base,gn_bwd_blocks_3,gn_bwd_b3_r3,gn_bwd_b3_r2,gn_bwd_b4_r2
run gnb_bf16 200 python3 benchmarks/epilogue_variants.py --dtype bfloat16 --variants $V --reps 10
run gnb_tf32 200 python3 benchmarks/epilogue_variants.py --dtype float32 --precision tf32 --variants $V --reps 10
cat "$OUT/table.txt"
for f in gnb_bf16 gnb_tf32; do grep -E "kernel  |one_pass" "$OUT/$f.txt" | cut -c1-140; done
