#!/bin/bash
# 2026-12-07 (session 2): the mma conv's input tile padded by the bank model (pad, pad_rows) against the old pads;
# wider warp tiles; ncu on layer3's conv; tuning; ResNet-50 against PyTorch.
cd "$(dirname "$0")/.."
C="gpubundle/run tessera-cli"
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
for f in c3_l1 c3_l2 c3_l2s c3_l3 c3_l3s c3_l4 c3_l4s; do
  for s in gpuexp/${f}_*.json; do
    v=${s#gpuexp/${f}_}; echo "== $f ${v%.json} $($C run gpuexp/$f.tsr --backend cuda --no-reference --no-baseline --reps 30 --schedules $s 2>&1 | grep -E '^ *k0|rror' | head -2)"
  done
done
for f in c3_l1 c3_l3 c3_l2s; do echo "== check $f"; $C run gpuexp/$f.tsr --backend cuda --check --tf32 pytorch --reps 3 2>&1 | grep -E "verified|rror|mismatch|max" | head -3; done
M=smsp__inst_executed_op_shared_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,gpu__time_duration.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active
for v in old new; do echo "== ncu c3_l3 $v"; timeout 60 ncu --metrics $M --kernel-id :::1 $C run gpuexp/c3_l3.tsr --backend cuda --no-reference --no-baseline --reps 1 --schedules gpuexp/c3_l3_$v.json 2>&1 | grep -E "^\s+(smsp|l1tex|gpu__|sm__)" ; done
mkdir -p $OUT/tune
for f in c3_l3 c3_l4s; do timeout 100 $C tune gpuexp/$f.tsr --backend cuda --tf32 pytorch --top-k 24 --reps 10 --json --cache-dir /tmp/tc_$f --save-schedules $OUT/tune/$f.json > $OUT/tune/$f.out 2>&1; echo "== tune $f rc=$?"; python3 -c "
import json,sys
d=json.load(open('$OUT/tune/$f.out'))
for k in d['kernels']: print({x:k.get(x) for x in ('group','best_ms','candidates_measured','default_ms','model_pick_ms')})" 2>&1 | tail -3; done
timeout 280 python3 bench/gpu/pytorch_models.py --cli "$C" --models resnet50_b1,resnet50_b32 --torch --tf32 pytorch --work /tmp/pm --out $OUT/pm > $OUT/pm.log 2>&1; echo "pm rc=$?"; tail -4 $OUT/pm.log
