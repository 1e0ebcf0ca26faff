#!/usr/bin/env bash
# dgemm_ from a C program (system OpenBLAS as the CPU library): CPU, NVBLAS (the CUDA toolkit's,
# tile 2048, with and without auto-pinning) and gpu-offload --device gpu, n = 2048 ... 16384.
# Usage: bench/nvblas_bench.sh [BUILD_DIR] [SIZES...]
set -uo pipefail
build=$(readlink -f "${1:-build}"); shift || true
sizes=("$@"); [ ${#sizes[@]} -gt 0 ] || sizes=(2048 4096 8192 16384)
work=$(mktemp -d)
cc -O2 "$(dirname "$0")/dgemm_client.c" -o "$work/dgemm" -L/usr/lib/x86_64-linux-gnu/openblas-pthread -lopenblas \
   -Wl,-rpath,/usr/lib/x86_64-linux-gnu/openblas-pthread || exit 1
cuda_lib=$(dirname "$(readlink -f "$(ls /usr/local/cuda/lib64/libnvblas.so* 2>/dev/null | head -1)")" 2>/dev/null)
openblas=$(ls /usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.so* 2>/dev/null | head -1)
conf() { printf 'NVBLAS_CPU_BLAS_LIB %s\nNVBLAS_GPU_LIST ALL\nNVBLAS_TILE_DIM 2048\n%s\n' "$openblas" "$1" > "$2"; }
conf "" "$work/nvblas.conf"; conf "NVBLAS_AUTOPIN_MEM_ENABLED" "$work/nvblas-pin.conf"
t() { "$@" 2>/dev/null | sed -n 's/.*median \([0-9.]*\) s.*/\1/p'; }
printf "%6s %10s %10s %14s %12s %10s %10s\n" n "CPU s" "NVBLAS s" "NVBLAS+pin s" "gpu-offload s" "vs NVBLAS" "vs +pin"
for n in "${sizes[@]}"; do
  reps=3; [ "$n" -ge 16384 ] && reps=1
  cpu=$(t "$work/dgemm" "$n" "$reps")
  nv=$(NVBLAS_CONFIG_FILE="$work/nvblas.conf" LD_PRELOAD="$cuda_lib/libnvblas.so" t "$work/dgemm" "$n" "$reps")
  nvp=$(NVBLAS_CONFIG_FILE="$work/nvblas-pin.conf" LD_PRELOAD="$cuda_lib/libnvblas.so" t "$work/dgemm" "$n" "$reps")
  go=$("$build/bin/gpu-offload" run --device gpu -- "$work/dgemm" "$n" "$reps" 2>/dev/null | sed -n 's/.*median \([0-9.]*\) s.*/\1/p')
  ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0 && b > 0) printf "%.2fx", a / b; else printf "-" }'; }
  printf "%6s %10s %10s %14s %12s %10s %10s\n" "$n" "${cpu:--}" "${nv:--}" "${nvp:--}" "${go:--}" "$(ratio "$nv" "$go")" "$(ratio "$nvp" "$go")"
done
