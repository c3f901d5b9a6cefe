#!/usr/bin/env bash
# (Ran on 7cd1807, whose pair load was measured slower and reverted in the next commit: session 42, run 9.)
# Session 42: the one-pass GroupNorm backward is issue-bound (Nsight Compute, run 8: issue slots 73% busy, ~91
# SASS instructions an element; reading z alone took 19.4 of its ~34 us). grad_out's pair now comes in one load
# where its rows are contiguous (before: two 2-byte loads at run-time strides, 64-bit index products each;
# epilogue_variants' gn_bwd_no_grad_load saved 6.4 us). Predicted: ~2-4 us of the kernel. A = HEAD's headline
# modules (bf16, fp16, float32), B = the working tree's (ab/, untracked).
#   1. the output and every gradient the same bit for bit (only addressing changed), bf16 and float32;
#   2. A/B timing per kernel, bf16 and fp16;
#   3. the new test: grad_out in any layout (dense, transposed, padded rows, odd stride, odd offset, expanded) gives
#      the same gradients bit for bit; then once more with the pair load broken on purpose (rows N apart, not
#      sg0: the padded rows must fail), the template restored after.
#   device (kind nvidia-h200): PYTHONPATH=. bash benchmarks/verify_session42c.sh
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
run build 150 python3 -c "import sys, pathlib; sys.path.insert(0, '.'); from fusegen.tools.tune import _build_all; \
f = _build_all(sorted(pathlib.Path('ab').glob('[AB]_*.py')), 6); print('failed', f); sys.exit(1 if f else 0)"
for dt in bfloat16 float32; do
  run "same_$dt" 60 python3 benchmarks/same_results.py "ab/A_$dt.py" "ab/B_$dt.py" --init 8192,8192,512 \
    --batch 1024 --dtype "$dt"
done
for dt in bfloat16 float16; do
  run "ab_$dt" 50 python3 benchmarks/ab_modules.py "ab/A_$dt.py" "ab/B_$dt.py" --init 8192,8192,512 --batch 1024 \
    --rounds 5 --kernels --kernel-rounds 5 --dtype "$dt"
done
run tests 150 python3 -m pytest -q tests/test_gpu_dtypes.py -k "grad_out_in_any" -p no:cacheprovider
T=templates/epilogue/gn_backward.cuh.j2
cp "$T" "$OUT/template.bak"
sed -i 's/load_pair(a.grad_out + row \* a.sg0 + c/load_pair(a.grad_out + row * N + c/' "$T"
grep -c "load_pair(a.grad_out + row \* N + c" "$T" > "$OUT/mutated.txt"
run broken 120 python3 -m pytest -q tests/test_gpu_dtypes.py -k "grad_out_in_any and bfloat16" -p no:cacheprovider
cp "$OUT/template.bak" "$T"
cat "$OUT/table.txt"
tail -q -n 1 "$OUT"/same_*.txt
grep DIFFERENT "$OUT"/same_*.txt | head -n 4
for dt in bfloat16 float16; do grep -E "B / A|gn_backward|total" "$OUT/ab_$dt.txt" | cut -c1-150; done
grep -E "^(FAILED|ERROR)" "$OUT/tests.txt" | head -n 4
echo "mutated lines: $(cat "$OUT/mutated.txt"); the broken run should fail on the padded rows:"
grep -E "^(FAILED|E  +AssertionError)" "$OUT/broken.txt" | head -n 3
