#!/usr/bin/env bash
# CTest bench_check: the bench's case models parse and type-check (`tessera-cli info`), and its Python and
# JavaScript files are well-formed. No timing: the suites themselves are run by hand (bench/README.md).
#   usage: bench/check.sh TESSERA_CLI
set -u
cli=$1
here=$(cd "$(dirname "$0")" && pwd)
fail=0
for f in "$here"/cases/*.tsr; do
  if ! out=$("$cli" info "$f" 2>&1); then
    echo "FAIL: $f does not load: $out"
    fail=1
  fi
done
if command -v python3 >/dev/null; then
  python3 - "$here"/*.py "$here"/gpu/*.py <<'PY' || fail=1
import ast, sys
for path in sys.argv[1:]:
    with open(path) as f:
        ast.parse(f.read(), path)
PY
else
  echo "skipped: no python3 to check the bench scripts"
fi
if command -v node >/dev/null; then
  for f in "$here"/cpu/*.js; do node --check "$f" || fail=1; done
else
  echo "skipped: no node to check bench/cpu/*.js"
fi
[ $fail = 0 ] && echo "bench: $(ls "$here"/cases/*.tsr | wc -l) case models load, scripts parse"
exit $fail
