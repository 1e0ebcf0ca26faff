"""C and Fortran programs calling BLAS, CBLAS and LAPACK, against reference BLAS/LAPACK and OpenBLAS.

blas_client.c and fortran_client.f90 print every result bitwise (hex of the raw bytes) and, after each
call, a line "@call SYMBOL M N K QUERY INFO ROW_MAJOR" saying what the trace must show for it. Under the
library the output must be byte-for-byte the same as without it, and the application-level trace records
(depth 0) must be exactly those calls, in that order, correctly described."""

import sys
from collections import Counter
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # tests/conftest.py's helpers, whatever pytest's rootdir is
from conftest import CLIENTS, LIB, OPENBLAS_LIBS, REFERENCE_LIBS, client, described, dump, require, run, top_level  # noqa: E402,E501

LIBS = {"reference": REFERENCE_LIBS, "openblas": OPENBLAS_LIBS}

BLAS3 = {"gemm", "symm", "hemm", "syrk", "herk", "syr2k", "her2k", "trmm", "trsm"}
BLAS2 = {"gemv", "symv", "hemv", "trsv"}


def need_libs(which):
    dirs = LIBS[which].split(":")
    require(all((Path(d) / "libblas.so.3").exists() or (Path(d) / "liblapack.so.3").exists() for d in dirs),
            f"{which} BLAS/LAPACK ({LIBS[which]})")


def manifest(stdout):
    """The '@call' lines: (symbol, m, n, k, query, info, row_major) in call order."""
    calls = []
    for line in stdout.splitlines():
        if line.startswith("@call "):
            sym, *nums = line.split()[1:]
            calls.append((sym, *map(int, nums)))
    return calls


def describe(sym):
    """op, routine, precision and interface a standard-scheme symbol stands for."""
    iface = "cblas" if sym.startswith("cblas_") else "fortran"
    op = sym[len("cblas_"):] if iface == "cblas" else sym.rstrip("_")
    return op, op[1:], op[0], iface


class Run:
    """One program run three ways: without the library, preloaded without tracing, preloaded and traced."""

    def __init__(self, exe, args, libs, trace_dir):
        env = {"LD_LIBRARY_PATH": libs}
        self.plain = run([exe, *args], preload=False, env=env)
        self.preloaded = run([exe, *args], env=env)
        self.traced = run([exe, *args], env=env, trace_dir=trace_dir)
        self.trace_dir = trace_dir
        self.rows = dump(trace_dir)
        self.calls = manifest(self.plain.stdout)


@pytest.fixture(scope="module", params=sorted(LIBS))
def c_run(request, tmp_path_factory):
    need_libs(request.param)
    r = Run(client("blas_client"), [], LIBS[request.param], tmp_path_factory.mktemp(f"c-{request.param}"))
    r.lib = request.param
    return r


@pytest.fixture(scope="module", params=sorted(LIBS))
def f_run(request, tmp_path_factory):
    need_libs(request.param)
    require((CLIENTS / "fortran_client").exists(), "gfortran (fortran_client is built only with a Fortran compiler)")
    r = Run(CLIENTS / "fortran_client", [], LIBS[request.param], tmp_path_factory.mktemp(f"f-{request.param}"))
    r.lib = request.param
    return r


def check_bitwise(r):
    assert r.plain.stdout.rstrip().endswith("done"), r.plain.stdout[-500:]
    assert len(r.calls) > 0
    # Bitwise: results are printed as the hex of their bytes.
    assert r.preloaded.stdout == r.plain.stdout, "results differ under the library (not tracing)"
    assert r.traced.stdout == r.plain.stdout, "results differ under the library (tracing)"
    # The library says nothing unless asked.
    assert r.preloaded.stderr == r.plain.stderr == ""
    assert r.traced.stderr == ""


