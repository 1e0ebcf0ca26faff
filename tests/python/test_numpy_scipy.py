"""NumPy and SciPy PyPI wheels under the library: every high-level call of linalg_client.py shows up
in the trace with the right routine, symbol, name scheme, precision and sizes, and every result is
bitwise equal to the same program run without the library.

The client runs under the interpreter that runs pytest (sys.executable): in CI the venv made by
scripts/setup.sh, which holds the numpy and scipy wheels."""

import importlib.util
import sys
from collections import Counter
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # tests/conftest.py's helpers, whatever pytest's rootdir is
from conftest import dump, require, run, top_level  # noqa: E402

sys.path.insert(0, str(HERE))
from linalg_client import CALLS  # noqa: E402

CLIENT = HERE / "linalg_client.py"
# Pinned to the CPU: the results must be the CPU library's own, bit for bit, on any machine.
ENV = {"GPU_OFFLOAD_DEVICE": "cpu"}

NUMPY = dict(scheme="numpy-ilp64", ilp64="1")
SCIPY = dict(scheme="scipy", ilp64="0")


def blas(op, m, n, k, scheme, row_major="1"):
    """A CBLAS call (NumPy's matmul), row-major unless said otherwise."""
    suffix = "64_" if scheme is NUMPY else ""
    return dict(op=op, symbol=f"scipy_cblas_{op}{suffix}", iface="cblas", row_major=row_major, dims=(m, n, k), **scheme)


def lapack(op, m, n, k, scheme, query=False):
    """A Fortran LAPACK call; query: the caller also asks for the workspace size first (lwork = -1)."""
    symbol = f"scipy_{op}_64_" if scheme is NUMPY else f"scipy_{op}_"
    return dict(op=op, symbol=symbol, iface="fortran", row_major="0", dims=(m, n, k), query=query, **scheme)


def expected():
    """name -> alternatives, each a list of the calls that name makes (checked against the trace)."""
    c = CALLS
    m, n, k = c["matmul_f64"]
    e = {"matmul_f64": [[blas("dgemm", m, n, k, NUMPY)]]}
    m, n, k = c["matmul_f32"]
    e["matmul_f32"] = [[blas("sgemm", m, n, k, NUMPY)]]
    m, n, k = c["matmul_c128"]
    e["matmul_c128"] = [[blas("zgemm", m, n, k, NUMPY)]]
    n, k = c["matmul_aat"]
    e["matmul_aat"] = [[blas("dsyrk", n, n, k, NUMPY)]]  # a @ a.T on one buffer
    # a @ x: NumPy's bundled OpenBLAS gets cblas_?gemv(ColMajor, Trans, n, m) for a C-contiguous
    # (m, n) a: its memory is the column-major n x m matrix a.T.
    m, n = c["matvec_f64"]
    e["matvec_f64"] = [[blas("dgemv", n, m, 0, NUMPY, row_major="0")]]
    m, n = c["matvec_c128_strided"]
    e["matvec_c128_strided"] = [[blas("zgemv", n, m, 0, NUMPY, row_major="0")]]
    n, nrhs = c["np_solve"]
    e["np_solve"] = [[lapack("dgesv", n, n, nrhs, NUMPY)]]
    n, = c["np_inv"]
    e["np_inv"] = [[lapack("dgesv", n, n, n, NUMPY)]]  # identity right-hand side
    n, = c["np_det"]
    e["np_det"] = [[lapack("dgetrf", n, n, 0, NUMPY)]]
    n, = c["np_slogdet"]
    e["np_slogdet"] = [[lapack("dgetrf", n, n, 0, NUMPY)]]
    n, = c["np_eigh"]
    e["np_eigh"] = [[lapack("dsyevd", n, n, 0, NUMPY, query=True)]]
    n, = c["np_eig"]
    e["np_eig"] = [[lapack("dgeev", n, n, 0, NUMPY, query=True)]]
    m, n = c["np_svd"]
    e["np_svd"] = [[lapack("dgesdd", m, n, 0, NUMPY, query=True)]]
    m, n = c["np_svdvals"]
    e["np_svdvals"] = [[lapack("dgesdd", m, n, 0, NUMPY, query=True)]]
    n, = c["np_cholesky"]
    e["np_cholesky"] = [[lapack("dpotrf", n, n, 0, NUMPY)]]
    m, n = c["np_qr"]
    e["np_qr"] = [[lapack("dgeqrf", m, n, 0, NUMPY, query=True), lapack("dorgqr", m, n, n, NUMPY, query=True)]]
    m, n, nrhs = c["np_lstsq"]
    e["np_lstsq"] = [[lapack("dgelsd", m, n, nrhs, NUMPY, query=True)]]
    m, n = c["np_pinv"]
    # svd, then vt.T @ (s * u.T): (n, m) = (n, n) @ (n, m)
    e["np_pinv"] = [[lapack("dgesdd", m, n, 0, NUMPY, query=True), blas("dgemm", n, m, n, NUMPY)]]
    m, n = c["sp_svd"]
    e["sp_svd"] = [[lapack("dgesdd", m, n, 0, SCIPY, query=True)]]
    n, = c["sp_eigh"]
    e["sp_eigh"] = [[lapack("dsyevr", n, n, 0, SCIPY, query=True)]]
    n, nrhs = c["sp_solve"]
    # SciPy estimates the condition number after the factorization (dgecon, measured only).
    e["sp_solve"] = [[lapack("dgetrf", n, n, 0, SCIPY), lapack("dgetrs", n, n, nrhs, SCIPY),
                      lapack("dgecon", n, n, 0, SCIPY)],
                     [lapack("dgesv", n, n, nrhs, SCIPY)]]  # older SciPy
    n, = c["sp_lu_factor"]
    e["sp_lu_factor"] = [[lapack("dgetrf", n, n, 0, SCIPY)]]
    n, = c["sp_cholesky"]
    e["sp_cholesky"] = [[lapack("dpotrf", n, n, 0, SCIPY)]]
    n, = c["sp_inv"]
    e["sp_inv"] = [[lapack("dgetrf", n, n, 0, SCIPY), lapack("dgetri", n, n, 0, SCIPY, query=True),
                    lapack("dgecon", n, n, 0, SCIPY)]]
    return e


