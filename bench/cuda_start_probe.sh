#!/usr/bin/env bash
# Issue 19: build bench/cuda_start_probe.cpp and run each order of CUDA's start steps in fresh
# processes, alternating, REPS times; print each step's median (ms) per order side by side.
# Usage: bench/cuda_start_probe.sh [REPS]   (on the GPU machine; needs nvcc's cudart and cuBLAS)
set -euo pipefail
reps=${1:-7}
here=$(cd "$(dirname "$0")" && pwd)
cuda=${CUDA_HOME:-/usr/local/cuda}
bin=$(mktemp -d)/cuda_start_probe
g++ -O2 -std=c++17 -I"$cuda/include" "$here/cuda_start_probe.cpp" -o "$bin" -L"$cuda/lib64" -lcudart -ldl \
  -Wl,-rpath,"$cuda/lib64"
log=$(mktemp)
orders="ctx-first libs-first blas-only"
for r in $(seq "$reps"); do
  for o in $orders; do
    "$bin" "$o" | sed "s/^/$o /" >> "$log"
  done
done
python3 - "$log" $orders <<'PYEOF'
import statistics, sys
log, orders = sys.argv[1], sys.argv[2:]
steps, vals = [], {}
for line in open(log):
    o, rest = line.split(" ", 1)
    name, ms = rest.rsplit(" ", 1)
    if name not in steps: steps.append(name)
    vals.setdefault((o, name), []).append(float(ms))
print(f"{'step (median ms of fresh processes)':36}" + "".join(f"{o:>12}" for o in orders))
for s in steps + ["start (driver to last load)"]:
    row = []
    for o in orders:
        if s.startswith("start"):
            keys = [k for k in steps if k.startswith(("load", "driver", "context"))]
            runs = list(zip(*[vals.get((o, k), []) for k in keys if (o, k) in vals]))
            v = statistics.median(sum(r) for r in runs) if runs else None
        else:
            v = statistics.median(vals[(o, s)]) if (o, s) in vals else None
        row.append(f"{v:12.1f}" if v is not None else f"{'-':>12}")
    print(f"{s:36}" + "".join(row))
PYEOF
