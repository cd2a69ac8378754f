#!/usr/bin/env python3
"""Tail latency and success during and after the slow period of the
slow-replica experiment (docs/experiments/slow-replica.md), from a sweep
run with metrics.interval=60s: each timeseries.csv row is then one
minute, and its latency_p99_ms is that minute's p99.

Usage: windows.py SWEEP_DIR  (prints a markdown table)

Per point: the p99 of the minute 0-60 s (before the slowdown), of the
minutes 60-120 s and 120-180 s (during it) and 180-240 s (after it), and the success of the requests that ended
during (60-180 s) and after (180-300 s) the slowdown, succeeded /
(succeeded + failed), and the retries sent during it; mean +- the half-width of the 95% Student-t
interval over the seeds.
"""
import csv
import json
import math
import os
import sys

# Student t, 0.975 quantile, by degrees of freedom.
T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262,
        10: 2.228, 15: 2.131, 20: 2.086, 30: 2.042}


def ci(xs):
    n = len(xs)
    m = sum(xs) / n
    if n < 2:
        return m, 0.0
    sd = math.sqrt(sum((x - m) ** 2 for x in xs) / (n - 1))
    t = T975.get(n - 1) or T975[max(k for k in T975 if k <= n - 1)]
    return m, t * sd / math.sqrt(n)


def main(root):
    sweep = json.load(open(os.path.join(root, "sweep.json")))
    points = sweep.get("points") or sweep.get("rows")
    labels = {}
    for f in sorted(os.listdir(os.path.join(root, "runs"))):
        p = int(f[1:4])
        labels.setdefault(p, []).append(os.path.join(root, "runs", f, "timeseries.csv"))
    print("| point | p99 0–60 s (ms) | p99 60–120 s (ms) | p99 120–180 s (ms) | p99 180–240 s (ms) | success 60–180 s | success 180–300 s | retries 60–180 s |")
    print("|---|---|---|---|---|---|---|---|")
    for p, files in sorted(labels.items()):
        cols = {k: [] for k in ("p0", "p1", "p2", "p3", "sd", "sa", "re")}
        for fn in files:
            rows = {int(float(r["t_s"])): r for r in csv.DictReader(open(fn))}
            cols["re"].append(sum(float(rows[t]["retries"]) for t in (60, 120)))
            cols["p0"].append(float(rows[0]["latency_p99_ms"]))
            cols["p1"].append(float(rows[60]["latency_p99_ms"]))
            cols["p2"].append(float(rows[120]["latency_p99_ms"]))
            cols["p3"].append(float(rows[180]["latency_p99_ms"]))
            for key, ts in (("sd", (60, 120)), ("sa", (180, 240))):
                ok = sum(float(rows[t]["succeeded"]) for t in ts)
                bad = sum(float(rows[t]["failed"]) for t in ts)
                cols[key].append(100 * ok / (ok + bad))
        label = points[p]["label"] if points and isinstance(points[p], dict) and "label" in points[p] else str(p)
        f = ["%.0f ± %.0f" % ci(cols[k]) for k in ("p0", "p1", "p2", "p3")] + ["%.3f%% ± %.3f" % ci(cols[k]) for k in ("sd", "sa")] + ["%.0f ± %.0f" % ci(cols["re"])]
        print("| %s | %s |" % (label, " | ".join(f)))


if __name__ == "__main__":
    main(sys.argv[1])
