#!/bin/bash
# The f32 gemm's 32-deep default on whole models (exact f32), against the build before this session's defaults.
cd "$(dirname "$0")/.."
NEW="gpubundle/run tessera-cli"; OLD="gpubundle/run tessera-cli-before"
for m in bench/cases/gemm_f32_4096.tsr gpuexp/fc1.tsr gpuexp/fc2.tsr gpuexp/sq2k.tsr; do
  echo "== $m"; $NEW run $m --backend cuda --no-reference --no-baseline --reps 20 2>&1 | grep -E "^ *k0|rror"
done
for f in g_k64 fc1_k64 fc2_k64 sq2k_k64; do
  case $f in fc1*) m=gpuexp/fc1.tsr;; fc2*) m=gpuexp/fc2.tsr;; sq2k*) m=gpuexp/sq2k.tsr;; *) m=bench/cases/gemm_f32_4096.tsr;; esac
  echo "== $f"; $NEW run $m --backend cuda --no-reference --no-baseline --reps 20 --schedules gpuexp/$f.json 2>&1 | grep -E "^ *k0|rror"
done
for f in cv_tn4 cv_bk4s3 cv_428 cv_828_88 cv_bn32; do
  echo "== $f"; $NEW run bench/cases/conv_bn_relu.tsr --backend cuda --no-reference --no-baseline --reps 20 --schedules gpuexp/$f.json 2>&1 | grep -E "^ *k0|rror"
done
$NEW run bench/cases/gemm_f32_check.tsr --backend cuda --check 2>&1 | grep -E "total|rror"
timeout 200 python3 bench/gpu/pytorch_models.py --cli "$NEW" --baseline-cli "$OLD" --models resnet50_b32,gpt_block,resnet50_b1 --tf32 off --work /tmp/pm --out $OUT/pm 2>&1 | python3 -c "
import json,sys
for line in sys.stdin:
    try: r=json.loads(line)
    except Exception: continue
    w=r.get('warm',{}); print(r.get('model'), 'after', w.get('total_ms'), 'graph', w.get('graph_ms'), 'before', r.get('baseline_total_ms'), 'err', w.get('max_rel_err'), 'failed', w.get('failed'), 'cold', r.get('cold',{}).get('wall_s'))
"
# What the window shows first (the run checked against the reference), cold and warm, this build against the one before.
for c in tessera-cli tessera-cli-before; do
  timeout 110 python3 bench/latency.py --backend cuda --window --warm 1 --models /tmp/pm/resnet50_b1.onnx,/tmp/pm/resnet50_b32.onnx --cli "gpubundle/run $c" --out $OUT/latw_$c 2>&1 | tail -3
done
