"""Calls below the threshold while calls are recorded (--summary, --trace): after the first 64 of a
call site and size class they are counted, not described (src/preload/counted.h), with
tests/clients/counted_client.c on reference BLAS/LAPACK: every call is still in the summary and the
trace (exactly), calls made inside a counted call are nested, the counts of threads that ended and of
a fork child are their own, the trace's aggregated records read in dump and report, and older
trace versions still read."""

import re
import struct
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from conftest import CLI, REFERENCE_LIBS, call_count, client, described, dump, run, top_level  # noqa: E402

ENV = {"LD_LIBRARY_PATH": REFERENCE_LIBS, "GPU_OFFLOAD_SUMMARY": "1"}
EVERY_CALL = {**ENV, "GPU_OFFLOAD_THRESHOLD": "0"}  # every call described, none counted


def traced(trace_dir, *args, env=ENV):
    plain = run([client("counted_client"), *args], preload=False, env={"LD_LIBRARY_PATH": REFERENCE_LIBS})
    p = run([client("counted_client"), *args], trace_dir=trace_dir, env=env)
    assert p.stdout == plain.stdout  # the calls' results are the library's own
    return p, dump(trace_dir)


def summary_rows(stderr, op):
    """(the operations table's row, the counted table's row) of `op` in one summary, as ints."""
    rows = [line.split() for line in stderr.splitlines() if line.split()[:1] == [op]]
    return [int(x) for x in rows[0][1:4]], ([int(x) for x in rows[1][1:4]] if len(rows) > 1 else None)


def test_every_call_is_in_the_trace_and_the_summary(trace_dir):
    p, rows = traced(trace_dir, "copy", 5000)
    copies = top_level(rows, "dcopy")
    assert call_count(copies) == 5000
    assert len(described(copies)) == 64  # the first 64 of the call site, one record each
    (agg,) = [r for r in copies if r["aggregated"] == "1"]
    assert agg["calls"] == "4936" and 0 < int(agg["timed_calls"]) <= 4936, agg
    assert agg["reason"] == "measured only" and agg["m"] == "18" and Path(agg["site_module"]).name == "counted_client"
    assert int(agg["duration_ns"]) > 0  # the estimate: timed time x calls / timed calls
    assert {r["site"] for r in copies} == {agg["site"]}
    table, counted = summary_rows(p.stderr, "dcopy")
    assert table == [5000, 0, 0] and counted == [4936, 0, 0], p.stderr
    assert "measured only 5000" in p.stderr
    assert re.search(r"counted: 4936 calls below the threshold.*estimated from \d+ timed calls", p.stderr), p.stderr


def test_calls_inside_a_counted_call_are_nested(trace_dir, tmp_path):
    """Reference dgetrf calls dtrsm_ and dgemm_ through the PLT: counted or described, they are nested,
    exactly as many as when every call is described, and none is the application's own."""
    p, rows = traced(trace_dir, "getrf", 500)
    every = tmp_path / "every"
    every.mkdir()
    _, all_rows = traced(every, "getrf", 500, env=EVERY_CALL)
    assert all(r["aggregated"] == "0" for r in all_rows)
    assert call_count(top_level(rows, "dgetrf")) == 500 and any(r["aggregated"] == "1" for r in top_level(rows))
    for op in ("dgemm", "dtrsm"):
        assert top_level(rows, op) == [], op
        nested = [r for r in rows if r["op"] == op]
        assert all(r["nested"] == "1" and r["reason"] == "nested" for r in nested)
        assert any(r["aggregated"] == "1" for r in nested), op
        assert call_count(nested) == call_count([r for r in all_rows if r["op"] == op]) > 0, op
    table, counted = summary_rows(p.stderr, "dgemm")
    assert table[0] == 0 and table[2] == call_count(r for r in rows if r["op"] == "dgemm"), p.stderr


def test_small_transforms_are_counted(trace_dir):
    p, rows = traced(trace_dir, "fft", 3000)
    ffts = top_level(rows, "dfft")
    assert call_count(ffts) == 3000 and {r["symbol"] for r in ffts} == {"fftw_execute"}
    (agg,) = [r for r in ffts if r["aggregated"] == "1"]
    assert (agg["m"], agg["n"], agg["k"]) == ("60", "1", "1") and agg["calls"] == "2936", agg
    table, counted = summary_rows(p.stderr, "dfft")
    assert table == [3000, 0, 0] and counted == [2936, 0, 0], p.stderr


