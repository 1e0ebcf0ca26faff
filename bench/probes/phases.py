#!/usr/bin/env python3
"""Each GPU call of a trace's CSV (gpu-offload dump --csv) with its phases, to tell where a call's time went.

  python3 bench/probes/phases.py CSV [OP] [--medians]   (OP: only calls of this op, e.g. dgemm or fft_c2c_z;
                                                       --medians: one line of each column's median over the GPU calls)

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
    args = [a for a in sys.argv[1:] if a != "--medians"]
    medians = "--medians" in sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    only = args[1] if len(args) > 1 else None
    rows = [r for r in csv.DictReader(open(args[0])) if r["aggregated"] != "1" and (not only or r["op"] == only)]
    print("%4s %-12s %6s %9s %8s %6s %8s %8s %6s %8s %10s" % ("call", "op", "device", "total ms", "copy in", "GB/s",
                                                              "compute", "copy out", "GB/s", "other", "avoided MB"))
    cols = []  # per GPU call: total, copy in, compute, copy out, other (ms)
    for i, r in enumerate(rows):
        t = int(r["duration_ns"]) / 1e6
        cin, comp, cout = (float(r[k] or 0) * 1e3 for k in ("copy_in_s", "compute_s", "copy_out_s"))
        read, written = operand_bytes(r["operands"])
        avoided = int(r["avoided_bytes"] or 0)
        rate = lambda b, ms: "%6.1f" % (b / ms / 1e6) if ms > 0 and b > 0 else "%6s" % "-"
        if r["device"] == "gpu":
            cols.append((t, cin, comp, cout, t - cin - cout))
        if medians:
            continue
        print("%4d %-12s %6s %9.1f %8.1f %s %8.1f %8.1f %s %8.1f %10.0f" % (
            i, r["op"][:12], r["device"], t, cin, rate(read - avoided, cin), comp, cout, rate(written, cout),
            t - cin - cout, avoided / 1e6))
    if medians and cols:
        med = [sorted(c)[len(c) // 2] for c in zip(*cols)]
        print("%4s %-12s %6s %9.2f %8.2f %6s %8.2f %8.2f %6s %8.2f   (medians of %d GPU calls)" % (
            "all", only or "", "gpu", med[0], med[1], "", med[2], med[3], "", med[4], len(cols)))


if __name__ == "__main__":
    main()
