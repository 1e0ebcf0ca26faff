#!/usr/bin/env python3
"""Where the one-time costs go: loading each CUDA library, each step of the GPU start, and each
routine's first GPU call, in one run.

    python3 bench/startup_costs.py [--build build] [--n 1024] [--ops gemm,syrk,...] [--dtypes float32,...]
                                   [--loads 3] [--ahead-off] [--libraries-ahead-off] [--warm MS] [--json FILE]

1. Loading the CUDA libraries the backend uses, one after another in a fresh process each time
   (ctypes, dependencies first, so each line is that library alone): the runtime, which the backend
   links (the start pays it), and cuBLAS (with cuBLASLt), cuSOLVER and cuFFT, which the backend
   loads at their first use (src/cuda/cuda_libraries.h; the routine's first call pays it).
2. For each routine and type, a fresh process under --device gpu times two size-n calls (the
   worker of bench/first_call.py): first, second, excess = first - second, and what the first GPU
   call of the routine set up, from the trace: the cuBLAS / cuSOLVER handle (made on a helper
   thread while the inputs are copied in: its time is not all on the call's path), the pinned
   staging buffers, the device memory the pool allocated; "rest" = excess less those, which is the
   libraries' own first-use work (module loading, cuBLASLt heuristics, workspaces).
3. The GPU start, step by step, from the trace's setup records (`gpu-offload dump --setup`): the
   median over the processes of table 2.
--ahead-off repeats table 2 with GPU_OFFLOAD_HANDLES_AHEAD=0 (every handle made on the call's path).
--warm MS adds table 4 (warming, src/cuda/warm.h): each routine's first GPU call in a fresh process whose
GPU another routine started (cgemm of n = 64) before MS ms of other work, as it is and with the routine
warmed beside that work (GPU_OFFLOAD_WARM=routine); its warm-up's own time from the trace.
--libraries-ahead-off repeats tables 2 and 3 with GPU_OFFLOAD_LIBRARIES_AHEAD=0: the start no longer
loads the starting call's CUDA libraries beside the context, each loads at its first use.
--loads 0 leaves table 1 out. --json FILE writes tables 2 and 4 row by row (seconds: first, second, the
start that process paid; for table 4 not warmed and warmed), for bench/headline.py.
"""
import argparse
import csv
import io
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

from first_call import WORKER, routine_name, size_n_calls

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SETUP_COLUMNS = [("loading cuBLAS", "ld blas"), ("cuBLAS handle", "cublas"), ("loading cuSOLVER", "ld solv"),
                 ("cuSOLVER handle", "cusolver"), ("pinned staging buffers", "staging"), ("device memory", "devmem")]
LOADER = r"""
import ctypes, sys, time
for path in sys.argv[1:]:
    t0 = time.perf_counter()
    ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
    print(path, time.perf_counter() - t0)
"""


def cuda_libraries(backend):
    """(path, when it loads) for the CUDA libraries the backend uses, dependencies first: what ldd
    resolves (the runtime), then the lazily loaded ones from the toolkit folder of its RUNPATH."""
    out = subprocess.run(["ldd", backend], capture_output=True, text=True).stdout
    keep = ("libcudart", "libcublasLt", "libcublas.", "libnvJitLink", "libcusparse", "libcusolver.", "libcufft.")
    found = {}
    for p in re.findall(r"=> (\S+) \(", out):
        if any(k in os.path.basename(p) for k in keep):
            found[os.path.basename(p)] = (p, "at the start")
    dyn = subprocess.run(["readelf", "-d", backend], capture_output=True, text=True).stdout
    for folder in (m for r in re.findall(r"R(?:UN)?PATH.*?\[(.*?)\]", dyn) for m in r.split(":")):
        if not os.path.isdir(folder):
            continue
        for name in sorted(os.listdir(folder)):
            # One file per library: the soname (libX.so.N), not the unversioned link or the full version.
            if re.fullmatch(r"lib\w+\.so\.\d+", name) and any(name.startswith(k) for k in keep) and name not in found:
                found[name] = (os.path.join(folder, name), "at its first use")
    order = {k: i for i, k in enumerate(keep)}
    rank = lambda name: min(order[k] for k in keep if name.startswith(k))
    return [found[n] for n in sorted(found, key=rank)]


def load_table(backend, reps):
    libs = cuda_libraries(backend)
    if not libs:
        print("(no CUDA library found: the backend was not built)")
        return
    times = {p: [] for p, _ in libs}
    for _ in range(reps):
        out = subprocess.run([sys.executable, "-c", LOADER, *times], capture_output=True, text=True).stdout
        for line in out.splitlines():
            path, sec = line.rsplit(" ", 1)
            times[path].append(float(sec))
    print(f"\n1. Loading the CUDA libraries the backend uses (median of {reps} fresh processes, in this order)")
    total = {}
    for p, when in libs:
        med = statistics.median(times[p]) if times[p] else float("nan")
        total[when] = total.get(when, 0.0) + med
        print(f"   {os.path.basename(p):<34} {med * 1e3:8.1f} ms  loaded {when}")
    for when, sec in total.items():
        print(f"   {'all loaded ' + when:<34} {sec * 1e3:8.1f} ms")


