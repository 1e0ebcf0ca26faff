#!/usr/bin/env python3
"""The headline cases of README.md in one run: each several times, with its median, min and max, its
ratio to the CPU, to the link bound and to a peer, the commit and the machine.

    python3 bench/headline.py [--build build] [--out DIR] [--stage a|b|all] [--repeats 5] [--only GROUP,...]
                              [--budget SECONDS] [--markdown] [--quick] [--device-less] [--sweep-max-n 2048]

Stages (each meant to fit one 10-minute device call with the build; the times are estimates from the
GPU test machine's (H200, 16-core host) earlier runs of the scripts below at --repeats 5, not a
measurement of this script):
  a  (about 6-7 min) the calls: NumPy `a @ b` float32/float64 at 8192; C `dgemm_` at 8192 and 16384
     against NVBLAS with auto-pinning (bench/nvblas_bench.sh; the CPU's 16384 alone takes ~80 s);
     `numpy.linalg.solve` at 8192; SciPy's fast forms (bench/python_e2e.py): solve and cholesky at 8192,
     eigh, svd and lstsq at 4096 (the CPU's three ~75 s); FFT c2c 3D 512^3 against FFTW (bench/fft_bench.c)
  b  (about 7 min) the rest: the residency loops `A @ X_i`, `lu_solve` with a Fortran X and fixed
     factors, gemv (bench/residency_bench.py), forced onto the GPU and under auto (a first run, timed once
     the GPU runs); the short small-math program (bench/small_numpy_bench.py, at least 9 runs);
     the GPU start and each routine's first GPU call, also warmed (bench/startup_costs.py, 72 processes,
     ~2 min); the sweep of bench/auto_sweep.py at n <= --sweep-max-n (best plan: the CPU run and the
     per-call minimum over 3 --device gpu runs; then 3 first and 3 second runs of auto, the second with
     the first's run history: 10 runs, ~3 min). The CPU run stops at n = 2048 (auto_sweep.py
     --cpu-max-n): every larger call ran faster on the GPU. Two more rows replay the cpu run's calls and
     the gpu runs' fastest through this build's decision (auto_sweep.py --replay), a first run and a
     second: what the decision itself costs, before any one-time cost but the start (at n <= 2048 the
     level-5 start rule alone put a first run at 1.13 of the best plan on the H200 host's saved runs).
     The last row is the gpu side's run-to-run noise: each gpu run's calls over the per-call fastest
     of the 3 (about what one run that decided every call right would read against the best plan).
     `--only sweep --sweep-max-n 16384` runs the sweep to 16384 (12.3 s of calls a run) in a
     device call of its own; there the cpu run stops at 2048 and the replay rows say n/a. On an H100 host
     it took 568 s for 2 of its 3 pairs of auto runs, with the worker's matrices made on one core
  all  both (two device calls)
--budget SECONDS makes a stage stop in time: a case that would start later says n/a, one running is cut.

Every figure says what was timed: "call" (the one call, timed in the program), "iteration" (one loop
iteration's library calls, after the first), "trace" (from the trace: the GPU start, or the first
call's excess over the second), "program" (the whole process, end to end), "sweep" (the sweep's traced
calls plus its GPU start, against the best plan). vs CPU: the CPU's median over this one's (above 1:
faster); / bound: the median over the link bound, which is the bytes the call must move (its inputs
in, its results out) over the pinned host<->device rates measured in this run (bench/ceilings.py,
PyTorch) plus its flops over the GPU's gemm rate in that precision measured in this run (below 1: the
copies overlapped beyond what the bound's sum assumes); vs peer: the peer's median over this one's.
Peers: NVBLAS with NVBLAS_AUTOPIN_MEM_ENABLED for the C dgemm_ program, PyTorch with explicit copies
(bench/torch_peer.py) for NumPy and SciPy code, FFTW for FFT. A tool that is missing gives
"n/a (why)". Without a usable GPU (or with --device-less) every case runs on the CPU only or says n/a.
--quick: tiny sizes (for the tests). The table goes to stdout (--markdown: as README.md's results
table), and with the raw samples to DIR/headline.json and DIR/headline.md; the benchmarks' own output
to DIR/headline-bench.log.
"""

import argparse
import importlib.metadata
import json
import math
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import numpy_bench  # noqa: E402  (its NumPy worker: light to import, NumPy loads in the worker)
from residency_bench import once_on_gpu  # noqa: E402  (the loops' rule for "once the GPU runs")
from auto_sweep import load_run, single_run_floor  # noqa: E402  (the sweep's noise floor)

GROUPS = {"a": ["matmul", "dgemm", "solve", "scipy", "fft"], "b": ["residency", "small", "startup", "sweep"]}
SIZES = {  # full, quick
    "matmul": (8192, 256), "dgemm": ((8192, 16384), (256, 512)), "solve": (8192, 256),
    "scipy_large": (8192, 256), "scipy_slow": (4096, 256), "residency": ((8192, 20), (256, 5)),
    "fft": (512, 32), "startup": ((1024, "gemm,syrk,trsm,getrf,gesv,potrf,syevd,gesdd", "float32,float64,complex128", 1000),
                                  (256, "gemm,getrf", "float64", 100)),
}
# The sweep's cpu run stops here (auto_sweep.py --cpu-max-n): its larger calls took 250 s on the H200
# host, every one of them slower than on the GPU, so the GPU's time stands for the best there.
SWEEP_CPU_MAX_N = 2048
TIMED = {"call": "the call", "iteration": "an iteration", "trace": "from the trace", "program": "the program",
         "sweep": "the sweep's calls"}


# ---------------------------------------------------------------------------------------------------------
# Running the benchmarks