EXPECTED = expected()


def dims(r):
    return (int(r["m"]), int(r["n"]), int(r["k"]))


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The client without the library, and under it with a trace: (plain .npz, traced .npz, rows)."""
    require(importlib.util.find_spec("numpy") and importlib.util.find_spec("scipy"),
            f"numpy and scipy for {sys.executable}")
    d = tmp_path_factory.mktemp("numpy_scipy")
    plain, traced, trace = d / "plain.npz", d / "traced.npz", d / "trace"
    trace.mkdir()
    run([sys.executable, CLIENT, plain], preload=False)
    run([sys.executable, CLIENT, traced], trace_dir=trace, env=ENV)
    return plain, traced, trace, dump(trace)


def test_results_bitwise_identical(runs):
    import numpy as np

    plain, traced, _, _ = runs
    with np.load(plain) as a, np.load(traced) as b:
        assert sorted(a.files) == sorted(b.files)
        assert len(a.files) >= 30
        differ = []
        for name in a.files:
            x, y = a[name], b[name]
            if x.dtype != y.dtype or x.shape != y.shape or x.tobytes() != y.tobytes():
                differ.append(name)
        assert not differ, f"results changed under the library: {differ}"


def test_one_trace_file_from_the_client(runs):
    _, _, trace, rows = runs
    files = list(trace.iterdir())
    assert len(files) == 1, files
    assert rows, "the trace holds no calls"
    assert len({r["pid"] for r in rows}) == 1
    assert all(r["device"] == "cpu" for r in rows)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_call_in_trace(runs, name):
    rows = runs[3]
    tops = top_level(rows)
    problems = []
    for alternative in EXPECTED[name]:
        problems = []
        for want in alternative:
            found = [r for r in tops if r["op"] == want["op"] and dims(r) == want["dims"]]
            if len(found) != 1:
                problems.append(f"{want['op']} {want['dims']}: {len(found)} top-level calls, want 1")
                continue
            r = found[0]
            for col in ("symbol", "iface", "scheme", "ilp64", "row_major"):
                if r[col] != want[col]:
                    problems.append(f"{want['op']} {want['dims']}: {col} is {r[col]!r}, want {want[col]!r}")
            if r["precision"] != want["op"][0]:
                problems.append(f"{want['op']}: precision {r['precision']!r}")
            if float(r["flops"]) <= 0 or int(r["info"]) != 0:
                problems.append(f"{want['op']}: flops {r['flops']} info {r['info']}")
            if want.get("query"):
                q = [x for x in rows if x["op"] == want["op"] and x["query"] == "1" and x["nested"] == "0"
                     and dims(x) == want["dims"]]
                if len(q) != 1:
                    problems.append(f"{want['op']} {want['dims']}: {len(q)} top-level workspace queries, want 1")
                elif q[0]["symbol"] != want["symbol"] or float(q[0]["flops"]) != 0:
                    problems.append(f"{want['op']} query: symbol {q[0]['symbol']} flops {q[0]['flops']}")
        if not problems:
            return
    seen = sorted({(r["op"], dims(r)) for r in tops})
    pytest.fail(f"{name}: " + "; ".join(problems) + f"\ntop-level calls seen: {seen}")


def test_matvec_operands(runs):
    """a @ x is gemv, its work 2mn (x4 complex); a strided x (x[::2]) reaches it with its stride, and the
    trace's operand extents say so: a, x over 1 + (n - 1) * 2 elements, y."""
    tops = top_level(runs[3])
    for name, op, elem, inc in (("matvec_f64", "dgemv", 8, 1), ("matvec_c128_strided", "zgemv", 16, 2)):
        m, n = CALLS[name]
        r = next(r for r in tops if r["op"] == op and dims(r) == (n, m, 0))
        assert float(r["flops"]) == 2.0 * m * n * (4 if op[0] == "z" else 1), r
        sizes = [int(o.split(":")[1]) for o in r["operands"].split(";")]
        assert sizes == [elem * m * n, elem * (1 + (n - 1) * inc), elem * m], (name, r["operands"])


