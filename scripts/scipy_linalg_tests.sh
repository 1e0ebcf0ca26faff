#!/usr/bin/env bash
# SciPy's own linalg test suite, once without the library and once under it with every call on the
# GPU (--device gpu): a program must not be able to tell that the GPU ran its calls, so the tests
# that fail only under the library are the finding. Prints both pass/fail counts, the tests
# that fail only under the library, and "scipytests: PASS" or "scipytests: FAIL".
# Usage: scripts/scipy_linalg_tests.sh BUILD_DIR [PYTHON]   (device_run.sh stage `scipytests`)
# SCIPYTESTS_TIMEOUT: seconds per run (default 240). PYTEST_WHEELS: a folder of wheels (pytest and
# its dependencies, `pip download pytest -d DIR` on a machine with a registry) to use when the
# Python has no pytest.
set -uo pipefail
B=${1:?usage: scripts/scipy_linalg_tests.sh BUILD_DIR [PYTHON]}
PY=${2:-$(command -v python3)}
OUT=${OUT:-/tmp/gofl-out}
mkdir -p "$OUT"
echo "== SciPy's linalg tests without and under the library (--device gpu)"
version=$("$PY" -c 'import scipy; print(scipy.__version__)' 2>/dev/null) || { echo "scipytests: SKIPPED: $PY has no scipy"; exit 0; }
tests=$("$PY" -c 'import os, scipy.linalg; d = os.path.join(os.path.dirname(scipy.linalg.__file__), "tests"); print(d if os.path.isdir(d) else "")')
if [ -z "$tests" ]; then
  echo "scipytests: SKIPPED: scipy $version is installed without its tests (no scipy/linalg/tests)"; exit 0
fi
if ! "$PY" -c 'import pytest' 2>/dev/null; then
  if [ -n "${PYTEST_WHEELS:-}" ] && "$PY" -m pip install -q --no-index --find-links "$PYTEST_WHEELS" \
       --target "$OUT/pytest-site" pytest > "$OUT/pytest-install.log" 2>&1; then
    export PYTHONPATH="$OUT/pytest-site${PYTHONPATH:+:$PYTHONPATH}"
  else
    echo "scipytests: SKIPPED: $PY has no pytest (carry wheels: pip download pytest -d DIR; PYTEST_WHEELS=DIR)"; exit 0
  fi
fi
echo "scipy $version, tests in $tests"

# One run: its log, its pytest summary line and its sorted list of failing test ids.
run_suite() {  # MODE: cpu (no library) or gpu
  local mode=$1
  local log="$OUT/scipytests-$mode.log" label="without the library"
  local -a env_args=(GPU_OFFLOAD_SUMMARY=0)
  if [ "$mode" = gpu ]; then
    env_args=(LD_PRELOAD="$B/lib/libgpuoffload.so" GPU_OFFLOAD_DEVICE=gpu)
    label="under --device gpu"
  fi
  # From a folder of its own: no conftest.py of this repository may join the run. SIGINT at the
  # timeout: pytest stops and still prints its counts and failures so far.
  (cd "$OUT" && env "${env_args[@]}" timeout -s INT -k 30 "${SCIPYTESTS_TIMEOUT:-240}" "$PY" -m pytest --pyargs scipy.linalg \
     -q -p no:cacheprovider -rfE > "$log" 2>&1)
  local rc=$?
  if [ $rc -eq 124 ] || grep -q KeyboardInterrupt "$log"; then
    echo "  ($mode run stopped by the ${SCIPYTESTS_TIMEOUT:-240} s timeout: its counts are partial)"
    partial=" (partial: a run hit its timeout)"
  fi
  grep -E '^(FAILED|ERROR) ' "$log" | sed -E 's/ - .*//' | sort -u > "$OUT/scipytests-$mode.failed"
  local summary
  summary=$(grep -E '^=* ?[0-9]+ (passed|failed).* in [0-9.]+s' "$log" | tail -1 | tr -d '=')
  echo "  $label: ${summary:-no pytest summary (see $log)}"
}
partial=""
run_suite cpu
run_suite gpu
only_gpu=$(comm -13 "$OUT/scipytests-cpu.failed" "$OUT/scipytests-gpu.failed")
n=$(printf '%s' "$only_gpu" | grep -c . || true)
echo "  failing only under the library: $n"
[ -n "$only_gpu" ] && printf '%s\n' "$only_gpu" | head -60 | sed 's/^/    /'
if [ "$n" -eq 0 ] && grep -qE ' passed' "$OUT/scipytests-gpu.log"; then echo "scipytests: PASS$partial"; else echo "scipytests: FAIL"; fi
