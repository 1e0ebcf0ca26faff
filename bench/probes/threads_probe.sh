#!/usr/bin/env bash
# bench/probes/threads_probe.c under the CPU library and under gpu-offload: T threads' dsymm calls
# at once, with thread staging off and on, with the line's holder serving waiting calls
# (GPU_OFFLOAD_LINE_SERVES=8), and the same calls from one thread; the GPU runs' summary lines on
# busy, staged and served calls, and the median phases of the staged run's GPU calls (trace).
# One GPU serving one call at a time gives T threads 1 / (the GPU's hold of a call) calls a second.
#   bench/probes/threads_probe.sh BUILD [N] [R] [T] [K]
set -uo pipefail
B=$(cd "${1:?usage: threads_probe.sh BUILD [N] [R] [T] [K]}" && pwd); n=${2:-956}; r=${3:-135}; t=${4:-16}; k=${5:-20}
here=$(cd "$(dirname "$0")" && pwd); w=$(mktemp -d)
ob=/usr/lib/x86_64-linux-gnu/openblas-pthread
cc -O2 -pthread "$here/threads_probe.c" -o "$w/probe" -L$ob -lopenblas -Wl,-rpath,$ob || exit 1
export OPENBLAS_NUM_THREADS=1  # each thread's call on one core, as inside an OpenMP loop
run() {  # label, threads, then gpu-offload's arguments (none: bare)
  local label=$1 th=$2; shift 2
  if [ $# -eq 0 ]; then printf "%-28s " "$label"; "$w/probe" "$n" "$r" "$th" "$k"; return; fi
  printf "%-28s " "$label"
  env "${envs[@]}" "$B/bin/gpu-offload" run "$@" -- "$w/probe" "$n" "$r" "$th" "$k" 2> "$w/err"
  grep -iE "busy|staged|GPU line|where calls ran|fell back|error" "$w/err" | sed 's/^/      /' | head -7
}
envs=(GPU_OFFLOAD_THREAD_STAGING=off)
run "bare, $t threads" "$t"
run "bare, 1 thread" 1
run "gpu, 1 thread" 1 --device gpu --summary
run "gpu, $t threads, staging off" "$t" --device gpu --summary
envs=(GPU_OFFLOAD_THREAD_STAGING=on)
run "gpu, $t threads, staging on" "$t" --device gpu --summary --trace "$w/t-on"
envs=(GPU_OFFLOAD_THREAD_STAGING=off)
run "auto, $t threads, staging off" "$t" --device auto --summary
envs=(GPU_OFFLOAD_THREAD_STAGING=on)
run "auto, $t threads, staging on" "$t" --device auto --summary
envs=(GPU_OFFLOAD_THREAD_STAGING=off GPU_OFFLOAD_LINE_SERVES=8)
run "gpu, $t threads, serving" "$t" --device gpu --summary
run "auto, $t threads, serving" "$t" --device auto --summary
if [ -d "$w/t-on" ]; then
  "$B/bin/gpu-offload" dump --csv "$w/t-on" > "$w/on.csv"
  echo "== medians of the staged run's GPU calls (bench/probes/phases.py --medians)"
  python3 "$here/phases.py" "$w/on.csv" dsymm --medians
fi
rm -rf "$w"
