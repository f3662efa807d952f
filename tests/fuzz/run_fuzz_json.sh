#!/bin/sh
# Runs one of the JSON fuzzers (fuzz_session, fuzz_overrides, fuzz_schedule) for a bounded time, seeded with its
# committed seeds (which include the inputs of crashes it found). Exit status is the fuzzer's (non-zero when it
# found a crash; the crashing input is written to the current folder as crash-*).
#   run_fuzz_json.sh FUZZER SEED_DIR DICT [SECONDS]
set -eu
fuzzer=$1
seeds=$2
dict=$3
seconds=${4:-30}
corpus=$(mktemp -d)
trap 'rm -rf "$corpus"' EXIT
cp "$seeds"/* "$corpus/"
"$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=16384 -print_final_stats=1 \
  -dict="$dict" "$corpus"
