#!/bin/bash
# 2026-12-07 (session 3): the stems on the tensor cores (tap_depth) and their variants, checked; then every conv
# and gemm of ResNet-50 (batch 32 and 1) against cuDNN / cuBLAS alone on the same shapes (run1.sh).
cd "$(dirname "$0")/../../.."
C="gpubundle/run tessera-cli"
S=gpuexp/stem
for m in stem7 stem3; do
  for b in ${m}_b2 $m; do $C run $S/$b.tsr --backend cuda --tf32 pytorch --check --reps 3 --no-baseline 2>&1 | grep -E "verified|mismatch|error|rror" | head -3; done
  for f in $S/${m}_*.json; do
    printf "%s " "$(basename $f .json)"; $C run $S/$m.tsr --backend cuda --tf32 pytorch --no-reference --no-baseline --reps 30 --schedules $f --json 2>/dev/null | python3 -c "import json,sys; d=json.load(sys.stdin); print(' '.join('%s %.4f' % (k['group'], k['ms']) for k in d['kernels']))"
  done
done
bash bench/results/2026-12-07-peers/run1.sh
