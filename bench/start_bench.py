#!/usr/bin/env python3
"""Does starting the GPU on a thread of its own pay? Wall time of small NumPy programs under
--device auto with GPU_OFFLOAD_START=wait and =background (interleaved, fresh process each), and
without the library.

    python3 bench/start_bench.py [--build build] [--reps 3]

Programs (float64, n = 2048; each product 17 GFLOP):
  products    12 products of the same matrices, back to back;
  with-numpy  12 products, each of two new random matrices (NumPy's generator, ~0.1 s, no BLAS);
  short       3 products of new random matrices (a program that hardly pays for the GPU).
"""
import argparse
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROGRAMS = {
    "products": "a = r.standard_normal((n, n)); b = r.standard_normal((n, n))\n"
                "t0 = time.perf_counter()\nfor _ in range(12): c = a @ b\n",
    "with-numpy": "t0 = time.perf_counter()\n"
                  "for _ in range(12):\n    a = r.standard_normal((n, n)); b = r.standard_normal((n, n)); c = a @ b\n",
    "short": "t0 = time.perf_counter()\n"
             "for _ in range(3):\n    a = r.standard_normal((n, n)); b = r.standard_normal((n, n)); c = a @ b\n",
}
HEAD = "import time\nimport numpy as np\nr = np.random.default_rng(0); n = 2048\n"
TAIL = "print(f'{time.perf_counter() - t0:.4f}')\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--reps", type=int, default=3)
    a = ap.parse_args()
    cli = os.path.join(a.build, "bin", "gpu-offload")
    base = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD" and not k.startswith("GPU_OFFLOAD_")}
    modes = {"no library": None, "auto, start = wait": "wait", "auto, start = background": "background"}
    print("wall seconds of the program's loop (the process start and NumPy's import not counted); median of "
          f"{a.reps}, [min, max]")
    print(f"{'program':<12} " + " ".join(f"{m:>28}" for m in modes))
    for name, body in PROGRAMS.items():
        times = {m: [] for m in modes}
        for _ in range(a.reps):
            for m, start in modes.items():
                cmd = [sys.executable, "-c", HEAD + body + TAIL]
                env = base
                if start:
                    cmd = [cli, "run", "--device", "auto", "--"] + cmd
                    env = dict(base, GPU_OFFLOAD_START=start)
                p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
                if p.returncode != 0:
                    raise SystemExit(f"{name} / {m} failed:\n{p.stderr[-1500:]}")
                times[m].append(float(p.stdout.split()[-1]))
        print(f"{name:<12} " + " ".join(
            f"{statistics.median(t):>9.3f} [{min(t):.3f}, {max(t):.3f}]".rjust(28) for t in times.values()), flush=True)


if __name__ == "__main__":
    main()
