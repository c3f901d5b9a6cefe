#!/usr/bin/env bash
# Session 43, after run 1 (the one-pass GroupNorm backward's leaner loop, 504adf4): its tests and a step sample.
#   1. the grad_out layout test (bf16, float32: dense, transposed, misaligned, odd row stride, expanded the same bit
#      for bit) and the past-32-bit test pass; the layout test fails with grad_out's pair loaded swapped;
#   2. the layer A/B timed B first (run 1's layer-level reading had B 2.8% slower with its kernels 7 us faster);
#   3. issue 15's step (step_gaps, 3 rounds alternating, medians), both dtypes;
#   4. the one-pass kernel's whole SASS (B, bf16), for its loop.
#   device (kind nvidia-h200): PYTHONPATH=. bash benchmarks/verify_session43b.sh
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
cuobjdump -sass -fun '_ZN2fg27gn_backward_one_pass_kernelIiLb1EEEvNS_12BackwardArgsEPdi' ab/B_bf16.cubin \
  > "$OUT/one_pass_sass.txt" 2>&1
run tests 200 python3 -m pytest -q tests/test_gpu_dtypes.py -k "past_32_bits or any_grad_out_layout" -p no:cacheprovider
T=templates/epilogue/gn_backward.cuh.j2
cp "$T" "$OUT/template.bak"
sed -i 's/load_pair(a.grad_out + go, b.grad\[i\]\[0\], b.grad\[i\]\[CH - 1\]);/load_pair(a.grad_out + go, b.grad[i][CH - 1], b.grad[i][0]);/' "$T"
grep -c "b.grad\[i\]\[CH - 1\], b.grad\[i\]\[0\]" "$T" > "$OUT/mutated.txt"
run broken 200 python3 -m pytest -q tests/test_gpu_dtypes.py -k "any_grad_out_layout" -p no:cacheprovider
cp "$OUT/template.bak" "$T" && rm "$OUT/template.bak"
run ab_swapped 60 python3 benchmarks/ab_modules.py ab/B_bfloat16.py ab/A_bfloat16.py --init 8192,8192,512 \
  --batch 1024 --rounds 5
run step 200 python3 benchmarks/step_gaps.py --dtypes bfloat16,float16 --rounds 3
cat "$OUT/table.txt"
grep -E "^(FAILED|ERROR)" "$OUT/tests.txt" | head -n 4
echo "mutated lines: $(cat "$OUT/mutated.txt"); the broken run should fail:"
grep -E "^(FAILED|E  +)" "$OUT/broken.txt" | head -n 4
grep -E "B / A|forward" "$OUT/ab_swapped.txt" | head -n 3
tail -n 25 "$OUT/step.txt"
