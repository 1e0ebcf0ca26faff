"""What a user without a usable GPU is told: why no GPU runs, in words a user
understands, even when no start was ever due; --verify never silent; one basis for the predicted
savings; and the small things a reader notices. On a machine without an NVIDIA GPU (CI, the
development machine); a GPU machine skips what only holds without one."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from conftest import BUILD, CLI, base_env, client, run  # noqa: E402

BACKEND_BUILT = (BUILD / "lib" / "libgpuoffload-cuda.so").exists()
HAS_DRIVER = Path("/proc/driver/nvidia/version").exists() or Path("/dev/dxg").exists()
no_gpu_here = pytest.mark.skipif(HAS_DRIVER, reason="this machine has an NVIDIA driver")

# Five multiplications the built-in profile predicts faster on a GPU, too few to start one.
SMALL = ("import numpy as np\n"
         "a = np.random.default_rng(0).standard_normal((400, 400))\n"
         "for _ in range(5): b = a @ a\n"
         "print('cuda loaded', any(s in open('/proc/self/maps').read() for s in ('libcuda', 'libcudart')))\n")


def expected_absence():
    """What this build on this machine must say (src/preload/gpu_probe.cpp)."""
    return "no NVIDIA driver (" if BACKEND_BUILT else "built without CUDA support (the CUDA toolkit was not found"


def cli(*args):
    return subprocess.run([str(CLI), *map(str, args)], env=base_env(), capture_output=True, text=True, timeout=120)


@no_gpu_here
def test_summary_says_why_no_gpu_runs_although_no_start_was_due():
    p = run([sys.executable, "-c", SMALL], env={"GPU_OFFLOAD_SUMMARY": "1"})
    assert "cuda loaded False" in p.stdout  # found without loading CUDA
    line = next(l for l in p.stderr.splitlines() if l.startswith("  GPU: none can be used here: "))
    assert expected_absence() in line, p.stderr
    assert "CUDA driver version" not in p.stderr  # CUDA's words are not the user's
    # The predicted gain says its basis, the one the report uses too.
    assert "(predicted CPU time less predicted GPU time, copies included)" in p.stderr, p.stderr


def test_a_missing_backend_is_named_and_nothing_is_loaded(tmp_path):
    missing = tmp_path / "libgpuoffload-cuda.so"
    p = run([sys.executable, "-c", SMALL], env={"GPU_OFFLOAD_SUMMARY": "1", "GPU_OFFLOAD_BACKEND": str(missing)})
    want = f"the CUDA backend is missing from the install ({missing} not found)"
    assert f"  GPU: none can be used here: {want}" in p.stderr, p.stderr
    assert "cuda loaded False" in p.stdout
    # Asked for the GPU: the start is refused with the same words, before anything is dlopened.
    q = run([sys.executable, "-c", SMALL], env={"GPU_OFFLOAD_DEVICE": "gpu", "GPU_OFFLOAD_SUMMARY": "1",
                                                "GPU_OFFLOAD_BACKEND": str(missing)})
    assert f"gpu-offload: {want}; reinstall gpu-offload; every call runs on the CPU" in q.stderr, q.stderr
    assert f"  GPU: none used: {want}" in q.stderr
    assert "where calls ran and why: GPU unavailable 5" in q.stderr  # not "no GPU backend" for a driver problem
    assert "cannot load the GPU backend" not in q.stderr


@no_gpu_here
def test_verify_alone_checks_every_call_and_says_nothing_was_checked():
    # 40 x 40: far below the work threshold, yet every GPU-capable call is due for checking.
    script = "import numpy as np\na = np.ones((40, 40))\nfor _ in range(3): b = a @ a\n"
    p = run([sys.executable, "-c", script], env={"GPU_OFFLOAD_VERIFY": "1"})
    lines = [l for l in p.stderr.splitlines() if l.startswith("gpu-offload verify: ")]
    assert len(lines) == 1, p.stderr
    assert lines[0].startswith("gpu-offload verify: nothing was checked: " + expected_absence()), lines[0]
    assert lines[0].endswith("; 3 calls ran on the CPU only"), lines[0]


def test_verify_with_no_gpu_capable_call_says_so():
    # BLAS copies (?copy) are measured only (no GPU path): nothing for verify to check, and it says so.
    script = "import numpy as np\nfrom scipy.linalg import blas\nprint(blas.dcopy(np.ones(300), np.zeros(300)).sum())"
    p = run([sys.executable, "-c", script], env={"GPU_OFFLOAD_VERIFY": "1"})
    assert "gpu-offload verify: no call the GPU can run was made; nothing to check" in p.stderr, p.stderr


@no_gpu_here
def test_trace_dump_and_report_say_why_no_gpu_could_be_used(tmp_path):
    tdir = tmp_path / "trace"
    run([sys.executable, "-c", SMALL], trace_dir=tdir)
    d = cli("dump", "--starts", tdir)
    assert d.returncode == 0, d.stderr
    lines = d.stdout.splitlines()
    assert lines[1] == "(no process in these traces started the GPU or tried to)", d.stdout
    assert re.match(r"pid \d+: no GPU could have been used: ", lines[2]) and expected_absence() in lines[2], d.stdout
    # CSV stays the starts' table for scripts: a header and no row.
    c = cli("dump", "--starts", "--csv", tdir)
    assert c.stdout.splitlines() == ["file,pid,tid,t_start_ns,duration_ns,ok,message,gpu,gpu_count,pci_bus_id,"
                                     "gpu_name,chosen_by,waited_ns"], c.stdout
    r = cli("report", tdir)
    assert r.returncode == 0, r.stderr
    text = " ".join(r.stdout.split())
    assert "No GPU could have been used in this run: " + expected_absence() in text, r.stdout


def test_one_call_is_one_call():
    # One multiplication predicted faster on a GPU, not enough to start one: "1 call", not "1 calls".
    script = "import numpy as np\na = np.ones((1100, 1100))\nb = a @ a\n"
    p = run([sys.executable, "-c", script], env={"GPU_OFFLOAD_SUMMARY": "1"})
    line = next((l for l in p.stderr.splitlines() if l.startswith("  GPU start-up: avoided")), None)
    if line is None:
        pytest.skip("the GPU started or the call was predicted slower here: " + p.stderr)
    assert "; 1 call would have gained " in line, line


def test_report_gives_the_predicted_gain_on_the_summary_basis(tmp_path):
    tdir = tmp_path / "trace"
    script = "import numpy as np\na = np.ones((600, 600))\nfor _ in range(4): b = a @ a\n"
    run([sys.executable, "-c", script], trace_dir=tdir)
    r = cli("report", tdir)
    text = " ".join(r.stdout.split())
    m = re.search(r"about (\S+ \S+) there, copies included, against (\S+ \S+) it predicts on the CPU, a predicted "
                  r"gain of (\S+ \S+) \(the summary's basis: predicted CPU time less predicted GPU time", text)
    if "predicts the GPU faster" not in text:
        pytest.skip("the profile predicts the CPU faster for these calls here")
    assert m, r.stdout
