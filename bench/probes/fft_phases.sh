#!/usr/bin/env bash
# Where a large FFT's time goes on the GPU: bench/fft_bench.c's complex-double N^3 transform (--cube N)
# under --device gpu, traced, each execute with its phases (bench/probes/phases.py: copy in and out
# with their rates, the kernels' summed time, the rest), in pieces (the default) and whole
# (GPU_OFFLOAD_FFT_PIECES=1); then the pinned link rates of this run (bench/ceilings.py, PyTorch) that
# the headline's bound divides by. VARIANTS: other name:VAR=value,VAR=value settings to compare.
#   bench/probes/fft_phases.sh BUILD [N] [REPS]   (on the GPU machine)
set -uo pipefail
B=$(cd "${1:?usage: fft_phases.sh BUILD [N] [REPS]}" && pwd); n=${2:-512}; reps=${3:-5}
here=$(cd "$(dirname "$0")" && pwd); w=$(mktemp -d)
cc -O2 "$here/../fft_bench.c" -o "$w/fft_bench" -lfftw3 -ldl -lm || exit 1
for v in ${VARIANTS:-pieces:GPU_OFFLOAD_FFT_PIECES=16 whole:GPU_OFFLOAD_FFT_PIECES=1}; do
  echo "== ${v%%:*} (${v#*:}): $n^3 c2c, $reps executes, the first makes the cuFFT plans"
  env $(tr , ' ' <<< "${v#*:}") FFT_PLAN_S=1 "$B/bin/gpu-offload" run --device gpu --trace "$w/t-${v%%:*}" -- "$w/fft_bench" \
    --threads "$(nproc)" --reps "$reps" --cube "$n" | grep -E "^c2c|PASS|FAIL"
  "$B/bin/gpu-offload" dump --csv "$w/t-${v%%:*}" > "$w/${v%%:*}.csv"
  python3 "$here/phases.py" "$w/${v%%:*}.csv" | awk 'NR == 1 || $3 == "gpu"'
done
echo "== pinned rates (bench/ceilings.py)"; python3 "$here/../ceilings.py" 2>&1 | tail -1
rm -rf "$w"