class Run:
    def __init__(self, a):
        self.a = a
        self.t0 = time.monotonic()
        self.cases = []
        self.ceil = {}
        self.log = open(os.path.join(a.out, "headline-bench.log"), "a")
        self.tmp = tempfile.mkdtemp(prefix="gofl-headline-")
        self.env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD" and not k.startswith("GPU_OFFLOAD_")}

    def left(self):
        return None if self.a.budget is None else self.a.budget - (time.monotonic() - self.t0)

    def sh(self, cmd, env=None, timeout=None, cwd=None):
        """(exit status, stdout, stderr) of cmd; its output is appended to the log. Cut at the budget left
        (or timeout): status None then. The command gets a process group of its own, ended with it."""
        left = self.left()
        if left is not None:
            timeout = left if timeout is None else min(timeout, left)
        if timeout is not None and timeout <= 1:
            return None, "", "out of the --budget"
        self.log.write(f"\n$ {' '.join(cmd)}\n")
        self.log.flush()
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env or self.env,
                             cwd=cwd or ROOT, start_new_session=True)
        try:
            out, err = p.communicate(timeout=timeout)
            rc = p.returncode
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGTERM)
            try:
                out, err = p.communicate(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                out, err = p.communicate()
            rc, err = None, err + f"\n(stopped after {timeout:.0f} s)"
        except BaseException:
            os.killpg(p.pid, signal.SIGKILL)
            raise
        self.log.write(out + ("\n[stderr]\n" + err if err.strip() else "") + f"\n[exit {rc}]\n")
        self.log.flush()
        return rc, out, err

    def cli(self):
        return os.path.join(self.a.build, "bin", "gpu-offload")

    def add(self, case):
        self.cases.append(case)
        write_json(self)
        print(f"# {case['id']}: " + brief(case), file=sys.stderr, flush=True)
        return case


def why(rc, err, what="it failed"):
    if rc is None:
        return "out of the --budget" if "out of the --budget" in err else "out of time"
    lines = [ln for ln in err.strip().splitlines() if ln.strip()]
    return f"{what} (exit {rc}{': ' + lines[-1][:160] if lines else ''})"


def side(samples=None, na=None, what="", **extra):
    """One column of a case: samples in seconds (or a ratio), or why there are none."""
    if samples:
        return dict(samples=list(samples), what=what, **extra)
    return dict(na=na or "not run", what=what, **extra)


def new_case(cid, group, title, size, timed, unit="s", note=""):
    return {"id": cid, "group": group, "title": title, "size": str(size), "timed": timed, "unit": unit,
            "gpu": side(na="not run"), "cpu": side(na="not run"), "peer": side(na="not run"), "bound": {"na": "not run"},
            "note": note}


def warm_text(times):
    """The note on a case's untimed first calls: with residency on, the second call digests and keeps the
    same operands and the third is served from the GPU (src/common/keep_history.h), so the timed calls
    after --warm 3 are the steady state and these are what reaching it cost."""
    return "gpu-offload's untimed first calls: " + ", ".join(fmt_s(t) for t in times)


def med(s):
    return statistics.median(s["samples"]) if "samples" in s else None


def set_bound(r, case, bytes_in, bytes_out, flops, prec):
    """The link bound of a case: bytes in and out over the pinned rates measured in this run, flops over the
    GPU's measured gemm rate of the precision (s, d, z)."""
    c = r.ceil
    if "h2d_gbs" not in c or prec not in c.get("tflops", {}):
        case["bound"] = {"na": c.get("na", "no pinned rate measured (bench/ceilings.py needs PyTorch and a GPU)")}
        return
    s = bytes_in / (c["h2d_gbs"] * 1e9) + bytes_out / (c["d2h_gbs"] * 1e9) + flops / (c["tflops"][prec] * 1e12)
    case["bound"] = {"s": s, "bytes_in": bytes_in, "bytes_out": bytes_out, "flops": flops, "precision": prec}


def torch_peers(r, specs):
    """bench/torch_peer.py over several cases in one process: {case: side}."""
    if r.gpu_na:
        return {s: side(na="no GPU") for s in specs}
    # After the cases' own runs, and capped: a slow peer leaves the rest of the stage its time (the cases
    # it finished in time are kept: it prints each as it ends).
    rc, out, err = r.sh([sys.executable, os.path.join(HERE, "torch_peer.py"), "--reps", str(r.a.repeats), *specs],
                        timeout=60 + 30 * len(specs))
    got = {}
    for line in out.splitlines():
        if line.startswith("{"):
            d = json.loads(line)
            got[d["case"]] = side(d.get("times"), d.get("na"), "PyTorch, explicit copies")
    return {s: got.get(s, side(na=why(rc, err, "bench/torch_peer.py failed"))) for s in specs}


# ---------------------------------------------------------------------------------------------------------
# The cases

def group_matmul(r):
    n = SIZES["matmul"][r.a.quick]
    cases, warm_note = [], {}
    for dt, prec, size in (("float32", "s", 4), ("float64", "d", 8)):
        case = new_case(f"matmul-{dt}", "matmul", f"NumPy `a @ b`, {dt}", n, "call")
        for col, prefix in (("cpu", []), ("gpu", [r.cli(), "run", "--device", "gpu", "--"])):
            if col == "gpu" and r.gpu_na:
                case[col] = side(na="no GPU")
                continue
            left = r.left()
            if left is not None and left <= 1:
                case[col] = side(na="out of the --budget")
                continue
            r.log.write(f"\n$ numpy_bench worker {dt} n={n} ({col})\n")
            try:
                warm = []
                times, err = numpy_bench.run_times(prefix, "a @ b", dt, n, r.a.repeats, r.env,
                                                   timeout=None if left is None else left, warm=r.a.warm, warm_out=warm)
                if col == "gpu" and warm:
                    warm_note[dt] = warm_text(warm)
            except subprocess.TimeoutExpired:
                times, err = None, ["out of the --budget"]
            r.log.write(f"{times} {err}\n")
            ok = isinstance(err, float) and err <= numpy_bench.TOLERANCE[dt]
            case[col] = side(times, f"failed: {err[-1] if isinstance(err, list) and err else err}",
                             "NumPy's OpenBLAS" if col == "cpu" else "gpu-offload --device gpu",
                             result="ok" if ok else f"WRONG (error {err})" if times else None)
        wrong = [f"{col} {case[col]['result']}" for col in ("cpu", "gpu") if str(case[col].get("result")).startswith("WRONG")]
        checked = [col for col in ("cpu", "gpu") if case[col].get("result") == "ok"]
        case["note"] = "; ".join(wrong) if wrong else \
            f"results ({', '.join(checked)}) checked against the CPU library's gemv: ok" if checked else ""
        if dt in warm_note:
            case["note"] += ("; " if case["note"] else "") + warm_note[dt]
        set_bound(r, case, 2 * n * n * size, n * n * size, 2.0 * n ** 3, prec)
        cases.append(case)
    peers = torch_peers(r, [f"matmul:{dt}:{n}" for dt in ("float32", "float64")])
    for case, dt in zip(cases, ("float32", "float64")):
        case["peer"] = peers[f"matmul:{dt}:{n}"]
        r.add(case)


def group_dgemm(r):
    sizes = SIZES["dgemm"][r.a.quick]
    cols = "cpu" if r.gpu_na else "cpu nvblas-pin gpu-offload"
    env = dict(r.env, COLUMNS=cols, REPS=str(r.a.repeats), WARM=str(r.a.warm), RAW="1")
    rc, out, err = r.sh(["bash", os.path.join(HERE, "nvblas_bench.sh"), r.a.build, *map(str, sizes)], env=env)
    raw, sums, warm = {}, {}, {}
    for line in out.splitlines():
        parts = line.split()
        if parts[:1] == ["checksum"] and len(parts) == 4:
            sums[(parts[1], int(parts[2]))] = float(parts[3])
        if parts[:1] == ["warm"] and len(parts) >= 4 and parts[1] == "gpu-offload":
            warm[int(parts[2])] = [float(x) for x in parts[3:]]
        if parts[:1] == ["raw"] and len(parts) >= 4:
            col, n, rest = parts[1], int(parts[2]), parts[3:]
            raw[(col, n)] = ([float(x) for x in rest], None) if rest[0] != "n/a" else (None, " ".join(rest[1:]))
    for n in sizes:
        case = new_case(f"dgemm-{n}", "dgemm", "C `dgemm_` (system OpenBLAS on the CPU)", n, "call")
        for col, key, what in (("cpu", "cpu", "the system OpenBLAS"), ("gpu", "gpu-offload", "gpu-offload --device gpu"),
                               ("peer", "nvblas-pin", "NVBLAS, auto-pinning")):
            if key != "cpu" and r.gpu_na:
                case[col] = side(na="no GPU", what=what)
                continue
            times, na = raw.get((key, n), (None, why(rc, err, "bench/nvblas_bench.sh gave no time")))
            case[col] = side(times, na, what)
        # The client's checksum of C against the CPU's: a column that did not compute the product says so.
        ref = sums.get(("cpu", n))
        bad = [k for k in ("gpu-offload", "nvblas-pin") if (k, n) in sums and ref is not None and
               not abs(sums[(k, n)] - ref) <= 1e-9 * max(abs(ref), 1e-300)]
        if bad:
            case["note"] = "checksum of C differs from the CPU's: " + ", ".join(bad)
        if n in warm:
            case["note"] += ("; " if case["note"] else "") + warm_text(warm[n])
        set_bound(r, case, 2 * n * n * 8, n * n * 8, 2.0 * n ** 3, "d")
        r.add(case)


def python_e2e(r, n, cases, variant):
    """bench/python_e2e.py at one size: {case: (gpu side, cpu side, seconds in LAPACK of the best GPU run)}."""
    js = os.path.join(r.tmp, f"e2e-{variant}-{n}-{cases[0]}.json")
    runs = "cpu" if r.gpu_na else "cpu,gpu"
    cmd = [sys.executable, os.path.join(HERE, "python_e2e.py"), "--build", r.a.build, "--sizes", str(n), "--cases",
           ",".join(cases), "--variants", variant, "--reps", str(r.a.repeats), "--runs", runs, "--json", js]
    left = r.left()
    if left is not None:
        cmd += ["--budget", str(max(1, int(left - 5)))]
    rc, out, err = r.sh(cmd)
    res = json.load(open(js)).get(str(n), {}) if os.path.exists(js) else {}
    got = {}
    for c in cases:
        key = f"{c}/{variant}"
        g, p = res.get("gpu", {}).get(key), res.get("cpu", {}).get(key)
        na = why(rc, err, "bench/python_e2e.py gave no time")
        got[c] = (side(g and g["times"], "no GPU" if r.gpu_na else na, "gpu-offload --device gpu"),
                  side(p and p["times"], na, "SciPy's OpenBLAS" if variant == "fast" else "NumPy's OpenBLAS"),
                  res.get("in_lapack", {}).get(key))
    return got


# What each LAPACK case must move across the link (float64, b a vector) and its flops (ops/operations.py's).
def lapack_cost(c, n):
    n2, e = n * n * 8, n * 8
    return {"solve": (n2 + e, n2 + e, 2.0 / 3 * n ** 3 + 2.0 * n * n), "cholesky": (n2, n2, n ** 3 / 3.0),
            "eigh": (n2, n2 + e, 9.0 * n ** 3), "svd": (n2, 2 * n2 + e, 8.0 * n ** 3 + 20.0 / 3 * n ** 3),
            "lstsq": (n2 + e, 2 * e, 4.0 * n ** 3 + 8.0 / 3 * n ** 3)}[c]


def group_solve(r):
    n = SIZES["solve"][r.a.quick]
    g, p, lap = python_e2e(r, n, ["solve"], "numpy")["solve"]
    peer = torch_peers(r, [f"numpy-solve:{n}"])[f"numpy-solve:{n}"]
    case = new_case("numpy-solve", "solve", "`numpy.linalg.solve(A, b)`, b a vector", n, "call",
                    note=f"in LAPACK (trace, fastest GPU run): {fmt_s(lap)}" if lap else "")
    case["gpu"], case["cpu"], case["peer"] = g, p, peer
    set_bound(r, case, *lapack_cost("solve", n), "d")
    r.add(case)


def group_scipy(r):
    big, slow = SIZES["scipy_large"][r.a.quick], SIZES["scipy_slow"][r.a.quick]
    plan = [(big, ["solve", "cholesky"]), (slow, ["eigh", "svd", "lstsq"])]
    cases = []
    for n, cs in plan:
        got = python_e2e(r, n, cs, "fast")
        for c in cs:
            g, p, lap = got[c]
            case = new_case(f"scipy-{c}", "scipy", f"SciPy `{c}`, the fast form (Fortran order, overwrite, "
                            "check_finite=False)", n, "call",
                            note=f"in LAPACK (trace, fastest GPU run): {fmt_s(lap)}" if lap else "")
            case["gpu"], case["cpu"] = g, p
            set_bound(r, case, *lapack_cost(c, n), "d")
            cases.append((case, f"{c}:{n}"))
    peers = torch_peers(r, [spec for _, spec in cases])
    for case, spec in cases:
        case["peer"] = peers[spec]
        r.add(case)


RESIDENCY = [  # (id, residency_bench's loop, title, n factor, iterations factor, torch_peer case)
    ("residency-axi", "A @ X_i", "residency: `A @ X_i` (X n x 256, A fixed)", 1, 1, "axi"),
    ("residency-lu-solve", "lu_solve, fixed factors, Fortran X, check_finite=False",
     "residency: `lu_solve`, fixed factors, Fortran X, check_finite=False", 1, 1, "lu_solve"),
    ("residency-gemv", "gemv A @ x", "residency: gemv `A @ x`, A fixed", 2, 5, "gemv"),
]


def group_residency(r):
    n, iters = SIZES["residency"][r.a.quick]
    js = os.path.join(r.tmp, "residency.json")
    cols = "cpu" if r.gpu_na else "cpu,on,auto"
    rc, out, err = r.sh([sys.executable, os.path.join(HERE, "residency_bench.py"), "--build", r.a.build, "--n", str(n),
                         "--iters", str(iters), "--only", ";".join(x[1] for x in RESIDENCY), "--columns", cols,
                         "--json", js])
    rows = {x["name"]: x for x in json.load(open(js))} if os.path.exists(js) else {}
    peers = torch_peers(r, [f"{p}:{n * nf}:{int(iters * itf)}" for _, _, _, nf, itf, p in RESIDENCY])
    for cid, loop, title, nf, itf, peer in RESIDENCY:
        nn, it = n * nf, int(iters * itf)
        case = new_case(cid, "residency", title, f"{nn}, {it} iterations", "iteration")
        res = rows.get(loop, {}).get("columns", {})
        na = why(rc, err, "bench/residency_bench.py gave no time")
        for col, key, what in (("cpu", "cpu", "--device cpu"), ("gpu", "gpu, residency on", "--device gpu, residency on")):
            if col == "gpu" and r.gpu_na:
                case[col] = side(na="no GPU")
                continue
            got = res.get(key, {})
            case[col] = side(got.get("times", [])[1:], got.get("error", na)[:200], what)
            if col == "gpu" and "diff" in got:
                case["note"] = f"result vs the CPU's: {got['diff']:.1e} (relative)"
        case["peer"] = peers[f"{peer}:{nn}:{it}"]
        # The same loop under the default (--device auto), a first run: the GPU starts once the savings
        # missed pay for its start, so the iterations before it ran on the CPU. Timed: the iterations
        # after the first that ran on the GPU (as the gpu column leaves out its first), the goal's
        # "once the GPU runs"; the note gives where that began and the whole loop's median.
        auto = new_case(cid + "-auto", "residency", title + ", `auto`, once the GPU runs", f"{nn}, {it} iterations",
                        "iteration")
        auto["cpu"], auto["peer"] = case["cpu"], case["peer"]
        got = res.get("auto (default)", {})
        once = once_on_gpu(got) if "times" in got else []
        times, gpu_from = got.get("times", []), got.get("gpu_from")
        told = any(g is not None for g in got.get("on_gpu") or [])  # the library said where each ran
        none_why = ("no GPU" if r.gpu_na else got.get("error", na)[:200] if "times" not in got
                    else "the loop did not say where it ran" if not told
                    else "no iteration ran on the GPU" if gpu_from is None
                    else "only the last iteration ran on the GPU")
        auto["gpu"] = side(once, none_why, "--device auto (the default), residency on, once the GPU runs")
        if gpu_from is not None and len(times) > 1:
            auto["note"] = (f"a first run: the GPU ran from iteration {gpu_from + 1} of {len(times)}; "
                            f"every iteration after the first: {fmt_s(statistics.median(times[1:]))}")
        for c in (case, auto):
            if peer == "gemv":
                set_bound(r, c, nn * 8, nn * 8, 2.0 * nn * nn, "d")
            else:
                set_bound(r, c, nn * 256 * 8, nn * 256 * 8, 2.0 * nn * nn * 256, "d")
        r.add(case)
        r.add(auto)


def group_fft(r):
    n = SIZES["fft"][r.a.quick]
    threads = os.cpu_count() or 1
    case = new_case("fft-c2c-3d", "fft", "FFTW c2c 3D, complex double (bench/fft_bench.c)", f"{n}^3", "call")
    exe = os.path.join(r.tmp, "fft_bench")
    rc, out, err = r.sh(["cc", "-O2", os.path.join(HERE, "fft_bench.c"), "-o", exe, "-lfftw3", "-ldl", "-lm"])
    if rc != 0:
        case["cpu"] = case["gpu"] = case["peer"] = side(na=why(rc, err, "cannot build bench/fft_bench.c (FFTW headers?)"))
        return r.add(case)
    cmd = [exe, "--threads", str(threads), "--reps", str(r.a.repeats), "--cube", str(n), "--times"]
    if not r.gpu_na:
        cmd = [r.cli(), "run", "--device", "gpu", "--"] + cmd
    rc, out, err = r.sh(cmd)
    times = {}
    for line in out.splitlines():
        if line.startswith("times "):
            _, who, *t = line.split()
            times[who] = [float(x) for x in t]
    na = why(rc, err, "bench/fft_bench.c gave no time")
    what = f"FFTW, {threads} threads, FFTW_MEASURE"
    case["cpu"] = side(times.get("FFTW"), na, what)
    case["peer"] = side(times.get("FFTW"), na, what + " (the CPU column)")
    if r.gpu_na:
        case["gpu"] = side(na="no GPU")
    else:
        g = times.get("gpu-offload", [])
        ran = next((ln.split()[-6] for ln in out.splitlines() if ln.startswith(f"c2c 3D {n}^3")), "?")
        case["gpu"] = side(g[1:], na, "gpu-offload --device gpu, copies included")
        case["note"] = (f"first call (makes the cuFFT plan): {fmt_s(g[0])}; " if g else "") + f"last call ran on: {ran}" + \
            ("" if "PASS" in out else "; results NOT within 1e-8 of FFTW's" if out else "")
    pts = n ** 3
    set_bound(r, case, pts * 16, pts * 16, 5.0 * pts * math.log2(pts), "d")
    r.add(case)


def group_small(r):
    # Half a second a run, whose spread from run to run on the 16-core GPU hosts (450-780 ms bare) is
    # larger than the overhead sought: three times the other cases' runs, at least 9 (interleaved pairs).
    runs = r.a.repeats if r.a.quick else max(9, 3 * r.a.repeats)
    js = os.path.join(r.tmp, "small.json")
    case = new_case("small-math", "small", "a short small-math NumPy program (3000 x 64^2 products, solves, Cholesky)",
                    "64", "program")
    rc, out, err = r.sh([sys.executable, os.path.join(HERE, "small_numpy_bench.py"), "--build", r.a.build, "--runs",
                         str(runs), "--json", js])
    d = json.load(open(js)) if rc == 0 and os.path.exists(js) else {}
    na = why(rc, err, "bench/small_numpy_bench.py failed")
    case["gpu"] = side(d.get("library"), na, "gpu-offload, --device auto")
    case["cpu"] = side(d.get("plain"), na, "without the library")
    case["peer"] = side(na="none: the library should cost nothing here")
    case["bound"] = {"na": "no GPU work"}
    if d:
        mapped = sum(c != "no-cuda" for c in d["cuda"])
        case["note"] = (f"overhead {statistics.median(d['library']) / statistics.median(d['plain']):.3f}x (median over "
                        f"median); CUDA mapped in {mapped} of {len(d['cuda'])} runs" + (" (never)" if not mapped else ""))
    r.add(case)


def group_startup(r):
    n, ops, dtypes, warm = SIZES["startup"][r.a.quick]
    cases = [new_case("gpu-start", "startup", "the GPU start (driver, context, the call's libraries)", "-", "trace"),
             new_case("first-calls", "startup", "first GPU calls: excess over the second, summed over the rows "
                      "(each the call that starts the GPU)", n, "trace"),
             new_case("first-calls-later", "startup", f"first GPU calls after another routine started the GPU and "
                      f"{warm} ms of other work, summed, not warmed", n, "trace"),
             new_case("first-calls-warmed", "startup", "the same, warmed beside the other work", n, "trace")]
    for c in cases:
        c["cpu"] = side(na="none (a GPU cost)")
        c["peer"] = side(na="none measured")
        c["bound"] = {"na": "a one-time cost"}
    if r.gpu_na:
        for c in cases:
            c["gpu"] = side(na="no GPU")
            r.add(c)
        return
    js = os.path.join(r.tmp, "startup.json")
    rc, out, err = r.sh([sys.executable, os.path.join(HERE, "startup_costs.py"), "--build", r.a.build, "--n", str(n),
                         "--ops", ops, "--dtypes", dtypes, "--loads", "0", "--warm", str(warm), "--json", js])
    d = json.load(open(js)) if os.path.exists(js) else {}
    na = why(rc, err, "bench/startup_costs.py gave no rows")
    rows, warmed = d.get("first_calls", []), d.get("warmed", [])
    on_gpu = [x for x in rows if x["device"] == "gpu"]
    cases[0]["size"] = f"{len(rows)} processes"
    cases[0]["gpu"] = side([x["start"] for x in rows if x["start"] > 0], "no process started the GPU" if rows else na,
                           "the processes of the rows")
    if on_gpu:
        cases[1]["gpu"] = side([sum(x["first"] - x["second"] for x in on_gpu)], na, f"{len(on_gpu)} rows, one pass")
        cases[1]["note"] = "largest rows: " + ", ".join(
            f"{x['op']} {x['dtype']} {fmt_s(x['first'] - x['second'])}"
            for x in sorted(on_gpu, key=lambda x: x["second"] - x["first"])[:3])
    else:
        cases[1]["gpu"] = side(na=na if not rows else "no row ran on the GPU")
    w = [x for x in warmed if x["device"] == x["warmed_device"] == "gpu"]
    if w:
        cases[2]["gpu"] = side([sum(x["first"] - x["second"] for x in w)], None, f"{len(w)} rows, one pass")
        cases[3]["gpu"] = side([sum(x["warmed_first"] - x["warmed_second"] for x in w)], None, f"{len(w)} rows, one pass")
        cases[3]["note"] = f"the warm-ups' own time, beside the program: {fmt_s(sum(x['warm_up'] for x in w))}"
    else:
        cases[2]["gpu"] = cases[3]["gpu"] = side(na=na if not warmed else "no row ran on the GPU")
    for c in cases:
        r.add(c)


def group_sweep(r):
    top = r.a.sweep_max_n if not r.a.quick else 64
    k = 3 if not r.a.quick else 1
    best = new_case("sweep-best-plan", "sweep", f"sweep (bench/auto_sweep.py): the best plan, from the CPU run and the "
                    f"per-call minimum over {k} --device gpu runs", f"32-{top}", "sweep")
    first = new_case("sweep-auto-first", "sweep", "sweep: auto's first run (no history) over the best plan",
                     f"32-{top}", "sweep", unit="x")
    second = new_case("sweep-auto-second", "sweep", "sweep: auto's second run (the first's history) over the best plan",
                      f"32-{top}", "sweep", unit="x")
    # The decision alone: the cpu run's calls and the gpu runs' fastest replayed through this build's
    # policy (auto_sweep.py --replay), no one-time cost but the start: what the start rule itself costs,
    # the bound the measured runs are compared with.
    replayed = {which: new_case(f"sweep-decision-{which}", "sweep", f"sweep: the decision alone, a {which} run "
                                f"(replayed on the cpu and gpu runs' calls), over its best plan", f"32-{top}", "sweep",
                                unit="x") for which in ("first", "second")}
    # One gpu run against the per-call fastest of all k: the run-to-run noise of the gpu side, about what
    # a run that decided every call right would read against the best plan (2026-12-07, to 16384: 1.025-1.041
    # on one H100 host, 1.084-1.223 on another).
    floor = new_case("sweep-gpu-floor", "sweep", f"sweep: one --device gpu run's calls over the per-call fastest of "
                     f"the {k} (the gpu side's run-to-run noise)", f"32-{top}", "sweep", unit="x")
    rows = (best, first, second, replayed["first"], replayed["second"], floor)
    for c in rows:
        c["cpu"] = side(na="in the best plan")
        c["peer"] = side(na="none")
        c["bound"] = {"na": "-"}
    if r.gpu_na:
        for c in rows:
            c["gpu"] = side(na="no GPU: auto would keep every call on the CPU")
            r.add(c)
        return
    s = os.path.join(r.tmp, "sweep")
    sweep = [sys.executable, os.path.join(HERE, "auto_sweep.py"), "--build", r.a.build, "--max-n", str(top)]
    other_cache = dict(r.env, XDG_CACHE_HOME=os.path.join(s, "cache-cpu-gpu"))
    rc, out, err = r.sh(sweep + ["--modes", "cpu", "--cpu-max-n", str(SWEEP_CPU_MAX_N), "--save", f"{s}/cpu"],
                        env=other_cache)
    fail = None if rc == 0 else why(rc, err, "the cpu run failed")
    gpus = []
    for i in range(k):
        if fail:
            break
        rc, out, err = r.sh(sweep + ["--modes", "gpu", "--save", f"{s}/gpu{i}"], env=other_cache)
        if rc != 0:
            fail = why(rc, err, f"gpu run {i + 1} failed")
        gpus.append(f"{s}/gpu{i}")
    if fail or k < 2:
        floor["gpu"] = side(na=fail or "one gpu run")
    else:
        try:
            floor["gpu"] = side(single_run_floor([load_run(g, "gpu") for g in gpus]), "the gpu runs gave no calls",
                                "each gpu run's calls / the per-call minimum of all the gpu runs")
        except (SystemExit, Exception) as e:  # noqa: BLE001 -- runs that differ: the row says so, the rest go on
            floor["gpu"] = side(na=f"not computed ({e})")
    for which, earlier in (("first", "0"), ("second", "1")):
        c = replayed[which]
        if fail:
            c["gpu"] = side(na=fail)
        elif top > SWEEP_CPU_MAX_N:
            c["gpu"] = side(na=f"the cpu run stops at n = {SWEEP_CPU_MAX_N}: no CPU time to replay above it")
        else:
            rc, out, err = r.sh(sweep + ["--load", f"{s}/cpu", "--gpu-min", ",".join(gpus), "--modes", "", "--replay",
                                         "--earlier-runs", earlier], env=other_cache)
            m = re.search(r"best plan known in advance [0-9.]+ s .*; auto / that = ([0-9.]+)", out)
            lost = re.search(r"GPU not started yet\s+(\d+) calls\s+\+([0-9.]+) s", out)
            c["gpu"] = side([float(m.group(1))] if rc == 0 and m else None, why(rc, err, "the replay printed no ratio"),
                            "the policy on the measured calls; its best plan leaves out the first GPU calls' loading")
            if lost:
                c["note"] = f"{lost.group(1)} calls before the GPU started: +{lost.group(2)} s"
    ratios = {"first": [], "second": []}
    plans, autos = [], {"first": [], "second": []}
    for j in range(k):
        if fail:
            break
        env = dict(r.env, XDG_CACHE_HOME=os.path.join(s, f"cache{j}"))  # a fresh history for each pair
        for which in ("first", "second"):
            js = f"{s}/auto{j}{which}.json"
            rc, out, err = r.sh(sweep + ["--load", f"{s}/cpu", "--gpu-min", ",".join(gpus), "--modes", "auto",
                                         "--save", f"{s}/auto{j}{which}", "--json", js], env=env)
            if rc != 0 or not os.path.exists(js):
                fail = why(rc, err, f"auto run {which} {j + 1} failed")
                break
            d = json.load(open(js))
            ratios[which].append(d["auto_vs_best_plan"])
            autos[which].append(d["auto_s"])
            plans.append(d["best_plan_s"])
    best["gpu"] = side(plans[:1], fail, "the cpu run + the per-call minimum of the gpu runs + their smallest start")
    first["gpu"] = side(ratios["first"], fail, "auto (its calls + its start) / best plan")
    second["gpu"] = side(ratios["second"], fail, "auto (its calls + its start) / best plan")
    for c, which in ((first, "first"), (second, "second")):
        if autos[which]:
            c["note"] = "auto: " + ", ".join(fmt_s(x) for x in autos[which])
    if r.a.out and os.path.isdir(s):  # the saved runs, one file, for bench/probes/slow_calls.py
        shutil.make_archive(os.path.join(r.a.out, "sweep-runs"), "gztar", s)
    for c in rows:
        r.add(c)


# ---------------------------------------------------------------------------------------------------------
# The machine, the commit, the ceilings

def commit():
    # GOFL_COMMIT first: the device's copy of the working tree carries a .git whose HEAD need not be the
    # tree it ran.
    if os.environ.get("GOFL_COMMIT"):
        return os.environ["GOFL_COMMIT"]
    try:
        h = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True, timeout=20)
        if h.returncode == 0:
            d = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"], capture_output=True,
                               text=True, timeout=60)
            return h.stdout.strip() + ("-dirty" if d.stdout.strip() else "")
    except (OSError, subprocess.TimeoutExpired):
        pass
    return "unknown (no git repository here: set GOFL_COMMIT)"


