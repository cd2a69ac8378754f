# python3 drops.py SWEEP POINT LO-HI ...  (a sweep folder of this experiment)
# The requests a point's breakers or throttles dropped (drop_breaker +
# drop_throttle over offered, summed over its seeds' timeseries.csv) in
# each window of simulated seconds [LO, HI).
import csv, glob, sys
d, pt = sys.argv[1], int(sys.argv[2])
for w in sys.argv[3:]:
    lo, hi = map(float, w.split('-'))
    num = den = 0
    for f in glob.glob(f'{d}/runs/p{pt:03d}-r*/timeseries.csv'):
        for r in csv.DictReader(open(f)):
            if lo <= float(r['t_s']) < hi:
                num += int(r['drop_breaker']) + int(r['drop_throttle'])
                den += int(r['offered'])
    print(f'{w} s: {100 * num / den:.1f}% dropped locally')
