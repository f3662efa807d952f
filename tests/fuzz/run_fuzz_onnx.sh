#!/bin/sh
# Runs fuzz_onnx for a bounded time on a seed corpus assembled at run time from small ONNX models in the data
# folder and the committed regression inputs. Exit status is the fuzzer's (non-zero when it found a crash; the
# crashing input is written to the current folder as crash-*).
#   run_fuzz_onnx.sh FUZZER DATA_DIR SOURCE_DIR [SECONDS]
set -eu
fuzzer=$1
data=$2
source=$3
seconds=${4:-60}
corpus=$(mktemp -d)
trap 'rm -rf "$corpus"' EXIT
for t in test_add_bcast test_softmax_example test_slice test_clip_default_inbounds test_reshape_reordered_all_dims \
         test_gemm_default_matrix_bias test_conv_with_strides_padding test_split_variable_parts_1d_opset18 \
         test_reduce_mean_keepdims_example test_constant test_batchnorm_example test_dropout_default_old \
         test_softmax_axis_0 test_unsqueeze_axis_0 test_gather_0 test_where_example test_cast_FLOAT_to_FLOAT16; do
  if [ -f "$data/onnx-node/$t/model.onnx" ]; then cp "$data/onnx-node/$t/model.onnx" "$corpus/$t.onnx"; fi
  if [ -f "$data/onnx-node/$t/test_data_set_0/input_0.pb" ]; then cp "$data/onnx-node/$t/test_data_set_0/input_0.pb" "$corpus/$t.pb"; fi
done
if [ -f "$data/onnx-light/light/light_squeezenet.onnx" ]; then cp "$data/onnx-light/light/light_squeezenet.onnx" "$corpus/"; fi
for f in "$source"/tests/frontend/onnx_regressions/*; do
  if [ -f "$f" ]; then cp "$f" "$corpus/"; fi
done
"$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 "$corpus"
