#!/usr/bin/env bash
# A ScaLAPACK program (tests/clients/scalapack_client.c: pdgemm, then pdgesv) under mpirun with
# RANKS ranks, bare and with libgpuoffload.so preloaded in every rank (mpirun -x LD_PRELOAD): prints
# both runs' results and times, the relative difference of each result line, and each rank's summary
# (its local rank and the GPU it ran on).
#
#   bench/scalapack_mpi.sh BUILD [N [NB [NRHS]]]
#
# MPI_ROOT: a folder the Debian packages of scripts/fetch_mpi_debs.sh were unpacked into (dpkg -x);
# the program is then built here against it. Without it, the system's mpirun and BUILD's
# scalapack_client. RANKS (default 2), DEVICE (gpu, auto or cpu; default gpu), MPI_EXTRA (more
# mpirun options, e.g. "-x CUDA_VISIBLE_DEVICES=0").
set -uo pipefail
B=${1:?usage: bench/scalapack_mpi.sh BUILD [N [NB [NRHS]]]}
B=$(cd "$B" && pwd)
N=${2:-8192} NB=${3:-1024} NRHS=${4:-512}
RANKS=${RANKS:-2} DEVICE=${DEVICE:-gpu}
SRC=$(cd "$(dirname "$0")/.." && pwd)/tests/clients/scalapack_client.c
work=$(mktemp -d)
if [ -n "${MPI_ROOT:-}" ]; then
  R=$(cd "$MPI_ROOT" && pwd)/usr
  L=$R/lib/x86_64-linux-gnu
  export OPAL_PREFIX=$R PMIX_INSTALL_PREFIX=$L/pmix2 PATH=$R/bin:$PATH
  export LD_LIBRARY_PATH=$L:$L/openmpi/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  MPIRUN=$R/bin/mpirun.openmpi
  CLIENT=$work/scalapack_client
  if ! cc -O2 -o "$CLIENT" "$SRC" -I"$L/openmpi/include" -L"$L" -L"$L/openmpi/lib" -l:libscalapack-openmpi.so.2.2 \
       -l:libmpi.so.40 -lm -Wl,-rpath-link,"$L"; then
    echo "FAIL: cannot build scalapack_client against $MPI_ROOT"; exit 1
  fi
else
  MPIRUN=$(command -v mpirun)
  CLIENT=$B/tests/clients/scalapack_client
fi
[ -x "$CLIENT" ] && [ -n "$MPIRUN" ] || { echo "FAIL: no scalapack_client or mpirun"; exit 1; }
args=(-np "$RANKS" --oversubscribe --allow-run-as-root --bind-to none --mca btl self,vader --mca pml ob1
      -x OPENBLAS_NUM_THREADS=$(( $(nproc) / RANKS > 0 ? $(nproc) / RANKS : 1 )) ${MPI_EXTRA:-})
[ -n "${MPI_ROOT:-}" ] && args+=(-x OPAL_PREFIX -x PMIX_INSTALL_PREFIX -x LD_LIBRARY_PATH)

echo "== $RANKS ranks, n $N, block $NB, $NRHS right-hand sides: $("$MPIRUN" --version 2>&1 | head -1)"
echo "-- bare"
"$MPIRUN" "${args[@]}" "$CLIENT" "$N" "$NB" "$NRHS" > "$work/bare.out" 2> "$work/bare.err"
echo "exit $?"; cat "$work/bare.out"; grep "^time" "$work/bare.err"
echo "-- preloaded in every rank (mpirun -x LD_PRELOAD, --device $DEVICE)"
"$MPIRUN" "${args[@]}" -x LD_PRELOAD="$B/lib/libgpuoffload.so" -x GPU_OFFLOAD_SUMMARY=1 -x GPU_OFFLOAD_DEVICE="$DEVICE" \
  -x GPU_OFFLOAD_TRACE="$work/trace" "$CLIENT" "$N" "$NB" "$NRHS" > "$work/pre.out" 2> "$work/pre.err"
echo "exit $?"; cat "$work/pre.out"; grep "^time" "$work/pre.err"
echo "-- each rank's summary"
grep -vE "^time" "$work/pre.err"
echo "-- the GPU each rank started on (gpu-offload dump --starts)"
"$B/bin/gpu-offload" dump --starts "$work/trace"
echo "-- bare against preloaded"
python3 - "$work/bare.out" "$work/pre.out" <<'PY'
import re, sys
bare, pre = (open(p).read().splitlines() for p in sys.argv[1:3])
ok = len(bare) == len(pre) and len(bare) >= 3
for a, b in zip(bare, pre):
    na = [float(x) for x in re.findall(r"-?\d+\.\d+(?:e[-+]?\d+)?", a)]
    nb = [float(x) for x in re.findall(r"-?\d+\.\d+(?:e[-+]?\d+)?", b)]
    if a == b:
        print(f"identical  {a}")
        continue
    words = re.sub(r"-?\d+\.\d+(?:e[-+]?\d+)?", "#", a) == re.sub(r"-?\d+\.\d+(?:e[-+]?\d+)?", "#", b)
    rel = max((abs(x - y) / max(abs(x), 1e-300) for x, y in zip(na[:-1] if "residual" in a else na,
                                                                   nb[:-1] if "residual" in b else nb)), default=0)
    good = words and rel < 1e-9 and "info 0" in b if "pdgesv" in a else words and rel < 1e-9
    ok = ok and good
    print(f"{'close' if good else 'DIFFERENT'}  rel {rel:.2e}: {a}  |  {b}")
print("PASS: the preloaded run's results match the bare run" if ok else "FAIL: the results differ")
PY
rm -rf "$work"
