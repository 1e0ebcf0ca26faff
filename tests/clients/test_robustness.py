"""Robustness of interception and tracing with real C programs: many threads, fork(), a missing real
symbol, an unwritable trace folder, exclusive creation of trace files, and secure_getenv in a
privileged (setuid) program."""

import os
import pwd
import re
import shutil
import stat
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # tests/conftest.py's helpers, whatever pytest's rootdir is
from conftest import BUILD, CLIENTS, LIB, OPENBLAS_LIBS, REFERENCE_LIBS, base_env, client, dump, require, run, setuid_copies, top_level, call_count, described  # noqa: E402,E501

LIBS = {"reference": REFERENCE_LIBS, "openblas": OPENBLAS_LIBS}


def need_libs(which):
    require(all(Path(d).is_dir() for d in LIBS[which].split(":")), f"{which} BLAS/LAPACK ({LIBS[which]})")


def gofl_lines(stderr):
    return [line for line in stderr.splitlines() if line.startswith("gpu-offload")]


# ------------------------------------------------------------------------------------------------ threads
@pytest.mark.parametrize("lib", sorted(LIBS))
def test_eight_threads_every_call_recorded(lib, trace_dir):
    """8 threads x 50 dgemm at once: exactly 400 application-level records, none torn: each thread's
    records are exactly its calls, in its order, with consistent sizes, flops, times and operands."""
    need_libs(lib)
    exe = client("thread_client")
    env = {"LD_LIBRARY_PATH": LIBS[lib]}
    plain = run([exe], preload=False, env=env)
    traced = run([exe], env=env, trace_dir=trace_dir)
    assert traced.stdout == plain.stdout, "results differ under the library"
    tids = {int(m.group(2)): int(m.group(1)) for m in re.finditer(r"thread (\d+) tid (\d+)", traced.stderr)}
    assert len(tids) == 8, traced.stderr
    sizes = {}
    for m in re.finditer(r"thread (\d+) sizes (.*)", traced.stdout):
        sizes[int(m.group(1))] = [tuple(s.split(",")) for s in m.group(2).split()]
    assert len(sizes) == 8 and all(len(v) == 50 for v in sizes.values())

    rows = dump(trace_dir)
    assert len({r["file"] for r in rows}) == 1
    app = top_level(rows, "dgemm")
    assert len(app) == 8 * 50
    assert len([r for r in rows if r["depth"] == "0"]) == 8 * 50, "records of other calls appeared"
    by_tid = defaultdict(list)
    for r in app:
        by_tid[int(r["tid"])].append(r)
    assert set(by_tid) == set(tids), f"tids in the trace {sorted(by_tid)} != the threads' {sorted(tids)}"
    pid = {r["pid"] for r in rows}
    assert len(pid) == 1
    for tid, recs in by_tid.items():
        want = sizes[tids[tid]]
        got = [(r["m"], r["n"], r["k"], r["iface"]) for r in recs]
        assert got == want, f"thread {tids[tid]} (tid {tid}): records do not match its calls"
        last = 0
        for r in recs:
            m, n, k = int(r["m"]), int(r["n"]), int(r["k"])
            assert float(r["flops"]) == 2.0 * m * n * k, r
            assert r["symbol"] == ("dgemm_" if r["iface"] == "fortran" else "cblas_dgemm"), r
            assert (r["op"], r["precision"], r["query"], r["info"], r["device"]) == ("dgemm", "d", "0", "0", "cpu")
            t0 = int(r["t_start_ns"])
            assert t0 >= last and 0 < int(r["duration_ns"]) < 60 * 10**9, r
            last = t0 + int(r["duration_ns"])
            ops = r["operands"].split(";")
            assert len(ops) == 3 and all(int(o.split(":")[1]) > 0 for o in ops), r
            assert Path(r["site_module"]).name == "thread_client", r
    for r in rows:
        if r["depth"] != "0":
            assert r["nested"] == "1" and int(r["tid"]) in tids, r


