"""Shared helpers for the integration tests: run real programs with and without the library and
read their traces through `gpu-offload dump --csv` (the reader built from src/trace/record.h)."""

import contextlib
import csv
import io
import os
import pwd
import shutil
import stat
import subprocess
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BUILD = Path(os.environ.get("GOFL_BUILD_DIR", ROOT / "build"))
LIB = BUILD / "lib" / "libgpuoffload.so"
CLI = BUILD / "bin" / "gpu-offload"
CLIENTS = BUILD / "tests" / "clients"

# Debian keeps each BLAS/LAPACK implementation in its own folder; LD_LIBRARY_PATH picks one.
MULTIARCH = Path("/usr/lib/x86_64-linux-gnu")
REFERENCE_LIBS = f"{MULTIARCH / 'blas'}:{MULTIARCH / 'lapack'}"
OPENBLAS_LIBS = str(MULTIARCH / "openblas-pthread")

# In CI every tool the tests use is installed by .ci/run: a missing one is a failure, not a skip.
REQUIRE_ALL = os.environ.get("GOFL_REQUIRE_ALL_TOOLS") == "1"


def require(tool_ok, what):
    if tool_ok:
        return
    if REQUIRE_ALL:
        pytest.fail(f"{what} is required (GOFL_REQUIRE_ALL_TOOLS=1)")
    pytest.skip(f"{what} is not installed")


def require_tool(name):
    require(shutil.which(name) is not None, name)


_EMPTY_CONFIG_HOME = tempfile.mkdtemp(prefix="gofl-test-config-")
# The run history (policy/history.h) stays out of the developer's cache, and off: a test that runs
# the same program twice must see the same decisions. tests/unit/test_history.py turns it on.
_CACHE_HOME = tempfile.mkdtemp(prefix="gofl-test-cache-")


def base_env(extra=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPU_OFFLOAD_")}
    env.pop("LD_PRELOAD", None)
    # Deterministic thread counts so that two runs compute bit-identical results.
    # A developer's own ~/.config/gpu-offload/config must not change what the tests see.
    env["XDG_CONFIG_HOME"] = _EMPTY_CONFIG_HOME
    env["XDG_CACHE_HOME"] = _CACHE_HOME
    env["GPU_OFFLOAD_HISTORY"] = "off"
    env.setdefault("OPENBLAS_NUM_THREADS", "2")
    env.setdefault("OMP_NUM_THREADS", "2")
    if extra:
        env.update(extra)
    return env


def run(cmd, *, preload=True, trace_dir=None, env=None, check=True, timeout=300, **kw):
    """Run `cmd` (a list). With preload, under LD_PRELOAD=libgpuoffload.so; with trace_dir, tracing there."""
    e = base_env(env)
    if preload:
        e["LD_PRELOAD"] = str(LIB)
    if trace_dir is not None:
        e["GPU_OFFLOAD_TRACE"] = str(trace_dir)
    p = subprocess.run([str(c) for c in cmd], env=e, capture_output=True, text=True, timeout=timeout, **kw)
    if check and p.returncode != 0:
        raise AssertionError(f"{cmd} exited {p.returncode}\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}")
    return p


def client(name):
    """A client program built by tests/clients/CMakeLists.txt (failing clearly when it is missing)."""
    path = CLIENTS / name
    assert LIB.exists(), f"{LIB} is not built"
    assert path.exists(), f"{path} is not built (tests/clients/CMakeLists.txt)"
    return path


def dump(trace_dir, *extra):
    """Call records of every trace file in trace_dir, as dicts (columns: see `gpu-offload help dump`)."""
    p = subprocess.run([str(CLI), "dump", "--csv", *extra, str(trace_dir)], capture_output=True, text=True)
    if p.returncode != 0:
        raise AssertionError(f"gpu-offload dump failed ({p.returncode}): {p.stderr}")
    return list(csv.DictReader(io.StringIO(p.stdout)))


def call_count(rows):
    """The calls the rows stand for: one each, or an aggregated line's `calls` (calls counted below
    the threshold after the first 64 of their call site and size class: src/preload/counted.h)."""
    return sum(int(r["calls"]) for r in rows)


def described(rows):
    """The rows of calls recorded one by one (not aggregated)."""
    return [r for r in rows if r["aggregated"] == "0"]


def top_level(rows, routine=None):
    """The application's own calls (not nested, not workspace queries), optionally of one op name."""
    out = [r for r in rows if r["nested"] == "0" and r["query"] == "0"]
    if routine is not None:
        out = [r for r in out if r["op"] == routine]
    return out


@pytest.fixture
def trace_dir(tmp_path):
    d = tmp_path / "trace"
    d.mkdir()
    return d


@contextlib.contextmanager
def setuid_copies(exe, prefix):
    """For secure-mode tests: (plain, suid, nobody, folder) with `plain` a copy of `exe` and `suid` a
    copy made setuid to 'nobody', in a folder every user can reach on a filesystem that honours setuid;
    removed afterwards. Skips where that cannot be set up (not root, no 'nobody', nosuid mounts)."""
    if os.geteuid() != 0:
        pytest.skip("making a setuid binary of another user needs root")
    try:
        nobody = pwd.getpwnam("nobody")
    except KeyError:
        pytest.skip("no user 'nobody'")
    base = None
    for parent in (Path(tempfile.gettempdir()), BUILD / "tests" / "clients"):
        if parent.is_dir() and not os.statvfs(parent).f_flag & os.ST_NOSUID:
            base = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
            break
    if base is None:
        pytest.skip("the temporary folder and the build folder are both mounted nosuid")
    try:
        os.chmod(base, 0o755)
        for p in [base, *base.parents]:  # every path component must be reachable by 'nobody'
            if not os.stat(p).st_mode & stat.S_IXOTH:
                pytest.skip(f"{p} is not reachable by other users")
        plain, suid = base / "plain", base / "setuid"
        shutil.copy(exe, plain)
        shutil.copy(exe, suid)
        os.chmod(plain, 0o755)
        os.chown(suid, nobody.pw_uid, nobody.pw_gid)
        os.chmod(suid, 0o4755)
        assert os.stat(suid).st_mode & stat.S_ISUID
        yield plain, suid, nobody, base
    finally:
        shutil.rmtree(base, ignore_errors=True)
