#!/bin/bash
# 2026-12-07 (session 4), one call, most wanted first (a timeout keeps what is done; output in $OUT/run.out as
# it goes): tf32 = 2 (the f32 bits to the mma as they are: no cvt.rna a fragment element) against tf32 = 1 on
# six of ResNet-50's convs, each checked at batch 2 first; then the rest of 2026-12-07-peers/run3.sh (the
# stride-2 convs' fill variants, ResNet-50 and MobileNet-V2 against torch.compile, ncu).
cd "$(dirname "$0")/../../.."
C="gpubundle/run tessera-cli"
L=$OUT/run.out
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader >> $L
T=gpuexp/t2
for c in chk_c3_l2s_b2 chk_c1_l3_b2; do for v in 1 2; do echo "check $c tf32=$v: $($C run $T/$c.tsr --backend cuda --tf32 pytorch --schedules $T/${c}_t$v.json --check --reps 3 --no-baseline 2>&1 | grep -E "k0|verified|mismatch|rror" | head -3 | tr -s ' ')" >> $L; done; done
for r in 1 2; do for t in $T/*.tsr; do m=$(basename $t .tsr); case $m in chk_*) continue;; esac
  for v in t1 t2; do
    echo "$m $v $($C run $t --backend cuda --tf32 pytorch --no-reference --no-baseline --reps 30 --schedules $T/${m}_$v.json --json 2>/dev/null | python3 -c "import json,sys; d=json.load(sys.stdin); print(' '.join('%s %.4f' % (k['group'], k['ms']) for k in d['kernels']))")" >> $L
  done; done; done
bash bench/results/2026-12-07-peers/run3.sh