def run_row(cli, op, dt, n, env, warm=0):
    """(first, second, device, setup phases of the op's first GPU call, start phases, start seconds) or an error."""
    with tempfile.TemporaryDirectory() as td:
        w = os.path.join(td, "w.py")
        open(w, "w").write(WORKER)
        trace = os.path.join(td, "t")
        p = subprocess.run([cli, "run", "--device", "gpu", "--trace", trace, "--", sys.executable, w, op, dt, str(n), str(warm)],
                           capture_output=True, text=True, env=env)
        if p.returncode != 0:
            return p.stderr[-300:]
        calls = subprocess.run([cli, "dump", "--csv", trace], capture_output=True, text=True, check=True).stdout
        setup = subprocess.run([cli, "dump", "--setup", "--csv", trace], capture_output=True, text=True, check=True).stdout
        starts = subprocess.run([cli, "dump", "--starts", "--csv", trace], capture_output=True, text=True, check=True).stdout
    name = routine_name(op, dt)
    rows = size_n_calls(calls, name, n)
    if len(rows) < 2:
        return f"{len(rows)} traced calls of {name} n={n}"
    first_call, start = {}, {}
    for r in csv.DictReader(io.StringIO(setup)):
        target = start if r["what"] == "start" else first_call if r["what"] == name else None
        if target is not None:
            target[r["phase"]] = target.get(r["phase"], 0.0) + float(r["seconds"])
    start_s = sum(int(r["duration_ns"]) for r in csv.DictReader(io.StringIO(starts)) if r["ok"] == "1") / 1e9
    return (int(rows[0]["duration_ns"]) / 1e9, int(rows[1]["duration_ns"]) / 1e9, rows[0]["device"], first_call, start,
            start_s)


def first_call_table(cli, ops, dtypes, n, env, title, rows_out=None):
    print(f"\n2. {title}: n = {n}, ms; excess = first - second; set-up of the routine's first GPU call from the trace")
    head = f"   {'op':<6} {'dtype':<10} {'first':>8} {'second':>8} {'excess':>8}"
    head += "".join(f" {short:>8}" for _, short in SETUP_COLUMNS) + f" {'rest':>8}"
    print(head)
    total, rows_n, starts = 0.0, 0, []
    for op in ops:
        for dt in dtypes:
            r = run_row(cli, op, dt, n, env)
            if isinstance(r, str):
                print(f"   {op:<6} {dt:<10} failed: {r}", flush=True)
                continue
            first, second, device, setup, start, start_s = r
            starts.append((start, start_s))
            if rows_out is not None:
                rows_out.append({"op": op, "dtype": dt, "first": first, "second": second, "device": device,
                                 "start": start_s})
            excess = first - second
            ours = sum(setup.get(phase, 0.0) for phase, _ in SETUP_COLUMNS)
            total += excess
            rows_n += 1
            line = f"   {op:<6} {dt:<10} {first * 1e3:8.2f} {second * 1e3:8.2f} {excess * 1e3:8.2f}"
            line += "".join(f" {setup.get(phase, 0.0) * 1e3:8.2f}" for phase, _ in SETUP_COLUMNS)
            line += f" {(excess - ours) * 1e3:8.2f}" + ("" if device == "gpu" else f"  (ran on {device})")
            print(line, flush=True)
    print(f"   first-call excess summed over {rows_n} rows: {total:.3f} s")
    return starts


