"""The command-line tool: `run` (options -> environment, library lookup, exec), `dump` (the CSV columns
other tests rely on), `report`, help and version, and every error the trace reader reports.

Traces come from a real C program run under the library. Damaged files are made by changing bytes of
a real trace; the reading itself is always done by `gpu-offload`."""

import csv
import io
import os
import re
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from conftest import (  # noqa: E402
    CLI, LIB, MULTIARCH, REFERENCE_LIBS, ROOT, base_env, call_count, dump, require, require_tool, run, top_level)

COLUMNS = ("file,pid,ppid,op,routine,precision,symbol,iface,scheme,ilp64,depth,nested,query,row_major,device,"
           "reason,m,n,k,flops,info,tid,t_start_ns,duration_ns,site,site_module,site_offset,operands,"
           "copy_in_s,compute_s,copy_out_s,gpu_status,verify_error,verify_mismatch,pred_cpu_s,pred_gpu_s,gpu,pci_bus_id,copy_split,gpu_split,core_spared,avoided_bytes,"
           "aggregated,calls,timed_calls,cores_held,staged").split(",")

HEADER_SIZE = 512
RECORD_SIZE = 232

# A client whose every call is known: sizes, flags, info, and the buffers it passes.
CLIENT = r"""
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
void dgemm_(const char*, const char*, const int*, const int*, const int*, const double*, const double*,
            const int*, const double*, const int*, const double*, double*, const int*);
void dgetrf_(const int*, const int*, double*, const int*, int*, int*);
void dgetri_(const int*, double*, const int*, const int*, double*, const int*, int*);
int main(void) {
  int n = 200, lda = 200; double one = 1.0, zero = 0.0;
  double *a = malloc(sizeof(double) * n * n), *b = malloc(sizeof(double) * n * n),
         *c = malloc(sizeof(double) * n * n);
  for (int i = 0; i < n * n; ++i) { a[i] = (i * 7 % 13) + (i % (n + 1) == 0 ? n : 0); b[i] = 1.0; c[i] = 0.0; }
  dgemm_("N", "N", &n, &n, &n, &one, a, &lda, b, &lda, &zero, c, &lda);
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 10, 20, 30, 1.0, a, 30, b, 20, 0.0, c, 20);
  int ipiv[200], info;
  dgetrf_(&n, &n, a, &lda, ipiv, &info);
  double wq; int lq = -1;
  dgetri_(&n, a, &lda, ipiv, &wq, &lq, &info);
  int lwork = (int)wq; double* work = malloc(sizeof(double) * lwork);
  dgetri_(&n, a, &lda, ipiv, work, &lwork, &info);
  int four = 4, info0; double z[16] = {0};  /* singular: info = 1 */
  dgetrf_(&four, &four, z, &four, ipiv, &info0);
  printf("pid %d\na %p\nb %p\nc %p\nz %p\ninfo %d\n", (int)getpid(), (void*)a, (void*)b, (void*)c, (void*)z, info0);
  return 0;
}
"""


def cli(*args, env=None, exe=None, **kw):
    return subprocess.run([str(exe or CLI), *map(str, args)], env=base_env(env), capture_output=True, text=True,
                          timeout=120, **kw)


def assert_error(p, *words, status=1):
    assert p.returncode == status, (p.returncode, p.stdout, p.stderr)
    assert p.stderr.startswith("gpu-offload: "), p.stderr
    for w in words:
        assert w in p.stderr, (w, p.stderr)


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    require_tool("gcc")
    # A comma in the folder name: site_module must come out as one CSV field.
    d = tmp_path_factory.mktemp("client") / "bin,dir"
    d.mkdir()
    src = d / "cli_client.c"
    src.write_text(CLIENT)
    exe = d / "cli_client"
    p = subprocess.run(["gcc", "-O1", "-o", str(exe), str(src), "-lblas", "-llapack"], capture_output=True,
                       text=True)
    if p.returncode != 0:
        require(False, f"gcc with -lblas -llapack and cblas.h ({p.stderr.strip()[:200]})")
    return exe


