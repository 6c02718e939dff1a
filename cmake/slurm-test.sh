#!/bin/bash
# Runs a sharded numgap comparison as a real Slurm array job on a one-node
# cluster started on this machine, and checks the merged report against the
# unsharded one (README: "Comparisons over many machines").
#
#   sudo cmake/slurm-test.sh [NUMGAP_BINARY] [SHARDS] [NODES]
#
# Needs root (apt, daemons) on Debian 12: installs slurm-wlm and munge when
# missing, starts munged with the package's key, writes a minimal slurm.conf
# for this host (its name, CPUs and memory) under a scratch directory, starts
# slurmctld and slurmd, generates a reference and a target run
# (examples/slurm/make_runs.py), compares them once unsharded, submits
# examples/slurm/submit.sh (an array job of SHARDS tasks and a dependent
# merge), waits, and requires report.json and report.csv to equal the
# unsharded ones byte for byte and the merge job to exit with the unsharded
# exit status. Stops every daemon it started (by pid) on the way out.
# Not part of CI (it installs packages and starts daemons); on a busy 2-core
# machine it took 13 to 21 s once the packages were installed.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
numgap=$(realpath "${1:-$repo/build/examples/numgap}")
shards=${2:-7}
nodes=${3:-300}
[[ -x $numgap ]] || { echo "slurm-test: no numgap binary at $numgap (build numgap_cli first)" >&2; exit 2; }
[[ $(id -u) == 0 ]] || { echo "slurm-test: run as root (installs packages, starts daemons)" >&2; exit 2; }
start=$(date +%s)

if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
    echo "slurm-test: installing slurm-wlm and munge"
    DEBIAN_FRONTEND=noninteractive nice -n 19 apt-get install -y --no-install-recommends slurm-wlm munge >/dev/null
fi

work=$(mktemp -d /tmp/numgap-slurm-test.XXXXXX)
chmod 755 "$work"
pids=()
cleanup() {
    local status=$?
    # Only the daemons this script started, by their pid.
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    done
    if ((status == 0)); then rm -rf "$work"; else echo "slurm-test: kept $work for inspection" >&2; fi
    exit "$status"
}
trap cleanup EXIT

# munge: the package's key (generated at install); a private socket so an
# existing munged is left alone.
[[ -s /etc/munge/munge.key ]] || { mungekey --create --force 2>/dev/null || dd if=/dev/urandom of=/etc/munge/munge.key bs=1 count=1024 status=none; }
chown munge:munge /etc/munge/munge.key && chmod 400 /etc/munge/munge.key
mkdir -p "$work/munge" && chown munge:munge "$work/munge"
socket=$work/munge/munge.socket
runuser -u munge -- /usr/sbin/munged --socket="$socket" --pid-file="$work/munge/munged.pid" \
    --log-file="$work/munge/munged.log" --seed-file="$work/munge/munged.seed"
for _ in $(seq 50); do [[ -s $work/munge/munged.pid ]] && break; sleep 0.1; done
pids+=("$(cat "$work/munge/munged.pid")")

host=$(hostname -s)
cpus=$(nproc)
memory=$(($(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 - 1024))
mkdir -p "$work/state" "$work/spool" "$work/log"
cat >"$work/slurm.conf" <<CONF
ClusterName=numgaptest
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$socket
CredType=cred/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
ReturnToService=2
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/log/slurmctld.log
SlurmdLogFile=$work/log/slurmd.log
SlurmctldPort=16817
SlurmdPort=16818
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
MinJobAge=600
NodeName=$host CPUs=$cpus RealMemory=$memory State=UNKNOWN
PartitionName=numgap Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF=$work/slurm.conf
# -i: ignore state from an earlier run; both daemonise and write their pid files.
/usr/sbin/slurmctld -i -f "$SLURM_CONF"
for _ in $(seq 100); do [[ -s $work/slurmctld.pid ]] && break; sleep 0.1; done
pids+=("$(cat "$work/slurmctld.pid")")
/usr/sbin/slurmd -f "$SLURM_CONF"
for _ in $(seq 100); do [[ -s $work/slurmd.pid ]] && break; sleep 0.1; done
pids+=("$(cat "$work/slurmd.pid")")
for _ in $(seq 120); do
    sinfo -h -o %T 2>/dev/null | grep -qx idle && break
    sleep 0.5
done
sinfo -h -o %T | grep -qx idle || { echo "slurm-test: the node never became idle" >&2; sinfo >&2 || true; exit 1; }
echo "slurm-test: one-node cluster up on $host ($cpus CPUs, $memory MiB) after $(($(date +%s) - start)) s"

nice -n 19 python3 "$repo/examples/slurm/make_runs.py" "$work/runs" --nodes "$nodes"
set +e
nice -n 19 "$numgap" compare "$work/runs/reference" "$work/runs/target" --json "$work/whole.json" \
    --csv "$work/whole.csv" >"$work/whole.txt"
expected_status=$?
set -e
echo "slurm-test: unsharded compare of $nodes nodes exits $expected_status"

submitted=$(date +%s)
merge_job=$(nice -n 19 "$repo/examples/slurm/submit.sh" "$numgap" "$work/runs/reference" "$work/runs/target" \
    "$shards" "$work/out")
echo "slurm-test: submitted $shards shard tasks and merge job $merge_job"
state=
for _ in $(seq 600); do
    state=$(scontrol show job "$merge_job" 2>/dev/null | grep -o 'JobState=[A-Z_]*' | cut -d= -f2 || true)
    case $state in COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY) break ;; esac
    sleep 0.5
done
exit_code=$(scontrol show job "$merge_job" | grep -o ' ExitCode=[0-9]*' | cut -d= -f2)
echo "slurm-test: merge job $merge_job ended $state (Slurm says FAILED for any non-zero exit)," \
    "exit code $exit_code, $(($(date +%s) - submitted)) s after submission"
cat "$work/out/numgap-merge-$merge_job.out"

cmp "$work/whole.json" "$work/out/report.json"
cmp "$work/whole.csv" "$work/out/report.csv"
[[ $exit_code == "$expected_status" ]] || { echo "slurm-test: merge exit $exit_code, unsharded $expected_status" >&2; exit 1; }
cmp "$work/whole.txt" "$work/out/numgap-merge-$merge_job.out"
echo "slurm-test: PASS: merged report of $shards shards equals the unsharded one (JSON, CSV, table, exit $exit_code);" \
    "$(($(date +%s) - start)) s in all"
