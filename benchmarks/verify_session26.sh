#!/usr/bin/env bash
# Session 26's device calls after the chains' model files (benchmarks/verify_issue16_close.sh STEP=0..3) missed the
# fp64 bar in three cases on mma.sync (benchmarks/probe_kink_flips.py found why): the accuracy bar's kinks at a
# parameter's value and by column, and tiny GEMMs up to 2^23 multiply-adds in whole tiles compensated. Logs under
# $OUT, a table last.
#   device: STEP=rerun PYTHONPATH=. bash benchmarks/verify_session26.sh   (the model files those changes touch)
#           STEP=issue15 PYTHONPATH=. bash benchmarks/verify_session26.sh (H200: the bf16 / fp16 step)
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"  # $OUT, the environment, run NAME SECONDS COMMAND...
# files with a BatchNorm, a min / max / clamp against a parameter or a scalar one, and those whose own-size GEMMs
# have 2^22..2^23 multiply-adds in whole tiles (now compensated)
FILES="bn_ stage_channel_clamp_params stage_channel_min_max stage_channel_scale stage_scalar stage_hardtanh_wide_group
  rowsum_channel_affine_mean rowsum_scalar_params pool_avg_gelu_scale_max row_max_center rowsum_sum_max_mean_lse
  stage_gn_sigmoid_x_residual stage_linear_params_residual stage_relu_scale_tanh input_residual_rows
  pool_avg_padded_gn pool_max_sum_scale row_logsumexp_tail row_scalar_params"
case "${STEP:-rerun}" in
  rerun) PART=chains K="model_file and ($(echo $FILES | sed 's/ / or /g'))" SUITE_TIMEOUT=560 run rerun 570 \
           bash benchmarks/device_suite.sh ;;
  issue15) run step 300 python3 benchmarks/step_gaps.py --dtypes bfloat16,float16 ;;
  *) echo "STEP must be rerun or issue15, got ${STEP}" >&2; exit 2 ;;
esac
cat "$OUT/table.txt"
