#!/usr/bin/env bash
# A one-node Slurm cluster on this machine, for the sweep tests and for trying the Slurm executor:
#
#   tools/slurm_local.sh up       # start munge, slurmctld and slurmd; wait until the node is idle
#   tools/slurm_local.sh status   # sinfo and squeue
#   tools/slurm_local.sh down     # stop the daemons it started (by the PIDs in their pid files)
#
# Needs root and Debian's packages: apt-get install -y --no-install-recommends slurm-wlm munge
# It writes /etc/slurm/slurm.conf only when there is none, or when the one there is its own (first line below);
# a cluster's real configuration is never touched. Its state, logs and pid files live in $SLURM_LOCAL_DIR
# (default /tmp/fewshot-slurm). No accounting database: `sacct` fails, and submitit says so on each poll.
set -euo pipefail
DIR=${SLURM_LOCAL_DIR:-/tmp/fewshot-slurm}
CONF=/etc/slurm/slurm.conf
MARK="# fewshot_nb tools/slurm_local.sh: a one-node test cluster"

die() { echo "slurm_local.sh: $*" >&2; exit 1; }
stop_pidfile() {   # stop the process of a pid file, wait for it to go, remove the file
    local f=$1 pid
    [ -f "$f" ] || return 0
    pid=$(cat "$f" 2>/dev/null || true)
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
        kill "$pid"
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    fi
    rm -f "$f"
}

case "${1:-}" in
up)
    [ "$(id -u)" = 0 ] || die "run it as root (the daemons run as root here)"
    for cmd in munged slurmctld slurmd sinfo; do
        command -v "$cmd" >/dev/null || die "$cmd not found: apt-get install -y --no-install-recommends slurm-wlm munge"
    done
    if [ -f "$CONF" ] && [ "$(head -n 1 "$CONF")" != "$MARK" ]; then
        die "$CONF exists and is not this script's: this machine has a Slurm configuration of its own; use that cluster"
    fi
    if [ -f "$CONF" ] && sinfo -h -N -o %t 2>/dev/null | grep -qE '^(idle|mix|alloc)'; then
        echo "Slurm is already up (started by an earlier 'up'; its 'down' stops it)"; exit 0
    fi
    mkdir -p "$DIR/spool" "$DIR/state" "$DIR/log" /etc/slurm /run/munge
    host=$(hostname -s)
    cpus=$(nproc)
    mem=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 - 1024 ))
    cat > "$CONF.tmp" <<EOF
$MARK
ClusterName=fewshot
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
NodeName=$host CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
    mv "$CONF.tmp" "$CONF"
    if ! pgrep -x munged >/dev/null; then
        munged --force --pid-file="$DIR/munged.pid" 2>>"$DIR/log/munged.err" || munged --force 2>>"$DIR/log/munged.err"
    fi
    [ -f "$DIR/slurmctld.pid" ] && kill -0 "$(cat "$DIR/slurmctld.pid")" 2>/dev/null || slurmctld
    [ -f "$DIR/slurmd.pid" ] && kill -0 "$(cat "$DIR/slurmd.pid")" 2>/dev/null || slurmd
    for _ in $(seq 100); do
        state=$(sinfo -h -N -o %t 2>/dev/null | head -n 1 || true)
        case "$state" in idle|mix|alloc) echo "Slurm is up: node $host ($cpus CPUs, ${mem} MB), partition debug"; exit 0;; esac
        sleep 0.3
    done
    die "the node did not become idle within 30 s (state: '${state:-none}'); see $DIR/log/"
    ;;
down)
    stop_pidfile "$DIR/slurmd.pid"
    stop_pidfile "$DIR/slurmctld.pid"
    stop_pidfile "$DIR/munged.pid"
    if [ -f "$CONF" ] && [ "$(head -n 1 "$CONF")" = "$MARK" ]; then rm -f "$CONF"; fi
    echo "Slurm is down"
    ;;
status)
    sinfo && squeue
    ;;
*)
    sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
    ;;
esac
