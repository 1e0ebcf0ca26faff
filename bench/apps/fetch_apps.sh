#!/usr/bin/env bash
# Puts the real applications of bench/apps/apps_bench.py into .apps/ (git-ignored), for a GPU machine
# that has no package registry: carry .apps in the device run; bench/apps/unpack_apps.sh unpacks it there.
#
#   bench/apps/fetch_apps.sh [kit ...]      kits: sim (Quantum ESPRESSO pw.x, NWChem), pyscf
#
# sim: the Debian packages of NWChem 7.0.2 (nwchem-openmpi, its basis library nwchem-data), Open MPI
# and ScaLAPACK, FFTW and libpython3.11 (NWChem links it), and from quantum-espresso 6.7 only pw.x and
# the silicon pseudopotential (the package is 48 MB, its pw.x 9 MB): 30 MB in all, under the
# device's 64 MiB carry limit with the working tree. pyscf: the PySCF 2.14 and h5py wheels for
# CPython 3.12 (the GPU machine's Python), repacked with xz into 35 MB: a kit of its own, carried in
# a run of its own.
#
# Run it on a Debian/Ubuntu machine with apt and pip. The packages are this machine's release (Debian
# 12, glibc 2.36); the GPU machine is Ubuntu 24.04 (glibc 2.39), whose base system (libc, libstdc++,
# zlib, libudev, libexpat) and OpenBLAS (libblas.so.3, liblapack.so.3) the programs use there.
set -euo pipefail
cd "$(dirname "$0")/../.."
kits=("${@:-sim}")
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
for kit in "${kits[@]}"; do
  case $kit in
  sim)
    d=.apps/sim; rm -rf "$d"; mkdir -p "$d"
    (cd "$d" && apt-get download nwchem-openmpi nwchem-data openmpi-bin openmpi-common libopenmpi3 \
       libscalapack-openmpi2.2 libpmix2 libhwloc15 libevent-core-2.1-7 libevent-pthreads-2.1-7 libmunge2 \
       libgfortran5 libquadmath0 libfftw3-double3 libpython3.11)
    (cd "$tmp" && apt-get download quantum-espresso quantum-espresso-data)
    dpkg -x "$tmp"/quantum-espresso_*.deb "$tmp/qe"
    dpkg -x "$tmp"/quantum-espresso-data_*.deb "$tmp/qed"
    mkdir -p "$tmp/kit/bin" "$tmp/kit/pseudo"
    cp "$tmp/qe/usr/bin/pw.x" "$tmp/kit/bin/"
    cp "$tmp/qed/usr/share/espresso/pseudo/Si.pz-vbc.UPF" "$tmp/kit/pseudo/"
    tar -C "$tmp/kit" -cJf "$d/qe-pw.tar.xz" .
    ;;
  pyscf)
    d=.apps/pyscf; rm -rf "$d"; mkdir -p "$d" "$tmp/whl" "$tmp/site"
    pip download --no-deps --only-binary=:all: --python-version 3.12 --platform manylinux2014_x86_64 \
      -d "$tmp/whl" pyscf==2.14.0 h5py==3.14.0
    for w in "$tmp"/whl/*.whl; do (cd "$tmp/site" && python3 -m zipfile -e "$w" .); done
    # xz packs the wheels' 58 MB (zip) into 35 MB, which fits beside the working tree.
    tar -C "$tmp/site" -cf - . | xz -T0 -9 > "$d/pyscf-site.tar.xz"
    ;;
  *) echo "fetch_apps: unknown kit '$kit' (sim, pyscf)"; exit 2 ;;
  esac
  echo "fetch_apps: $kit: $(ls "$d" | wc -l) files, $(du -sh "$d" | cut -f1) in $d"
done
