"""The cost model end to end: the library's --device auto decision with hand-made profiles (the
predictions in the trace, the ski rental, the summary, a malformed profile), `gpu-offload estimate`
replaying a trace through the same code, `bench/auto_sweep.py --replay` (measured calls through the
decision), and `gpu-offload calibrate --quick` (its CPU side: CI has
no GPU, so the GPU pass says so and the built-in GPU numbers are kept)."""

import csv
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from conftest import BUILD, CLI, LIB, ROOT, base_env, dump, require, run, top_level  # noqa: E402

# numpy: 4 products of 500 x 500 (2.5e8 flops each), then 2 solves of 400 x 400 with 400 right-hand sides.
SCRIPT = """
import numpy as np
a = np.random.default_rng(0).standard_normal((500, 500))
for _ in range(4): a @ a
b = np.random.default_rng(1).standard_normal((400, 400))
for _ in range(2): np.linalg.solve(b, b)
maps = open('/proc/self/maps').read()
print('cuda-loaded', 'libgpuoffload-cuda' in maps)
"""
GEMM_FLOPS = 2.0 * 500 ** 3
GESV_FLOPS = 2.0 * 400 ** 3 / 3 + 2.0 * 400 ** 3


def have_numpy():
    return subprocess.run([sys.executable, "-c", "import numpy"], capture_output=True).returncode == 0


def profile(tmp_path, cpu_rate, gpu_rate, startup, name="profile", extra=""):
    """Constant speeds for every operation (gemm curves, no efficiencies), free copies."""
    p = tmp_path / name
    p.write_text(f"""gpu-offload profile 1
# hand-made for a test
source test
gpu_startup_s {startup}
h2d 0 1e30
d2h 0 1e30
cpu dgemm 1e3:{cpu_rate} 1e15:{cpu_rate}
gpu dgemm 1e3:{gpu_rate} 1e15:{gpu_rate}
{extra}""")
    return p


def cli(*args, env=None):
    return subprocess.run([str(CLI), *map(str, args)], capture_output=True, text=True, env=base_env(env))


@pytest.fixture
def numpy_trace(tmp_path):
    """The script traced under auto with a profile whose GPU start-up is never repaid."""
    require(have_numpy(), "numpy")
    prof = profile(tmp_path, 1e10, 1e12, 1000.0, "never-start")
    trace = tmp_path / "trace"
    p = run([sys.executable, "-c", SCRIPT], trace_dir=trace,
            env={"GPU_OFFLOAD_PROFILE": str(prof), "GPU_OFFLOAD_SUMMARY": "1", "GPU_OFFLOAD_DEVICE": "auto"})
    return trace, p


def test_auto_puts_predictions_and_reasons_in_the_trace(numpy_trace):
    trace, p = numpy_trace
    # A start-up of 1000 s is never repaid: every worthwhile call stays on the CPU and CUDA is never loaded.
    assert "cuda-loaded False" in p.stdout
    rows = dump(trace)
    gemm = top_level(rows, "dgemm")
    assert len(gemm) == 4
    for r in gemm:
        assert r["device"] == "cpu" and r["reason"] == "GPU not started yet"
        # The first prediction is the profile's (corrections start at 1): flops / 1e10 on the CPU.
    assert float(gemm[0]["pred_cpu_s"]) == pytest.approx(GEMM_FLOPS / 1e10, rel=1e-5)
    assert float(gemm[0]["pred_gpu_s"]) == pytest.approx(GEMM_FLOPS / 1e12, rel=1e-5)
    gesv = top_level(rows, "dgesv")
    assert len(gesv) == 2 and all(r["reason"] == "GPU not started yet" for r in gesv)
    assert float(gesv[0]["pred_cpu_s"]) == pytest.approx(GESV_FLOPS / 1e10, rel=1e-5)
    # The summary counts the reasons and says the start-up was avoided, with its cost.
    assert "GPU not started yet 6" in p.stderr, p.stderr
    assert re.search(r"GPU start-up: avoided \(1000\.00 s\); 6 calls would have gained", p.stderr), p.stderr
    assert "profile " + str(trace.parent / "never-start") in p.stderr


