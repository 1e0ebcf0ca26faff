#!/usr/bin/env python3
"""Is --device auto right? The same sequence of calls under --device cpu, gpu and auto; per call,
the time auto's choice took against the better of the two devices.

    python3 bench/auto_sweep.py [--build build] [--max-n 16384] [--quick] [--level 5] [--complex-max 8192]
                               [--profile FILE] [--modes cpu,gpu,auto] [--save DIR] [--load DIR] [--replay [--earlier-runs N]]
                               [--set GPU_OFFLOAD_NAME=VALUE ...] [--gpu-min DIR,DIR...] [--cpu-max-n N] [--json FILE]

Calls go through SciPy's BLAS/LAPACK wrappers (gemm, syrk, trsm, getrf, gesv, potrf, syevd, gesdd)
in float32, float64 and complex128, n = 32 ... max-n, each made twice. Times are the library's own
per-call durations from the traces (NumPy's copies around a call are not counted). Goal:
total chosen <= 1.05 x total best, and no call more than 1.5x its best device.

--replay makes no auto run: the calls of the cpu and gpu runs (made now, or from --load) go through
the current build's decision (bench/replay_policy.cpp), each taking its device's measured time, to
see what a change of the policy would have done on a measured sweep without the GPU machine. It
cannot see auto's own first uses of each routine on the GPU (the gpu run paid them at other
sizes): on the GPU test machine's sweep (H200, 16-core host; bench/results/h200-sweep-2026-11-29)
the replay of the policy then measured gave 13.85 s in the
calls against 14.27 s measured. It also prints, per operation, the CPU time of the calls it sent to
the GPU as the decision predicted it (what the summary's "gained" counts), as the profile alone has
it, and as the cpu run measured it.

--gpu-min DIR,...: the gpu side of the comparison (and of --replay) is the per-call minimum over the gpu
runs saved in those folders (--save) and the gpu run made or loaded now, if any; its start-up the
smallest of theirs.
--cpu-max-n N: the cpu run makes only the calls of n <= N, and above it the gpu run's time stands for
the better device (every such call of the H200 host's full sweep ran faster on the GPU).
--json FILE writes the comparison's totals (auto's calls and start-up, the per-call best, the best
plan known in advance and the ratios to both), for bench/headline.py.
"""

import argparse
import contextlib
import csv
import io
import json
import os
import re
import subprocess
import sys
import tempfile

from gpu_state import LINE as GPU_STATE_LINE, GpuState

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Calls shorter than this vary by more than 1.5x between runs of the same device: they count in the
# totals but not in the worst-call check.
NOISE_FLOOR_S = 1e-3

WORKER = r"""
import os, sys, time
from concurrent.futures import ThreadPoolExecutor
import numpy as np
from scipy.linalg import blas, lapack
sizes = [int(x) for x in sys.argv[1].split(",")]
limits = {k: int(v) for k, v in (x.split("=") for x in sys.argv[2].split(","))}
pre = {"float32": "s", "float64": "d", "complex128": "z"}
made = [0]  # how many matrices were made: the next one's seeds
# The matrices are made in Fortran order (the transpose of a C-order array), in 64 row blocks of seeds
# of their own filled by a thread each (NumPy's generators let go of the GIL), and the SPD one gets n
# on its diagonal in place. One thread's normals (about 19 ns each on the 16-core H100 host), NumPy's
# transposing copies and an n x n identity took most of a run's wall time at n = 16384, none of it
# traced. The values do not depend on the number of cores.
def mat(n, dt):
    m = np.empty((n, n), dtype=dt)
    flat = m.view(np.float64) if dt == "complex128" else m  # real and imaginary parts side by side
    blocks = np.array_split(np.arange(n), min(n, 64))
    made[0] += 1
    seed = made[0]
    def fill(k):
        rows = blocks[k]
        np.random.default_rng([seed, k]).standard_normal(out=flat[rows[0]:rows[-1] + 1], dtype=flat.dtype)
    with ThreadPoolExecutor(os.cpu_count()) as pool:
        list(pool.map(fill, range(len(blocks))))
    return m.T
def spd_of(a):  # a a^H + n I in Fortran order: NumPy's product (one of the sweep's calls) is C order,
                # and the transpose of a Hermitian positive definite matrix (its conjugate) is one too
    s = a @ a.conj().T
    s[np.diag_indices(len(s))] += len(s)
    return s.T if s.flags.c_contiguous else np.asfortranarray(s)
w = mat(256, "float64"); blas.dgemm(1.0, w, w)  # warm-up, not counted: library loading
print("sweep-start", flush=True)
t0 = time.perf_counter()
for dt in ("float32", "float64", "complex128"):
    p = pre[dt]
    for n in sizes:
        if dt == "complex128" and n > limits["complex"]:
            continue
        a = mat(n, dt); b = mat(n, dt)
        spd = spd_of(a)
        for rep in range(2):
            if n <= limits["gemm"]: getattr(blas, p + "gemm")(1.0, a, b)
            if n <= limits["syrk"]: getattr(blas, p + "syrk")(1.0, a)
            if n <= limits["trsm"]: getattr(blas, p + "trsm")(1.0, spd, b, lower=1)
            if n <= limits["getrf"]: getattr(lapack, p + "getrf")(a)
            if n <= limits["gesv"]: getattr(lapack, p + "gesv")(a, b[:, :64])
            if n <= limits["potrf"]: getattr(lapack, p + "potrf")(spd, lower=1)
            if n <= limits["syevd"]:
                (lapack.dsyevd if p == "d" else lapack.ssyevd if p == "s" else lapack.zheevd)(spd)
            if n <= limits["gesdd"]: getattr(lapack, p + "gesdd")(a)
print(f"sweep loop: {time.perf_counter() - t0:.3f} s wall (matrix making included)", file=sys.stderr)
"""


