#!/usr/bin/env bash
# The scaling table of docs/sweeps.md: scenarios/k-sweep.yaml (70 runs) run
# here with -j 1 and -j 2, then on the one-node Slurm of .ci/slurm-local.sh
# from `sweep --emit slurm` at several shards x CPUs. Wall time: from
# submit.sh to the merged results; CPU time: user + sys of every throttlesim
# process (shards and merge), from /usr/bin/time. Each merged folder is
# compared with the local sweep. Needs root, slurm-wlm and munge.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
"$repo/.ci/slurm-local.sh" start >/dev/null
export SLURM_CONF=${SLURM_LOCAL_DIR:-/tmp/throttlesim-slurm}/slurm.conf
w=$(mktemp -d /tmp/throttlesim-scaling.XXXXXX)
trap 'rm -rf "$w"' EXIT
go build -C "$repo" -o "$w/throttlesim" ./cmd/throttlesim
cd "$w"
cp -r "$repo/scenarios" .
printf '#!/bin/sh\nexec /usr/bin/time -a -o %s/cpu.log -f "%%U %%S" %s/throttlesim "$@"\n' "$w" "$w" >bin.sh
chmod +x bin.sh
cpu() { awk '{u += $1; s += $2} END {printf "%.1f", u + s}' cpu.log; }
now() { date +%s.%N; }
echo "| where | shards × CPUs | wall (s) | CPU (s) | merged = local |"
echo "|---|---|---|---|---|"
for j in 1 2; do
	rm -f cpu.log
	t0=$(now)
	./bin.sh sweep -q scenarios/k-sweep.yaml -j "$j" --out "local-$j"
	printf '| here, `-j %d` | — | %.1f | %s | — |\n' "$j" "$(echo "$(now) - $t0" | bc)" "$(cpu)"
done
for cfg in "1 1" "1 2" "2 1" "2 2" "4 1" "8 1"; do
	read -r n c <<<"$cfg"
	name=s$n-$c
	rm -f cpu.log
	./throttlesim sweep --force -q scenarios/k-sweep.yaml --emit slurm --shards "$n" --cpus "$c" --memory 512M --binary "$w/bin.sh" --out "results/$name" >/dev/null
	t0=$(now)
	sh "jobs/$name-slurm/submit.sh" >/dev/null
	while [ ! -f "results/$name/report.html" ] || [ -n "$(squeue -h -n "$name-merge,$name-shards" -o %i)" ]; do sleep 0.2; done
	same=$(diff -r -q local-1 "results/$name" >/dev/null && echo yes || echo NO)
	printf '| Slurm | %d × %d | %.1f | %s | %s |\n' "$n" "$c" "$(echo "$(now) - $t0" | bc)" "$(cpu)" "$same"
done
