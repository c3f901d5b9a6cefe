#!/usr/bin/env bash
# Session 38, run 6: the staged forward stores again, the kernel holding only the staged form (run 4's held both
# forms behind a run-time branch and ran 37 us slower, though neither its buffer waits nor its bulk stores cost
# anything: run 5; its PTX was 18% longer than either form's). ab/new_*.py: the headline (3xtf32, tf32, bf16)
# before it (persistent_tiles, run 2); ab/new3_*.py: with it. Predicted as in run 4: bf16 forward ~215 -> ~190 us,
# tf32 ~213 -> ~200, 3xtf32 unchanged.
#   1. Build; the same bit for bit (output, the no_grad output, every gradient; free memory poisoned with NaN).
#   2. A/B with kernels side by side.
#   3. Partial tiles against fp64: batch 1000 (a partial 256-row tile), hidden 4160+ (partial column tiles), group
#      widths 16 and 8, unsplit (persistent_forward_check.py on GroupNorm model files).
#   4. The committed module's GPU test.
#   device: PYTHONPATH=. bash benchmarks/verify_session38f.sh
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
run build 200 python3 -c "import sys, pathlib; sys.path.insert(0, '.'); from fusegen.tools.tune import _build_all; \
f = _build_all([pathlib.Path('ab/' + n + '.py') for n in ('new3_3xtf32', 'new_3xtf32', 'new3_tf32', 'new_tf32', \
'new3_bfloat16', 'new_bfloat16')], 6); print('failed', f); sys.exit(1 if f else 0)"
for p in 3xtf32 tf32; do
  run "same_$p" 90 python3 benchmarks/same_results.py "ab/new_$p.py" "ab/new3_$p.py" --init 8192,8192,512 --batch 1024
done
run same_bf16 90 python3 benchmarks/same_results.py ab/new_bfloat16.py ab/new3_bfloat16.py --init 8192,8192,512 \
  --batch 1024 --dtype bfloat16
run ab_bf16 90 python3 benchmarks/ab_modules.py ab/new_bfloat16.py ab/new3_bfloat16.py --init 8192,8192,512 \
  --batch 1024 --rounds 9 --kernels --kernel-rounds 5 --dtype bfloat16
run ab_tf32 90 python3 benchmarks/ab_modules.py ab/new_tf32.py ab/new3_tf32.py --init 8192,8192,512 --batch 1024 \
  --rounds 9 --kernels --kernel-rounds 5
run ab_3xtf32 90 python3 benchmarks/ab_modules.py ab/new_3xtf32.py ab/new3_3xtf32.py --init 8192,8192,512 \
  --batch 1024 --rounds 5 --kernels --kernel-rounds 3
run partial 150 python3 benchmarks/persistent_forward_check.py --batch 1000 --hidden 4160 \
  --files headline_small.py,stage_bias_param_gn.py,stage_scalar_gn.py
run module 150 env FUSEGEN_PRECISIONS=3xtf32 python3 -m pytest -q tests/test_gpu_module.py -k headline_committed \
  -p no:cacheprovider
tar czf "$OUT/logs.tgz" -C "$OUT" --exclude logs.tgz --exclude table.txt .
cat "$OUT/table.txt"
tail -q -n 1 "$OUT"/same_*.txt
grep DIFFERENT "$OUT"/same_*.txt | head -n 6
for f in ab_bf16 ab_tf32 ab_3xtf32; do grep -E "B / A|wgmma|total" "$OUT/$f.txt" | cut -c1-130; done
grep -E "\[|cases failed" "$OUT/partial.txt" | cut -c1-220
grep -E "^(FAILED|ERROR)" "$OUT/module.txt" | head -n 4