def test_learning_moves_the_cpu_prediction(numpy_trace):
    trace, _ = numpy_trace
    gemm = top_level(dump(trace), "dgemm")
    # Each observation moves the CPU correction halfway (in ratio terms) towards observed / predicted.
    pred = [float(r["pred_cpu_s"]) for r in gemm]
    took = [int(r["duration_ns"]) * 1e-9 for r in gemm]
    base = GEMM_FLOPS / 1e10
    factor = 1.0
    for i in range(3):
        assert pred[i] == pytest.approx(base * factor, rel=1e-4)
        factor = (factor * took[i] / base) ** 0.5


def test_a_slower_gpu_keeps_everything_on_the_cpu(tmp_path):
    require(have_numpy(), "numpy")
    prof = profile(tmp_path, 1e12, 1e10, 0.0)
    trace = tmp_path / "trace"
    p = run([sys.executable, "-c", SCRIPT], trace_dir=trace, env={"GPU_OFFLOAD_PROFILE": str(prof), "GPU_OFFLOAD_SUMMARY": "1"})
    assert "cuda-loaded False" in p.stdout
    assert {r["reason"] for r in top_level(dump(trace)) if r["op"] in ("dgemm", "dgesv")} == {"predicted slower"}
    assert "no call was predicted to gain from the GPU" in p.stderr


def test_malformed_profile_is_reported_once_with_its_line_and_the_run_goes_on(tmp_path):
    require(have_numpy(), "numpy")
    bad = tmp_path / "bad"
    bad.write_text("gpu-offload profile 1\ngpu_startup_s 0.3\nh2d 1e-5 4e10\nd2h 1e-5 1e10\ncpu dgemm 1e6:fast\n")
    trace = tmp_path / "trace"
    p = run([sys.executable, "-c", SCRIPT], trace_dir=trace, env={"GPU_OFFLOAD_PROFILE": str(bad), "GPU_OFFLOAD_SUMMARY": "1"})
    msg = f"gpu-offload: the profile {bad} line 5: '1e6:fast' is not a FLOPS:RATE point"
    assert p.stderr.count(msg) == 1, p.stderr
    assert "using the built-in profile" in p.stderr
    assert "profile built-in" in p.stderr
    assert len(top_level(dump(trace), "dgemm")) == 4
    # The estimate names the line too, and refuses a profile it was asked to use.
    e = cli("estimate", "--profile", bad, trace)
    assert e.returncode == 1 and f"{bad} line 5" in e.stderr


def test_per_user_profile_location(tmp_path):
    require(have_numpy(), "numpy")
    cfg = tmp_path / "cfg"
    (cfg / "gpu-offload").mkdir(parents=True)
    profile(cfg / "gpu-offload", 1e10, 1e12, 1000.0)
    trace = tmp_path / "trace"
    run([sys.executable, "-c", "import numpy as np; a = np.ones((300, 300)); a @ a"], trace_dir=trace,
        env={"XDG_CONFIG_HOME": str(cfg)})
    rows = top_level(dump(trace), "dgemm")
    assert float(rows[0]["pred_cpu_s"]) == pytest.approx(2 * 300 ** 3 / 1e10, rel=1e-5)


