#!/usr/bin/env bash
# The reference BLAS testers of Debian's libblas-test (xblat2/xblat3 s/d/c/z and the CBLAS ones,
# x?cblat2/x?cblat3) on the reference BLAS, bare and under gpu-offload: prints each run's verdict
# lines (PASSED / FAILED counts per routine) in one table. Carry .debs with libblas-test, libblas3
# and libgfortran5 (apt-get download them here); they are unpacked with dpkg -x into a folder of
# their own.
#
#   scripts/blas_testers.sh BUILD [DEVICE]      DEVICE: gpu (default), auto or cpu
set -uo pipefail
B=$(cd "${1:?usage: scripts/blas_testers.sh BUILD [DEVICE]}" && pwd); dev=${2:-gpu}
root=$(mktemp -d)
for d in .debs/libblas-test_*.deb .debs/libblas3_*.deb .debs/libgfortran5_*.deb; do dpkg -x "$d" "$root" || exit 1; done
L=$root/usr/lib/x86_64-linux-gnu
export LD_LIBRARY_PATH=$L/blas:$L${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
cd "$L/blas"
printf "%-10s %-6s %8s %8s %7s %s\n" tester mode passed failed rc "gpu calls (summary)"
for t in 3s 3d 3c 3z 2s 2d 2c 2z; do
  lvl=${t:0:1} p=${t:1:1}
  for kind in f c; do
    if [ $kind = f ]; then exe=./xblat$lvl$p in=${p}blat$lvl.in; else exe=./x${p}cblat$lvl in=${p}in$lvl; fi
    for mode in bare $dev; do
      if [ $mode = bare ]; then "$exe" < "$in" > out.txt 2> err.txt; rc=$?
      else "$B/bin/gpu-offload" run --device "$mode" --summary -- "$exe" < "$in" > out.txt 2> err.txt; rc=$?; fi
      # Fortran testers write their summary to the file named in the input (unit 6 here: stdout).
      cat ./*blat*.out >> out.txt 2>/dev/null; rm -f ./*blat*.out ./*.SNAP
      passed=$(grep -c "PASSED" out.txt); failed=$(grep -E "FAIL|FATAL|\*\*\*\*\*\*" out.txt | grep -vc "PASSED")
      gpu=$(awk '/gpu-offload summary/{s=1} /^  (counted|where)/{s=0} s && $3 ~ /^[0-9]+$/ && $3 > 0 {n += $3} END {print n + 0}' err.txt)
      printf "%-10s %-6s %8s %8s %7s %s\n" "$(basename "$exe")" "$mode" "$passed" "$failed" "$rc" "$([ $mode = bare ] || echo "$gpu")"
      [ "$failed" -gt 0 ] && grep -E "FAIL|FATAL|\*\*\*\*\*\*" out.txt | grep -v PASSED | head -5
    done
  done
done
rm -rf "$root"
