#!/usr/bin/env python3
"""From Python, end to end: NumPy, SciPy as usually called and SciPy called the fast way, on the CPU
and under gpu-offload --device gpu, side by side in one run.

    python3 bench/python_e2e.py [--build build] [--sizes 4096,8192] [--cpu-slow-max-n 4096] [--full]

Per size, one process per device runs every case (CPU: plain Python, no library; GPU: under
`gpu-offload run --device gpu --trace`), after an untimed warm-up at n = 256 that pays the GPU's
start-up. The inputs are C-ordered, as NumPy makes them. Each variant's call is timed from Python;
the inputs it destroys (overwrite_a) are made again before each repetition, outside the timing:
  numpy    numpy.linalg.<f>(A, ...)
  scipy    scipy.linalg.<f>(A, ...)                       (copies A to Fortran order, checks for NaN)
  fast     scipy.linalg.<f>(F, ..., overwrite_a=True, check_finite=False), F = np.asfortranarray(A)
           made once outside the timing, as a program would keep its arrays
`in LAPACK` is the GPU run's time inside the LAPACK calls of the fast variant, read from its trace:
what the GPU gave; the rest of a variant's time is converting around the calls.
Repetitions: the best of 2 at n <= 4096, one run above and for svd and lstsq (seconds each, to keep
the run near six minutes on the H200); the CPU's svd and lstsq above --cpu-slow-max-n are left out
unless --full (each takes minutes there).
"""

import argparse
import csv
import io
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CASES = ["solve", "cholesky", "eigh", "svd", "lstsq"]
VARIANTS = ["numpy", "scipy", "fast"]
SLOW_ON_CPU = {"svd", "lstsq"}

# The worker: runs in the measured process (plain, or under the library), prints one JSON line.
WORKER = r'''
import json, sys, time
import numpy as np, scipy.linalg as sl

n, reps, cases = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3].split(",")

def inputs(case, n, rng):
    A = rng.standard_normal((n, n))
    if case in ("cholesky", "eigh"):
        A = A @ A.T + n * np.eye(n)  # symmetric positive definite
    return A, rng.standard_normal(n)

def call(case, variant, A, b):
    if variant == "numpy":
        f = {"solve": lambda: np.linalg.solve(A, b), "cholesky": lambda: np.linalg.cholesky(A),
             "eigh": lambda: np.linalg.eigh(A), "svd": lambda: np.linalg.svd(A),
             "lstsq": lambda: np.linalg.lstsq(A, b, rcond=None)}[case]
    elif variant == "scipy":
        f = {"solve": lambda: sl.solve(A, b), "cholesky": lambda: sl.cholesky(A), "eigh": lambda: sl.eigh(A),
             "svd": lambda: sl.svd(A), "lstsq": lambda: sl.lstsq(A, b)}[case]
    else:
        kw = dict(overwrite_a=True, check_finite=False)
        f = {"solve": lambda: sl.solve(A, b, overwrite_b=True, **kw), "cholesky": lambda: sl.cholesky(A, **kw),
             "eigh": lambda: sl.eigh(A, **kw), "svd": lambda: sl.svd(A, **kw),
             "lstsq": lambda: sl.lstsq(A, b, overwrite_b=True, **kw)}[case]
    return f()

def timed(case, variant, A0, b0, reps):
    best, window = float("inf"), None
    for _ in range(reps):
        A = np.asfortranarray(A0) if variant == "fast" else A0.copy()
        b = b0.copy()
        t0 = time.monotonic_ns()
        call(case, variant, A, b)
        t1 = time.monotonic_ns()
        if (t1 - t0) * 1e-9 < best:
            best, window = (t1 - t0) * 1e-9, (t0, t1)
    return best, window

rng = np.random.default_rng(0)
for case in cases:  # warm-up: the GPU's start-up and each routine's first call, untimed
    A, b = inputs(case, 256, rng)
    for v in ("numpy", "scipy", "fast"):
        timed(case, v, A, b, 1)
out = {}
for case in cases:
    A, b = inputs(case, n, rng)
    for v in ("numpy", "scipy", "fast"):
        s, w = timed(case, v, A, b, 1 if case in ("svd", "lstsq") else reps)
        out[case + "/" + v] = {"s": s, "window": w}
print("RESULT " + json.dumps(out), flush=True)
'''


