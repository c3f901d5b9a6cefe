#!/usr/bin/env bash
# Session 45, after run 3 (verify_session45c.sh): the one-pass GroupNorm backward at 8 channels a thread and 2
# blocks an SM ran 19.3 us (+ 1.6 its combine) once its chunks were 8, one wave of blocks (32 chunks: 27.6 + 7.3);
# 4 channels, 4 blocks, one row 21.0 + 1.6 at 8 chunks. Now: 8 channels for 16-bit z and fp32 statistics
# (Plan.gn_backward_channels), chunks for one wave of blocks (gn_backward_chunks, every mode), the combine a thread a
# sum and column. Run 3's module tests did not finish in their 200 s. Here the correctness half; timings in
# verify_session45e.sh. ab/ (untracked): A = HEAD's headline modules (bf16, fp16, float32 3xtf32, tf32), B = the
# working tree's.
#   1. same_results: the output the same bit for bit, the gradients close (16-bit: a group's sums in another
#      order; fp32 modes: the same arithmetic in other chunks of rows, so their parameters' gradients may move);
#   2. the 16-bit module tests (wgmma's planned tile; group widths 1 to 32 and wider: 1, 4, 8 and 8 channels of the
#      one-pass kernel), grad_out in every layout, offsets past 32 bits, a stage before narrow groups; the random
#      chains per dtype.
#   device (kind nvidia-h200): PYTHONPATH=. bash benchmarks/verify_session45d.sh
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
run build 150 python3 -c "import sys, pathlib; sys.path.insert(0, '.'); from fusegen.tools.tune import _build_all; \
f = _build_all(sorted(pathlib.Path('ab').glob('[AB]_*.py')), 8); print('failed', f); sys.exit(1 if f else 0)"
for d in bfloat16 float16 float32 tf32; do
  dt=$d; [ $d = tf32 ] && dt=float32
  run same_$d 40 python3 benchmarks/same_results.py ab/A_$d.py ab/B_$d.py --init 8192,8192,512 --batch 1024 --dtype $dt
done
run tests 330 python3 -m pytest -q -x tests/test_gpu_dtypes.py \
  -k "(half_module and wgmma and not m128) or grad_out_layout or past_32_bits or narrow_groups or random_chains"
cat "$OUT/table.txt"
for d in bfloat16 float16 float32 tf32; do echo "== $d: $(grep -c 'same ' "$OUT/same_$d.txt") same; out: \
$(grep -E '^[a-z_]+ +out' "$OUT/same_$d.txt" | grep -c same) of 8"; grep DIFFERENT "$OUT/same_$d.txt" | sort -k5 -g | tail -n 2; done
grep -E "passed|failed|Error|FAILED" "$OUT/tests.txt" | tail -n 8
