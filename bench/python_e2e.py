#!/usr/bin/env python3
"""From Python, end to end: NumPy, SciPy as usually called and SciPy called the fast way, on the CPU
and under gpu-offload --device gpu, side by side in one run.

    python3 bench/python_e2e.py [--build build] [--sizes 4096,8192] [--cpu-slow-max-n 4096] [--full]
                                [--variants numpy,scipy,fast] [--cases solve,...] [--split] [--budget SECONDS]
                                [--reps N] [--runs cpu,gpu] [--json FILE]

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
--split: the library's split copies (GPU_OFFLOAD_SPLIT_COPIES, src/preload/copy_split.h) off and on:
  cpu        plain Python, no library
  cpu split  under gpu-offload run --device cpu (copies split; svd and lstsq above --cpu-slow-max-n
             are left out: their LAPACK calls take 98% of the time there)
  gpu unsplit, gpu
             under --device gpu --trace with GPU_OFFLOAD_SPLIT_COPIES=off, and on (the default)
  copies unsplit, copies split
             seconds in the variant's top-level ?copy calls, from those two traces
--reps N: N repetitions of every case (svd and lstsq too) at every size; --runs cpu: no GPU run.
--budget: stop starting cases after this many seconds and print what was measured (a run cut
short leaves '-' where it did not get to); the CPU runs of the largest size go last.
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

n, reps, cases, variants = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3].split(","), sys.argv[4].split(",")
every = len(sys.argv) > 5 and sys.argv[5] == "every"  # --reps: that many of every case, svd and lstsq too

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
    best, window, times = float("inf"), None, []
    for _ in range(reps):
        A = np.asfortranarray(A0) if variant == "fast" else A0.copy()
        b = b0.copy()
        t0 = time.monotonic_ns()
        call(case, variant, A, b)
        t1 = time.monotonic_ns()
        times.append((t1 - t0) * 1e-9)
        if (t1 - t0) * 1e-9 < best:
            best, window = (t1 - t0) * 1e-9, (t0, t1)
    return best, window, times

rng = np.random.default_rng(0)
for case in cases:  # warm-up: the GPU's start-up and each routine's first call, untimed
    A, b = inputs(case, 256, rng)
    for v in variants:
        timed(case, v, A, b, 1)
for case in cases:
    A, b = inputs(case, n, rng)
    for v in variants:
        s, w, t = timed(case, v, A, b, 1 if case in ("svd", "lstsq") and not every else reps)
        print("RESULT " + json.dumps({case + "/" + v: {"s": s, "window": w, "times": t}}), flush=True)
'''


def run_worker(argv, n, reps, cases, variants, env=None, timeout=None, every=False):
    """The cases' results {case/variant: {s (the best), window (the best's), times (every repetition)}};
    those finished in time when it is cut short. every: `reps` repetitions of svd and lstsq too."""
    if not cases or (timeout is not None and timeout <= 0):
        return {}
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(WORKER)
        script = f.name
    p = subprocess.Popen(argv + [sys.executable, script, str(n), str(reps), ",".join(cases), ",".join(variants)]
                         + (["every"] if every else []),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, 9)  # the worker and, under gpu-offload run, the Python it started
        out, err = p.communicate()
        sys.stderr.write(f"# n={n} {' '.join(argv[:4])}: out of time, cut short\n")
    finally:
        os.unlink(script)
    res = {}
    for line in out.splitlines():
        if line.startswith("RESULT "):
            res.update(json.loads(line[7:]))
    if p.returncode not in (0, -9) or not res:
        sys.stderr.write(f"worker failed (exit {p.returncode}) for n={n} {argv}:\n{err[-3000:]}\n")
    return res


LAPACK = {"gesv", "getrf", "getrs", "potrf", "syevd", "syevr", "syev", "gesdd", "gesvd", "gelsd", "gels", "geqrf",
          "ormqr", "trtrs", "gecon", "pocon", "lange", "lansy"}


def seconds_in(cli, trace_dir, windows, routines):
    """Per window (t0, t1): the seconds of top-level calls of `routines` that started inside it, from the trace."""
    text = subprocess.run([cli, "dump", "--csv", trace_dir], capture_output=True, text=True).stdout
    calls = [(int(r["t_start_ns"]), int(r["duration_ns"])) for r in csv.DictReader(io.StringIO(text))
             if r["depth"] == "0" and r["query"] == "0" and r["routine"] in routines]
    return {key: sum(d for t, d in calls if w and w[0] <= t <= w[1]) * 1e-9 for key, w in windows.items()}


def gpu_run(cli, n, reps, cases, variants, env, timeout, every=False):
    """One traced --device gpu worker: its results and, per variant window, seconds in LAPACK and in ?copy."""
    with tempfile.TemporaryDirectory() as td:
        res = run_worker([cli, "run", "--device", "gpu", "--trace", td, "--"], n, reps, cases, variants, env, timeout,
                         every)
        windows = {k: v["window"] for k, v in res.items()}
        lapack = seconds_in(cli, td, windows, LAPACK) if windows else {}
        copies = seconds_in(cli, td, windows, {"copy"}) if windows else {}
    return res, lapack, copies


def fmt(s):
    return "" if s is None else f"{s:.3f}" if s < 10 else f"{s:.2f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--sizes", default="4096,8192")
    ap.add_argument("--cpu-slow-max-n", type=int, default=4096, help="largest n for the CPU's svd and lstsq")
    ap.add_argument("--full", action="store_true", help="run the CPU's svd and lstsq at every size")
    ap.add_argument("--variants", default=",".join(VARIANTS), help="of numpy, scipy, fast")
    ap.add_argument("--cases", default=",".join(CASES), help="of " + ", ".join(CASES))
    ap.add_argument("--split", action="store_true", help="the library's split copies off and on (see above)")
    ap.add_argument("--budget", type=float, help="seconds after which no case starts")
    ap.add_argument("--json", help="also write the results here")
    ap.add_argument("--reps", type=int, help="repetitions of every case at every size, svd and lstsq too (default: "
                    "the best of 2 at n <= 4096, one run above and for svd and lstsq)")
    ap.add_argument("--runs", default="cpu,gpu", help="of cpu, gpu: which devices run (cpu alone: no GPU here)")
    a = ap.parse_args()
    variants = [v for v in a.variants.split(",") if v]
    assert variants and set(variants) <= set(VARIANTS), f"--variants takes some of {VARIANTS}"
    cases = [c for c in CASES if c in a.cases.split(",")]
    assert cases and set(a.cases.split(",")) <= set(CASES), f"--cases takes some of {CASES}"
    cli = os.path.join(a.build, "bin", "gpu-offload")
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    env.pop("GPU_OFFLOAD_SPLIT_COPIES", None)
    sizes = [int(x) for x in a.sizes.split(",")]
    t_start = time.time()
    left = lambda: None if a.budget is None else a.budget - (time.time() - t_start)  # noqa: E731
    runs_asked = [x for x in a.runs.split(",") if x]
    assert runs_asked and set(runs_asked) <= {"cpu", "gpu"}, "--runs takes some of cpu, gpu"
    every = a.reps is not None
    results = {n: {"reps": a.reps if every else 2 if n <= 4096 else 1} for n in sizes}

    def cases_for(n, full):
        return [c for c in cases if full or c not in SLOW_ON_CPU or n <= a.cpu_slow_max_n]

    # The GPU runs first, the CPU's last (the largest size's svd and lstsq take minutes there).
    for n, r in results.items():
        if "gpu" not in runs_asked:
            r["gpu"], r["in_lapack"], r["copies"] = {}, {}, {}
            continue
        r["gpu"], r["in_lapack"], r["copies"] = gpu_run(cli, n, r["reps"], cases, variants, env, left(), every)
        if a.split:
            r["gpu unsplit"], _, r["copies unsplit"] = gpu_run(cli, n, r["reps"], cases, variants,
                                                               dict(env, GPU_OFFLOAD_SPLIT_COPIES="off"), left())
            r["cpu split"] = run_worker([cli, "run", "--device", "cpu", "--"], n, r["reps"], cases_for(n, False),
                                        variants, env, left())
        print(f"# n = {n}: GPU runs done after {time.time() - t_start:.0f} s", file=sys.stderr, flush=True)
    for n, r in results.items():
        if "cpu" not in runs_asked:
            continue
        r["cpu"] = run_worker([], n, r["reps"], cases_for(n, a.full), variants, env, left(), every)
        print(f"# n = {n}: CPU run done after {time.time() - t_start:.0f} s", file=sys.stderr, flush=True)

    ref = "fast" if "fast" in variants else variants[0]  # whose LAPACK time and speedup are shown
    runs = ["cpu", "cpu split", "gpu unsplit", "gpu"] if a.split else ["cpu", "gpu"]
    cols = ["case", "n"] + [f"{v} {d}" for v in variants for d in runs]
    if a.split:
        cols += [f"{ref} copies unsplit gpu", f"{ref} copies gpu"]
    cols += [f"{ref} in LAPACK gpu", f"{ref} gpu/cpu"] + ([f"{ref} split gain gpu"] if a.split else [])
    rows = []
    for n, r in results.items():
        for case in cases:
            cells = [case, str(n)]
            for v in variants:
                for d in runs:
                    e = r.get(d, {}).get(f"{case}/{v}")
                    cells.append(fmt(e["s"]) if e else "-")
            key = f"{case}/{ref}"
            if a.split:
                cells += [fmt(r["copies unsplit"].get(key)) or "-", fmt(r["copies"].get(key)) or "-"]
            cells.append(fmt(r["in_lapack"].get(key)) or "-")
            c, g = r.get("cpu", {}).get(key), r["gpu"].get(key)
            cells.append(f"{c['s'] / g['s']:.1f}x" if c and g and g["s"] > 0 else "-")
            if a.split:
                u = r["gpu unsplit"].get(key)
                cells.append(f"{u['s'] / g['s']:.2f}x" if u and g and g["s"] > 0 else "-")
            rows.append(cells)
    widths = [max(len(x) for x in col) for col in zip(cols, *rows)]
    print("Python end to end, seconds per call (numpy: numpy.linalg; scipy: scipy.linalg as usually called; fast: "
          "scipy.linalg on Fortran-ordered arrays, overwrite_a=True, check_finite=False)")
    print("reps: best of " + ", ".join(f"{r['reps']} at n={n}" for n, r in results.items()) +
          ("" if every else " (svd, lstsq: 1)") +
          f"; '-': not run (the CPU's svd/lstsq above n={a.cpu_slow_max_n}: --full runs them" +
          (", never under 'cpu split'" if a.split else "") + "; or out of --budget)")
    if a.split:
        print("split: GPU_OFFLOAD_SPLIT_COPIES on (the default) or off ('unsplit'); 'copies': seconds in ?copy calls "
              "from the trace; split gain: gpu unsplit / gpu")
    print("  ".join(c.rjust(w) if i > 1 else c.ljust(w) for i, (c, w) in enumerate(zip(cols, widths))))
    for cells in rows:
        print("  ".join(c.rjust(w) if i > 1 else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths))))
    print(f"command: {' '.join([os.path.relpath(sys.argv[0], ROOT)] + sys.argv[1:])}; {time.time() - t_start:.0f} s")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0 if all((r["gpu"] or "gpu" not in runs_asked) and (r.get("cpu") or "cpu" not in runs_asked)
                    for r in results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
