#!/usr/bin/env bash
# Prints the time gpu-offload adds to a call below the work threshold (goal: <= 10 ns per call).
# Usage: bench/overhead.sh [BUILD_DIR] [ITERATIONS]     (BLAS: the system's libblas.so.3)
set -euo pipefail
build=${1:-build}
iters=${2:-2000000}
lib=$(readlink -f "$build/lib/libgpuoffload.so")
bin=$(mktemp -d)/overhead
cc -O2 "$(dirname "$0")/overhead.c" -o "$bin" -lblas -llapack
env -u LD_PRELOAD "$bin" "$iters" > "$bin.plain"
LD_PRELOAD="$lib" "$bin" "$iters" > "$bin.preload"
echo "gpu-offload overhead below the threshold (best of 7 runs of $iters calls; $(nproc) cores; BLAS: $(readlink -f /usr/lib/x86_64-linux-gnu/libblas.so.3))"
paste "$bin.plain" "$bin.preload" | awk -F'\t' 'NR==1 { printf "%-28s %12s %14s %10s\n", "call", "plain ns", "preloaded ns", "added ns"; next }
  { label=substr($1,1,28); p=substr($1,29)+0; q=substr($2,29)+0; printf "%-28s %12.2f %14.2f %10.2f\n", label, p, q, q-p }'
# What recording costs a ?copy (NumPy makes one per row of every LAPACK operand): every call is then
# described, fingerprinted and written as one trace record. Fewer calls: each is a 232-byte record.
copy_iters=$(( iters / 20 > 0 ? iters / 20 : 1 ))
tdir=$(mktemp -d)
GPU_OFFLOAD_TRACE="$tdir" GPU_OFFLOAD_DEVICE=cpu LD_PRELOAD="$lib" "$bin" "$copy_iters" copy > "$bin.traced"
GPU_OFFLOAD_SUMMARY=1 GPU_OFFLOAD_DEVICE=cpu LD_PRELOAD="$lib" "$bin" "$copy_iters" copy 2>/dev/null > "$bin.summary"
rm -rf "$tdir"
echo "a ?copy while calls are recorded (best of 7 runs of $copy_iters calls):"
paste "$bin.plain" "$bin.summary" "$bin.traced" | awk -F'\t' 'NR==1 { printf "%-28s %12s %14s %10s\n", "call", "plain ns", "--summary ns", "--trace ns"; next }
  /copy/ { label=substr($1,1,28); printf "%-28s %12.2f %14.2f %10.2f\n", label, substr($1,29)+0, substr($2,29)+0, substr($3,29)+0 }'
# What the calls reach: a LAPACK of its own (reference dgetrf calls dgetrf2, dtrsm_ and dgemm_ back
# through the exported names, each once more through the library) or the BLAS's own getrf.
echo "LAPACK: $(readlink -f /usr/lib/x86_64-linux-gnu/liblapack.so.3)"
cli="$build/bin/gpu-offload"
if [ -x "$cli" ]; then
  echo "the calls of a run of 1000 iterations, nested ones included (with --summary every call is counted):"
  "$cli" run --device cpu --summary -- "$bin" 1000 2>&1 >/dev/null | grep -vE '^\s*$' | head -12
fi
