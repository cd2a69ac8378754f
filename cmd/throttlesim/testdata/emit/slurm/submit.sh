#!/bin/sh
# Submits the shards as a job array and the merge to run after all of them
# succeed. Logs: /DIR/jobs/tiny-slurm/logs/. Merged results: /DIR/results/tiny/.
set -eu
mkdir -p /DIR/jobs/tiny-slurm/logs
jid=$(sbatch --parsable --chdir=/DIR --output=/DIR/jobs/tiny-slurm/logs/shard-%a.out /DIR/jobs/tiny-slurm/shards.sbatch)
jid=${jid%%;*}
mid=$(sbatch --parsable --dependency=afterok:"$jid" --kill-on-invalid-dep=yes --chdir=/DIR --output=/DIR/jobs/tiny-slurm/logs/merge.out /DIR/jobs/tiny-slurm/merge.sbatch)
echo "shards: job $jid; merge: job ${mid%%;*} (runs after every shard succeeds)"
