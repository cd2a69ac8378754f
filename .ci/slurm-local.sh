#!/usr/bin/env bash
# A single-node Slurm cluster on loopback, for `make test-slurm`: Debian's
# slurm-wlm and munge, configured in a folder of its own (SLURM_LOCAL_DIR,
# default /tmp/throttlesim-slurm) and started as root. It never touches
# /etc/slurm; clients find it through SLURM_CONF=$SLURM_LOCAL_DIR/slurm.conf.
#
#   .ci/slurm-local.sh install   apt-get install slurm-wlm munge (root)
#   .ci/slurm-local.sh start     write slurm.conf, start munged, slurmctld, slurmd
#   .ci/slurm-local.sh stop      stop the daemons this script started
#
# start exits 3, saying why, when the packages are missing or we are not root:
# the caller skips, it does not fail.
set -euo pipefail
dir=${SLURM_LOCAL_DIR:-/tmp/throttlesim-slurm}
conf=$dir/slurm.conf

skip() { echo "slurm-local: skipped: $*" >&2; exit 3; }

case ${1:-} in
install)
	[ "$(id -u)" = 0 ] || skip "installing packages needs root"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends slurm-wlm munge >/dev/null
	;;
start)
	for c in slurmctld slurmd munged sbatch squeue; do
		command -v "$c" >/dev/null || skip "$c is not installed (Debian: apt-get install slurm-wlm munge, or .ci/slurm-local.sh install)"
	done
	[ "$(id -u)" = 0 ] || skip "the daemons run as root here (SlurmUser=root); run as root"
	"$0" stop >/dev/null 2>&1 || true
	mkdir -p "$dir"/{state,spool,log,run}
	# munge: a key if the package did not make one, and the daemon.
	if [ ! -s /etc/munge/munge.key ]; then
		mkdir -p /etc/munge
		dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
	fi
	chown munge:munge /etc/munge/munge.key 2>/dev/null || true
	chmod 400 /etc/munge/munge.key
	mkdir -p /run/munge /var/lib/munge /var/log/munge
	chown munge:munge /run/munge /var/lib/munge /var/log/munge 2>/dev/null || true
	if ! pgrep -x munged >/dev/null; then
		if id munge >/dev/null 2>&1; then runuser -u munge -- munged; else munged --force; fi
	fi
	cpus=$(nproc)
	mem=$(($(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 - 1024))
	cat >"$conf" <<EOF
# Written by .ci/slurm-local.sh: one node, this machine, on loopback.
ClusterName=throttlesim-local
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=16817
SlurmdPort=16818
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU_Memory
DefMemPerCPU=1024
SchedulerType=sched/backfill
MpiDefault=none
SwitchType=switch/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
ReturnToService=2
MinJobAge=600
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF
	export SLURM_CONF=$conf
	slurmctld -c
	slurmd -N localhost
	for _ in $(seq 60); do
		state=$(sinfo -h -o %t 2>/dev/null || true)
		case $state in idle*)
			echo "slurm-local: up ($cpus CPUs, $mem MiB); export SLURM_CONF=$conf"
			exit 0
			;;
		esac
		sleep 0.5
	done
	echo "slurm-local: the node did not come up (state '${state:-none}'); logs in $dir/log" >&2
	tail -n 20 "$dir"/log/*.log >&2 || true
	exit 1
	;;
stop)
	for p in slurmd slurmctld; do
		[ -s "$dir/run/$p.pid" ] && kill "$(cat "$dir/run/$p.pid")" 2>/dev/null || true
	done
	for _ in $(seq 20); do
		pgrep -x slurmctld >/dev/null || pgrep -x slurmd >/dev/null || break
		sleep 0.25
	done
	;;
*)
	echo "usage: $0 install|start|stop" >&2
	exit 2
	;;
esac
