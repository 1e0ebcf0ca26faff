#!/usr/bin/env python3
"""NumPy's conversion copies with the library's split copies off and on: microseconds per ?copy call.

    python3 bench/copy_split.py --exe COPY_SPLIT --lib libgpuoffload.so --blas LIBSCIPY_OPENBLAS64.so
                                [--sizes 256,...,8192] [--threads 4,8,16]

COPY_SPLIT is bench/copy_split.c built (`cc -O2 bench/copy_split.c -o copy_split -ldl`); it makes the n
calls numpy.linalg makes to convert an n x n matrix (to Fortran order: strided source; back: strided
destination; contiguous: never split), through scipy_dcopy_64_ of NumPy's own OpenBLAS. Columns:
  bare       no library
  off        preloaded, GPU_OFFLOAD_SPLIT_COPIES=off (what a wrapped call costs unsplit)
  split T    preloaded, GPU_OFFLOAD_SPLIT_COPIES=1K (every strided row here may be split), on T threads
             (OPENBLAS_NUM_THREADS=T, which the library's pool respects); where splitting does not pay,
             the library's back-off sends some calls unsplit, so below the crossover this column shows
             what that costs, and above it what splitting gains
Every mode must write the same bytes (`same`); the exit status is 1 where one did not.
"""

import argparse
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def run(exe, blas, sizes, env):
    p = subprocess.run([exe, blas, *map(str, sizes)], capture_output=True, text=True, env=env)
    if p.returncode != 0:
        sys.exit(f"{exe} failed ({p.returncode}): {p.stderr[-2000:]}")
    out = {}
    for line in p.stdout.splitlines():
        n, pattern, seconds, digest = line.split()
        out[(int(n), pattern)] = (float(seconds), digest)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--exe", required=True)
    ap.add_argument("--lib", required=True)
    ap.add_argument("--blas", required=True)
    ap.add_argument("--sizes", default="256,512,1024,2048,4096,8192")
    ap.add_argument("--threads", default=os.environ.get("OPENBLAS_NUM_THREADS", "16"))
    a = ap.parse_args()
    sizes = [int(x) for x in a.sizes.split(",")]
    threads = [int(x) for x in a.threads.split(",")]
    base = {k: v for k, v in os.environ.items() if not k.startswith("GPU_OFFLOAD_") and k != "LD_PRELOAD"}
    pre = dict(base, LD_PRELOAD=a.lib, GPU_OFFLOAD_DEVICE="cpu")
    t0 = time.time()
    modes = {"bare": run(a.exe, a.blas, sizes, base),
             "off": run(a.exe, a.blas, sizes, dict(pre, GPU_OFFLOAD_SPLIT_COPIES="off"))}
    for t in threads:
        modes[f"split {t}"] = run(a.exe, a.blas, sizes, dict(pre, GPU_OFFLOAD_SPLIT_COPIES="1K",
                                                               OPENBLAS_NUM_THREADS=str(t)))
    last = f"split {threads[-1]}"
    cols = ["n", "pattern", "KiB/call"] + [f"{m} us" for m in modes] + [f"off/{last}", "same"]
    rows, ok = [], True
    for key in modes["bare"]:
        n, pattern = key
        digests = {m[key][1] for m in modes.values()}
        ok &= len(digests) == 1
        cells = [str(n), pattern, f"{n * 8 / 1024:g}"] + [f"{m[key][0] * 1e6:.2f}" for m in modes.values()]
        cells += [f"{modes['off'][key][0] / modes[last][key][0]:.2f}x", "yes" if len(digests) == 1 else "NO"]
        rows.append(cells)
    widths = [max(len(x) for x in col) for col in zip(cols, *rows)]
    print("NumPy's conversion copies: microseconds per scipy_dcopy_64_ call of n elements (best of 3-7 passes "
          "of n calls)")
    for cells in [cols] + rows:
        print("  ".join(c.rjust(w) if i != 1 else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths))))
    print(f"command: {' '.join([os.path.relpath(sys.argv[0], ROOT)] + sys.argv[1:])}; {time.time() - t0:.0f} s")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
