#!/bin/sh
# MPI scaling of `strag analyze` (issue 15): one simulated job (llama-16k's
# layout, DP 128 x PP 16 x TP 8, STEPS steps, 389,952 ops per step) analysed
# by 1, 2 and 4 processes of THREADS replay threads each (mpirun
# --oversubscribe), the JSON compared byte for byte with one process's;
# wall time and the largest process's peak RSS from /usr/bin/time -v (it
# wraps every process). Two modes:
#   in memory       every process reads the whole CSV and holds the whole
#                   trace; the replays are shared (the reading is serial);
#   --window-ops 1M each process parses a share of the CSV's chunks and
#                   holds only its steps (load/distributed_ops_csv.h);
#                   compared with one process's --window-ops report.
#
# usage: bench/scale/mpi_scaling.sh BUILD_DIR STEPS DIR [THREADS]
#   e.g. bench/scale/mpi_scaling.sh build 20 /tmp/mpi 1
set -eu
BUILD=$1 STEPS=$2 DIR=$3 THREADS=${4:-1}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none
mkdir -p "$DIR"
cat > "$DIR/spec.yaml" <<SPEC
job: {dp: 128, pp: 16, tp: 8, microbatches: 32, steps: $STEPS}
model: {layers: 128, loss_layer_cost: 3}
compute: {forward_ms: 12, backward_ms: 24, noise: {dist: lognormal, sigma: 0.02}}
comm: {p2p_ms: 0.5, dp_allgather_ms: 20, dp_reducescatter_ms: 30,
       noise: {dist: lognormal, sigma: 0.05}}
stragglers:
  - {kind: gc_pause, ranks: all, rate_per_step: 0.01, pause_ms: 400}
  - {kind: slow_link, node: 300, factor: 2.0}
SPEC
[ -f "$DIR/out/ops.csv.gz" ] || "$BUILD/strag" simulate "$DIR/spec.yaml" \
  --out "$DIR/out" --no-truth > /dev/null
for MODE in memory windows; do
  if [ "$MODE" = windows ]; then EXTRA="--window-ops 1M"; else EXTRA=""; fi
  for K in 1 2 4; do
    if [ "$K" = 1 ]; then RUN=""; else RUN="mpirun --oversubscribe -n $K"; fi
    # shellcheck disable=SC2086
    $RUN /usr/bin/time -v "$BUILD/strag" analyze "$DIR/out/ops.csv.gz" \
      --threads "$THREADS" $EXTRA --json "$DIR/$MODE-$K.json" --quiet \
      2> "$DIR/time-$MODE-$K.txt"
    wall=$(grep "Elapsed (wall" "$DIR/time-$MODE-$K.txt" | sort | tail -1 | awk '{print $NF}')
    rss=$(grep "Maximum resident" "$DIR/time-$MODE-$K.txt" | awk '{print $NF}' | sort -n | tail -1)
    same=$(cmp -s "$DIR/$MODE-1.json" "$DIR/$MODE-$K.json" && echo identical || echo DIFFERENT)
    echo "$MODE: $K process(es) x $THREADS thread(s): wall $wall, peak RSS per process $((rss / 1024)) MB, JSON $same"
  done
done
