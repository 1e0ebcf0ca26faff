"""The GPU each process ran on, as the trace records it at the GPU start (record.h, gofl_start_gpu):
`dump --starts` and the report name it; start records written before the GPU was recorded (an ok
start with nothing after `ok`, a failed start whose message fills all 200 bytes) read as before.
The records come from tests/unit/make_trace.cpp's `starts` scenario, through the library's writer."""
import csv
import io
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from conftest import BUILD, CLI, base_env  # noqa: E402

MAKE_TRACE = BUILD / "bin" / "make_trace"


def cli(*args):
    p = subprocess.run([str(CLI), *map(str, args)], env=base_env(), capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, (args, p.stdout, p.stderr)
    return p.stdout


def starts_trace(tmp_path):
    out = tmp_path / "starts"
    p = subprocess.run([str(MAKE_TRACE), str(out), "starts"], env=base_env(), capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    return out


def test_dump_starts_names_the_gpu_and_reads_older_records(tmp_path):
    rows = list(csv.DictReader(io.StringIO(cli("dump", "--starts", "--csv", starts_trace(tmp_path)))))
    assert len(rows) == 4, rows
    by_gpu = {r["gpu"]: r for r in rows if r["gpu"]}
    assert set(by_gpu) == {"0", "1"}
    one = by_gpu["1"]
    assert (one["ok"], one["message"], one["gpu_count"], one["pci_bus_id"], one["gpu_name"]) == (
        "1", "", "2", "00000000:2A:00.0", "NVIDIA H200")
    assert one["chosen_by"] == "local rank 1 (OMPI_COMM_WORLD_LOCAL_RANK) of 2 usable GPUs"
    assert by_gpu["0"]["chosen_by"] == "the least loaded of 2 usable GPUs" and by_gpu["0"]["pid"] != one["pid"]
    # How long the program waited: all of a start in its call, part of one beside the calls.
    assert (one["duration_ns"], one["waited_ns"]) == ("300000000", "300000000")
    assert (by_gpu["0"]["duration_ns"], by_gpu["0"]["waited_ns"]) == ("280000000", "30000000")
    # As traces before the GPU was recorded wrote them: an ok start without a GPU, and a failed start
    # whose message runs to the end of its 200 bytes.
    (old_ok,) = [r for r in rows if r["ok"] == "1" and not r["gpu"]]
    assert old_ok["message"] == "" and old_ok["pci_bus_id"] == "" and old_ok["chosen_by"] == ""
    (failed,) = [r for r in rows if r["ok"] == "0"]
    assert failed["message"] == "x" * 199 and failed["gpu"] == "" and failed["pci_bus_id"] == ""
    table = cli("dump", "--starts", starts_trace(tmp_path / "again")).splitlines()
    assert table[0].split()[:7] == ["pid", "tid", "took", "waited", "ok", "gpu", "pci"]
    assert any(re.search(r" yes +1 +00000000:2A:00\.0 +local rank 1 \(OMPI_COMM_WORLD_LOCAL_RANK\) of 2 usable GPUs$", line)
               for line in table), table
    assert any(re.search(r" no +- +- +x{199}$", line) for line in table), table


def test_dump_names_the_gpu_of_each_gpu_call(tmp_path):
    rows = list(csv.DictReader(io.StringIO(cli("dump", "--csv", starts_trace(tmp_path)))))
    assert len(rows) == 2 and all(r["device"] == "gpu" for r in rows), rows
    assert sorted((r["gpu"], r["pci_bus_id"]) for r in rows) == [("0", "00000000:18:00.0"), ("1", "00000000:2A:00.0")]


def test_report_says_which_gpus_the_processes_ran_on(tmp_path):
    report = cli("report", starts_trace(tmp_path)).replace("\n    ", " ")
    assert "The GPU calls ran on GPU 0 (00000000:18:00.0) (1 process), GPU 1 (00000000:2A:00.0) (1 process)." in report, report
    # 250 + 300 + 280 ms of starts, of which the child's ran beside its calls but for 30 ms.
    assert re.search(r"Starting the GPU \(loading the backend, starting the CUDA driver, making the context\) took 830(\.0+)? ms in 3 processes "
                     r"\(the program waited 580(\.0+)? ms of it: the rest ran beside the calls\)", report), report


def test_one_time_costs_are_split_in_dump_and_report(tmp_path):
    """A start's steps and a routine's first GPU call (record.h, gofl_setup_record), as written by
    the library's writer: dump --setup (CSV and lines), dump --starts below its table, the report."""
    trace = starts_trace(tmp_path)
    rows = list(csv.DictReader(io.StringIO(cli("dump", "--setup", "--csv", trace))))
    start = [(r["phase"], float(r["seconds"])) for r in rows if r["what"] == "start"]
    assert start == [("loading the backend", 0.04), ("CUDA context", 0.23),
                     ("streams and events", 0.005), ("the rest of the start", 0.025)], rows
    first = {r["phase"]: float(r["seconds"]) for r in rows if r["what"] == "dgemm"}
    assert first == {"cuBLAS handle": 0.012, "pinned staging buffers": 0.003, "first call, in all": 0.09}, rows
    lines = cli("dump", "--setup", trace).splitlines()
    assert any(re.search(r"^pid \d+ dgemm: cuBLAS handle 12(\.0+)? ms, pinned staging buffers 3(\.0+)? ms, "
                         r"first call, in all 90(\.0+)? ms$", line) for line in lines), lines
    starts = cli("dump", "--starts", trace)
    assert "Where the start-up went" in starts and "start: loading the backend 40" in starts, starts
    report = cli("report", trace).replace("\n    ", " ")
    assert re.search(r"The start-up went to: CUDA context 230(\.0+)? ms, loading the backend "
                     r"40(\.0+)? ms, the rest of the start 25(\.0+)? ms, streams and events 5(\.0+)? ms", report), report
    assert re.search(r"The first GPU call of each of 1 operation took 90(\.0+)? ms in all, set-up included: dgemm "
                     r"90(\.0+)? ms \(pinned staging buffers 3(\.0+)? ms, cuBLAS handle 12(\.0+)? ms\)", report), report
    # A warm-up (cuda/warm.h) is its own record, not a first call.
    warm = {r["phase"]: float(r["seconds"]) for r in rows if r["what"] == "dpotrf"}
    assert warm == {"warmed beside the calls": 0.07, "warming thread's CPU time": 0.006, "loading cuSOLVER": 0.04,
                    "cuSOLVER handle": 0.008}, rows
    assert re.search(r"Warmed beside the calls: 1 operation \(70(\.0+)? ms of the CUDA libraries' first-use work, "
                     r"off the calls' path, 6(\.0+)? ms of CPU time at the lowest priority", report), report


def test_traces_without_one_time_costs_still_read(tmp_path):
    """A version 1 trace (before setup records) reads as before; dump --setup says there is nothing."""
    trace = starts_trace(tmp_path)
    for f in Path(trace).glob("*.gofltrace"):
        data = bytearray(f.read_bytes())
        data[12:14] = (1).to_bytes(2, "little")
        # A version 1 file holds no setup record: drop them (kind 5), as such a writer never made them.
        header, records = data[:512], data[512:]
        kept = b"".join(records[i:i + 232] for i in range(0, len(records), 232)
                        if int.from_bytes(records[i:i + 4], "little") != 5)
        f.write_bytes(bytes(header) + kept)
    assert "no one-time costs" in cli("dump", "--setup", trace)
    assert len(list(csv.DictReader(io.StringIO(cli("dump", "--starts", "--csv", trace))))) == 4
    assert "The start-up went to" not in cli("report", trace)
