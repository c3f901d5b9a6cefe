#!/usr/bin/env bash
# Session 42: the one-pass GroupNorm backward forms its row offsets in 32 bits where they fit (its Index template
# argument, the launcher's choice by the sizes and grad_out's strides); run 10's gn_bwd_int_rows variant took the
# bf16 headline's kernel 33.7 -> 31.8 us. A = HEAD's headline modules (bf16, float32), B = the working tree's,
# C = the new test's module (ab/, untracked; built here so that the test finds it in the build cache). In order of
# need, the device time left being short:
#   1. the output and every gradient the same bit for bit (bf16);
#   2. the new test (grad_out's rows 2^30 elements apart: the 64-bit form) passes, and fails with the launcher
#      forced to 32-bit offsets (the template restored after);
#   3. float32 the same bit for bit; A/B timing per kernel (bf16).
#   device (kind nvidia-h200): PYTHONPATH=. bash benchmarks/verify_session42d.sh
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
run build 100 python3 -c "import sys, pathlib; sys.path.insert(0, '.'); from fusegen.tools.tune import _build_all; \
f = _build_all(sorted(pathlib.Path('ab').glob('[ABC]_*.py')), 5); print('failed', f); sys.exit(1 if f else 0)"
run same_bfloat16 30 python3 benchmarks/same_results.py ab/A_bfloat16.py ab/B_bfloat16.py --init 8192,8192,512 \
  --batch 1024 --dtype bfloat16
run tests 40 python3 -m pytest -q tests/test_gpu_dtypes.py -k "past_32_bits" -p no:cacheprovider
T=templates/launchers.cuh.j2
cp "$T" "$OUT/launchers.bak"
sed -i 's/    if (int_offsets)$/    if (true)/' "$T"
grep -c "    if (true)$" "$T" > "$OUT/mutated.txt"
run broken 70 python3 -m pytest -q tests/test_gpu_dtypes.py -k "past_32_bits" -p no:cacheprovider
cp "$OUT/launchers.bak" "$T" && rm "$OUT/launchers.bak"
run same_float32 30 python3 benchmarks/same_results.py ab/A_float32.py ab/B_float32.py --init 8192,8192,512 \
  --batch 1024 --dtype float32
run ab_bfloat16 40 python3 benchmarks/ab_modules.py ab/A_bfloat16.py ab/B_bfloat16.py --init 8192,8192,512 \
  --batch 1024 --rounds 3 --kernels --kernel-rounds 3 --dtype bfloat16
cat "$OUT/table.txt"
tail -q -n 1 "$OUT"/same_*.txt
grep DIFFERENT "$OUT"/same_*.txt | head -n 4
grep -E "^(FAILED|ERROR)" "$OUT/tests.txt" | head -n 4
echo "mutated lines: $(cat "$OUT/mutated.txt"); the broken run should fail:"
grep -E "^(FAILED|E  +)" "$OUT/broken.txt" | head -n 3
grep -E "B / A|gn_backward|total" "$OUT/ab_bfloat16.txt" | cut -c1-150
