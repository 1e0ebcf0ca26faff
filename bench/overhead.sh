#!/usr/bin/env bash
# Prints the time gpu-offload adds to a call below the work threshold, bare (no library) against
# preloaded, --summary and --trace (goal: <= 10 ns per call each). With --summary or --trace those
# calls are counted (src/preload/counted.h) after the first 64 of each call site and size class.
# Each column is the median over RUNS runs of the program, each run the best of 7 loops of ITERATIONS
# calls. Usage: bench/overhead.sh [BUILD_DIR] [ITERATIONS] [RUNS]   (BLAS: the system's libblas.so.3)
set -euo pipefail
build=${1:-build}
iters=${2:-1000000}
runs=${3:-5}
lib=$(readlink -f "$build/lib/libgpuoffload.so")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bin=$work/overhead
cc -O2 "$(dirname "$0")/overhead.c" -o "$bin" -lblas -llapack -lfftw3
# One column: RUNS runs, then per call the median of the runs' ns/call.
column() {
  local name=$1; shift
  for r in $(seq "$runs"); do
    rm -rf "$work/trace"
    env "$@" "$bin" "$iters" 2>/dev/null | tail -n +2 > "$work/col_$name.$r"
  done
  cat "$work/col_$name".* | awk '{ label=substr($0,1,28); v[label]=v[label] " " substr($0,29)+0; if (!(label in seen)) { seen[label]=1; order[++n]=label } }
    END { for (i=1; i<=n; ++i) { m=split(v[order[i]], a, " "); for (x=1; x<=m; ++x) for (y=x+1; y<=m; ++y) if (a[y] < a[x]) { t=a[x]; a[x]=a[y]; a[y]=t }
                                 printf "%s%.2f\n", order[i], (m % 2) ? a[(m+1)/2] : (a[m/2] + a[m/2+1]) / 2 } }' > "$work/col_$name"
}
column bare -u LD_PRELOAD
column preloaded LD_PRELOAD="$lib"
column summary LD_PRELOAD="$lib" GPU_OFFLOAD_SUMMARY=1
column trace LD_PRELOAD="$lib" GPU_OFFLOAD_TRACE="$work/trace"
echo "gpu-offload overhead below the threshold, ns per call (median of $runs runs, each the best of 7 loops of $iters calls;"
echo "$(nproc) cores; BLAS: $(readlink -f /usr/lib/x86_64-linux-gnu/libblas.so.3); LAPACK: $(readlink -f /usr/lib/x86_64-linux-gnu/liblapack.so.3))"
paste "$work/col_bare" "$work/col_preloaded" "$work/col_summary" "$work/col_trace" | awk -F'\t' '
  BEGIN { printf "%-28s %8s %10s %10s %10s %12s %12s\n", "call", "bare", "preloaded", "--summary", "--trace", "summary adds", "trace adds" }
  { label=substr($1,1,28); b=substr($1,29)+0; p=substr($2,29)+0; s=substr($3,29)+0; t=substr($4,29)+0
    printf "%-28s %8.2f %10.2f %10.2f %10.2f %12.2f %12.2f\n", label, b, p, s, t, s-b, t-b }'
