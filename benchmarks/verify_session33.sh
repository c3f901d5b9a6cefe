#!/usr/bin/env bash
# What session 32 left unrun on a GPU, in one call (logs under $OUT, a table last):
#   the engine probes after 5e82672 (they render the 16-bit engine on the sm_80 plan without planes: sm_80's
#   3xtf32 default reads planes since 0e230ab), the sm_80 planes engine's mutant (its hi(A) x lo(B) product
#   dropped: it must fail), and the property tests of sm_80's two 3xtf32 engines after the variant rename
#   (3xtf32-sm80: 3xFP16 over planes, the default; 3xtf32-sm80-planes-off: 3xTF32).
#   device: PYTHONPATH=. bash benchmarks/verify_session33.sh
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
run engines 420 python3 -m pytest -q tests/test_gpu_engines.py -k "two_plane or (half_engine_matches and float16)" \
  -p no:cacheprovider
run mutant 150 python3 benchmarks/mutations.py --out "$OUT" --only mma_b_lo_dropped
run property 270 env FUSEGEN_PRECISIONS=3xtf32 FUSEGEN_GPU_EXAMPLES=20 python3 -m pytest -q tests/test_gpu_module.py \
  -k "sm80" -p no:cacheprovider
cat "$OUT/table.txt"
tail -n 4 "$OUT/mutant.txt"
for f in engines property; do grep -E "^(FAILED|ERROR)" "$OUT/$f.txt" | head -n 5; done
exit 0
