#!/usr/bin/env bash
# A start beside the calls (--device auto, GPU_OFFLOAD_START_AHEAD=1) in programs that end at various points of it, and in one that
# forks after it: each prints its summary's start lines and exits cleanly (exit 0). Usage: BUILD [PYTHON]
B=${1:-build}; PY=${2:-$(command -v python3)}
export GPU_OFFLOAD_START_AHEAD=1
for k in 13 15 17 19 40; do
  echo "-- $k products of n = 3000, then the end"
  "$B/bin/gpu-offload" run --summary -- "$PY" -c '
import sys, numpy as np
a = np.ones((3000, 3000))
for i in range(int(sys.argv[1])): a @ a' "$k" 2>&1 | grep -E "GPU start-up|while the GPU|where calls ran"
  echo "exit ${PIPESTATUS[0]}"
done
echo "-- 30 products, a fork (the child multiplies on the CPU), 10 more"
"$B/bin/gpu-offload" run --summary -- "$PY" -c '
import os, numpy as np
a = np.ones((3000, 3000))
for i in range(30): a @ a
pid = os.fork()
if pid == 0:
    b = a @ a; os._exit(0 if b[0, 0] == 3000 else 3)
_, st = os.waitpid(pid, 0); print("child exit", st >> 8)
for i in range(10): a @ a' 2>&1 | grep -E "GPU start-up|while the GPU|where calls ran|child exit"
echo "exit ${PIPESTATUS[0]}"
