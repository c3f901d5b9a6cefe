#!/usr/bin/env bash
# Issue 15's property tests on the head (random shapes and random chains, each per dtype against fp64) and the bf16
# module judged the benchmark way (the harness's casts, allclose 1e-2).
#   device (kind nvidia-h200): PYTHONPATH=. bash benchmarks/verify_session48d.sh
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
run harness 150 python3 -m pytest -q tests/test_gpu_real_use.py -k bf16_module_judged_the_benchmark_way
run shapes 200 python3 -m pytest -q tests/test_gpu_dtypes.py -k "random_shapes_per_dtype"
run chains 200 python3 -m pytest -q tests/test_gpu_dtypes.py -k "random_chains_per_dtype"
cat "$OUT/table.txt"
true
