#!/bin/bash
# 2026-12-07 (session 2), whole models with the conv and gemm defaults of this session against PyTorch.
cd "$(dirname "$0")/.."
C="gpubundle/run tessera-cli"
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
timeout 300 python3 bench/gpu/pytorch_models.py --cli "$C" --models resnet50_b32,resnet50_b1,mobilenet_v2_b32 --torch --tf32 pytorch --work /tmp/pm --out $OUT/pm > $OUT/pm.log 2>&1; echo "pm rc=$?"; tail -5 $OUT/pm.log
