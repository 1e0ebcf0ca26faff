#!/usr/bin/env python3
"""Why CUDA's driver step takes 104 ms in a bare process but 180-190 ms inside a NumPy
program under gpu-offload. Each variant is a fresh Python process that times cudaGetDeviceCount
(the driver's start, cuInit) and cudaFree(0) (the primary context) through ctypes, after:

    bare        nothing (not even NumPy)
    numpy       import numpy
    busy        import numpy, then a 4096^3 dgemm on OpenBLAS: its threads still spin when CUDA starts
    slept       the same dgemm, then 0.5 s of sleep: OpenBLAS's threads have gone to sleep
    one-thread  the same dgemm with OPENBLAS_NUM_THREADS=1 (no other thread exists)
    1t-slept    one-thread, then 0.5 s of sleep
    1t-thread   one-thread, then CUDA started on a new thread
    pyloop      import numpy, then 1.5 s of a pure-Python loop on the main thread (no BLAS)
    bare-2s     nothing but 2 s of sleep: is it the process's work, or how long the GPU sat idle?
    nvml-2s     NVML initialised (and kept) at once, then 2 s of sleep
The third column is how many CPUs the starting thread may run on (its affinity).

    python3 bench/probes/driver_start_probe.py [--reps 5] [--cudart PATH]
Variants alternate, so a drift of the machine touches all of them alike; the medians are printed.
"""
import argparse
import os
import statistics
import subprocess
import sys

PROBE = r"""
import ctypes, sys, time
import os, threading
variant, cudart = sys.argv[1], sys.argv[2]
if variant == "nvml-2s":
    nvml = ctypes.CDLL("libnvidia-ml.so.1")
    assert nvml.nvmlInit_v2() == 0
if variant.endswith("-2s"):
    time.sleep(2.0)
elif variant != "bare":
    import numpy as np
    if variant == "pyloop":
        t_end = time.perf_counter() + 1.5
        while time.perf_counter() < t_end:
            pass
    elif variant != "numpy":
        a = np.ones((4096, 4096))
        a @ a
        if variant.endswith("slept"):
            time.sleep(0.5)
rt = ctypes.CDLL(cudart)
out = []
def start():
    n = ctypes.c_int(0)
    cpus = len(os.sched_getaffinity(0))
    t0 = time.perf_counter()
    assert rt.cudaGetDeviceCount(ctypes.byref(n)) == 0
    t1 = time.perf_counter()
    assert rt.cudaFree(None) == 0
    t2 = time.perf_counter()
    out.append(((t1 - t0) * 1e3, (t2 - t1) * 1e3, cpus))
if variant.endswith("thread") and variant != "one-thread":
    th = threading.Thread(target=start)
    th.start()
    th.join()
else:
    start()
print(*out[0])
"""
VARIANTS = ["bare", "numpy", "busy", "slept", "one-thread", "1t-slept", "1t-thread", "pyloop", "bare-2s", "nvml-2s"]
ONE_THREAD = {"one-thread", "1t-slept", "1t-thread"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--variants", default=",".join(VARIANTS))
    toolkit = os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "lib64", "libcudart.so.13")
    ap.add_argument("--cudart", default=toolkit if os.path.exists(toolkit) else "libcudart.so.13")
    a = ap.parse_args()
    variants = a.variants.split(",")
    times = {v: ([], [], []) for v in variants}
    for _ in range(a.reps):
        for v in variants:
            env = {k: x for k, x in os.environ.items() if k != "LD_PRELOAD"}
            if v in ONE_THREAD:
                env["OPENBLAS_NUM_THREADS"] = "1"
            p = subprocess.run([sys.executable, "-c", PROBE, v, a.cudart],
                               capture_output=True, text=True, env=env)
            if p.returncode != 0:
                raise SystemExit(f"{v}: {p.stderr[-500:]}")
            for i, x in enumerate(p.stdout.split()):
                times[v][i].append(float(x))
    pm = subprocess.run(["nvidia-smi", "--query-gpu=persistence_mode", "--format=csv,noheader"], capture_output=True,
                        text=True).stdout.strip()
    print(f"CUDA's driver step and context in fresh Python processes (median of {a.reps}, ms; min-max); "
          f"persistence mode: {pm or 'unknown'}")
    print(f"{'variant':<12} {'driver':>8} {'range':>15} {'context':>8} {'range':>15} {'cpus':>5}")
    for v in variants:
        d, c, cpus = times[v]
        print(f"{v:<12} {statistics.median(d):8.1f} {min(d):7.1f}-{max(d):<7.1f} {statistics.median(c):8.1f} "
              f"{min(c):7.1f}-{max(c):<7.1f} {int(min(cpus)):>5}")


if __name__ == "__main__":
    main()