def warm_table(cli, ops, dtypes, n, env, wait_ms, rows_out=None):
    """Warming (src/cuda/warm.h): each routine's first GPU call when another routine started the GPU
    (cgemm of n = 64) and the program then did wait_ms of other work: as it is, and with the routine
    warmed beside that work (GPU_OFFLOAD_WARM=routine). Fresh processes, --device gpu."""
    print(f"\n4. Warming: the first GPU call of each routine after a start by cgemm (n = 64) and {wait_ms} ms of other "
          f"work, not warmed and warmed (GPU_OFFLOAD_WARM=routine): n = {n}, ms; excess = first - second")
    print(f"   {'op':<6} {'dtype':<10} {'first':>8} {'second':>8} {'excess':>8} {'warmed':>8} {'second':>8} "
          f"{'excess':>8} {'warm-up':>8}")
    totals = [0.0, 0.0]
    rows_n = 0
    for op in ops:
        for dt in dtypes:
            cold = run_row(cli, op, dt, n, env, -wait_ms)
            warm = run_row(cli, op, dt, n, dict(env, GPU_OFFLOAD_WARM=routine_name(op, dt)), -wait_ms)
            if isinstance(cold, str) or isinstance(warm, str):
                print(f"   {op:<6} {dt:<10} failed: {cold if isinstance(cold, str) else warm}", flush=True)
                continue
            ex_c, ex_w = cold[0] - cold[1], warm[0] - warm[1]
            if rows_out is not None:
                rows_out.append({"op": op, "dtype": dt, "first": cold[0], "second": cold[1], "warmed_first": warm[0],
                                 "warmed_second": warm[1], "device": cold[2], "warmed_device": warm[2],
                                 "warm_up": warm[3].get("warmed beside the calls", 0.0)})
            totals[0] += ex_c
            totals[1] += ex_w
            rows_n += 1
            print(f"   {op:<6} {dt:<10} {cold[0] * 1e3:8.2f} {cold[1] * 1e3:8.2f} {ex_c * 1e3:8.2f} {warm[0] * 1e3:8.2f} "
                  f"{warm[1] * 1e3:8.2f} {ex_w * 1e3:8.2f} {warm[3].get('warmed beside the calls', 0.0) * 1e3:8.2f}"
                  + ("" if cold[2] == warm[2] == "gpu" else f"  (ran on {cold[2]}, {warm[2]})"), flush=True)
    print(f"   first-call excess summed over {rows_n} rows: {totals[0]:.3f} s not warmed, {totals[1]:.3f} s warmed "
          f"(warm-up column: the warm-up's own time, beside the program)")


def start_table(starts):
    if not starts:
        return
    phases = {}
    for start, _ in starts:
        for phase, sec in start.items():
            phases.setdefault(phase, []).append(sec)
    print(f"\n3. The GPU start, step by step (median of the {len(starts)} processes above, ms)")
    for phase, secs in sorted(phases.items(), key=lambda kv: -statistics.median(kv[1])):
        print(f"   {phase:<42} {statistics.median(secs) * 1e3:8.1f}")
    totals = [s for _, s in starts]
    print(f"   {'the whole start':<42} {statistics.median(totals) * 1e3:8.1f}   (min {min(totals) * 1e3:.1f}, "
          f"max {max(totals) * 1e3:.1f})")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--n", type=int, default=1024)
    ap.add_argument("--ops", default="gemm,syrk,trsm,getrf,gesv,potrf,syevd,gesdd")
    ap.add_argument("--dtypes", default="float32,float64,complex128")
    ap.add_argument("--loads", type=int, default=3)
    ap.add_argument("--ahead-off", action="store_true")
    ap.add_argument("--libraries-ahead-off", action="store_true")
    ap.add_argument("--warm", type=int, default=0, metavar="MS",
                    help="table 4: each routine's first call after a start by another routine and MS ms of other work, "
                         "not warmed and warmed")
    ap.add_argument("--json", help="also write tables 2 and 4 here, row by row")
    a = ap.parse_args()
    print("$ python3 bench/startup_costs.py " + " ".join(sys.argv[1:]))
    cli = os.path.join(a.build, "bin", "gpu-offload")
    base = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD" and not k.startswith("GPU_OFFLOAD_")}
    if a.loads > 0:
        load_table(os.path.join(a.build, "lib", "libgpuoffload-cuda.so"), a.loads)
    ops, dtypes = a.ops.split(","), a.dtypes.split(",")
    out = {"n": a.n, "first_calls": [], "warm_ms": a.warm, "warmed": []}
    starts = first_call_table(cli, ops, dtypes, a.n, base, "First GPU call of each routine", out["first_calls"])
    start_table(starts)
    if a.json:  # now, and again after table 4: a run stopped there keeps tables 2 and 3
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)
    if a.libraries_ahead_off:
        start_table(first_call_table(cli, ops, dtypes, a.n, dict(base, GPU_OFFLOAD_LIBRARIES_AHEAD="0"),
                                     "The same, each CUDA library loaded at its first use "
                                     "(GPU_OFFLOAD_LIBRARIES_AHEAD=0)"))
    if a.warm > 0:
        warm_table(cli, ops, dtypes, a.n, base, a.warm, out["warmed"])
        if a.json:
            with open(a.json, "w") as f:
                json.dump(out, f, indent=1)
    if a.ahead_off:
        first_call_table(cli, ops, dtypes, a.n, dict(base, GPU_OFFLOAD_HANDLES_AHEAD="0"),
                         "The same, every handle made on the call's path (GPU_OFFLOAD_HANDLES_AHEAD=0)")


if __name__ == "__main__":
    main()
