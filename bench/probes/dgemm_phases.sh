#!/usr/bin/env bash
# Each call of bench/dgemm_client.c (the same A and B every call) under --device gpu and auto, traced:
# its time and its phases (copy in, compute, copy out) and the input bytes residency did not copy, to
# tell a slow repeat's cause (copies, compute, or time outside the phases) from the machine's noise.
#   bench/probes/dgemm_phases.sh BUILD [N] [REPS]
set -uo pipefail
B=$(cd "${1:?usage: dgemm_phases.sh BUILD [N] [REPS]}" && pwd); n=${2:-8192}; reps=${3:-6}
w=$(mktemp -d)
cc -O2 "$(dirname "$0")/../dgemm_client.c" -o "$w/dgemm" -L/usr/lib/x86_64-linux-gnu/openblas-pthread -lopenblas \
   -Wl,-rpath,/usr/lib/x86_64-linux-gnu/openblas-pthread || exit 1
for dev in gpu auto; do
  echo "== n=$n, $reps timed calls after a warm-up, --device $dev"
  "$B/bin/gpu-offload" run --device "$dev" --trace "$w/t-$dev" -- "$w/dgemm" "$n" "$reps" | head -1
  "$B/bin/gpu-offload" dump --csv "$w/t-$dev" > "$w/$dev.csv"
  python3 "$(dirname "$0")/phases.py" "$w/$dev.csv"
done
rm -rf "$w"
