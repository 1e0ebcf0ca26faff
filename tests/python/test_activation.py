"""The gpu_offload Python package with the NumPy and SciPy wheels: `import gpu_offload` before numpy and
`python -m gpu_offload script.py` intercept the same calls as LD_PRELOAD, with bit-identical results;
importing it too late warns and leaves the library out; settings from activate() and the options;
option errors; child processes.

The package comes from the build tree (GOFL_BUILD_DIR/python, written by python/CMakeLists.txt), whose
_location.py points at the library built next to it. Runs use the interpreter that runs pytest."""

import importlib.util
import os
import struct
import sys
from collections import Counter
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # tests/conftest.py's helpers, whatever pytest's rootdir is
from conftest import BUILD, LIB, dump, require, run, top_level  # noqa: E402

CLIENT = HERE / "linalg_client.py"
PACKAGE_DIR = BUILD / "python"
ENV = {"GPU_OFFLOAD_DEVICE": "cpu", "PYTHONPATH": str(PACKAGE_DIR), "GPU_OFFLOAD_CONFIG": os.devnull}

# A small NumPy + SciPy program: one call of each kind, results on stdout.
SMALL = """
import numpy as np, scipy.linalg as sla
a = np.random.default_rng(3).standard_normal((150, 150))
print(float((a @ a.T).sum()), float(np.linalg.det(a)), float(sla.svd(a)[1][0]))
"""


@pytest.fixture(autouse=True)
def _needs_numpy_and_package():
    require(importlib.util.find_spec("numpy") and importlib.util.find_spec("scipy"),
            f"numpy and scipy for {sys.executable}")
    assert (PACKAGE_DIR / "gpu_offload" / "__init__.py").exists(), f"{PACKAGE_DIR} holds no gpu_offload package"
    assert LIB.exists(), f"{LIB} is not built"


def py(args, env=None, **kw):
    e = dict(ENV)
    e.update(env or {})
    return run([sys.executable, *args], preload=False, env=e, **kw)


def header(trace_dir):
    """(pid, level, device_mode) of each trace file (src/trace/record.h: gofl_file_header)."""
    out = []
    for f in sorted(Path(trace_dir).iterdir()):
        data = f.read_bytes()
        pid, = struct.unpack_from("<i", data, 24)
        level, device = struct.unpack_from("<ii", data, 48)
        out.append((pid, level, device))
    return out


def calls(rows):
    """What identifies each call apart from addresses and times: the multiset the runs must share."""
    keys = ("op", "symbol", "iface", "scheme", "ilp64", "depth", "nested", "query", "row_major", "m", "n", "k",
            "flops", "info", "device")
    return Counter(tuple(r[k] for k in keys) for r in rows)


