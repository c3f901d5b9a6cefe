#!/usr/bin/env bash
# Sourced by the benchmarks/verify_*.sh device scripts: $OUT (logs), the environment, the GPU's name in
# $OUT/gpu.txt, and `run NAME SECONDS COMMAND...`: the step's output in $OUT/NAME.txt, its exit code, seconds and
# pytest's last count line appended to $OUT/table.txt (emptied here).
OUT=${OUT:-/tmp/fusegen-out}
mkdir -p "$OUT"
export PYTHONPATH=${PYTHONPATH:-.} PYTHONUNBUFFERED=1 FUSEGEN_CACHE_DIR=${FUSEGEN_CACHE_DIR:-/tmp/fusegen-cache}
# load_inline's builds (the engine probes) in one folder, cleared of lock files: a build killed by a step's timeout
# leaves its lock, and the next call on a warm machine would wait on it forever (one run at a time here).
export TORCH_EXTENSIONS_DIR=${TORCH_EXTENSIONS_DIR:-/tmp/fusegen-torch-extensions}
mkdir -p "$TORCH_EXTENSIONS_DIR" && find "$TORCH_EXTENSIONS_DIR" -name lock -delete
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
run() {  # name, seconds, command...
  local name=$1 limit=$2; shift 2
  local start=$SECONDS
  timeout "$limit" "$@" > "$OUT/$name.txt" 2>&1
  local rc=$?
  printf '%-10s rc=%-3s %4ss  %s\n' "$name" "$rc" "$((SECONDS - start))" \
    "$(grep -E '[0-9]+ (passed|failed)' "$OUT/$name.txt" | tail -n 1)" >> "$OUT/table.txt"
}
: > "$OUT/table.txt"