def test_estimate_replays_the_decision(numpy_trace, tmp_path):
    trace, _ = numpy_trace
    # GPU 100x faster, start-up 1 ms: the first decided call pays for the start and runs there. dgemm
    # was never seen on the CPU, so a probe is due, but one would lose 99 ms, and 3% of the GPU time
    # so far (a few ms) is far less: every call goes to the GPU, dgesv's too.
    fast = profile(tmp_path, 1e10, 1e12, 0.001, "fast")
    e = cli("estimate", "--profile", fast, trace)
    assert e.returncode == 0, e.stderr
    out = e.stdout
    assert f"profile {fast}, level 5 (as traced)" in out
    row = re.search(r"^\s+dgemm\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\S+ \S+)\s+(\S+ \S+)", out, re.M)
    assert row, out
    calls, decided, to_gpu, split, cpu_pred, gpu_pred = row.groups()
    assert (calls, decided, to_gpu, split) == ("4", "4", "4", "0")  # traced without a GPU: one, nothing split
    assert cpu_pred == "100.0 ms" and gpu_pred == "1.0 ms"
    assert re.search(r"dgesv\s+2\s+2\s+2\s+0\s", out), out
    # Over two GPUs with nothing to start: each dgemm splits (the work shared, copies free), at half the
    # time ("chosen"; "gpu pred" stays one GPU's); dgesv has no split routine.
    e2 = cli("estimate", "--profile", profile(tmp_path, 1e10, 1e12, 0.001, "split", "split_startup_s 0\n"),
             "--gpus", "2", trace)
    assert e2.returncode == 0, e2.stderr
    row2 = re.search(r"^\s+dgemm\s+4\s+4\s+4\s+4\s+100.0 ms\s+\S+ \S+\s+500.0 us\s", e2.stdout, re.M)
    assert row2, e2.stdout
    assert re.search(r"dgesv\s+2\s+2\s+2\s+0\s", e2.stdout), e2.stdout
    # A start that one call cannot pay for: nothing is split.
    e3 = cli("estimate", "--profile", profile(tmp_path, 1e10, 1e12, 0.001, "split-slow", "split_startup_s 1\n"),
             "--gpus", "2", trace)
    assert re.search(r"^\s+dgemm\s+4\s+4\s+4\s+0\s", e3.stdout, re.M), e3.stdout
    assert cli("estimate", "--gpus", "0", trace).returncode == 2
    assert "starts at decided call 1 of 6" in out
    assert "0 CPU probes" in out
    # Level 1 needs 3x: a GPU only 2x faster gets nothing, and the GPU never starts.
    twice = profile(tmp_path, 1e10, 2e10, 0.001, "twice")
    e1 = cli("estimate", "--profile", twice, "--level", "1", trace)
    assert re.search(r"dgemm\s+4\s+4\s+0\s+0\s", e1.stdout), e1.stdout
    assert "never starts: no call is predicted to gain 3x" in e1.stdout
    e9 = cli("estimate", "--profile", twice, "--level", "9", trace)
    # Level 9 needs 1x: all four go to the GPU (a probe would lose 50 ms, 34 GPU calls' 3%).
    assert re.search(r"dgemm\s+4\s+4\s+4\s+0\s", e9.stdout), e9.stdout
    # Ski rental: a start-up of 0.55 s at level 5 needs 1.1 s of missed savings; each dgemm saves
    # 0.25 - 0.0025 s, the first dgesv 0.17 s more: the GPU starts at the fifth decided call.
    slow_start = profile(tmp_path, 1e9, 1e11, 0.55, "slow-start")
    e5 = cli("estimate", "--profile", slow_start, trace)
    assert "starts at decided call 5 of 6" in e5.stdout, e5.stdout
    assert "after 4 calls ran on the CPU missing 990.0 ms of savings (the start needs 1.10 s)" in e5.stdout


def test_estimate_usage_errors(numpy_trace):
    trace, _ = numpy_trace
    assert cli("estimate").returncode == 2
    assert cli("estimate", "--level", "0", trace).returncode == 2
    assert cli("estimate", "--profile", "/nonexistent", trace).returncode == 1
    h = cli("help", "estimate")
    assert h.returncode == 0 and h.stdout.startswith("Usage: gpu-offload estimate")