def test_counts_of_threads_that_ended_stay(trace_dir):
    p, rows = traced(trace_dir, "threads", 4, 1000)
    copies = top_level(rows, "dcopy")
    assert call_count(copies) == 4000
    assert len(described(copies)) == 4 * 64  # each thread describes its first 64
    assert summary_rows(p.stderr, "dcopy")[0] == [4000, 0, 0], p.stderr


def test_a_fork_child_counts_from_zero(trace_dir):
    p, rows = traced(trace_dir, "fork", 1000)
    child = int(re.search(r"^gpu-offload summary \(pid (\d+)", p.stderr, re.M).group(1))  # the child exits first
    by_pid = {}
    for r in rows:
        by_pid.setdefault(int(r["pid"]), []).append(r)
    assert len(by_pid) == 2 and child in by_pid
    (parent,) = set(by_pid) - {child}
    assert call_count(by_pid[parent]) == 1250 and call_count(by_pid[child]) == 500
    child_summary, parent_summary = p.stderr.split("gpu-offload summary (pid")[1:]
    assert summary_rows(child_summary, "dcopy")[0] == [500, 0, 0], child_summary
    assert summary_rows(parent_summary, "dcopy")[0] == [1250, 0, 0], parent_summary


def cli(*args):
    p = subprocess.run([str(CLI), *map(str, args)], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    return p.stdout


def test_report_and_dump_show_the_counted_calls(trace_dir):
    traced(trace_dir, "copy", 5000)
    out = cli("report", trace_dir)
    ops = out.split("Operations (", 1)[1].split("\n\n", 1)[0]
    row = next(line for line in ops.splitlines() if line.split()[:1] == ["dcopy"])
    assert row.split()[1] == "5,000" and " ~" in row, ops
    assert "includes 4,936 calls counted below the threshold" in ops and "timed call" in ops
    sites = out.split("Busiest call sites", 1)[1].split("\n\n", 1)[0]
    row = next(line for line in sites.splitlines() if "counted_client+0x" in line)
    assert row.split()[1] == "5,000" and "~" in row, sites
    assert "measured only" in out.split("Where calls ran and why", 1)[1].split("\n\n", 1)[0]
    table = cli("dump", trace_dir).splitlines()
    assert table[0].split()[10] == "calls"
    (agg,) = [line for line in table if "x 4,936" in line]
    assert "~" in agg and "counted_client+0x" in agg


def test_a_programs_own_copies_are_not_conversions(trace_dir):
    """50 copies of the program's own before each dgetrf take longer than it: that is the program's work,
    not NumPy's or SciPy's conversion to Fortran order, and no Python advice is given."""
    p, rows = traced(trace_dir, "convert", 400)
    assert "conversions dominate" not in p.stderr, p.stderr
    out = cli("report", trace_dir)
    assert "Converting data around the LAPACK calls" not in out and "From Python" not in out, out


def patched_version(src, dst, version):
    data = bytearray(Path(src).read_bytes())
    data[12:14] = struct.pack("<H", version)  # gofl_file_header.version
    Path(dst).write_bytes(bytes(data))
    return dst


def test_older_trace_versions_still_read(trace_dir, tmp_path):
    """Versions 1 and 2 have the same records but for setup (2) and counted (3) ones: a file of a few
    calls reads the same under any of them; counted records in a version-2 file are damage."""
    traced(trace_dir, "copy", 20)  # below 64: every call described
    (f,) = trace_dir.glob("*.gofltrace")
    now = cli("dump", "--csv", f)
    for v in (1, 2):
        old = patched_version(f, tmp_path / f"v{v}.gofltrace", v)
        assert cli("dump", "--csv", old).replace(str(old), str(f)) == now
        assert "dcopy" in cli("report", old)
    many = tmp_path / "many"
    many.mkdir()
    traced(many, "copy", 200)
    (g,) = many.glob("*.gofltrace")
    bad = patched_version(g, tmp_path / "bad.gofltrace", 2)
    p = subprocess.run([str(CLI), "dump", str(bad)], capture_output=True, text=True, timeout=60)
    assert p.returncode == 1 and "unknown kind 6" in p.stderr and "damaged" in p.stderr, p.stderr