def check_trace_matches(r, program):
    files = {(row["file"], row["pid"]) for row in r.rows}
    assert len(files) == 1, f"one process, one trace file: {files}"
    app = [row for row in r.rows if row["depth"] == "0"]
    got = [(row["symbol"], int(row["m"]), int(row["n"]), int(row["k"]), int(row["query"]), int(row["info"]),
            int(row["row_major"])) for row in app]
    # The application's calls, exactly and in order (first difference reported, not 1000 lines of diff).
    for i, (want, have) in enumerate(zip(r.calls, got)):
        assert have == want, f"call #{i}: the program made {want}, the trace says {have}"
    assert len(got) == len(r.calls), f"{len(r.calls)} calls made, {len(got)} application-level records"

    for row, call in zip(app, r.calls):
        sym, m, n, k, query, info, row_major = call
        op, routine, prec, iface = describe(sym)
        where = f"{sym} {m}x{n}x{k}"
        assert (row["op"], row["routine"], row["precision"], row["iface"]) == (op, routine, prec, iface), where
        assert (row["scheme"], row["ilp64"], row["nested"], row["device"]) == ("standard", "0", "0", "cpu"), where
        flops = float(row["flops"])
        if query:
            assert flops == 0, f"workspace query {where} counted as work: {row}"
            assert row["reason"] == "workspace query", row
        else:
            assert flops > 0, f"{where}: no work recorded: {row}"
            assert row["reason"] != "workspace query", row
        if routine == "gemm":
            assert flops == 2.0 * m * n * k * (4 if prec in "cz" else 1), row
        # The call site is in the program itself, not in a library.
        assert Path(row["site_module"]).name == program, row
        assert int(row["duration_ns"]) >= 0 and int(row["tid"]) > 0
        # Operands are described; the first (A, the main input) is never empty here. Others may be
        # (U and VT of gesvd with jobu = jobvt = 'N').
        operands = row["operands"].split(";")
        assert operands and int(operands[0].split(":")[1]) > 0, row
    # Nested records are exactly the ones with depth > 0.
    for row in r.rows:
        assert (row["nested"] == "1") == (int(row["depth"]) > 0), row
        if row["nested"] == "1":
            assert row["reason"] == "nested", row
        if row["query"] == "1":  # LAPACK routines query the workspace of the routines they call, too
            assert float(row["flops"]) == 0, row


# ---------------------------------------------------------------------------------------------- C client
def test_c_results_bitwise_identical(c_run):
    check_bitwise(c_run)


def test_c_trace_has_every_call(c_run):
    check_trace_matches(c_run, "blas_client")


def test_c_covers_every_routine(c_run):
    """The client really calls every routine of the table in every precision it exists in, through
    Fortran names, and BLAS through CBLAS too (row- and column-major)."""
    seen = Counter((describe(c[0])[0], describe(c[0])[3]) for c in c_run.calls)
    expected = {
        "gemm": "sdcz", "symm": "sdcz", "hemm": "cz", "syrk": "sdcz", "herk": "cz", "syr2k": "sdcz",
        "her2k": "cz", "trmm": "sdcz", "trsm": "sdcz", "gemv": "sdcz", "symv": "sd", "hemv": "cz", "trsv": "sdcz",
        "getrf": "sdcz", "getrs": "sdcz", "gesv": "sdcz", "getri": "sdcz", "potrf": "sdcz", "potrs": "sdcz",
        "posv": "sdcz", "syevd": "sd", "heevd": "cz", "syev": "sd", "heev": "cz", "syevr": "sd", "heevr": "cz",
        "gesvd": "sdcz", "gesdd": "sdcz", "geqrf": "sdcz", "orgqr": "sd", "ungqr": "cz", "gels": "sdcz",
        "gelsd": "sdcz", "geev": "sdcz",
    }
    for routine, precs in expected.items():
        for p in precs:
            assert seen[(p + routine, "fortran")] > 0, f"{p}{routine}_ not called"
            if routine in BLAS3 or routine in BLAS2:
                assert seen[(p + routine, "cblas")] > 0, f"cblas_{p}{routine} not called"
    rows = [r for r in c_run.rows if r["depth"] == "0" and r["iface"] == "cblas"]
    assert {r["row_major"] for r in rows} == {"0", "1"}


