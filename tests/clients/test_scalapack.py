"""A real ScaLAPACK program (scalapack_client.c: pdgemm, then pdgesv, on Debian's Open MPI and
libscalapack-openmpi) under `mpirun -np 2` with the library preloaded in every rank: each rank is an
ordinary process under the preload, intercepts its own local BLAS-3 calls (dgemm_, dtrsm_ from inside
libscalapack), prints its own summary and writes its own trace, and the results are bit-identical to
the bare run (on this machine without a GPU every call stays on the CPU library)."""
import os
import re
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from conftest import CLI, CLIENTS, LIB, base_env, dump, require, run  # noqa: E402

CLIENT = CLIENTS / "scalapack_client"
MPIRUN = os.environ.get("GOFL_MPIRUN") or shutil.which("mpirun")
# As root (CI containers) Open MPI wants to be told; shared memory between the ranks, no binding
# (the ranks share a few cores with other tests).
MPI_ARGS = ["-np", "2", "--oversubscribe", "--allow-run-as-root", "--bind-to", "none", "--mca", "btl", "self,vader"]
SIZE = ["384", "32", "8"]  # n, block size, right-hand sides: local dgemm calls above the 1e6-flop threshold


@pytest.fixture(scope="module")
def bare():
    require(CLIENT.exists() and MPIRUN, "MPI and ScaLAPACK (libscalapack-openmpi-dev, openmpi-bin)")
    p = run([MPIRUN, *MPI_ARGS, str(CLIENT), *SIZE], preload=False, env=base_env({"OPENBLAS_NUM_THREADS": "1"}),
            timeout=120)
    assert "pdgesv info 0" in p.stdout and re.search(r"residual [0-9.e-]+", p.stdout), p.stdout
    return p.stdout


def summaries(stderr):
    """{pid: text} of each process's exit summary."""
    out = {}
    for block in re.split(r"(?=gpu-offload summary \(pid )", stderr)[1:]:
        out[int(re.match(r"gpu-offload summary \(pid (\d+)", block).group(1))] = block
    return out


def test_each_rank_preloaded_by_mpirun_x(bare, tmp_path):
    tdir = tmp_path / "trace"
    env = ["-x", f"LD_PRELOAD={LIB}", "-x", "GPU_OFFLOAD_SUMMARY=1", "-x", f"GPU_OFFLOAD_TRACE={tdir}"]
    p = run([MPIRUN, *MPI_ARGS, *env, str(CLIENT), *SIZE], preload=False,
            env=base_env({"OPENBLAS_NUM_THREADS": "1"}), timeout=120)
    assert p.stdout == bare
    sums = summaries(p.stderr)
    assert len(sums) == 2, p.stderr
    # Each names its rank (mpirun's OMPI_COMM_WORLD_LOCAL_RANK) and counts its own local calls.
    ranks = sorted(int(re.search(r"local rank (\d) \(OMPI_COMM_WORLD_LOCAL_RANK\)", s).group(1)) for s in sums.values())
    assert ranks == [0, 1], p.stderr
    for s in sums.values():
        assert re.search(r"^  dgemm +[1-9]\d* ", s, re.M), s
    # One trace file per rank; each holds its own dgemm calls, made from inside libscalapack.
    rows = dump(tdir)
    by_pid = {}
    for r in rows:
        by_pid.setdefault(int(r["pid"]), []).append(r)
    assert set(by_pid) == set(sums), (set(by_pid), set(sums))
    for pid, calls in by_pid.items():
        dgemm = [c for c in calls if c["op"] == "dgemm"]
        assert dgemm and any(float(c["flops"]) >= 1e6 for c in dgemm), pid
        assert any("libscalapack" in c["site_module"] for c in dgemm), dgemm[0]


def test_each_rank_under_gpu_offload_run(bare):
    """`mpirun ... gpu-offload run --summary -- PROGRAM`: the same, with the tool's options per rank."""
    p = run([MPIRUN, *MPI_ARGS, str(CLI), "run", "--summary", "--", str(CLIENT), *SIZE], preload=False,
            env=base_env({"OPENBLAS_NUM_THREADS": "1"}), timeout=120)
    assert p.stdout == bare
    assert len(summaries(p.stderr)) == 2, p.stderr
