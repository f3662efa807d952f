#!/bin/bash
# 2026-12-07 (session 3), second call, most wanted first (a timeout keeps what is done): the defaults the first
# call chose checked; the stride-2 convs' variants at batch 32 (128-channel blocks sharing the halo fill, the
# halo's columns on the lanes: _rows; the halo in 16-byte runs: _runs, both checked first at batch 2); ResNet-50 at batch 32 against PyTorch; 28² and 7² conv variants; ncu on a strided conv against an unstrided one of
# the same work; MobileNet-V2 at batch 32 against PyTorch. Output in $OUT/run3.out as it goes.
cd "$(dirname "$0")/../../.."
C="gpubundle/run tessera-cli"
L=$OUT/run3.out
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader >> $L
for f in gpuexp/chk/*.json; do b=$(basename $f .json); m=${b%_b2_*}; echo "check $b: $($C run gpuexp/s2/${m}_b2.tsr --backend cuda --tf32 pytorch --schedules $f --check --reps 3 --no-baseline 2>&1 | grep -E "verified|mismatch|rror" | head -2)" >> $L; done
for c in stem/stem7 g1/c1_l3; do echo "check ${c}_b2: $($C run gpuexp/${c}_b2.tsr --backend cuda --tf32 pytorch --check --reps 3 --no-baseline 2>&1 | grep -E "verified|mismatch|rror" | head -2)" >> $L; done
for S in gpuexp/s2 PM gpuexp/s1; do
  if [ $S = PM ]; then
    timeout 200 python3 bench/gpu/pytorch_models.py --cli "$C" --models resnet50_b32 --torch --tf32 pytorch --work /tmp/pm --out $OUT/pm > $OUT/pm.log 2>&1; echo "pm rc=$?" >> $L; tail -3 $OUT/pm.log >> $L
    continue
  fi
  for t in $S/*.tsr; do
    m=$(basename $t .tsr); case $m in *_b2) continue;; esac
    for f in $S/${m}_*.json; do
      echo "$(basename $f .json) $($C run $t --backend cuda --tf32 pytorch --no-reference --no-baseline --reps 30 --schedules $f --json 2>/dev/null | python3 -c "import json,sys; d=json.load(sys.stdin); print(' '.join('%s %.4f' % (k['group'], k['ms']) for k in d['kernels']))")" >> $L
    done
  done
done
M=gpu__time_duration.sum,smsp__inst_executed.sum,smsp__inst_executed_op_ldgsts.sum,smsp__inst_executed_op_shared_ld.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__warp_issue_stalled_barrier_per_warp_active.pct,smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct,smsp__warp_issue_stalled_short_scoreboard_per_warp_active.pct,smsp__warp_issue_stalled_mio_throttle_per_warp_active.pct,smsp__warp_issue_stalled_lg_throttle_per_warp_active.pct,smsp__warp_issue_stalled_math_pipe_throttle_per_warp_active.pct,smsp__warp_issue_stalled_wait_per_warp_active.pct
for c in s2/c3_l2s s1/c3_l2; do echo "== ncu $c" >> $L; timeout 60 ncu --metrics $M --kernel-id :::1 $C run gpuexp/$c.tsr --backend cuda --tf32 pytorch --no-reference --no-baseline --reps 1 --schedules gpuexp/${c}_def.json 2>&1 | grep -E "^\s+(smsp|l1tex|gpu__|sm__)" >> $L; done
timeout 200 python3 bench/gpu/pytorch_models.py --cli "$C" --models mobilenet_v2_b32 --torch --tf32 pytorch --work /tmp/pm --out $OUT/pm2 > $OUT/pm2.log 2>&1; echo "pm2 rc=$?" >> $L; tail -3 $OUT/pm2.log >> $L
