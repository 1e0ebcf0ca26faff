#!/usr/bin/env bash
# On the GPU machine, in a copy of the working tree with .apps carried (bench/apps/fetch_apps.sh):
# builds the library, unpacks the applications and runs bench/apps/apps_bench.py; logs under $OUT.
#
#   CASES=qe-si64,nwchem-w8 REPEATS=3 bench/apps/device_apps.sh
#   CASES=pyscf-c16 MODES=bare,auto REPEATS=2 VARIANTS='default=;combo=GPU_OFFLOAD_THREAD_STAGING=auto,GPU_OFFLOAD_LINE_SERVES=8' \
#     BUDGET=540 bench/apps/device_apps.sh       # auto under each variant, alternating (apps_bench.py --variants)
#   OLD_TREE=.debs/old-03859ab.tar.gz VARIANTS='new=;old=GOFL_BUILD=/tmp/gofl-old-build' ...   # against an older build
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/gofl-out}; mkdir -p "$OUT"
B=${BUILD:-/tmp/gofl-build}
t0=$(date +%s)
if [ ! -x "$B/bin/gpu-offload" ]; then
  cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGOFL_PYTHON="$(command -v python3)" > "$OUT/configure.log" 2>&1 || { tail -30 "$OUT/configure.log"; exit 1; }
  ninja -C "$B" -j16 gpuoffload gpuoffload-cuda gpu-offload > "$OUT/build.log" 2>&1 || { grep -E "error|FAILED" -A4 "$OUT/build.log" | head -60; exit 1; }
fi
# OLD_TREE=FILE.tar.gz (git archive of an older commit): built into /tmp/gofl-old-build, for a variant
# GOFL_BUILD=/tmp/gofl-old-build (an A/B of a change that has no setting).
if [ -n "${OLD_TREE:-}" ] && [ ! -x /tmp/gofl-old-build/bin/gpu-offload ]; then
  rm -rf /tmp/gofl-old-src && mkdir -p /tmp/gofl-old-src && tar -C /tmp/gofl-old-src -xzf "$OLD_TREE" || exit 1
  cmake -S /tmp/gofl-old-src -B /tmp/gofl-old-build -G Ninja -DCMAKE_BUILD_TYPE=Release -DGOFL_PYTHON="$(command -v python3)" > "$OUT/configure-old.log" 2>&1 || { tail -30 "$OUT/configure-old.log"; exit 1; }
  ninja -C /tmp/gofl-old-build -j16 gpuoffload gpuoffload-cuda gpu-offload > "$OUT/build-old.log" 2>&1 || { grep -E "error|FAILED" -A4 "$OUT/build-old.log" | head -60; exit 1; }
fi
echo "== built in $(( $(date +%s) - t0 )) s"
. bench/apps/unpack_apps.sh /tmp/gofl-apps
echo "== unpacked in $(( $(date +%s) - t0 )) s; $(python3 -c 'import sklearn, numpy, scipy; print("scikit-learn", sklearn.__version__, "numpy", numpy.__version__, "scipy", scipy.__version__)' 2>&1)"
export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-$(nproc)}
# Two sets of cases with their own repeats: CASES/REPEATS, then CASES2/REPEATS2 (if set).
for set in 1 2; do
  if [ $set = 1 ]; then cases=${CASES:-qe-si64,nwchem-w8} reps=${REPEATS:-3}; else cases=${CASES2:-} reps=${REPEATS2:-1}; fi
  [ -n "$cases" ] || continue
  timeout "${SET_TIMEOUT:-560}" python3 bench/apps/apps_bench.py --build "$B" --cases "$cases" --repeats "$reps" \
    --gpu-repeats "${GPU_REPEATS:-1}" --modes "${MODES:-bare,auto,gpu}" --timeout "${APP_TIMEOUT:-300}" --gpu-timeout "${GPU_TIMEOUT:-120}" --out /tmp/gofl-apps-out \
    ${VARIANTS:+--variants "$VARIANTS"} ${BUDGET:+--budget $(( BUDGET - ($(date +%s) - t0) ))} \
    2>&1 | tee -a "$OUT/apps.log"
done
cp /tmp/gofl-apps-out/results.jsonl "$OUT/" 2>/dev/null
tar -C /tmp/gofl-apps-out -cJf "$OUT/apps-runs.tar.xz" --exclude results.jsonl . 2>/dev/null
echo "== done in $(( $(date +%s) - t0 )) s"
echo "== the tables"; sed -n '/^case /,/^$/p' "$OUT/apps.log"
