#!/usr/bin/env bash
# Session 35 run 3: Nsight Compute on the persistent backward GEMMs of one 3xtf32 step (time, grid, cluster size
# and how many clusters fit, L2 and tensor-pipe use), for the clustered form of 71b3668 (since reverted).
#   device: PYTHONPATH=. bash benchmarks/ncu_persistent_s35.sh
set -uo pipefail
source benchmarks/device_lib.sh
METRICS=lts__throughput.avg.pct_of_peak_sustained_elapsed,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,gpu__time_duration.sum,launch__cluster_dim_x,launch__grid_size,launch__cluster_max_active,launch__occupancy_cluster_pct
run ncu 200 ncu --clock-control none -k regex:"persistent" --launch-skip 2 --launch-count 2 --metrics "$METRICS" \
    python3 benchmarks/profile_step.py --dtype float32 --precision 3xtf32 --steps 1
cat "$OUT/table.txt"; grep -E "^  [a-z_].*\(|lts__|sm__pipe|gpu__time|launch__" "$OUT/ncu.txt" | head -n 40; tail -5 "$OUT/ncu.txt"
