#!/usr/bin/env python3
"""The generalized symmetric-definite eigensolver through SciPy, bare and under gpu-offload.

Times `scipy.linalg.eigh(A, B, driver=...)` (LAPACK ?sygv / ?sygvd / ?sygvx, or ?hegv* for complex)
on Fortran-ordered copies with overwrite and check_finite=False, so that the figure is the LAPACK call
itself plus SciPy's thin wrapper, copies to and from the GPU included. Each mode is its own process;
each prints median, min and max of --repeats calls after one untimed call, and the largest eigenvalue
difference against the bare run.

  python3 bench/apps/gen_eig_bench.py --build build --n 4096 --dtype float64 --driver gvd
"""
import argparse, json, os, statistics, subprocess, sys, time

CHILD = r'''
import json, sys, time
import numpy as np, scipy.linalg as sl
n, dtype, driver, repeats = int(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4])
rng = np.random.default_rng(7)
def herm(shift):
    m = rng.standard_normal((n, n))
    if dtype.startswith("complex"):
        m = m + 1j * rng.standard_normal((n, n))
    h = (m + m.conj().T) / 2 + shift * np.eye(n)
    return np.asfortranarray(h.astype(dtype))
a0, b0 = herm(0.0), herm(float(n))
times, w = [], None
for i in range(repeats + 1):
    a, b = a0.copy(order="F"), b0.copy(order="F")
    t = time.perf_counter()
    w, v = sl.eigh(a, b, driver=driver, overwrite_a=True, overwrite_b=True, check_finite=False)
    dt = time.perf_counter() - t
    if i: times.append(dt)
print(json.dumps({"times": times, "w": [float(x) for x in w]}))
'''


def run(mode, args):
    cmd = [sys.executable, "-c", CHILD, str(args.n), args.dtype, args.driver, str(args.repeats)]
    if mode != "bare":
        cmd = [os.path.join(args.build, "bin", "gpu-offload"), "run", "--device", mode, "--"] + cmd
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--dtype", default="float64")
    ap.add_argument("--driver", default="gvd", choices=["gv", "gvd", "gvx"])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--modes", default="bare,auto,gpu")
    args = ap.parse_args()
    print(f"# {' '.join(sys.argv)}")
    print(f"scipy.linalg.eigh(A, B, driver={args.driver!r}) n = {args.n} {args.dtype}, {args.repeats} repeats (the call)")
    print(f"{'mode':6} {'median s':>10} {'min s':>10} {'max s':>10} {'vs bare':>9} {'max |dw|/|w|':>14}")
    base = None
    for mode in args.modes.split(","):
        r = run(mode, args)
        med = statistics.median(r["times"])
        if base is None:
            base = (med, r["w"])
        dw = max(abs(x - y) for x, y in zip(r["w"], base[1])) / max(abs(x) for x in base[1])
        print(f"{mode:6} {med:10.4f} {min(r['times']):10.4f} {max(r['times']):10.4f} {base[0] / med:8.2f}x {dw:14.2e}")


if __name__ == "__main__":
    main()
