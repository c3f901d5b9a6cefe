#!/usr/bin/env bash
# GPU kernel time of the sweep's weak points under several split-K schedules (no rebuild: environment
# overrides read by the launchers). Usage on the device: OUT=dir bash benchmarks/schedule_compare.sh
set -u
OUT=${OUT:-/tmp/schedule-compare}
mkdir -p "$OUT"
export PYTHONPATH=. FUSEGEN_CACHE_DIR=${FUSEGEN_CACHE_DIR:-/tmp/fusegen-cache}
POINTS=${POINTS:-1x8192,16x8192,1x4096,64x4096,256x4096,256x2048,1024x1024,256x1024,64x1024}
# name: environment
SETTINGS=${SETTINGS:-"wgmma-half-wave:FUSEGEN_WGMMA_MIN_TILES=66 default: waves2:FUSEGEN_SPLIT_WAVES=2 waves4:FUSEGEN_SPLIT_WAVES=4"}
for setting in $SETTINGS; do
  name=${setting%%:*}; vars=${setting#*:}
  echo "== $name ($vars)" | tee -a "$OUT/schedule-compare.txt"
  env $vars python3 benchmarks/gpu_times.py --brief --points "$POINTS" 2>>"$OUT/schedule-compare-build.log" \
    | tee -a "$OUT/schedule-compare.txt"
done
