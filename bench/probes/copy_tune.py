#!/usr/bin/env python3
"""Where the copy time of NumPy `a @ b` goes, setting by setting (on the GPU machine).

    python3 bench/probes/copy_tune.py [--build build] [--sizes 4096,8192] [--reps 4] [--dtype float64]

For each copy setting (the GPU_OFFLOAD_* variables of src/cuda/engine.cpp and prefault.cpp) and
size, one process runs `a @ b` under `gpu-offload run --device gpu --trace` a few times after a
warm-up, and the trace gives the call's time and its copy rates. Two kinds of result matrix:
  fresh  c = a @ b: NumPy allocates c each time, so the copy-out writes pages the kernel has not
         yet given the process (each first touch faults and zeroes the page);
  reused np.matmul(a, b, out=c) into one array touched before: the copy-out's upper bound.
The difference between the two is what the output's page faults cost.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.dirname(HERE)
ROOT = os.path.dirname(BENCH)
sys.path.insert(0, BENCH)

import numpy_bench as nb  # noqa: E402  (bench/numpy_bench.py, one folder up)

WORKER = r"""
import sys
import numpy as np
mode, dtype, n, reps = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
rng = np.random.default_rng(1)
a = rng.standard_normal((n, n)).astype(dtype); b = rng.standard_normal((n, n)).astype(dtype)
c = np.ones((n, n), dtype=dtype)
fn = (lambda: a @ b) if mode == "fresh" else (lambda: np.matmul(a, b, out=c))
fn()
for _ in range(reps):  # the times come from the trace (nb.trace_stats)
    fn()
"""

# The defaults (src/cuda/engine.cpp, prefault.cpp): 8 staging buffers of 8 MB, three quarters of
# the cores copying (at most 12), a quarter (at most 4) faulting in the result's pages, streaming
# stores at copy-out only, the first and last pieces of each transfer half a buffer.
SETTINGS = [
    ("defaults", {}),
    ("no ramp", {"GPU_OFFLOAD_RAMP_KB": "0"}),
    ("ramp 1 MB", {"GPU_OFFLOAD_RAMP_KB": "1024"}),
    ("staging 4 x 32 MB", {"GPU_OFFLOAD_STAGING_MB": "32", "GPU_OFFLOAD_STAGING_BUFFERS": "4"}),
    ("staging 16 x 4 MB", {"GPU_OFFLOAD_STAGING_MB": "4", "GPU_OFFLOAD_STAGING_BUFFERS": "16"}),
    ("staging 8 x 16 MB", {"GPU_OFFLOAD_STAGING_MB": "16", "GPU_OFFLOAD_STAGING_BUFFERS": "8"}),
    ("no prefault", {"GPU_OFFLOAD_PREFAULT_THREADS": "0"}),
    ("prefault 2 threads", {"GPU_OFFLOAD_PREFAULT_THREADS": "2"}),
    ("copy threads 8", {"GPU_OFFLOAD_COPY_THREADS": "8"}),
    ("streaming both ways", {"GPU_OFFLOAD_COPY_NT": "1"}),
    ("plain memcpy", {"GPU_OFFLOAD_COPY_NT": "0"}),
]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--sizes", default="4096,8192")
    ap.add_argument("--reps", type=int, default=4)
    ap.add_argument("--dtype", default="float64")
    ap.add_argument("--settings", default="", help="comma-separated setting names (default: all)")
    ap.add_argument("--rounds", type=int, default=1,
                    help="go through the settings this many times, interleaved, and end with their medians "
                         "(runs vary by 10-30%%: one round can mislead)")
    a = ap.parse_args()
    cli = os.path.join(a.build, "bin", "gpu-offload")
    ceil = nb.load_ceilings()
    pinned = nb.pinned_gbs(ceil)
    tflops = nb.gpu_tflops(ceil, a.dtype)
    print(f"pinned copies {pinned:.1f} GB/s, GPU {tflops:.1f} TFLOP/s; {a.dtype} a @ b, median of {a.reps} after a warm-up")
    hdr = f"{'setting':<20} {'result':<7} {'n':>6} {'in call s':>9} {'/limit':>6} {'in GB/s':>7} {'out GB/s':>8} {'out/pinned':>10}"
    print(hdr)
    print("-" * len(hdr), flush=True)
    chosen = set(x.strip() for x in a.settings.split(",") if x.strip())
    worker = tempfile.NamedTemporaryFile("w", suffix=".py", delete=False)
    worker.write(WORKER)
    worker.close()

    def measure(label, extra, n, mode):
        """One process, one setting: prints its row and returns (in call s, out GB/s) or None."""
        env = dict(os.environ)
        env.pop("LD_PRELOAD", None)
        env.update(extra)
        with tempfile.TemporaryDirectory() as td:
            p = subprocess.run([cli, "run", "--device", "gpu", "--trace", td, "--", sys.executable,
                                worker.name, mode, a.dtype, str(n), str(a.reps)],
                               capture_output=True, text=True, env=env, timeout=600)
            if p.returncode != 0:
                print(f"{label:<20} {mode:<7} {n:>6} failed: {(p.stderr.strip().splitlines() or ['?'])[-1]}")
                return None
            lib, gb_in, gb_out, _ = nb.trace_stats(cli, td, "gemm")
        limit = nb.link_limit("a @ b", a.dtype, n, ceil)
        print(f"{label:<20} {mode:<7} {n:>6} {nb.fmt(lib, 9, 4)} {nb.fmt(lib / limit if lib else None, 6, 2)} "
              f"{nb.fmt(gb_in, 7, 1)} {nb.fmt(gb_out, 8, 1)} {nb.fmt(gb_out / pinned if gb_out else None, 10, 2)}", flush=True)
        return (lib, gb_out) if lib and gb_out else None

    results = {}  # (label, mode, n) -> [(in call s, out GB/s)], one per round
    try:
        for rnd in range(a.rounds):
            if a.rounds > 1:
                print(f"round {rnd + 1} of {a.rounds}", flush=True)
            for label, extra in SETTINGS:
                if chosen and label not in chosen:
                    continue
                for n in (int(x) for x in a.sizes.split(",")):
                    for mode in ("fresh", "reused"):
                        r = measure(label, extra, n, mode)
                        if r:
                            results.setdefault((label, mode, n), []).append(r)
    finally:
        os.unlink(worker.name)
    if a.rounds > 1:
        print(f"\nmedians over {a.rounds} rounds")
        print(f"{'setting':<20} {'result':<7} {'n':>6} {'in call s':>9} {'out GB/s':>8} {'out/pinned':>10}")
        for (label, mode, n), xs in results.items():
            lib = statistics.median(x[0] for x in xs)
            out = statistics.median(x[1] for x in xs)
            print(f"{label:<20} {mode:<7} {n:>6} {lib:>9.4f} {out:>8.1f} {out / pinned:>10.2f}")


if __name__ == "__main__":
    main()
