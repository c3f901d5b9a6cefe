#!/usr/bin/env bash
# Session 42: what bounds the one-pass GroupNorm backward (~34 us at the bf16 headline, the same in tf32 with twice
# the bytes; reading z alone takes 19.4 us of it, epilogue_variants' gn_bwd_z_only, run 7). Nsight Compute on that
# kernel: its instructions executed (8.4M elements: every 10 SASS instructions an element cost ~2.6 us at the
# SMs' full issue rate, 4 warp instructions a clock an SM), issue-slot use, the scheduler and warp-state statistics
# and its DRAM bytes. Logs under $OUT, a short table last.
#   device (kind nvidia-h200): PYTHONPATH=. bash benchmarks/verify_session42b.sh
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
run ncu 240 ncu --clock-control none -k regex:"one_pass" --launch-skip 1 --launch-count 1 \
  --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section Occupancy \
  --section LaunchStats --section InstructionStats --section MemoryWorkloadAnalysis \
  --metrics "smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,dram__bytes_read.sum,\
dram__bytes_write.sum,sm__warps_active.avg.pct_of_peak_sustained_active,\
regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio" \
  python3 benchmarks/profile_step.py --dtype bfloat16 --steps 2
cat "$OUT/table.txt"
grep -E "^  [a-z_].*\(|Duration|Registers Per|Achieved Occ|Theoretical Occ|DRAM Through|Issue Slots|Issued Warp|No Eligible|Eligible Warps|Active Warps Per|Warp Cycles Per Issued|Executed Ipc|inst_executed|issue_active|dram__bytes|Memory Throughput" \
  "$OUT/ncu.txt" | cut -c1-110 | head -n 40
grep -E "stalled_" "$OUT/ncu.txt" | awk '$NF + 0 >= 0.3 {print "   ", substr($1, 40), $NF}' | head -n 20
