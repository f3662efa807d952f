#!/usr/bin/env bash
# Packs this machine's OpenMPI (Debian's: orterun, orted, libraries, MCA plugins, PMIx, help files) with every
# library they load except glibc and libstdc++, for a GPU server that has no MPI, so that
# `mpirun ... tessera-cli tune --distributed` runs there (docs/remote.md, "Tune with MPI").
#
#   scripts/openmpi-bundle.sh OUT.tar.gz
#   on the server:  mkdir -p DIR && tar -C DIR -xzf OUT.tar.gz && source DIR/env.sh && mpirun --version
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 OUT.tar.gz" >&2; exit 2; }
dest=$(realpath -m "$1")
for p in openmpi-bin libopenmpi3 openmpi-common libpmix2 libhwloc15; do
  dpkg -s "$p" >/dev/null 2>&1 || { echo "openmpi-bundle: $p is not installed (scripts/install-deps.sh)" >&2; exit 2; }
done
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
libdir=/usr/lib/x86_64-linux-gnu
skip='^(linux-vdso|ld-linux|libc\.so|libm\.so|libpthread|libdl\.so|librt\.so|libgcc_s|libstdc\+\+|libresolv)'

# The packages' own files, symbolic links kept, without documentation and Java.
files=$(dpkg -L openmpi-bin libopenmpi3 openmpi-common libpmix2 libhwloc15 | grep -v -e /share/doc -e /share/man -e java)
for f in $files; do
  if [ -f "$f" ] || [ -L "$f" ]; then mkdir -p "$out/root$(dirname "$f")" && cp -a "$f" "$out/root$f"; fi
done
# What those programs and plugins load from elsewhere (libevent, libfabric, UCX, ...).
for f in $files; do
  [ -f "$f" ] && file -L "$f" | grep -q ELF || continue
  while read -r name path; do
    if [[ $name =~ $skip ]] || [ ! -f "$path" ] || [ -e "$out/root$libdir/$name" ]; then continue; fi
    mkdir -p "$out/root$libdir" && cp -L "$path" "$out/root$libdir/$name"
  done < <(ldd "$f" 2>/dev/null | awk '/=>/ {print $1, $3}')
done

# OpenMPI finds its plugins and help files under OPAL_PREFIX, PMIx under PMIX_INSTALL_PREFIX.
cat >"$out/env.sh" <<'ENV'
# Source this to use the bundled OpenMPI: mpirun, the libraries, plugins and help files under this folder.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
usr=$here/root/usr
export OPAL_PREFIX=$usr PMIX_INSTALL_PREFIX=$usr/lib/x86_64-linux-gnu/pmix2 PATH=$usr/bin:$PATH
export LD_LIBRARY_PATH=$usr/lib/x86_64-linux-gnu:$usr/lib/x86_64-linux-gnu/openmpi/lib:$usr/lib/x86_64-linux-gnu/pmix2/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
ENV
ln -sf orterun "$out/root/usr/bin/mpirun"  # Debian points mpirun at it through /etc/alternatives
tar -C "$out" -czf "$dest" root env.sh
echo "openmpi-bundle: $dest ($(du -h "$dest" | cut -f1)); on the server: tar -xzf it, then source env.sh"
