#!/usr/bin/env bash
# Session 39, fifth call: the one-pass GroupNorm backward with fp32 statistics past run 3's 4 blocks an SM, two
# rows in flight (the planner's now): one row in flight at 4, 5 and 6 blocks (64 / 48 / 40 registers, no spills).
#   device (kind nvidia-h200): PYTHONPATH=. bash benchmarks/verify_session39e.sh
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
V=base,gn_bwd_b4_r1,gn_bwd_b5_r1,gn_bwd_b6_r1
run gnb_bf16 160 python3 benchmarks/epilogue_variants.py --dtype bfloat16 --variants $V --reps 10
run gnb_tf32 160 python3 benchmarks/epilogue_variants.py --dtype float32 --precision tf32 --variants $V --reps 10
cat "$OUT/table.txt"
for f in gnb_bf16 gnb_tf32; do grep -E "kernel  |one_pass" "$OUT/$f.txt" | cut -c1-140; done
