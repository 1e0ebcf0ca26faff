#!/usr/bin/env bash
# On the GPU machine (the device tool runs this in a copy of the working tree): build there, run
# the GPU test suite and the chosen benchmarks, and leave logs under $OUT.
# Usage: scripts/device_run.sh [memwarm] [tests] [fault] [auto] [numpy-matmul] [numpy-quick] [numpy] [sweep] [sweeptwice] [small] [sweepvariants]
#                              [busy] [nvblas] [copies] [calibrate] [overhead] [firstcall] [driverprobe] [startup] [residency]
#                              [firstuse] [cpubeside] [pye2e] [copysplit] [gpus] [mpi] [split] [multigpu] [fft] [scipytests] [solveprobe] [large] [qr64probe]
#                              [headline] [line]
# The GPU tests are ctest entries with labels (tests/gpu/CMakeLists.txt): `tests` runs `ctest -L gpu_suite`,
# every GPU test but the calls of more than 2^31 elements (Ilp64Large.*: up to 53 GB of host memory and
# 60 GB on the GPU each); `large` runs those (`-L gpu_large`); `fft`, `split` and `gpus` run their label
# before their other checks. A copy setting against the defaults: set it in front of a stage, as in
# `GPU_OFFLOAD_COPY_NT=0 bash scripts/device_run.sh numpy-matmul`. PACK_OUT=1: every log in one
# archive, $OUT/logs.tgz (the device tool brings back 8 files at most).
set -uo pipefail
OUT=${OUT:-/tmp/gofl-out}
mkdir -p "$OUT"
B=/tmp/gofl-build
PY=$(command -v python3)
stages=("$@"); [ ${#stages[@]} -gt 0 ] || stages=(tests)
has() { local s; for s in "${stages[@]}"; do [ "$s" = "$1" ] && return 0; done; return 1; }

echo "== $(nvidia-smi --query-gpu=name,driver_version,memory.used,memory.total,utilization.gpu --format=csv,noheader)"
t0=$(date +%s)
if ! cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGOFL_PYTHON="$PY" > "$OUT/configure.log" 2>&1; then
  tail -40 "$OUT/configure.log"; exit 1
fi
if ! ninja -C "$B" -j16 > "$OUT/build.log" 2>&1; then
  grep -E "error|FAILED" -A4 "$OUT/build.log" | head -80; exit 1
fi
echo "== transparent huge pages: $(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null), defrag $(cat /sys/kernel/mm/transparent_hugepage/defrag 2>/dev/null)"
echo "== built in $(( $(date +%s) - t0 )) s"
export OPENBLAS_NUM_THREADS=16
# NumPy's bundled ILP64 OpenBLAS: the CPU reference for the GPU tests of the 64-bit-integer names.
GOFL_TEST_OPENBLAS64=$("$PY" -c 'import glob, os, numpy; print((glob.glob(os.path.join(os.path.dirname(numpy.__file__), os.pardir, "numpy.libs", "libscipy_openblas64_*.so")) + [""])[0])' 2>/dev/null)
export GOFL_TEST_OPENBLAS64

if has memwarm; then
  # The GPU machine is a Firecracker VM whose memory grows as it is first used (KINDS.md: about
  # 3 s for each 8 GiB). A process that lands on never-used memory pays that on each first touch,
  # and a benchmark then times the VM, not the copies. Touch MEMWARM_GB once, free it, touch it again.
  echo "== warming the VM's memory: MEMWARM_GB=${MEMWARM_GB:-48}"
  "$PY" - "${MEMWARM_GB:-48}" <<'PYEOF'
import sys, time
import numpy as np
gb = int(sys.argv[1])
mem = lambda: int(open("/proc/meminfo").read().split("MemTotal:")[1].split()[0]) // 2**20
for rnd in ("first touch", "second touch"):
    t0 = time.perf_counter(); keep = []; m0 = mem()
    for _ in range(gb // 2):
        keep.append(np.ones(2**28))  # 2 GiB
    dt = time.perf_counter() - t0
    print(f"{rnd}: {gb} GiB in {dt:.1f} s = {gb / dt:.1f} GiB/s; MemTotal {m0} -> {mem()} GiB", flush=True)
    del keep
PYEOF
fi
# The GPU tests are ctest entries (tests/gpu/CMakeLists.txt names them and their labels); each stage
# runs its label and keeps ctest's verbose output, less its test-number prefixes, in $OUT/LOG.
gpu_ctest() {
  local log=$1; shift
  ctest --test-dir "$B" -V "$@" 2>&1 | sed -E 's/^[0-9]+: //' > "$OUT/$log"
  echo "exit ${PIPESTATUS[0]}"
  grep -E "^\[  (FAILED|PASSED) |^\[==========\]|FAILED  \]|tests? (passed|failed)|Failure|error|\*\*\*" "$OUT/$log" | head -60
}
if has tests; then
  # GPU_TESTS_FILTER: only those tests of the suite (gpu_suite's filter), and the memory gate.
  if [ -n "${GPU_TESTS_FILTER:-}" ]; then sel=(-R '^(gpu_suite|gpu_memory_reserve)$'); else sel=(-L gpu_suite); fi
  echo "== GPU test suite: ctest ${sel[*]} (every test but Ilp64Large.*; the memory gate with a reserve larger than the card)"
  gpu_ctest gpu_tests.log "${sel[@]}" --timeout ${GPU_TESTS_TIMEOUT:-300}
  grep -E "^\[       OK \]" "$OUT/gpu_tests.log" | sort -t'(' -k2 -n -r | head -5
fi
if has large; then
  echo "== calls of more than 2^31 elements through the 64_ names: ctest -L gpu_large (Ilp64Large.*)"
  free -g | head -2
  gpu_ctest gpu_large.log -L gpu_large --timeout ${LARGE_TIMEOUT:-540}
  grep -E "SKIPPED|Skipped|Expected|Which is|GPU |CPU |^\[       OK \]" "$OUT/gpu_large.log" | head -40
fi
if has qr64probe; then
  # Each step of a least-squares solve beyond 2^31 elements in its own process (bench/probes/qr64_probe.cpp).
  echo "== the steps of ?gels beyond 2^31 elements, one process each (bench/probes/qr64_probe.cpp)"
  for step in ${QR64_STEPS:-iamax-pieces iamax-whole asum-whole geqrf diag-copy trsm}; do
    timeout 120 "$B/bin/qr64_probe" "$step" ${QR64_ROWS:-1075000000} ${QR64_COLS:-2} 2>&1 | tail -4; echo "exit $?"
  done
fi
if has firstcall; then
  echo "== the first GPU call of each routine (bench/first_call.py)"
  timeout ${FIRSTCALL_TIMEOUT:-240} "$PY" bench/first_call.py --build "$B" --n ${FIRSTCALL_N:-1024} 2>&1 | tee "$OUT/first_call.log"
fi
if has driverprobe; then
  echo "== the CUDA driver step in fresh Python processes, after NumPy and OpenBLAS (bench/probes/driver_start_probe.py)"
  timeout 240 "$PY" bench/probes/driver_start_probe.py --reps ${DRIVER_PROBE_REPS:-5} ${DRIVER_PROBE_ARGS:-} 2>&1 | tee "$OUT/driver_probe.log"
fi
if has startup; then
  echo "== one-time costs: loading the CUDA libraries, the first GPU call of each routine, the start's steps (bench/startup_costs.py)"
  timeout ${STARTUP_TIMEOUT:-420} "$PY" bench/startup_costs.py --build "$B" --n ${FIRSTCALL_N:-1024} ${STARTUP_ARGS:-} 2>&1 | tee "$OUT/startup_costs.log"
fi
if has fault; then
  echo "== NumPy under --device gpu and --verify, with summary"
  "$B/bin/gpu-offload" run --device gpu --summary -- "$PY" -c '
import numpy as np
r = np.random.default_rng(0); a = r.standard_normal((3000, 3000)); b = r.standard_normal((3000, 3000))
c = a @ b; s = a @ a.T + 3000 * np.eye(3000)
print("matmul err", abs(c - np.dot(a.copy(order="F"), b)).max())
print("solve", abs(s @ np.linalg.solve(s, b[:, :5]) - b[:, :5]).max(), "chol", np.linalg.cholesky(s)[5, 3])
print("eigh", np.linalg.eigvalsh(s)[:2], "svd", np.linalg.svd(a[:800, :600], compute_uv=False)[:2])' 2>&1 | tail -20
  "$B/bin/gpu-offload" run --device gpu --verify --summary -- "$PY" -c '
import numpy as np
r = np.random.default_rng(1); a = r.standard_normal((1000, 1000)); s = a @ a.T + 1000 * np.eye(1000)
np.linalg.solve(s, a); np.linalg.eigh(s); np.linalg.svd(a); np.linalg.cholesky(s); np.linalg.qr(a); np.linalg.eig(a[:300,:300])' 2>&1 | tail -12
  echo "== a failing GPU step: the CPU runs the call, and the summary says what failed where (GPU_OFFLOAD_FAULT=compute)"
  GPU_OFFLOAD_FAULT=compute "$B/bin/gpu-offload" run --device gpu --summary -- "$PY" -c '
import numpy as np
a = np.random.default_rng(2).standard_normal((2000, 2000)); print("matmul err", abs(a @ a - np.dot(a.copy(order="F"), a)).max())' 2>&1 | grep -E "err|where calls|GPU failures"
  echo "== verify catches a corrupted GPU result (GPU_OFFLOAD_FAULT=corrupt)"
  GPU_OFFLOAD_FAULT=corrupt "$B/bin/gpu-offload" run --device gpu --verify --summary -- "$PY" -c '
import numpy as np
a = np.random.default_rng(2).standard_normal((1000, 1000)); print((a @ a.T.copy()).sum())' 2>&1 | tail -8
fi
if has auto; then
  echo "== --device auto: NumPy a @ b (n = 4096) five times, then the report of a traced GPU run"
  T=$(mktemp -d)
  "$B/bin/gpu-offload" run --summary --trace "$T/auto" -- "$PY" -c '
import numpy as np, time
r = np.random.default_rng(0); a = r.standard_normal((4096, 4096)); b = r.standard_normal((4096, 4096))
for i in range(5):
    t0 = time.perf_counter(); c = a @ b; print(i, round(time.perf_counter() - t0, 4), flush=True)' 2>&1 | tail -14
  "$B/bin/gpu-offload" run --device gpu --trace "$T/gpu" -- "$PY" -c '
import numpy as np
r = np.random.default_rng(0); a = r.standard_normal((3000, 3000)); s = a @ a.T + 3000 * np.eye(3000)
for _ in range(3): c = a @ s; np.linalg.solve(s, a[:, :100]); np.linalg.cholesky(s); np.linalg.eigh(s[:1500, :1500])' > /dev/null 2>&1
  "$B/bin/gpu-offload" dump --starts "$T/gpu"
  "$B/bin/gpu-offload" report "$T/gpu" --html "$OUT/gpu_report.html" && "$B/bin/gpu-offload" report "$T/gpu" | head -40
fi
if has numpy-matmul; then
  echo "== NumPy a @ b (quick)"; timeout 120 "$PY" bench/numpy_bench.py --build "$B" --quick --only "a @ b" 2>&1 | tee "$OUT/numpy_bench.log"
fi
if has numpy-quick; then
  echo "== NumPy benchmark (quick)"; timeout 200 "$PY" bench/numpy_bench.py --build "$B" --quick 2>&1 | tee "$OUT/numpy_bench.log"
fi
if has numpy; then
  echo "== NumPy benchmark"; timeout ${NUMPY_TIMEOUT:-480} "$PY" bench/numpy_bench.py --build "$B" --reps ${NUMPY_REPS:-3} --max-cpu-n ${NUMPY_MAX_CPU_N:-8192} ${NUMPY_ONLY:+--only "$NUMPY_ONLY"} 2>&1 | tee "$OUT/numpy_bench.log"
fi
if has sweep; then
  echo "== --device auto against the better device per call (bench/auto_sweep.py)"
  # SWEEP_MODES (default: the runs SWEEP_LOAD lacks) and SWEEP_LOAD (a folder of an earlier call's $OUT/sweep,
  # carried in the working tree) split the three runs of a large sweep over two device calls.
  timeout ${SWEEP_TIMEOUT:-300} "$PY" bench/auto_sweep.py --build "$B" --max-n ${SWEEP_MAX_N:-16384} \
    --complex-max ${SWEEP_COMPLEX_MAX:-8192} --level ${SWEEP_LEVEL:-5} ${PROFILE:+--profile "$PROFILE"} ${SWEEP_MODES:+--modes "$SWEEP_MODES"} \
    --save "$OUT/sweep" ${SWEEP_LOAD:+--load "$SWEEP_LOAD"} 2>&1 | tee "$OUT/auto_sweep.log" | tail -${SWEEP_TAIL:-200}
  # One file: the device returns at most eight (the runs' traces were left behind once). Unpack it
  # into the working tree for SWEEP_LOAD or `auto_sweep.py --load DIR --replay`.
  [ -d "$OUT/sweep" ] && tar -czf "$OUT/sweep.tgz" -C "$OUT" sweep && rm -rf "$OUT/sweep"
fi
if has sweeptwice; then
  # The sweep's auto run twice in a row, the second with the first's run history (a fresh
  # cache folder, so that the first has none), each against the same cpu and gpu runs: by default the
  # saved ones of SWEEP_LOAD (the cpu run alone is ~370 s); SWEEP_TWICE_MODES=gpu,auto reruns gpu too.
  load=${SWEEP_LOAD:-bench/results/h200-sweep-2026-11-29}
  # SWEEP_SET: settings for the runs made, space-separated GPU_OFFLOAD_NAME=VALUE (the sweep passes none of its own).
  sets=(); for kv in ${SWEEP_SET:-}; do sets+=(--set "$kv"); done
  echo "== the sweep's auto run at level ${SWEEP_LEVEL:-5}, twice: the second with the first's history (bench/auto_sweep.py, runs of $load)"
  export XDG_CACHE_HOME=/tmp/gofl-sweep-cache; rm -rf "$XDG_CACHE_HOME" /tmp/gofl-sweep-1 /tmp/gofl-sweep-2
  timeout ${SWEEP_TIMEOUT:-300} "$PY" bench/auto_sweep.py --build "$B" --max-n ${SWEEP_MAX_N:-16384} \
    --complex-max ${SWEEP_COMPLEX_MAX:-8192} --level ${SWEEP_LEVEL:-5} --load "$load" --modes ${SWEEP_TWICE_MODES:-auto} "${sets[@]}" \
    --save /tmp/gofl-sweep-1 2>&1 | tee "$OUT/sweep_first.log" | tail -${SWEEP_TAIL:-30}
  for f in "$load"/*; do [ -e "/tmp/gofl-sweep-1/$(basename "$f")" ] || cp "$f" /tmp/gofl-sweep-1/; done
  echo "== the second auto run (history: $(tail -n +2 $XDG_CACHE_HOME/gpu-offload/history 2>/dev/null | tr '\n' ';'))"
  timeout ${SWEEP2_TIMEOUT:-200} "$PY" bench/auto_sweep.py --build "$B" --max-n ${SWEEP_MAX_N:-16384} \
    --complex-max ${SWEEP_COMPLEX_MAX:-8192} --level ${SWEEP_LEVEL:-5} --load /tmp/gofl-sweep-1 --modes auto "${sets[@]}" \
    --save /tmp/gofl-sweep-2 2>&1 | tee "$OUT/sweep_second.log" | tail -${SWEEP_TAIL:-30}
  for r in 1 2; do echo "-- auto run $r:"; grep -E "GPU start-up|warmed beside" /tmp/gofl-sweep-$r/auto.summary; done
  cp "$XDG_CACHE_HOME/gpu-offload/history" "$OUT/sweep_history.txt" 2>/dev/null
  # The runs' traced calls, for a look here afterwards (a few hundred kB each).
  for r in 1 2; do
    for x in summary csv setup.csv; do cp /tmp/gofl-sweep-$r/auto.$x "$OUT/sweep-$r-auto.$x" 2>/dev/null; done
  done
  unset XDG_CACHE_HOME
fi
if has sweepvariants; then
  # One quick sweep (n <= 2048) on the CPU and the GPU, then its auto run under each setting of
  # SWEEP_VARIANTS ("-" for none), each with a fresh cache folder (no run history): what a setting
  # changes, side by side in one device call. The CPU calls that took over 10 ms are listed for each.
  # The output goes to sweepvariants.log too, and the saved runs to sweepvariants-runs.tgz.
  {
  echo "== quick sweep: cpu and gpu once, auto under each of: ${SWEEP_VARIANTS:--}"
  rm -rf /tmp/gofl-qs /tmp/gofl-qs-[0-9]* /tmp/gofl-qs-cache-*; timeout 200 "$PY" bench/auto_sweep.py --build "$B" --quick --modes cpu,gpu --save /tmp/gofl-qs 2>&1 | tail -2
  i=0
  for v in ${SWEEP_VARIANTS:--}; do
    i=$((i + 1)); sets=(); [ "$v" = - ] || for kv in ${v//,/ }; do sets+=(--set "$kv"); done
    echo "-- auto with ${v}:"
    XDG_CACHE_HOME=/tmp/gofl-qs-cache-$i timeout 200 "$PY" bench/auto_sweep.py --build "$B" --quick --load /tmp/gofl-qs \
      --modes auto "${sets[@]}" --save /tmp/gofl-qs-$i 2>&1 | grep -E "^total|best plan|^  [a-zA-Z ]+ +[0-9]+ calls"
    grep -E "GPU start-up: paid|spared" /tmp/gofl-qs-$i/auto.summary
    "$PY" - /tmp/gofl-qs-$i/auto.csv <<'PYEOF'
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["depth"] == "0"]
slow = [f"{r['op']}{r['n']}:{int(r['duration_ns']) / 1e6:.0f}{'*' if r.get('core_spared') == '1' else ''}"
        for r in rows if r["device"] == "cpu" and int(r["duration_ns"]) > 10e6]
print("   CPU calls over 10 ms (* a core spared):", " ".join(slow))
PYEOF
  done
  } 2>&1 | tee "$OUT/sweepvariants.log"
  (cd /tmp && tar -czf "$OUT/sweepvariants-runs.tgz" gofl-qs gofl-qs-[0-9]*)
fi
if has fft; then
  # FFTW on cuFFT: the GPU tests of every kind and layout, then the benchmark against FFTW with
  # 16 threads, copies included, and --device auto on small and large transforms.
  echo "== FFT GPU tests: ctest -L gpu_fft (Fft.*)"
  gpu_ctest fft_tests.log -L gpu_fft --timeout 300
  echo "== --verify on every kind of FFT (fftw_offload_client): no mismatch; then a corrupted GPU result is caught"
  "$B/bin/gpu-offload" run --device gpu --verify --summary -- "$B/tests/clients/fftw_offload_client" 2>&1 >/dev/null | tail -12
  GPU_OFFLOAD_FAULT=corrupt "$B/bin/gpu-offload" run --device gpu --verify -- "$B/tests/clients/fftw_offload_client" 2>&1 >/dev/null |
    grep -c "verify: .*differ" | sed 's/^/mismatches reported under GPU_OFFLOAD_FAULT=corrupt (want > 0): /'
  echo "== FFTW headers and threads libraries on this host"
  ls /usr/include/fftw3.h 2>&1; ldconfig -p | grep -E "libfftw3(f)?(_threads|_omp)?\.so\.3 " || echo "no libfftw3 runtime libraries"
  echo "== FFT benchmark (bench/fft_bench.sh)"
  timeout ${FFT_TIMEOUT:-500} bench/fft_bench.sh "$B" ${FFT_THREADS:-16} 2>&1 | tee "$OUT/fft_bench.log"
fi
if has residency; then
  echo "== residency: loops reusing an unchanged operand (bench/residency_bench.py)"
  timeout ${RESIDENCY_TIMEOUT:-420} "$PY" bench/residency_bench.py --build "$B" --n ${RESIDENCY_N:-8192} --iters ${RESIDENCY_ITERS:-20} \
    ${RESIDENCY_ONLY:+--only "$RESIDENCY_ONLY"} 2>&1 | tee "$OUT/residency_bench.log"
  echo "== where one A @ X_i call's time goes with residency on (trace of the last calls)"
  T=$(mktemp -d)
  "$B/bin/gpu-offload" run --device gpu --trace "$T/res" -- "$PY" -c '
import time, numpy as np
r = np.random.default_rng(0); A = r.standard_normal((8192, 8192)); ms = []
for i in range(12):
    X = r.standard_normal((8192, 256)); t0 = time.perf_counter(); Y = A @ X; ms.append((time.perf_counter() - t0) * 1e3)
print("A @ X_i as the program times it, ms:", " ".join(f"{t:.3f}" for t in ms))' 2>&1 | grep "as the program"
  # gap_ms: the program's own time since the previous call ended (NumPy making X_i and the result).
  "$B/bin/gpu-offload" dump --csv "$T/res" | awk -F, 'NR == 1 { print "op duration_ms gap_ms copy_in_ms compute_ms copy_out_ms operands"; next }
    { if (prev) printf "%s %.3f %.3f %.3f %.3f %.3f %s\n", $4, $24 / 1e6, ($23 - prev) / 1e6, $29 * 1e3, $30 * 1e3, $31 * 1e3, $28; prev = $23 + $24 }'
  # The factors of a dominant matrix (no row interchanges), then of a general one (almost every row
  # interchanged), with the interchanges applied on the host copy of B (the default) and by cuSOLVER's
  # laswp (GPU_OFFLOAD_GETRS_SWAPS=gpu).
  for case in "host|M @ M.T + 8192 * np.eye(8192)" "host|M" "gpu|M"; do
    M=${case#*|}; export GPU_OFFLOAD_GETRS_SWAPS=${case%%|*}
    echo "-- getrs on the kept factors of lu_factor($M), GPU_OFFLOAD_GETRS_SWAPS=$GPU_OFFLOAD_GETRS_SWAPS"
    rm -rf "$T/lu"
    "$B/bin/gpu-offload" run --device gpu --trace "$T/lu" -- "$PY" -c '
import sys, numpy as np, scipy.linalg as sl
r = np.random.default_rng(0); M = r.standard_normal((8192, 8192)); lu = sl.lu_factor(eval(sys.argv[1]))
for i in range(8): sl.lu_solve(lu, r.standard_normal((8192, 256)))' "$M" >/dev/null 2>&1
    "$B/bin/gpu-offload" dump --csv "$T/lu" | awk -F, 'NR == 1 || $4 ~ /getrs/ { print $4, $24, $29, $30, $31 }'
  done
  unset GPU_OFFLOAD_GETRS_SWAPS
  echo "== the host watch's costs on this machine (unit benchmark)"
  "$B/bin/unit_tests" --gtest_filter='*Benchmark*' --gtest_also_run_disabled_tests 2>&1 | grep -vE "^\[( RUN|       OK|==========|----------)" | head -30
  echo "== residency under --verify: every GPU result compared with the CPU's"
  "$B/bin/gpu-offload" run --device gpu --verify --summary -- "$PY" -c '
import numpy as np, scipy.linalg as sl
r = np.random.default_rng(3); A = r.standard_normal((3000, 3000)); S = A @ A.T + 3000 * np.eye(3000)
lu = sl.lu_factor(S)
for i in range(6):
    X = r.standard_normal((3000, 64)); A @ X; sl.lu_solve(lu, X); A @ r.standard_normal(3000)
    if i == 3: A[5, 5] += 1.0' 2>&1 | tail -8
fi
if has firstuse; then
  # A CUDA library routine's first call inside one bare process, and paid on a second thread (bench/probes/first_use_probe.cpp).
  echo "== first uses inside one process (bench/probes/first_use_probe.cpp, n = ${FIRSTUSE_N:-1024})"
  for args in "seq" "small 64" "small 256" "helper"; do
    echo "-- first_use_probe $args ${FIRSTUSE_N:-1024}"; timeout 120 "$B/bin/first_use_probe" $args ${FIRSTUSE_N:-1024} 2>&1
  done
  echo "-- CUDA_MODULE_LOADING=EAGER first_use_probe seq ${FIRSTUSE_N:-1024}"
  CUDA_MODULE_LOADING=EAGER timeout 120 "$B/bin/first_use_probe" seq ${FIRSTUSE_N:-1024} 2>&1
fi
if has cpubeside; then
  # Is a CPU call slowed while a second thread makes CUDA libraries' first calls (the warming thread's
  # work)? The calling thread runs OpenBLAS's dgetrf back to back (bench/probes/first_use_probe.cpp cpu).
  echo "== a CPU dgetrf of n = ${CPUBESIDE_N:-512} beside a thread making CUDA libraries' first calls (bench/probes/first_use_probe.cpp cpu)"
  # Each variant: OpenBLAS threads, the helper's nice (or idle, none), and optionally the count the
  # loop runs with, set at run time (the spared core: 16 threads made, 15 used).
  IFS=, read -ra variants <<< "${CPUBESIDE_VARIANTS:-16 19,16 0,16 none,15 19,1 19,16 idle,16 idle 15}"
  for v in "${variants[@]}"; do
    set -- $v
    OPENBLAS_NUM_THREADS=$1 SET_THREADS=${3:-} timeout 60 "$B/bin/first_use_probe" cpu $2 ${CPUBESIDE_N:-512} 2>&1
  done
  echo "-- the kernel: $(uname -rv); preemption: $(zcat /proc/config.gz 2>/dev/null | grep -E '^CONFIG_PREEMPT_(NONE|VOLUNTARY|DYNAMIC)=' | tr '\n' ' ')"
fi
if has solveprobe; then
  echo "== an LU solve on kept factors: cuSOLVER getrs against laswp + trsm (bench/probes/solve_probe.cpp)"
  "$B/bin/solve_probe" 8192 16 256 1024 2>&1 | tee "$OUT/solve_probe.log"
fi
if has pye2e; then
  # About six minutes on the GPU test machine (one repetition at 8192; the CPU's svd/lstsq only at 4096).
  echo "== Python end to end: NumPy, SciPy as usually called, SciPy the fast way; CPU and GPU (bench/python_e2e.py)"
  # PYE2E_CASES=svd,lstsq PYE2E_FULL=--full: only those, the CPU's too at every size.
  timeout ${PYE2E_TIMEOUT:-540} "$PY" bench/python_e2e.py --build "$B" --sizes ${PYE2E_SIZES:-4096,8192} \
    --cases ${PYE2E_CASES:-solve,cholesky,eigh,svd,lstsq} ${PYE2E_FULL:-} --json "$OUT/python_e2e.json" 2>&1 | tee "$OUT/python_e2e.log"
  echo "== the report and summary of numpy.linalg.solve at n = 8192 under --device gpu"
  T=$(mktemp -d)
  "$B/bin/gpu-offload" run --device gpu --summary --trace "$T/np" -- "$PY" -c '
import numpy as np
r = np.random.default_rng(0); A = r.standard_normal((8192, 8192)); b = r.standard_normal(8192)
for i in range(2): np.linalg.solve(A, b)' 2>&1 | tail -12
  "$B/bin/gpu-offload" report "$T/np" | sed -n '/In short/,/^$/p;/^Converting data/,/README: From Python/p'
  echo "== could a ?copy wrapper convert faster? NumPy's n strided copies, ways that give the same bytes (bench/probes/strided_copy.c)"
  cc -O2 -fopenmp bench/probes/strided_copy.c -o "$T/strided_copy" -ldl && OPENBLAS_NUM_THREADS=1 "$T/strided_copy" \
    "$GOFL_TEST_OPENBLAS64" 8192 2 4 8 16 2>&1 | tee "$OUT/strided_copy.log"
fi
if has copysplit; then
  # Split copies (src/preload/copy_split.h), about seven minutes on the GPU test machine: per ?copy call, then NumPy
  # end to end at 4096 and 8192 with them off and on (the CPU's svd and lstsq at 8192 last; what
  # PYSPLIT_BUDGET seconds leave out shows as '-').
  T=$(mktemp -d)
  echo "== NumPy's conversion copies per call: bare, split off, split on 4/8/16 threads (bench/copy_split.py)"
  cc -O2 bench/copy_split.c -o "$T/copy_split" -ldl && "$PY" bench/copy_split.py --exe "$T/copy_split" \
    --lib "$B/lib/libgpuoffload.so" --blas "$GOFL_TEST_OPENBLAS64" --sizes ${COPYSPLIT_SIZES:-256,512,1024,2048,4096,8192} \
    --threads ${COPYSPLIT_THREADS:-4,8,16} 2>&1 | tee "$OUT/copy_split.log"
  echo "== contiguous rows (never split): one thread against several (bench/probes/strided_copy.c --contiguous)"
  cc -O2 -fopenmp bench/probes/strided_copy.c -o "$T/strided_copy" -ldl && OPENBLAS_NUM_THREADS=1 "$T/strided_copy" \
    --contiguous "$GOFL_TEST_OPENBLAS64" ${CONTIGUOUS_N:-8192} 4 16 2>&1 | tee "$OUT/contiguous_copy.log"
  echo "== NumPy end to end, split copies off and on, CPU and GPU (bench/python_e2e.py --split)"
  timeout ${PYSPLIT_TIMEOUT:-420} "$PY" bench/python_e2e.py --build "$B" --sizes ${PYSPLIT_SIZES:-4096,8192} \
    --variants numpy --split --full --budget ${PYSPLIT_BUDGET:-360} --json "$OUT/python_split.json" 2>&1 \
    | tee "$OUT/python_split.log"
  echo "== the summary and report of numpy.linalg.solve at n = 8192 under --device gpu, split copies on"
  "$B/bin/gpu-offload" run --device gpu --summary --trace "$T/np" -- "$PY" -c '
import numpy as np
r = np.random.default_rng(0); A = r.standard_normal((8192, 8192)); b = r.standard_normal(8192)
for i in range(2): np.linalg.solve(A, b)' 2>&1 | tail -12
  "$B/bin/gpu-offload" report "$T/np" | sed -n '/In short/,/^$/p;/^Converting data/,/README: From Python/p'
  "$B/bin/gpu-offload" dump --csv "$T/np" | "$PY" -c '
import csv, sys
rows = [r for r in csv.DictReader(sys.stdin) if r["op"] == "dcopy" and r["nested"] == "0"]
split = [r for r in rows if r["copy_split"] == "1"]
seconds = sum(int(r["duration_ns"]) for r in rows) * 1e-9
print("dcopy calls: %d, split: %d, in them: %.3f s" % (len(rows), len(split), seconds))'
fi
if has gpus; then
  # A GPU per process (src/common/gpu_placement.h) on the GPUs this machine has: ranks, CUDA_VISIBLE_DEVICES,
  # the GPU setting, a GPU another program holds. Each check prints PASS or FAIL.
  echo "== a GPU per process: the GPUs here"
  nvidia-smi --query-gpu=index,pci.bus_id,name,memory.used,memory.total,utilization.gpu --format=csv,noheader
  T=$(mktemp -d); G="$B/bin/gpu-offload"; ngpu=$(nvidia-smi -L | grep -c "^GPU ")
  prog='import numpy as np
r = np.random.default_rng(0); a = r.standard_normal((3000, 3000)); c = a @ a.T; x = np.linalg.solve(c + 3000 * np.eye(3000), a[:, :8])
print("checksum %.9g %.9g" % (c.trace(), x.sum()))'
  expect=$("$PY" -c "$prog")
  pf() { if eval "$2"; then echo "PASS: $1"; else echo "FAIL: $1"; fi; }
  gpu_of() { sed -n 's/^  GPU: \([0-9]*\) of \([0-9]*\),.*/\1/p' "$1" | head -1; }
  show() { grep -E "^gpu-offload summary|^  GPU: |^  where calls|cannot be used" "$1" | sed 's/^/    /'; }
  echo "-- two processes started together with fake ranks OMPI_COMM_WORLD_LOCAL_RANK=0 and 1 (expect GPU rank % $ngpu)"
  for r in 0 1; do OMPI_COMM_WORLD_LOCAL_RANK=$r "$G" run --device gpu --summary -- "$PY" -c "$prog" > "$T/r$r.out" 2> "$T/r$r.err" & done; wait
  for r in 0 1; do
    show "$T/r$r.err"
    pf "rank $r: result as on the CPU" '[ "$(cat $T/r$r.out)" = "$expect" ]'
    pf "rank $r: on GPU $(( r % ngpu )), chosen by its local rank$([ "$ngpu" = 1 ] && echo ' (the only GPU)')" \
       '[ "$(gpu_of $T/r$r.err)" = "$(( r % ngpu ))" ] && grep -q "local rank $r (OMPI_COMM_WORLD_LOCAL_RANK)" $T/r$r.err'
  done
  echo "-- two processes started together without ranks (expect the least loaded GPU each; one GPU: both on 0)"
  for r in 0 1; do "$G" run --device gpu --summary --trace "$T/load" -- "$PY" -c "$prog" > "$T/l$r.out" 2> "$T/l$r.err" & done; wait
  for r in 0 1; do show "$T/l$r.err"; pf "process $r: result as on the CPU, on a GPU" '[ "$(cat $T/l$r.out)" = "$expect" ] && [ -n "$(gpu_of $T/l$r.err)" ]'; done
  "$G" dump --starts "$T/load"
  "$G" report "$T/load" | grep -A1 "The GPU calls ran on"
  echo "-- CUDA_VISIBLE_DEVICES"
  uuid=$(nvidia-smi --query-gpu=uuid --format=csv,noheader | tail -1)
  for vis in "$(( ngpu - 1 ))" "$uuid" "" "$ngpu"; do
    CUDA_VISIBLE_DEVICES="$vis" "$G" run --device gpu --summary -- "$PY" -c "$prog" > "$T/v.out" 2> "$T/v.err"; rc=$?
    show "$T/v.err"
    if [ "$vis" = "" ] || [ "$vis" = "$ngpu" ]; then
      pf "CUDA_VISIBLE_DEVICES='$vis': no GPU, every call on the CPU, result right" '[ $rc = 0 ] && [ "$(cat $T/v.out)" = "$expect" ] && grep -q "cannot be used" $T/v.err'
    else
      pf "CUDA_VISIBLE_DEVICES='$vis': GPU 0 of 1 (the one named), result right" '[ $rc = 0 ] && [ "$(cat $T/v.out)" = "$expect" ] && grep -q "^  GPU: 0 of 1," $T/v.err'
    fi
  done
  echo "-- the GPU setting"
  "$G" run --device gpu --summary --gpus "$(( ngpu - 1 ))" -- "$PY" -c "$prog" > "$T/g.out" 2> "$T/g.err"; show "$T/g.err"
  pf "--gpus $(( ngpu - 1 )): that GPU" '[ "$(gpu_of $T/g.err)" = "$(( ngpu - 1 ))" ] && [ "$(cat $T/g.out)" = "$expect" ]'
  GPU_OFFLOAD_GPUS=$ngpu "$G" run --device gpu --summary -- "$PY" -c "$prog" > "$T/g.out" 2> "$T/g.err"; rc=$?; show "$T/g.err"
  pf "GPU_OFFLOAD_GPUS=$ngpu (not there): a message, the CPU, the right result" '[ $rc = 0 ] && grep -q "names no visible GPU" $T/g.err && [ "$(cat $T/g.out)" = "$expect" ]'
  echo "-- GPU $(( ngpu - 1 )) held by another process (PyTorch: 60% of its memory, kept busy)"
  CUDA_VISIBLE_DEVICES=$(( ngpu - 1 )) "$PY" -c '
import time, torch
free, total = torch.cuda.mem_get_info(); hold = torch.empty(int(total * 0.6) // 4, dtype=torch.float32, device="cuda")
a = torch.randn(8192, 8192, device="cuda"); print("holding", hold.numel() * 4 >> 30, "GiB", flush=True); t = time.time()
while time.time() - t < 40: a @ a; torch.cuda.synchronize()' > "$T/hog.out" 2>&1 &
  hog=$!; sleep 8; cat "$T/hog.out"; nvidia-smi --query-gpu=index,memory.used,utilization.gpu --format=csv,noheader
  for mode in gpu auto; do
    "$G" run --device $mode --summary -- "$PY" -c "$prog" > "$T/b.out" 2> "$T/b.err"; rc=$?; show "$T/b.err"
    if [ "$ngpu" = 1 ] && [ $mode = gpu ]; then
      pf "--device gpu on the busy GPU: the summary reports its load, nothing fails" '[ $rc = 0 ] && [ "$(cat $T/b.out)" = "$expect" ] && grep -q "at the start [0-9]*% of its memory in use" $T/b.err'
    elif [ "$ngpu" = 1 ]; then
      pf "--device auto beside the busy GPU: nothing fails (the reasons above say where the calls ran)" '[ $rc = 0 ] && [ "$(cat $T/b.out)" = "$expect" ]'
    else
      pf "--device $mode: another GPU than the busy one, nothing fails" '[ $rc = 0 ] && [ "$(cat $T/b.out)" = "$expect" ] && [ "$(gpu_of $T/b.err)" != "$(( ngpu - 1 ))" ]'
    fi
  done
  kill $hog 2>/dev/null; wait $hog 2>/dev/null
  echo "-- a program's own CUDA context stays current: ctest -L gpu_placement (Placement.*)"
  gpu_ctest placement_tests.log -L gpu_placement --timeout 120
  rm -rf "$T"
fi
if has mpi; then
  # ScaLAPACK under mpirun, each rank preloaded (bench/scalapack_mpi.sh): Open MPI and ScaLAPACK come from
  # the Debian packages scripts/fetch_mpi_debs.sh put in .debs/ (carry it), unpacked here with dpkg -x.
  M=/tmp/gofl-mpi; rm -rf "$M"; mkdir -p "$M"
  if ! ls .debs/*.deb > /dev/null 2>&1; then echo "FAIL: no .debs/*.deb (run scripts/fetch_mpi_debs.sh and carry .debs)"
  else
    for d in .debs/*.deb; do dpkg -x "$d" "$M"; done
    for dev in ${MPI_DEVICES:-gpu auto}; do
      MPI_ROOT=$M RANKS=${MPI_RANKS:-2} DEVICE=$dev timeout ${MPI_TIMEOUT:-280} bench/scalapack_mpi.sh "$B" ${MPI_N:-8192} ${MPI_NB:-512} ${MPI_NRHS:-256} 2>&1 | tee -a "$OUT/scalapack_mpi.log"
    done
  fi
fi
if has split; then
  # One call over several GPUs (src/cuda/split.h) forced on every call the split engines run, on however
  # many GPUs are here (one included): each split routine against the CPU library, and the fallbacks.
  echo "== split path: ctest -L gpu_split (GPU_OFFLOAD_SPLIT=force gpu_tests --gtest_filter='SplitCall*')"
  gpu_ctest split_tests.log -L gpu_split --timeout ${SPLIT_TIMEOUT:-300}
  grep -E "differs|not split" "$OUT/split_tests.log" | head -20
  echo "== --split force on NumPy (--verify: every split result compared with the CPU's), with summary"
  "$B/bin/gpu-offload" run --device gpu --split force --summary -- "$PY" -c '
import numpy as np, scipy.linalg as sl
r = np.random.default_rng(0); a = r.standard_normal((3000, 3000)); s = a @ a.T + 3000 * np.eye(3000)
c = a @ s; lu, piv = sl.lu_factor(a); x = sl.lu_solve((lu, piv), s[:, :7]); L = sl.cholesky(s, lower=True)
print("matmul", abs(c - np.dot(a.copy(order="F"), s)).max(), "lu_solve", abs(a @ x - s[:, :7]).max(), "chol", abs(L @ L.T - s).max())' 2>&1 | tail -16
fi
if has multigpu; then
  # The toolkit's multi-GPU engines in one process (bench/probes/multigpu_probe.cpp): cuBLASXt dgemm from pageable
  # buffers on one GPU and on all, cusolverMg's set-up; against gpu-offload's own one-GPU dgemm_ (the same
  # C program as the NVBLAS comparison).
  sizes=${MULTIGPU_SIZES:-8192 16384}; ngpu=$(nvidia-smi -L | grep -c "^GPU ")
  echo "== multi-GPU engines (bench/probes/multigpu_probe.cpp), n = $sizes"
  timeout ${MULTIGPU_TIMEOUT:-300} "$B/bin/multigpu_probe" 0 $sizes 2>&1 | tee -a "$OUT/multigpu.log"
  [ "$ngpu" -gt 1 ] && timeout ${MULTIGPU_TIMEOUT:-300} "$B/bin/multigpu_probe" all $sizes 2>&1 | tee -a "$OUT/multigpu.log"
  echo "-- gpu-offload --device gpu, one GPU, the same dgemm_ from a C program (median of 3; 1 at n >= 16384)"
  cc -O2 bench/dgemm_client.c -o /tmp/gofl-dgemm -L/usr/lib/x86_64-linux-gnu/openblas-pthread -lopenblas \
     -Wl,-rpath,/usr/lib/x86_64-linux-gnu/openblas-pthread &&
  for n in $sizes; do
    reps=3; [ "$n" -ge 16384 ] && reps=1
    echo "n $n: $("$B/bin/gpu-offload" run --device gpu -- /tmp/gofl-dgemm "$n" "$reps" 2>&1 | tail -1)"
  done
  # One call: the CPU, one GPU (--split off), the split path on every usable GPU (--split force) and what
  # --split auto chooses (the same as one GPU when only one is usable). bench/multigpu_bench.c, one run each.
  # MULTIGPU_CASES: "ROUTINE:N ..."; MULTIGPU_CPU_CASES: those the CPU runs too (its dgemm 32768 takes about a
  # minute and its dsyevd 16384 several: left out unless named).
  echo "== one call, seconds: CPU vs one GPU vs split over $ngpu GPU(s) (bench/multigpu_bench.c)"
  cc -O2 bench/multigpu_bench.c -o /tmp/gofl-mgb -L/usr/lib/x86_64-linux-gnu/openblas-pthread -lopenblas -ldl \
     -Wl,-rpath,/usr/lib/x86_64-linux-gnu/openblas-pthread || echo "FAIL: building bench/multigpu_bench.c"
  printf "%-8s %6s %9s %9s %9s %9s %7s  %s\n" routine n CPU "1 GPU" split auto "split/1" "GPUs split over (force, auto); checksums"
  for case in ${MULTIGPU_CASES:-dgemm:16384 dgemm:32768 dgetrf:32768 dpotrf:32768 dsyevd:16384}; do
    r=${case%%:*}; n=${case##*:}
    one() { timeout ${MULTIGPU_CALL_TIMEOUT:-240} "$B/bin/gpu-offload" run "$@" -- /tmp/gofl-mgb "$r" "$n" 2>>"$OUT/multigpu_bench.err" | tail -1; }
    cpu="-"; cpu_line=""
    case " ${MULTIGPU_CPU_CASES:-dgemm:16384 dgetrf:32768 dpotrf:32768} " in
      *" $case "*) cpu_line=$(one --device cpu); cpu=$(echo "$cpu_line" | awk '{print $4}') ;;
    esac
    g1=$(one --device gpu --split off); gs=$(one --device gpu --split force); ga=$(one --device gpu --split auto)
    echo "$g1 | $gs | $ga | $cpu_line" >> "$OUT/multigpu_bench.log"
    t1=$(echo "$g1" | awk '{print $4}'); ts=$(echo "$gs" | awk '{print $4}'); ta=$(echo "$ga" | awk '{print $4}')
    # The checksums of the three GPU runs (and the CPU's), as the largest difference relative to the first.
    spread=$(printf "%s\n%s\n%s\n%s\n" "$g1" "$gs" "$ga" "$cpu_line" | awk 'NF >= 10 { x = $10 + 0; if (!n++) x0 = x;
      d = x - x0; if (d < 0) d = -d; m = x0 < 0 ? -x0 : x0; if (m > 0) d /= m; if (d > w) w = d } END { printf "%.1e", w }')
    ratio=$(awk -v a="$ts" -v b="$t1" 'BEGIN { if (a > 0 && b > 0) printf "%.2f", b / a; else print "-" }')
    printf "%-8s %6s %9s %9s %9s %9s %7s  %s, %s; %s\n" "$r" "$n" "$cpu" "${t1:--}" "${ts:--}" "${ta:--}" "$ratio" \
      "$(echo "$gs" | awk '{print $6}')" "$(echo "$ga" | awk '{print $6}')" "checksums within $spread"
  done
fi
if has line; then
  # The GPU line under many threads (PySCF's OpenMP loops): the floor of a staged dsymm's hold on CUDA
  # alone (bench/probes/staged_dsymm_floor.cpp), then 16 threads of dsymm under each line setting
  # (bench/probes/threads_probe.sh: the summary's GPU line gives the hold, the handover and the
  # backend's runs; each variant's median phases).
  echo "== the GPU line: a staged dsymm's floor, then ${LINE_THREADS:-16} threads of dsymm under each line setting"
  "$B/bin/staged_dsymm_floor" 956 135 300 2>&1 | tee "$OUT/staged_floor.log"
  timeout 300 bash bench/probes/threads_probe.sh "$B" 956 135 "${LINE_THREADS:-16}" 40 2>&1 | tee "$OUT/threads_probe.log"
fi
if has small; then
  echo "== small NumPy script with and without the library (bench/small_numpy_bench.py)"
  timeout 120 "$PY" bench/small_numpy_bench.py --build "$B" --runs ${SMALL_RUNS:-15} ${PROFILE:+--profile "$PROFILE"} 2>&1 | tee "$OUT/small_numpy.log"
fi
if has busy; then
  echo "== NVML gate: PyTorch keeps the GPU busy; NumPy a @ b (n = 4096) x 15 under --device auto, level 5 (limit 59%)"
  "$PY" -c '
import time, torch
a = torch.randn(8192, 8192, device="cuda"); t = time.time()
while time.time() - t < 25: a @ a; torch.cuda.synchronize()' &
  hog=$!; sleep 4
  nvidia-smi --query-gpu=utilization.gpu --format=csv,noheader
  products() {
    "$B/bin/gpu-offload" run --summary -- "$PY" -c '
import numpy as np
r = np.random.default_rng(0); a = r.standard_normal((4096, 4096)); b = r.standard_normal((4096, 4096))
for i in range(15): c = a @ b' 2>&1 | tail -12
  }
  products
  wait $hog
  echo "== the same with the GPU free"
  products
fi
if has nvblas; then
  echo "== dgemm_: CPU vs NVBLAS vs gpu-offload"; timeout 200 bench/nvblas_bench.sh "$B" ${NVBLAS_SIZES:-2048 4096 8192 16384} 2>&1 | tee "$OUT/nvblas_bench.log"
fi
if has copies; then
  echo "== where the copy time of a @ b goes, setting by setting (bench/probes/copy_tune.py)"
  timeout ${COPIES_TIMEOUT:-240} "$PY" bench/probes/copy_tune.py --build "$B" --sizes ${COPIES_SIZES:-4096,8192} --rounds ${COPIES_ROUNDS:-1} --dtype ${COPIES_DTYPE:-float64} ${COPIES_SETTINGS:+--settings "$COPIES_SETTINGS"} 2>&1 | tee "$OUT/copy_tune.log"
fi
if has calibrate; then
  echo "== gpu-offload calibrate (full) into \$OUT/h200.profile"
  /usr/bin/time -f "calibrate took %e s" timeout ${CALIBRATE_TIMEOUT:-500} "$B/bin/gpu-offload" calibrate \
    --output "$OUT/h200.profile" > "$OUT/calibrate.log" 2>&1
  echo "exit $?"; tr '\r' '\n' < "$OUT/calibrate.log" | grep -v "^ *\[" | tail -130
fi
if has overhead; then
  echo "== overhead below the threshold"; bench/overhead.sh "$B" 2000000 2>&1 | tee "$OUT/overhead.log"
fi
if has headline; then
  # bench/headline.py, every headline case of README.md: HEADLINE_STAGE a (the calls, FFT) or b (residency, small math,
  # start-up, the sweep), each about 6-7 minutes, or all (two calls' worth; the default where HEADLINE_ARGS has --only,
  # which then picks the groups); HEADLINE_REPEATS (5), HEADLINE_ARGS (more options). It stops starting cases
  # HEADLINE_END s (560) after this script began, so the call ends in its 10 minutes.
  # GOFL_COMMIT names the commit (the copy here has no .git). Table: headline.log; samples: headline/headline.json.
  left=$(( ${HEADLINE_END:-560} - ($(date +%s) - t0) ))
  case " ${HEADLINE_ARGS:-} " in *" --only "* | *" --only="*) stage=${HEADLINE_STAGE:-all} ;; *) stage=${HEADLINE_STAGE:-a} ;; esac
  echo "== headline cases, stage $stage (bench/headline.py; $left s left for it; commit ${GOFL_COMMIT:-not given})"
  GOFL_COMMIT=${GOFL_COMMIT:-} timeout $(( left + 30 )) "$PY" bench/headline.py --build "$B" --stage "$stage" \
    --repeats "${HEADLINE_REPEATS:-5}" --out "$OUT/headline" --budget "$left" ${HEADLINE_ARGS:-} 2>&1 | tee "$OUT/headline.log"
fi
if has scipytests; then
  scripts/scipy_linalg_tests.sh "$B" "$PY"
fi
echo "== total $(( $(date +%s) - t0 )) s"
if [ "${PACK_OUT:-0}" = 1 ]; then
  tar -czf /tmp/gofl-logs.tgz -C "$OUT" . && rm -rf "${OUT:?}"/* && mv /tmp/gofl-logs.tgz "$OUT/logs.tgz"
fi
