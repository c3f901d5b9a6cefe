#!/usr/bin/env bash
# Prepared in session 36 for the next session's first device call (logs under $OUT, a table last). On an H200:
# issue 17's targets (verify_h200_targets.sh STEP=1). On any other card:
#   1. Nsight Compute on one 3xtf32 step's persistent GEMMs under the grouped tile order (62297a6): DRAM bytes and
#      L2 hit rate (did dW's re-reads of P go?), L2 and tensor-pipe use.
#   2. epilogue_variants.py on dW: the bulk stores hinted L2 evict_first, and without the stores.
#   3. The fp32 module suite's random shapes and the committed module (3xtf32): session 36's run 6 timed out.
#   device (kind nvidia-h200): PYTHONPATH=. bash benchmarks/verify_session37.sh
set -uo pipefail
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  STEP=1 exec bash "$(dirname "$0")/verify_h200_targets.sh"
fi
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
METRICS=dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,lts__throughput.avg.pct_of_peak_sustained_elapsed,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,gpu__time_duration.sum
run ncu 200 ncu --clock-control none -k regex:"persistent" --launch-skip 2 --launch-count 2 --metrics "$METRICS" \
  python3 benchmarks/profile_step.py --dtype float32 --precision 3xtf32 --steps 1
run variants 200 python3 benchmarks/epilogue_variants.py --dtype float32 --precision 3xtf32 \
  --variants base,store_evict_first,no_bulk_store --reps 10
run module 250 env FUSEGEN_PRECISIONS=3xtf32 python3 -m pytest -q tests/test_gpu_module.py \
  -k "headline_committed or (random_shapes and not sm80)" -p no:cacheprovider
cat "$OUT/table.txt"
grep -E "^(FAILED|ERROR)" "$OUT/module.txt" | head -n 8
grep -E "^  [a-z_].*\(|dram__|lts__|sm__pipe|gpu__time" "$OUT/ncu.txt" | cut -c1-110
grep -A 6 "us a step per kernel" "$OUT/variants.txt" | cut -c1-120
