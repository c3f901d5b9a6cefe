#!/usr/bin/env bash
# Session 43: the one-pass GroupNorm backward's instructions (issue-bound: ~91 an element, perf notes v0.42). B, the
# working tree: a row's offsets as one 32-bit sum a tensor (z's serves dz, mean's rstd), grad_out's pair in one
# load where its columns are contiguous (a template argument, chosen by the launcher), xhat computed once in fp32,
# dz converted once, no remainder for fp32 statistics, and the chains' gradients starting at -0 (no add of +0).
# A = HEAD. ab/ (untracked) holds both modules per dtype and both bf16 cubins (compiled here on the CPU).
#   1. the loops' SASS, A and B (instructions a loop of 2 rows x 2 channels);
#   2. the output and every gradient the same bit for bit (bf16, fp16, float32);
#   3. A/B per kernel (bf16, fp16).
#   device (kind nvidia-h200): PYTHONPATH=. bash benchmarks/verify_session43.sh
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
run sass 60 python3 benchmarks/sass_report.py --kernels one_pass --loops ab/A_bf16.cubin ab/B_bf16.cubin
run build 300 python3 -c "import sys, pathlib; sys.path.insert(0, '.'); from fusegen.tools.tune import _build_all; \
f = _build_all(sorted(pathlib.Path('ab').glob('[AB]_*.py')), 6); print('failed', f); sys.exit(1 if f else 0)"
for d in bfloat16 float16 float32; do
  run same_$d 40 python3 benchmarks/same_results.py ab/A_$d.py ab/B_$d.py --init 8192,8192,512 --batch 1024 --dtype $d
done
for d in bfloat16 float16; do
  run ab_$d 60 python3 benchmarks/ab_modules.py ab/A_$d.py ab/B_$d.py --init 8192,8192,512 --batch 1024 --rounds 3 \
    --kernels --kernel-rounds 3 --dtype $d
done
cat "$OUT/table.txt"
grep -E "^\| sm_90a" "$OUT/sass.txt" | cut -c1-400
tail -q -n 1 "$OUT"/same_*.txt
grep DIFFERENT "$OUT"/same_*.txt | head -n 6
for d in bfloat16 float16; do grep -E "B / A|gn_backward|total" "$OUT/ab_$d.txt" | cut -c1-150; done
