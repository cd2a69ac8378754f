#!/usr/bin/env bash
# R1's loop CPU time, three binaries in turn: the hand-written limit, a
# "before" and an "after" throttlesim. perf stat's task-clock of each
# binary's 600 s run minus its 1 s run (the set-up), medians of REPS rounds;
# CPU time moves less with the machine's load than events/s do.
# Usage, from the project root:
#   .ci/r1-cpu-ab.sh HANDOPT BEFORE AFTER N REPS
# HANDOPT is ../shared/bench/handopt built (go build -o X .), BEFORE and
# AFTER are throttlesim binaries (e.g. go build -o /tmp/after ./cmd/throttlesim
# here and in a worktree of the commit before).
set -eu
ho=$1; before=$2; after=$3; n=$4; reps=$5
tc() { perf stat -x, -e task-clock "$@" 2>&1 >/dev/null | grep task-clock | cut -d, -f1; }
H=(); B=(); A=(); H1=(); B1=(); A1=()
for i in $(seq "$reps"); do
	H+=("$(tc "$ho" -n "$n" -t 600 -seed "$i")"); B+=("$(tc "$before" bench scenarios/bench-r1.yaml --set clients.count="$n" --set seed="$i")")
	A+=("$(tc "$after" bench scenarios/bench-r1.yaml --set clients.count="$n" --set seed="$i")")
	H1+=("$(tc "$ho" -n "$n" -t 1 -seed "$i")"); B1+=("$(tc "$before" bench scenarios/bench-r1.yaml --set clients.count="$n" --set seed="$i" --set duration=1s)")
	A1+=("$(tc "$after" bench scenarios/bench-r1.yaml --set clients.count="$n" --set seed="$i" --set duration=1s)")
done
python3 - "$n" "${H[*]}" "${B[*]}" "${A[*]}" "${H1[*]}" "${B1[*]}" "${A1[*]}" <<'PY'
import statistics as s, sys
n = sys.argv[1]; f = lambda x: [float(v) for v in x.split()]
H, B, A, H1, B1, A1 = map(f, sys.argv[2:8])
h, b, a = (s.median(x) - s.median(y) for x, y in ((H, H1), (B, B1), (A, A1)))
print("N=%s loop CPU ms, medians of %d: handopt %.0f  before %.0f (%.2fx)  after %.0f (%.2fx)  after/before %.3f"
      % (n, len(H), h, b, h / b, a, h / a, a / b))
PY
