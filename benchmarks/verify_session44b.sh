#!/usr/bin/env bash
# Session 44, after run 1 (begin_tile: no gain, reverted): where the 16-bit forward's time goes, instruction by
# instruction. The forward at the bf16 headline runs ~196 us against ~168 for its mainloop alone (v0.42's
# no_fwd_epilogue): ~14 us a tile of epilogue on 2 tiles an SM, far more than its instruction count or its
# shuffle chain explains (v0.43, Next). Nsight Compute's source counters (warp-state samples per SASS instruction)
# on the persistent forward and on the one-pass GroupNorm backward (its loop's remaining stalls), then:
#   2. the new test of persistent backward tiles (several a block, 1-3 and many k tiles, partial tiles), both
#      dtypes; and bf16 with every block's later tiles given the wrong columns (it must fail).
#   device (kind nvidia-h200): PYTHONPATH=. bash benchmarks/verify_session44b.sh
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
run ncu 200 ncu --clock-control none -k regex:"forward_persistent|one_pass" --launch-skip 2 --launch-count 2 \
  --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section SourceCounters \
  --section InstructionStats --import-source no -o "$OUT/fwd" python3 benchmarks/profile_step.py --dtype bfloat16 --steps 2
ncu --import "$OUT/fwd.ncu-rep" --page details > "$OUT/details.txt" 2>&1
ncu --import "$OUT/fwd.ncu-rep" --page source --csv --print-source sass > "$OUT/source.csv" 2>&1 || \
  ncu --import "$OUT/fwd.ncu-rep" --page source --csv > "$OUT/source.csv" 2>&1
gzip -f "$OUT/source.csv" "$OUT/fwd.ncu-rep"
run test 150 python3 -m pytest -q tests/test_gpu_dtypes.py -k "several_tiles" -p no:cacheprovider
T=templates/launchers.cuh.j2
cp "$T" "$OUT/template.bak"
sed -i 's/      epilogue(acc, m0, n0);/      epilogue(acc, m0, t == (int)blockIdx.x ? n0 : n0 ^ BN);/' "$T"
grep -c "n0 ^ BN" "$T" > "$OUT/mutated.txt"
run broken 150 python3 -m pytest -q tests/test_gpu_dtypes.py -k "several_tiles and bfloat16" -p no:cacheprovider
cp "$OUT/template.bak" "$T" && rm "$OUT/template.bak"
cat "$OUT/table.txt"
grep -E "^  [a-z_].*\(|Duration|Registers Per|Issue Slots|Issued Warp|No Eligible|Eligible Warps|Warp Cycles Per Issued|Executed Ipc|Compute \(SM\)|Memory Through|Stall" "$OUT/details.txt" | cut -c1-110 | head -n 40
grep -E "^(FAILED|ERROR)" "$OUT/test.txt" | head -n 4
echo "mutated lines: $(cat "$OUT/mutated.txt"); the broken run should fail:"
grep -E "^(FAILED|ERROR)|passed|failed" "$OUT/broken.txt" | head -n 4