def same_results(a, b):
    import numpy as np

    with np.load(a) as x, np.load(b) as y:
        assert sorted(x.files) == sorted(y.files) and len(x.files) >= 30
        differ = [n for n in x.files if x[n].dtype != y[n].dtype or x[n].tobytes() != y[n].tobytes()]
        assert not differ, f"results changed: {differ}"


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The client without the library and under LD_PRELOAD: (plain .npz, the preload run's calls)."""
    d = tmp_path_factory.mktemp("reference")
    plain, traced, trace = d / "plain.npz", d / "preload.npz", d / "trace"
    trace.mkdir()
    run([sys.executable, CLIENT, plain], preload=False)
    run([sys.executable, CLIENT, traced], trace_dir=trace, env={"GPU_OFFLOAD_DEVICE": "cpu"})
    rows = dump(trace)
    assert len(top_level(rows)) >= 25
    return plain, calls(rows)


def test_import_before_numpy(reference, tmp_path):
    plain, want = reference
    out, trace = tmp_path / "out.npz", tmp_path / "trace"
    script = tmp_path / "main.py"
    script.write_text("import gpu_offload\n"
                      f"import sys; sys.path.insert(0, {str(HERE)!r})\n"
                      "import linalg_client\n"
                      "assert gpu_offload.is_active()\n"
                      "linalg_client.main(sys.argv[1])\n")
    p = py([script, out], env={"GPU_OFFLOAD_TRACE": str(trace)})
    assert "gpu-offload" not in p.stderr, p.stderr  # silent: no warning, no message
    same_results(plain, out)
    rows = dump(trace)
    assert calls(rows) == want, "the calls seen differ from those seen under LD_PRELOAD"
    assert len({r["pid"] for r in rows}) == 1
    assert {r["scheme"] for r in top_level(rows)} == {"numpy-ilp64", "scipy"}


def test_python_m_script(reference, tmp_path):
    plain, want = reference
    out, trace = tmp_path / "out.npz", tmp_path / "t" / "nested"  # --trace creates the folder
    p = py(["-m", "gpu_offload", "--trace", trace, "--device=cpu", CLIENT, out])
    assert "gpu-offload" not in p.stderr, p.stderr
    same_results(plain, out)
    assert calls(dump(trace)) == want
    assert header(trace)[0][2] == 0  # device mode cpu


def test_python_m_summary_level_and_module(tmp_path):
    (tmp_path / "work_mod.py").write_text("import sys\n" + SMALL + "print('argv', sys.argv[1:], __name__)\n")
    trace = tmp_path / "trace"
    p = py(["-m", "gpu_offload", "--summary", "--level", "3", "--trace", trace, "-m", "work_mod", "x", "--y"],
           cwd=tmp_path)
    assert "argv ['x', '--y'] __main__" in p.stdout
    assert "gpu-offload summary" in p.stderr and "level 3" in p.stderr, p.stderr
    (pid, level, device), = header(trace)
    assert level == 3 and device == 0  # GPU_OFFLOAD_DEVICE=cpu from ENV
    assert {r["op"] for r in top_level(dump(trace))} >= {"dsyrk", "dgetrf", "dgesdd"}


def test_python_m_runs_the_script_as_python_would(tmp_path):
    d = tmp_path / "dir"
    d.mkdir()
    (d / "helper_mod.py").write_text("VALUE = 42\n")
    script = d / "s.py"
    script.write_text("import sys, os\n"
                      "import helper_mod\n"  # found through sys.path[0] = the script's folder
                      "print(__name__, sys.argv, helper_mod.VALUE, os.path.basename(__file__))\n"
                      "sys.exit(int(sys.argv[2]))\n")
    p = py(["-m", "gpu_offload", script, "a", "7"], check=False, cwd=tmp_path)
    assert p.returncode == 7, p.stderr
    assert p.stdout.strip() == f"__main__ {[str(script), 'a', '7']} 42 s.py"
    script.write_text("raise RuntimeError('boom')\n")
    p = py(["-m", "gpu_offload", script], check=False)
    assert p.returncode == 1 and "RuntimeError: boom" in p.stderr


def test_child_processes_are_intercepted(tmp_path):
    """Like gpu-offload run: the script's child processes get the library (LD_PRELOAD) and the settings."""
    child = tmp_path / "child.py"
    child.write_text(SMALL)
    parent = tmp_path / "parent.py"
    parent.write_text("import subprocess, sys\n" + SMALL +
                      f"subprocess.run([sys.executable, {str(child)!r}], check=True)\n")
    trace = tmp_path / "trace"
    py(["-m", "gpu_offload", "--trace", trace, parent])
    rows = dump(trace)
    pids = {r["pid"] for r in rows}
    assert len(pids) == 2, pids
    for pid in pids:
        assert {r["op"] for r in top_level(rows) if r["pid"] == pid} >= {"dsyrk", "dgetrf", "dgesdd"}


def test_activate_with_settings(tmp_path):
    trace = tmp_path / "trace"
    code = ("import gpu_offload\n"
            f"assert gpu_offload.activate(trace={str(trace)!r}, device='cpu', level=8, summary=True)\n"
            "import os; print(os.environ['GPU_OFFLOAD_LEVEL'], gpu_offload.loaded_library())\n" + SMALL)
    p = py(["-c", code])
    level, lib = p.stdout.splitlines()[0].split()
    assert level == "8" and Path(lib) == LIB.resolve()
    assert "gpu-offload summary" in p.stderr
    (pid, level, device), = header(trace)
    assert (level, device) == (8, 0)
    assert all(r["device"] == "cpu" for r in dump(trace))


def test_settings_from_environment_with_import(tmp_path):
    trace = tmp_path / "trace"
    p = py(["-c", "import gpu_offload\n" + SMALL], env={"GPU_OFFLOAD_TRACE": str(trace), "GPU_OFFLOAD_LEVEL": "2"})
    assert "gpu-offload" not in p.stderr
    assert header(trace)[0][1] == 2


@pytest.mark.parametrize("code", [
    "import numpy\nimport gpu_offload\n",
    "import scipy.linalg\nimport gpu_offload\n",
    "import numpy\nimport gpu_offload\nprint('activate', gpu_offload.activate(level=3))\n",
])
def test_too_late_import_warns_and_stays_out(tmp_path, code):
    trace = tmp_path / "trace"
    script = tmp_path / "late.py"
    script.write_text(code + "print('active', gpu_offload.is_active())\n" + SMALL)
    p = py([script], env={"GPU_OFFLOAD_TRACE": str(trace)})
    assert "active False" in p.stdout
    if "activate(" in code:
        assert "activate False" in p.stdout
    # Names the problem, the line, and what to do instead.
    assert "GpuOffloadWarning" in p.stderr and "too late" in p.stderr, p.stderr
    assert f"{script}:2" in p.stderr, p.stderr
    assert "'import gpu_offload' before 'import numpy'" in p.stderr
    assert "python -m gpu_offload" in p.stderr and "gpu-offload run" in p.stderr
    assert not trace.exists() or not list(trace.iterdir()), "the library was loaded after all"


def test_under_gpu_offload_run_nothing_is_loaded_twice(tmp_path):
    """Already preloaded: import is a no-op; activate() with settings says they cannot apply."""
    from conftest import CLI
    trace = tmp_path / "trace"
    code = ("import gpu_offload\n"
            "print(gpu_offload.is_active(), gpu_offload.loaded_library())\n"
            "gpu_offload.activate(level=9)\n"
            "maps = open('/proc/self/maps').read()\n"
            "print(len({l.split()[-1] for l in maps.splitlines() if 'libgpuoffload.so' in l}))\n" + SMALL)
    p = run([CLI, "run", "--trace", trace, "--", sys.executable, "-c", code], preload=False, env=ENV)
    lines = p.stdout.splitlines()
    assert lines[0] == f"True {LIB.resolve()}"
    assert lines[1] == "1"
    assert "already loaded" in p.stderr and "GPU_OFFLOAD_LEVEL" in p.stderr, p.stderr
    assert len(header(trace)) == 1 and header(trace)[0][1] == 5


@pytest.mark.parametrize("args,words", [
    (["--bogus", "x.py"], ["unknown option '--bogus'", "--trace DIR", "--summary", "--device cpu|gpu|auto",
                           "--level 1-10", "--verify", "--profile FILE", "-m MODULE"]),
    (["--device", "tpu", "x.py"], ["--device 'tpu'", "cpu, gpu or auto"]),
    (["--level", "0", "x.py"], ["--level '0'", "1 to 10"]),
    (["--level=ten", "x.py"], ["--level 'ten'"]),
    (["--summary=1", "x.py"], ["--summary takes no value"]),
    (["--trace"], ["--trace needs a value"]),
    (["--summary"], ["a SCRIPT (or -m MODULE)"]),
    (["-m"], ["-m needs a module name"]),
    (["/nonexistent/script.py"], ["/nonexistent/script.py: no such file"]),
])
def test_option_errors(args, words):
    p = py(["-m", "gpu_offload", *args], check=False)
    assert p.returncode == 2, (p.returncode, p.stderr)
    for w in words:
        assert w in p.stderr, (w, p.stderr)
    assert "python -m gpu_offload --help" in p.stderr


def test_help_names_every_option():
    p = py(["-m", "gpu_offload", "--help"])
    for opt in ("--trace DIR", "--summary", "--device MODE", "--level N", "--verify", "--profile FILE",
                "-m MODULE", "--version", "import gpu_offload", "activate("):
        assert opt in p.stdout, opt
    assert py(["-m", "gpu_offload", "--version"]).stdout.startswith("gpu-offload ")


def test_activate_rejects_bad_values():
    code = ("import gpu_offload\n"
            "for kw in ({'device': 'tpu'}, {'level': 0}, {'level': 11}, {'level': True}, {'level': '3x'}):\n"
            "    try:\n"
            "        gpu_offload.activate(**kw)\n"
            "    except ValueError as e:\n"
            "        print(e)\n"
            "print(gpu_offload.is_active())\n")
    out = py(["-c", code]).stdout.splitlines()
    assert len(out) == 6 and out[-1] == "False", out
    assert "device='tpu' is not valid; use device='cpu', 'gpu' or 'auto'" in out[0]
    assert all("a whole number from 1 to 10" in line for line in out[1:5])


def test_activate_gpus_setting():
    """gpus= becomes GPU_OFFLOAD_GPUS ('all', '0,2', '0-3' or a list of numbers); anything else is refused."""
    code = ("import os, gpu_offload\n"
            "print(sorted(gpu_offload._settings_env(None, None, None, None, None, None, gpus=[0, 2]).items()))\n"
            "print(gpu_offload._settings_env(None, None, None, None, None, None, gpus='0-3')['GPU_OFFLOAD_GPUS'])\n"
            "for bad in ('gpu1', '1,', [], 'all,1'):\n"
            "    try:\n"
            "        gpu_offload._settings_env(None, None, None, None, None, None, gpus=bad)\n"
            "        print('accepted', bad)\n"
            "    except ValueError as e:\n"
            "        print(e)\n")
    out = py(["-c", code]).stdout.splitlines()
    assert out[0] == "[('GPU_OFFLOAD_GPUS', '0,2')]" and out[1] == "0-3", out
    assert len(out) == 6 and all("'all' or GPU numbers such as" in line for line in out[2:]), out
    assert "--gpus LIST|all" in py(["-m", "gpu_offload", "--help"]).stdout


def test_activate_history_setting():
    """history= (and python -m gpu_offload --history) becomes GPU_OFFLOAD_HISTORY on/off; anything else is refused."""
    code = ("import gpu_offload\n"
            "for v in (True, False, 'on', 'off'):\n"
            "    print(gpu_offload._settings_env(None, None, None, None, None, None, history=v)['GPU_OFFLOAD_HISTORY'])\n"
            "try:\n"
            "    gpu_offload._settings_env(None, None, None, None, None, None, history='maybe')\n"
            "except ValueError as e:\n"
            "    print(e)\n")
    out = py(["-c", code]).stdout.splitlines()
    assert out[:4] == ["on", "off", "on", "off"] and "history='maybe' is not valid" in out[4], out
    assert "--history on|off" in py(["-m", "gpu_offload", "--help"]).stdout
    p = py(["-m", "gpu_offload", "--history", "maybe", os.devnull], check=False)
    assert p.returncode == 2 and "--history 'maybe' is not valid; use on or off" in p.stderr, p.stderr


def test_missing_library(tmp_path):
    env = {"GPU_OFFLOAD_LIBRARY": str(tmp_path / "nope.so")}
    script = tmp_path / "s.py"
    script.write_text("print('ran')\n")
    p = py(["-m", "gpu_offload", script], env=env, check=False)
    assert p.returncode == 1 and "GPU_OFFLOAD_LIBRARY=" in p.stderr and "ran" not in p.stdout, p.stderr
    p = py(["-c", "import gpu_offload\n" + SMALL], env=env)
    assert "not active" in p.stderr and "GPU_OFFLOAD_LIBRARY=" in p.stderr, p.stderr
