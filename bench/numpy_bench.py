#!/usr/bin/env python3
"""Unmodified NumPy on the CPU library vs under gpu-offload --device gpu, against the link limit.

    python3 bench/numpy_bench.py [--build build] [--quick] [--max-cpu-n 8192]

Each case runs in a fresh process (plain, then under `gpu-offload run --device gpu --trace`), timing
the median of a few repetitions after a warm-up. The link limit is the least time the GPU path can
take: operand bytes over the pinned copy bandwidth plus flops over the GPU's rate, both measured on
this machine (bench/ceilings.py) or, when they cannot be, the H200 host's measured figures
(pinned copies 50 GB/s; gemm 51 TFLOP/s fp32, 63 fp64) written below. The achieved copy rate
comes from the trace (bytes copied over copy time).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# (name, dtype, sizes, flops(n), bytes moved(n, itemsize))
CASES = [
    # a @ b: A and B in, C out (NumPy passes beta = 0, so C is not copied in).
    ("a @ b", "float32", [1024, 2048, 4096, 8192, 16384], lambda n: 2.0 * n**3, lambda n, s: 3 * n * n * s),
    ("a @ b", "float64", [1024, 2048, 4096, 8192, 16384], lambda n: 2.0 * n**3, lambda n, s: 3 * n * n * s),
    ("a @ b", "complex128", [1024, 2048, 4096, 8192, 16384], lambda n: 8.0 * n**3, lambda n, s: 3 * n * n * s),
    ("solve", "float64", [1024, 2048, 4096, 8192], lambda n: 2.0 / 3 * n**3 + 2.0 * n**2 * n, lambda n, s: 4 * n * n * s),
    ("cholesky", "float64", [1024, 2048, 4096, 8192], lambda n: n**3 / 3.0, lambda n, s: 2 * n * n * s),
    ("eigh", "float64", [1024, 2048, 4096, 8192], lambda n: 9.0 * n**3, lambda n, s: 2 * n * n * s),
    ("svd", "float64", [1024, 2048, 4096], lambda n: 8.0 * n**3 + 20.0 / 3 * n**3, lambda n, s: 4 * n * n * s),
]

ITEMSIZE = {"float32": 4, "float64": 8, "complex128": 16}
RATE_KEY = {"float32": "s", "float64": "d", "complex128": "z"}


def load_ceilings():
    """What bench/ceilings.py measured on this machine ({} when it could not): pinned_gbs, tflops by s/d/z."""
    return json.loads(subprocess.run([sys.executable, os.path.join(HERE, "ceilings.py")], capture_output=True,
                                     text=True).stdout or "{}")


def pinned_gbs(ceil):
    return ceil.get("pinned_gbs", 50.0)


def gpu_tflops(ceil, dtype):
    """The GPU's measured gemm rate for dtype, else the H200 host's."""
    return ceil.get("tflops", {}).get(RATE_KEY[dtype], {"s": 51.0, "d": 63.0, "z": 63.0}[RATE_KEY[dtype]])


def link_limit(name, dtype, n, ceil):
    """The case's operand bytes over the pinned rate plus its flops over the GPU's gemm rate."""
    flops, nbytes = next((f, b) for c, d, _, f, b in CASES if c == name and d == dtype)
    return nbytes(n, ITEMSIZE[dtype]) / (pinned_gbs(ceil) * 1e9) + flops(n) / (gpu_tflops(ceil, dtype) * 1e12)


def fmt(x, w, p):
    """x in a column of width w with p decimals; - when there is none."""
    return f"{x:>{w}.{p}f}" if x else f"{'-':>{w}}"


WORKER = r"""
import json, sys, time
import numpy as np
name, dtype, n, reps = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
warm = int(sys.argv[5]) if len(sys.argv) > 5 else 1
rng = np.random.default_rng(1)
def mat(shape):
    m = rng.standard_normal(shape)
    if dtype.startswith("complex"):
        m = m + 1j * rng.standard_normal(shape)
    return m.astype(dtype)
a = mat((n, n)); b = mat((n, n))
if name in ("cholesky", "eigh"):
    a = a @ a.T.conj() + n * np.eye(n, dtype=dtype)
