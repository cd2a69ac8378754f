# python3 waves.py RESULTS (a breaker-lockstep sweep folder).
# Per sweep point, mean over its seeds: the share of requests the breakers
# drop and the attempts sent per second during 75-120 s (min and max over
# the seconds), and how long after the outage ends (120 s) the drops fall
# below 1% of the requests.
import csv, glob, sys
labels = {int(r['point']): r['label'] for r in csv.DictReader(open(sys.argv[1] + '/runs.csv'))}
pts = {}
for f in sorted(glob.glob(sys.argv[1] + '/runs/p*-r*/timeseries.csv')):
    p = labels[int(f.split('/')[-2][1:4])]
    rows = list(csv.DictReader(open(f)))
    w = [r for r in rows if 75 <= float(r['t_s']) < 120]
    d = [int(r['drop_breaker']) / max(1, int(r['offered'])) for r in w]
    a = [int(r['attempts']) for r in w]
    close = next(float(r['t_s']) - 120 for r in rows if float(r['t_s']) >= 120 and int(r['drop_breaker']) < 0.01 * int(r['offered']))
    pts.setdefault(p, []).append((100 * min(d), 100 * max(d), min(a), max(a), close))
for p, v in pts.items():
    m = [sum(x[k] for x in v) / len(v) for k in range(5)]
    print(f"{p:21s} dropped {m[0]:.1f}-{m[1]:.1f}% | attempts/s {m[2]:.0f}-{m[3]:.0f} | drops < 1% at {m[4]:.1f} s after the outage")
