#!/bin/bash
# 2026-12-07 (session 3): the stems on the tensor cores (tap_depth) and the stride-2 convs' halos by phase
# (deinterleave), each checked and timed against variants; then every conv and gemm of ResNet-50 (batch 32 and
# 1) against cuDNN / cuBLAS alone on the same shapes (run1.sh, with these defaults).
cd "$(dirname "$0")/../../.."
C="gpubundle/run tessera-cli"
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
for S in gpuexp/stem gpuexp/s2; do
  for t in $S/*.tsr; do
    m=$(basename $t .tsr); case $m in *_b2) continue;; esac
    for b in ${m}_b2 $m; do echo "check $b: $($C run $S/$b.tsr --backend cuda --tf32 pytorch --check --reps 3 --no-baseline 2>&1 | grep -E "verified|mismatch|rror" | head -2)"; done
    for f in $S/${m}_*.json; do
      printf "%s " "$(basename $f .json)"; $C run $t --backend cuda --tf32 pytorch --no-reference --no-baseline --reps 30 --schedules $f --json 2>/dev/null | python3 -c "import json,sys; d=json.load(sys.stdin); print(' '.join('%s %.4f' % (k['group'], k['ms']) for k in d['kernels']))"
    done
  done
done
bash bench/results/2026-12-07-peers/run1.sh
