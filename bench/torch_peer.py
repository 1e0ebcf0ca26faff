#!/usr/bin/env python3
"""The peer of gpu-offload for NumPy and SciPy code: the same work written for the GPU by hand in
PyTorch, with explicit copies (host to device, compute, device to host), from and into NumPy arrays in
ordinary (pageable) host memory, as a program holding NumPy arrays would do it.

    python3 bench/torch_peer.py [--reps 5] CASE ...

CASE is NAME:ARGS, one JSON line printed per case ({"case", "times"} in seconds, or {"case", "na": why}):
  matmul:DTYPE:N       a @ b of two N x N matrices (float32: TF32 off, BLAS sgemm semantics)
  numpy-solve:N        numpy.linalg.solve(A, b), b a vector
  solve:N cholesky:N eigh:N svd:N lstsq:N
                       scipy.linalg's solve, cholesky, eigh (values and vectors), svd (full U and Vt) and
                       lstsq (b a vector) of an N x N float64 matrix
  axi:N:ITERS          a loop of A @ X_i (X_i N x 256), A copied to the GPU once before the loop
  lu_solve:N:ITERS     a loop of lu_solve(factors, X_i) (X_i N x 256), the factors made on the GPU once
  gemv:N:ITERS         a loop of x = A @ x, x /= |x| (on the host), A copied once
A timed call is the copies in, the computation and the copies out, to a NumPy result (a call's
figure, like the other benchmarks' "the call"); one untimed call of each case comes first (cuBLAS /
cuSOLVER's own first use). Loops time each iteration after that one.
"""
import argparse
import json
import sys
import time

import numpy as np


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("cases", nargs="+")
    a = ap.parse_args()
    try:
        import torch
    except Exception as e:  # noqa: BLE001 - any import failure means no peer
        for c in a.cases:
            print(json.dumps({"case": c, "na": f"no PyTorch ({type(e).__name__})"}), flush=True)
        return 0
    if not torch.cuda.is_available():
        for c in a.cases:
            print(json.dumps({"case": c, "na": "PyTorch sees no CUDA GPU"}), flush=True)
        return 0
    torch.backends.cuda.matmul.allow_tf32 = False
    dev = torch.device("cuda")
    rng = np.random.default_rng(0)

    def up(x):
        return torch.from_numpy(x).to(dev)

    def down(t):
        return t.cpu().numpy()

    def timed(fn, reps):
        fn()
        torch.cuda.synchronize()
        out = []
        for _ in range(reps):
            t0 = time.perf_counter()
            fn()
            torch.cuda.synchronize()
            out.append(time.perf_counter() - t0)
        return out

    def spd(n):
        m = up(rng.standard_normal((n, n)))
        return down(m @ m.T + n * torch.eye(n, dtype=m.dtype, device=dev))

    for case in a.cases:
        name, *args = case.split(":")
        try:
            if name == "matmul":
                dt, n = args[0], int(args[1])
                x = rng.standard_normal((n, n)).astype(dt)
                y = rng.standard_normal((n, n)).astype(dt)
                times = timed(lambda: down(up(x) @ up(y)), a.reps)
            elif name in ("numpy-solve", "solve", "cholesky", "eigh", "svd", "lstsq"):
                n = int(args[0])
                A = spd(n) if name in ("cholesky", "eigh") else rng.standard_normal((n, n))
                if name != "numpy-solve":
                    A = np.asfortranarray(A)  # the fast form's arrays (torch copies the strides as they are)
                b = rng.standard_normal(n)
                fn = {
                    "numpy-solve": lambda: down(torch.linalg.solve(up(A), up(b))),
                    "solve": lambda: down(torch.linalg.solve(up(A), up(b))),
                    "cholesky": lambda: down(torch.linalg.cholesky(up(A))),
                    "eigh": lambda: [down(t) for t in torch.linalg.eigh(up(A))],
                    "svd": lambda: [down(t) for t in torch.linalg.svd(up(A), full_matrices=True)],
                    "lstsq": lambda: down(torch.linalg.lstsq(up(A), up(b)[:, None]).solution),
                }[name]
                times = timed(fn, a.reps)
            elif name in ("axi", "lu_solve", "gemv"):
                n, iters = int(args[0]), int(args[1])
                held = {}  # X_i (made before each timed iteration, outside the timing) or gemv's x
                if name == "axi":
                    Ad = up(rng.standard_normal((n, n)))

                    def step():
                        down(Ad @ up(held["x"]))
                elif name == "lu_solve":
                    LU, piv = torch.linalg.lu_factor(up(spd(n)))

                    def step():
                        down(torch.linalg.lu_solve(LU, piv, up(held["x"])))
                else:
                    Ad = up(rng.standard_normal((n, n)))
                    held["x"] = rng.standard_normal(n)

                    def step():
                        y = down(Ad @ up(held["x"]))
                        held["x"] = y / np.linalg.norm(y)
                times = []
                for i in range(iters + 1):  # the first iteration is not timed
                    if name != "gemv":
                        held["x"] = np.asfortranarray(rng.standard_normal((n, 256)))
                    torch.cuda.synchronize()
                    t0 = time.perf_counter()
                    step()
                    torch.cuda.synchronize()
                    if i:
                        times.append(time.perf_counter() - t0)
            else:
                print(json.dumps({"case": case, "na": f"unknown case {name}"}), flush=True)
                continue
            print(json.dumps({"case": case, "times": times}), flush=True)
        except Exception as e:  # noqa: BLE001 - one failing case (out of memory, an unsupported op) is reported
            print(json.dumps({"case": case, "na": f"failed: {type(e).__name__}: {str(e)[:200]}"}), flush=True)
        torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())
