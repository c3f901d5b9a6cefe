#!/usr/bin/env bash
# Session 46, call 2: the persistent 16-bit forward's GroupNorm moved off the consumers into the producer
# warpgroup's three spare warps (epilogue_gn_warps.cuh; the consumers stage z whole and start the next tile).
# Predicted (perf notes v0.46): the bf16 forward ~191 -> ~172-176 us (its epilogue's ~25 us hidden under the next
# tile's products, less the staging and a ring of 3 stages, not 4), fp16 alike; the output within an ulp of the
# old module's (the group sums in another order). ab/: A rendered from b60e4b4 (a worktree), B from the working
# tree, both --gpu "NVIDIA H200" --arch 9.0.
#   device (kind nvidia-h200): PYTHONPATH=. bash benchmarks/verify_session46b.sh
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
run build 150 python3 -c "import sys, pathlib; sys.path.insert(0, '.'); from fusegen.tools.tune import _build_all; \
f = _build_all(sorted(pathlib.Path('ab').glob('[AB]_*.py')), 4); print('failed', f); sys.exit(1 if f else 0)"
for d in bfloat16 float16; do
  run same_$d 60 python3 benchmarks/same_results.py ab/A_$d.py ab/B_$d.py --init 8192,8192,512 --batch 1024 --dtype $d
done
for d in bfloat16 float16; do
  run ab_$d 60 python3 benchmarks/ab_modules.py ab/A_$d.py ab/B_$d.py --init 8192,8192,512 --batch 1024 --rounds 3 \
    --kernels --kernel-rounds 3 --dtype $d
done
run step 100 python3 benchmarks/step_gaps.py --dtypes bfloat16,float16 --rounds 3
cat "$OUT/table.txt"
for d in bfloat16 float16; do echo "== $d"; grep -E "^(normal|uniform) +out|results differ|same" "$OUT/same_$d.txt" | head -8
  grep -E "B / A|wgmma|one_pass|combine|total" "$OUT/ab_$d.txt" | sed 's/(CUtensorMap_st.\{60\}//;s/(fg::BackwardArgs[^ ]*//' | cut -c1-120; done
tail -n 6 "$OUT/step.txt"
