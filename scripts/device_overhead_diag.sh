#!/usr/bin/env bash
# Why a below-threshold call costs more on the GPU machine: which libraries the benchmark binds,
# whether calls took the slow path (the summary counts only slow-path calls), and the clock source.
set -uo pipefail
OUT=${OUT:-/tmp/gofl-out}; mkdir -p "$OUT"; B=/tmp/gofl-build
cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGOFL_TESTS=OFF -DGOFL_CUDA=OFF > "$OUT/configure.log" 2>&1
ninja -C "$B" -j16 gpuoffload gpu-offload > "$OUT/build.log" 2>&1 || { tail -20 "$OUT/build.log"; exit 1; }
cc -O2 bench/overhead.c -o /tmp/ovh -lblas -llapack
echo "clocksource: $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null)"
ldd /tmp/ovh | grep -E "blas|lapack"; readlink -f /usr/lib/x86_64-linux-gnu/liblapack.so.3 /usr/lib/x86_64-linux-gnu/libblas.so.3
GPU_OFFLOAD_SUMMARY=1 LD_PRELOAD=$B/lib/libgpuoffload.so /tmp/ovh 200000 2>&1 | tail -12
for t in 1 16; do echo "OPENBLAS_NUM_THREADS=$t"; OPENBLAS_NUM_THREADS=$t bench/overhead.sh "$B" 1000000 | tail -4; done