@pytest.fixture(scope="module")
def traced(client, tmp_path_factory):
    """(trace folder, the client's printed values, rows of dump --csv) of one run on reference BLAS/LAPACK,
    whose getrf calls dgemm_/dtrsm_ through the PLT: nested calls appear."""
    reference = (MULTIARCH / "lapack").is_dir() and (MULTIARCH / "blas").is_dir()
    tdir = tmp_path_factory.mktemp("trace")
    p = run([client], trace_dir=tdir, env={"LD_LIBRARY_PATH": REFERENCE_LIBS} if reference else None)
    values = dict(line.split(" ", 1) for line in p.stdout.splitlines())
    return tdir, values, dump(tdir), reference


def trace_file(tdir):
    files = sorted(tdir.glob("*.gofltrace"))
    assert len(files) == 1, files
    return files[0]


def calls(rows, symbol):
    return [r for r in rows if r["symbol"] == symbol and r["nested"] == "0"]


# ----- dump -----

def test_dump_header_is_exactly_the_documented_columns(traced):
    tdir = traced[0]
    p = cli("dump", "--csv", tdir)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines()[0].split(",") == COLUMNS
    assert p.stderr == ""


def test_dump_values_of_a_fortran_call(traced):
    tdir, values, rows, _ = traced
    (r,) = calls(rows, "dgemm_")
    assert (r["op"], r["routine"], r["precision"]) == ("dgemm", "gemm", "d")
    assert (r["iface"], r["scheme"], r["ilp64"]) == ("fortran", "standard", "0")
    assert (r["depth"], r["nested"], r["query"], r["row_major"]) == ("0", "0", "0", "0")
    assert (r["m"], r["n"], r["k"]) == ("200", "200", "200")
    assert float(r["flops"]) == 2.0 * 200 ** 3
    assert r["device"] == "cpu"
    assert r["reason"] in ("GPU unavailable", "predicted slower", "GPU not started yet", "below threshold")
    assert r["info"] == "0"
    assert r["pid"] == values["pid"] == r["tid"]  # the main thread
    assert r["ppid"] == str(os.getpid())
    assert Path(r["file"]) == trace_file(tdir)
    assert int(r["t_start_ns"]) > 0 and int(r["duration_ns"]) > 0
    # The call site is in the client, named by its module (whose path has a comma) and offset.
    assert r["site"].startswith("0x") and r["site_offset"].startswith("0x")
    assert r["site_module"].endswith("bin,dir/cli_client")
    assert int(r["site"], 16) & 0xFFF == int(r["site_offset"], 16) & 0xFFF  # same page offset
    ops = [o.split(":") for o in r["operands"].split(";")]
    assert [int(o[0], 16) for o in ops] == [int(values[x], 16) for x in "abc"]
    assert [int(o[1]) for o in ops] == [200 * 200 * 8] * 3
    assert int(ops[0][2]) != 0 and int(ops[1][2]) != 0  # a and b are read
    assert int(ops[2][3]) != 0 and ops[0][3] == ops[1][3] == "0"  # only c is written


def test_dump_starts_and_report_name_the_gpu_start(client, tmp_path):
    """--device gpu starts the GPU at the first GPU-capable call. The trace records the start (or the
    failed attempt) apart from the calls: `dump --starts` prints it, the report's summary names it."""
    tdir = tmp_path / "t"
    run([client], trace_dir=tdir, env={"GPU_OFFLOAD_DEVICE": "gpu"})
    p = cli("dump", "--starts", "--csv", tdir)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0] == "file,pid,tid,t_start_ns,duration_ns,ok,message,gpu,gpu_count,pci_bus_id,gpu_name,chosen_by,waited_ns"
    rows = list(csv.DictReader(io.StringIO(p.stdout)))
    assert len(rows) == 1, p.stdout  # one start per process, even though every call asked for the GPU
    (s,) = rows
    assert Path(s["file"]) == trace_file(tdir) and s["pid"] == s["tid"]
    assert int(s["t_start_ns"]) > 0 and int(s["duration_ns"]) > 0
    # It comes before the first call's start, which waited for it.
    first = min(int(r["t_start_ns"]) for r in dump(tdir))
    assert int(s["t_start_ns"]) + int(s["duration_ns"]) <= first
    table = cli("dump", "--starts", tdir).stdout.splitlines()
    assert table[0].split()[:7] == ["pid", "tid", "took", "waited", "ok", "gpu", "pci"] and len(table) == 2
    summary = cli("report", tdir).stdout
    if s["ok"] == "1":
        assert s["message"] == "" and "Starting the GPU (loading the CUDA libraries" in summary, summary
        assert s["gpu"] and s["pci_bus_id"] and f"The GPU calls ran on GPU {s['gpu']} ({s['pci_bus_id']})" in summary
    else:
        assert s["ok"] == "0" and s["message"], s
        assert f"The GPU could not be started ({s['message']}): every call ran on the CPU." in summary.replace(
            "\n    ", " "), summary
    # A run that never asks for the GPU records no start.
    t2 = tmp_path / "cpu"
    run([client], trace_dir=t2, env={"GPU_OFFLOAD_DEVICE": "cpu"})
    assert cli("dump", "--starts", "--csv", t2).stdout.splitlines() == [lines[0]]
    assert "GPU could not be started" not in cli("report", t2).stdout


