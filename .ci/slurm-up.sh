#!/usr/bin/env bash
# Start a private one-node Slurm cluster (munged + slurmctld + slurmd) on this machine for the
# tests of `pilotsim sweep --slurm`. Recipe and pitfalls: shared/reference/slurm-local.md
# (Debian 12, root, no systemd; Debian's slurm-wlm 22.05, no cgroups, no accounting database).
#
# Idempotent: installs the packages only if slurmctld is missing, stops a cluster an earlier
# run of this script left behind (.ci/slurm-down.sh), wipes the private directory (job ids
# restart at 1), configures, starts the daemons and waits until the node is idle.
#
# Everything lives under $PILOTSIM_SLURM_DIR (default /tmp/pilotsim-slurm). Client commands
# (sbatch, squeue, ...) find the configuration through SLURM_CONF=$PILOTSIM_SLURM_DIR/slurm.conf;
# for convenience /etc/slurm/slurm.conf is made a symlink to it when no such file exists
# (slurm-down.sh removes the symlink again).
#
# Settings (environment): PILOTSIM_SLURM_DIR; PILOTSIM_SLURM_CPUS, CPUs the node advertises
# (default 4, more than the cores so that several array tasks run at once; accepted thanks to
# SlurmdParameters=config_overrides); PILOTSIM_SLURM_TIMEOUT, seconds to wait for the node (30).
set -euo pipefail
export PATH="$PATH:/usr/sbin:/sbin"
here=$(cd "$(dirname "$0")" && pwd)
dir=${PILOTSIM_SLURM_DIR:-/tmp/pilotsim-slurm}
cpus=${PILOTSIM_SLURM_CPUS:-4}
timeout=${PILOTSIM_SLURM_TIMEOUT:-30}
conf=$dir/slurm.conf

# Fail with the last lines of every log, stopping whatever was started.
die() {
    echo "slurm-up: $*" >&2
    for log in "$dir"/log/*.log "$dir"/munge/munged.log; do
        [ -f "$log" ] && { echo "--- last lines of $log" >&2; tail -n 20 "$log" >&2; }
    done
    PILOTSIM_SLURM_DIR=$dir "$here/slurm-down.sh" || true
    exit 1
}

# Any failing command from here on stops what was started and shows the logs.
trap 'die "a command failed at line $LINENO"' ERR

if [ "$(id -u)" != 0 ]; then
    echo "slurm-up: must run as root (it installs packages and starts daemons)" >&2
    exit 1
fi

# Install: 8 small packages; the postinst scripts say they could not start the services, which
# is expected without systemd (nothing is started).
if ! command -v slurmctld >/dev/null 2>&1; then
    echo "slurm-up: installing Slurm (apt-get)"
    apt-get update -q
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
        slurmctld slurmd slurm-client munge
fi

# A cluster left over from an earlier start is stopped before its directory is wiped; the
# directory must be absolute and new, empty or ours (never wipe a mistyped $HOME).
case $dir in /?*) ;; *) echo "slurm-up: PILOTSIM_SLURM_DIR must be an absolute path below /" >&2; exit 1 ;; esac
if [ -d "$dir" ] && [ -n "$(ls -A "$dir")" ] && ! grep -qs '^# Written by .ci/slurm-up.sh' "$conf"; then
    echo "slurm-up: $dir exists and was not made by this script; not wiping it" >&2
    exit 1
fi
PILOTSIM_SLURM_DIR=$dir "$here/slurm-down.sh" || echo "slurm-up: warning: slurm-down.sh reported a problem" >&2
rm -rf "$dir"
mkdir -p "$dir"/state "$dir"/spool "$dir"/log "$dir"/run "$dir"/munge

# munge: without systemd /run/munge does not exist, and munged refuses root-owned or
# group-writable directories, so it gets a private directory owned by munge with a fresh key
# (mode 711, not 700: slurm's daemons and clients must reach the socket in it).
chown munge:munge "$dir/munge"
chmod 711 "$dir/munge"
dd if=/dev/urandom of="$dir/munge/munge.key" bs=1 count=1024 status=none
chown munge:munge "$dir/munge/munge.key"
chmod 400 "$dir/munge/munge.key"
socket=$dir/munge/munge.socket
runuser -u munge -- munged --key-file="$dir/munge/munge.key" --socket="$socket" \
    --pid-file="$dir/munge/munged.pid" --log-file="$dir/munge/munged.log" \
    --seed-file="$dir/munge/munged.seed" ||
    die "munged did not start"

# Real memory of the machine (or every job asking --mem is rejected): the RealMemory field of
# the node line `slurmd -C` prints.
mem=$(slurmd -C | sed -n 's/.*RealMemory=\([0-9]*\).*/\1/p' | head -n 1)
[ -n "$mem" ] || die "could not read RealMemory from 'slurmd -C'"

cat >"$conf" <<EOF
# Written by .ci/slurm-up.sh (see shared/reference/slurm-local.md); wiped at each start.
ClusterName=pilotsim
SlurmctldHost=localhost
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
# No cgroups: proctrack/cgroup fails every job ("freezer not mounted") and drains the node.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
# No accounting database: sacct only with -c, from the job-completion file.
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$dir/log/jobcomp.txt
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0,sched_min_interval=0
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
ReturnToService=2
MpiDefault=none
MailProg=/bin/true
NodeName=localhost CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$conf
if [ ! -e /etc/slurm/slurm.conf ] && [ ! -L /etc/slurm/slurm.conf ]; then
    mkdir -p /etc/slurm
    ln -s "$conf" /etc/slurm/slurm.conf
fi

slurmctld -f "$conf" || die "slurmctld did not start"
slurmd -f "$conf" -N localhost || die "slurmd did not start"

# Bounded wait for the node to be idle (usually well under a second).
deadline=$((SECONDS + timeout))
state=
while :; do
    state=$(sinfo -h -n localhost -o %t 2>/dev/null || true)
    [ "$state" = idle ] && break
    case $state in inval* | drain* | down*) die "node localhost is '$state' (see the logs below)" ;; esac
    [ "$SECONDS" -lt "$deadline" ] || die "node localhost not idle after ${timeout}s (state: '${state:-no answer}')"
    sleep 0.1
done
echo "slurm-up: node localhost idle with $cpus CPUs and ${mem} MB; export SLURM_CONF=$conf"