def gpu_problem(a):
    """Why no GPU can be used here (None when one can)."""
    if a.device_less:
        return "--device-less"
    if not os.path.exists(os.path.join(a.build, "lib", "libgpuoffload-cuda.so")):
        return "built without CUDA support"
    smi = shutil.which("nvidia-smi")
    if not smi:
        return "no NVIDIA driver: nvidia-smi not found"
    p = subprocess.run([smi, "-L"], capture_output=True, text=True)
    if p.returncode != 0 or "GPU " not in p.stdout:
        return "no GPU visible to nvidia-smi"
    return None


def machine(gpu_na):
    m = {"gpu": "none (" + gpu_na + ")" if gpu_na else "", "driver": "", "cpu": platform.processor() or "",
         "cores": os.cpu_count(), "usable_cores": len(os.sched_getaffinity(0)), "python": platform.python_version()}
    if not gpu_na:
        p = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"], capture_output=True,
                           text=True)
        first = (p.stdout.strip().splitlines() or [","])[0].split(",")
        m["gpu"], m["driver"] = first[0].strip(), first[-1].strip()
        m["gpus"] = len(p.stdout.strip().splitlines())
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                m["cpu"] = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    for pkg in ("numpy", "scipy", "torch", "pyFFTW"):
        try:
            m[pkg] = importlib.metadata.version(pkg)
        except importlib.metadata.PackageNotFoundError:
            m[pkg] = "not installed"
    m["openblas_num_threads"] = os.environ.get("OPENBLAS_NUM_THREADS", "unset")
    return m