def test_dump_values_of_a_row_major_cblas_call(traced):
    (r,) = calls(traced[2], "cblas_dgemm")
    assert (r["iface"], r["scheme"], r["row_major"]) == ("cblas", "standard", "1")
    assert (r["m"], r["n"], r["k"]) == ("10", "20", "30")
    assert float(r["flops"]) == 2.0 * 10 * 20 * 30
    assert r["reason"] == "below threshold"


def test_dump_workspace_query_info_and_nested_calls(traced):
    _, values, rows, reference = traced
    getri = calls(rows, "dgetri_")
    assert [r["query"] for r in getri] == ["1", "0"]
    assert getri[0]["reason"] == "workspace query" and float(getri[0]["flops"]) == 0.0
    singular = [r for r in calls(rows, "dgetrf_") if r["m"] == "4"]
    assert len(singular) == 1 and singular[0]["info"] == values["info"] == "1"
    assert int(singular[0]["operands"].split(":")[0], 16) == int(values["z"], 16)
    if reference:
        nested = [r for r in rows if r["nested"] == "1"]
        assert nested and all(r["reason"] == "nested" and int(r["depth"]) >= 1 for r in nested)
        assert {r["op"] for r in nested} >= {"dgemm"}
    assert len(top_level(rows)) == 5  # dgemm_, cblas_dgemm, dgetrf_ x2, dgetri_


def test_dump_accepts_files_and_folders_in_order(traced, tmp_path):
    tdir = traced[0]
    f = trace_file(tdir)
    other = tmp_path / "other"
    other.mkdir()
    for name in ("b.gofltrace", "a.gofltrace"):
        shutil.copy(f, other / name)
    (other / "ignored.txt").write_text("not a trace")
    rows = dump(other, f)  # conftest's dump puts extra arguments first
    per_file = [r["file"] for r in rows]
    n = len(traced[2])
    assert per_file == [str(f)] * n + [str(other / "a.gofltrace")] * n + [str(other / "b.gofltrace")] * n


def test_dump_table_without_csv(traced):
    p = cli("dump", traced[0])
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0].split()[:4] == ["pid", "op", "symbol", "dev"]
    assert len(lines) == 1 + len(traced[2])
    assert any("cblas_dgemm" in line and "below threshold" in line for line in lines)
    assert any("cli_client+0x" in line for line in lines)
    assert "," not in lines[0]


def patched(src, dst, edits):
    """Copy a trace, overwriting bytes at given offsets."""
    data = bytearray(Path(src).read_bytes())
    for off, b in edits:
        data[off:off + len(b)] = b
    Path(dst).write_bytes(bytes(data))
    return dst


def call_record_offsets(path):
    data = Path(path).read_bytes()
    return [off for off in range(HEADER_SIZE, len(data) - RECORD_SIZE + 1, RECORD_SIZE)
            if struct.unpack_from("<I", data, off)[0] == 1]


def op_index(name):
    ops = re.findall(r'^GOFL_OP\(\w+, "(\w+)"', (ROOT / "src/generated/ops.inc").read_text(), re.M)
    return ops.index(name)


def test_dump_names_fftw_records(traced, tmp_path):
    """FFTW executes are not exported symbols of the table: their records carry sym 0xFFFF."""
    f = trace_file(traced[0])
    offs = call_record_offsets(f)
    # The record's call part starts 8 bytes in (kind, reserved); op and sym are its first two u16.
    out = patched(f, tmp_path / "fftw.gofltrace", [
        (offs[0] + 8, struct.pack("<HH", op_index("dfft"), 0xFFFF)),
        (offs[1] + 8, struct.pack("<HH", op_index("sfft_r2c"), 0xFFFF)),
    ])
    rows = dump(out)
    assert (rows[0]["op"], rows[0]["symbol"], rows[0]["iface"], rows[0]["scheme"], rows[0]["precision"]) == \
        ("dfft", "fftw_execute", "fftw", "fftw", "d")
    assert (rows[1]["op"], rows[1]["symbol"], rows[1]["routine"], rows[1]["precision"]) == \
        ("sfft_r2c", "fftwf_execute", "fft_r2c", "s")
    assert cli("report", out).returncode == 0


