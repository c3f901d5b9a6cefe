#!/usr/bin/env bash
# Session 46, call 9: run 8's mutation gn_item_cols went uncaught by test_half_module's 37x200x160x10 (that shape's
# forward does not run the staged persistent kernel). The headline bf16 module judged the benchmark way (no_grad:
# z read back in inference) runs it: that test on the tree, and the mutant against it, side by side.
#   device (kind nvidia-h200): PYTHONPATH=. bash benchmarks/verify_session46h.sh
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
run mutation 150 python3 benchmarks/mutations.py --only gn_item_cols --out "$OUT/mutations" &
run real_use 150 python3 -m pytest -q -x -s tests/test_gpu_real_use.py -k bf16_module_judged
wait
cat "$OUT/table.txt"
grep -E "passed|failed|benchmark way|Error" "$OUT/real_use.txt" | tail -n 3
tail -n 3 "$OUT/mutation.txt" | cut -c1-400
