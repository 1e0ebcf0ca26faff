#!/usr/bin/env bash
# Large FFTs on the GPU with their copies overlapped with cuFFT (src/cuda/fft.cpp, pieces: the
# default) and whole (GPU_OFFLOAD_FFT_PIECES=1), in fresh processes taking turns: bench/fft_bench.c's
# table under --device gpu (2D 8192^2, 3D 512^3 c2c and r2c, batched 1D 65536 x 1024), each execute
# after the first (which makes the cuFFT plans) timed by the program. Per variant and transform, over
# all rounds: the median, min and max in ms. FFTW itself plans for FFT_PLAN_S seconds (default 2 here:
# its times are not the point). VARIANTS: other name:VAR=value,VAR=value settings to take turns.
# Usage: bench/probes/fft_pieces_ab.sh BUILD_DIR [ROUNDS] [REPS]   (on the GPU machine)
set -euo pipefail
B=${1:?build dir}; rounds=${2:-2}; reps=${3:-5}
bin=$(mktemp -d)/fft_bench
cc -O2 "$(dirname "$0")/../fft_bench.c" -o "$bin" -lfftw3 -ldl -lm
log=$(mktemp)
for r in $(seq "$rounds"); do
  for v in ${VARIANTS:-whole:GPU_OFFLOAD_FFT_PIECES=1 pieces:GPU_OFFLOAD_FFT_PIECES=16}; do
    env $(tr , ' ' <<< "${v#*:}") FFT_PLAN_S=${FFT_PLAN_S:-2} "$B/bin/gpu-offload" run --device gpu -- "$bin" --threads "$(nproc)" \
      --reps "$reps" --times | sed "s/^/${v%%:*}|/" >> "$log"
  done
done
python3 - "$log" <<'PYEOF'
import statistics, sys
rows, case = {}, None
for line in open(sys.argv[1]):
    v, _, text = line.rstrip("\n").partition("|")
    if text[:4] in ("c2c ", "r2c "):
        case = text[:22].strip()
    elif text.startswith("times gpu-offload") and case:
        rows.setdefault((case, v), []).extend(float(x) * 1e3 for x in text.split()[2:][1:])
    elif text.startswith("FAIL"):
        print(v, text)
print(f"{'transform':22} {'variant':8} {'median ms':>10} {'min':>8} {'max':>8}  n")
for (case, v), t in sorted(rows.items()):
    print(f"{case:22} {v:8} {statistics.median(t):10.2f} {min(t):8.2f} {max(t):8.2f}  {len(t)}")
PYEOF
grep -h "PASS\|FAIL" "$log" | sort | uniq -c