fn = {
    "a @ b": lambda: a @ b,
    "solve": lambda: np.linalg.solve(a, b),
    "cholesky": lambda: np.linalg.cholesky(a),
    "eigh": lambda: np.linalg.eigh(a),
    "svd": lambda: np.linalg.svd(a),
}[name]
# Warm-ups: library loading, GPU start-up, workspace queries; with residency on, the same a and b
# are uploaded again in the second and served from the GPU from the third (keep_history.h).
warm_times = []
for _ in range(warm):
    t0 = time.perf_counter(); fn(); warm_times.append(time.perf_counter() - t0)
times = []
for _ in range(reps):
    t0 = time.perf_counter(); r = fn(); times.append(time.perf_counter() - t0)
# Is the last result right? Its first and last rows or columns (where copies begin and end) and
# two others against matrix-vector products, which the CPU library runs (gpu-offload leaves
# level-2 shapes to it): the error relative to the largest value, as verify mode measures it.
pick = [0, n - 1] + list(rng.choice(np.arange(1, n - 1), size=2, replace=False))
rel = lambda d, ref: float(np.max(np.abs(d)) / max(np.max(np.abs(ref)), 1e-300))
if name == "a @ b":
    err = max(rel(r[i, :] - a[i, :] @ b, a[i, :] @ b) for i in pick)
elif name == "solve":
    err = max(rel(a @ r[:, j] - b[:, j], b[:, j]) / (np.abs(a).max() * np.abs(r[:, j]).sum() / np.abs(b[:, j]).max())
              for j in pick)  # backward error
elif name == "cholesky":
    err = max(rel(r[i, :] @ r.conj().T - a[i, :], a[i, :]) for i in pick)
elif name == "eigh":
    w, v = r
    err = max(rel(a @ v[:, j] - w[j] * v[:, j], np.abs(w).max() * np.ones(1)) for j in pick)
else:
    u, sv, vh = r
    err = max(rel(a @ vh[j, :].conj() - sv[j] * u[:, j], sv[:1]) for j in pick)
