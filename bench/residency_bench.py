#!/usr/bin/env python3
"""Loops that hand the same unchanged operand to call after call, side by side in one run: the CPU
library, gpu-offload with residency off, with residency on, and the default (--device auto, residency on).

    python3 bench/residency_bench.py [--build build] [--n 8192] [--iters 20] [--only NAME[;NAME...]]
                                     [--columns cpu,off,on,auto] [--json FILE]

Each loop runs in a fresh process per column; it times each iteration's library call(s) (the
loop's own NumPy work, such as making X_i, is outside the timing) and reports the median iteration
after the first (steady state) and the loop's total (first iteration included, GPU start-up not:
the process starts the GPU before the loop in the gpu columns). Where the GPU ran only part of the loop
(auto, a first run: the GPU starts once the savings missed pay for it), it also reports the median once
on the GPU: every iteration after the first whose call ran there (gpu_offload_last_call), wherever the
later ones ran (a CPU probe included). Every column's
result is compared
with the CPU column's (relative difference). Figures are the calls themselves, not the program.
--columns picks the columns (cpu, off: residency off, on: residency on, auto); --json writes every
loop's per-iteration seconds per column.
"""

import argparse
import json
import math
import os
import signal
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# The child: one loop, its per-iteration seconds and a result to compare. A GPU start before the
# loop (a small product) keeps the start-up out of the gpu columns' loop times.
CHILD = r'''
import ctypes, json, sys, time
import numpy as np, scipy.linalg as sl
name, n, iters = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = np.random.default_rng(0)
w = rng.standard_normal((2048, 2048)); w @ w  # start-up and first-call costs before the loop
times, on_gpu = [], []
# Where the iteration's (last) call ran, as the preload library tells (None without it).
last_call = getattr(ctypes.CDLL(None), "gpu_offload_last_call", None)
def ran_on_gpu():
    if last_call is None:
        return None
    device = ctypes.c_int(-1)
    last_call(ctypes.byref(device), None, None)
    return device.value == 1
def timed(f):
    t0 = time.perf_counter(); r = f(); times.append(time.perf_counter() - t0); on_gpu.append(ran_on_gpu()); return r
if name in ("A @ X_i", "A @ (A @ X_i)", "rewrite A, then A @ X_i"):
    A = rng.standard_normal((n, n))
    for i in range(iters):
        X = rng.standard_normal((n, 256))
        if name.startswith("rewrite"):  # timed with the rewrite: write faults would show there
            Y = timed(lambda: (np.multiply(A, 1.0000001, out=A), A @ X)[1])
        else:
            Y = timed(lambda: A @ X if name != "A @ (A @ X_i)" else A @ (A @ X))
elif name.startswith(("lu_solve", "cho_solve")):
    M = rng.standard_normal((n, n)); S = M @ M.T + n * np.eye(n)
    # Fortran order, as LAPACK keeps factors: SciPy would otherwise copy a C-ordered factor every call.
    # S's factors interchange no rows (it is dominant); a general M's interchange almost every one.
    fac = (sl.lu_factor(M if "general" in name else S) if name.startswith("lu")
           else (np.asfortranarray(sl.cho_factor(S)[0]), False))
    # SciPy's own NaN check: cho_solve reads the whole factor (512 MB at n = 8192) every call,
    # lu_solve only the right-hand side.
    fin = "check_finite=False" not in name
    for i in range(iters):
        X = rng.standard_normal((n, 256))
        if "Fortran" in name:  # SciPy copies a C-ordered right-hand side into Fortran order every call
            X = np.asfortranarray(X)
        Y = timed(lambda: sl.lu_solve(fac, X, check_finite=fin) if name.startswith("lu")
                  else sl.cho_solve(fac, X, check_finite=fin))
elif name == "gemv A @ x":
    A = rng.standard_normal((n, n)); x = rng.standard_normal(n)
    for i in range(iters):
        x = timed(lambda: A @ x); x /= np.linalg.norm(x)
    Y = x
elif name == "block CG":
    M = rng.standard_normal((n, n)); A = M @ M.T / n + np.eye(n)
    B = rng.standard_normal((n, 16)); X = np.zeros_like(B); R = B.copy(); P = R.copy()
    for i in range(iters):
        AP = timed(lambda: A @ P)
        PtAP = P.T @ AP; alpha = np.linalg.solve(PtAP, P.T @ R)
        X += P @ alpha; R -= AP @ alpha
        beta = -np.linalg.solve(PtAP, AP.T @ R); P = R + P @ beta
    Y = X
else:
    raise SystemExit("unknown loop " + name)
print(json.dumps({"times": times, "on_gpu": on_gpu, "sum": float(np.abs(Y).sum()), "norm": float(np.linalg.norm(Y))}))
'''

LOOPS = [  # (name, n factor, iterations factor, goal: at least this many times the CPU, or None)
    ("A @ X_i", 1, 1, 36.0),
    ("lu_solve, fixed factors", 1, 1, 10.0),
    ("lu_solve, fixed factors, check_finite=False", 1, 1, 10.0),
    ("lu_solve, fixed factors, Fortran X, check_finite=False", 1, 1, 10.0),
    ("lu_solve, fixed general factors (rows interchanged), Fortran X, check_finite=False", 1, 1, None),
    ("A @ (A @ X_i)", 1, 1, None),
    ("cho_solve, fixed factor", 1, 1, None),
    ("cho_solve, fixed factor, Fortran X, check_finite=False", 1, 1, None),
    ("gemv A @ x", 2, 5, 20.0),
    ("block CG", 1, 1.5, None),
    ("rewrite A, then A @ X_i", 1, 1, None),
]
COLUMNS = [("cpu", ["--device", "cpu"]), ("gpu, residency off", ["--device", "gpu", "--residency", "off"]),
           ("gpu, residency on", ["--device", "gpu", "--residency", "on"]), ("auto (default)", [])]