# --------------------------------------------------------------------------------------------------- fork
@pytest.mark.parametrize("lib", sorted(LIBS))
@pytest.mark.parametrize("pre", [3, 300], ids=["buffered", "file-open"])
def test_fork_child_writes_its_own_trace(lib, pre, trace_dir):
    """The parent calls dgemm PRE times, forks, the child calls it 5 times, the parent 7 more. With
    PRE=3 the parent's records are still buffered at fork(); with PRE=300 its trace file is already open
    and partly written. Either way: two files, each process's calls in its own file, once."""
    need_libs(lib)
    exe = client("fork_client")
    env = {"LD_LIBRARY_PATH": LIBS[lib]}
    args = [exe, pre, 5, 7]
    plain = run(args, preload=False, env=env)
    traced = run(args, env=env, trace_dir=trace_dir)
    assert traced.stdout == plain.stdout
    parent = int(re.search(r"parent pid (\d+)", traced.stderr).group(1))
    child, child_ppid = map(int, re.search(r"child pid (\d+) ppid (\d+)", traced.stderr).groups())
    assert child_ppid == parent

    files = sorted(p.name for p in trace_dir.iterdir())
    assert len(files) == 2, files
    rows = dump(trace_dir)
    by_pid = defaultdict(list)
    for r in rows:
        by_pid[int(r["pid"])].append(r)
    assert set(by_pid) == {parent, child}
    assert {r["ppid"] for r in by_pid[child]} == {str(parent)}
    assert {r["ppid"] for r in by_pid[parent]} == {str(os.getpid())}
    assert len({r["file"] for r in by_pid[parent]}) == 1 and len({r["file"] for r in by_pid[child]}) == 1
    assert {r["file"] for r in by_pid[parent]} != {r["file"] for r in by_pid[child]}
    # m = 21 before the fork, 22 in the child, 23 after it: one call site and size class. The first 64
    # calls of it are recorded one by one, the parent's others counted; the child starts counting
    # afresh (had it kept the parent's counts, they would be in its file too).
    assert Counter(r["m"] for r in described(top_level(by_pid[parent], "dgemm"))) == \
        +Counter({"21": min(pre, 64), "23": max(0, min(7, 64 - pre))})
    assert Counter(r["m"] for r in top_level(by_pid[child], "dgemm")) == {"22": 5}
    assert call_count(by_pid[parent]) == pre + 7 and call_count(by_pid[child]) == 5, "unexpected extra calls"
    assert described(by_pid[child]) == by_pid[child]
    assert traced.stderr.count("gpu-offload") == 0, traced.stderr


def test_fork_child_summary_names_why_it_has_no_gpu(tmp_path):
    """Every dgemm decided (threshold 0) and a free GPU start-up: the parent's first call starts
    the GPU. Without a GPU that start fails, and a child forked after it keeps the failure: its
    summary says so (it did not avoid a start). With a GPU the child has lost the parent's context
    and its calls say 'forked child'. Either way both processes compute what they compute without
    the library."""
    need_libs("openblas")
    prof = tmp_path / "p"
    prof.write_text("gpu-offload profile 1\ngpu_startup_s 0\nh2d 0 1e30\nd2h 0 1e30\n"
                    "cpu dgemm 1e3:1e6 1e15:1e6\ngpu dgemm 1e3:1e15 1e15:1e15\n")
    env = {"LD_LIBRARY_PATH": LIBS["openblas"], "GPU_OFFLOAD_PROFILE": str(prof), "GPU_OFFLOAD_THRESHOLD": "0",
           "GPU_OFFLOAD_SUMMARY": "1"}
    args = [client("fork_client"), 2, 3, 2]
    plain = run(args, preload=False, env={"LD_LIBRARY_PATH": LIBS["openblas"]})
    p = run(args, env=env)
    if os.environ.get("GOFL_EXPECT_GPU") != "1":
        assert p.stdout == plain.stdout  # all on the CPU: bit for bit
    summaries = p.stderr.split("gpu-offload summary")[1:]
    assert len(summaries) == 2, p.stderr
    child = next(s for s in summaries if "GPU unavailable 3" in s or "forked child 3" in s)
    assert "avoided" not in child, child
    if "GPU unavailable 3" in child:
        assert "GPU start-up: none in this process: " in child and "calls stay on the CPU" in child, child


