"""A small scientific workload: the kind of NumPy code gpu-offload is for. Unmodified: run it
under `gpu-offload run` to see which calls reach BLAS/LAPACK and where each one ran."""
import time

import numpy as np

rng = np.random.default_rng(0)
n = 1500
a = rng.standard_normal((n, n))
b = rng.standard_normal((n, n))
spd = a @ a.T + n * np.eye(n)

t0 = time.perf_counter()
c = a @ b                                   # dgemm
x = np.linalg.solve(spd, b[:, :10])         # dgesv
w = np.linalg.eigvalsh(spd[:800, :800])     # dsyevd
s = np.linalg.svd(a[:600, :400], compute_uv=False)  # dgesdd
L = np.linalg.cholesky(spd)                 # dpotrf
print(f"checksum {c.sum() + x.sum() + w.sum() + s.sum() + L.sum():.6e}  ({time.perf_counter() - t0:.2f} s)")
