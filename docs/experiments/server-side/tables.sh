#!/bin/sh
# tables.sh RESULTS TABLE: one markdown table of
# docs/experiments/server-side.md, from the sweeps `make
# experiment-server-side` wrote under RESULTS. Every cell is the mean over
# a point's seeds ± the half-width of its Student-t 95% interval, of a
# figure read from each run's summary.json (jq) or averaged over a span of
# its timeseries.csv (awk).
set -eu
R=$1

. "$(dirname "$0")/../ci.sh" # ci FMT: mean ± 95% half-width of stdin

# runs DIR POINT: the run folders of point POINT (0-based) of sweep DIR.
runs() { ls -d "$1"/runs/p"$(printf %03d "$2")"-r*; }

# sum DIR POINT JQ FMT: a summary.json figure (a jq expression on
# .summary) per run, as mean ± CI.
sum() {
	for r in $(runs "$1" "$2"); do jq -r ".summary | $3" "$r/summary.json"; done | ci "$4"
}

# ts DIR POINT COLUMN FROM TO FMT: the mean of a timeseries.csv column
# over the rows with FROM <= t_s < TO, per run, as mean ± CI.
ts() {
	for r in $(runs "$1" "$2"); do
		awk -F, -v col="$3" -v from="$4" -v to="$5" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
			$1 >= from && $1 < to && $(c[col]) != "" { s += $(c[col]); n++ } END { print s / n }' "$r/timeseries.csv"
	done | ci "$6"
}

label() { awk -F, -v p="$2" 'NR > 1 && $1 == p { print $2; exit }' "$1/runs.csv"; }

points() { awk -F, 'NR > 1 { print $1 }' "$1/runs.csv" | sort -un; }

case $2 in
gradient2)
	D=$R/gradient2
	echo "| limiter | limit, 0–1 min | limit, 9–10 min | limit, 19–20 min | limit, 29–30 min | p50 latency, 29–30 min (ms) | success |"
	echo "|---|---|---|---|---|---|---|"
	for p in $(points "$D"); do
		echo "| $(label "$D" "$p") | $(ts "$D" "$p" concurrency_limit 0 60 %.1f) | $(ts "$D" "$p" concurrency_limit 540 600 %.1f)" \
			"| $(ts "$D" "$p" concurrency_limit 1140 1200 %.1f) | $(ts "$D" "$p" concurrency_limit 1740 1800 %.1f)" \
			"| $(ts "$D" "$p" latency_p50_ms 1740 1800 %.0f) | $(sum "$D" "$p" '.success_ratio * 100' %.1f%%) |"
	done
	;;
envoy)
	D=$R/envoy
	echo "| point | mean limit (1–10 min) | mean queue (1–10 min) | p50 latency (ms) | p99 latency (ms) | goodput (/s) | refused by the limiter |"
	echo "|---|---|---|---|---|---|---|"
	for p in $(points "$D"); do
		echo "| $(label "$D" "$p") | $(ts "$D" "$p" concurrency_limit 60 600 %.0f) | $(ts "$D" "$p" queue_len 60 600 %.0f)" \
			"| $(sum "$D" "$p" .latency_p50_ms %.0f) | $(sum "$D" "$p" .latency_p99_ms %.0f) | $(sum "$D" "$p" '.succeeded / 600' %.0f)" \
			"| $(sum "$D" "$p" '(.shed // 0) / .backend_received * 100' %.1f%%) |"
	done
	;;
queueing)
	D=$R/queueing
	echo "| discipline | success (answered within the 1 s timeout) | mean queueing delay (ms) | p99 latency of successes (ms) | dropped by CoDel |"
	echo "|---|---|---|---|---|"
	for p in $(points "$D"); do
		echo "| $(label "$D" "$p" | sed 's/discipline=//') | $(sum "$D" "$p" '.success_ratio * 100' %.1f%%) | $(sum "$D" "$p" .mean_queue_wait_ms %.0f)" \
			"| $(sum "$D" "$p" .latency_p99_ms %.0f) | $(sum "$D" "$p" '(.shed // 0)' %.0f) |"
	done
	;;
dagor)
	D=$R/dagor
	# grp NAME JQ: a figure of client group NAME's summary
	grp() { echo ".groups[] | select(.name == \"$1\") | $2"; }
	echo "| point | critical (priority 0) | mixed (0 or 3) | sheddable (3) | all | mean queueing delay (ms) | utilisation |"
	echo "|---|---|---|---|---|---|---|"
	for p in $(points "$D"); do
		row="| $(label "$D" "$p")"
		for g in critical mixed sheddable; do
			row="$row | $(for r in $(runs "$D" "$p"); do jq -r "$(grp $g '.success_ratio * 100')" "$r/summary.json"; done | ci %.1f%%)"
		done
		echo "$row | $(sum "$D" "$p" '.success_ratio * 100' %.1f%%) | $(sum "$D" "$p" .mean_queue_wait_ms %.0f) | $(sum "$D" "$p" '.utilisation * 100' %.0f%%) |"
	done
	;;
shedding-*)
	D=$R/$2
	echo "| point | success | offered requests dropped by the throttle | attempts refused by the server | attempts received (/s) | goodput (/s) | wasted worker time |"
	echo "|---|---|---|---|---|---|---|"
	for p in $(points "$D"); do
		echo "| $(label "$D" "$p") | $(sum "$D" "$p" '.success_ratio * 100' %.1f%%) | $(sum "$D" "$p" '.dropped_throttle / .offered * 100' %.1f%%)" \
			"| $(sum "$D" "$p" '(.backend_rejected + .queue_timeouts) / .backend_received * 100' %.1f%%)" \
			"| $(sum "$D" "$p" '.backend_received / 120' %.0f) | $(sum "$D" "$p" '.succeeded / 120' %.0f)" \
			"| $(sum "$D" "$p" '.wasted_work_fraction * 100' %.1f%%) |"
	done
	;;
*)
	echo "tables.sh: unknown table $2" >&2
	exit 2
	;;
esac
