"""FFTW tracking: a real FFTW program (fftw_client.c) gives the same results with and without the
library, and every execute of a plan it made appears in the trace with the plan's transform, sizes,
work and arrays. The client prints what each record must say ("exec ..." lines), in execution order.
Its transforms are small: below the decision's threshold (1e6 flops) they run on FFTW undecided."""

import math
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests/conftest.py's helpers
from conftest import CLIENTS, dump, run  # noqa: E402

CLIENT = CLIENTS / "fftw_client"
FFT_OPS = {f"{p}fft{k}" for p in "ds" for k in ("", "_r2c", "_c2r")}


@pytest.fixture(scope="module")
def plain():
    if not CLIENT.exists():
        pytest.fail(f"{CLIENT} is not built (ninja fftw_client)")
    return run([CLIENT], preload=False).stdout


def expected_execs(stdout):
    """(op, n, howmany, rank, in_bytes, out_bytes) for every "exec" line, in order."""
    out = []
    for line in stdout.splitlines():
        if line.startswith("exec "):
            op, *nums = line.split()[1:]
            out.append((op, *map(int, nums)))
    return out


def fft_records(trace_dir):
    rows = [r for r in dump(trace_dir) if r["op"] in FFT_OPS]
    return sorted(rows, key=lambda r: int(r["t_start_ns"]))  # one thread: start order is call order


def operand_bytes(row):
    return [int(o.split(":")[1]) for o in row["operands"].split(";") if o]


def test_client_prints_results(plain):
    sums = [line for line in plain.splitlines() if line.startswith("sum ")]
    assert len(sums) == 2 * 28, plain  # 27 tracked executes and one untracked, per precision
    for line in sums:
        assert all(math.isfinite(float(v)) for v in line.split()[2:]), line


def test_same_output_with_library(plain):
    assert run([CLIENT]).stdout == plain


def test_same_output_while_tracing(plain, trace_dir):
    assert run([CLIENT], trace_dir=trace_dir).stdout == plain


def test_every_execute_is_recorded(plain, trace_dir):
    run([CLIENT], trace_dir=trace_dir)
    rows = fft_records(trace_dir)
    want = expected_execs(plain)
    assert len(want) == 2 * 27
    # Plans executed twice give two records; the untracked r2r plan gives none.
    assert [(r["op"], int(r["m"]), int(r["n"]), int(r["k"])) for r in rows] == [w[:4] for w in want]
    for row, (op, n, howmany, rank, in_bytes, out_bytes) in zip(rows, want):
        what = f"{op} n={n} howmany={howmany} rank={rank}"
        assert row["routine"] == op[1:] and row["precision"] == op[0], what
        assert row["iface"] == "fftw", what
        flops_ = 5.0 * n * math.log2(n) * howmany * (1.0 if op.endswith("fft") else 0.5)
        decided = {"GPU not started yet", "predicted slower"}
        assert row["reason"] == "below threshold" if flops_ < 1e6 else row["reason"] in decided, what
        assert row["device"] == "cpu", what
        assert row["depth"] == "0" and row["nested"] == "0", what
        flops = 5.0 * n * math.log2(n) * howmany * (1.0 if op.endswith("fft") else 0.5)
        assert float(row["flops"]) == pytest.approx(flops, rel=1e-12), what
        assert operand_bytes(row) == ([in_bytes, out_bytes] if out_bytes else [in_bytes]), what
        assert row["site_module"].endswith("fftw_client"), what


def test_new_array_execute_records_the_new_arrays(plain, trace_dir):
    run([CLIENT], trace_dir=trace_dir)
    rows = fft_records(trace_dir)
    first_three = rows[:3]  # dfft 64: executed twice on the plan's arrays, then on new ones
    addrs = [[o.split(":")[0] for o in r["operands"].split(";")] for r in first_three]
    assert addrs[0] == addrs[1]
    assert set(addrs[2]).isdisjoint(addrs[0])


def test_summary_counts_transforms(plain):
    err = run([CLIENT], env={"GPU_OFFLOAD_SUMMARY": "1"}).stderr
    counts = {}
    for op, *_ in expected_execs(plain):
        counts[op] = counts.get(op, 0) + 1
    for op, count in counts.items():
        line = next((l for l in err.splitlines() if l.split()[:1] == [op]), None)
        assert line is not None, err
        assert int(line.split()[1]) == count, line


def test_fortran_legacy_interface_is_measured(trace_dir):
    """dfftw_execute & co. (plan by reference) reach FFTW's internals directly: they are wrapped too."""
    from conftest import require

    client = CLIENTS / "fortran_fftw"
    require(client.exists(), "gfortran (fortran_fftw client)")
    plain = run([client], preload=False)
    traced = run([client], trace_dir=trace_dir)
    assert traced.stdout == plain.stdout and plain.stdout.strip()
    rows = dump(trace_dir)
    got = [(r["op"], r["m"], r["n"], r["k"]) for r in sorted(rows, key=lambda r: int(r["t_start_ns"]))]
    # N = 96, one transform of rank 1 each: execute, execute_dft (double), execute_dft_r2c, sfftw_execute.
    assert got == [("dfft", "96", "1", "1"), ("dfft", "96", "1", "1"), ("dfft_r2c", "96", "1", "1"),
                   ("sfft", "96", "1", "1")], got
    assert all(r["reason"] == "below threshold" and r["device"] == "cpu" for r in rows)
