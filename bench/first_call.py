#!/usr/bin/env python3
"""What does the first GPU call of a routine cost, and can a small call made earlier pay it?

    python3 bench/first_call.py [--build build] [--n 1024] [--ops gemm,syrk,...] [--dtypes float32,...]

CUDA loads a routine's kernels at its first use (lazy module loading), and cuSOLVER sets up its
own state at a routine's first call. For each routine and type, three fresh processes under
--device gpu, each timing the traced call of size n twice:
  cold     the first call of the routine is the size-n one;
  warmed   one call of n = 64 comes first;
  eager    CUDA_MODULE_LOADING=EAGER (every kernel loaded at the start; float64 only).
Prints, per row, the first and second size-n call, the first's excess, and each run's start-up.
"""
import argparse
import csv
import io
import os
import subprocess
import sys
import tempfile

from auto_sweep import startup_paid

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORKER = r"""
import sys
import numpy as np
from scipy.linalg import blas, lapack
op, dt, n, warm = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
p = {"float32": "s", "float64": "d", "complex128": "z"}[dt]
rng = np.random.default_rng(0)
def mat(n):
    m = rng.standard_normal((n, n))
    if dt == "complex128":
        m = m + 1j * rng.standard_normal((n, n))
    return np.asfortranarray(m.astype(dt))
def call(n):
    a = mat(n); b = mat(n)
    # Only where it is used: NumPy makes it with a traced syrk (real) or gemm (complex) of size n,
    # which would count as the first call of those routines and load kernels for the others.
    spd = np.asfortranarray(a @ a.conj().T + n * np.eye(n, dtype=dt)) if op in ("trsm", "potrf", "syevd") else None
    if op == "gemm": getattr(blas, p + "gemm")(1.0, a, b)
    elif op == "syrk": getattr(blas, p + "syrk")(1.0, a)
    elif op == "trsm": getattr(blas, p + "trsm")(1.0, spd, b, lower=1)
    elif op == "getrf": getattr(lapack, p + "getrf")(a)
    elif op == "gesv": getattr(lapack, p + "gesv")(a, b[:, :64])
    elif op == "potrf": getattr(lapack, p + "potrf")(spd, lower=1)
    elif op == "syevd": (lapack.dsyevd if p == "d" else lapack.ssyevd if p == "s" else lapack.zheevd)(spd)
    elif op == "gesdd": getattr(lapack, p + "gesdd")(a)
if warm < 0:  # the GPU started by another routine (cgemm: no precision of the rows), then -warm ms of other work
    import time
    c = np.ones((64, 64), dtype=np.complex64, order="F"); blas.cgemm(1.0, c, c)
    time.sleep(-warm / 1000)
elif warm:
    call(warm)
call(n); call(n)
"""
NAMES = {"syevd": {"complex128": "zheevd"}}
PREC = {"float32": "s", "float64": "d", "complex128": "z"}


def routine_name(op, dt):
    """The traced operation the worker's `op` in type `dt` calls ("dgemm", "zheevd")."""
    return NAMES.get(op, {}).get(dt, PREC[dt] + op)


def size_n_calls(dump_csv, name, n):
    """The application's own calls of `name` at size n in `gpu-offload dump --csv` output, in order
    (not nested in another routine, not workspace queries)."""
    return [r for r in csv.DictReader(io.StringIO(dump_csv))
            if r["op"] == name and r["nested"] == "0" and r["query"] == "0" and int(r["m"]) == n]


def run(cli, op, dt, n, warm, env):
    with tempfile.TemporaryDirectory() as td:
        w = os.path.join(td, "w.py")
        open(w, "w").write(WORKER)
        trace = os.path.join(td, "t")
        p = subprocess.run([cli, "run", "--device", "gpu", "--trace", trace, "--summary", "--", sys.executable, w, op, dt,
                            str(n), str(warm)], capture_output=True, text=True, env=env)
        if p.returncode != 0:
            return None, None, p.stderr[-300:]
        d = subprocess.run([cli, "dump", "--csv", trace], capture_output=True, text=True, check=True).stdout
    name = routine_name(op, dt)
    rows = size_n_calls(d, name, n)
    start = startup_paid(p.stderr) or float("nan")
    if len(rows) < 2:
        return None, start, f"{len(rows)} traced calls of {name} n={n}"
    return [int(r["duration_ns"]) / 1e9 for r in rows[:2]] + [rows[0]["device"]], start, ""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--n", type=int, default=1024)
    ap.add_argument("--ops", default="gemm,syrk,trsm,getrf,gesv,potrf,syevd,gesdd")
    ap.add_argument("--dtypes", default="float32,float64,complex128")
    a = ap.parse_args()
    cli = os.path.join(a.build, "bin", "gpu-offload")
    base = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD" and not k.startswith("GPU_OFFLOAD_")}
    print(f"n = {a.n}; seconds of the traced size-n call, first and second; excess = first - second")
    print(f"{'op':<6} {'dtype':<10} {'variant':<7} {'first':>9} {'second':>9} {'excess':>9} {'start-up':>9}")
    total = {}
    for op in a.ops.split(","):
        for dt in a.dtypes.split(","):
            for variant in ("cold", "warmed", "eager"):
                if variant == "eager" and dt != "float64":
                    continue
                env = dict(base, CUDA_MODULE_LOADING="EAGER") if variant == "eager" else base
                t, start, err = run(cli, op, dt, a.n, 64 if variant == "warmed" else 0, env)
                if t is None:
                    print(f"{op:<6} {dt:<10} {variant:<7} failed: {err}")
                    continue
                ex = t[0] - t[1]
                total.setdefault(variant, [0.0, 0])
                total[variant][0] += ex
                total[variant][1] += 1
                print(f"{op:<6} {dt:<10} {variant:<7} {t[0]:>9.5f} {t[1]:>9.5f} {ex:>9.5f} {start:>9.3f}"
                      + ("" if t[2] == "gpu" else f"  (ran on {t[2]})"), flush=True)
    for v, (s, k) in total.items():
        print(f"total excess of the first call, {v}: {s:.3f} s over {k} rows")


if __name__ == "__main__":
    main()