# --------------------------------------------------------------------------------------- missing symbol
@pytest.mark.parametrize("tracing", [False, True], ids=["plain", "traced"])
def test_missing_real_symbol(tracing, trace_dir):
    """No BLAS in the process: the call reaches the library's dgemm_, which has nothing to forward to.
    It must stop the way an unresolved symbol stops a program (exit 127, a message naming the symbol),
    never return as if it had computed something."""
    exe = client("nosym_client")
    plain = run([exe], preload=False, check=False)
    assert plain.returncode == 3 and "no dgemm_" in plain.stdout, "the client itself must not find dgemm_"
    p = run([exe], check=False, trace_dir=trace_dir if tracing else None)
    assert p.returncode == 127, f"exit {p.returncode}\n{p.stdout}\n{p.stderr}"
    assert "calling dgemm_" in p.stdout and "returned" not in p.stdout
    lines = gofl_lines(p.stderr)
    assert lines and "undefined symbol: dgemm_" in lines[0], p.stderr
    assert all("dgemm_" in line for line in lines), p.stderr


# ------------------------------------------------------------------------------- unwritable trace folder
def unwritable_dirs(tmp_path):
    """Trace folders that cannot be written even by root."""
    f = tmp_path / "file.txt"
    f.write_text("a regular file, not a folder\n")
    cases = {"under-a-file": f / "sub"}  # mkdir fails: ENOTDIR
    probe = Path("/sys/kernel")  # exists; sysfs refuses new files, to root too (EACCES)
    try:
        fd = os.open(probe / "gofl-probe.gofltrace", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        os.close(fd)
        os.unlink(probe / "gofl-probe.gofltrace")
    except OSError:
        cases["existing-read-only"] = probe
    return cases


@pytest.mark.parametrize("case", ["under-a-file", "existing-read-only"])
@pytest.mark.parametrize("program", ["blas_client", "thread_client"])
def test_unwritable_trace_folder(case, program, tmp_path):
    """The program runs correctly; the library says once, in one line, that it cannot trace, and where."""
    dirs = unwritable_dirs(tmp_path)
    if case not in dirs:
        pytest.skip(f"{case}: no such folder on this machine")
    d = dirs[case]
    exe = client(program)
    args = [exe, "blas", "d"] if program == "blas_client" else [exe]
    plain = run(args, preload=False)
    p = run(args, trace_dir=d)
    assert p.stdout == plain.stdout, "results differ when the trace cannot be written"
    lines = gofl_lines(p.stderr)
    assert len(lines) == 1, f"expected one message, got:\n{p.stderr}"
    assert str(d) in lines[0] and "trac" in lines[0], lines[0]
    others = [line for line in p.stderr.splitlines() if not line.startswith("gpu-offload") and "tid" not in line]
    assert not others, p.stderr


# ---------------------------------------------------------------------------------- exclusive creation
def shim():
    path = CLIENTS / "plant_shim.so"
    assert path.exists(), f"{path} is not built"
    return path


def shim_log(path):
    out = []
    for line in path.read_text().splitlines():
        attempt, flags, result, err, name = line.split(" ", 4)
        out.append((int(attempt), int(flags, 8), int(result), int(err), name))
    return out


def test_trace_file_never_follows_a_symlink_nor_overwrites(tmp_path, trace_dir):
    """The file name holds the pid and a random 32-bit nonce, so from outside one cannot plant things at
    the name the library will choose. plant_shim.so stands in for an attacker who guessed it: just before
    the library opens its trace file, it plants a symlink to a victim file at that exact path (first
    attempt), then a regular file (second attempt). The library must not follow the symlink, must not
    overwrite or append to either, and must still write its trace under another name."""
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    log = tmp_path / "plant.log"
    exe = client("blas_client")
    args = [exe, "blas", "d"]
    plain = run(args, preload=False)
    p = run(args, preload=False, trace_dir=trace_dir,
            env={"LD_PRELOAD": f"{shim()} {LIB}", "PLANT_VICTIM": str(victim), "PLANT_LOG": str(log)})
    assert p.stdout == plain.stdout
    assert p.stderr == "", p.stderr

    log_lines = shim_log(log)
    # Opens without O_CREAT are the library reopening the file it created (to grow it, to trim it at
    # exit: it keeps no descriptor); they must name that file and never follow a symlink.
    attempts = [a for a in log_lines if a[1] & os.O_CREAT]
    reopens = [a for a in log_lines if not a[1] & os.O_CREAT]
    assert len(attempts) >= 3, f"the library did not retry after finding its file name taken: {attempts}"
    for n, flags, result, err, name in attempts:
        assert flags & os.O_EXCL, f"attempt {n} opened {name} without O_CREAT|O_EXCL"
        assert flags & os.O_NOFOLLOW, f"attempt {n} opened {name} without O_NOFOLLOW"
    for n, flags, result, err, name in reopens:
        assert flags & os.O_NOFOLLOW and not flags & os.O_TRUNC, f"reopen {n} of {name}: flags {flags:o}"
        assert name == attempts[-1][4] and result >= 0, f"reopen {n} is not of the file it created: {log_lines}"
    (_, _, r0, e0, sym_path), (_, _, r1, e1, file_path) = attempts[:2]
    assert r0 < 0 and e0 == 17 and r1 < 0 and e1 == 17, f"planted paths were opened: {attempts}"  # EEXIST
    assert attempts[2][2] >= 0
    assert len({a[4] for a in attempts}) == len(attempts), "the same name was tried twice"

    assert victim.read_text() == "precious\n", "the symlink was followed"
    assert os.path.islink(sym_path) and os.readlink(sym_path) == str(victim)
    assert Path(file_path).read_text() == "PLANTED\n", "an existing file was overwritten or appended to"
    real = sorted(set(os.listdir(trace_dir)) - {Path(sym_path).name, Path(file_path).name})
    assert real == [Path(attempts[2][4]).name], real

    clean = tmp_path / "clean"
    clean.mkdir()
    shutil.copy(trace_dir / real[0], clean)
    rows = dump(clean)
    assert len([r for r in rows if r["depth"] == "0"]) == plain.stdout.count("@call "), "trace incomplete"


def test_trace_gives_up_when_every_name_is_taken(tmp_path, trace_dir):
    """If every name the library tries is already taken, it gives up after a bounded number of attempts,
    says so once, overwrites nothing, and the program runs normally."""
    log = tmp_path / "plant.log"
    exe = client("blas_client")
    args = [exe, "blas", "d"]
    plain = run(args, preload=False)
    p = run(args, preload=False, trace_dir=trace_dir,
            env={"LD_PRELOAD": f"{shim()} {LIB}", "PLANT_ALL": "1", "PLANT_LOG": str(log)})
    assert p.stdout == plain.stdout
    lines = gofl_lines(p.stderr)
    assert len(lines) == 1 and str(trace_dir) in lines[0], p.stderr
    attempts = shim_log(log)
    assert 2 <= len(attempts) <= 1000, len(attempts)
    assert all(r < 0 and e == 17 for _, _, r, e, _ in attempts), attempts
    files = list(trace_dir.iterdir())
    assert len(files) == len(attempts)
    assert all(f.read_text() == "PLANTED\n" for f in files)


# ------------------------------------------------------------------------------------------ secure_getenv
def as_user(uid, gid):
    def drop():
        os.setgroups([])
        os.setgid(gid)
        os.setuid(uid)
    return drop


def test_setuid_program_ignores_settings():
    """A program linked with libgpuoffload.so (no LD_PRELOAD: the loader drops that for setuid programs
    anyway) and made setuid reads its settings with secure_getenv: GPU_OFFLOAD_TRACE and
    GPU_OFFLOAD_SUMMARY are ignored when the kernel starts it in secure mode (AT_SECURE). The controls:
    the same binary without the setuid bit writes a trace, as root and as the very user the setuid
    binary runs as, into the same world-writable folder."""
    with setuid_copies(client("secure_client"), "gofl-secure-") as (plain_exe, suid_exe, nobody, base):
        def traced(cmd, name, **kw):
            d = base / name
            d.mkdir()
            os.chmod(d, 0o777)  # writable by 'nobody': a missing trace can only be the library's choice
            env = base_env({"GPU_OFFLOAD_TRACE": str(d), "GPU_OFFLOAD_SUMMARY": "1"})
            p = subprocess.run([str(cmd)], env=env, capture_output=True, text=True, timeout=120, **kw)
            assert p.returncode == 0, p
            return p, d

        root_run, root_dir = traced(plain_exe, "trace-root")
        nobody_run, nobody_dir = traced(plain_exe, "trace-nobody", preexec_fn=as_user(nobody.pw_uid, nobody.pw_gid))
        suid_run, suid_dir = traced(suid_exe, "trace-setuid")

        assert "at_secure 0" in root_run.stderr and "at_secure 0" in nobody_run.stderr
        assert "at_secure 1" in suid_run.stderr, f"the setuid run was not in secure mode: {suid_run.stderr}"
        assert root_run.stdout == nobody_run.stdout == suid_run.stdout

        for d in (root_dir, nobody_dir):
            assert len(top_level(dump(d), "dgemm")) == 3, f"control run wrote no trace in {d}"
        assert "gpu-offload summary" in root_run.stderr and "gpu-offload summary" in nobody_run.stderr
        assert list(suid_dir.iterdir()) == [], "a setuid program obeyed GPU_OFFLOAD_TRACE"
        assert "gpu-offload" not in suid_run.stderr, f"a setuid program obeyed GPU_OFFLOAD_SUMMARY:\n{suid_run.stderr}"


@pytest.mark.parametrize("libs", [REFERENCE_LIBS, OPENBLAS_LIBS], ids=["reference", "openblas"])
def test_arguments_lapack_does_not_read_may_be_null(libs, trace_dir):
    """dsyevr/zheevr with range A or V never read IL/IU: a caller may pass NULL, under every mode."""
    client = CLIENTS / "null_args_client"
    assert client.exists(), f"{client} is not built"
    env = {"LD_LIBRARY_PATH": libs}
    plain = run([client], preload=False, env=env)
    for extra in ({}, {"GPU_OFFLOAD_SUMMARY": "1"}, {"GPU_OFFLOAD_DEVICE": "gpu"}):
        p = run([client], env={**env, **extra}, trace_dir=trace_dir)
        assert p.stdout == plain.stdout, extra
    ops = {r["op"] for r in top_level(dump(trace_dir))}
    assert {"dsyevr", "zheevr"} <= ops


# ------------------------------------------------------------------------------------------ symbol scopes
@pytest.mark.parametrize("program,expected", [
    ("scope_client", "module1 -> 1, module2 -> 2"),
    ("scope_client_global", "module1 -> 1, module2 -> 1"),
])
def test_each_caller_reaches_the_library_the_dynamic_linker_would_bind(program, expected, trace_dir):
    """Two plugins loaded with RTLD_LOCAL, each linked against its own BLAS with the same plain dgemm_
    (and FFTW functions; scope_client.c), called in turn. The dynamic linker binds a call to the global scope first, else
    to the caller's own libraries: without a global dgemm_ each plugin reaches its own; with one (the
    program linked against library 1) every caller reaches that. Under the library the outputs must be
    the same, on the fast path (not tracing) and on the slow one (tracing)."""
    exe = client(program)
    plain = run([exe, CLIENTS], preload=False)
    assert plain.stdout.splitlines()[:3] == [expected] * 3, plain.stdout
    # FFTW plans likewise: each made, executed and destroyed by the library the caller is bound to.
    assert plain.stdout.splitlines()[3:6] == ["fft " + expected] * 3, plain.stdout
    fast = run([exe, CLIENTS])
    traced = run([exe, CLIENTS], trace_dir=trace_dir)
    assert fast.stdout == plain.stdout
    assert traced.stdout == plain.stdout
    sites = {Path(r["site_module"]).name for r in top_level(dump(trace_dir))}
    assert {"libgofl_scope_module1.so", "libgofl_scope_module2.so"} <= sites, sites


def test_calls_from_outside_every_module_reach_the_private_library(trace_dir):
    """Code generated at run time (jit_client.c: two call sites in an anonymous executable mapping)
    calls dpotrf_, which only a library loaded with RTLD_LOCAL defines: the dynamic linker's answer is
    that library. Under the library the calls reach it too, on the fast path and the traced one, and
    the trace names no module for their sites."""
    exe = client("jit_client")
    plain = run([exe, CLIENTS], preload=False, check=False)
    if plain.returncode == 77:
        pytest.skip("jit_client generates x86-64 code only")
    assert plain.returncode == 0, plain.stderr
    assert plain.stdout.splitlines() == ["site 1 -> 1 info 0", "site 2 -> 1 info 0"] * 3, plain.stdout
    assert run([exe, CLIENTS]).stdout == plain.stdout
    assert run([exe, CLIENTS], trace_dir=trace_dir).stdout == plain.stdout
    calls = [r for r in top_level(dump(trace_dir)) if r["op"] == "dpotrf"]
    assert len(calls) == 6 and len({r["site"] for r in calls}) == 2, calls
    assert all(r["site_module"] == "" for r in calls), calls
