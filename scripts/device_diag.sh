#!/usr/bin/env bash
# Diagnostics on the GPU machine: a backtrace of a crashing GPU test, the suite's counts without it,
# and the per-call GPU phases (copy in, compute, copy out) of NumPy calls from a trace.
# Usage: scripts/device_diag.sh [GTEST_FILTER_OF_CRASHING_TEST]
set -uo pipefail
OUT=${OUT:-/tmp/gofl-out}; mkdir -p "$OUT"
B=/tmp/gofl-build; PY=$(command -v python3)
cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGOFL_PYTHON="$PY" > "$OUT/configure.log" 2>&1 || { tail -30 "$OUT/configure.log"; exit 1; }
ninja -C "$B" -j16 > "$OUT/build.log" 2>&1 || { grep -E "error" -A3 "$OUT/build.log" | head -40; exit 1; }
crash=${1:-}
if [ -n "$crash" ]; then
  echo "== backtrace of $crash"
  timeout 120 cuda-gdb -q -batch -ex "set environment LD_PRELOAD=$B/lib/libgpuoffload.so" \
    -ex "set environment GPU_OFFLOAD_DEVICE=gpu" -ex run -ex bt -ex "info registers rip" \
    --args "$B/bin/gpu_tests" --gtest_filter="$crash" > "$OUT/backtrace.log" 2>&1
  grep -E "^#|signal|SIG|FAILED|OK \]" "$OUT/backtrace.log" | head -40
  echo "== GPU suite without it"
  LD_PRELOAD=$B/lib/libgpuoffload.so GPU_OFFLOAD_DEVICE=gpu timeout 240 "$B/bin/gpu_tests" --gtest_filter="-$crash" > "$OUT/gpu_tests.log" 2>&1
  echo "exit $?"; grep -E "^\[  (PASSED|FAILED) |^\[==========\]|FAILED  \]" "$OUT/gpu_tests.log" | head -30
fi
echo "== NumPy calls on the GPU: phases per call (n = 4096)"
export OPENBLAS_NUM_THREADS=16
T=$(mktemp -d)
"$B/bin/gpu-offload" run --device gpu --trace "$T" -- "$PY" -c '
import numpy as np, time
r = np.random.default_rng(0); n = 4096; a = r.standard_normal((n, n)); s = a @ a.T + n * np.eye(n)
for name, f in (("cholesky", lambda: np.linalg.cholesky(s)), ("solve", lambda: np.linalg.solve(s, a)),
                ("eigh", lambda: np.linalg.eigh(s)), ("matmul", lambda: a @ a.T.copy())):
    for rep in range(2):
        t0 = time.perf_counter(); f(); print(name, rep, round(time.perf_counter() - t0, 4), flush=True)'
"$B/bin/gpu-offload" dump --csv "$T" | "$PY" -c '
import csv, sys
for r in csv.DictReader(sys.stdin):
    if r["nested"] == "0" and r["query"] == "0":
        print(r["op"], r["m"], r["n"], r["k"], r["device"], r["reason"], "dur", round(int(r["duration_ns"]) / 1e9, 4),
              "in", r["copy_in_s"], "compute", r["compute_s"], "out", r["copy_out_s"], "status", r["gpu_status"])'