def run_worker(argv, n, reps, cases, env=None):
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(WORKER)
        script = f.name
    try:
        p = subprocess.run(argv + [sys.executable, script, str(n), str(reps), ",".join(cases)], capture_output=True,
                           text=True, env=env)
    finally:
        os.unlink(script)
    for line in p.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    sys.stderr.write(f"worker failed (exit {p.returncode}) for n={n} {argv}:\n{p.stderr[-3000:]}\n")
    return {}


def lapack_seconds(cli, trace_dir, windows):
    """Per window (t0, t1): the seconds of top-level LAPACK calls that started inside it, from the trace."""
    text = subprocess.run([cli, "dump", "--csv", trace_dir], capture_output=True, text=True).stdout
    lapack = {"gesv", "getrf", "getrs", "potrf", "syevd", "syevr", "syev", "gesdd", "gesvd", "gelsd", "gels", "geqrf",
              "ormqr", "trtrs", "gecon", "pocon", "lange", "lansy"}
    calls = [(int(r["t_start_ns"]), int(r["duration_ns"])) for r in csv.DictReader(io.StringIO(text))
             if r["depth"] == "0" and r["query"] == "0" and r["routine"] in lapack]
    return {key: sum(d for t, d in calls if w and w[0] <= t <= w[1]) * 1e-9 for key, w in windows.items()}


def fmt(s):
    return "" if s is None else f"{s:.3f}" if s < 10 else f"{s:.2f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--sizes", default="4096,8192")
    ap.add_argument("--cpu-slow-max-n", type=int, default=4096, help="largest n for the CPU's svd and lstsq")
    ap.add_argument("--full", action="store_true", help="run the CPU's svd and lstsq at every size")
    ap.add_argument("--json", help="also write the results here")
    a = ap.parse_args()
    cli = os.path.join(a.build, "bin", "gpu-offload")
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    results = {}
    t_start = time.time()
    for n in [int(x) for x in a.sizes.split(",")]:
        reps = 2 if n <= 4096 else 1
        cpu_cases = [c for c in CASES if a.full or c not in SLOW_ON_CPU or n <= a.cpu_slow_max_n]
        cpu = run_worker([], n, reps, cpu_cases, env)
        with tempfile.TemporaryDirectory() as td:
            gpu = run_worker([cli, "run", "--device", "gpu", "--trace", td, "--"], n, reps, CASES, env)
            windows = {k: v["window"] for k, v in gpu.items() if k.endswith("/fast")}
            in_lapack = lapack_seconds(cli, td, windows) if windows else {}
        results[n] = {"cpu": cpu, "gpu": gpu, "in_lapack": in_lapack, "reps": reps}
        print(f"# n = {n} done after {time.time() - t_start:.0f} s", file=sys.stderr, flush=True)

    cols = ["case", "n"] + [f"{v} {d}" for v in VARIANTS for d in ("cpu", "gpu")] + ["in LAPACK gpu", "fast gpu/cpu"]
    rows = []
    for n, r in results.items():
        for case in CASES:
            cells = [case, str(n)]
            for v in VARIANTS:
                for d in ("cpu", "gpu"):
                    e = r[d].get(f"{case}/{v}")
                    cells.append(fmt(e["s"]) if e else "-")
            cells.append(fmt(r["in_lapack"].get(f"{case}/fast")))
            c, g = r["cpu"].get(f"{case}/fast"), r["gpu"].get(f"{case}/fast")
            cells.append(f"{c['s'] / g['s']:.1f}x" if c and g and g["s"] > 0 else "-")
            rows.append(cells)
    widths = [max(len(x) for x in col) for col in zip(cols, *rows)]
    print("Python end to end, seconds per call (numpy: numpy.linalg; scipy: scipy.linalg as usually called; fast: "
          "scipy.linalg on Fortran-ordered arrays, overwrite_a=True, check_finite=False)")
    print("reps: best of " + ", ".join(f"{r['reps']} at n={n}" for n, r in results.items()) + " (svd, lstsq: 1)" +
          f"; '-': not run (the CPU's svd/lstsq above n={a.cpu_slow_max_n}: --full runs them)")
    print("  ".join(c.rjust(w) if i > 1 else c.ljust(w) for i, (c, w) in enumerate(zip(cols, widths))))
    for cells in rows:
        print("  ".join(c.rjust(w) if i > 1 else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths))))
    print(f"command: {' '.join([os.path.relpath(sys.argv[0], ROOT)] + sys.argv[1:])}; {time.time() - t_start:.0f} s")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0 if all(r["gpu"] and r["cpu"] for r in results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
