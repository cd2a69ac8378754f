#!/bin/sh
# tables.sh SWEEP TABLE: a markdown table of docs/experiments/long-incident.md
# from the sweep `make experiment-long-incident` wrote in SWEEP. Every
# cell is the mean over a point's seeds ± the half-width of its Student-t
# 95% interval, of a figure averaged over a span of each run's
# timeseries.csv (awk) or read from its summary.json (jq).
set -eu
D=$1

. "$(dirname "$0")/../ci.sh" # ci FMT: mean ± 95% half-width of stdin

runs() { ls -d "$D"/runs/p"$(printf %03d "$1")"-r*; }

# ts POINT COL EXPR FROM TO FMT: the mean over the rows with FROM <= t_s
# < TO and column COL not blank of an awk expression of timeseries.csv's
# columns (c["name"]), per run (a run with no such row gives nothing).
ts() {
	for r in $(runs "$1"); do
		awk -F, -v col="$2" -v from="$4" -v to="$5" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
			$1 >= from && $1 < to && $(c[col]) != "" { s += '"$3"'; n++ } END { if (n) print s / n }' "$r/timeseries.csv"
	done | ci "$6"
}

# grp POINT GROUP: the share of GROUP's requests that succeeded over the
# run (summary.json's groups), per run, in percent.
grp() {
	for r in $(runs "$1"); do jq -r --arg g "$2" '.groups[] | select(.name == $g) | .success_ratio * 100' "$r/summary.json"; done | ci %.1f%%
}

sum() { for r in $(runs "$1"); do jq -r ".summary | $2" "$r/summary.json"; done | ci "$3"; }

label() { awk -F, -v p="$1" 'NR > 1 && $1 == p { print $2; exit }' "$D/runs.csv"; }
points() { awk -F, 'NR > 1 { print $1 }' "$D/runs.csv" | sort -un; }

L='$(c["concurrency_limit"])'
G='$(c["succeeded"]) / $(c["interval_s"])'
Q='$(c["queue_len"])'
P50='$(c["latency_p50_ms"])'
P99='$(c["latency_p99_ms"])'
case $2 in
limit)
	echo "| limiter | limit, 4–5 min | limit, 6–7 min | limit, 15–16 min | limit, 30–31 min | limit, 49–50 min | limit, 59–60 min |"
	echo "|---|---|---|---|---|---|---|"
	for p in $(points); do
		echo "| $(label "$p") | $(ts "$p" concurrency_limit "$L" 240 300 %.1f) | $(ts "$p" concurrency_limit "$L" 360 420 %.1f) | $(ts "$p" concurrency_limit "$L" 900 960 %.1f)" \
			"| $(ts "$p" concurrency_limit "$L" 1800 1860 %.1f) | $(ts "$p" concurrency_limit "$L" 2940 3000 %.1f) | $(ts "$p" concurrency_limit "$L" 3540 3600 %.1f) |"
	done
	;;
protect)
	echo "| limiter | goodput 10–50 min (/s) | queue 10–50 min | p50 10–50 min (ms) | p99 10–50 min (ms) | p99 50–60 min (ms) | success |"
	echo "|---|---|---|---|---|---|---|"
	for p in $(points); do
		echo "| $(label "$p") | $(ts "$p" succeeded "$G" 600 3000 %.1f) | $(ts "$p" queue_len "$Q" 600 3000 %.1f) | $(ts "$p" latency_p50_ms "$P50" 600 3000 %.0f)" \
			"| $(ts "$p" latency_p99_ms "$P99" 600 3000 %.0f) | $(ts "$p" latency_p99_ms "$P99" 3000 3600 %.0f) | $(sum "$p" '.success_ratio * 100' %.1f%%) |"
	done
	;;
priority)
	echo "| point | critical success | sheddable success | goodput 10–50 min (/s) | p50 10–50 min (ms) |"
	echo "|---|---|---|---|---|"
	for p in $(points); do
		echo "| $(label "$p") | $(grp "$p" critical) | $(grp "$p" sheddable) | $(ts "$p" succeeded "$G" 600 3000 %.1f)" \
			"| $(ts "$p" latency_p50_ms "$P50" 600 3000 %.0f) |"
	done
	;;
*)
	echo "tables.sh: unknown table $2 (limit, protect, priority)" >&2
	exit 2
	;;
esac
