"""The report's account of converting data around the LAPACK calls, on synthetic traces with known
answers (tests/unit/make_trace.cpp): `conversions` is NumPy's pattern around one GPU dgesv, and its
copies are conversions only when they are NumPy's own (the binary run from a numpy/ folder, as
_umath_linalg is); run from anywhere else they are the program's own work. `own_work` is scipy's
LAPACK calls after long stretches of the caller's own work (scikit-learn's kernel): no conversion."""

import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from conftest import BUILD, CLI, base_env  # noqa: E402

MAKE_TRACE = BUILD / "bin" / "make_trace"


def make_trace(tmp_path, scenario, package=None):
    """The trace of `scenario`, written by make_trace run from site-packages/PACKAGE/ when given."""
    exe = MAKE_TRACE
    if package:
        where = tmp_path / "lib" / "python3" / "site-packages" / package
        where.mkdir(parents=True, exist_ok=True)
        exe = where / "make_trace"
        shutil.copy2(MAKE_TRACE, exe)
    out = tmp_path / f"{scenario}-{package or 'own'}"
    p = subprocess.run([str(exe), str(out), scenario], env=base_env(), capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    return out


def report(trace, *args):
    p = subprocess.run([str(CLI), "report", *map(str, args), str(trace)], env=base_env(), capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    return p.stdout


def test_table_known_answers(tmp_path):
    out = report(make_trace(tmp_path, "conversions", "numpy"))
    table = out.split("Converting data around the LAPACK calls (", 1)[1].split("\n\n", 1)[0]
    rows = [line.split() for line in table.splitlines() if line.strip().startswith("dgesv")]
    assert len(rows) == 1, table
    # operation, called from, calls, in the calls, ?copy calls, copying, before the calls, converting
    assert rows[0][1] == "NumPy" and rows[0][2] == "1", rows
    assert rows[0][3:11] == ["500.0", "us", "1,001", "3.0", "ms", "1.0", "ms", "4.0"], rows
    assert "the rest (0 ns) being the program's own work" in table
    assert "NumPy: numpy.linalg copies every operand into Fortran order" in table


def test_in_short_says_it_when_converting_dominates(tmp_path):
    out = report(make_trace(tmp_path, "conversions", "numpy"))
    short = out.split("In short", 1)[1].split("\n\n", 1)[0]
    assert "Converting data around the LAPACK calls took 4.0 ms (3.0 ms in 1,001 ?copy calls by NumPy," in \
        " ".join(short.split()), short


def test_a_programs_own_copies_are_not_conversions(tmp_path):
    """The same calls from a program's own module (a C or Fortran program's dcopy): its work."""
    out = report(make_trace(tmp_path, "conversions"))
    assert "Converting data around the LAPACK calls" not in out, out
    assert "From Python" not in out, out


def test_the_callers_own_work_before_scipy_is_no_conversion(tmp_path):
    """40 ms outside any call before scipy's dposv calls (15 ms), with no copy around them."""
    out = report(make_trace(tmp_path, "own_work", "scipy"))
    assert "dposv" in out
    assert "Converting data around the LAPACK calls" not in out, out
    assert "From Python" not in out, out


def test_html_has_the_table(tmp_path):
    trace = make_trace(tmp_path, "conversions", "numpy")
    report(trace, "--html", tmp_path / "r.html")
    html = (tmp_path / "r.html").read_text()
    assert 'id="conversions"' in html and "Converting data around the LAPACK calls" in html
