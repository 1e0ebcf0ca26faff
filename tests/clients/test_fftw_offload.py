"""FFTW executes decided like BLAS calls, on a machine without a GPU: the decision is made and recorded
(predictions, reasons), the GPU backend is absent, and every transform runs on FFTW with the bits of a
plain run. Clients: fftw_offload_client (every kind, above the threshold), fftw_client (every creator,
small) and the gfortran legacy-API client. With a GPU these runs would offload; the GPU suite
(tests/gpu/test_fft.cpp) checks those results."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests/conftest.py's helpers
from conftest import CLIENTS, dump, require, run  # noqa: E402

FFT_OPS = {f"{p}fft{k}" for p in "ds" for k in ("", "_r2c", "_c2r")}
THRESHOLD = 1e6


def client(name):
    path = CLIENTS / name
    if not path.exists():
        pytest.fail(f"{path} is not built (ninja {name})")
    return path


def gpu_favouring_profile(tmp_path):
    """FFTs 10,000x faster on the GPU, free copies, a free start: every decided FFT wants the GPU."""
    lines = ["gpu-offload profile 1", "source test", "gpu_startup_s 0.000001", "h2d 0 1e30", "d2h 0 1e30",
             "cpu dgemm 1e3:1e10 1e15:1e10", "gpu dgemm 1e3:1e12 1e15:1e12"]
    for op in sorted(FFT_OPS):
        lines += [f"cpu {op} 1e3:1e9 1e15:1e9", f"gpu {op} 1e3:1e13 1e15:1e13"]
    p = tmp_path / "fft-fast-gpu"
    p.write_text("\n".join(lines) + "\n")
    return p


def fft_rows(trace_dir):
    return [r for r in dump(trace_dir) if r["op"] in FFT_OPS]


@pytest.fixture(scope="module")
def plain():
    return run([client("fftw_offload_client")], preload=False).stdout


def test_client_is_deterministic(plain):
    assert plain.count("sum ") == 2 * 9, plain
    assert run([client("fftw_offload_client")], preload=False).stdout == plain


def test_auto_sends_large_transforms_to_the_gpu_and_falls_back_to_fftw(plain, trace_dir, tmp_path):
    env = {"GPU_OFFLOAD_PROFILE": str(gpu_favouring_profile(tmp_path)), "GPU_OFFLOAD_DEVICE": "auto"}
    p = run([client("fftw_offload_client")], trace_dir=trace_dir, env=env)
    assert p.stdout == plain  # FFTW's bits: no GPU here, the backend is absent
    rows = fft_rows(trace_dir)
    assert len(rows) == 2 * 8, [r["op"] for r in rows]  # 8 executes per precision
    large = [r for r in rows if float(r["flops"]) >= THRESHOLD]
    small = [r for r in rows if float(r["flops"]) < THRESHOLD]
    assert len(large) == 2 * 7 and len(small) == 2
    assert {r["op"] for r in large} == FFT_OPS
    for r in small:
        assert r["reason"] == "below threshold" and r["device"] == "cpu", r
    for r in large:
        what = f'{r["op"]} {r["m"]} x {r["n"]}'
        # Decided for the GPU (predicted 10,000x faster), which could not start: FFTW ran it.
        assert 0 < float(r["pred_gpu_s"]) < float(r["pred_cpu_s"]), what
        assert r["reason"] == "GPU unavailable" and r["device"] == "cpu", what


def test_auto_with_the_builtin_profile_keeps_small_transforms_on_fftw(plain, trace_dir):
    p = run([client("fftw_offload_client")], trace_dir=trace_dir, env={"GPU_OFFLOAD_DEVICE": "auto"})
    assert p.stdout == plain
    rows = fft_rows(trace_dir)
    for r in rows:
        assert r["device"] == "cpu", r
        if float(r["flops"]) < THRESHOLD:
            assert r["reason"] == "below threshold", r
        else:  # the built-in profile's FFT curves make a prediction for every kind and precision
            assert float(r["pred_cpu_s"]) > 0 and float(r["pred_gpu_s"]) > 0, r


def test_forced_gpu_without_a_gpu_is_fftw_bit_for_bit(plain, trace_dir):
    p = run([client("fftw_offload_client")], trace_dir=trace_dir, env={"GPU_OFFLOAD_DEVICE": "gpu"})
    assert p.stdout == plain
    assert "the GPU cannot be used" in p.stderr or "cannot load the GPU backend" in p.stderr, p.stderr
    rows = fft_rows(trace_dir)
    assert len(rows) == 2 * 8
    assert all(r["reason"] == "GPU unavailable" and r["device"] == "cpu" for r in rows)


def test_every_creator_under_forced_gpu_is_fftw_bit_for_bit(trace_dir):
    """fftw_client: every plan creator, new-array executes, in place, guru; all decided, none offloaded."""
    c = client("fftw_client")
    plain = run([c], preload=False).stdout
    assert run([c], trace_dir=trace_dir, env={"GPU_OFFLOAD_DEVICE": "gpu"}).stdout == plain
    rows = fft_rows(trace_dir)
    assert len(rows) == 2 * 27
    assert all(r["reason"] == "GPU unavailable" for r in rows)


def test_fortran_legacy_api_under_forced_gpu_is_fftw_bit_for_bit(trace_dir):
    c = CLIENTS / "fortran_fftw"
    require(c.exists(), "gfortran (fortran_fftw client)")
    plain = run([c], preload=False).stdout
    assert run([c], trace_dir=trace_dir, env={"GPU_OFFLOAD_DEVICE": "gpu"}).stdout == plain
    rows = fft_rows(trace_dir)
    assert [r["op"] for r in rows] and all(r["reason"] == "GPU unavailable" for r in rows)


def test_verify_mode_without_a_gpu_leaves_fftw_results(plain, trace_dir):
    p = run([client("fftw_offload_client")], trace_dir=trace_dir, env={"GPU_OFFLOAD_VERIFY": "1"})
    assert p.stdout == plain
    rows = fft_rows(trace_dir)
    assert rows and all(r["device"] == "cpu" and r["reason"] == "GPU unavailable" for r in rows)
