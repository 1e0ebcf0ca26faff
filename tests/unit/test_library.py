"""Properties of libgpuoffload.so itself: no CUDA dependency, the exported surface, and a program
with only small math never loading CUDA."""

import subprocess
import sys

from conftest import BUILD, LIB, require, run


def needed(path):
    out = subprocess.run(["readelf", "-d", str(path)], capture_output=True, text=True, check=True).stdout
    return [line.split("[")[1].rstrip("]") for line in out.splitlines() if "(NEEDED)" in line]


def test_no_cuda_dependency():
    libs = needed(LIB)
    assert libs, "readelf found no NEEDED entries"
    assert not [l for l in libs if "cuda" in l or "cublas" in l or "cusolver" in l or "nvidia" in l], libs
    # ldd agrees (it resolves the whole closure).
    ldd = subprocess.run(["ldd", str(LIB)], capture_output=True, text=True).stdout
    assert "cuda" not in ldd and "cublas" not in ldd, ldd


def test_exports_every_scheme_and_nothing_of_the_cxx_runtime():
    out = subprocess.run(["nm", "-D", "--defined-only", str(LIB)], capture_output=True, text=True, check=True).stdout
    names = {line.split()[-1] for line in out.splitlines() if line.strip()}
    for n in ("dgemm_", "cblas_dgemm", "scipy_dgemm_", "scipy_cblas_dgemm", "scipy_dgemm_64_",
              "scipy_cblas_dgemm64_", "dgemm_64_", "cblas_dgemm64_", "zgesdd_", "scipy_dsyevr_",
              "fftw_execute", "fftwf_plan_dft_r2c_2d", "gpu_offload_last_call"):
        assert n in names, n
    # The static C++ runtime stays private: a program's own libstdc++ must not bind to ours.
    assert not [n for n in names if n.startswith("_ZNSt") or n.startswith("_ZSt")]


def test_small_math_never_loads_cuda():
    script = ("import numpy as np\n"
              "a = np.random.default_rng(0).standard_normal((60, 60))\n"
              "for _ in range(200): b = a @ a; np.linalg.solve(a, a)\n"
              "maps = open('/proc/self/maps').read()\n"
              "print('libgpuoffload.so' in maps, 'libgpuoffload-cuda' in maps, 'libcuda' in maps or 'libcudart' in maps)\n")
    p = run([sys.executable, "-c", script], env={"GPU_OFFLOAD_DEVICE": "auto"})
    assert p.stdout.split() == ["True", "False", "False"], p.stdout


def test_a_backend_of_another_build_is_refused_before_anything_is_called():
    # Its routines would be indexed by another op table: the handshake refuses it, the user hears
    # why, and the calls run on the CPU with the right result.
    foreign = BUILD / "tests" / "unit" / "foreign_backend.so"
    assert foreign.exists(), f"{foreign} is not built (tests/unit/CMakeLists.txt)"
    script = ("import numpy as np\n"
              "a = np.arange(90000.0).reshape(300, 300) % 7\n"
              "print(bool(np.allclose(a @ a, np.einsum('ij,jk->ik', a, a))))\n")
    p = run([sys.executable, "-c", script], env={"GPU_OFFLOAD_DEVICE": "gpu", "GPU_OFFLOAD_BACKEND": str(foreign)})
    assert p.stdout.split() == ["True"], p.stdout
    assert "is from another gpu-offload version (operation table)" in p.stderr, p.stderr


def test_the_backend_links_only_the_cuda_runtime_and_loads_nothing_else():
    # cuBLAS (with cuBLASLt), cuSOLVER and cuFFT are loaded at their first use (src/cuda/
    # cuda_libraries.h), not with the backend at the GPU's start: a program that only multiplies
    # never loads cuSOLVER or cuFFT, and the start does not wait for cuBLAS.
    backend = BUILD / "lib" / "libgpuoffload-cuda.so"
    require(backend.exists(), f"the CUDA backend ({backend}: built when the CUDA toolkit is found)")
    libs = needed(backend)
    assert any(l.startswith("libcudart") for l in libs), libs
    assert not [l for l in libs if l.startswith(("libcublas", "libcusolver", "libcufft"))], libs
    # Loaded into a process (no GPU is needed to load it), it brings the runtime and nothing more.
    script = ("import ctypes, sys\n"
              "ctypes.CDLL(sys.argv[1])\n"
              "maps = open('/proc/self/maps').read()\n"
              "print(*(name in maps for name in ('libcudart', 'libcublas', 'libcusolver', 'libcufft')))\n")
    p = subprocess.run([sys.executable, "-c", script, str(backend)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == ["True", "False", "False", "False"], p.stdout
