"""R and Octave (Debian packages, the system BLAS/LAPACK through their plain Fortran names) under the
library: the routines each high-level call really reaches appear in the trace with their sizes, and
the results, written as raw doubles, are byte-for-byte those of the same script run without it."""

import sys
from collections import Counter
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # tests/conftest.py's helpers, whatever pytest's rootdir is
from conftest import dump, require_tool, run, top_level  # noqa: E402

ENV = {"GPU_OFFLOAD_DEVICE": "cpu"}  # the CPU library's own results, bit for bit, on any machine
OCTAVE = ["octave-cli", "--no-gui", "--norc", "--no-history", "--no-window-system", "--quiet"]


def dims(r):
    return (int(r["m"]), int(r["n"]), int(r["k"]))


def both_runs(cmd, out_name, tmp):
    """cmd(out_path) without the library and with it, tracing: (plain bytes, traced bytes, rows)."""
    plain, traced, trace = tmp / f"plain.{out_name}", tmp / f"traced.{out_name}", tmp / "trace"
    trace.mkdir()
    run(cmd(plain), preload=False)
    run(cmd(traced), trace_dir=trace, env=ENV)
    assert len(list(trace.iterdir())) == 1, list(trace.iterdir())
    return plain.read_bytes(), traced.read_bytes(), dump(trace)


def check_calls(rows, expected, *, query=()):
    """Each (op, dims) in expected is one top-level call by a plain Fortran name; those in query also
    made one top-level workspace query first."""
    tops = top_level(rows)
    got = Counter((r["op"], dims(r)) for r in tops)
    problems = [f"{op} {d}: {got[(op, d)]} top-level calls, want 1" for op, d in expected if got[(op, d)] != 1]
    for r in tops:
        if (r["op"], dims(r)) in expected:
            if (r["symbol"], r["scheme"], r["iface"], r["ilp64"]) != (r["op"] + "_", "standard", "fortran", "0"):
                problems.append(f"{r['op']}: symbol {r['symbol']} scheme {r['scheme']} iface {r['iface']}")
            if r["precision"] != "d" or float(r["flops"]) <= 0 or r["info"] != "0":
                problems.append(f"{r['op']}: precision {r['precision']} flops {r['flops']} info {r['info']}")
    for op, d in query:
        q = [r for r in rows if r["op"] == op and dims(r) == d and r["query"] == "1" and r["nested"] == "0"]
        if len(q) != 1:
            problems.append(f"{op} {d}: {len(q)} top-level workspace queries, want 1")
    assert not problems, "; ".join(problems) + f"\ntop-level calls seen: {sorted(got)}"
    return got


# ---- R ----------------------------------------------------------------------------------------------------

R_EXPECTED = [
    ("dgemm", (211, 157, 173)),   # a %*% b
    ("dsyrk", (191, 191, 223)),   # crossprod(x), x 223 x 191
    ("dgesv", (229, 229, 7)),     # solve(s, rhs) ...
    ("dgecon", (229, 229, 0)),    # ... and its condition estimate (measured only)
    ("dsyrk", (233, 233, 260)),   # crossprod building chol's input
    ("dpotrf", (233, 233, 0)),    # chol
    ("dgesdd", (241, 197, 0)),    # svd
    ("dsyevr", (251, 251, 0)),    # eigen(symmetric = TRUE)
    ("dgeev", (263, 263, 0)),     # eigen of a general matrix
]
R_QUERIES = [("dgesdd", (241, 197, 0)), ("dsyevr", (251, 251, 0)), ("dgeev", (263, 263, 0))]


@pytest.fixture(scope="module")
def r_runs(tmp_path_factory):
    require_tool("Rscript")
    script = HERE / "linalg_client.R"
    return both_runs(lambda out: ["Rscript", "--vanilla", script, out], "bin", tmp_path_factory.mktemp("r"))


def test_r_results_identical(r_runs):
    plain, traced, _ = r_runs
    assert len(plain) > 1_000_000
    assert plain == traced, "R's results changed under the library"


def test_r_calls_in_trace(r_runs):
    got = check_calls(r_runs[2], R_EXPECTED, query=R_QUERIES)
    # R's own calls are all it made: whatever its LAPACK calls inside is nested. Its ?copy calls
    # (R copies vectors with dcopy) are measured only and not in R_EXPECTED.
    got = Counter({key: n for key, n in got.items() if not key[0].endswith("copy")})
    assert got == Counter(R_EXPECTED), f"unexpected top-level calls: {got - Counter(R_EXPECTED)}"


# ---- Octave -----------------------------------------------------------------------------------------------

OCTAVE_EXPECTED = [
    ("dgemm", (211, 157, 173)),   # a * b
    ("dgetrf", (229, 229, 0)),    # s \ rhs: LU ...
    ("dgecon", (229, 229, 0)),    # ... its condition estimate (measured only) ...
    ("dgetrs", (229, 229, 7)),    # ... and the solve
    ("dsyrk", (233, 233, 260)),   # q' * q: Octave spots the transposed product and calls dsyrk
    ("dpotrf", (233, 233, 0)),    # chol
    ("dgesvd", (241, 197, 0)),    # svd (Octave's default svd_driver is gesvd)
    ("dsyev", (251, 251, 0)),     # eig of a symmetric matrix
]
OCTAVE_QUERIES = [("dgesvd", (241, 197, 0)), ("dsyev", (251, 251, 0))]


@pytest.fixture(scope="module")
def octave_runs(tmp_path_factory):
    require_tool("octave-cli")
    script = HERE / "linalg_client.m"
    return both_runs(lambda out: [*OCTAVE, script, out], "bin", tmp_path_factory.mktemp("octave"))


def test_octave_results_identical(octave_runs):
    plain, traced, _ = octave_runs
    assert len(plain) > 1_000_000
    assert plain == traced, "Octave's results changed under the library"


def test_octave_calls_in_trace(octave_runs):
    check_calls(octave_runs[2], OCTAVE_EXPECTED, query=OCTAVE_QUERIES)


def test_octave_general_eig_in_trace(octave_runs):
    # Octave's eig of a general matrix calls dgeevx_; its inner BLAS work must count as nested.
    tops = top_level(octave_runs[2])
    assert [r for r in tops if r["op"] == "dgeevx" and dims(r)[:2] == (263, 263)]


def test_octave_general_eig_is_offered_to_the_gpu(trace_dir):
    """Octave's eig of a general matrix (dgeevx: balanc 'B', or 'N' for "nobalance"; sense 'N') is a
    GPU-capable call: under --device gpu it runs there, or says why not ('GPU unavailable'
    on a machine without one), never 'measured only'."""
    require_tool("octave-cli")
    script = "A = rand(300); [V, D] = eig(A); e = eig(A, 'nobalance');"
    run([*OCTAVE, "--eval", script], trace_dir=trace_dir, env={"GPU_OFFLOAD_DEVICE": "gpu"})
    rows = top_level(dump(trace_dir), "dgeevx")
    assert [dims(r) for r in rows] == [(300, 300, 0)] * 2, rows
    assert all(r["reason"] != "measured only" for r in rows), [r["reason"] for r in rows]
