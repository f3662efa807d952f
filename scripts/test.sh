#!/usr/bin/env bash
# One command from a fresh Debian 12 machine to a passing test suite: install what is missing, build the Release
# configuration and run every test, build the core with AddressSanitizer and UBSan and run the core tests there,
# then run each fuzzer for a bounded time.
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh || exit 2
export QT_QPA_PLATFORM=offscreen
jobs="$(nproc)"
fuzz_seconds="${TESSERA_FUZZ_SECONDS:-60}"
total_passed=0
total_failed=0
status=0

# run_ctest PRESET [ARGS...]: runs ctest and adds its counts to the totals.
run_ctest() {
  local log
  log="$(mktemp)"
  ctest --preset "$@" -j "$jobs" 2>&1 | tee "$log"
  local rc=${PIPESTATUS[0]}
  local line
  line="$(grep -E 'tests passed, [0-9]+ tests failed out of [0-9]+' "$log" | tail -1)"
  if [ -n "$line" ]; then
    local failed out
    failed="$(sed -E 's/.* ([0-9]+) tests failed out of ([0-9]+).*/\1/' <<<"$line")"
    out="$(sed -E 's/.* tests failed out of ([0-9]+).*/\1/' <<<"$line")"
    total_passed=$((total_passed + out - failed))
    total_failed=$((total_failed + failed))
  fi
  rm -f "$log"
  [ "$rc" -eq 0 ] || status=1
}

echo "== Release build and the whole suite"
cmake --preset release >/dev/null && cmake --build --preset release -j "$jobs" || exit 2
run_ctest release

echo "== Debug build with AddressSanitizer and UBSan: core tests"
cmake --preset debug >/dev/null && cmake --build --preset debug -j "$jobs" || exit 2
ASAN_OPTIONS=detect_leaks=1 run_ctest debug -L core

echo "== Fuzzing (fuzz_onnx and fuzz_tsr ${fuzz_seconds}s each, the JSON targets half as long; clang + libFuzzer + ASan/UBSan)"
cmake --preset fuzz -DTESSERA_FUZZ_SECONDS="$fuzz_seconds" >/dev/null || exit 2
fuzz_targets="$(cmake --build build/fuzz --target help | sed -nE 's/^(fuzz_[a-z_]+):.*/\1/p' | sort -u)"
if [ -n "$fuzz_targets" ]; then
  cmake --build build/fuzz -j "$jobs" --target $fuzz_targets || exit 2
  run_ctest fuzz -L fuzz
fi

echo "$total_passed passed, $total_failed failed"
exit $status
