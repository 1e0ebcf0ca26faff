"""The report's account of converting data around the LAPACK calls, on a synthetic trace with known
answers (tests/unit/make_trace.cpp's `conversions`: NumPy's pattern around one GPU dgesv)."""

import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from conftest import BUILD, CLI, base_env  # noqa: E402

MAKE_TRACE = BUILD / "bin" / "make_trace"


def report(tmp_path, *args):
    out = tmp_path / "conversions"
    p = subprocess.run([str(MAKE_TRACE), str(out), "conversions"], env=base_env(), capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 0, p.stderr
    p = subprocess.run([str(CLI), "report", *args, str(out)], env=base_env(), capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 0, p.stderr
    return p.stdout


def test_table_known_answers(tmp_path):
    out = report(tmp_path)
    table = out.split("Converting data around the LAPACK calls (", 1)[1].split("\n\n", 1)[0]
    rows = [line.split() for line in table.splitlines() if line.strip().startswith("dgesv")]
    assert len(rows) == 1, table
    # operation, called from, calls, in the calls, ?copy calls, copying, before the calls, converting
    assert rows[0][1] == "make_trace" and rows[0][2] == "1", rows
    assert rows[0][3:11] == ["500.0", "us", "1,001", "3.0", "ms", "1.0", "ms", "4.0"], rows
    assert "the rest (0 ns) being the program's own work" in table
    assert "keep operands column-major" in table  # not NumPy or SciPy: the general advice


def test_in_short_says_it_when_converting_dominates(tmp_path):
    out = report(tmp_path)
    short = out.split("In short", 1)[1].split("\n\n", 1)[0]
    assert "Converting data around the LAPACK calls took 4.0 ms (3.0 ms in 1,001 ?copy calls by make_trace," in \
        " ".join(short.split()), short


def test_html_has_the_table(tmp_path):
    report(tmp_path, "--html", tmp_path / "r.html")
    html = (tmp_path / "r.html").read_text()
    assert 'id="conversions"' in html and "Converting data around the LAPACK calls" in html
