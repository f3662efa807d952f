#!/bin/bash
# 2026-12-07 (session 2), the last call: ResNet-50's 3x3 convs at batch 32 (tf32), defaults against split-K and
# other warp and block tiles; then the window's first result on resnet50 at batch 32 (latency.py).
cd "$(dirname "$0")/.."
DIR=${1:-gpuexp/s2}  # the fourth call: run3.sh gpuexp/s3 convs-only
C="gpubundle/run tessera-cli"
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
for s in $DIR/*.json; do
  b=$(basename $s .json); f=${b%_*}; v=${b##*_}
  echo "== $f $v $($C run gpuexp/$f.tsr --backend cuda --no-reference --no-baseline --reps 30 --schedules $s 2>&1 | grep -E '^ *k0|rror' | head -1 | awk '{print $2, $3}')"
done
[ "$2" = convs-only ] && exit 0
timeout 120 python3 bench/gpu/pytorch_models.py --cli "$C" --models resnet50_b32 --tf32 pytorch --work /tmp/pm --out $OUT/pm > $OUT/pm.log 2>&1; echo "pm rc=$?"; tail -2 $OUT/pm.log
ls /tmp/pm
timeout 150 python3 bench/latency.py --backend cuda --window --warm 1 --models /tmp/pm/resnet50_b32.onnx --cli "$C" --out $OUT/latw 2>&1 | tail -6