def test_calibrate_quick_cpu_side(tmp_path):
    out = tmp_path / "profile"
    traces = tmp_path / "traces"
    env = {"OPENBLAS_NUM_THREADS": "2", "XDG_CONFIG_HOME": str(tmp_path / "cfg")}
    p = subprocess.run([str(CLI), "calibrate", "--quick", "--output", str(out), "--traces", str(traces)],
                       capture_output=True, text=True, env=base_env(env), timeout=900)
    assert p.returncode == 0, p.stdout + p.stderr
    # A GPU that cannot start is explained once (the workload's warm-up child stays quiet).
    assert p.stderr.count("every call runs on the CPU") <= 1, p.stderr
    text = out.read_text()
    assert text.startswith("gpu-offload profile 1\n")
    # Every GPU-capable routine and precision got a CPU curve.
    for op in ("sgemm", "dgemm", "zgemm", "chemm", "dtrsm", "dgetrf", "zgesv", "dpotrf", "dsyevd", "zheevd",
               "dgesdd", "cgesvd", "dgeqrf", "zungqr", "dgels", "sgelsd", "zgeev"):
        assert re.search(rf"^cpu {op} ", text, re.M), op
    # Progress with what is measured and the time left.
    assert re.search(r"CPU pass\s+\d+%\s+\w+ n=\d+, ~[\dm]+s left", p.stderr), p.stderr
    points = (traces / "cpu" / "points.txt").read_text()
    assert points.count("\npoint ") > 50 and points.rstrip().endswith("end")
    rows = dump(traces / "cpu")
    assert {r["reason"] for r in top_level(rows)} == {"device cpu"}
    if "No usable GPU" in p.stdout:
        assert "provisional yes" in text
        assert "gpu dgemm" in text  # the built-in GPU part
        assert "CPU pass only" in text
    # The profile written is one the library and estimate read.
    e = cli("estimate", "--profile", out, traces / "cpu")
    assert e.returncode == 0, e.stderr
    assert "curve / " in e.stdout
    # Without --output it goes to the per-user location.
    q = subprocess.run([str(CLI), "calibrate", "--quick", "--only", "gemm"], capture_output=True, text=True,
                       env=base_env(env), timeout=600)
    assert q.returncode == 0, q.stdout + q.stderr
    user = tmp_path / "cfg" / "gpu-offload" / "profile"
    assert user.exists() and "every run uses it from now on" in q.stdout
    assert re.search(r"^cpu dgemm ", user.read_text(), re.M) and not re.search(r"^cpu dpotrf ", user.read_text(), re.M)


