#!/usr/bin/env bash
# The sweep of bench/auto_sweep.py (n <= MAXN) as a second run, with the GPU's start begun beside the calls
# at the first decided call (GPU_OFFLOAD_START_EARLY=1) and in the first call predicted to gain (0), in alternating processes,
# each from the same history (one first run's), all against one best plan (the cpu run and the per-call
# minimum of two gpu runs). Prints each run's ratio to the best plan and what it paid for the start.
#
#   [PY=python3] bench/probes/start_early_ab.sh BUILD_DIR [PAIRS] [MAXN]   (on the GPU machine)
# With OUT set, the runs and their logs go to $OUT/start-early-runs.tar.gz (one file: the device tool
# brings back at most eight).
set -euo pipefail
B=$(cd "${1:?usage: bench/probes/start_early_ab.sh BUILD_DIR [PAIRS] [MAXN]}" && pwd); pairs=${2:-3}; top=${3:-2048}
S=$(mktemp -d)/start-early; mkdir -p "$S"
sweep=("${PY:-python3}" bench/auto_sweep.py --build "$B" --max-n "$top")
XDG_CACHE_HOME=$S/none "${sweep[@]}" --modes cpu --save "$S/cpu" > "$S/cpu.log"
for i in 0 1; do XDG_CACHE_HOME=$S/none "${sweep[@]}" --modes gpu --save "$S/gpu$i" > "$S/gpu$i.log"; done
common=(--load "$S/cpu" --gpu-min "$S/gpu0,$S/gpu1" --modes auto)
show() {  # NAME: one line from its --json
  python3 -c "import json; d = json.load(open('$S/$1.json')); print(f'$1: auto {d[\"auto_s\"]:.3f} s (start paid {d[\"auto_start_s\"]:.3f} s) / best plan {d[\"best_plan_s\"]:.3f} s = {d[\"auto_vs_best_plan\"]:.3f}')"
}
XDG_CACHE_HOME=$S/first "${sweep[@]}" "${common[@]}" --json "$S/first.json" > "$S/first.log"; show first
for r in $(seq "$pairs"); do
  for v in 1 0; do
    rm -rf "$S/cache"; cp -a "$S/first" "$S/cache"  # the first run's history, the same for each
    XDG_CACHE_HOME=$S/cache "${sweep[@]}" "${common[@]}" --set GPU_OFFLOAD_START_EARLY=$v --save "$S/second$r-$v" \
      --json "$S/second$r-$v.json" > "$S/second$r-$v.log"
    show "second$r-$v"
  done
done
rm -rf "$S/cache"
if [ -n "${OUT:-}" ]; then tar czf "$OUT/start-early-runs.tar.gz" -C "$S" . && echo "runs: $OUT/start-early-runs.tar.gz"; fi