def traced_calls(csv_text):
    rows = [r for r in csv.DictReader(io.StringIO(csv_text)) if r["nested"] == "0" and r["query"] == "0"]
    rows.sort(key=lambda r: int(r["t_start_ns"]))
    return rows[1:]  # the first is the warm-up dgemm


def run_mode(cli, mode, sizes, limits, level, env, profile=None):
    """Runs the worker under --device MODE; returns its trace as CSV text, its summary, its GPU starts
    and its one-time costs (`gpu-offload dump --starts` / `--setup`, CSV)."""
    with tempfile.TemporaryDirectory() as td:
        # One path for every run: the run history (policy/history.h) knows a program by its script,
        # so a second sweep's auto run reads what the first one's gained.
        worker = os.path.join(tempfile.gettempdir(), "gofl-auto-sweep-worker.py")
        with open(worker, "w") as f:
            f.write(WORKER)
        trace = os.path.join(td, "trace")
        cmd = [cli, "run", "--device", mode, "--level", str(level), "--trace", trace, "--summary"]
        if profile:
            cmd += ["--profile", os.path.abspath(profile)]
        cmd += ["--",
               sys.executable, worker, ",".join(map(str, sizes)), ",".join(f"{k}={v}" for k, v in limits.items())]
        # The GPU's clocks beside a run that uses it: the GPU's own slowdowns told from the library's.
        with (GpuState() if mode != "cpu" else contextlib.nullcontext()) as gpu_state:
            p = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if p.returncode != 0:
            raise SystemExit(f"{mode} run failed:\n{p.stderr[-2000:]}")
        d = subprocess.run([cli, "dump", "--csv", trace], capture_output=True, text=True, check=True)
        s = subprocess.run([cli, "dump", "--starts", "--csv", trace], capture_output=True, text=True, check=True)
        # The one-time costs (start steps, first calls' set-up, warm-ups), for a look at a run's timeline.
        u = subprocess.run([cli, "dump", "--setup", "--csv", trace], capture_output=True, text=True, check=True)
        summary = p.stderr if mode == "cpu" else p.stderr + gpu_state.line() + "\n"
        return d.stdout, summary, s.stdout, u.stdout


def startup_of(run):
    """The GPU start-up a run paid: from its trace's start records (`gpu-offload dump --starts`): the
    part the program waited for (waited_ns; all of it, duration_ns, in traces from before a start
    could run beside the calls), else, for runs saved before the trace recorded it, from its summary."""
    rows = list(csv.DictReader(io.StringIO(run[2]))) if run[2] else []
    if rows:
        return sum(int(r.get("waited_ns") or r["duration_ns"]) for r in rows if r["ok"] == "1") / 1e9
    return startup_paid(run[1])


def startup_paid(summary):
    """The GPU start-up the run paid, from its summary ("GPU start-up: paid 496.1 ms ..."), else 0.
    The trace's call durations leave it out: the GPU starts in the decision, before a call's clock."""
    m = re.search(r"GPU start-up: paid ([0-9.]+) (s|ms|us)", summary)
    return float(m.group(1)) * {"s": 1.0, "ms": 1e-3, "us": 1e-6}[m.group(2)] if m else 0.0


