#!/bin/bash
# 2026-12-07 (session 2), the last call: ResNet-50's 3x3 convs at batch 32 (tf32), defaults against split-K and
# other warp and block tiles; then the window's first result on resnet50 at batch 32 (latency.py).
cd "$(dirname "$0")/.."
C="gpubundle/run tessera-cli"
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
for s in gpuexp/s3/*.json; do
  b=$(basename $s .json); f=${b%_*}; v=${b##*_}
  echo "== $f $v $($C run gpuexp/$f.tsr --backend cuda --no-reference --no-baseline --reps 30 --schedules $s 2>&1 | grep -E '^ *k0|rror' | head -1 | awk '{print $2, $3}')"
done