# ----- report -----

def test_report_contents(traced):
    tdir, values, rows, reference = traced
    p = cli("report", tdir)
    assert p.returncode == 0, p.stderr
    out = p.stdout
    assert re.search(r"files\s+1\b", out) and re.search(r"processes\s+1\b", out)
    assert "cli_client" in out  # the program
    assert re.search(r"level\s+5\b", out) and re.search(r"profile\s+built-in", out)
    assert re.search(r"device\s+auto", out)

    # One line per operation, sorted by the time of top-level calls.
    op_lines = {}
    for line in out.splitlines():
        m = re.match(r"\s+(\w+)\s+([\d,]+)\s+([\d,]+)\s+([\d,]+)\s+([\d,]+)", line)
        if m and m.group(1) in {r["op"] for r in rows} | {"total"}:
            op_lines.setdefault(m.group(1), [int(g.replace(",", "")) for g in m.groups()[1:]])
    time = {}
    for r in top_level(rows):
        time[r["op"]] = time.get(r["op"], 0) + int(r["duration_ns"])
    order = [op for op in op_lines if op != "total"]
    timed = [op for op in order if op in time]
    assert timed == sorted(time, key=lambda op: -time[op])
    # calls, on gpu, nested, queries
    assert op_lines["dgemm"][0] == 2 and op_lines["dgetrf"][0] == 2
    assert op_lines["dgetri"][0] == 1 and op_lines["dgetri"][3] == 1
    n_nested = call_count(r for r in rows if r["nested"] == "1")  # reference LAPACK's, partly counted
    assert op_lines["total"] == [5, 0, n_nested, 1]
    # Smallest / median / largest of each call's largest dimension.
    assert re.search(r"^\s+dgemm\s.*\s30 / 200 / 200$", out, re.M)
    assert re.search(r"^\s+dgetri\s.*\s200 / 200 / 200$", out, re.M)

    # Call sites by time: module basename + offset, the busiest first.
    site_time = {}
    for r in top_level(rows):
        site_time[r["site_offset"]] = site_time.get(r["site_offset"], 0) + int(r["duration_ns"])
    busiest = max(site_time, key=site_time.get)
    sites = out.split("Busiest call sites")[1].split("\n\n")[0].splitlines()
    assert sites[0].startswith(f" (top {len(site_time)} of {len(site_time)} by time)")
    assert sites[2].split()[0] == f"cli_client+{busiest}"

    reasons = out.split("Where calls ran and why")[1]
    assert "workspace query" in reasons and "below threshold" in reasons
    if reference:
        assert re.search(rf"nested\s+{n_nested:,}\s", reasons)


def test_report_top(traced):
    p = cli("report", traced[0], "--top", "1")
    assert p.returncode == 0, p.stderr
    sites = p.stdout.split("Busiest call sites")[1].split("\n\n")[0].splitlines()
    assert len(sites) == 3  # title, column header, one site
    p = cli("report", "--top=0", traced[0])
    assert p.returncode == 0 and "Busiest call sites" not in p.stdout
    assert_error(cli("report", traced[0], "--top", "many"), "--top", status=2)
    assert_error(cli("report", traced[0], "--frob"), "--frob", "--top", status=2)
    assert_error(cli("report"), "report", status=2)


def test_report_of_a_trace_without_calls(traced, tmp_path):
    f = trace_file(traced[0])
    out = tmp_path / "empty.gofltrace"
    out.write_bytes(f.read_bytes()[:HEADER_SIZE])
    p = cli("report", out)
    assert p.returncode == 0, p.stderr
    assert "No BLAS, LAPACK or FFTW calls" in p.stdout
    assert dump(out) == []


# ----- errors reading traces -----

ANOTHER_VERSION = "written by another gpu-offload version"