def test_calibrate_out_of_time_keeps_every_routine(tmp_path):
    # Sizes go in rounds (every routine at one size, then the next), and the budget never cuts the
    # first: a pass cut short still has every routine, only without its larger sizes, and says so.
    out = tmp_path / "profile"
    env = {"OPENBLAS_NUM_THREADS": "2", "GPU_OFFLOAD_CALIBRATE_PASS_MS": "1"}
    p = subprocess.run([str(CLI), "calibrate", "--quick", "--only", "gemm,potrf,heevd", "--output", str(out)],
                       capture_output=True, text=True, env=base_env(env), timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    # Up to all 10 are cut; fewer on a loaded machine, where a slow first size already predicts the
    # next one beyond the call limit and the routine stops growing before the budget is asked.
    m = re.search(r"the CPU pass ran out of time: (\d+) operations were not measured at their largest sizes", p.stdout)
    assert m and 1 <= int(m.group(1)) <= 10, p.stdout
    text = out.read_text()
    assert "# the CPU pass ran out of time" in text
    for op in ("sgemm", "dgemm", "cgemm", "zgemm", "spotrf", "dpotrf", "cpotrf", "zpotrf", "cheevd", "zheevd"):
        assert re.search(rf"^cpu {op} \S+$", text, re.M), op  # one point: the first round only


def test_calibrate_usage_errors(tmp_path):
    p = cli("calibrate", "--only", "geevx")
    assert p.returncode == 2 and "borrows geev's measurements" in p.stderr, p.stderr
    assert cli("calibrate", "extra").returncode == 2
    p = cli("calibrate", "--quick", "--only", "gemm", "--blas", "libnothing.so.9", "--output", tmp_path / "p")
    assert p.returncode == 1 and "libnothing.so.9" in p.stderr


def sweep_csv(rows):
    """A trace in `gpu-offload dump --csv`'s columns that auto_sweep reads: (op, n, device, seconds[,
    reason])."""
    head = "op,m,nested,query,t_start_ns,duration_ns,device,reason,flops,operands"
    lines = [head]
    for i, (op, n, device, secs, *reason) in enumerate(rows):
        nbytes = n * n * 8
        operands = f"0x1000:{nbytes}:7:0;0x2000:{nbytes}:9:0;0x3000:{nbytes}:0:5"  # A, B in; C out
        why = reason[0] if reason else ("offloaded" if device == "gpu" else "predicted slower")
        lines.append(f"{op},{n},0,0,{1000 + i},{int(secs * 1e9)},{device},{why},{2.0 * n ** 3},{operands}")
    return "\n".join(lines) + "\n"


def save_run(folder, mode, rows, startup_ms=None):
    """A run as auto_sweep.py --save leaves it: MODE.csv (sweep_csv's rows) and MODE.summary, which
    says what the GPU's start cost where startup_ms is given."""
    (folder / f"{mode}.csv").write_text(sweep_csv(rows))
    (folder / f"{mode}.summary").write_text("gpu-offload summary\n" if startup_ms is None else
                                            f"  GPU start-up: paid {startup_ms:.1f} ms, before the first GPU call\n")


def auto_sweep(load_dir, *args):
    """bench/auto_sweep.py on the runs saved in load_dir."""
    return subprocess.run([sys.executable, str(ROOT / "bench" / "auto_sweep.py"), "--build", str(BUILD), "--load",
                           str(load_dir), *args], capture_output=True, text=True)


def test_auto_sweep_counts_first_gpu_calls_apart(tmp_path):
    # The gpu run's first ssyevd (n = 32) also loads the kernels: 51 ms, 1 ms when repeated. The CPU
    # is the best there, so the per-call best never shows the load; auto pays 80 ms of it at its own
    # first offload (n = 1024). The comparison names that call apart from the steady offloads, and the
    # best plan known in advance pays the gpu run's 50 ms load of ssyevd, which it runs on the GPU.
    warm = ("dgemm", 64, "cpu", 0.001)
    save_run(tmp_path, "cpu", [warm] + [("ssyevd", 32, "cpu", 0.001)] * 2 +
                              [("ssyevd", 1024, "cpu", 0.1)] * 2)
    save_run(tmp_path, "gpu", [warm, ("ssyevd", 32, "gpu", 0.051), ("ssyevd", 32, "gpu", 0.001)] +
                              [("ssyevd", 1024, "gpu", 0.01)] * 2, startup_ms=2.0)
    save_run(tmp_path, "auto", [warm] + [("ssyevd", 32, "cpu", 0.001, "below threshold")] * 2 +
                               [("ssyevd", 1024, "gpu", 0.09), ("ssyevd", 1024, "gpu", 0.01)], startup_ms=2.0)
    r = auto_sweep(tmp_path)
    assert r.returncode == 0, r.stderr
    assert re.search(r"first GPU call of the op\s+1 calls\s+\+0\.080 s", r.stdout), r.stdout
    assert re.search(r"offloaded\s+1 calls\s+\+0\.000 s", r.stdout), r.stdout
    assert re.search(r"below threshold\s+2 calls\s+\+0\.000 s", r.stdout), r.stdout
    assert "auto 0.102 s in its calls + 0.002 s GPU start-up = 0.104 s; per-call best 0.022 s" in r.stdout, r.stdout
    assert "+ 0.050 s of first GPU calls of its 1 GPU ops = 0.074 s): auto / that = 1.405" in r.stdout, r.stdout
    # Runs saved since the traces record the GPU start take it from there (`dump --starts`), not the
    # summary's rounded text; a failed attempt costs nothing here.
    head = "file,pid,tid,t_start_ns,duration_ns,ok,message\n"
    (tmp_path / "auto.starts.csv").write_text(head + "t,1,1,5,3000000,1,\n")
    (tmp_path / "gpu.starts.csv").write_text(head + "t,2,2,5,4000000,1,\nt,2,2,9,1000000,0,\"no, none\"\n")
    r = auto_sweep(tmp_path)
    assert "auto 0.102 s in its calls + 0.003 s GPU start-up = 0.105 s;" in r.stdout, r.stdout
    assert "GPU start-up 0.004 s (the --device gpu run's)" in r.stdout, r.stdout


def test_auto_sweep_replays_against_the_per_call_minimum_of_several_gpu_runs(tmp_path):
    # The headline replays its sweep's cpu run and 3 gpu runs: the GPU side is each call's fastest gpu
    # run and the smallest start-up, as in the measured comparison. Run A: 2 ms a dgemm, 4 ms start-up;
    # run B: 1 ms, 2 ms. With B, all 20 calls on the GPU come to 0.020 s, not A's 0.040.
    require(os.path.exists(BUILD / "bin" / "replay_policy"), "replay_policy not built")
    calls = [("dgemm", 1000, "cpu", 0.1)] * 21
    save_run(tmp_path, "cpu", calls)
    save_run(tmp_path, "gpu", [("dgemm", 1000, "gpu", 0.002)] * 21, startup_ms=4.0)
    other = tmp_path / "b"
    other.mkdir()
    save_run(other, "gpu", [("dgemm", 1000, "gpu", 0.001)] * 21, startup_ms=2.0)
    fast = profile(tmp_path, 1e10, 1e12, 0.001, "fast")
    r = auto_sweep(tmp_path, "--replay", "--profile", fast)
    assert re.search(r"auto 0\.040 s in its calls \+ 0\.004 s start-up = 0\.044 s; per-call best 0\.040 s", r.stdout), r.stdout
    r = auto_sweep(tmp_path, "--replay", "--profile", fast, "--gpu-min", str(other))
    assert r.returncode == 0, r.stderr
    assert re.search(r"auto 0\.020 s in its calls \+ 0\.002 s start-up = 0\.022 s; per-call best 0\.020 s", r.stdout), r.stdout


def test_auto_sweep_replay_takes_the_first_call_charge_from_set(tmp_path):
    # --set GPU_OFFLOAD_FIRST_CALL_MS reaches the replayed decision: dtrsm's first call after the start
    # (0.1 s on the CPU, 1 ms on the GPU) gains less than 1.3 x (1 ms + 200 ms) and stays on the CPU, once;
    # its warm-up then counts as ended (the replay's GPU warms nothing) and the next ones go. dgemm's
    # first call starts the GPU and runs there, charge or not.
    require(os.path.exists(BUILD / "bin" / "replay_policy"), "replay_policy not built")
    ops = [("dgemm", 1000)] * 11 + [("dtrsm", 1000)] * 10
    save_run(tmp_path, "cpu", [(op, n, "cpu", 0.1) for op, n in ops])
    save_run(tmp_path, "gpu", [(op, n, "gpu", 0.001) for op, n in ops], startup_ms=2.0)
    fast = profile(tmp_path, 1e10, 1e12, 0.001, "fast")
    r = auto_sweep(tmp_path, "--replay", "--profile", fast)
    assert r.returncode == 0, r.stderr
    assert re.search(r"offloaded\s+20 calls", r.stdout) and "predicted slower" not in r.stdout, r.stdout
    r = auto_sweep(tmp_path, "--replay", "--profile", fast, "--set", "GPU_OFFLOAD_FIRST_CALL_MS=200")
    assert r.returncode == 0, r.stderr
    assert re.search(r"predicted slower\s+1 calls\s+\+0\.099 s", r.stdout), r.stdout
    assert re.search(r"offloaded\s+19 calls", r.stdout), r.stdout


def test_auto_sweep_worker_makes_every_call_of_the_sweep_with_valid_matrices(tmp_path):
    # The sweep's worker through the preload on the CPU, n = 32 and 64: per dtype and n, NumPy's
    # product that makes the SPD matrix (A A^T is NumPy's syrk, A A^H with its conjugate copy a zgemm),
    # then each of the eight SciPy calls twice; every factorization succeeds (potrf and the eigensolvers
    # on a matrix that is positive definite, getrf and gesv on one that is not singular).
    require(subprocess.run([sys.executable, "-c", "import scipy"], capture_output=True).returncode == 0, "no SciPy")
    p = subprocess.run([sys.executable, str(ROOT / "bench" / "auto_sweep.py"), "--build", str(BUILD), "--max-n", "64",
                        "--modes", "cpu", "--save", str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    rows = [r for r in csv.DictReader(open(tmp_path / "cpu.csv")) if r["nested"] == "0" and r["query"] == "0"]
    calls = {}
    for r in rows:
        k = (r["op"], int(r["m"]), "cblas" in r["symbol"])
        calls[k] = calls.get(k, 0) + 1
    for n in (32, 64):
        for p_, product in (("s", "ssyrk"), ("d", "dsyrk"), ("z", "zgemm")):
            assert calls.get((product, n, True)) == 1, calls
            eig = "zheevd" if p_ == "z" else p_ + "syevd"
            for op in ("gemm", "syrk", "trsm", "getrf", "gesv", "potrf", "gesdd"):
                assert calls.get((p_ + op, n, False)) == 2, (p_ + op, n, calls)
            assert calls.get((eig, n, False)) == 2, calls
    assert len(rows) == 1 + 2 * 3 * (1 + 2 * 8), len(rows)  # the warm-up, then 6 (dtype, n) groups
    assert {r["info"] for r in rows} == {"0"}, [(r["op"], r["m"], r["info"]) for r in rows if r["info"] != "0"]


def test_auto_sweep_takes_the_gpu_time_above_a_cpu_run_of_fewer_sizes(tmp_path):
    # A cpu run made with --cpu-max-n 64 has the calls of n <= 64 only; the gpu and auto runs go on to
    # n = 1024, where the gpu run's time stands for the better device. The all-on-the-CPU plan is not
    # priced then, and a call missing below the cpu run's largest n is a mismatch, not a gap.
    warm = ("dgemm", 32, "cpu", 0.001)
    small = [("dgemm", 64, "cpu", 0.002)] * 2
    save_run(tmp_path, "cpu", [warm] + small)
    save_run(tmp_path, "gpu", [warm, ("dgemm", 64, "gpu", 0.004), ("dgemm", 64, "gpu", 0.003)] +
                              [("dgemm", 1024, "gpu", 0.010)] * 2, startup_ms=5.0)
    save_run(tmp_path, "auto", [warm] + small + [("dgemm", 1024, "cpu", 0.100),
                                                 ("dgemm", 1024, "gpu", 0.010)], startup_ms=5.0)
    r = auto_sweep(tmp_path, "--json", str(tmp_path / "out.json"))
    assert r.returncode == 0, r.stderr
    # per-call best: 2 x 2 ms (CPU) + 2 x 10 ms (the GPU, no cpu time) = 24 ms; auto 4 + 100 + 10 = 114 ms
    assert "auto 0.114 s in its calls + 0.005 s GPU start-up = 0.119 s; per-call best 0.024 s" in r.stdout, r.stdout
    assert "all on the CPU not priced: the cpu run stopped at n = 64, 2 calls above it" in r.stdout, r.stdout
    d = json.load(open(tmp_path / "out.json"))
    assert d["cpu_s"] is None and d["calls_above_cpu_run"] == 2 and d["cpu_run_max_n"] == 64
    # the best plan runs dgemm on the GPU above n = 64, so it pays the gpu run's first-call load (1 ms)
    assert abs(d["best_plan_s"] - (0.005 + 0.001 + 0.024)) < 1e-9, d
    r = auto_sweep(tmp_path, "--replay")
    assert r.returncode != 0 and "--replay needs a cpu run of every call" in r.stderr, r.stderr
    (tmp_path / "cpu.csv").write_text(sweep_csv([warm, ("dgemm", 64, "cpu", 0.002)]))  # one n = 64 call missing
    r = auto_sweep(tmp_path)
    assert "no such call in the cpu run" in r.stdout and "stopping" in r.stdout, r.stdout


def test_auto_sweep_replays_measured_calls_through_the_decision(tmp_path):
    # Measured: the CPU 100 ms and the GPU 1 ms per dgemm of n = 1000 (a warm-up first); the GPU's
    # start-up 2 ms. The profile agrees (1e10 and 1e12 flop/s, 1 ms start-up, free copies): level 5
    # starts the GPU once 2 ms of savings were missed, so at the first call, which runs there; then
    # a probe would lose 99 ms against 3% of the GPU time: all 20 on the GPU.
    require(os.path.exists(BUILD / "bin" / "replay_policy"), "replay_policy not built")
    calls = [("dgemm", 1000, "cpu", 0.1)] * 21
    save_run(tmp_path, "cpu", calls)
    save_run(tmp_path, "gpu", [("dgemm", 1000, "gpu", 0.001)] * 21, startup_ms=2.0)
    fast = profile(tmp_path, 1e10, 1e12, 0.001, "fast")
    r = auto_sweep(tmp_path, "--replay", "--profile", fast)
    assert r.returncode == 0, r.stderr
    assert re.search(r"replayed 20 calls \(profile .*fast, level 5\): auto 0\.020 s in its calls \+ 0\.002 s "
                     r"start-up = 0\.022 s; per-call best 0\.020 s; ratio 1\.100", r.stdout), r.stdout
    assert re.search(r"offloaded\s+20 calls\s+\+0\.000 s", r.stdout), r.stdout
    assert "best plan known in advance 0.022 s (start the GPU first, then the better device per call); " \
           "auto / that = 1.000" in r.stdout, r.stdout
    # The offloaded calls' CPU time: the profile says 0.2 s each, the cpu run measured 0.1 s, and no
    # CPU observation corrected the prediction.
    assert re.search(r"dgemm\s+20 calls\s+predicted\s+4\.000 s\s+model\s+4\.000 s\s+measured\s+2\.000 s\s+"
                     r"predicted/measured\s+2\.00\s+model/measured\s+2\.00", r.stdout), r.stdout
    # A start-up of 1 s in the profile: the GPU starts once 2 s of savings were missed, which takes 18
    # calls on the CPU (each teaches that the CPU is 2x faster than profiled: the predicted saving
    # falls from 0.198 s towards 0.098), and the two it runs are predicted as measured; unless the
    # earlier runs of the program gained (the run history), when the first call starts it.
    late = profile(tmp_path, 1e10, 1e12, 1.0, "late")
    r = auto_sweep(tmp_path, "--replay", "--profile", late)
    assert re.search(r"GPU not started yet\s+18 calls\s+\+1\.782 s", r.stdout), r.stdout
    assert re.search(r"dgemm\s+2 calls\s+predicted\s+0\.200 s\s+model\s+0\.400 s\s+measured\s+0\.200 s", r.stdout), \
        r.stdout
    r = auto_sweep(tmp_path, "--replay", "--profile", late, "--earlier-runs", "3")
    assert re.search(r"offloaded\s+20 calls\s+\+0\.000 s", r.stdout) and "not started" not in r.stdout, r.stdout
    # A GPU slower than the CPU: nothing starts, every call stays where it is fastest.
    slow = profile(tmp_path, 1e12, 1e10, 0.001, "slow")
    r = auto_sweep(tmp_path, "--replay", "--profile", slow)
    assert "auto 2.000 s in its calls + 0.000 s start-up = 2.000 s" in r.stdout, r.stdout
    assert re.search(r"predicted slower\s+20 calls\s+\+1\.980 s", r.stdout), r.stdout
    # A malformed calls file is refused with its line.
    bad = tmp_path / "bad.calls"
    bad.write_text("dgemm 1e9 0.1 0.001 1 800\n")
    r = subprocess.run([str(BUILD / "bin" / "replay_policy"), str(bad), "0.002"], capture_output=True, text=True)
    assert r.returncode == 1 and "line 1: operand 1 incomplete" in r.stderr, r.stderr
