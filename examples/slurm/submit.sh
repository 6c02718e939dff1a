#!/bin/bash
# Submits a sharded numgap comparison to Slurm: an array job of N shard tasks
# (numgap-shard.sbatch) and a merge job that starts once all of them succeeded
# (numgap-merge.sbatch, --dependency=afterok). Prints the merge job's id.
#   submit.sh NUMGAP REF TARGET N OUT_DIR [compare options...]
# REF, TARGET and OUT_DIR must be reachable at these paths from every node
# that may run a task (a shared file system, or runs copied to the same path).
set -euo pipefail
if (($# < 5)); then
    echo "usage: $0 NUMGAP REF TARGET N OUT_DIR [compare options...]" >&2
    exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
# -m: a run may carry a selector (out.json#RUNNER, qnn_out#1), which is no file of its own.
export NUMGAP=$(realpath "$1") NUMGAP_REF=$(realpath -m "$2") NUMGAP_TARGET=$(realpath -m "$3") NUMGAP_SHARDS=$4
mkdir -p "$5"
export NUMGAP_OUT=$(realpath "$5")
shift 5
export NUMGAP_OPTIONS="$*"
shards_job=$(sbatch --parsable --array=0-$((NUMGAP_SHARDS - 1)) --chdir="$NUMGAP_OUT" --export=ALL \
    "$here/numgap-shard.sbatch")
shards_job=${shards_job%%;*} # --parsable may append ";cluster"
merge_job=$(sbatch --parsable --dependency=afterok:"$shards_job" --kill-on-invalid-dep=yes --chdir="$NUMGAP_OUT" \
    --export=ALL "$here/numgap-merge.sbatch")
echo "${merge_job%%;*}"