HEADER_DAMAGE = [
    # name, edits (offset, bytes), words the message must hold
    ("not-a-trace", [(0, b"PK\x03\x04ZIP!")], ["not a gpu-offload trace", "magic"]),
    ("other-magic", [(0, b"GOFLTRC2")], ["GOFLTRC2", ANOTHER_VERSION]),
    ("swapped-bytes", [(8, struct.pack(">I", 0x01020304))], ["byte order", ANOTHER_VERSION]),
    ("bad-byte-order", [(8, struct.pack("<I", 0x11223344))], ["byte order", "damaged"]),
    ("version", [(12, struct.pack("<H", 4))], ["version 4", ANOTHER_VERSION]),
    ("version-0", [(12, struct.pack("<H", 0))], ["version 0", ANOTHER_VERSION]),
    ("record-size", [(14, struct.pack("<H", 168))], ["record size 168", ANOTHER_VERSION]),
    ("ops-hash", [(16, struct.pack("<I", 0xDEADBEEF))], ["ops_hash", "0xdeadbeef", ANOTHER_VERSION]),
]


@pytest.mark.parametrize("name,edits,words", HEADER_DAMAGE, ids=[d[0] for d in HEADER_DAMAGE])
@pytest.mark.parametrize("command", ["dump", "report"])
def test_header_errors(traced, tmp_path, command, name, edits, words):
    bad = patched(trace_file(traced[0]), tmp_path / f"{name}.gofltrace", edits)
    for target in (bad, tmp_path):  # the file itself, and the folder holding it
        p = cli(command, target)
        assert_error(p, str(bad), *words)
        assert p.stdout == ""  # headers are checked before anything is printed


def test_truncated_file_keeps_complete_records(traced, tmp_path):
    f = trace_file(traced[0])
    data = f.read_bytes()
    n_records = (len(data) - HEADER_SIZE) // RECORD_SIZE
    assert (len(data) - HEADER_SIZE) % RECORD_SIZE == 0
    cut = tmp_path / "cut.gofltrace"
    cut.write_bytes(data[:-100])  # the last record loses its end
    p = cli("dump", "--csv", cut)
    assert p.returncode == 0, p.stderr
    assert p.stderr.startswith("gpu-offload: ") and "partial record" in p.stderr
    assert f"{RECORD_SIZE - 100} bytes" in p.stderr and f"{n_records - 1} complete records" in p.stderr
    rows = list(csv.DictReader(io.StringIO(p.stdout)))
    last_is_call = struct.unpack_from("<I", data, len(data) - RECORD_SIZE)[0] == 1
    assert len(rows) == len(traced[2]) - (1 if last_is_call else 0)
    assert rows == [dict(r, file=str(cut)) for r in traced[2][:len(rows)]]
    p = cli("report", cut)
    assert p.returncode == 0 and "partial record" in p.stderr and "Operations" in p.stdout


@pytest.mark.parametrize("size", [0, 5, 100, HEADER_SIZE - 1])
def test_truncated_header(traced, tmp_path, size):
    f = tmp_path / "short.gofltrace"
    f.write_bytes(trace_file(traced[0]).read_bytes()[:size])
    assert_error(cli("dump", f), str(f), "truncated header")


def test_damaged_record(traced, tmp_path):
    f = trace_file(traced[0])
    offs = call_record_offsets(f)
    bad_op = patched(f, tmp_path / "op.gofltrace", [(offs[0] + 8, struct.pack("<H", 60000))])
    assert_error(cli("dump", bad_op), "op.gofltrace", "damaged")
    bad_kind = patched(f, tmp_path / "kind.gofltrace", [(offs[0], struct.pack("<I", 9))])
    assert_error(cli("report", bad_kind), "kind.gofltrace", "kind 9", "damaged")
    # A symbol of another operation: names would be wrong, so it is refused too.
    bad_sym = patched(f, tmp_path / "sym.gofltrace", [(offs[0] + 10, struct.pack("<H", 0))])
    assert_error(cli("dump", "--csv", bad_sym), "sym.gofltrace", "damaged")


def test_missing_and_empty_folders(tmp_path):
    for command in ("dump", "report"):
        assert_error(cli(command, tmp_path / "nope"), "nope", "no such file or folder")
        (tmp_path / "empty").mkdir(exist_ok=True)
        (tmp_path / "empty" / "notes.txt").write_text("x")
        assert_error(cli(command, tmp_path / "empty"), "no trace files", ".gofltrace")
        assert_error(cli(command), command, status=2)


# ----- run -----

