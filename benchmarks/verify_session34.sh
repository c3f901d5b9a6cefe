#!/usr/bin/env bash
# Session 34's first device call: on an H200, issue 17's targets (verify_h200_targets.sh STEP=1); on any other
# card, where the tf32 step's operand kernels and dW's stores spend their time, to choose the next change:
# dW's kernels with and without their global stores (epilogue_variants), and Nsight Compute on the plane kernels
# and the backward GEMMs of one tf32 step.
#   device (kind nvidia-h200): PYTHONPATH=. bash benchmarks/verify_session34.sh
set -uo pipefail
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  STEP=1 exec bash "$(dirname "$0")/verify_h200_targets.sh"
fi
source "$(dirname "$0")/device_lib.sh"
run variants 280 python3 benchmarks/epilogue_variants.py --dtype float32 --precision tf32 --variants base,no_store --reps 10
run ncu 240 ncu --clock-control none -k regex:"scale_rows|col_exps|scale_cols|wgmma_store" --launch-skip 8 \
  --launch-count 8 --section SpeedOfLight --section Occupancy --section WarpStateStats --section LaunchStats \
  python3 benchmarks/profile_step.py --dtype float32 --precision tf32 --steps 1
cat "$OUT/table.txt"
tail -n 24 "$OUT/variants.txt"
grep -E "^  [a-z].*\(|Duration|DRAM Throughput|Memory Throughput|Achieved Occupancy|Registers Per|Block Limit Reg|Warp Cycles Per Issued|Compute \(SM\)" "$OUT/ncu.txt" | head -n 90
