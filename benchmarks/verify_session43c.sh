#!/usr/bin/env bash
# Session 43: the 16-bit wgmma engine reads R (wgmma's A) from shared memory by descriptor, K-major or M-major
# (imm-trans-a), instead of through registers by ldmatrix. Prediction: dx's mainloop (W column-contiguous, read by
# ldmatrix.trans) ran ~18 us over the forward's at the bf16 headline (186 against ~168, perf notes v0.42), and
# cuBLAS's dgrad runs 176 on this card (s42 run 6); dx and dW (both read R column-contiguous) gain most of that
# gap, the forward little. A = HEAD's headline modules (bf16, fp16, float32 3xtf32 on two fp16 planes, tf32 on one),
# B = the working tree's, all planned for the H200 (ab/, untracked).
#   1. the engine alone against fp64 (every layout of R and P, both 16-bit types, 128- and 256-row tiles), and its
#      R-column-fast cases failing with imm-trans-a forced to 0;
#   2. the output and every gradient the same bit for bit (4 modules);
#   3. A/B per kernel (bf16, fp16, float32, tf32).
#   device (kind nvidia-h200): PYTHONPATH=. bash benchmarks/verify_session43c.sh
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
run build 300 python3 -c "import sys, pathlib; sys.path.insert(0, '.'); from fusegen.tools.tune import _build_all; \
f = _build_all(sorted(pathlib.Path('ab').glob('[AB]_*.py')), 8); print('failed', f); sys.exit(1 if f else 0)"
for d in bfloat16 float16 float32 tf32; do
  dt=$d; [ $d = tf32 ] && dt=float32
  run same_$d 40 python3 benchmarks/same_results.py ab/A_$d.py ab/B_$d.py --init 8192,8192,512 --batch 1024 --dtype $dt
done
for d in bfloat16 float16 float32 tf32; do
  dt=$d; [ $d = tf32 ] && dt=float32
  run ab_$d 60 python3 benchmarks/ab_modules.py ab/A_$d.py ab/B_$d.py --init 8192,8192,512 --batch 1024 --rounds 3 \
    --kernels --kernel-rounds 3 --dtype $dt
done
run engine 240 python3 -m pytest -q tests/test_gpu_engines.py -k "wgmma_half_engine" -p no:cacheprovider
T=templates/engines/mainloop_wgmma_half.cuh.j2
cp "$T" "$OUT/template.bak"
sed -i 's/"n"(R_K_FAST ? 0 : 1), "n"(P_K_FAST ? 0 : 1)/"n"(0), "n"(P_K_FAST ? 0 : 1)/' "$T"
grep -c '"n"(0), "n"(P_K_FAST ? 0 : 1)' "$T" > "$OUT/mutated.txt"
run broken 240 python3 -m pytest -q tests/test_gpu_engines.py -k "wgmma_half_engine and bfloat16 and 256 and normal" \
  -p no:cacheprovider
cp "$OUT/template.bak" "$T" && rm "$OUT/template.bak"
cat "$OUT/table.txt"
tail -q -n 1 "$OUT"/same_*.txt
grep DIFFERENT "$OUT"/same_*.txt | head -n 6
for d in bfloat16 float16 float32 tf32; do echo "== $d"; grep -E "B / A|wgmma|total" "$OUT/ab_$d.txt" | cut -c1-150; done
grep -E "^(FAILED|ERROR)" "$OUT/engine.txt" | head -n 4
echo "mutated lines: $(cat "$OUT/mutated.txt"); the broken run should fail:"
grep -E "^(FAILED|ERROR)|passed|failed" "$OUT/broken.txt" | head -n 6
