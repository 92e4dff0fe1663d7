#!/usr/bin/env bash
# Stop the private Slurm cluster .ci/slurm-up.sh started (see shared/reference/slurm-local.md):
# cancel every job, wait (bounded) for them to end so that no job process outlives slurmd,
# then TERM slurmd, slurmctld and munged by the PIDs in their pid files (never by name) and
# wait for them to exit. Idempotent: does nothing for daemons that are not running. The
# directory ($PILOTSIM_SLURM_DIR, default /tmp/pilotsim-slurm) is kept for its logs; the next
# slurm-up.sh wipes it.
set -uo pipefail
export PATH="$PATH:/usr/sbin:/sbin"
dir=${PILOTSIM_SLURM_DIR:-/tmp/pilotsim-slurm}
conf=$dir/slurm.conf
export SLURM_CONF=$conf

# The PID in pid file $1 if it names a live process called $2 (a stale pid file, or a PID
# reused by another program, gives nothing).
live_pid() {
    local pid
    [ -f "$1" ] || return 1
    pid=$(cat "$1" 2>/dev/null) || return 1
    [[ $pid =~ ^[0-9]+$ ]] || return 1
    [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$2" ] || return 1
    echo "$pid"
}

if [ -f "$conf" ] && live_pid "$dir/run/slurmctld.pid" slurmctld >/dev/null; then
    jobs=$(squeue -h -o %F 2>/dev/null | sort -u)
    if [ -n "$jobs" ]; then
        # shellcheck disable=SC2086 # one word per job id
        scancel $jobs 2>/dev/null
        for _ in $(seq 100); do
            [ -z "$(squeue -h 2>/dev/null)" ] && break
            sleep 0.1
        done
    fi
fi

# TERM the PIDs given and wait (bounded) for them to exit; KILL what is left after 10 s.
status=0
stop() {
    local pid
    for pid in "$@"; do kill -TERM "$pid" 2>/dev/null; done
    for _ in $(seq 100); do
        for pid in "$@"; do kill -0 "$pid" 2>/dev/null && break; pid=; done
        [ -z "$pid" ] && return
        sleep 0.1
    done
    for pid in "$@"; do
        if kill -0 "$pid" 2>/dev/null; then
            echo "slurm-down: pid $pid ($(cat "/proc/$pid/comm" 2>/dev/null)) still running 10 s after TERM; sending KILL" >&2
            kill -KILL "$pid" 2>/dev/null
            status=1
        fi
    done
}

# slurmd and slurmctld together (each takes 1-2 s to exit), then munged, which they use.
pids=()
pid=$(live_pid "$dir/run/slurmd.pid" slurmd) && pids+=("$pid")
pid=$(live_pid "$dir/run/slurmctld.pid" slurmctld) && pids+=("$pid")
[ ${#pids[@]} -eq 0 ] || stop "${pids[@]}"
pid=$(live_pid "$dir/munge/munged.pid" munged) && stop "$pid"

if [ -L /etc/slurm/slurm.conf ] && [ "$(readlink /etc/slurm/slurm.conf)" = "$conf" ]; then
    rm -f /etc/slurm/slurm.conf
fi
exit $status
