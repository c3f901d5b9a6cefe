#!/usr/bin/env bash
# Session 44, after run 4 (the statistics' stores spread over each group's lanes: the same bit for bit in all four
# modes; forward bf16 195.4 -> 191.9 us, fp16 201.4 -> 197.1, but float32 (3xtf32) 558.4 -> 568.4 in one sample
# whose unchanged dx and dW rose 2.5-4.7 us too). Then:
#   1. the float32 A/B again, 5 alternating profiles, and tf32's;
#   2. the module tests through the wgmma fragment GroupNorm: bf16 and fp16 on both wgmma tiles (shapes from 1 x 8 to
#      512 x 4096 -> 4096, groups of 1 to 512 channels), and 3xtf32's known hard shapes on sm_90;
#   3. issue 15's step, another sample.
#   device (kind nvidia-h200): PYTHONPATH=. bash benchmarks/verify_session44d.sh
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
run build 200 python3 -c "import sys, pathlib; sys.path.insert(0, '.'); from fusegen.tools.tune import _build_all; \
f = _build_all(sorted(pathlib.Path('ab').glob('[AB]_*32.py')), 8); print('failed', f); sys.exit(1 if f else 0)"
for d in float32 tf32; do
  run ab_$d 80 python3 benchmarks/ab_modules.py ab/A_$d.py ab/B_$d.py --init 8192,8192,512 --batch 1024 --rounds 3 \
    --kernels --kernel-rounds 5 --dtype float32
done
run half 200 python3 -m pytest -q tests/test_gpu_dtypes.py -k "half_module and wgmma" -p no:cacheprovider
run hard 190 python3 -m pytest -q tests/test_gpu_module.py -k "known_hard and 3xtf32-sm90 and not planes" -x -p no:cacheprovider
run step 60 python3 benchmarks/step_gaps.py --dtypes float16,bfloat16 --rounds 3
cat "$OUT/table.txt"
for d in float32 tf32; do echo "== $d"; grep -E "B / A|wgmma|one_pass|total" "$OUT/ab_$d.txt" | cut -c1-150; done
grep -hE "^(FAILED|ERROR)" "$OUT/half.txt" "$OUT/hard.txt" | head -n 6
tail -n 6 "$OUT/step.txt"
