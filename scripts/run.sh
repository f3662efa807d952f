#!/usr/bin/env bash
# One command from a fresh Debian 12 machine to the window: install what is missing, build, open the default sample.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release
sample="${1:-samples/transformer_block.tsr}"
if [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ] && [ "${QT_QPA_PLATFORM:-}" != "offscreen" ]; then
  cat <<TXT
No display found, so the window cannot open here. To run headless:
  QT_QPA_PLATFORM=offscreen build/release/app/gui/tessera $sample     # the window, rendered offscreen
  build/release/app/cli/tessera-cli info $sample                        # the same core on the command line
  build/release/app/cli/tessera-cli run $sample --backend reference
TXT
  exit 0
fi
exec build/release/app/gui/tessera "$sample"