def ceilings(r):
    if r.gpu_na:
        return {"na": "no GPU"}
    rc, out, err = r.sh([sys.executable, os.path.join(HERE, "ceilings.py")], timeout=180)
    try:
        c = json.loads(out.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {"na": why(rc, err, "bench/ceilings.py failed")}
    if "h2d_gbs" not in c:
        return {"na": "no pinned rate measured (bench/ceilings.py needs PyTorch with CUDA)"}
    return c


# ---------------------------------------------------------------------------------------------------------
# Output

def fmt_s(x):
    if x is None:
        return "-"
    if x >= 100:
        return f"{x:.0f} s"
    if x >= 1:
        return f"{x:.3g} s"
    if x >= 1e-3:
        return f"{x * 1e3:.3g} ms"
    return f"{x * 1e6:.3g} us"


def fmt_v(x, unit):
    return f"{x:.3f}" if unit == "x" else fmt_s(x)


def spread(s, unit):
    if "samples" not in s:
        return f"n/a ({s['na']})"
    v = s["samples"]
    return f"{fmt_v(statistics.median(v), unit)} ({fmt_v(min(v), unit)} - {fmt_v(max(v), unit)})"


def ratio(x):
    return "-" if x is None else f"{x:#.3g}".rstrip(".") + "x"


def cells(c):
    g, p, q, b = c["gpu"], c["cpu"], c["peer"], c["bound"]
    mg, mp, mq = med(g), med(p), med(q)
    vs_cpu = ratio(mp / mg) if mg is not None and mp is not None else "-"
    if "s" in b and mg is not None:
        vs_bound = f"{mg / b['s']:.2f} ({fmt_s(b['s'])})"
    else:  # why there is none, where a GPU figure would have had one
        vs_bound = f"n/a ({b['na']})" if "na" in b and mg is not None else "-"
    peer = (f"{q['what']}: {spread(q, c['unit'])}" if "samples" in q else f"n/a ({q['na']})")
    vs_peer = ratio(mq / mg) if mg is not None and mq is not None else "-"
    runs = str(len(g["samples"])) if "samples" in g else (str(len(p["samples"])) if "samples" in p else "-")
    return [c["title"], c["size"], TIMED[c["timed"]], runs, spread(g, c["unit"]), spread(p, c["unit"]), vs_cpu, vs_bound,
            peer, vs_peer, c.get("note", "")]


HEADERS = ["case", "n", "timed", "runs", "gpu-offload: median (min - max)", "CPU: median (min - max)", "vs CPU",
           "/ link bound", "peer: median (min - max)", "vs peer", "note"]


def header_lines(r):
    m, c = r.machine, r.ceil
    lines = [f"command: {r.command}",
             f"commit {r.commit}; {time.strftime('%Y-%m-%d %H:%M:%S')}; stage {r.a.stage}; repeats {r.a.repeats}"
             + ("; --quick (tiny sizes)" if r.a.quick else ""),
             f"machine: GPU {m['gpu']}" + (f", driver {m['driver']}" if m.get("driver") else "") +
             f"; CPU {m['cpu']}, {m['cores']} cores ({m['usable_cores']} usable), OPENBLAS_NUM_THREADS "
             f"{m['openblas_num_threads']}; Python {m['python']}, NumPy {m['numpy']}, SciPy {m['scipy']}, "
             f"PyTorch {m['torch']}"]
    if "h2d_gbs" in c:
        lines.append(f"ceilings measured in this run (bench/ceilings.py): pinned host->device {c['h2d_gbs']} GB/s, "
                     f"device->host {c['d2h_gbs']} GB/s; gemm TFLOP/s " +
                     ", ".join(f"{k} {v}" for k, v in c.get("tflops", {}).items()))
    else:
        lines.append(f"ceilings: n/a ({c.get('na', 'not measured')}): no link bound")
    lines.append("vs CPU, vs peer: their median over gpu-offload's (above 1: gpu-offload faster); / link bound: "
                 "gpu-offload's median over the bound (bytes in and out over the pinned rates + flops over the gemm "
                 "rate); timed: the call (in the program), an iteration (a loop's calls, after the first), from the "
                 "trace, the program (end to end), the sweep's calls (+ its GPU start)")
    return lines


def table_text(r):
    rows = [HEADERS] + [cells(c) for c in r.cases]
    widths = [max(len(x[i]) for x in rows) for i in range(len(HEADERS))]
    out = []
    for k, row in enumerate(rows):
        out.append("  ".join(x.ljust(w) for x, w in zip(row, widths)).rstrip())
        if k == 0:
            out.append("  ".join("-" * w for w in widths))
    return "\n".join(out)


def table_markdown(r):
    esc = lambda s: s.replace("|", "\\|")  # noqa: E731
    out = ["| " + " | ".join(HEADERS) + " |", "|" + "---|" * len(HEADERS)]
    out += ["| " + " | ".join(esc(x) for x in cells(c)) + " |" for c in r.cases]
    return "\n".join(out)


def brief(c):
    return spread(c["gpu"], c["unit"]) + "; CPU " + spread(c["cpu"], c["unit"])


def write_json(r):
    d = {"command": r.command, "commit": r.commit, "machine": r.machine, "stage": r.a.stage, "repeats": r.a.repeats,
         "quick": r.a.quick, "device_less": bool(r.gpu_na), "gpu_unavailable": r.gpu_na, "ceilings": r.ceil,
         "seconds": time.monotonic() - r.t0, "cases": r.cases}
    with open(os.path.join(r.a.out, "headline.json.tmp"), "w") as f:
        json.dump(d, f, indent=1)
    os.replace(os.path.join(r.a.out, "headline.json.tmp"), os.path.join(r.a.out, "headline.json"))


def finish(r):
    write_json(r)
    head = "\n".join(header_lines(r))
    md = table_markdown(r)
    with open(os.path.join(r.a.out, "headline.md"), "w") as f:
        f.write(head + "\n\n" + md + "\n")
    print(head)
    print()
    print(md if r.a.markdown else table_text(r))
    print(f"\n{len(r.cases)} cases in {time.monotonic() - r.t0:.0f} s; raw samples: "
          f"{os.path.join(r.a.out, 'headline.json')}", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__.split("\n\n", 2)[2])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--out", default=None, help="folder for headline.json, headline.md, headline-bench.log and the sweep's saved runs (sweep-runs.tar.gz)")
    ap.add_argument("--stage", choices=("a", "b", "all"), default="all")
    ap.add_argument("--repeats", type=int, default=None, help="runs of each case (default 5; 2 with --quick)")
    ap.add_argument("--only", default="", help="groups to run, of " + ", ".join(GROUPS["a"] + GROUPS["b"]))
    ap.add_argument("--warm", type=int, default=3,
                    help="untimed calls before the timed ones in the matmul and dgemm cases (default 3: with "
                         "residency, the timed calls are then its steady state; the first calls' times are in the note)")
    ap.add_argument("--budget", type=float, help="seconds: cases that would start later say n/a, a running one is cut")
    ap.add_argument("--markdown", action="store_true", help="print the table as README.md's results table")
    ap.add_argument("--quick", action="store_true", help="tiny sizes, a few seconds a case (the tests)")
    ap.add_argument("--device-less", action="store_true", help="as without a GPU: CPU only, the rest n/a")
    ap.add_argument("--sweep-max-n", type=int, default=2048,
                    help="the sweep's largest n (default 2048: about 3 minutes for its 10 runs; 16384 with --only "
                         "sweep in a device call of its own)")
    a = ap.parse_args()
    a.build = os.path.abspath(a.build)
    a.repeats = a.repeats or (2 if a.quick else 5)
    a.out = os.path.abspath(a.out or os.path.join(a.build, "headline"))
    os.makedirs(a.out, exist_ok=True)
    groups = GROUPS["a"] + GROUPS["b"] if a.stage == "all" else GROUPS[a.stage]
    only = [g for g in a.only.split(",") if g]
    if set(only) - set(GROUPS["a"] + GROUPS["b"]):
        raise SystemExit(f"--only: of {', '.join(GROUPS['a'] + GROUPS['b'])}")
    if only:  # in the order given: the first ones run first when the --budget is short
        left_out = [g for g in only if g not in groups]
        groups = [g for g in only if g in groups]
        if left_out:
            print(f"headline: --only {','.join(left_out)}: not in stage {a.stage} ({', '.join(GROUPS[a.stage])}); "
                  f"--stage all takes every group", file=sys.stderr)
        if not groups:
            raise SystemExit("headline: no group left to run")
    if not os.path.exists(os.path.join(a.build, "bin", "gpu-offload")):
        raise SystemExit(f"no {a.build}/bin/gpu-offload: build first (cmake -S . -B build -G Ninja && cmake --build build)")
    r = Run(a)
    r.command = " ".join(["python3", os.path.relpath(os.path.abspath(sys.argv[0]), ROOT)] + sys.argv[1:])
    r.gpu_na = gpu_problem(a)
    r.commit = commit()
    r.machine = machine(r.gpu_na)
    # A stage's timeout (SIGTERM) still prints and saves what was measured.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("headline: stopped by SIGTERM"))
    try:
        r.ceil = ceilings(r)
        for g in groups:
            left = r.left()
            if left is not None and left <= 1:
                c = new_case(g, g, f"{g}: not run", "-", "call")
                c["gpu"] = c["cpu"] = c["peer"] = side(na="out of the --budget")
                c["bound"] = {"na": "out of the --budget"}
                r.add(c)
                continue
            globals()[f"group_{g}"](r)
    finally:
        finish(r)
        shutil.rmtree(r.tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
