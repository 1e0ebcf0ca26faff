"""A NumPy program's report names the time spent converting data around its LAPACK calls: NumPy's
numpy.linalg copies every operand into Fortran order with one ?copy call per row (measured, never
offloaded), and the report and the exit summary say so, which library did it and what to do."""

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from conftest import CLI, call_count, described, dump, require, run, top_level  # noqa: E402

N = 300  # one solve whose operands NumPy copies row by row
ONE_SOLVE = f"""
import numpy as np
r = np.random.default_rng(0)
np.linalg.solve(r.standard_normal(({N}, {N})), r.standard_normal({N}))
"""
# Many tiny solves: 10 copies each (8 rows of a, v, and x back).
TINY_SOLVES = """
import numpy as np
r = np.random.default_rng(0)
a = r.standard_normal((8, 8)) + 8 * np.eye(8); v = r.standard_normal(8)
for i in range(400):
    np.linalg.solve(a, v)
"""


def traced_run(tmp_path_factory, program):
    require(importlib.util.find_spec("numpy"), f"numpy for {sys.executable}")
    trace = tmp_path_factory.mktemp("conversions") / "trace"
    trace.mkdir()
    p = run([sys.executable, "-c", program], trace_dir=trace, env={"GPU_OFFLOAD_DEVICE": "cpu",
                                                                 "GPU_OFFLOAD_SUMMARY": "1"})
    return trace, dump(trace), p.stderr


@pytest.fixture(scope="module")
def traced(tmp_path_factory):
    return traced_run(tmp_path_factory, ONE_SOLVE)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return traced_run(tmp_path_factory, TINY_SOLVES)


def test_numpy_copies_rows_through_dcopy(traced):
    """NumPy's Fortran-order copy of the n x n operand: n dcopy calls of n elements, read with stride n
    (exact extent 1 + (n - 1) * n elements), from numpy's _umath_linalg module."""
    rows = top_level(traced[1])
    gesv = [r for r in rows if r["op"] == "dgesv" and r["m"] == str(N)]
    assert len(gesv) == 1, sorted({r["op"] for r in rows})
    copies = [r for r in rows if r["op"] == "dcopy" and r["m"] == str(N)]
    assert call_count(copies) == N + 2, len(copies)  # the rows of A, then b and x (one contiguous copy each)
    assert {r["symbol"] for r in copies} == {"scipy_dcopy_64_"}
    assert all("numpy" in r["site_module"] and "_umath_linalg" in r["site_module"] for r in copies)
    assert all(r["device"] == "cpu" and r["reason"] == "measured only" for r in copies), copies[0]
    # The first 64 of a call site's copies are recorded one by one (the rest are counted): strided reads.
    strided = [r for r in described(copies) if int(r["operands"].split(";")[0].split(":")[1]) == 8 * (1 + (N - 1) * N)]
    assert len(strided) == 64, [r["operands"] for r in copies[:3]]


def report(trace):
    p = subprocess.run([str(CLI), "report", str(trace)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    return p.stdout


def test_report_names_the_conversion_time(traced):
    out = report(traced[0])
    assert "Converting data around the LAPACK calls" in out, out
    table = out.split("Converting data around the LAPACK calls (", 1)[1]
    row = next(line.split() for line in table.splitlines() if line.strip().startswith("dgesv"))
    # operation, library, calls, in the calls (value unit), ?copy calls, copying, before, converting, share
    assert row[1] == "NumPy" and row[2] == "1", row
    assert int(row[5].replace(",", "")) == N + 2, row  # the rows of A, b, and x back
    assert "NumPy: numpy.linalg copies every operand into Fortran order" in table
    assert "check_finite=False" in table


def test_summary_counts_the_copies(tiny):
    """--summary counts NumPy's copies as measured-only calls (its conversion line, printed only when
    converting outweighs the LAPACK calls, is tested on known answers in tests/unit/test_conversions_report.py)."""
    stderr = tiny[2]
    row = next(line.split() for line in stderr.splitlines() if line.strip().startswith("dcopy"))
    assert row[1] == "4000", row  # 8 rows of a, v, and x back, per solve
    assert "measured only 4000" in stderr, stderr


def test_tiny_solves_name_numpy(tiny):
    out = report(tiny[0])
    table = out.split("Converting data around the LAPACK calls (", 1)[1]
    row = next(line.split() for line in table.splitlines() if line.strip().startswith("dgesv"))
    assert row[1] == "NumPy" and row[2] == "400", row