def loop_wall(summary):
    m = re.search(r"sweep loop: ([0-9.]+) s wall", summary)
    return float(m.group(1)) if m else None


def call_keys(rows):
    """Each call's (op, n, which call of that op and n it is), in order: the same call in runs that
    traced different sizes (a cpu run made with --cpu-max-n)."""
    seen = {}
    for r in rows:
        k = (r["op"], r["m"])
        seen[k] = seen.get(k, 0) + 1
        yield k + (seen[k],)


def replay_lines(cpu_rows, gpu_rows):
    """The replay's input (bench/replay_policy.cpp): one line per call."""
    lines = []
    for c, g in zip(cpu_rows, gpu_rows):
        if not (c["op"] == g["op"] and c["m"] == g["m"]):
            raise SystemExit(f"the cpu and gpu runs differ at {c['op']} n={c['m']} / {g['op']} n={g['m']}")
        tc = int(c["duration_ns"]) / 1e9
        tg = int(g["duration_ns"]) / 1e9 if g["device"] == "gpu" else tc
        ops = []
        for o in filter(None, c["operands"].split(";")):
            _, nbytes, fp_in, fp_out = o.split(":")
            ops.append(f"{nbytes} {int(fp_in != '0')} {int(fp_out != '0')}")
        lines.append(f"{c['op']} {c['flops']} {tc!r} {tg!r} {len(ops)} {' '.join(ops)}".rstrip())
    return lines


def load_run(folder, mode):
    """A run saved with --save: (csv, summary, starts.csv); an empty text for a file it lacks."""
    return tuple(open(os.path.join(folder, f"{mode}.{ext}")).read()
                 if os.path.exists(os.path.join(folder, f"{mode}.{ext}")) else ""
                 for ext in ("csv", "summary", "starts.csv"))


def per_call_min(gpu_runs):
    """The traced calls of several gpu runs of the same sweep, each call the fastest of its GPU runs (its
    first run's row where no run took it to the GPU)."""
    rows = [traced_calls(r[0]) for r in gpu_runs]
    n = min(len(r) for r in rows)
    out = []
    for i in range(n):
        same = [r[i] for r in rows]
        if len({(c["op"], c["m"]) for c in same}) != 1:
            raise SystemExit(f"the gpu runs differ at call {i}: {[(c['op'], c['m']) for c in same]}")
        on_gpu = [c for c in same if c["device"] == "gpu"]
        out.append(min(on_gpu, key=lambda c: int(c["duration_ns"])) if on_gpu else same[0])
    return out


def single_run_floor(gpu_runs, best_rows=None):
    """Each gpu run's traced calls over the per-call minimum of all of them (best_rows, when the caller has
    it already; None for fewer than two runs): the run-to-run noise of the gpu side, about what a run
    that put every call on its better device would read against a best plan built from the fastest of
    several runs."""
    if len(gpu_runs) < 2:
        return None
    best_rows = best_rows or per_call_min(gpu_runs)
    best = sum(int(c["duration_ns"]) for c in best_rows)
    return [sum(int(c["duration_ns"]) for c in traced_calls(r[0])[:len(best_rows)]) / best
            for r in gpu_runs] if best else None