def test_c_blas2_vector_extents(c_run):
    """A strided vector spans 1 + (len - 1) * |inc| elements, whichever the increment's sign (a negative
    one walks backwards from the end of that span): the trace's operand sizes say so."""
    def sizes(row):
        return [int(o.split(":")[1]) for o in row["operands"].split(";")]

    gemv = top_level(c_run.rows, "dgemv")
    # dgemv_('N', 13, 11, lda 15, incx 1, incy -2): A 15*10+13, x 11, y 1+12*2.
    assert sizes(gemv[0]) == [8 * 163, 8 * 11, 8 * 25], gemv[0]
    # cblas_dgemv(RowMajor, Trans, 13, 11, lda 13, incx -2, incy 3): A 13*12+11, x 1+12*2, y 1+10*3.
    assert gemv[3]["symbol"] == "cblas_dgemv" and gemv[3]["row_major"] == "1", gemv[3]
    assert sizes(gemv[3]) == [8 * 167, 8 * 25, 8 * 31], gemv[3]
    # dsymv_('L', 11, lda 13, incx -1, incy 3) and ztrsv_('L', 'T', 'N', 11, lda 12, incx -3).
    symv = top_level(c_run.rows, "dsymv")[2]
    assert sizes(symv) == [8 * 141, 8 * 11, 8 * 31], symv
    trsv = top_level(c_run.rows, "ztrsv")[2]
    assert sizes(trsv) == [16 * 131, 16 * 31], trsv
    for r in top_level(c_run.rows):
        if r["routine"] in BLAS2:
            assert float(r["flops"]) == (1 if r["routine"] == "trsv" else 2) * int(r["m"]) * int(r["n"]) * (
                4 if r["precision"] in "cz" else 1), r


def test_c_workspace_queries(c_run):
    queries = [r for r in c_run.rows if r["query"] == "1" and r["depth"] == "0"]
    ops = {r["routine"] for r in queries}
    assert ops >= {"getri", "syevd", "heevd", "syev", "heev", "syevr", "heevr", "gesvd", "gesdd", "geqrf",
                   "orgqr", "ungqr", "gels", "gelsd", "geev"}, ops
    for r in queries:
        assert float(r["flops"]) == 0, r
    # Each query is followed by the real call of the same routine.
    app = [r for r in c_run.rows if r["depth"] == "0"]
    for i, r in enumerate(app):
        if r["query"] == "1":
            nxt = app[i + 1]
            assert (nxt["symbol"], nxt["query"]) == (r["symbol"], "0"), (r, nxt)
            assert float(nxt["flops"]) > 0


def test_c_info_recorded(c_run):
    """A singular matrix (getrf) and a matrix that is not positive definite (potrf) give info > 0,
    and the trace records that info."""
    for p in "sdcz":
        getrf = [r for r in top_level(c_run.rows, p + "getrf")]
        potrf = [r for r in top_level(c_run.rows, p + "potrf")]
        assert [int(r["info"]) for r in getrf] == [0, 4], getrf
        assert len(potrf) == 3 and int(potrf[-1]["info"]) > 0, potrf
        assert all(r["info"] == "0" for r in potrf[:-1]), potrf
    expected_info = Counter(c[5] > 0 for c in c_run.calls)
    assert expected_info[True] == 8


def test_c_nested_calls(c_run):
    """Reference LAPACK calls BLAS through the PLT: those calls are recorded as nested, inside the
    application's call (same thread, within its time span), and are not counted as the application's.
    Past the first 64 of their call site and size class they are counted, nested all the same (an
    aggregated line has no span of its own: it is called from the LAPACK library, as nested)."""
    rows = c_run.rows
    counted = [r for r in rows if r["nested"] == "1" and r["aggregated"] == "1"]
    assert all(r["reason"] == "nested" and "lapack" in r["site_module"] for r in counted), counted
    rows = described(rows)
    nested = [r for r in rows if r["nested"] == "1"]
    app = [r for r in rows if r["depth"] == "0"]

    def parent_of(r):
        t0, t1 = int(r["t_start_ns"]), int(r["t_start_ns"]) + int(r["duration_ns"])
        for p in app:
            p0 = int(p["t_start_ns"])
            if p["tid"] == r["tid"] and p0 <= t0 and t1 <= p0 + int(p["duration_ns"]):
                return p
        return None

    for r in nested:
        assert parent_of(r) is not None, f"nested record outside every application call: {r}"
    if c_run.lib != "reference":
        return
    # dgemm (and dtrsm) inside dgetrf, in every precision; gemm inside cblas_?gemm's Fortran routine.
    for p in "sdcz":
        inside = Counter(parent_of(r)["op"] for r in nested if r["op"] == p + "gemm")
        assert inside[p + "getrf"] > 0, f"no nested {p}gemm inside {p}getrf: {inside}"
    assert any(int(r["depth"]) >= 2 for r in nested), "no call nested two deep (e.g. dgesv > dgetrf > dgemm)"
    # Application-level counts are exactly the program's calls, nested ones notwithstanding.
    made = Counter(describe(c[0])[0] for c in c_run.calls if c[4] == 0)
    assert Counter(r["op"] for r in top_level(rows)) == made


