#!/usr/bin/env bash
# Downloads the Debian packages that run a ScaLAPACK program under Open MPI (scripts/device_run.sh
# stage `mpi`) into .debs/ (git-ignored), for machines that have no package registry: carry .debs
# in the device run, and the stage unpacks them with `dpkg -x` into a folder of their own.
#
# Run it on a Debian/Ubuntu machine with apt; the packages are this machine's release. Risk: the
# GPU machine is Ubuntu 24.04 (glibc 2.39); packages of Debian 12 (glibc 2.36) run there as long as
# they need nothing newer than its base system, which this list's libraries do not (they need libc,
# libgcc, zlib and libudev, all in the Ubuntu image). Only the listed packages come along: libc,
# libstdc++, zlib, libudev and the BLAS/LAPACK (the image's OpenBLAS provides libblas.so.3 and
# liblapack.so.3) are the image's own.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  openmpi-bin openmpi-common libopenmpi3  # mpirun (orterun), its components, libmpi
  libopenmpi-dev                          # mpi.h, to build the program there
  libscalapack-openmpi2.2                 # ScaLAPACK with BLACS, for Open MPI
  libpmix2 libhwloc15 libevent-core-2.1-7 libevent-pthreads-2.1-7 libmunge2  # Open MPI's launch
  libgfortran5 libquadmath0               # ScaLAPACK is Fortran
)
mkdir -p .debs
cd .debs
rm -f ./*.deb
apt-get download "${packages[@]}"
echo "fetch_mpi_debs: $(ls ./*.deb | wc -l) packages, $(du -sh . | cut -f1) in .debs/ ($(. /etc/os-release && echo "$PRETTY_NAME"))"
