#!/bin/bash
# 2026-12-07 (session 3): every conv and gemm of ResNet-50 (batch 32 and 1) against cuDNN / cuBLAS alone on the
# same shapes, from Tessera's own run report (bench/gpu/conv_peers.py).
cd "$(dirname "$0")/../../.."
C="gpubundle/run tessera-cli"
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
timeout 200 python3 bench/gpu/pytorch_models.py --cli "$C" --models resnet50_b32,resnet50_b1 --tf32 pytorch --work /tmp/pm --out $OUT/pm > $OUT/pm.log 2>&1; echo "pm rc=$?"; tail -4 $OUT/pm.log
for m in resnet50_b32 resnet50_b1; do
  TESSERA_CACHE_DIR=/tmp/pmcache timeout 120 $C run /tmp/pm/$m.onnx --backend cuda --tf32 pytorch --no-reference --no-baseline --reps 30 --json > $OUT/$m.json 2> $OUT/$m.err; echo "$m run rc=$?"
  timeout 200 python3 bench/gpu/conv_peers.py /tmp/pm/$m.onnx $OUT/$m.json --out $OUT/${m}_peers.json > $OUT/${m}_peers.md 2>&1; echo "$m peers rc=$?"
  tail -14 $OUT/${m}_peers.md
done
