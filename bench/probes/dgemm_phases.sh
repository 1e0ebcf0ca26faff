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
  python3 - "$w/$dev.csv" <<'PY'
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["aggregated"] != "1"]
print("%4s %6s %9s %8s %8s %8s %8s %10s" % ("call", "device", "total ms", "copy in", "compute", "copy out", "other", "avoided MB"))
for i, r in enumerate(rows):
    t = int(r["duration_ns"]) / 1e6
    ph = [float(r[k] or 0) * 1e3 for k in ("copy_in_s", "compute_s", "copy_out_s")]
    print("%4d %6s %9.1f %8.1f %8.1f %8.1f %8.1f %10.0f" % (i, r["device"], t, *ph, t - sum(ph), int(r["avoided_bytes"] or 0) / 1e6))
PY
done
rm -rf "$w"
