"""The readers never trust what they are given: a trace received from someone else, a FIFO
or a device where a file is expected, a folder of thousands of traces, an empty or cut-short file
among good ones, records with impossible values, a config line with a NUL byte. Every command runs
under a timeout: a hang is a failure, not a stuck CI job.

The traces are tests/unit/make_trace.cpp's synthetic ones, written by the library's own writer."""

import os
import resource
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from conftest import BUILD, CLI, CLIENTS, base_env, dump, require, run, top_level  # noqa: E402

MAKE_TRACE = BUILD / "bin" / "make_trace"
HEADER_SIZE, RECORD_SIZE = 512, 232  # src/trace/record.h
PROFILE_FIELD = (376, 128)           # gofl_file_header.profile: offset, size
CALL_DURATION, CALL_FLOPS = 8 + 24, 8 + 56  # offsets inside a record (kind, reserved, then the call)
TIMEOUT = 20


def cli(*args, env=None, limit_files=None):
    def preexec():
        if limit_files:
            resource.setrlimit(resource.RLIMIT_NOFILE, (limit_files, limit_files))
    return subprocess.run([str(CLI), *map(str, args)], env=base_env(env), capture_output=True, text=True,
                          timeout=TIMEOUT, preexec_fn=preexec)


@pytest.fixture(scope="module")
def mixed(tmp_path_factory):
    """One synthetic trace file (make_trace's `mixed` scenario): calls on both devices, predictions."""
    out = tmp_path_factory.mktemp("mixed") / "trace"
    p = subprocess.run([str(MAKE_TRACE), str(out), "mixed"], env=base_env(), capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 0, p.stderr
    (f,) = out.glob("*.gofltrace")
    return f


def with_profile_field(src, dst, name):
    data = bytearray(src.read_bytes())
    off, size = PROFILE_FIELD
    raw = str(name).encode()
    assert len(raw) < size, name
    data[off:off + size] = raw + b"\0" * (size - len(raw))
    dst.write_bytes(bytes(data))
    return dst


def valid_profile(path):
    path.write_text("gpu-offload profile 1\nsource test\ngpu_startup_s 0.1\nh2d 0 1e10\nd2h 0 1e10\n"
                    "cpu dgemm 1e3:1e10 1e15:1e10\ngpu dgemm 1e3:1e12 1e15:1e12\n")
    return path


# ---------------------------------------------------------------- 2: a trace names files; report opens none
@pytest.mark.parametrize("named", ["/dev/zero", "/dev/urandom", "FIFO", "/etc/passwd", "/proc/self/environ"])
@pytest.mark.parametrize("html", [False, True])
def test_report_opens_no_file_a_trace_names(mixed, tmp_path, named, html):
    if named == "FIFO":
        named = tmp_path / "fifo"
        os.mkfifo(named)
    t = with_profile_field(mixed, tmp_path / "crafted.gofltrace", named)
    args = ["report", t] + (["--html", tmp_path / "r.html"] if html else [])
    p = cli(*args)  # before the fix: bad_alloc on /dev/zero, a hang on the FIFO
    assert p.returncode == 0, p.stderr
    if html:  # the page shows what the trace says, and the crossovers it recorded
        out = (tmp_path / "r.html").read_text()
        assert str(named) in out and "as recorded in the trace" in out and "from the profile" not in out
    else:
        assert f"the traces name the profile {named}, which is not this machine's" in p.stdout, p.stdout


def test_report_uses_a_profile_only_when_the_user_chooses_it(mixed, tmp_path):
    prof = valid_profile(tmp_path / "their.profile")
    t = with_profile_field(mixed, tmp_path / "named.gofltrace", prof)
    label = f"crossover (profile {prof}, at the traced calls"
    assert label not in cli("report", t).stdout  # the trace's word alone is not enough
    assert label in cli("report", "--profile", prof, t).stdout
    # The profile this machine's own settings select, when the trace names that very file.
    assert label in cli("report", t, env={"GPU_OFFLOAD_PROFILE": str(prof)}).stdout
    bad = cli("report", "--profile", "/dev/zero", t)
    assert bad.returncode == 1 and "cannot read the profile /dev/zero: not a regular file" in bad.stderr


# ---------------------------------------------------------------- 3: FIFOs and special files never block
@pytest.mark.parametrize("command", ["report", "dump", "estimate"])
def test_fifo_in_a_trace_folder(mixed, tmp_path, command):
    shutil.copy(mixed, tmp_path / "good.gofltrace")
    os.mkfifo(tmp_path / "pipe.gofltrace")
    p = cli(command, tmp_path)
    assert p.returncode == 0, p.stderr
    assert "pipe.gofltrace: cannot open it: not a regular file (a FIFO); skipped" in p.stderr
    alone = cli(command, tmp_path / "pipe.gofltrace")
    assert alone.returncode == 1 and "not a regular file (a FIFO)" in alone.stderr


@pytest.mark.parametrize("special,why", [("/dev/zero", "not a regular file (a character device)"),
                                         ("FIFO", "not a regular file (a FIFO)"), ("DIR", "is a directory")])
def test_profile_options_refuse_special_files(mixed, tmp_path, special, why):
    if special == "FIFO":
        special = tmp_path / "fifo"
        os.mkfifo(special)
    elif special == "DIR":
        special = tmp_path
    for args in (["estimate", "--profile", special, mixed], ["run", "--profile", special, "--", "true"]):
        p = cli(*args)
        assert p.returncode == 1 and f"cannot read the profile {special}: {why}" in p.stderr, (args, p.stderr)


def test_library_settings_naming_a_fifo_do_not_hang(tmp_path):
    """GPU_OFFLOAD_CONFIG at a FIFO hung every preloaded process at load (ls included);
    GPU_OFFLOAD_PROFILE at a FIFO hung BLAS programs."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    p = run(["ls", tmp_path], env={"GPU_OFFLOAD_CONFIG": str(fifo)}, timeout=TIMEOUT)
    assert f"GPU_OFFLOAD_CONFIG={fifo}: cannot read it: not a regular file (a FIFO)" in p.stderr
    blas = CLIENTS / "blas_client"
    require(blas.exists(), f"{blas}")
    trace = tmp_path / "t"
    p = run([blas], trace_dir=trace, env={"GPU_OFFLOAD_PROFILE": str(fifo), "GPU_OFFLOAD_DEVICE": "auto"},
            timeout=TIMEOUT)
    assert f"cannot read the profile {fifo}: not a regular file (a FIFO); using the built-in profile" in p.stderr
    assert top_level(dump(trace))


# ---------------------------------------------------------------- 4: thousands of files, 1,024 descriptors
def test_a_folder_of_3000_traces_under_1024_descriptors(mixed, tmp_path):
    folder = tmp_path / "ranks"
    folder.mkdir()
    data = mixed.read_bytes()
    for i in range(3000):
        (folder / f"rank.{i:04d}.gofltrace").write_bytes(data)
    calls = len(dump(mixed))
    for command in ("report", "dump", "estimate"):
        p = cli(command, folder, limit_files=1024)
        assert p.returncode == 0, (command, p.stderr[-2000:])
        assert p.stderr == "", p.stderr[-2000:]
    p = cli("dump", "--csv", folder, limit_files=1024)
    assert len(p.stdout.splitlines()) == 1 + 3000 * calls
    assert "files       3000" in cli("report", folder, limit_files=1024).stdout


# ---------------------------------------------------------------- 5: one bad file does not spoil the folder
@pytest.mark.parametrize("command", ["report", "dump", "estimate"])
def test_empty_and_cut_short_files_are_skipped_and_named(mixed, tmp_path, command):
    shutil.copy(mixed, tmp_path / "good.gofltrace")
    (tmp_path / "empty.gofltrace").write_bytes(b"")
    (tmp_path / "cut.gofltrace").write_bytes(mixed.read_bytes()[:300])
    p = cli(command, tmp_path)
    assert p.returncode == 0, p.stderr
    assert f"{tmp_path}/empty.gofltrace: truncated header (0 bytes" in p.stderr and "; skipped" in p.stderr
    assert f"{tmp_path}/cut.gofltrace: truncated header (300 bytes" in p.stderr
    assert "good.gofltrace" not in p.stderr
    if command == "report":
        assert "files       1" in p.stdout
    # Only bad files: an error that says so.
    (tmp_path / "good.gofltrace").unlink()
    p = cli(command, tmp_path)
    assert p.returncode == 1 and "none of the 2 trace files can be read" in p.stderr, p.stderr


# ---------------------------------------------------------------- 7: impossible values, a NUL in the config
@pytest.mark.parametrize("field,value,words", [
    (CALL_DURATION, struct.pack("<Q", 2**64 - 1), ["took 18446744073709551615 ns", "damaged"]),
    (CALL_FLOPS, struct.pack("<d", float("inf")), ["work inf flops", "damaged"]),
    (CALL_FLOPS, struct.pack("<d", float("nan")), ["work nan flops", "damaged"]),
    (CALL_FLOPS, struct.pack("<d", -1.0), ["work -1 flops", "damaged"]),
])
def test_records_with_impossible_values_are_flagged(mixed, tmp_path, field, value, words):
    data = bytearray(mixed.read_bytes())
    off = next(o for o in range(HEADER_SIZE, len(data), RECORD_SIZE) if struct.unpack_from("<I", data, o)[0] == 1)
    data[off + field:off + field + len(value)] = value
    bad = tmp_path / "bad.gofltrace"
    bad.write_bytes(bytes(data))
    for command in ("report", "dump", "estimate"):
        p = cli(command, bad)
        assert p.returncode == 1, (command, p.stdout)
        assert "record" in p.stderr and all(w in p.stderr for w in words), p.stderr
        assert "%" not in p.stdout


def test_a_nul_byte_in_the_config_file_is_shown_and_later_lines_still_checked(tmp_path):
    conf = tmp_path / "gofl.conf"
    conf.write_bytes(b"level = 3\0x\nfoo = 1\ndevice = fast\n")
    p = cli("config", env={"GPU_OFFLOAD_CONFIG": str(conf)})
    assert f"{conf}:1: 'level = 3\\x00x' holds a NUL byte; line ignored" in p.stderr, p.stderr
    assert f"{conf}:2: unknown key 'foo'" in p.stderr
    assert f"{conf}:3: device='fast' is not valid" in p.stderr
    lib = run(["true"], env={"GPU_OFFLOAD_CONFIG": str(conf)}, timeout=TIMEOUT)
    assert lib.stderr.count("gpu-offload: ") == 3, lib.stderr
