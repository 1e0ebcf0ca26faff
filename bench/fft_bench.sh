#!/usr/bin/env bash
# FFTW against FFTW through gpu-offload (bench/fft_bench.c), side by side in one process, copies
# included: the issue #18 table under --device gpu, then --device auto on small transforms (which
# must stay on FFTW) and on one large one (which must go to the GPU).
# Usage: bench/fft_bench.sh [BUILD_DIR] [THREADS]
set -uo pipefail
build=${1:-build}
threads=${2:-16}
cli="$build/bin/gpu-offload"
bin=$(mktemp -d)/fft_bench
if ! cc -O2 "$(dirname "$0")/fft_bench.c" -o "$bin" -lfftw3 -ldl -lm; then
  echo "FAIL: cannot build bench/fft_bench.c (FFTW headers: libfftw3-dev)"; exit 1
fi
for l in libfftw3_threads.so.3 libfftw3_omp.so.3; do
  if ldconfig -p | grep -q "$l"; then echo "FFTW threads library: $l"; else echo "FFTW threads library: $l MISSING"; fi
done
echo "== --device gpu: FFTW with $threads threads against cuFFT (copies included)"
"$cli" run --device gpu --summary -- "$bin" --threads "$threads" --reps ${FFT_REPS:-3} ${FFT_ONLY:+--only "$FFT_ONLY"}
rc=$?
echo "== --device auto: small transforms stay on FFTW (column 'ran': cpu)"
"$cli" run --summary -- "$bin" --threads "$threads" --reps 20 --small || rc=1
echo "== --device auto: a large transform goes to the GPU (column 'ran': gpu)"
"$cli" run --summary -- "$bin" --threads "$threads" --reps 5 --only "c2c 3D 256^3" || rc=1
exit $rc