COLUMN_KEYS = {"cpu": "cpu", "off": "gpu, residency off", "on": "gpu, residency on", "auto": "auto (default)"}


def run(build, name, n, iters, opts):
    tool = os.path.join(build, "bin", "gpu-offload")
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "loop.py")
        with open(script, "w") as f:
            f.write(CHILD)
        cmd = [tool, "run", "--summary", *opts, "--", sys.executable, script, name, str(n), str(iters)]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        return {"error": (p.stderr or p.stdout)[-600:]}
    out = json.loads(p.stdout.strip().splitlines()[-1])
    out["summary"] = [ln for ln in p.stderr.splitlines() if "residency:" in ln or "where calls ran" in ln]
    return out


def once_on_gpu(r):
    """The iterations after the first that ran on the GPU (that one pays the operation's first GPU call,
    as the first iteration does in the gpu columns); sets r["gpu_from"], the index of that first one
    (None when none ran there)."""
    flags = r.get("on_gpu") or []
    r["gpu_from"] = next((i for i, g in enumerate(flags) if g), None)
    return r["times"][r["gpu_from"] + 1:] if r["gpu_from"] is not None else []


def print_table(rows, columns=COLUMNS):
    print()
    print("| loop | n, iterations | " + " | ".join(c for c, _ in columns) + " | residency on vs CPU | goal |")
    print("|---|---|" + "---|" * len(columns) + "---|---|")
    for name, n, iters, goal, res in rows:
        cells = []
        for col, _ in columns:
            r = res.get(col, {})
            cells.append(f"{r['steady'] * 1e3:.2f} ms" if "steady" in r else ("failed" if "error" in r else "not run"))
        on, cpu = res.get("gpu, residency on", {}), res.get("cpu", {})
        ratio = cpu["steady"] / on["steady"] if "steady" in on and "steady" in cpu else float("nan")
        goal_s = f"≥ {goal:.0f}×: {'met' if ratio >= goal else 'missed'}" if goal and not math.isnan(ratio) else ""
        if name.startswith("rewrite"):
            off = res.get("gpu, residency off", {})
            if "steady" in off and "steady" in on:
                goal_s = f"on/off {on['steady'] / off['steady']:.3f} (≤ 1.05: {'met' if on['steady'] <= 1.05 * off['steady'] else 'missed'})"
        print(f"| {name} | {n}, {iters} | " + " | ".join(cells) + f" | {ratio:.1f}× | {goal_s} |")
    print("\nPer iteration: the median of the library calls of one iteration, after the first.", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--n", type=int, default=8192)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--only", default=None)
    ap.add_argument("--columns", default="cpu,off,on,auto", help="of " + ", ".join(COLUMN_KEYS))
    ap.add_argument("--json", help="also write every loop's per-iteration seconds here")
    a = ap.parse_args()
    keys = [c for c in a.columns.split(",") if c]
    if not keys or not set(keys) <= set(COLUMN_KEYS):
        raise SystemExit(f"--columns takes some of {', '.join(COLUMN_KEYS)}")
    columns = [c for c in COLUMNS if c[0] in {COLUMN_KEYS[k] for k in keys}]
    print(f"# {' '.join(sys.argv)}", flush=True)
    rows = []
    # A stage's timeout (SIGTERM) still prints the table of the rows measured so far.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("residency_bench: stopped by SIGTERM"))
    try:
        for name, nf, itf, goal in LOOPS:
            if a.only and name not in a.only.split(";"):
                continue
            n, iters = a.n * nf, int(a.iters * itf)
            res = {}
            rows.append((name, n, iters, goal, res))
            for col, opts in columns:
                res[col] = run(a.build, name, n, iters, opts)
                r = res[col]
                if "error" in r:
                    print(f"{name} [{col}] failed: {r['error']}", flush=True)
                    continue
                steady = statistics.median(r["times"][1:]) if len(r["times"]) > 1 else r["times"][0]
                r["steady"], r["total"] = steady, sum(r["times"])
                once = once_on_gpu(r)
                ref = res.get("cpu", {})
                r["diff"] = abs(r["norm"] - ref["norm"]) / ref["norm"] if "norm" in ref and ref["norm"] else float("nan")
                gpu_part = (f" (once on the GPU, from iteration {r['gpu_from'] + 1}: {statistics.median(once) * 1e3:.2f} ms)"
                            if once and r["gpu_from"] > 0 else "")
                print(f"{name} [{col}] n={n} x{iters}: per iteration {steady * 1e3:.2f} ms{gpu_part}, total "
                      f"{r['total']:.3f} s, vs cpu {r['diff']:.1e}; " + " | ".join(s.strip() for s in r["summary"]),
                      flush=True)
    finally:
        print_table(rows, columns)
        if a.json:
            with open(a.json, "w") as f:
                json.dump([{"name": name, "n": n, "iters": iters, "columns": res} for name, n, iters, _, res in rows], f,
                          indent=1)


if __name__ == "__main__":
    main()
