#!/bin/bash
# 2026-12-07 (session 3): the stems on the tensor cores (tap_depth), the stride-2 convs' halos by phase
# (deinterleave) and the 1 x 1 convs' tf32 tiles padded by the bank model (pad, pad_b): each checked at batch 2
# and timed at batch 32 against the previous schedule (_old / _cores) and variants; tune on two convs; then every
# conv and gemm of ResNet-50 (batch 32 and 1) against cuDNN / cuBLAS alone on the same shapes (run1.sh).
cd "$(dirname "$0")/../../.."
C="gpubundle/run tessera-cli"
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
for S in gpuexp/stem gpuexp/s2 gpuexp/g1; do
  for t in $S/*.tsr; do
    m=$(basename $t .tsr); case $m in *_b2) continue;; esac
    echo "check ${m}_b2: $($C run $S/${m}_b2.tsr --backend cuda --tf32 pytorch --check --reps 3 --no-baseline 2>&1 | grep -E "verified|mismatch|rror" | head -2)"
    for f in $S/${m}_*.json; do
      printf "%s " "$(basename $f .json)"; $C run $t --backend cuda --tf32 pytorch --no-reference --no-baseline --reps 30 --schedules $f --json 2>/dev/null | python3 -c "import json,sys; d=json.load(sys.stdin); print(' '.join('%s %.4f' % (k['group'], k['ms']) for k in d['kernels']))"
    done
  done
done
for t in gpuexp/stem/stem7.tsr gpuexp/s2/c3_l3s.tsr; do
  echo "tune $t"; TESSERA_CACHE_DIR=/tmp/tunecache timeout 60 $C tune $t --backend cuda --tf32 pytorch --top-k 16 --no-cache 2>&1 | tail -4
done
bash bench/results/2026-12-07-peers/run1.sh
