#!/usr/bin/env bash
# A kept A times a new X each call (NumPy's A @ X), in fresh processes taking turns: the sum over k
# split into pieces that multiply as they arrive (blas3.cpp gemm_k_pieces, the default) or not
# (GPU_OFFLOAD_GEMM_K_PIECES=1). Each process times its A @ X calls itself (the program's view, after
# the first three, which start the GPU and keep A) and is traced (the library call's own duration);
# per variant, over all its rounds: the median, 10th and 90th percentile of both.
# Usage: bench/probes/k_pieces_ab.sh BUILD_DIR [ROUNDS] [N] [WIDTH] [ITERS]   (on the GPU machine;
# K_PIECES_LOG=FILE keeps every call's times)
set -euo pipefail
B=${1:?build dir}; rounds=${2:-4}; n=${3:-8192}; w=${4:-256}; iters=${5:-30}
PY=${PYTHON:-python3}
prog='
import sys, time, numpy as np
n, w, it = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
r = np.random.default_rng(0); A = r.standard_normal((n, n)); ms = []
for i in range(it):
    X = r.standard_normal((n, w)); t0 = time.perf_counter(); Y = A @ X; ms.append((time.perf_counter() - t0) * 1e3)
print(" ".join(f"{t:.3f}" for t in ms[3:]))'
variants=("pieces off:GPU_OFFLOAD_GEMM_K_PIECES=1" "pieces (default):GPU_OFFLOAD_GEMM_K_PIECES=8")
# Each process is traced too: the library call's own duration (the trace's) beside the program's view.
log=${K_PIECES_LOG:-$(mktemp)}; : > "$log"
T=$(mktemp -d)
for r in $(seq "$rounds"); do
  for v in "${variants[@]}"; do
    rm -rf "$T/t"
    prog_ms=$(env "${v#*:}" "$B/bin/gpu-offload" run --device gpu --trace "$T/t" -- "$PY" -c "$prog" "$n" "$w" "$iters")
    call_ms=$("$B/bin/gpu-offload" dump --csv "$T/t" | awk -F, 'NR > 1 && $4 ~ /gemm/ { n++; if (n > 3) printf "%.3f ", $24 / 1e6 }')
    echo "${v%%:*}|$prog_ms|$call_ms" >> "$log"
  done
done
"$PY" - "$log" "$n" "$w" <<'PYEOF'
import sys, statistics
rows = {}
for line in open(sys.argv[1]):
    name, prog, call = line.rstrip("\n").split("|")
    r = rows.setdefault(name, ([], []))
    r[0].extend(float(t) for t in prog.split()); r[1].extend(float(t) for t in call.split())
print(f"A ({sys.argv[2]}^2, kept) @ X ({sys.argv[2]} x {sys.argv[3]}), ms a call: as the program times it, and the library call (trace)")
print(f"{'variant':20} {'calls':>6} {'median':>8} {'p10':>8} {'p90':>8} {'call med':>9} {'call p10':>9} {'call p90':>9}")
for name, (t, c) in rows.items():
    q, qc = statistics.quantiles(t, n=10), statistics.quantiles(c, n=10)
    print(f"{name:20} {len(t):6d} {statistics.median(t):8.3f} {q[0]:8.3f} {q[-1]:8.3f} "
          f"{statistics.median(c):9.3f} {qc[0]:9.3f} {qc[-1]:9.3f}")
PYEOF
