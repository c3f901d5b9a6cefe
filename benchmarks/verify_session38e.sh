#!/usr/bin/env bash
# Session 38, run 5: run 4's staged forward stores ran slower (bf16 forward 215 -> 251 us, tf32 213 -> 234): where
# the time goes, by variants of the bf16 headline: the stores from the fragments again (fwd_direct), without the
# wait for a pass's buffers, without the bulk stores, without the epilogue.
#   device: PYTHONPATH=. bash benchmarks/verify_session38e.sh
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
run var_bf16 200 python3 benchmarks/epilogue_variants.py --dtype bfloat16 \
  --variants base,fwd_direct,no_fwd_stage_wait,no_fwd_bulk_store,no_fwd_epilogue --reps 10
cat "$OUT/table.txt"
grep -A 4 "us a step per kernel" "$OUT/var_bf16.txt" | cut -c1-140
