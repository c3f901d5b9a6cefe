#!/usr/bin/env bash
# Session 38, run 2. ab/old_*.py: the headline (3xtf32, tf32, bf16) rendered before persistent_tiles (the persistent
# GEMMs' tile loop in one function, for the backward GEMMs and the forward); ab/new_*.py: after it.
#   1. Build; old and new the same bit for bit; A/B with kernels side by side (no kernel may slow down).
#   2. The persistent forward on the epilogues the planner now gives it (none, rows, cols) on the new code.
#   3. Where the bf16 step's time goes: the forward's epilogue and dW's stores left out (epilogue_variants.py), and
#      Nsight Compute on the bf16 step's GEMMs and GroupNorm backward (warp states, occupancy, memory).
#   4. The committed module's GPU test.
#   device: PYTHONPATH=. bash benchmarks/verify_session38b.sh
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
run build 200 python3 -c "import sys, pathlib; sys.path.insert(0, '.'); from fusegen.tools.tune import _build_all; \
f = _build_all([pathlib.Path('ab/' + n + '.py') for n in ('new_3xtf32', 'old_3xtf32', 'new_tf32', 'old_tf32', \
'new_bfloat16', 'old_bfloat16')], 6); print('failed', f); sys.exit(1 if f else 0)"
for p in 3xtf32 tf32; do
  run "same_$p" 60 python3 benchmarks/same_results.py "ab/old_$p.py" "ab/new_$p.py" --init 8192,8192,512 --batch 1024
done
run same_bf16 60 python3 benchmarks/same_results.py ab/old_bfloat16.py ab/new_bfloat16.py --init 8192,8192,512 \
  --batch 1024 --dtype bfloat16
run ab_3xtf32 90 python3 benchmarks/ab_modules.py ab/old_3xtf32.py ab/new_3xtf32.py --init 8192,8192,512 \
  --batch 1024 --rounds 5 --kernels --kernel-rounds 3
run ab_bf16 90 python3 benchmarks/ab_modules.py ab/old_bfloat16.py ab/new_bfloat16.py --init 8192,8192,512 \
  --batch 1024 --rounds 5 --kernels --kernel-rounds 3 --dtype bfloat16
run persist 150 python3 benchmarks/persistent_forward_check.py
run variants 150 python3 benchmarks/epilogue_variants.py --dtype bfloat16 \
  --variants base,no_fwd_epilogue,fwd_tile_a_block,no_tile_staging --reps 10
run ncu 150 ncu --clock-control none -k regex:"wgmma|one_pass" --launch-skip 4 --launch-count 4 \
  --section SpeedOfLight --section WarpStateStats --section Occupancy --section LaunchStats \
  --section MemoryWorkloadAnalysis --metrics "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,\
dram__bytes_read.sum,dram__bytes_write.sum,regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio" \
  python3 benchmarks/profile_step.py --dtype bfloat16 --steps 1
run module 150 env FUSEGEN_PRECISIONS=3xtf32 python3 -m pytest -q tests/test_gpu_module.py -k headline_committed \
  -p no:cacheprovider
tar czf "$OUT/logs.tgz" -C "$OUT" --exclude logs.tgz --exclude table.txt .
cat "$OUT/table.txt"
tail -q -n 1 "$OUT"/same_*.txt
grep DIFFERENT "$OUT"/same_*.txt | head -n 4
for f in ab_3xtf32 ab_bf16; do grep -E "B / A|persistent|wgmma_forward|total" "$OUT/$f.txt" | cut -c1-130; done
grep -E "cases failed|PROBLEMS" "$OUT/persist.txt" | cut -c1-160
grep -A 9 "us a step per kernel" "$OUT/variants.txt" | cut -c1-110
grep -E "^  [a-z_].*\(|Duration|Registers Per|Achieved Occ|Theoretical Occ|Block Limit|DRAM Through|Warp Cycles Per Issued|hmma|dram__bytes" \
  "$OUT/ncu.txt" | cut -c1-110 | head -n 60
grep -E "^  [a-z_].*\(|stalled_" "$OUT/ncu.txt" | awk '/\(/ {print substr($0, 1, 50); next} $NF + 0 >= 0.5 {print "   ", substr($1, 40), $NF}' | head -n 40
grep -E "^(FAILED|ERROR)" "$OUT/module.txt" | head -n 4