print(json.dumps({"times": times, "error": err, "warm": warm_times}))
"""

# The largest error a right result has (verify mode's tolerances, spec section 6).
TOLERANCE = {"float32": 2e-3, "float64": 1e-8, "complex128": 1e-8}


def run_times(cmd_prefix, name, dtype, n, reps, env, timeout=900, warm=1, warm_out=None):
    """One fresh process (cmd_prefix, then the worker): every timed call's seconds after `warm` warm-up
    calls, and the last result's error; (None, [the last line of stderr]) when it failed. The warm-ups'
    seconds are appended to `warm_out` when given."""
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(WORKER)
        worker = f.name
    try:
        p = subprocess.run(cmd_prefix + [sys.executable, worker, name, dtype, str(n), str(reps), str(warm)],
                           capture_output=True, text=True, env=env, timeout=timeout)
    finally:
        os.unlink(worker)
    if p.returncode != 0:
        return None, p.stderr.strip().splitlines()[-1:] or ["failed"]
    line = json.loads([l for l in p.stdout.splitlines() if l.startswith("{")][-1])
    if warm_out is not None:
        warm_out.extend(line.get("warm", []))
    return line["times"], line["error"]


def run_case(cmd_prefix, name, dtype, n, reps, env):
    times, err = run_times(cmd_prefix, name, dtype, n, reps, env)
    return (statistics.median(times) if times else None), err


# The routine each case is about (its library time is the one reported).
ROUTINE = {"a @ b": "gemm", "solve": "gesv", "cholesky": "potrf", "eigh": "syevd", "svd": "gesdd"}


def trace_stats(cli, trace_dir, routine):
    """From the trace: the median duration of the case's own routine on the GPU (the library's time,
    without NumPy's copies around it), and the copy rates in and out over the GPU calls after the
    warm-up."""
    p = subprocess.run([cli, "dump", "--csv", trace_dir], capture_output=True, text=True)
    if p.returncode != 0:
        return None, None, None, 0
    import csv, io
    rows = [r for r in csv.DictReader(io.StringIO(p.stdout))
            if r["device"] == "gpu" and r["nested"] == "0" and r["query"] == "0"]
    if not rows:
        return None, None, None, 0
    main = sorted((r for r in rows if r["routine"] == routine), key=lambda r: int(r["t_start_ns"]))
    # The first is the warm-up call, which also paid the GPU's start-up.
    lib = statistics.median(int(r["duration_ns"]) / 1e9 for r in (main[1:] or main)) if main else None
    # Copy rates leave the warm-up out too: its copies also paid the first touch of the pinned
    # staging buffers and of the device pool.
    if len(main) > 1:
        rows = [r for r in rows if int(r["t_start_ns"]) >= int(main[1]["t_start_ns"])]
    b_in = b_out = t_in = t_out = 0.0
    for r in rows:
        for o in (o.split(":") for o in r["operands"].split(";") if o):
            b_in += int(o[1]) if o[2] != "0" else 0
            b_out += int(o[1]) if o[3] != "0" else 0
        t_in += float(r["copy_in_s"])
        t_out += float(r["copy_out_s"])
    rate = lambda b, t: b / t / 1e9 if t > 0 else None
    return lib, rate(b_in, t_in), rate(b_out, t_out), len(rows)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--quick", action="store_true", help="smaller sizes, one repetition")
    ap.add_argument("--max-cpu-n", type=int, default=8192, help="largest n timed on the CPU (it gets slow)")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--only", default="", help="comma-separated case names to run")
    a = ap.parse_args()
    cli = os.path.join(a.build, "bin", "gpu-offload")
    ceil = load_ceilings()
    pinned = pinned_gbs(ceil)
    rates = ceil.get("tflops", {})
    print(f"ceilings: pinned copies {pinned:.1f} GB/s; GPU rates (TFLOP/s) {rates or 'the H200 figures'}"
          f" [{ceil.get('source', 'the H200 figures')}]", flush=True)
    hdr = (f"{'operation':<10} {'dtype':<10} {'n':>6} {'CPU s':>8} {'gpu-offload s':>13} {'speedup':>7} "
           f"{'in call s':>9} {'link limit s':>12} {'/limit':>6} {'in GB/s':>7} {'out GB/s':>8} {'GPU res':>8} {'CPU res':>8}")
    print("gpu-offload s: the NumPy call under --device gpu; in call s: the BLAS/LAPACK call itself (trace),\n"
          "without NumPy's own copies around it; /limit: in call s over the link limit; GPU res / CPU res: the\n"
          "result checked against matrix-vector products the CPU library runs")
    print(hdr)
    print("-" * len(hdr), flush=True)
    reps = 1 if a.quick else a.reps
    only = set(x.strip() for x in a.only.split(",") if x.strip())
    bad = 0
    for name, dtype, sizes, _, _ in CASES:
        if only and name not in only:
            continue
        for n in sizes:
            if a.quick and (n > 4096 or n < 2048 or (name != "a @ b" and n != 4096 - 2048 * (name == "svd"))):
                continue  # quick: a @ b at 2048 and 4096, svd at 2048, the others at 4096
            env = dict(os.environ)
            env.pop("LD_PRELOAD", None)
            cpu, cpu_err = run_case([], name, dtype, n, reps, env) if n <= a.max_cpu_n else (None, None)
            with tempfile.TemporaryDirectory() as td:
                gpu, gpu_err = run_case([cli, "run", "--device", "gpu", "--trace", td, "--"], name, dtype, n, reps, env)
                lib, gb_in, gb_out, gpu_calls = trace_stats(cli, td, ROUTINE[name])
            limit = link_limit(name, dtype, n, ceil)
            res_gpu, res_cpu = check(gpu_err, dtype), check(cpu_err, dtype)
            print(f"{name:<10} {dtype:<10} {n:>6} {fmt(cpu, 8, 4)} {fmt(gpu, 13, 4)} "
                  f"{fmt(cpu / gpu if cpu and gpu else None, 7, 2)} {fmt(lib, 9, 4)} {limit:>12.4f} "
                  f"{fmt(lib / limit if lib else None, 6, 2)} {fmt(gb_in, 7, 1)} {fmt(gb_out, 8, 1)} "
                  f"{res_gpu:>8} {res_cpu:>8}"
                  + ("" if gpu_calls else "   (no call ran on the GPU)"), flush=True)
            bad += "WRONG" in (res_gpu, res_cpu)
    if bad:
        print(f"{bad} case(s) gave a WRONG result (error above {TOLERANCE})")
        sys.exit(1)


def check(err, dtype):
    """ok, WRONG, or - (not run; a failed run's message instead of an error)."""
    if not isinstance(err, float):
        return "-"
    return "ok" if err <= TOLERANCE[dtype] else "WRONG"


if __name__ == "__main__":
    main()
