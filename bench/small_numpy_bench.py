#!/usr/bin/env python3
"""A short NumPy script with only small matrices, with and without gpu-offload (--device auto):
wall time of the whole process, best and median of repeated runs, and whether CUDA got loaded.

    python3 bench/small_numpy_bench.py [--build build] [--runs 15] [--profile FILE] [--json FILE]

--json FILE also writes every run's seconds (plain, under the library) and, per run under the library,
whether CUDA got mapped.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

SCRIPT = r"""
import numpy as np
rng = np.random.default_rng(0)
a = rng.standard_normal((64, 64)); s = a @ a.T + 64 * np.eye(64)
for _ in range(3000):
    b = a @ a; x = np.linalg.solve(s, a[:, :4]); np.linalg.cholesky(s)
maps = open('/proc/self/maps').read()
print('cuda-loaded' if ('libcuda' in maps or 'libgpuoffload-cuda' in maps) else 'no-cuda')
"""


def timed(cmd, env):
    t0 = time.perf_counter()
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    return time.perf_counter() - t0, p.stdout.strip().splitlines()[-1]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "build"))
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--profile", help="machine profile (default: the user's, else the built-in one)")
    ap.add_argument("--json", help="also write every run's seconds here")
    a = ap.parse_args()
    lib = os.path.join(a.build, "lib", "libgpuoffload.so")
    plain_env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD" and not k.startswith("GPU_OFFLOAD_")}
    pre_env = dict(plain_env, LD_PRELOAD=lib, GPU_OFFLOAD_DEVICE="auto")
    if a.profile:
        pre_env["GPU_OFFLOAD_PROFILE"] = os.path.abspath(a.profile)
    cmd = [sys.executable, "-c", SCRIPT]
    plain, pre, cuda, mapped = [], [], set(), []
    for _ in range(a.runs):  # interleaved, so drifts in machine load hit both alike
        plain.append(timed(cmd, plain_env)[0])
        t, c = timed(cmd, pre_env)
        pre.append(t)
        cuda.add(c)
        mapped.append(c)
    print(f"{'':<22} {'best s':>8} {'median s':>9}")
    print(f"{'without the library':<22} {min(plain):>8.3f} {statistics.median(plain):>9.3f}")
    print(f"{'gpu-offload (auto)':<22} {min(pre):>8.3f} {statistics.median(pre):>9.3f}")
    print(f"ratio (best): {min(pre) / min(plain):.3f}; ratio (median): {statistics.median(pre) / statistics.median(plain):.3f}; "
          f"under the library: {', '.join(sorted(cuda))}")
    print("(seconds: the whole process, start to exit, as the shell sees it)")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"plain": plain, "library": pre, "cuda": mapped}, f, indent=1)


if __name__ == "__main__":
    main()
