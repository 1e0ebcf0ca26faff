#!/usr/bin/env python3
# Usage: python3 bench/probes/beside_warmups.py CPU_CSV RUN [RUN ...]: CPU_CSV the cpu run of a sweep
# (bench/auto_sweep.py --save: cpu.csv), each RUN an auto run of the same sweep without its ending
# (RUN.csv and RUN.setup.csv). For each RUN: its CPU calls that overlapped a warm-up, their
# time, and the same calls' time in the cpu run: what running beside the warm-ups cost them.
import csv, sys
cpu = [r for r in csv.DictReader(open(sys.argv[1])) if r['depth'] == '0']
for run in sys.argv[2:]:
    rows = [r for r in csv.DictReader(open(run + '.csv')) if r['depth'] == '0']
    warms = [(int(s['t_ns']) - float(s['seconds']) * 1e9, int(s['t_ns'])) for s in csv.DictReader(open(run + '.setup.csv'))
             if s['phase'] == 'warmed beside the calls']
    n = took = base = 0
    for r, c in zip(rows, cpu):  # the same sequence of calls: row i is the same call in both
        if r['device'] != 'cpu' or r['op'] != c['op'] or r['n'] != c['n']:
            continue
        t0 = int(r['t_start_ns'])
        t1 = t0 + int(r['duration_ns'])
        if not any(a < t1 and b > t0 for a, b in warms):
            continue
        n += 1
        took += int(r['duration_ns']) / 1e9
        base += int(c['duration_ns']) / 1e9
    print('%-40s CPU calls beside warm-ups: %3d, took %.3f s, the cpu run %.3f s: %+.3f s' %
          (run.split('/')[-1], n, took, base, took - base))
