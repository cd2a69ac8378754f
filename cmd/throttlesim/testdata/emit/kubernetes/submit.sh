#!/bin/sh
# Runs the shards as an Indexed Job, waits until every index has succeeded,
# then runs the merge Job. The PersistentVolumeClaim throttlesim-results (ReadWriteMany)
# must exist in the namespace; the merged results are in /results/tiny-k on it.
set -eu
cd "$(dirname "$0")"
wait_job() {
	while :; do
		state=$(kubectl get "job/$1" -o 'jsonpath={.status.conditions[?(@.status=="True")].type}')
		case "$state" in
		*Complete*) return 0 ;;
		*Failed*) echo "job/$1 failed: kubectl describe job/$1" >&2; return 1 ;;
		esac
		sleep 10
	done
}
kubectl apply -f shards.yaml
wait_job tiny-k-shards
kubectl apply -f merge.yaml
wait_job tiny-k-merge
echo "merged results: /results/tiny-k on the claim throttlesim-results"