def replay(a, raw, gpu_runs, env):
    if not {"cpu", "gpu"} <= set(raw):
        raise SystemExit("--replay needs the cpu and gpu runs (made now or --load)")
    cpu_rows, gpu_rows = traced_calls(raw["cpu"][0]), per_call_min(gpu_runs)  # gpu_runs holds raw["gpu"]
    if len(cpu_rows) != len(gpu_rows):
        raise SystemExit(f"--replay needs a cpu run of every call: {len(cpu_rows)} cpu calls, {len(gpu_rows)} gpu "
                         f"calls (a cpu run made with --cpu-max-n cannot be replayed)")
    startup = min(startup_of(r) for r in gpu_runs)
    with tempfile.NamedTemporaryFile("w", suffix=".calls", delete=False) as f:
        f.write("\n".join(replay_lines(cpu_rows, gpu_rows)) + "\n")
    try:
        cmd = [os.path.join(a.build, "bin", "replay_policy"), f.name, repr(startup), "--level", str(a.level)]
        if a.profile:
            cmd += ["--profile", os.path.abspath(a.profile)]
        if a.earlier_runs:
            cmd += ["--earlier-runs", str(a.earlier_runs)]
        p = subprocess.run(cmd, capture_output=True, text=True, env=env)  # --set reaches the decision
        sys.stdout.write(p.stdout)
        sys.stderr.write(p.stderr)
        if p.returncode != 0:
            raise SystemExit(p.returncode)
    finally:
        os.unlink(f.name)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--max-n", type=int, default=16384)
    ap.add_argument("--quick", action="store_true", help="n up to 2048")
    ap.add_argument("--level", type=int, default=5)
    ap.add_argument("--complex-max", type=int, default=8192, help="largest n for complex128 (slow on the CPU)")
    ap.add_argument("--profile", help="machine profile (default: the user's, else the built-in one)")
    ap.add_argument("--modes",
                    help="the runs to make now (default: cpu, gpu and auto, less those --load has); with --load "
                         "the others come from earlier ones (the three runs of a sweep to n = 16384 take longer "
                         "than one device call allows)")
    ap.add_argument("--save", help="folder to keep each run's trace (MODE.csv) and summary (MODE.summary) in")
    ap.add_argument("--load", help="folder of an earlier --save: the runs not made now come from it")
    ap.add_argument("--replay", action="store_true",
                    help="no auto run: replay the cpu and gpu runs' calls through the current build's decision "
                         "(bench/replay_policy.cpp) and print what auto would have taken")
    ap.add_argument("--earlier-runs", type=int, default=0,
                    help="with --replay: replay a run whose N latest earlier runs gained (the run history "
                         "then starts the GPU at the first call predicted to gain)")
    ap.add_argument("--gpu-min", default="", metavar="DIR,DIR...",
                    help="folders of saved gpu runs (--save): the gpu side is the per-call minimum over them "
                         "(and the gpu run made or loaded now)")
    ap.add_argument("--cpu-max-n", type=int, metavar="N",
                    help="the cpu run makes only the calls of n <= N; for larger ones the gpu run's time stands "
                         "for the better device (on the H200 host's full sweep every call of n >= 4096 ran "
                         "faster on the GPU: 98 of 98, 234 s of the cpu run's 254). A sweep to n = 16384 then "
                         "needs no 250-s cpu run; the all-on-the-CPU plan is not priced")
    ap.add_argument("--json", help="write the comparison's totals here")
    ap.add_argument("--set", action="append", default=[], metavar="GPU_OFFLOAD_NAME=VALUE",
                    help="a setting for every run made now (they get no other GPU_OFFLOAD_ variable), e.g. "
                         "--set GPU_OFFLOAD_START_AHEAD=1; --replay's decision takes GPU_OFFLOAD_FIRST_CALL_MS")
    a = ap.parse_args()
    cli = os.path.join(a.build, "bin", "gpu-offload")
    top = 2048 if a.quick else a.max_n
    sizes = [n for n in (32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384) if n <= top]
    # The CPU side of the largest factorizations (and of complex products) takes minutes: cap them.
    limits = {"gemm": top, "syrk": top, "trsm": top, "getrf": min(top, 8192), "gesv": min(top, 8192),
              "potrf": min(top, 8192), "syevd": min(top, 4096), "gesdd": min(top, 2048),
              "complex": min(top, a.complex_max)}
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD" and not k.startswith("GPU_OFFLOAD_")}
    for kv in a.set:
        k, eq, v = kv.partition("=")
        if not (eq and k.startswith("GPU_OFFLOAD_")):
            raise SystemExit(f"--set: GPU_OFFLOAD_NAME=VALUE, not {kv!r}")
        env[k] = v
    if a.set:
        print("settings: " + " ".join(a.set), flush=True)
    loadable = {m for m in ("cpu", "gpu", "auto") if a.load and os.path.exists(os.path.join(a.load, f"{m}.csv"))}
    if a.modes is None:
        a.modes = ",".join(m for m in ("cpu", "gpu", "auto") if m not in loadable)
    modes = [m for m in a.modes.split(",") if m]
    if not set(modes) <= {"cpu", "gpu", "auto"}:
        raise SystemExit(f"--modes: cpu, gpu and auto only, not {a.modes}")
    print(f"sizes {sizes}; limits {limits}", flush=True)
    raw = {}
    for m in ("cpu", "gpu", "auto"):
        if a.replay and m == "auto":
            continue
        if m in modes:
            run_sizes = [n for n in sizes if m != "cpu" or a.cpu_max_n is None or n <= a.cpu_max_n]
            raw[m] = run_mode(cli, m, run_sizes, limits, a.level, env, a.profile)
            if a.save:
                os.makedirs(a.save, exist_ok=True)
                for ext, text in zip(("csv", "summary", "starts.csv", "setup.csv"), raw[m]):
                    with open(os.path.join(a.save, f"{m}.{ext}"), "w") as f:
                        f.write(text)
            gpu_line = [ln for ln in raw[m][1].splitlines() if ln.startswith(GPU_STATE_LINE)]
            print(f"{m} run done" + (f"; {gpu_line[-1]}" if gpu_line else ""), flush=True)
        elif m in loadable:
            # Folders saved before the traces recorded the GPU start have no MODE.starts.csv.
            raw[m] = load_run(a.load, m)
    gpu_runs = ([raw["gpu"]] if "gpu" in raw else []) + [load_run(d, "gpu") for d in a.gpu_min.split(",") if d]
    if gpu_runs and "gpu" not in raw:
        raw["gpu"] = gpu_runs[0]
    if a.replay:
        return replay(a, raw, gpu_runs, env)
    if len(raw) < 3:
        print(f"runs made or loaded: {sorted(raw)}; the comparison needs cpu, gpu and auto")
        return
    # What auto paid to start the GPU (its trace's start records, else its summary; the calls'
    # durations leave it out), and what a
    # start costs on this machine (the --device gpu run starts it at the warm-up call).
    auto_start = startup_of(raw["auto"])
    startup = min(startup_of(r) for r in gpu_runs) or auto_start
    runs = {m: traced_calls(r[0]) for m, r in raw.items()}
    floor = None
    if len(gpu_runs) > 1:
        runs["gpu"] = per_call_min(gpu_runs)
        floor = single_run_floor(gpu_runs, runs["gpu"])
        print(f"gpu side: the per-call minimum over {len(gpu_runs)} gpu runs (start-up: the smallest, {startup:.3f} s); "
              f"each run's calls over it: {', '.join(f'{x:.3f}' for x in floor or [])}")
    # A cpu run made with --cpu-max-n lacks the larger calls: the gpu run's time stands for the better
    # device there.
    cpu_by_call = dict(zip(call_keys(runs["cpu"]), runs["cpu"]))
    cpu_top = max((int(c["m"]) for c in runs["cpu"]), default=0)
    n_calls = min(len(runs["gpu"]), len(runs["auto"]))
    if len({len(runs["gpu"]), len(runs["auto"])}) != 1:
        print(f"warning: the gpu and auto runs traced different call counts {len(runs['gpu'])}, {len(runs['auto'])}; "
              f"comparing the first {n_calls}")
    cpu_short = 0  # calls above the cpu run's largest n
    print(f"{'op':<8} {'n':>6} {'cpu s':>9} {'gpu s':>9} {'auto s':>9} {'auto ran':>8} {'reason':<22} {'auto/best':>9}")
    total_auto = total_best = total_cpu = 0.0
    worst = (0.0, "")
    by_reason = {}  # auto's reason -> [calls, seconds over the per-call best]
    losses = []
    # CUDA loads a routine's kernels at its first GPU call (lazy module loading): tens of ms for
    # some. The --device gpu run pays it at n = 32, where the CPU is the per-call best, so the best
    # never shows it; auto pays it at its own first offload of the routine. Both are counted apart.
    auto_gpu_seen, gpu_first = set(), {}  # op -> the gpu run's first call over its repeat at that n
    for i, g in enumerate(runs["gpu"][:n_calls]):
        if g["op"] not in gpu_first and g["device"] == "gpu":
            rep = [int(r["duration_ns"]) for r in runs["gpu"][i + 1:n_calls] if r["op"] == g["op"] and r["m"] == g["m"]]
            gpu_first[g["op"]] = max(0.0, (int(g["duration_ns"]) - min(rep)) / 1e9) if rep else 0.0
    plan_gpu_ops = set()
    for i, key in zip(range(n_calls), call_keys(runs["gpu"])):
        g, au = runs["gpu"][i], runs["auto"][i]
        c = cpu_by_call.get(key)
        if c is None and int(g["m"]) > cpu_top:
            c = g  # above the cpu run's sizes: the gpu run's time is the better device's
            cpu_short += 1
        if c is None or not (g["op"] == au["op"] and g["m"] == au["m"]):
            print(f"warning: call {i} differs between runs ({g['op']} n={g['m']}, auto {au['op']} n={au['m']}, "
                  f"{'no such call in the cpu run' if c is None else 'cpu ' + c['op']}); stopping")
            break
        tc, tg, ta = (int(r["duration_ns"]) / 1e9 for r in (c, g, au))
        if g["device"] != "gpu":
            tg = tc  # the GPU path did not take it (unsupported variant): the CPU is its GPU-mode time
        best = min(tc, tg)
        if tg < tc or (c is g and g["device"] == "gpu"):
            plan_gpu_ops.add(c["op"])
        total_cpu += tc
        total_auto += ta
        total_best += best
        ratio = ta / best if best > 0 else 1.0
        if best >= NOISE_FLOOR_S and ratio > worst[0]:
            worst = (ratio, f"{c['op']} n={c['m']}")
        print(f"{c['op']:<8} {c['m']:>6} {tc:>9.5f} {tg:>9.5f} {ta:>9.5f} {au['device']:>8} {au['reason']:<22} {ratio:>9.2f}")
        reason = au["reason"]
        if au["device"] == "gpu" and au["op"] not in auto_gpu_seen:
            auto_gpu_seen.add(au["op"])
            reason = "first GPU call of the op"  # offloaded, and paid the kernels' loading
        slot = by_reason.setdefault(reason, [0, 0.0])
        slot[0] += 1
        slot[1] += ta - best
        losses.append((ta - best, f"{c['op']} n={c['m']} ({au['device']}, {reason}: {ta:.4f} s, best {best:.4f} s)"))
    print("\nauto's time over the per-call best, by the reason auto gave:")
    for reason, (count, sec) in sorted(by_reason.items(), key=lambda x: -x[1][1]):
        print(f"  {reason:<24} {count:>5} calls {sec:>+9.3f} s")
    print(f"  {'GPU start-up':<24} {'':>11} {auto_start:>+9.3f} s")
    print("the five calls that lost most: " + "; ".join(t for _, t in sorted(losses, reverse=True)[:5]))
    total_auto_all = total_auto + auto_start
    print(f"\ntotal: auto {total_auto:.3f} s in its calls + {auto_start:.3f} s GPU start-up = {total_auto_all:.3f} s; "
          f"per-call best {total_best:.3f} s; ratio {total_auto_all / total_best:.3f} (goal <= 1.05); "
          f"worst call of at least {NOISE_FLOOR_S * 1e3:.0f} ms: {worst[0]:.2f}x its best "
          f"({worst[1] or 'none'}; goal <= 1.5)")
    # The per-call best never pays the start-up; the best plan known in advance either stays on the
    # CPU or starts the GPU first and then takes the better device per call.
    # Any plan that runs an operation on the GPU also loads its kernels once: the gpu run's first call
    # of each such operation, over that call's repeat, estimates it.
    loads = sum(gpu_first.get(op, 0.0) for op in plan_gpu_ops)
    # A cpu run of fewer sizes does not price the all-on-the-CPU plan (its larger calls were not made).
    all_cpu = f"{total_cpu:.3f} s" if not cpu_short else f"not priced: the cpu run stopped at n = {cpu_top}, {cpu_short} calls above it"
    if cpu_short:
        total_cpu = float("inf")
    planned = min(total_cpu, startup + loads + total_best)
    print(f"GPU start-up {startup:.3f} s (the --device gpu run's); best plan known in advance (all on the CPU "
          f"{all_cpu}, or start the GPU first, then the better device per call {startup + total_best:.3f} s "
          f"+ {loads:.3f} s of first GPU calls of its {len(plan_gpu_ops)} GPU ops = {startup + loads + total_best:.3f} s): "
          f"auto / that = {total_auto_all / planned:.3f}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"auto_calls_s": total_auto, "auto_start_s": auto_start, "auto_s": total_auto_all,
                       "per_call_best_s": total_best, "cpu_s": None if cpu_short else total_cpu,
                       "cpu_run_max_n": cpu_top, "calls_above_cpu_run": cpu_short, "gpu_start_s": startup,
                       "first_gpu_calls_s": loads, "best_plan_s": planned, "auto_vs_best_plan": total_auto_all / planned,
                       "auto_vs_per_call_best": total_auto_all / total_best, "gpu_runs": len(gpu_runs),
                       "gpu_run_floor": floor, "calls": n_calls, "worst_call": worst[0],
                       "worst_call_what": worst[1]}, f, indent=1)
    walls = {m: loop_wall(raw[m][1]) for m in ("cpu", "gpu", "auto")}
    if all(walls.values()):
        print("the sweep loop's wall time (NumPy's matrix making included; the gpu run started the GPU before "
              "it): " + ", ".join(f"{m} {w:.3f} s" for m, w in walls.items()))

if __name__ == "__main__":
    main()
