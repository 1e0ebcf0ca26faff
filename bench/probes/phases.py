#!/usr/bin/env python3
"""Each GPU call of a trace's CSV (gpu-offload dump --csv) with its phases, to tell where a call's time went.

  python3 bench/probes/phases.py CSV [OP]     (OP: only calls of this op, e.g. dgemm or fft_c2c_z)

Per call: its time; copy in (the host side of the uploads: staging the program's pageable memory and
queueing its DMAs) with its rate over the input bytes; compute (the kernels' own times, summed: in a
pipeline they overlap the copies); copy out with its rate over the output bytes (less the waits for
kernels); other (the time neither copy covers: set-up, kernels no copy hides, the last DMAs); and the
input bytes residency did not copy."""
import csv
import sys


def operand_bytes(field):
    """(bytes read, bytes written) of a record's operands: addr:bytes:fp_in:fp_out, ';'-separated."""
    read = written = 0
    for o in filter(None, field.split(";")):
        _, size, fp_in, fp_out = o.split(":")
        read += int(size) if fp_in != "0" else 0
        written += int(size) if fp_out != "0" else 0
    return read, written


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    only = sys.argv[2] if len(sys.argv) > 2 else None
    rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["aggregated"] != "1" and (not only or r["op"] == only)]
    print("%4s %-12s %6s %9s %8s %6s %8s %8s %6s %8s %10s" % ("call", "op", "device", "total ms", "copy in", "GB/s",
                                                              "compute", "copy out", "GB/s", "other", "avoided MB"))
    for i, r in enumerate(rows):
        t = int(r["duration_ns"]) / 1e6
        cin, comp, cout = (float(r[k] or 0) * 1e3 for k in ("copy_in_s", "compute_s", "copy_out_s"))
        read, written = operand_bytes(r["operands"])
        avoided = int(r["avoided_bytes"] or 0)
        rate = lambda b, ms: "%6.1f" % (b / ms / 1e6) if ms > 0 and b > 0 else "%6s" % "-"
        print("%4d %-12s %6s %9.1f %8.1f %s %8.1f %8.1f %s %8.1f %10.0f" % (
            i, r["op"][:12], r["device"], t, cin, rate(read - avoided, cin), comp, cout, rate(written, cout),
            t - cin - cout, avoided / 1e6))


if __name__ == "__main__":
    main()
