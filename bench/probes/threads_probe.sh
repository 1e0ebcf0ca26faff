#!/usr/bin/env bash
# bench/probes/threads_probe.c under the CPU library and under gpu-offload: T threads' dsymm calls
# at once, with thread staging off and on, with the line's holder serving waiting calls
# (GPU_OFFLOAD_LINE_SERVES=8), with both (the holder runs staged calls from their threads' pinned
# buffers), and the same calls from one thread; the GPU runs' summary lines on busy, staged and
# served calls (the "GPU line" gives the hold of a call and its handover), and the median phases of
# each traced variant's GPU calls.
# One GPU serving one call at a time gives T threads 1 / (the GPU's hold of a call) calls a second.
#   bench/probes/threads_probe.sh BUILD [N] [R] [T] [K]
set -uo pipefail
B=$(cd "${1:?usage: threads_probe.sh BUILD [N] [R] [T] [K]}" && pwd); n=${2:-956}; r=${3:-135}; t=${4:-16}; k=${5:-20}
here=$(cd "$(dirname "$0")" && pwd); w=$(mktemp -d)
ob=${OPENBLAS_DIR:-/usr/lib/x86_64-linux-gnu/openblas-pthread}
cc -O2 -pthread "$here/threads_probe.c" -o "$w/probe" -L$ob -lopenblas -Wl,-rpath,$ob || exit 1
export OPENBLAS_NUM_THREADS=1  # each thread's call on one core, as inside an OpenMP loop
run() {  # label, threads, then gpu-offload's arguments (none: bare)
  local label=$1 th=$2; shift 2
  if [ $# -eq 0 ]; then printf "%-40s " "$label"; "$w/probe" "$n" "$r" "$th" "$k"; return; fi
  printf "%-40s " "$label"
  env "${envs[@]}" "$B/bin/gpu-offload" run "$@" -- "$w/probe" "$n" "$r" "$th" "$k" 2> "$w/err"
  grep -iE "busy|staged|GPU line|where calls ran|fell back|error" "$w/err" | sed 's/^/      /' | head -7
}
envs=(GPU_OFFLOAD_THREAD_STAGING=off)
run "bare, $t threads" "$t"
run "bare, 1 thread" 1
run "gpu, 1 thread" 1 --device gpu --summary
# name: the settings of each variant of the GPU runs
variants=("staging off:GPU_OFFLOAD_THREAD_STAGING=off" "staging on:GPU_OFFLOAD_THREAD_STAGING=on"
          "serving:GPU_OFFLOAD_THREAD_STAGING=off GPU_OFFLOAD_LINE_SERVES=8"
          "staging auto, serving:GPU_OFFLOAD_THREAD_STAGING=auto GPU_OFFLOAD_LINE_SERVES=8")
for i in "${!variants[@]}"; do
  read -r -a envs <<< "${variants[$i]#*:}"
  run "gpu, $t threads, ${variants[$i]%%:*}" "$t" --device gpu --summary --trace "$w/t$i"
done
for i in "${!variants[@]}"; do
  read -r -a envs <<< "${variants[$i]#*:}"
  run "auto, $t threads, ${variants[$i]%%:*}" "$t" --device auto --summary
done
echo "== medians of each traced variant's GPU calls (bench/probes/phases.py --medians; a staged call's copy in"
echo "   and copy out include its thread's own copies into and out of its pinned buffer, outside the GPU's hold)"
for i in "${!variants[@]}"; do
  [ -d "$w/t$i" ] || continue
  "$B/bin/gpu-offload" dump --csv "$w/t$i" > "$w/t$i.csv"
  printf "%s\n" "-- ${variants[$i]%%:*}"
  python3 "$here/phases.py" "$w/t$i.csv" dsymm --medians | tail -1
done
rm -rf "$w"
