#!/usr/bin/env bash
# Session 33's forward host changes on the GPU, in one call (logs under $OUT, a table last): inference returns None
# for the buffers it does not write (no allocation before the first launch), and the kept weight plane's refresh
# moved from the binding into the launchers (forward's after x's planes, so x's kernel starts first). The tests of
# the paths they touch (the weight plane's cache through every update, extreme rows, sm_80's planes engine, the
# committed module, torch.compile's operators in inference, CUDA graphs), then the host-time A/B against the
# previous headline module.
#   device: OLD=before.py PYTHONPATH=. bash benchmarks/verify_session33b.sh   (OLD: git show REV:generated/X.py;
#   the device has no .git)
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
NEW=generated/lin_gn_lrelu2_i8192_h8192_g512_6bb6a190.py
OLD=${OLD:?the previous module file}
run build 150 python3 -c "import sys, pathlib; sys.path.insert(0, '.'); from fusegen.tools.tune import _build_all; \
f = _build_all([pathlib.Path('$NEW'), pathlib.Path('$OLD')], 2); print('failed', f); sys.exit(1 if f else 0)"
run planes 200 env FUSEGEN_PRECISIONS=3xtf32,tf32 python3 -m pytest -q tests/test_gpu_scaled_planes.py -p no:cacheprovider
run module 200 env FUSEGEN_PRECISIONS=3xtf32 FUSEGEN_GPU_EXAMPLES=15 python3 -m pytest -q tests/test_gpu_module.py \
  -k "inference_matches or headline_committed or (random_shapes and not sm80)" -p no:cacheprovider
run realuse 150 python3 -m pytest -q tests/test_gpu_real_use.py -k "compile or graph or benchmark_way or nan" \
  -p no:cacheprovider
run lead 120 python3 benchmarks/host_lead.py "$OLD" "$NEW" --rounds 5
cat "$OUT/table.txt"
for f in planes module realuse; do grep -E "^(FAILED|ERROR)" "$OUT/$f.txt" | head -n 5; done
grep -A 20 "host us per call" "$OUT/lead.txt"
