#!/usr/bin/env bash
# Session 36, run 5: the persistent 3xtf32 GEMMs issue the next tile's first stage of products before a finished
# tile's epilogue (Wgmma::ISSUE_AHEAD: start_tile / finish_tile), so that the tensor cores run through it; the
# 256-row engines (tf32, bf16) keep one tile at a time, on the same refactored code (logs under $OUT, a table last).
# ab/old_*.py: the previous commit's renders of the headline (3xtf32, tf32, bf16); ab/new_*.py: this one's;
# ab/x3.cubin: this one's 3xtf32 CUDA source for sm_90a (nvcc here), for its machine code (ptxas says it injects
# a warpgroup wait: where?). On an H200 it runs issue 17's targets instead.
#   The persistent kernel's SASS; build; old and new the same bit for bit; A/B of the 3xtf32 step with kernels;
#   the scaled-planes tests.
#   device (kind nvidia-h200): PYTHONPATH=. bash benchmarks/verify_session36d.sh
set -uo pipefail
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  STEP=1 exec bash "$(dirname "$0")/verify_h200_targets.sh"
fi
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
cuobjdump -sass -fun '_ZN2fg29wgmma_store_persistent_kernelINS_5WgmmaELb0EEEv14CUtensorMap_stS2_S2_NS_8StoreMapEPKfPfiii' \
  ab/x3.cubin > "$OUT/persist.sass" 2>&1
grep -nE "HGMMA|WARPGROUP|BAR\.SYNC|UTMASTG|UTMALDG|SYNCS|BRA|EXIT|STS|LDSM|FADD" "$OUT/persist.sass" \
  | sed -E 's/ +/ /g' | cut -c1-110 > "$OUT/persist_outline.txt"
run build 220 python3 -c "import sys, pathlib; sys.path.insert(0, '.'); from fusegen.tools.tune import _build_all; \
f = _build_all([pathlib.Path('ab/' + n + '.py') for n in ('new_3xtf32', 'old_3xtf32', 'new_tf32', 'old_tf32', \
'new_bfloat16', 'old_bfloat16')], 6); print('failed', f); sys.exit(1 if f else 0)"
for p in 3xtf32 tf32; do
  run "same_$p" 60 python3 benchmarks/same_results.py "ab/old_$p.py" "ab/new_$p.py" --init 8192,8192,512 --batch 1024
done
run same_bf16 60 python3 benchmarks/same_results.py ab/old_bfloat16.py ab/new_bfloat16.py --init 8192,8192,512 \
  --batch 1024 --dtype bfloat16
run ab_3xtf32 150 python3 benchmarks/ab_modules.py ab/old_3xtf32.py ab/new_3xtf32.py --init 8192,8192,512 \
  --batch 1024 --rounds 15 --kernels --kernel-rounds 5
run planes 200 env FUSEGEN_PRECISIONS=3xtf32,tf32 python3 -m pytest -q tests/test_gpu_scaled_planes.py \
  -p no:cacheprovider
cat "$OUT/table.txt"
grep -E "^(FAILED|ERROR)" "$OUT/planes.txt" | head -n 8
tail -qn 1 "$OUT/same_3xtf32.txt" "$OUT/same_tf32.txt" "$OUT/same_bf16.txt"
grep DIFFERENT "$OUT/same_3xtf32.txt" "$OUT/same_tf32.txt" "$OUT/same_bf16.txt" | head -n 6
grep -E "B / A|^A |^B |persistent|wgmma_forward|total" "$OUT/ab_3xtf32.txt"
grep -cE "HGMMA" "$OUT/persist.sass"; grep -nE "WARPGROUP.DEPBAR|WARPGROUP.SYNC" "$OUT/persist.sass" | head -n 20
