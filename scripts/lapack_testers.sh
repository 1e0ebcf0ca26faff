#!/usr/bin/env bash
# LAPACK's own testers from Debian's liblapack-test (reference LAPACK 3.11 on the reference BLAS),
# bare and under gpu-offload: each tester's verdict lines ("All tests for DSG passed the threshold
# (11172 tests run)", or how many failed) side by side, and how many calls ran on the GPU.
# Carry .debs with liblapack-test, libtmglib3, liblapack3, libblas3, libgfortran5 and libquadmath0 (apt-get
# download them here); they are unpacked with dpkg -x into a folder of their own.
#
#   scripts/lapack_testers.sh BUILD [DEVICE] [TEST ...]     DEVICE: gpu (default), auto or cpu
#
# A TEST is TESTER:INPUT, e.g. xeigtstd:dsg.in. The default set is what the GPU routines of the
# generalized and standard symmetric eigenproblem and the inverses/factorisations need:
# xeigtst{s,d,c,z} with ?sg.in (?sygv*/?hegv*), se2.in (?syevx/?heevx and the rest of the SEP
# drivers) and xlintst{s,d,c,z} with ?test.in (?potri, ?trtri, ?sytrf/?hetrf among all the linear
# solvers). TESTER_TIMEOUT (600) bounds each run.
set -uo pipefail
B=$(cd "${1:?usage: scripts/lapack_testers.sh BUILD [DEVICE] [TEST ...]}" && pwd); dev=${2:-gpu}; shift $(( $# < 2 ? $# : 2 ))
tests=("$@")
if [ ${#tests[@]} -eq 0 ]; then
  for p in s d c z; do tests+=("xeigtst$p:${p}sg.in"); done
  for p in s d c z; do tests+=("xeigtst$p:se2.in"); done
  for p in s d c z; do tests+=("xlintst$p:${p}test.in"); done
fi
root=$(mktemp -d)
for d in .debs/liblapack-test_*.deb .debs/libtmglib3_*.deb .debs/liblapack3_*.deb .debs/libblas3_*.deb .debs/libgfortran5_*.deb \
         .debs/libquadmath0_*.deb; do dpkg -x "$d" "$root" || exit 1; done
L=$root/usr/lib/x86_64-linux-gnu
export LD_LIBRARY_PATH=$L/lapack:$L/blas:$L${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
cd "$L/lapack"
printf "%-9s %-8s %-6s %6s %8s %10s %s\n" tester input mode rc seconds "gpu calls" verdict
for t in "${tests[@]}"; do
  exe=./${t%%:*} in=${t#*:}
  for mode in bare "$dev"; do
    s0=$(date +%s%N)
    if [ "$mode" = bare ]; then timeout "${TESTER_TIMEOUT:-600}" "$exe" < "$in" > out.txt 2> err.txt; rc=$?
    else timeout "${TESTER_TIMEOUT:-600}" "$B/bin/gpu-offload" run --device "$mode" --summary -- "$exe" < "$in" > out.txt 2> err.txt; rc=$?; fi
    secs=$(awk -v a="$s0" -v b="$(date +%s%N)" 'BEGIN {printf "%.1f", (b - a) / 1e9}')  # no bc on the GPU machine
    gpu=$(awk '/gpu-offload summary/{s=1} /^  (counted|where)/{s=0} s && $3 ~ /^[0-9]+$/ && $3 > 0 {n += $3} END {print n + 0}' err.txt)
    # The verdicts: one line per tested path. A failure reads "... out of ... tests failed to pass the threshold".
    passed=$(grep -c "passed the threshold" out.txt); failed=$(grep -E "failed to pass|FAILED|ILLEGAL|\*\*\*" out.txt | grep -vc "passed the threshold")
    total=$(grep -oE "\( *[0-9]+ tests run\)" out.txt | grep -oE "[0-9]+" | awk '{n += $1} END {print n + 0}')
    printf "%-9s %-8s %-6s %6s %8.1f %10s %s paths passed (%s tests run), %s lines of failure\n" \
      "${exe#./}" "$in" "$mode" "$rc" "$secs" "$([ "$mode" = bare ] && echo - || echo "$gpu")" "$passed" "${total:-0}" "$failed"
    # A tester that did not finish (a crash, the timeout, a missing library) fails whatever it printed.
    [ "$rc" -ne 0 ] && failed=$(( failed + 1 )) && tail -3 err.txt
    [ "$failed" -gt 0 ] && grep -E "failed to pass|FAILED|ILLEGAL|\*\*\*" out.txt | grep -v "passed the threshold" | head -8
    [ "$mode" != bare ] && grep -E "^gpu-offload: |error|Error" err.txt | head -4
  done
done
rm -rf "$root"
