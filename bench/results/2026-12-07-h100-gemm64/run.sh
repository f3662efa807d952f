#!/bin/bash
# 2026-12-07: the f32 gemm's 64-deep steps on seven shapes; the window's first result with the blocked reference conv.
cd "$(dirname "$0")/.."
NEW="gpubundle/run tessera-cli"; OLD="gpubundle/run tessera-cli-before"
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
for m in gemm_f32_4096 fc1 fc2 sq2k sq1k tall wide deep; do
  f=gpuexp/$m.tsr; [ -f $f ] || f=bench/cases/$m.tsr
  for v in "" k64; do
    s=""; [ -n "$v" ] && s="--schedules gpuexp/${m}_$v.json"
    echo "== $m ${v:-default}"; $NEW run $f --backend cuda --no-reference --no-baseline --reps 30 $s 2>&1 | grep -E "^ *k0|rror"
  done
done
$NEW run bench/cases/gemm_f32_check.tsr --backend cuda --check --schedules gpuexp/check_k64.json 2>&1 | grep -E "total|rror|verified"
python3 bench/gpu/pytorch_models.py --cli "$NEW" --models resnet50_b1,resnet50_b32 --tf32 pytorch --work /tmp/pm --out $OUT/pm > $OUT/pm.log 2>&1; tail -3 $OUT/pm.log
ls /tmp/pm
for c in tessera-cli tessera-cli-before; do
  timeout 150 python3 bench/latency.py --backend cuda --window --warm 1 --models /tmp/pm/resnet50_b1.onnx,/tmp/pm/resnet50_b32.onnx --cli "gpubundle/run $c" --out $OUT/latw_$c 2>&1 | tail -4
done
