#!/bin/sh
# Runs fuzz_tsr for a bounded time, seeded with the samples, small seeds using every feature of the form and the
# committed regression inputs. Exit status is the fuzzer's (non-zero when it found a crash; the crashing input
# is written to the current folder as crash-*).
#   run_fuzz_tsr.sh FUZZER SOURCE_DIR [SECONDS]
set -eu
fuzzer=$1
source=$2
seconds=${3:-60}
corpus=$(mktemp -d)
trap 'rm -rf "$corpus"' EXIT
for f in "$source"/samples/*.tsr "$source"/tests/fuzz/tsr_seeds/* "$source"/tests/fuzz/tsr_regressions/*; do
  if [ -f "$f" ]; then cp "$f" "$corpus/"; fi
done
"$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=8192 -print_final_stats=1 \
  -dict="$source/tests/fuzz/tsr.dict" "$corpus"
