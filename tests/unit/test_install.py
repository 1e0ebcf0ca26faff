"""`cmake --install` into a temporary prefix: the command, the libraries, the header, the default profile,
the docs and the Python package land in their places; the installed `gpu-offload run` preloads the
installed library; the installed package finds it relative to itself; the prefix still works after
it is moved as a whole."""

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from conftest import BUILD, ROOT, base_env, dump, require, top_level  # noqa: E402



def cmake_command():
    """The cmake that configured the build (its cache says), else the one on PATH."""
    cache = BUILD / "CMakeCache.txt"
    if cache.exists():
        for line in cache.read_text().splitlines():
            if line.startswith("CMAKE_COMMAND:INTERNAL="):
                return line.split("=", 1)[1]
    return shutil.which("cmake")


CMAKE = cmake_command()
PYDIR = "lib/python3/dist-packages"  # GOFL_PYTHON_INSTALL_DIR's default

SMALL = """
import numpy as np
a = np.random.default_rng(5).standard_normal((120, 120))
print(float((a @ a.T).sum()), float(np.linalg.det(a)))
"""


@pytest.fixture(scope="module")
def prefix(tmp_path_factory):
    assert CMAKE, "cmake is needed (the build's CMakeCache.txt or PATH)"
    cache = (BUILD / "CMakeCache.txt").read_text()
    if f"GOFL_PYTHON_INSTALL_DIR:STRING={PYDIR}" not in cache:
        pytest.skip("this build installs the Python package elsewhere (GOFL_PYTHON_INSTALL_DIR)")
    p = tmp_path_factory.mktemp("install") / "prefix"
    r = subprocess.run([CMAKE, "--install", str(BUILD), "--prefix", str(p)], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    return p


def libdir(prefix):
    for d in ("lib", "lib64", "lib/x86_64-linux-gnu"):
        if (prefix / d / "libgpuoffload.so").exists():
            return prefix / d
    raise AssertionError(f"no libgpuoffload.so under {prefix}")


def env(extra=None):
    e = base_env()
    e.pop("PYTHONPATH", None)
    e["GPU_OFFLOAD_CONFIG"] = os.devnull
    e.update(extra or {})
    return e


def test_files_in_place(prefix):
    lib = libdir(prefix)
    assert os.access(prefix / "bin" / "gpu-offload", os.X_OK)
    assert (prefix / "include" / "gpu_offload.h").exists()
    assert (prefix / "share" / "doc" / "gpu-offload" / "README.md").exists()
    if (ROOT / "src" / "policy" / "default_profile.txt").exists():
        assert (prefix / "share" / "gpu-offload" / "default_profile.txt").exists()
    if (BUILD / "lib" / "libgpuoffload-cuda.so").exists():
        assert (lib / "libgpuoffload-cuda.so").exists()
    pkg = prefix / PYDIR / "gpu_offload"
    for f in ("__init__.py", "__main__.py", "_location.py"):
        assert (pkg / f).exists(), f
    loc = (pkg / "_location.py").read_text()
    rel = loc.split('LIBRARY = "', 1)[1].split('"', 1)[0]
    assert not Path(rel).is_absolute(), loc  # relative: the prefix can move
    assert Path(os.path.normpath(pkg / rel)) == lib / "libgpuoffload.so"


def test_installed_command_preloads_the_installed_library(prefix):
    p = subprocess.run([str(prefix / "bin" / "gpu-offload"), "run", "--", "env"], env=env(), capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    preload = [line.split("=", 1)[1] for line in p.stdout.splitlines() if line.startswith("LD_PRELOAD=")]
    assert preload == [str((libdir(prefix) / "libgpuoffload.so").resolve())]
    h = subprocess.run([str(prefix / "bin" / "gpu-offload"), "--help"], capture_output=True, text=True)
    assert h.returncode == 0 and "run" in h.stdout


def numpy_needed():
    require(importlib.util.find_spec("numpy"), f"numpy for {sys.executable}")


def test_installed_command_traces_a_numpy_program(prefix, tmp_path):
    numpy_needed()
    trace = tmp_path / "trace"
    p = subprocess.run([str(prefix / "bin" / "gpu-offload"), "run", "--trace", str(trace), "--device", "cpu", "--",
                        sys.executable, "-c", SMALL], env=env(), capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert {r["op"] for r in top_level(dump(trace))} >= {"dsyrk", "dgetrf"}


def run_package(pydir, tmp_path, name):
    trace = tmp_path / name
    code = "import gpu_offload\nprint(gpu_offload.loaded_library())\n"
    script = tmp_path / f"{name}.py"
    script.write_text(code + SMALL)
    p = subprocess.run([sys.executable, "-m", "gpu_offload", "--trace", str(trace), "--device", "cpu", str(script)],
                       env=env({"PYTHONPATH": str(pydir)}), capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert "gpu-offload" not in p.stderr, p.stderr
    assert {r["op"] for r in top_level(dump(trace))} >= {"dsyrk", "dgetrf"}
    return p.stdout.splitlines()[0]


def test_installed_package_and_a_moved_prefix(prefix, tmp_path):
    numpy_needed()
    loaded = run_package(prefix / PYDIR, tmp_path, "installed")
    assert loaded == str((libdir(prefix) / "libgpuoffload.so").resolve())
    # import gpu_offload (no -m) finds the same library
    p = subprocess.run([sys.executable, "-c", "import gpu_offload, numpy; print(gpu_offload.loaded_library())"],
                       env=env({"PYTHONPATH": str(prefix / PYDIR)}), capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and p.stdout.strip() == loaded, p.stderr
    moved = tmp_path / "moved"
    shutil.copytree(prefix, moved, symlinks=True)
    loaded = run_package(moved / PYDIR, tmp_path, "moved")
    assert loaded == str((libdir(moved) / "libgpuoffload.so").resolve())
