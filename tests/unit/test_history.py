"""The run history end to end (policy/history.h, preload/run_history.cpp): the library records each
--device auto run of a program at exit, in a private file of the cache folder; `off` (variable,
config key, `run --history`) leaves no file; and earlier runs that all paid make the next run start
the GPU at its first call predicted to gain. Without a GPU the start then fails at once, which the
trace and the summary show as well as a success would."""

import csv
import io
import os
import stat
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from conftest import CLI, base_env, run  # noqa: E402

# Five multiplications the built-in profile predicts faster on a GPU, too few to start one by today's rule.
CODE = "import numpy as np\na = np.random.default_rng(0).standard_normal((400, 400))\nfor _ in range(5): b = a @ a\n"


def key_of(code):
    """program_key(program_identity(...)) for `python -c CODE`: FNV-1a 64 of the executable and the code."""
    exe = os.path.realpath(sys.executable)
    h = 1469598103934665603
    for ch in f"{exe}\n-c {code}".encode():
        h = ((h ^ ch) * 1099511628211) % (1 << 64)
    return f"{h:016x}"


def history_run(cache, trace=None, **env):
    e = {"XDG_CACHE_HOME": str(cache), "GPU_OFFLOAD_HISTORY": "on", "GPU_OFFLOAD_SUMMARY": "1", **env}
    return run([sys.executable, "-c", CODE], env=e, trace_dir=trace)


def reasons(trace):
    p = subprocess.run([str(CLI), "dump", "--csv", str(trace)], env=base_env(), capture_output=True, text=True, check=True)
    # The calls predicted to gain (the first one is not: its input's copy is not yet spread over reuses).
    return [r["reason"] for r in csv.DictReader(io.StringIO(p.stdout))
            if r["op"] == "dgemm" and r["depth"] == "0" and r["reason"] != "predicted slower"]


def test_each_auto_run_is_recorded_privately(tmp_path):
    cache = tmp_path / "cache"
    history_run(cache)
    history_run(cache)
    folder, f = cache / "gpu-offload", cache / "gpu-offload" / "history"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700 and stat.S_IMODE(f.stat().st_mode) == 0o600
    lines = f.read_text().splitlines()
    assert lines[0] == "gpu-offload history 1"
    runs = [line.split() for line in lines[1:]]
    assert len(runs) == 2 and all(r[0] == key_of(CODE) for r in runs), lines
    started = os.path.exists("/proc/driver/nvidia/version")
    assert all(r[2] == ("1" if started else "0") for r in runs) or started, lines  # here: no GPU started


def test_off_leaves_no_file(tmp_path):
    for env in ({"GPU_OFFLOAD_HISTORY": "off"},):
        history_run(tmp_path / "cache", **env)
        assert not (tmp_path / "cache" / "gpu-offload").exists()
    # The config key, and `gpu-offload run --history off` over a variable that says on.
    config = tmp_path / "config"
    (config / "gpu-offload").mkdir(parents=True)
    (config / "gpu-offload" / "config").write_text("history = off\n")
    e = base_env({"XDG_CACHE_HOME": str(tmp_path / "c2"), "XDG_CONFIG_HOME": str(config)})
    del e["GPU_OFFLOAD_HISTORY"]
    subprocess.run([str(CLI), "run", "--", sys.executable, "-c", CODE], env=e, check=True, capture_output=True)
    assert not (tmp_path / "c2" / "gpu-offload").exists()
    e = base_env({"XDG_CACHE_HOME": str(tmp_path / "c3"), "GPU_OFFLOAD_HISTORY": "on"})
    subprocess.run([str(CLI), "run", "--history", "off", "--", sys.executable, "-c", CODE], env=e, check=True,
                   capture_output=True)
    assert not (tmp_path / "c3" / "gpu-offload").exists()
    p = subprocess.run([str(CLI), "run", "--history", "maybe", "--", "true"], env=e, capture_output=True, text=True)
    assert p.returncode == 2 and "--history 'maybe' is not valid; use on or off" in p.stderr


def write_history(cache, gains):
    folder = cache / "gpu-offload"
    folder.mkdir(parents=True, mode=0o700)
    folder.chmod(0o700)
    f = folder / "history"
    f.write_text("gpu-offload history 1\n" + "".join(
        f"{key_of(CODE)} {g:.6f} {1 if g > 0 else 0} 1700000000\n" for g in gains))
    f.chmod(0o600)


def test_the_decision_changes_only_after_runs_that_all_paid(tmp_path):
    # No history: today's rule, the first calls wait for missed savings.
    p = history_run(tmp_path / "none", trace=tmp_path / "t0")
    assert reasons(tmp_path / "t0")[0] == "GPU not started yet", p.stderr
    assert "started at once" not in p.stderr
    # The latest three runs gained 12 s: the first call predicted to gain starts the GPU.
    write_history(tmp_path / "paid", [2.0, 4.0, 6.0])
    p = history_run(tmp_path / "paid", trace=tmp_path / "t1")
    first = reasons(tmp_path / "t1")[0]
    assert first in ("GPU unavailable", "offloaded"), first  # the start was tried at call 1
    assert "GPU not started yet" not in reasons(tmp_path / "t1")
    assert "started at once: the last 3 runs of this program gained 12 s" in p.stderr, p.stderr
    # Earlier runs paid, the latest did not: today's rule again.
    write_history(tmp_path / "lost", [5.0, 5.0, -0.3])
    history_run(tmp_path / "lost", trace=tmp_path / "t2")
    assert reasons(tmp_path / "t2")[0] == "GPU not started yet"
    # With the history off, a paying history is not read.
    write_history(tmp_path / "off", [2.0, 4.0, 6.0])
    history_run(tmp_path / "off", trace=tmp_path / "t3", GPU_OFFLOAD_HISTORY="off")
    assert reasons(tmp_path / "t3")[0] == "GPU not started yet"
