#!/usr/bin/env bash
# Session 35: the persistent backward GEMMs in clusters of two blocks that share P's tile by TMA multicast (logs
# under $OUT, a table last; runs 2 and 4-6, the templates of 71b3668 and its forms before, since reverted).
# ab/old_*.py: the previous commit's renders of the headline; ab/new_*.py: this one's.
#   STEP=1: build; old and new give the same output and gradients bit for bit (the arithmetic is unchanged; a
#           hang here would be a cluster barrier waiting forever: each step has its own time limit); A/B of the
#           tf32 and 3xtf32 steps with their kernels side by side (3xtf32: 15 rounds; kernels: medians of 5
#           alternating profiles); Nsight Compute on the clustered dW; the scaled-planes tests (wide: dW's 66
#           column tiles, the last partial, in clusters).
#   STEP=2: the 16-bit modules on the wgmma engines (bf16 / fp16; their tiles run without clusters, on the
#           persistent kernel's changed code), the fp32 module suite's random shapes and the committed module.
#   device: STEP=1 PYTHONPATH=. bash benchmarks/verify_session35b.sh
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
if [ "${STEP:-1}" = 1 ]; then
  run build 220 python3 -c "import sys, pathlib; sys.path.insert(0, '.'); from fusegen.tools.tune import _build_all; \
f = _build_all([pathlib.Path('ab/' + n + '.py') for n in ('new_tf32', 'old_tf32', 'new_3xtf32', 'old_3xtf32')], 4); \
print('failed', f); sys.exit(1 if f else 0)"
  for p in 3xtf32 tf32; do
    run "same_$p" 60 python3 benchmarks/same_results.py "ab/old_$p.py" "ab/new_$p.py" --init 8192,8192,512 --batch 1024
  done
  run ab_tf32 120 python3 benchmarks/ab_modules.py ab/old_tf32.py ab/new_tf32.py --init 8192,8192,512 --batch 1024 \
    --rounds 7 --kernels --kernel-rounds 5
  run ab_3xtf32 150 python3 benchmarks/ab_modules.py ab/old_3xtf32.py ab/new_3xtf32.py --init 8192,8192,512 \
    --batch 1024 --rounds 15 --kernels --kernel-rounds 5
  run ncu 120 ncu --clock-control none -k regex:"persistent" --launch-skip 2 --launch-count 2 --metrics \
    lts__throughput.avg.pct_of_peak_sustained_elapsed,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,gpu__time_duration.sum,launch__cluster_dim_x \
    python3 benchmarks/profile_step.py --dtype float32 --precision 3xtf32 --steps 1
  run planes 240 env FUSEGEN_PRECISIONS=3xtf32,tf32 python3 -m pytest -q tests/test_gpu_scaled_planes.py \
    -p no:cacheprovider
  cat "$OUT/table.txt"
  grep -E "^(FAILED|ERROR)" "$OUT/planes.txt" | head -n 8
  tail -n 1 "$OUT/same_3xtf32.txt" "$OUT/same_tf32.txt"
  grep DIFFERENT "$OUT/same_3xtf32.txt" "$OUT/same_tf32.txt" | head -n 6
  for f in ab_tf32 ab_3xtf32; do grep -E "B / A|^A |^B |persistent|wgmma_forward|total" "$OUT/$f.txt"; done
  grep -E "^  [a-z_].*\(|lts__|sm__pipe|gpu__time|launch__" "$OUT/ncu.txt" | cut -c1-110
else
  run dtypes 300 python3 -m pytest -q -x tests/test_gpu_dtypes.py -k "wgmma and half_module and bfloat16" \
    -p no:cacheprovider
  run module 250 env FUSEGEN_PRECISIONS=3xtf32 python3 -m pytest -q tests/test_gpu_module.py \
    -k "headline_committed or (random_shapes and not sm80)" -p no:cacheprovider
  cat "$OUT/table.txt"
  grep -E "^(FAILED|ERROR)" "$OUT/dtypes.txt" "$OUT/module.txt" | head -n 8
fi