# ---------------------------------------------------------------------------------------- Fortran client
def test_fortran_results_bitwise_identical(f_run):
    check_bitwise(f_run)


def test_fortran_trace_has_every_call(f_run):
    check_trace_matches(f_run, "fortran_client")
    assert [c[0] for c in f_run.calls] == ["dgemm_", "dgemm_", "zgemm_", "dsyevd_", "dsyevd_", "dgesv_",
                                           "dpotrf_", "dpotrf_"]
    assert f_run.calls[-1][5] > 0, "the indefinite matrix must fail in dpotrf"


def test_fortran_character_arguments(f_run):
    """'No transpose', 'Transpose', 'Conjugate transpose' (hidden lengths 12, 9, 19) are read by their
    first letter: the operand extents follow from it. dgemm('No transpose', 'Transpose', 13, 11, 9, ...,
    lda=16, ldb=12, ldc=15): A is 13x9 in lda 16, B is 11x9 in ldb 12, C 13x11 in ldc 15."""
    first = top_level(f_run.rows, "dgemm")[0]
    sizes = [int(o.split(":")[1]) for o in first["operands"].split(";")]
    assert sizes == [8 * (16 * 8 + 13), 8 * (12 * 8 + 11), 8 * (15 * 10 + 13)], first["operands"]
    second = top_level(f_run.rows, "dgemm")[1]  # 'transpose', 'n': A is 9x13, B is 9x11
    sizes = [int(o.split(":")[1]) for o in second["operands"].split(";")]
    assert sizes == [8 * (16 * 12 + 9), 8 * (12 * 10 + 9), 8 * (15 * 10 + 13)], second["operands"]
    z = top_level(f_run.rows, "zgemm")[0]  # 'Conjugate transpose', 'No transpose'
    sizes = [int(o.split(":")[1]) for o in z["operands"].split(";")]
    assert sizes == [16 * (16 * 12 + 9), 16 * (12 * 10 + 9), 16 * (15 * 10 + 13)], z["operands"]


# ------------------------------------------------------------------------------- argument forwarding
def test_arguments_forwarded_unchanged(tmp_path):
    """forward_client calls a stand-in library (fake_blas.c) that prints every argument it receives,
    hidden string lengths included (12, 9, 19, 7, 13, ...: what gfortran passes for 'No transpose',
    'Vectors', 'Index interval'), through the standard, ILP64 and CBLAS names, and a 26-argument routine
    whose arguments are mostly on the stack. Under the library every argument arrives unchanged, the
    routine's outputs come back, and the trace describes each call (ILP64 scheme, row-major CBLAS,
    workspace query, the info the routine returned)."""
    exe = client("forward_client")
    for preload in (False, True):
        trace = tmp_path / f"trace-{preload}"
        trace.mkdir()
        p = run([exe], preload=preload, trace_dir=trace if preload else None)
        lines = p.stdout.splitlines()
        sent = [i for i, line in enumerate(lines) if line.startswith("sent ")]
        assert len(sent) == 5, p.stdout
        for i in sent:
            assert lines[i + 1] == lines[i][len("sent "):], f"argument changed on the way:\n{lines[i]}\n{lines[i + 1]}"
        results = [line for line in lines if line.startswith("result ")]
        assert results == ["result dgemm_ 42", "result dgemm_64_ 43", "result cblas_zgemm 44",
                           "result dsyevd_ 1234 99 0", "result zheevr_ 3 7"], p.stdout
    rows = dump(trace)
    got = [(r["symbol"], r["scheme"], r["ilp64"], r["m"], r["n"], r["k"], r["row_major"], r["query"], r["info"])
           for r in rows]
    assert got == [
        ("dgemm_", "standard", "0", "37", "29", "23", "0", "0", "0"),
        ("dgemm_64_", "ilp64", "1", "31", "33", "35", "0", "0", "0"),
        ("cblas_zgemm", "standard", "0", "21", "19", "17", "1", "0", "0"),
        ("dsyevd_", "standard", "0", "45", "45", "0", "0", "1", "0"),
        ("zheevr_", "standard", "0", "39", "39", "0", "0", "0", "7"),
    ], got
