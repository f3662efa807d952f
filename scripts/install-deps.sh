#!/usr/bin/env bash
# Installs the Debian 12 packages Tessera needs, only those that are missing (sudo when not root).
set -euo pipefail

packages=(
  cmake ninja-build g++ pkg-config
  qt6-base-dev qt6-svg-dev qt6-charts-dev libqt6opengl6-dev libgl-dev
  libgraphviz-dev libspdlog-dev libfmt-dev nlohmann-json3-dev libcli11-dev
  libonnx-dev libprotobuf-dev protobuf-compiler
  clang libclang-rt-14-dev
  qt6-websockets-dev libopenmpi-dev openmpi-bin
)

missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
echo "install-deps: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
