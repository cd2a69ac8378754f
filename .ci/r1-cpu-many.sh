#!/usr/bin/env bash
# R1's whole-run CPU time (perf stat task-clock of `bench`, set-up
# included) for several throttlesim binaries in turn, median and minimum of
# REPS rounds: for telling builds apart that differ by a few percent.
# Usage, from the project root:  .ci/r1-cpu-many.sh N REPS BIN...
set -eu
n=$1; reps=$2; shift 2
tc() { perf stat -x, -e task-clock "$@" 2>&1 >/dev/null | grep task-clock | cut -d, -f1; }
declare -A R
for i in $(seq "$reps"); do
	for b in "$@"; do
		R[$b]+="$(tc "$b" bench scenarios/bench-r1.yaml --set clients.count="$n" --set seed="$i") "
	done
done
for b in "$@"; do
	python3 -c 'import statistics as s, sys; v = [float(x) for x in sys.argv[2].split()]; print("%-40s median %.1f ms  min %.1f" % (sys.argv[1], s.median(v), min(v)))' "$b" "${R[$b]}"
done
