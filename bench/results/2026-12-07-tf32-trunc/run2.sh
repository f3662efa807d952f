#!/bin/bash
# 2026-12-07 (session 4), second call: the new defaults (tf32 = 2; stride-2 convs in 128-channel blocks) on
# ResNet-50 (batch 32, 1) and MobileNet-V2 against torch.compile, most wanted first; then the stride-2 convs'
# 16-byte halo runs on top of them, and the 7² and 28² convs' block widths. Output in $OUT/run2.out as it goes.
cd "$(dirname "$0")/../../.."
C="gpubundle/run tessera-cli"
L=$OUT/run2.out
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader >> $L
timeout 200 python3 bench/gpu/pytorch_models.py --cli "$C" --models resnet50_b32 --torch --tf32 pytorch --work /tmp/pm --out $OUT/pm > $OUT/pm.log 2>&1; echo "pm rc=$?" >> $L; tail -2 $OUT/pm.log >> $L
for r in 1; do for t in gpuexp/c2/*.tsr; do m=$(basename $t .tsr)
  for f in gpuexp/c2/${m}_*.json; do
    echo "$(basename $f .json) $($C run $t --backend cuda --tf32 pytorch --no-reference --no-baseline --reps 30 --schedules $f --json 2>/dev/null | python3 -c "import json,sys; d=json.load(sys.stdin); print(' '.join('%s %.4f' % (k['group'], k['ms']) for k in d['kernels']))")" >> $L
  done; done; done
timeout 240 python3 bench/gpu/pytorch_models.py --cli "$C" --models resnet50_b1,mobilenet_v2_b32 --torch --tf32 pytorch --work /tmp/pm --out $OUT/pm2 > $OUT/pm2.log 2>&1; echo "pm2 rc=$?" >> $L; tail -3 $OUT/pm2.log >> $L