def env_of(*run_args, env=None, cwd=None):
    p = cli("run", *run_args, "env", env=env, cwd=cwd)
    assert p.returncode == 0, p.stderr
    return dict(line.split("=", 1) for line in p.stdout.splitlines() if "=" in line)


def test_run_translates_options_into_environment(tmp_path):
    profile = tmp_path / "machine.profile"
    profile.write_text("# profile\n")
    e = env_of("--device", "cpu", "--level=3", "--summary", "--verify", "--trace", "t/a/b", "--profile",
               "machine.profile", "--", cwd=tmp_path)
    assert e["GPU_OFFLOAD_DEVICE"] == "cpu"
    assert e["GPU_OFFLOAD_LEVEL"] == "3"
    assert e["GPU_OFFLOAD_SUMMARY"] == "1"
    assert e["GPU_OFFLOAD_VERIFY"] == "1"
    # Absolute: the program may change directory before it writes.
    assert e["GPU_OFFLOAD_TRACE"] == str((tmp_path / "t/a/b").resolve())
    assert (tmp_path / "t/a/b").is_dir()
    assert e["GPU_OFFLOAD_PROFILE"] == str(profile.resolve())
    assert e["LD_PRELOAD"] == str(LIB.resolve())


def test_run_sets_only_what_was_asked():
    e = env_of("--device", "cpu")
    assert e["GPU_OFFLOAD_DEVICE"] == "cpu"
    # (GPU_OFFLOAD_HISTORY=off comes from the tests' own environment, conftest.base_env)
    assert not {k for k in e if k.startswith("GPU_OFFLOAD_")} - {"GPU_OFFLOAD_DEVICE", "GPU_OFFLOAD_HISTORY"}
    assert env_of("--history", "on")["GPU_OFFLOAD_HISTORY"] == "on"
    assert env_of("--history=off")["GPU_OFFLOAD_HISTORY"] == "off"
    for mode in ("gpu", "auto"):
        assert env_of("--device", mode)["GPU_OFFLOAD_DEVICE"] == mode
    for level in ("1", "10"):
        assert env_of("--level", level)["GPU_OFFLOAD_LEVEL"] == level


def test_run_keeps_existing_preloads():
    other = "/usr/lib/x86_64-linux-gnu/libm.so.6"
    e = env_of(env={"LD_PRELOAD": f"{other} {LIB}"})
    assert e["LD_PRELOAD"].split(":") == [str(LIB.resolve()), other]


def test_run_library_from_environment_and_missing(tmp_path):
    copy = tmp_path / "elsewhere" / "libgpuoffload.so"
    copy.parent.mkdir()
    shutil.copy(LIB, copy)
    e = env_of(env={"GPU_OFFLOAD_LIBRARY": str(copy)})
    assert e["LD_PRELOAD"] == str(copy)
    assert_error(cli("run", "env", env={"GPU_OFFLOAD_LIBRARY": str(tmp_path / "none.so")}),
                 "GPU_OFFLOAD_LIBRARY", "none.so")
    # A copy of the tool with no library beside it names every place it looked.
    lone = tmp_path / "prefix" / "bin" / "gpu-offload"
    lone.parent.mkdir(parents=True)
    shutil.copy(CLI, lone)
    p = cli("run", "env", exe=lone)
    prefix = str((tmp_path / "prefix").resolve())
    assert_error(p, "libgpuoffload.so", "GPU_OFFLOAD_LIBRARY")
    for place in ("lib", "lib64", "lib/x86_64-linux-gnu"):
        assert f"{prefix}/bin/../{place}/libgpuoffload.so" in p.stderr


@pytest.mark.parametrize("args,words", [
    (["--device", "foo"], ["'foo'", "cpu", "gpu", "auto"]),
    (["--level", "11"], ["'11'", "1 to 10"]),
    (["--level", "0"], ["'0'", "1 to 10"]),
    (["--level", "3.5"], ["'3.5'", "1 to 10"]),
    (["--frob"], ["--frob", "--trace", "--summary", "--device", "--level", "--verify", "--profile"]),
    (["--summary=yes"], ["--summary", "no value"]),
    (["--trace"], ["--trace", "DIR"]),
    ([], ["PROGRAM"]),
])
def test_run_usage_errors(args, words):
    assert_error(cli("run", *args), *words, "gpu-offload help run", status=2)


