#!/usr/bin/env bash
# Session 35: where the 3xtf32 step's GEMMs and its GroupNorm backward lose time, now that L2 -> SM traffic is
# ruled out for dW (clustered, its L2 went 93% -> 66% busy at the same 655 us: runs 1, 6). Nsight Compute's
# warp states (what the consumer warps wait on), scheduler issue rates and memory figures for one 3xtf32 step's
# forward GEMM, both persistent backward GEMMs, the GroupNorm backward and the column-plane kernels. Then
# issue 15's bf16 / fp16 step (verify_h200_targets.sh STEP=2), not re-timed since the backward's bulk stores.
#   device: PYTHONPATH=. bash benchmarks/verify_session35c.sh
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
run ncu 200 ncu --clock-control none -k regex:"wgmma_forward|persistent|gn_backward_one_pass|col_exps|scale_cols" \
  --launch-skip 6 --launch-count 6 --section SpeedOfLight --section WarpStateStats --section SchedulerStats \
  --section Occupancy --section LaunchStats --section MemoryWorkloadAnalysis \
  --metrics "regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio" \
  python3 benchmarks/profile_step.py --dtype float32 --precision 3xtf32 --steps 1
run gaps 230 python3 benchmarks/step_gaps.py --dtypes bfloat16,float16
cat "$OUT/table.txt"
grep -E "^  [a-z_].*\(|Duration|Compute \(SM\) Throughput|Memory Throughput|DRAM Throughput|L2 Cache Throughput|Issued Warp|No Eligible|Warp Cycles Per Issued|Active Warps Per|Eligible Warps" \
  "$OUT/ncu.txt" | cut -c1-120 | head -n 80
# the larger stall reasons (warps a scheduler stalled on each, per issued instruction)
grep -E "^  [a-z_].*\(|stalled_" "$OUT/ncu.txt" | awk '/\(/ {print substr($0, 1, 60); next} $NF + 0 >= 0.3 {print "   ", $1, $NF}' | head -n 60
tail -n 8 "$OUT/gaps.txt"
