#!/bin/sh
# The large-job benchmark of issue 15: llama-16k (DP 128 x PP 16 x TP 8, 32
# microbatches) simulated for STEPS steps and written by `strag simulate
# --out` (389,952 ops per step: 257 steps ~ 10^8 ops, 2,568 ~ 10^9), then
# analysed from the file in windows of steps; wall time and peak RSS of
# both from /usr/bin/time -v. Needs ~15 GB of disk per 10^9 ops for the gzip
# and ~16 GB more for the analysis' spill (in DIR).
#
# usage: bench/scale/big_job.sh STRAG STEPS DIR [WINDOW_OPS]
#   e.g. bench/scale/big_job.sh build/strag 257 /tmp/big 1M
set -eu
STRAG=$1 STEPS=$2 DIR=$3 WINDOW=${4:-1M}
mkdir -p "$DIR"
cat > "$DIR/spec.yaml" <<SPEC
job: {dp: 128, pp: 16, tp: 8, microbatches: 32, steps: $STEPS}
model: {layers: 128, loss_layer_cost: 3}
compute: {forward_ms: 12, backward_ms: 24, noise: {dist: lognormal, sigma: 0.02}}
sequences: {dist: lognormal, median: 8192, sigma: 0.3, max: 32768,
            per_microbatch: 1, quadratic: 0.00005}
comm: {p2p_ms: 0.5, dp_allgather_ms: 20, dp_reducescatter_ms: 30,
       noise: {dist: lognormal, sigma: 0.05}}
stragglers:
  - {kind: gc_pause, ranks: all, rate_per_step: 0.001, pause_ms: 400}
  - {kind: slow_link, node: 300, factor: 2.0}
SPEC
rm -rf "$DIR/out"
/usr/bin/time -v "$STRAG" simulate "$DIR/spec.yaml" --out "$DIR/out" --no-truth \
  > "$DIR/simulate.txt" 2> "$DIR/simulate.time"
/usr/bin/time -v "$STRAG" analyze "$DIR/out/ops.csv.gz" --window-ops "$WINDOW" \
  --spill-dir "$DIR" --json "$DIR/analysis.json" > "$DIR/analyze.txt" \
  2> "$DIR/analyze.time"
for f in simulate analyze; do
  printf '%s: ' "$f"
  grep -E 'Elapsed|Maximum resident' "$DIR/$f.time" | sed 's/^[[:space:]]*//' | tr '\n' ' '
  echo
done
