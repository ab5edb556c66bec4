#!/usr/bin/env bash
# A one-node Slurm cluster in a directory, for the gated test
# tests/swebench_slurm.rs (and for trying `nib swebench slurm` by hand):
#
#   scripts/slurm-local.sh start DIR   # munged, slurmctld, slurmd; prints SLURM_CONF=...
#   scripts/slurm-local.sh stop DIR    # stops the three daemons started in DIR
#
# Needs Debian's slurm-wlm and munge (apt-get install slurm-wlm munge) and
# root (the daemons run as root here). Everything lives in DIR: the
# config, a munge key and socket of its own, state, spool and logs, on
# ports picked free, so it does not touch a system Slurm or munge.
set -euo pipefail

cmd=${1:-}
dir=${2:-}
if [ -z "$cmd" ] || [ -z "$dir" ]; then
    echo "usage: $0 start|stop DIR" >&2
    exit 2
fi
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)

stop() {
    for pidfile in "$dir/slurmd.pid" "$dir/slurmctld.pid" "$dir/munge/munged.pid"; do
        if [ -s "$pidfile" ]; then
            kill "$(cat "$pidfile")" 2>/dev/null || true
        fi
    done
}

if [ "$cmd" = stop ]; then
    stop
    exit 0
fi
if [ "$cmd" != start ]; then
    echo "usage: $0 start|stop DIR" >&2
    exit 2
fi

for tool in munged mungekey slurmctld slurmd sbatch; do
    if ! command -v "$tool" >/dev/null 2>&1 && [ ! -x "/usr/sbin/$tool" ]; then
        echo "slurm-local: $tool is missing: apt-get install slurm-wlm munge" >&2
        exit 3
    fi
done
if [ "$(id -u)" != 0 ]; then
    echo "slurm-local: the daemons are started as root here; run as root" >&2
    exit 3
fi
export PATH="$PATH:/usr/sbin"

# Two free TCP ports, from the kernel.
ports=$(python3 -c 'import socket
s=[socket.socket() for _ in range(2)]
[x.bind(("127.0.0.1",0)) for x in s]
print(" ".join(str(x.getsockname()[1]) for x in s))')
read -r ctld_port d_port <<<"$ports"

mkdir -p "$dir/munge" "$dir/state" "$dir/spool" "$dir/log"
chmod 700 "$dir/munge"
if [ ! -s "$dir/munge/munge.key" ]; then
    mungekey --create --keyfile="$dir/munge/munge.key" >/dev/null 2>&1 ||
        dd if=/dev/urandom of="$dir/munge/munge.key" bs=1 count=1024 status=none
    chmod 600 "$dir/munge/munge.key"
fi
munged --force --key-file="$dir/munge/munge.key" --socket="$dir/munge/munge.socket" \
    --pid-file="$dir/munge/munged.pid" --log-file="$dir/log/munged.log" \
    --seed-file="$dir/munge/munged.seed"

host=$(hostname -s)
cpus=$(nproc)
cat >"$dir/slurm.conf" <<CONF
ClusterName=nibtest
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket
CredType=cred/munge
SlurmctldPort=$ctld_port
SlurmdPort=$d_port
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
MpiDefault=none
SwitchType=switch/none
NodeName=$host CPUs=$cpus State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
CONF
export SLURM_CONF="$dir/slurm.conf"
slurmctld -f "$SLURM_CONF"
slurmd -f "$SLURM_CONF"

# Up when the node takes jobs.
for _ in $(seq 1 60); do
    if sinfo -h -o '%T' 2>/dev/null | grep -qE '^(idle|mixed|allocated)'; then
        echo "SLURM_CONF=$SLURM_CONF"
        exit 0
    fi
    sleep 0.5
done
echo "slurm-local: the node did not come up; logs in $dir/log" >&2
sinfo >&2 || true
tail -n 20 "$dir/log/slurmctld.log" "$dir/log/slurmd.log" >&2 || true
stop
exit 1
