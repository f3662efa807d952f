B=/work/main/build/release/app/cli/tessera-cli
for m in $MODELS; do
 for tm in 2 4 8; do for th in 1 2 4; do for tw in 8 16 32; do
  $B compile $m.tsr --param k0.tile_m=$tm --param k0.tile_h=$th --param k0.tile_w=$tw --save-schedules $m.s.json >/dev/null 2>&1 || { echo "$m $tm $th $tw refused"; continue; }
  t=$($B run $m.tsr --backend cpu --threads 1 --no-baseline --no-tuned --no-reference --schedules $m.s.json 2>&1 | grep -E "^  k0" | awk '{print $2, $8}')
  echo "$m $tm $th $tw $t"
 done; done; done
 t=$($B run $m.tsr --backend cpu --threads 1 --no-baseline --no-tuned --no-reference 2>&1 | grep -E "^  k0" | awk '{print $2, $8}')
 echo "$m default $t"
done
