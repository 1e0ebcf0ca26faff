"""FFTW's users under the library, decided for the GPU (--device gpu) on a machine without one: Octave's
fft/ifft/fft2/fftn/ifftn (Debian's libfftw3) and pyFFTW from PyPI (its wheel's own, privately loaded
FFTW). Every transform appears in the trace, decided and run by FFTW, and the results, written as raw
bytes, are those of the same script run without the library. (NumPy's and SciPy's FFTs are pocketfft,
not FFTW: nothing to intercept.)"""

import subprocess
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # tests/conftest.py's helpers, whatever pytest's rootdir is
from conftest import dump, require, require_tool, run  # noqa: E402

ENV = {"GPU_OFFLOAD_DEVICE": "gpu"}  # every transform decided; without a GPU, FFTW runs it
OCTAVE = ["octave-cli", "--no-gui", "--norc", "--no-history", "--no-window-system", "--quiet"]
FFT_OPS = {f"{p}fft{k}" for p in "ds" for k in ("", "_r2c", "_c2r")}


def both_runs(cmd, tmp):
    plain, traced, trace = tmp / "plain.bin", tmp / "traced.bin", tmp / "trace"
    trace.mkdir()
    run(cmd(plain), preload=False)
    run(cmd(traced), trace_dir=trace, env=ENV)
    rows = [r for r in dump(trace) if r["op"] in FFT_OPS]
    return plain.read_bytes(), traced.read_bytes(), rows


OCTAVE_SCRIPT = r"""
x = sin((1:4096)' * 0.37) + 0.1 * mod((1:4096)', 5);
z = complex(x, cos((1:4096)' * 0.11));
a = reshape(sin((1:256*192)' * 0.013), 256, 192);
b = reshape(cos((1:32*24*20)' * 0.07), 32, 24, 20);
r1 = fft(z); r2 = ifft(r1); r3 = fft(x); r4 = fft2(a); r5 = ifft2(r4); r6 = fftn(b); r7 = ifftn(r6);
r8 = fft(single(a));
f = fopen(argv(){1}, 'w');
for v = {r1, r2, r3, r4, r5, r6, r7, r8}
  fwrite(f, real(v{1}(:)), class(v{1})); fwrite(f, imag(v{1}(:)), class(v{1}));
end
fclose(f);
"""


def test_octave_fft_ifft_fft2_fftn(tmp_path):
    require_tool("octave-cli")
    script = tmp_path / "ffts.m"
    script.write_text(OCTAVE_SCRIPT)
    plain, traced, rows = both_runs(lambda out: [*OCTAVE, script, out], tmp_path)
    assert plain and traced == plain
    got = Counter((r["op"], r["m"], r["k"]) for r in rows)
    # fft(z) and ifft: complex 4096; fft(x): real 4096 (r2c); fft2/ifft2 of a real 256 x 192 (r2c, then
    # complex 2-D); fftn/ifftn of a real 32 x 24 x 20; fft(single(a)): 192 columns of 256 points.
    for want in [("dfft", "4096", "1"), ("dfft_r2c", "4096", "1"), ("dfft_r2c", "49152", "2"), ("dfft", "49152", "2"),
                 ("dfft_r2c", "15360", "3"), ("dfft", "15360", "3"), ("sfft_r2c", "256", "1")]:
        assert got[want] >= 1, f"{want} not in {sorted(got)}"
    assert all(r["device"] == "cpu" and r["reason"] == "GPU unavailable" for r in rows)


PYFFTW_SCRIPT = r"""
import sys
import numpy as np, pyfftw
n = 4096
x = (np.sin(np.arange(n * 64) * 0.37) + 1j * np.cos(np.arange(n * 64) * 0.11)).reshape(64, n)
a = pyfftw.empty_aligned((64, n), dtype="complex128"); a[:] = x
r1 = pyfftw.builders.fft(a, axis=-1, planner_effort="FFTW_ESTIMATE")().copy()
r = pyfftw.empty_aligned((128, 96, 40), dtype="float64"); r[:] = np.sin(np.arange(r.size) * 0.013).reshape(r.shape)
r2 = pyfftw.builders.rfftn(r, planner_effort="FFTW_ESTIMATE")().copy()
r3 = pyfftw.builders.irfftn(r2.copy(), s=r.shape, planner_effort="FFTW_ESTIMATE")().copy()
r4 = pyfftw.builders.fft2(a.astype(np.complex64), planner_effort="FFTW_ESTIMATE")().copy()
with open(sys.argv[1], "wb") as out:
    for v in (r1, r2, r3, r4):
        out.write(np.ascontiguousarray(v).tobytes())
"""


def test_pyfftw_wheel(tmp_path):
    has = subprocess.run([sys.executable, "-c", "import pyfftw"], capture_output=True).returncode == 0
    require(has, "pyfftw (pip install pyfftw)")
    script = tmp_path / "ffts.py"
    script.write_text(PYFFTW_SCRIPT)
    plain, traced, rows = both_runs(lambda out: [sys.executable, script, out], tmp_path)
    assert plain and traced == plain
    got = Counter((r["op"], r["m"], r["n"], r["k"]) for r in rows)
    assert got == Counter({("dfft", "4096", "64", "1"): 1, ("dfft_r2c", "491520", "1", "3"): 1,
                           ("dfft_c2r", "491520", "1", "3"): 1, ("sfft", "262144", "1", "2"): 1}), got
    # The wheel's own FFTW, reached through its private copy, not Debian's.
    assert all("pyfftw" in r["site_module"] for r in rows)
    assert all(r["reason"] == "GPU unavailable" for r in rows)
