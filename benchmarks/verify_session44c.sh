#!/usr/bin/env bash
# Session 44, after run 3 (Nsight Compute's source counters on the bf16 forward: its epilogue is 17% of the
# kernel's warp samples, 5766 warp instructions a tile a warp, 26% of its stalls waiting for instructions, and ~18
# instructions a row went to storing the row's statistics from one lane of each group). The statistics' stores
# spread over the group's lanes (store_group_stats: lane k stores rows k, k + SPAN, ... of a block). Predicted:
# ~15% fewer epilogue instructions, the bf16 forward ~196 -> ~191 us. ab/ (untracked): A = HEAD's headline
# modules (bf16, fp16, float32 3xtf32, tf32), B = the working tree's.
#   1. the output and every gradient the same bit for bit (all four);
#   2. A/B per kernel (bf16, fp16, float32), medians of 3 alternating profiles;
#   3. issue 15's step (step_gaps, 3 rounds alternating).
#   device (kind nvidia-h200): PYTHONPATH=. bash benchmarks/verify_session44c.sh
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
run build 240 python3 -c "import sys, pathlib; sys.path.insert(0, '.'); from fusegen.tools.tune import _build_all; \
f = _build_all(sorted(pathlib.Path('ab').glob('[AB]_*.py')), 8); print('failed', f); sys.exit(1 if f else 0)"
for d in bfloat16 float16 float32 tf32; do
  dt=$d; [ $d = tf32 ] && dt=float32
  run same_$d 40 python3 benchmarks/same_results.py ab/A_$d.py ab/B_$d.py --init 8192,8192,512 --batch 1024 --dtype $dt
done
for d in bfloat16 float16 float32; do
  run ab_$d 60 python3 benchmarks/ab_modules.py ab/A_$d.py ab/B_$d.py --init 8192,8192,512 --batch 1024 --rounds 3 \
    --kernels --kernel-rounds 3 --dtype $d
done
run step 120 python3 benchmarks/step_gaps.py --dtypes bfloat16,float16 --rounds 3
cat "$OUT/table.txt"
tail -q -n 1 "$OUT"/same_*.txt
grep DIFFERENT "$OUT"/same_*.txt | head -n 6
for d in bfloat16 float16 float32; do echo "== $d"; grep -E "B / A|wgmma|one_pass|total" "$OUT/ab_$d.txt" | cut -c1-150; done
tail -n 6 "$OUT/step.txt"