def test_no_unexpected_top_level_calls(runs):
    """Only the application's calls count as top level: the nested calls scipy-openblas's LAPACK
    makes through its PLT (dgeev -> dorgqr, dgesdd -> dgeqrf/dorgqr queries) must be marked nested."""
    rows = runs[3]
    # ?copy: numpy.linalg's conversions to and from Fortran order, measured (test_conversions.py).
    got = Counter((r["op"], dims(r)) for r in top_level(rows) if r["routine"] != "copy")
    want = Counter()
    for name, alternatives in EXPECTED.items():
        for alt in alternatives:
            if all(got[(w["op"], w["dims"])] for w in alt):
                want.update((w["op"], w["dims"]) for w in alt)
                break
    # The inputs: spd(n) builds a @ a.T (dsyrk n, n, n) for both Cholesky factorizations.
    for name in ("np_cholesky", "sp_cholesky"):
        n, = CALLS[name]
        want[("dsyrk", (n, n, n))] += 1
    assert got == want, f"unexpected: {got - want}; missing: {want - got}"


def test_nested_calls_marked(runs):
    """scipy-openblas's dgesdd/dgeev/dsyevd reach our dgeqrf/dorgqr wrappers and the measured-only
    reductions inside them (dsytrd, dstedc, dgehrd, dhseqr): depth > 0, nested = 1."""
    rows = runs[3]
    nested = [r for r in rows if r["nested"] == "1"]
    assert nested, "no nested calls: scipy-openblas's LAPACK-to-LAPACK calls were expected"
    assert all(int(r["depth"]) > 0 for r in nested)
    assert all(int(r["depth"]) == 0 for r in rows if r["nested"] == "0")
    assert {r["op"] for r in nested if r["routine"] != "copy"} <= {"dgeqrf", "dorgqr", "dsytrd", "dstedc", "dgehrd", "dhseqr"}, {
        r["op"] for r in nested}
    assert {"dsytrd", "dgehrd"} <= {r["op"] for r in nested}, "the eigensolvers' reductions count as nested"
    # dgeev(n) builds its Schur vectors with dorghr -> dorgqr(n-1, n-1, n-1): real work, nested.
    n, = CALLS["np_eig"]
    assert any(r["op"] == "dorgqr" and dims(r) == (n - 1, n - 1, n - 1) and r["query"] == "0" for r in nested)


def test_queries_not_counted_as_work(runs):
    rows = runs[3]
    queries = [r for r in rows if r["query"] == "1"]
    assert queries
    assert all(float(r["flops"]) == 0 for r in queries)
    assert not any(r["query"] == "1" for r in top_level(rows))
