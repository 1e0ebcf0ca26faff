#!/usr/bin/env bash
# Installs what building and testing gpu-offload needs on a fresh Debian/Ubuntu machine:
# the compilers and CMake, the real CPU libraries the tests run against (OpenBLAS, reference
# BLAS/LAPACK, FFTW), the runtimes whose calls are intercepted (R, Octave, gfortran, ScaLAPACK on
# Open MPI), GoogleTest, headless Chromium (the HTML report's test opens the page in it), clang with
# libFuzzer (the fuzz targets), and a Python virtual environment (.venv) with the NumPy and SciPy
# PyPI wheels and pytest.
# Safe to run again: it installs only what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(build-essential cmake ninja-build gfortran pkg-config python3 python3-venv
          libopenblas0-pthread libopenblas-dev libblas3 libblas-dev liblapack3 liblapack-dev
          libfftw3-dev libgtest-dev r-base-core octave
          chromium fonts-dejavu-core  # headless Chromium renders the HTML report in its test
          clang                       # the fuzz targets (tests/fuzz): clang's libFuzzer, ASan, UBSan
          openmpi-bin libopenmpi-dev libscalapack-openmpi-dev)  # a ScaLAPACK program under mpirun (tests/clients)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "setup: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# libFuzzer's runtime is a package of its own for clang's version (Debian 12: libclang-rt-14-dev).
if ! printf 'extern "C" int LLVMFuzzerTestOneInput(const char*, unsigned long) { return 0; }\n' |
     clang++ -x c++ -fsanitize=fuzzer,address,undefined -o /dev/null - 2>/dev/null; then
  major=$(clang++ -dumpversion | cut -d. -f1)
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "setup: installing libclang-rt-$major-dev (libFuzzer)"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "libclang-rt-$major-dev" >/dev/null
fi

# The tests compare against the wheels users really have: NumPy's bundled scipy-openblas64 and
# SciPy's scipy-openblas32, which is why they come from PyPI and not from Debian.
if [ ! -x .venv/bin/python3 ]; then
  python3 -m venv .venv
fi
.venv/bin/python3 -m pip install -q --upgrade pip >/dev/null
# pyFFTW: its wheel bundles an FFTW of its own, loaded privately (tests/python/test_fft_runtimes.py).
.venv/bin/python3 -m pip install -q numpy scipy pytest pyfftw
echo "setup: done ($(.venv/bin/python3 -c 'import numpy, scipy; print("numpy", numpy.__version__, "scipy", scipy.__version__)'))"
