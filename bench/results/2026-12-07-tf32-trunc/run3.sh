#!/bin/bash
# 2026-12-07 (session 4), third call: tf32 = 3 (rounded by an integer add on the f32 bits, + 0x1000: the same
# values as cvt.rna's for finite ones) against 1 (cvt.rna) and 2 (truncated), checked at batch 2 first.
cd "$(dirname "$0")/../../.."
C="gpubundle/run tessera-cli"
L=$OUT/run3.out
nvidia-smi --query-gpu=name --format=csv,noheader >> $L
echo "check t3: $($C run gpuexp/t3/chk.tsr --backend cuda --tf32 pytorch --schedules gpuexp/t3/chk_t3.json --check --reps 3 --no-baseline 2>&1 | grep -E "verified|mismatch|rror" | head -2)" >> $L
for r in 1 2; do for t in gpuexp/t3/*.tsr; do m=$(basename $t .tsr); case $m in chk) continue;; esac
  for v in t1 t2 t3; do
    echo "$m $v $($C run $t --backend cuda --tf32 pytorch --no-reference --no-baseline --reps 30 --schedules gpuexp/t3/${m}_$v.json --json 2>/dev/null | python3 -c "import json,sys; d=json.load(sys.stdin); print(' '.join('%s %.4f' % (k['group'], k['ms']) for k in d['kernels']))")" >> $L
  done; done; done
