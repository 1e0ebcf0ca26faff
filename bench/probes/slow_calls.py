#!/usr/bin/env python3
# Usage: python3 bench/probes/slow_calls.py RUN [RUN ...], RUN being the path of a saved sweep trace without
# its ending (bench/auto_sweep.py --save: MODE.csv from dump --csv, MODE.setup.csv from dump --setup --csv).
# Calls that took more than twice their prediction (and > 15 ms), with the warm-ups that ran beside them
# and, in traces from 2026-12-03 on, whether the call ran with a core spared (preload/spare_core.h).
import csv, sys
for f in sys.argv[1:]:
    rows = list(csv.DictReader(open(f + '.csv')))
    warms = []
    try:
        for s in csv.DictReader(open(f + '.setup.csv')):
            if s['phase'] == 'warmed beside the calls':
                e = int(s['t_ns']); d = float(s['seconds']); warms.append((e - d * 1e9, e, s['what']))
    except FileNotFoundError:
        pass
    print('==', f.split('/')[-1], '(%d warm-ups traced)' % len(warms))
    t00 = int(rows[0]['t_start_ns'])
    for r in rows:
        if r['depth'] != '0': continue
        t0 = int(r['t_start_ns']); dur = int(r['duration_ns']); t1 = t0 + dur
        pred = float((r['pred_gpu_s'] if r['device'] == 'gpu' else r['pred_cpu_s']) or 0)
        if dur / 1e9 > 0.015 and dur / 1e9 > 2 * pred:
            ov = [w[2] + '(%.0f ms)' % ((min(w[1], t1) - max(w[0], t0)) / 1e6) for w in warms if w[0] < t1 and w[1] > t0]
            spared = ' (a core spared)' if r.get('core_spared') == '1' else ''
            print('  t=%.3f s %s n=%s %s, %s: %.1f ms%s, predicted %.1f ms; beside: %s' % (
                (t0 - t00) / 1e9, r['op'], r['n'], r['device'], r['reason'], dur / 1e6, spared, pred * 1e3,
                ', '.join(ov) or '-'))