def test_run_trace_folder_errors(tmp_path):
    f = tmp_path / "file"
    f.write_text("")
    assert_error(cli("run", "--trace", f, "true"), str(f), "not a folder")
    assert_error(cli("run", "--trace", f / "sub", "true"), "cannot create the trace folder", "--trace DIR")
    assert_error(cli("run", "--profile", tmp_path / "none.profile", "true"), "none.profile")
    if os.geteuid() != 0:  # root writes anywhere
        ro = tmp_path / "ro"
        ro.mkdir(mode=0o500)
        assert_error(cli("run", "--trace", ro, "true"), "cannot write", str(ro))


def test_run_program_not_found_or_not_executable(tmp_path):
    assert_error(cli("run", "no-such-program-gofl"), "no-such-program-gofl", "not found", status=127)
    assert_error(cli("run", "--", tmp_path / "missing"), "missing", status=127)
    script = tmp_path / "script.sh"
    script.write_text("#!/bin/sh\nexit 0\n")
    assert_error(cli("run", script), "script.sh", status=126)


def test_run_passes_arguments_and_exit_status():
    p = cli("run", "sh", "-c", 'echo "$0 $1"; exit 7', "--level", "x")
    assert p.returncode == 7
    assert p.stdout == "--level x\n"


def test_run_traces_a_program(client, tmp_path):
    tdir = tmp_path / "new" / "trace"
    p = cli("run", "--trace", tdir, "--summary", client)
    assert p.returncode == 0, p.stderr
    assert "gpu-offload summary" in p.stderr
    rows = dump(tdir)
    assert {r["symbol"] for r in top_level(rows)} >= {"dgemm_", "cblas_dgemm", "dgetrf_", "dgetri_"}


def test_run_numpy(tmp_path):
    require(subprocess.run([sys.executable, "-c", "import numpy"], capture_output=True).returncode == 0, "numpy")
    p = cli("run", "--trace", tmp_path, "--device", "cpu", sys.executable, "-c",
            "import numpy as np; a = np.ones((300, 300)); print((a @ a).sum())")
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == str(300.0 ** 3)
    gemm = top_level(dump(tmp_path), "dgemm")
    assert [(r["m"], r["n"], r["k"]) for r in gemm] == [("300", "300", "300")]
    assert gemm[0]["reason"] == "device cpu"


# ----- help and version -----

def test_help_and_version():
    p = cli("--help")
    assert p.returncode == 0
    for command in ("run", "dump", "report", "help"):
        assert re.search(rf"^\s+{command}\s", p.stdout, re.M)
    options = {
        "run": ["--trace DIR", "--summary", "--device", "cpu", "gpu", "auto", "--level", "--verify",
                "--profile FILE", "GPU_OFFLOAD_LIBRARY", "127"],
        "dump": ["--csv"] + COLUMNS,
        "report": ["--top N"],
    }
    for command, words in options.items():
        text = cli("help", command)
        assert text.returncode == 0 and text.stdout.startswith(f"Usage: gpu-offload {command}")
        for w in words:
            assert w in text.stdout, (command, w)
        assert cli(command, "--help").stdout == text.stdout
    assert_error(cli("help", "nope"), "nope", status=2)
    assert_error(cli("frobnicate"), "frobnicate", "run, dump, report", status=2)
    assert cli().returncode == 2
    version = re.search(r"project\(gpu-offload VERSION ([\d.]+)", (ROOT / "CMakeLists.txt").read_text()).group(1)
    p = cli("--version")
    assert p.returncode == 0 and p.stdout == f"gpu-offload {version}\n"


def test_run_gpus_becomes_the_variable_and_bad_lists_are_refused():
    """--gpus LIST|all: a list of CUDA device numbers and ranges, passed on as GPU_OFFLOAD_GPUS (normalised)."""
    p = cli("run", "--gpus", "2,0-1", "--", "sh", "-c", 'echo "$GPU_OFFLOAD_GPUS"')
    assert p.returncode == 0 and p.stdout.strip() == "2,0,1", (p.stdout, p.stderr)
    assert cli("run", "--gpus", "all", "--", "sh", "-c", 'echo "$GPU_OFFLOAD_GPUS"').stdout.strip() == "all"
    for bad, words in (("3-1", "is not a range of GPU numbers"), ("gpu0", "is not a GPU number"), ("", "names no GPU")):
        assert_error(cli("run", "--gpus", bad, "--", "true"), f"--gpus '{bad}' is not valid", words, status=2)
