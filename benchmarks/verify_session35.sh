#!/usr/bin/env bash
# Session 35's first device call: on an H200, issue 17's targets (verify_h200_targets.sh STEP=1); on any other
# card, whether the wgmma GEMMs of the 3xtf32 and tf32 steps are bound by L2 -> SM traffic (the case for 2-block
# clusters that multicast the shared operand): Nsight Compute's L2 and tensor-pipe figures for the three GEMMs.
#   device (kind nvidia-h200): PYTHONPATH=. bash benchmarks/verify_session35.sh
set -uo pipefail
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  STEP=1 exec bash "$(dirname "$0")/verify_h200_targets.sh"
fi
source "$(dirname "$0")/device_lib.sh"
METRICS=lts__t_sectors_srcunit_tex_op_read.sum,lts__t_bytes.sum.per_second,lts__throughput.avg.pct_of_peak_sustained_elapsed,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed,gpu__time_duration.sum
for p in 3xtf32 tf32; do
  run "ncu_$p" 240 ncu --clock-control none -k regex:"wgmma" --launch-skip 3 --launch-count 3 --metrics "$METRICS" \
    python3 benchmarks/profile_step.py --dtype float32 --precision "$p" --steps 1
done
cat "$OUT/table.txt"
for p in 3xtf32 tf32; do
  grep -E "^  [a-z_].*\(|lts__|sm__pipe|dram__|gpu__time" "$OUT/ncu_$p.txt" | head -n 40
done
