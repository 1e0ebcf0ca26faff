"""The trace never touches the program's files and survives the program's end, however it comes,
with tests/clients/trace_safety_client.c on reference BLAS:

- a program that closes every descriptor (close_range, closefrom) or dup2s over them, then opens a
  file of its own, finds no trace record in it, and its trace is complete;
- SIGINT, SIGKILL and exec leave every call recorded before them in the trace (the file is mapped: no
  buffer to lose, no signal handler), and the readers take the unused zero tail as the end; calls
  counted below the threshold (after the first 64 of a call site and size class) are written at exit
  only, so those tests describe every call (threshold 0) and check what the default keeps apart;
- a full disk stops the trace with one message and a readable file, or removes the file when not
  even its first chunk fits (a tmpfs mounted for the test: root only)."""

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from conftest import CLI, LIB, base_env, call_count, client, dump, run, top_level  # noqa: E402

HEADER_SIZE, RECORD_SIZE = 512, 232  # src/trace/record.h
TIMEOUT = 60
EVERY_CALL = {"GPU_OFFLOAD_THRESHOLD": "0"}  # every call recorded one by one: none counted


def gofl_lines(stderr):
    return [line for line in stderr.splitlines() if line.startswith("gpu-offload")]


def dgemm_calls(trace_dir):
    p = subprocess.run([str(CLI), "dump", "--csv", str(trace_dir)], capture_output=True, text=True, timeout=TIMEOUT)
    assert p.returncode == 0 and p.stderr == "", p.stderr  # a zero tail is read as the end, silently
    return call_count(top_level(dump(trace_dir), "dgemm"))


def trace_files(trace_dir):
    return sorted(Path(trace_dir).glob("*.gofltrace"))


@pytest.mark.parametrize("mode", ["close_range", "closefrom", "dup2"])
def test_closing_descriptors_never_sends_records_into_the_programs_file(mode, tmp_path, trace_dir):
    """Before: the library kept its descriptor and wrote 118,784 bytes of records into a 6-byte file."""
    data = tmp_path / "data.txt"
    p = run([client("trace_safety_client"), mode, 300, 1000, data], trace_dir=trace_dir, timeout=TIMEOUT)
    assert data.read_bytes() == b"hello\n"
    assert p.stdout == "data ok\n"
    assert gofl_lines(p.stderr) == [], p.stderr
    assert dgemm_calls(trace_dir) == 1300


# threshold 0: all 610 calls recorded; the default: the first 64 (one call site and size class), the
# other 546 counted, which a process ended by a signal or replaced by exec never writes.
KEPT = [(EVERY_CALL, 610), ({}, 64)]


@pytest.mark.parametrize("env,kept", KEPT, ids=["every-call", "counted"])
@pytest.mark.parametrize("mode,sig", [("sigint", signal.SIGINT), ("sigkill", signal.SIGKILL)])
def test_a_signal_leaves_every_call_made_before_it(mode, sig, env, kept, trace_dir):
    p = run([client("trace_safety_client"), mode, 10, 600], trace_dir=trace_dir, check=False, timeout=TIMEOUT, env=env)
    assert p.returncode == -sig, (p.returncode, p.stderr)
    (f,) = trace_files(trace_dir)
    assert (f.stat().st_size - HEADER_SIZE) % RECORD_SIZE == 0  # whole slots, the unused ones zero
    assert dgemm_calls(trace_dir) == kept


@pytest.mark.parametrize("env,kept", KEPT, ids=["every-call", "counted"])
def test_exec_keeps_the_trace_of_what_ran_before(env, kept, trace_dir):
    run([client("trace_safety_client"), "exec", 10, 600], trace_dir=trace_dir, timeout=TIMEOUT, env=env)
    assert len(trace_files(trace_dir)) == 1  # /bin/true made no call: no file of its own
    assert dgemm_calls(trace_dir) == kept


def test_ctrl_c_from_outside_mid_run(trace_dir):
    env = base_env({"LD_PRELOAD": str(LIB), "GPU_OFFLOAD_TRACE": str(trace_dir), **EVERY_CALL})
    proc = subprocess.Popen([str(client("trace_safety_client")), "loop", "0", "0"], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        last = 0
        for line in proc.stdout:
            last = int(line.split()[1])
            if last >= 700:
                proc.send_signal(signal.SIGINT)
                break
        proc.wait(timeout=TIMEOUT)
        # Read through proc.stdout, not communicate(): the lines the loop above had read ahead are in
        # proc.stdout's buffer, and communicate() reads the pipe's descriptor directly, missing them
        # (CI once counted 769 calls in the trace against a last line of 700).
        rest, err = proc.stdout.read(), proc.stderr.read()
    finally:
        proc.kill()
    # Each line is one write(); the signal may still cut the last one short: only whole lines count.
    last = max([last] + [int(n) for n in re.findall(r"^calls (\d+)\n", rest, re.M)])
    assert proc.returncode == -signal.SIGINT, err
    # Every call the program saw return is in the trace; at most the one it was in when the signal came is added.
    assert last <= dgemm_calls(trace_dir) <= last + 1


# ------------------------------------------------------------------------------------------- full disk
@pytest.fixture
def small_tmpfs(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs to fill needs root (CI runs as root)")
    mnt = tmp_path / "small"
    mnt.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mnt)], check=True, timeout=TIMEOUT)
    try:
        yield mnt
    finally:
        subprocess.run(["umount", str(mnt)], check=True, timeout=TIMEOUT)


def test_a_full_disk_stops_the_trace_and_keeps_what_fits(small_tmpfs):
    exe = client("trace_safety_client")
    plain = run([exe, "plain", 10, 5000], preload=False, timeout=TIMEOUT)
    p = run([exe, "plain", 10, 5000], trace_dir=small_tmpfs, timeout=TIMEOUT, env=EVERY_CALL)
    assert p.stdout == plain.stdout
    (line,) = gofl_lines(p.stderr)
    assert "cannot extend the trace file" in line and "No space left on device" in line, line
    assert "tracing is off for this process (the file keeps the first" in line
    kept = int(line.split("keeps the first ")[1].split()[0])
    (f,) = trace_files(small_tmpfs)
    assert f.stat().st_size == HEADER_SIZE + kept * RECORD_SIZE  # cut to its records
    assert 256 <= dgemm_calls(small_tmpfs) < kept <= 5010


def test_a_full_disk_at_the_start_removes_the_empty_file(small_tmpfs):
    free = os.statvfs(small_tmpfs).f_bavail * os.statvfs(small_tmpfs).f_frsize
    with open(small_tmpfs / "filler", "wb") as f:
        f.write(b"\0" * (free - 16384))  # room for the file, not for its first chunk of records
    exe = client("trace_safety_client")
    p = run([exe, "plain", 10, 10], trace_dir=small_tmpfs, timeout=TIMEOUT, env=EVERY_CALL)
    (line,) = gofl_lines(p.stderr)
    assert "No space left on device; it is removed and tracing is off" in line, line
    assert trace_files(small_tmpfs) == []
