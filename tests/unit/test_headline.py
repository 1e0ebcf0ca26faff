"""bench/headline.py without a GPU: every case runs on the CPU only or says n/a, the table has README's
columns, the JSON keeps every sample; and the pieces it adds to the other benchmarks (auto_sweep's
per-call minimum over several gpu runs and its --json) on saved runs with known answers."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from conftest import BUILD, ROOT, base_env  # noqa: E402

HEADLINE = ROOT / "bench" / "headline.py"
# The groups that have a CPU side, and the cases each gives.
CPU_CASES = {"matmul": 2, "dgemm": 2, "solve": 1, "scipy": 5, "residency": 6, "fft": 1, "small": 1}
GPU_ONLY = {"startup": 4, "sweep": 6}


def headline(tmp_path, *args, timeout=600):
    env = base_env()
    env.pop("LD_PRELOAD", None)
    return subprocess.run([sys.executable, str(HEADLINE), "--build", str(BUILD), "--out", str(tmp_path / "out"), *args],
                          capture_output=True, text=True, env=env, timeout=timeout, cwd=ROOT)


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("headline")
    p = headline(tmp, "--quick", "--device-less", "--markdown")
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    return p, json.loads((tmp / "out" / "headline.json").read_text()), tmp


def test_every_case_runs_on_the_cpu_or_says_na(quick):
    p, d, _ = quick
    assert d["device_less"] and d["gpu_unavailable"] == "--device-less" and d["repeats"] == 2
    groups = {}
    for c in d["cases"]:
        groups.setdefault(c["group"], []).append(c)
    assert {g: len(v) for g, v in groups.items()} == {**CPU_CASES, **GPU_ONLY}
    for c in d["cases"]:
        if c["group"] != "small":  # nothing pretends to have run on a GPU
            assert c["gpu"]["na"].startswith("no GPU"), c
        assert "na" in c["bound"] and "na" in c["peer"] or c["group"] == "fft", c
        if c["group"] in CPU_CASES:
            s = c["cpu"]["samples"]
            want = 2 if c["group"] != "residency" else None  # a loop: its iterations after the first
            assert want is None or len(s) == want, c
            assert s and all(x > 0 for x in s), c
    (fft,) = groups["fft"]
    assert fft["peer"]["samples"] == fft["cpu"]["samples"] and "FFTW" in fft["peer"]["what"]
    # The small-math program runs under the library all the same (--device auto): CUDA never loads.
    (small,) = groups["small"]
    assert len(small["gpu"]["samples"]) == 2 and small["gpu"]["what"] == "gpu-offload, --device auto"
    assert re.search(r"CUDA mapped in 0 of 2 runs \(never\)", small["note"]), small["note"]


def test_the_table_has_readmes_columns_a_row_per_case_the_commit_and_machine(quick):
    p, d, tmp = quick
    lines = p.stdout.splitlines()
    assert lines[0].startswith("command: python3 bench/headline.py ")
    assert re.match(r"commit (\w+(-dirty)?|unknown .*); ", lines[1]), lines[1]
    assert lines[2].startswith("machine: GPU none (--device-less); CPU ") and " cores (" in lines[2]
    head = next(i for i, ln in enumerate(lines) if ln.startswith("| case |"))
    assert lines[head] == ("| case | n | timed | runs | gpu-offload: median (min - max) | CPU: median (min - max) | "
                           "vs CPU | / link bound | peer: median (min - max) | vs peer | note |")
    assert lines[head + 1] == "|" + "---|" * 11
    rows = [ln for ln in lines[head + 2:] if ln.startswith("| ")]
    assert len(rows) == len(d["cases"])
    assert all(ln.count(" | ") == 10 for ln in rows), rows
    # The same table in the out folder, under the same header lines.
    md = (tmp / "out" / "headline.md").read_text()
    assert "\n".join(lines[head:head + 2 + len(rows)]) in md and md.startswith("command: ")
    assert (tmp / "out" / "headline-bench.log").stat().st_size > 0
    numpy_row = next(r for r in rows if r.startswith("| NumPy `a @ b`, float64 | 256 | the call | 2 | n/a (no GPU) | "))
    assert re.search(r"\| [0-9.]+ (us|ms|s) \([0-9.]+ (us|ms|s) - [0-9.]+ (us|ms|s)\) \|", numpy_row), numpy_row


def test_a_spent_budget_leaves_every_group_na(tmp_path):
    p = headline(tmp_path, "--quick", "--device-less", "--budget", "0.5", "--only", "matmul,fft")
    assert p.returncode == 0, p.stderr
    cases = json.loads((tmp_path / "out" / "headline.json").read_text())["cases"]
    assert [c["id"] for c in cases] == ["matmul", "fft"]
    assert all(c["cpu"]["na"] == "out of the --budget" for c in cases)
    assert "n/a (out of the --budget)" in p.stdout


def test_stage_and_only_choose_the_groups(tmp_path):
    p = headline(tmp_path, "--quick", "--device-less", "--stage", "b", "--only", "matmul,sweep")
    assert p.returncode == 0, p.stderr
    cases = json.loads((tmp_path / "out" / "headline.json").read_text())["cases"]
    assert {c["group"] for c in cases} == {"sweep"}  # matmul is stage a
    assert "--only matmul: not in stage b" in p.stderr, p.stderr
    assert headline(tmp_path, "--only", "nothing").returncode != 0
    p = headline(tmp_path, "--quick", "--device-less", "--stage", "a", "--only", "sweep")  # nothing would run
    assert p.returncode != 0 and "no group left to run" in p.stderr, p.stderr


def sweep_csv(rows):
    head = "op,m,nested,query,t_start_ns,duration_ns,device,reason,flops,operands"
    lines = [head] + [f"{op},{n},0,0,{1000 + i},{int(s * 1e9)},{dev},x,{2.0 * n ** 3},0x1000:{n * n * 8}:7:0"
                      for i, (op, n, dev, s) in enumerate(rows)]
    return "\n".join(lines) + "\n"


def test_auto_sweep_takes_the_per_call_minimum_of_several_gpu_runs(tmp_path):
    # cpu: 0.1 s a call; gpu run 1: 0.02 and 0.01 s, start 4 ms; gpu run 2: 0.01 and 0.03 s, start 2 ms.
    # The per-call minimum: 0.01 + 0.01 s, start 2 ms, no first-call excess (the first GPU ssyevd equals its
    # repeat): best plan 0.022 s. auto: 0.012 + 0.011 s + 3 ms = 0.026 s, 1.18 of it.
    warm = ("dgemm", 64, "cpu", 0.001)
    runs = {"cpu": ([warm] + [("ssyevd", 1024, "cpu", 0.1)] * 2, None),
            "gpu1": ([warm, ("ssyevd", 1024, "gpu", 0.02), ("ssyevd", 1024, "gpu", 0.01)], 4.0),
            "gpu2": ([warm, ("ssyevd", 1024, "gpu", 0.01), ("ssyevd", 1024, "gpu", 0.03)], 2.0),
            "auto": ([warm, ("ssyevd", 1024, "gpu", 0.012), ("ssyevd", 1024, "gpu", 0.011)], 3.0)}
    for name, (rows, start) in runs.items():
        d = tmp_path / name
        d.mkdir()
        mode = name.rstrip("12")
        (d / f"{mode}.csv").write_text(sweep_csv(rows))
        (d / f"{mode}.summary").write_text(f"  GPU start-up: paid {start} ms, at decided call 1\n" if start else "x\n")
    for d in ("auto", "cpu"):
        for f in (tmp_path / d).iterdir():
            (tmp_path / "gpu1" / f.name).write_text(f.read_text())
    js = tmp_path / "out.json"
    p = subprocess.run([sys.executable, str(ROOT / "bench" / "auto_sweep.py"), "--build", str(BUILD), "--load",
                        str(tmp_path / "gpu1"), "--gpu-min", str(tmp_path / "gpu2"), "--json", str(js)],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    # Each gpu run's traced calls (the warm-up call is not one) over that minimum (0.01 + 0.01 s): 0.03 / 0.02
    # and 0.04 / 0.02.
    assert ("gpu side: the per-call minimum over 2 gpu runs (start-up: the smallest, 0.002 s); each run's calls over "
            "it: 1.500, 2.000") in p.stdout, p.stdout
    d = json.loads(js.read_text())
    assert d["gpu_runs"] == 2 and d["calls"] == 2
    assert d["per_call_best_s"] == pytest.approx(0.02) and d["best_plan_s"] == pytest.approx(0.022)
    assert d["auto_s"] == pytest.approx(0.026) and d["auto_vs_best_plan"] == pytest.approx(0.026 / 0.022)
    assert d["gpu_run_floor"] == pytest.approx([1.5, 2.0])


def test_the_gpu_paths_parse_with_a_fake_gpu(tmp_path):
    """An nvidia-smi that names a GPU no driver has: headline.py takes the GPU paths (gpu-offload --device gpu,
    NVBLAS, the traces, the sweep's runs), whose calls all run on the CPU here; each gives samples or says why
    not, and nothing fails. The figures mean nothing; the parsing is what is checked."""
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "nvidia-smi").write_text('#!/bin/sh\ncase "$*" in -L) echo "GPU 0: Fake GPU (UUID: GPU-0)";; '
                                     '*driver_version*) echo "Fake GPU, 0.0";; esac\n')
    (fake / "nvidia-smi").chmod(0o755)
    env = base_env()
    env.pop("LD_PRELOAD", None)
    env["PATH"] = f"{fake}:{env.get('PATH', '/usr/bin:/bin')}"
    p = subprocess.run([sys.executable, str(HEADLINE), "--build", str(BUILD), "--out", str(tmp_path / "out"), "--quick",
                        "--only", "matmul,dgemm,solve,fft,residency,startup,sweep"],
                       capture_output=True, text=True, env=env, timeout=600, cwd=ROOT)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    d = json.loads((tmp_path / "out" / "headline.json").read_text())
    assert d["machine"]["gpu"] == "Fake GPU" and not d["device_less"]
    cases = {c["id"]: c for c in d["cases"]}
    for cid in ("matmul-float32", "matmul-float64", "dgemm-256", "dgemm-512", "numpy-solve", "fft-c2c-3d",
                "residency-axi", "residency-lu-solve", "residency-gemv"):
        assert len(cases[cid]["gpu"]["samples"]) == (2 if not cid.startswith("residency") else
                                                     len(cases[cid]["cpu"]["samples"])), cases[cid]
        assert "samples" in cases[cid]["cpu"], cases[cid]
        assert "na" in cases[cid]["bound"]  # no PyTorch here: no pinned rate measured
    # auto's loops are timed once the GPU runs; each iteration said where it ran: here, on the CPU.
    for cid in ("residency-axi-auto", "residency-lu-solve-auto", "residency-gemv-auto"):
        assert cases[cid]["gpu"]["na"] == "no iteration ran on the GPU", cases[cid]
        assert "samples" in cases[cid]["cpu"], cases[cid]
    assert "last call ran on: cpu" in cases["fft-c2c-3d"]["note"]
    assert "in LAPACK" in cases["numpy-solve"]["note"]
    assert cases["gpu-start"]["gpu"]["na"] == "no process started the GPU"
    assert cases["first-calls"]["gpu"]["na"] == "no row ran on the GPU"
    assert len(cases["sweep-best-plan"]["gpu"]["samples"]) == 1
    assert len(cases["sweep-auto-first"]["gpu"]["samples"]) == len(cases["sweep-auto-second"]["gpu"]["samples"]) == 1
    assert cases["sweep-gpu-floor"]["gpu"]["na"] == "one gpu run"  # --quick makes one


def test_a_loop_under_auto_is_timed_from_after_its_first_iteration_on_the_gpu():
    """residency_bench.py's "once on the GPU": the iterations after the first whose call ran there, whatever
    ran on the CPU after it; none when no iteration did, or when the loop could not tell."""
    sys.path.insert(0, str(ROOT / "bench"))
    from residency_bench import once_on_gpu
    r = {"times": [9.0, 8.0, 7.0, 2.0, 3.0, 6.0], "on_gpu": [False, False, True, True, True, False]}
    assert once_on_gpu(r) == [2.0, 3.0, 6.0] and r["gpu_from"] == 2
    r = {"times": [9.0, 8.0], "on_gpu": [False, False]}
    assert once_on_gpu(r) == [] and r["gpu_from"] is None
    r = {"times": [9.0, 8.0], "on_gpu": [None, None]}  # not under the library
    assert once_on_gpu(r) == [] and r["gpu_from"] is None


def test_the_sweep_reads_the_gpus_clocks_beside_a_run(tmp_path, monkeypatch):
    """bench/gpu_state.py: nvidia-smi sampled beside a run gives the SM clock's range while the GPU worked,
    the hottest reading, the most power and the clock-event reasons seen; a driver that takes only the
    older field name is asked with it; a reading it cannot parse is skipped; without nvidia-smi the line
    says so."""
    sys.path.insert(0, str(ROOT / "bench"))
    import gpu_state
    fake = tmp_path / "bin"
    fake.mkdir()
    # Takes only the older name of the reasons. Looped (-lms): a reading at full clock, one slowed by the
    # power cap, one with no temperature (skipped), one idle (not counted in the clocks).
    (fake / "nvidia-smi").write_text(
        '#!/bin/sh\ncase "$*" in *clocks_event_reasons*) echo "Field is not a valid field to query." >&2; exit 2;; esac\n'
        'case "$*" in *-lms*) ;; *) echo "1980, 41, 120.5, 0x0000000000000000"; exit 0;; esac\n'
        'echo "1980, 41, 120.5, 0x0000000000000000"; echo "1755, 58, 402.0, 0x0000000000000004"\n'
        'echo "1980, [N/A], 90.0, 0x0000000000000000"; echo "210, 35, [N/A], 0x0000000000000001"; exec sleep 30\n')
    (fake / "nvidia-smi").chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake}:/usr/bin:/bin")
    with gpu_state.GpuState(every_ms=100) as g:
        import time
        time.sleep(0.5)
    assert g.line() == ("GPU during the run: SM clock 1868 MHz (1755-1980) in 2 of 3 readings (the others idle), "
                        "up to 58 C, 402 W; clock-event reasons: software power cap"), g.line()
    assert gpu_state.describe(gpu_state.parse("210, 35, 60.0, 0x1\n")) == "the GPU idle in all 1 readings"
    monkeypatch.setenv("PATH", str(tmp_path / "none"))
    with gpu_state.GpuState() as g:
        pass
    assert g.line() == "GPU during the run: not read (nvidia-smi not found)"
