#!/usr/bin/env bash
# dgemm_ from a C program (system OpenBLAS as the CPU library): CPU, NVBLAS (the CUDA toolkit's,
# tile 2048, with and without auto-pinning) and gpu-offload --device gpu, n = 2048 ... 16384.
# Usage: bench/nvblas_bench.sh [BUILD_DIR] [SIZES...]
# Environment: REPS (timed calls per size after the warm-ups; default 3, 1 from n = 16384), WARM (untimed
# calls before them, default 1; 3 times gpu-offload's residency steady state), COLUMNS (of
# "cpu nvblas nvblas-pin gpu-offload", default all), RAW=1 (also a line "raw COLUMN N t1 t2 ..." with
# every call's seconds, or "raw COLUMN N n/a WHY", "warm COLUMN N t1 ..." with the warm-ups' seconds,
# and "checksum COLUMN N X", the client's checksum of C:
# bench/headline.py reads those).
set -uo pipefail
build=$(readlink -f "${1:-build}"); shift || true
sizes=("$@"); [ ${#sizes[@]} -gt 0 ] || sizes=(2048 4096 8192 16384)
columns=" ${COLUMNS:-cpu nvblas nvblas-pin gpu-offload} "
work=$(mktemp -d)
cc -O2 "$(dirname "$0")/dgemm_client.c" -o "$work/dgemm" -L/usr/lib/x86_64-linux-gnu/openblas-pthread -lopenblas \
   -Wl,-rpath,/usr/lib/x86_64-linux-gnu/openblas-pthread || exit 1
cuda_lib=$(dirname "$(readlink -f "$(ls /usr/local/cuda/lib64/libnvblas.so* 2>/dev/null | head -1)")" 2>/dev/null)
openblas=$(ls /usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.so* 2>/dev/null | head -1)
conf() { printf 'NVBLAS_CPU_BLAS_LIB %s\nNVBLAS_GPU_LIST ALL\nNVBLAS_TILE_DIM 2048\n%s\n' "$openblas" "$1" > "$2"; }
conf "" "$work/nvblas.conf"; conf "NVBLAS_AUTOPIN_MEM_ENABLED" "$work/nvblas-pin.conf"
# One column at one size: the median (printed), and with RAW=1 every call's time on a line of its own.
t() {
  local col=$1 n=$2; shift 2
  case "$columns" in *" $col "*) ;; *) return ;; esac
  if [ "$col" != cpu ] && [ "$col" != gpu-offload ] && [ ! -e "$cuda_lib/libnvblas.so" ]; then
    [ "${RAW:-0}" = 1 ] && echo "raw $col $n n/a no libnvblas.so under /usr/local/cuda/lib64" >&3
    return
  fi
  local out; out=$("$@" 2>/dev/null)
  if [ "${RAW:-0}" = 1 ]; then
    local times; times=$(echo "$out" | sed -n 's/^times //p')
    echo "raw $col $n ${times:-n/a the run failed (exit status or output)}" >&3
    echo "$out" | sed -n "s/^warm \(.*\)$/warm $col $n \1/p" >&3
    echo "$out" | sed -n "s/.*checksum \(.*\)$/checksum $col $n \1/p" >&3
  fi
  echo "$out" | sed -n 's/.*median \([0-9.]*\) s.*/\1/p'
}
exec 3>&1
printf "%6s %10s %10s %14s %12s %10s %10s\n" n "CPU s" "NVBLAS s" "NVBLAS+pin s" "gpu-offload s" "vs NVBLAS" "vs +pin"
for n in "${sizes[@]}"; do
  reps=${REPS:-3}; [ -z "${REPS:-}" ] && [ "$n" -ge 16384 ] && reps=1
  cpu=$(t cpu "$n" "$work/dgemm" "$n" "$reps" "${WARM:-1}")
  nv=$(NVBLAS_CONFIG_FILE="$work/nvblas.conf" LD_PRELOAD="$cuda_lib/libnvblas.so" t nvblas "$n" "$work/dgemm" "$n" "$reps" "${WARM:-1}")
  nvp=$(NVBLAS_CONFIG_FILE="$work/nvblas-pin.conf" LD_PRELOAD="$cuda_lib/libnvblas.so" t nvblas-pin "$n" "$work/dgemm" "$n" "$reps" "${WARM:-1}")
  go=$(t gpu-offload "$n" "$build/bin/gpu-offload" run --device gpu -- "$work/dgemm" "$n" "$reps" "${WARM:-1}")
  ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0 && b > 0) printf "%.2fx", a / b; else printf "-" }'; }
  printf "%6s %10s %10s %14s %12s %10s %10s\n" "$n" "${cpu:--}" "${nv:--}" "${nvp:--}" "${go:--}" "$(ratio "$nv" "$go")" "$(ratio "$nvp" "$go")"
done
rm -rf "$work"
