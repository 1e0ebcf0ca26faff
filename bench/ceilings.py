#!/usr/bin/env python3
"""Measure the two ceilings the link limit is built from, on this machine's GPU: the pinned
host<->device copy bandwidth and the matrix-product rate per precision (s, d, z), through PyTorch
when it is there. Prints one JSON line; {"source": "the H200 figures"} when nothing could be measured
(bench/numpy_bench.py then uses the H200 host's measured numbers)."""
import json

try:
    import torch
except Exception:  # no PyTorch: the caller falls back to the H200 figures
    print(json.dumps({"source": "the H200 figures"}))
    raise SystemExit(0)

if not torch.cuda.is_available():
    print(json.dumps({"source": "the H200 figures"}))
    raise SystemExit(0)

torch.backends.cuda.matmul.allow_tf32 = False  # BLAS sgemm semantics: full fp32


def timed(fn, reps=5):
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    fn()
    torch.cuda.synchronize()
    best = float("inf")
    for _ in range(reps):
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        best = min(best, start.elapsed_time(end) / 1e3)
    return best


nbytes = 1 << 30
host = torch.empty(nbytes, dtype=torch.uint8, pin_memory=True)
dev = torch.empty(nbytes, dtype=torch.uint8, device="cuda")
h2d = nbytes / timed(lambda: dev.copy_(host, non_blocking=True)) / 1e9
d2h = nbytes / timed(lambda: host.copy_(dev, non_blocking=True)) / 1e9
rates = {}
for key, dt, n in (("s", torch.float32, 8192), ("d", torch.float64, 8192), ("z", torch.complex128, 4096)):
    a = torch.randn(n, n, dtype=dt, device="cuda")
    b = torch.randn(n, n, dtype=dt, device="cuda")
    flops = 2.0 * n**3 * (4 if dt.is_complex else 1)
    rates[key] = round(flops / timed(lambda: a @ b) / 1e12, 1)
print(json.dumps({"source": "measured with PyTorch", "pinned_gbs": round(min(h2d, d2h), 1),
                  "h2d_gbs": round(h2d, 1), "d2h_gbs": round(d2h, 1), "tflops": rates}))
