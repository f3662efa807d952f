#!/usr/bin/env bash
# packaging_deb: build the Debian package from BUILD_DIR into a temporary folder and check its file list.
# Exit 77 (CTest: skipped) with a reason when cpack or dpkg-deb is missing.
set -u
build_dir=$1
gui=${2:-gui}
for tool in cpack dpkg-deb; do
  if ! command -v "$tool" >/dev/null; then
    echo "SKIP: $tool is not installed"
    exit 77
  fi
done
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
if ! cpack --config "$build_dir/CPackConfig.cmake" -G DEB -B "$out" >"$out/cpack.log" 2>&1; then
  cat "$out/cpack.log"
  echo "FAIL: cpack failed"
  exit 1
fi
deb=$(ls "$out"/*.deb 2>/dev/null | head -1)
if [ -z "$deb" ]; then
  echo "FAIL: cpack made no .deb in $out"
  exit 1
fi
listing=$(dpkg-deb -c "$deb")
expected=(./usr/bin/tessera-cli
          ./usr/bin/tessera-cpu-worker
          ./usr/share/applications/io.tessera.Tessera.desktop
          ./usr/share/icons/hicolor/scalable/apps/tessera.svg
          ./usr/share/metainfo/io.tessera.Tessera.metainfo.xml
          ./usr/share/mime/packages/tessera.xml
          ./usr/share/tessera/samples/mlp.tsr
          ./usr/share/doc/tessera/README.md)
[ "$gui" = gui ] && expected+=(./usr/bin/tessera)
missing=0
for path in "${expected[@]}"; do
  if ! grep -qE "[[:space:]]$path\$" <<<"$listing"; then
    echo "FAIL: $path is not in $(basename "$deb")"
    missing=1
  fi
done
echo "$(basename "$deb"): $(grep -c . <<<"$listing") entries, $(stat -c %s "$deb") bytes"
dpkg-deb -f "$deb" Package Version Architecture Depends Recommends Suggests
# What the backends need at run time and no binary links: the compiler the cpu backend runs, NVIDIA's driver.
recommends=$(dpkg-deb -f "$deb" Recommends)
suggests=$(dpkg-deb -f "$deb" Suggests)
grep -qw "g++" <<<"$recommends" || { echo "FAIL: Recommends ('$recommends') does not name g++"; missing=1; }
grep -qw "libcuda1" <<<"$suggests" || { echo "FAIL: Suggests ('$suggests') does not name libcuda1"; missing=1; }
# Installed, it runs: the package's files unpacked into an empty root, its CLI runs a sample on cpu and verifies.
root="$out/root"
dpkg-deb -x "$deb" "$root"
if ! run=$(TESSERA_CACHE_DIR="$out/cache" "$root/usr/bin/tessera-cli" run "$root/usr/share/tessera/samples/mlp.tsr" \
              --backend cpu --no-baseline --reps 1 2>&1); then
  echo "$run"
  echo "FAIL: the unpacked package's tessera-cli could not run samples/mlp.tsr on cpu"
  missing=1
elif ! grep -q "outputs verified" <<<"$run"; then
  echo "$run"
  echo "FAIL: the unpacked package's run of samples/mlp.tsr on cpu was not verified"
  missing=1
else
  echo "unpacked package: $(grep '^backend' <<<"$run"); outputs verified"
fi
exit $missing
