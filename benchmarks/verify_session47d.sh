#!/usr/bin/env bash
# Session 47: the 16-bit engine's persistent GEMMs in clusters of two blocks sharing P by multicast
# (Wgmma::CLUSTER, planner HALF_CLUSTER). Predicted from verify_session47c (P loaded once a ring pass: sustained
# forward 0.227 -> 0.207 ms, step 0.842 -> 0.780, bf16): a third of the operand bytes from L2 gone, about
# r_loaded_once's share (0.209 / 0.797): forward ~-15 us, step ~-40 us sustained; the results the same bit for
# bit (only where the operands come from changed). ab/: A rendered from a worktree of 7a0c7e6's kernels (= the
# session's start), B from the working tree, --gpu "NVIDIA H200" --arch 9.0.
#   device (kind nvidia-h200): PYTHONPATH=. bash benchmarks/verify_session47d.sh
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
run build 150 python3 -c "import sys, pathlib; sys.path.insert(0, '.'); from fusegen.tools.tune import _build_all; \
f = _build_all(sorted(pathlib.Path('ab').glob('[AB]_*.py')), 4); print('failed', f); sys.exit(1 if f else 0)"
for d in bfloat16 float16; do
  run same_$d 60 python3 benchmarks/same_results.py ab/A_$d.py ab/B_$d.py --init 8192,8192,512 --batch 1024 --dtype $d
done
for d in bfloat16 float16; do
  run ab_$d 120 python3 benchmarks/ab_modules.py ab/A_$d.py ab/B_$d.py --init 8192,8192,512 --batch 1024 --rounds 3 \
    --kernels --kernel-rounds 3 --dtype $d --sustained 3 --sustained-rounds 3
done
cat "$OUT/table.txt"
for d in bfloat16 float16; do echo "== $d"; grep -E "out|results differ|same" "$OUT/same_$d.txt" | head -6
  grep -E "B / A|persistent|total|^A |^B " "$OUT/ab_$d.txt" | sed 's/(CUtensorMap_st.\{60\}//' | cut -c1-150; done
