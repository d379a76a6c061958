#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Ground truth for `strag plan` (issue 12): each policy's prediction
against the simulator running the fix.

For every case a simulated job where the fix applies is planned (`strag
simulate SPEC --analyze --plan --json -`), then simulated again with the fix
written into its spec (the new layer split, the node's slow GPU gone, planned
GC, the stall gone, backup replicas, balanced sequences); the planner's
predicted mean step is compared with the fixed job's mean observed step.
Closed forms: backup workers with exponential times against
(H_{N+b} - H_b) / lambda, planned GC against its cost formula.

usage: plan_truth.py STRAG [--doc FILE] [--check] [--check-doc FILE]
  --doc FILE        rewrite the table between the markers of FILE
  --check           exit 1 when a duration-rewriting policy misses by over
                    5%, a closed form by over 3%, or a case's policy does not
                    apply
  --check-doc FILE  exit 1 when FILE's table is not this run's (the runs are
                    seeded: the same binary gives the same table)
"""
import json
import math
import os
import subprocess
import sys
import tempfile

STRAG = sys.argv[1] if len(sys.argv) > 1 else "build/strag"
TOLERANCE = 0.05
CLOSED_TOLERANCE = 0.03
BEGIN = "<!-- plan-truth:begin -->"
END = "<!-- plan-truth:end -->"


def run_json(spec, extra=()):
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        f.write(spec)
        path = f.name
    try:
        out = subprocess.run(
            [STRAG, "simulate", path, "--analyze", "--json", "-", "--quiet",
             *extra], capture_output=True, text=True, check=False)
    finally:
        os.unlink(path)
    if out.returncode != 0:
        raise RuntimeError("strag simulate failed: " + out.stderr)
    doc = json.loads(out.stdout)
    # The simulator's own mean step (T_opt with host time; with backups, the
    # step ends at the quorum), from its summary.
    for line in out.stderr.splitlines():
        if line.strip().startswith("mean step time"):
            doc["simulated_step_s"] = float(line.split()[3]) / 1e3
    return doc


def mean_observed(doc):
    return doc["simulated_step_s"]


def row(doc, policy):
    for r in doc["plan"]["fixes"]:
        if r["policy"] == policy:
            return r
    return None


def harmonic(n):
    return sum(1.0 / i for i in range(1, n + 1))


# name, policy, kind (D: durations rewritten; G: layout), spec,
# fixed(spec, row) -> spec with the fix applied
JOB = "job: {dp: %d, pp: %d, tp: 1, microbatches: %d, steps: %d, seed: %d%s}\n"


def case_evict():
    spec = (JOB % (4, 2, 8, 60, 3, ", gpus_per_node: 1") +
            "compute: {forward_ms: 10, backward_ms: 20, noise: {dist: lognormal, sigma: 0.03}}\n"
            "comm: {p2p_ms: 0.2, dp_reducescatter_ms: 4, dp_allgather_ms: 2}\n"
            "stragglers:\n  - {kind: slow_worker, rank: 5, factor: 1.6}\n")
    fixed = spec.split("stragglers:")[0]
    return spec, lambda r: fixed


def case_repartition():
    base = (JOB % (2, 4, 8, 40, 5, "") +
            "model: {layers: %s, loss_layer_cost: 6}\n"
            "compute: {forward_ms: 10, backward_ms: 20, noise: {dist: lognormal, sigma: 0.02}}\n"
            "comm: {p2p_ms: 0.2, dp_reducescatter_ms: 3}\n")

    def fixed(r):
        split = r["params"].split("=", 1)[1]
        return base % split
    return base % "32", fixed


def case_planned_gc():
    base = (JOB % (8, 2, 4, 200, 7, "") +
            "compute: {forward_ms: 10, backward_ms: 20, noise: {dist: lognormal, sigma: 0.02}}\n"
            "comm: {p2p_ms: 0.2, dp_reducescatter_ms: 3}\n"
            "stragglers:\n  - {kind: gc_pause, ranks: all, %s, pause_ms: 150}\n")

    def fixed(r):
        every = r["params"].split(",")[0].split("=")[1]
        return base % ("planned: {every: %s}" % every)
    return base % "rate_per_step: 0.04", fixed


def case_input_pipeline():
    spec = (JOB % (8, 1, 4, 100, 9, "") +
            "compute: {forward_ms: 10, backward_ms: 20, noise: {dist: lognormal, sigma: 0.02}}\n"
            "comm: {dp_reducescatter_ms: 3}\n"
            "stragglers:\n  - {kind: dataloader_stall, rank: 3, probability: 0.3, stall_ms: 60}\n")
    fixed = spec.split("stragglers:")[0]
    return spec, lambda r: fixed


def case_backups():
    base = (JOB % (16, 1, 1, 400, 11, "%s") +
            "compute: {forward_ms: 50, backward_ms: 0, noise: {dist: exponential}}\n")

    def fixed(r):
        b = r["params"].split("=")[1]
        return base % (", backup_workers: " + b)
    return base % "", fixed


def case_sequences(balance, pp):
    base = (JOB % (8, pp, 4, 40, 19, "") +
            "compute: {forward_ms: 10, backward_ms: 20, noise: {dist: lognormal, sigma: 0.02}}\n"
            "sequences: {dist: lognormal, median: 2048, sigma: 1.0, max: 32768, "
            "per_microbatch: 4, quadratic: 0.0005%s}\n"
            "comm: {p2p_ms: 0.2, dp_reducescatter_ms: 3}\n")
    return base % "", lambda r: base % (", balance: " + balance)


def case_resplit(pp):
    base = (JOB % (4, pp, 8, 60, 23, "%s") +
            "compute: {forward_ms: 10, backward_ms: 20, noise: {dist: lognormal, sigma: 0.02}}\n"
            "comm: {dp_reducescatter_ms: 3}\n"
            "stragglers:\n  - {kind: slow_worker, rank: 1, factor: 1.6}\n")

    def fixed(r):
        split = json.loads(r["params"].split("=", 1)[1])
        return (base % ", microbatches_per_replica: %s" % split).replace(
            "microbatches: 8,", "microbatches: %d," % max(split))
    return base % "", fixed


def case_drop():
    base = (JOB % (8, 2, 8, 40, 29, "%s") +
            "compute: {forward_ms: 10, backward_ms: 20, noise: {dist: lognormal, sigma: 0.02}}\n"
            "sequences: {dist: lognormal, median: 2048, sigma: 0.8, max: 32768, "
            "per_microbatch: 2, quadratic: 0.0005}\n"
            "comm: {p2p_ms: 0.2, dp_reducescatter_ms: 3}\n")

    def fixed(r):
        return base % (", drop_slowest: " + r["params"].split("=")[1])
    return base % "", fixed


CASES = [
    ("long sequences, balanced across DP", "sequence_balance", "D",
     lambda: case_sequences("dp", 2)),
    ("long sequences, microbatches repacked", "microbatch_packing", "D",
     lambda: case_sequences("microbatch", 4)),
    ("slow GPU, node replaced", "evict_node", "D", case_evict),
    ("heavy loss layer, layers moved", "stage_repartition", "D", case_repartition),
    ("unsynchronised GC, planned GC", "planned_gc", "D", case_planned_gc),
    ("input stalls removed", "input_pipeline", "D", case_input_pipeline),
    ("exponential replicas, backups", "backup_workers", "Q", case_backups),
    ("slow replica, microbatches re-split (pp 1)", "dp_resplit", "D",
     lambda: case_resplit(1)),
    ("slow replica, microbatches re-split (pp 2)", "dp_resplit", "G",
     lambda: case_resplit(2)),
    ("long sequences, slowest microbatches dropped", "drop_slowest", "D",
     case_drop),
]

NOT_SIMULATED = [
    ("async_staleness", "the simulator has no asynchronous updates"),
]


def closed_forms():
    out = []
    # Backups: N replicas of Exp(mean 50 ms), step = the N-th of N + b.
    n, steps = 32, 300
    spec = (JOB % (n, 1, 1, steps, 13, "") +
            "compute: {forward_ms: 50, backward_ms: 0, noise: {dist: exponential}}\n")
    doc = run_json(spec, ["--plan"])
    r = row(doc, "backup_workers")
    for alt in [r] + r["alternatives"]:
        b = int(alt["params"].split("=")[1])
        expected = 0.050 * (harmonic(n + b) - harmonic(b))
        out.append(("backups: N = %d, b = %d, Exp" % (n, b),
                    alt["step_s"], expected))
    # Planned GC: predicted = step without pauses + g / N.
    base = (JOB % (8, 1, 4, 200, 17, "") +
            "compute: {forward_ms: 10, backward_ms: 20}\n"
            "comm: {dp_reducescatter_ms: 3}\n%s")
    gc = "stragglers:\n  - {kind: gc_pause, ranks: all, rate_per_step: 0.05, pause_ms: 200}\n"
    doc = run_json(base % gc, ["--plan"])
    r = row(doc, "planned_gc")
    every = int(r["params"].split(",")[0].split("=")[1])
    clean = mean_observed(run_json(base % ""))
    out.append(("planned GC: every %d, g = 200 ms" % every, r["step_s"],
                clean + 0.200 / every))
    return out


def main():
    check = "--check" in sys.argv
    doc_path = None
    if "--doc" in sys.argv:
        doc_path = sys.argv[sys.argv.index("--doc") + 1]
    lines = ["| case | policy | ranked | step now | predicted | simulated with the fix | error |",
             "|---|---|---|---|---|---|---|"]
    failures = []
    for name, policy, kind, make in CASES:
        spec, fixed = make()
        doc = run_json(spec, ["--plan"])
        r = row(doc, policy)
        if r is None:
            failures.append("%s: %s does not apply" % (name, policy))
            continue
        truth = mean_observed(run_json(fixed(r)))
        err = (r["step_s"] - truth) / truth
        rank = r["rank"] if r["rank"] is not None else "noise"
        lines.append("| %s | %s (%s) | %s | %.1f ms | %.1f ms | %.1f ms | %+.1f%% |" % (
            name, policy, r["params"], rank, doc["plan"]["step_s"] * 1e3,
            r["step_s"] * 1e3, truth * 1e3, 100 * err))
        if abs(err) > TOLERANCE and kind != "G":
            failures.append("%s: %s predicted %.4f s, simulated %.4f s (%+.1f%%)" % (
                name, policy, r["step_s"], truth, 100 * err))
    for policy, why in NOT_SIMULATED:
        lines.append("| - | %s | - | - | - | not measured: %s | - |" % (policy, why))
    lines += ["", "| closed form | predicted | formula | error |", "|---|---|---|---|"]
    for name, predicted, expected in closed_forms():
        err = (predicted - expected) / expected
        lines.append("| %s | %.2f ms | %.2f ms | %+.1f%% |" % (
            name, predicted * 1e3, expected * 1e3, 100 * err))
        if abs(err) > CLOSED_TOLERANCE:
            failures.append("%s: predicted %.4f s, formula %.4f s (%+.1f%%)" % (
                name, predicted, expected, 100 * err))
    table = "\n".join(lines)
    print(table)
    if doc_path:
        with open(doc_path) as f:
            text = f.read()
        a, b = text.index(BEGIN) + len(BEGIN), text.index(END)
        with open(doc_path, "w") as f:
            f.write(text[:a] + "\n" + table + "\n" + text[b:])
    if "--check-doc" in sys.argv:
        with open(sys.argv[sys.argv.index("--check-doc") + 1]) as f:
            text = f.read()
        kept = text[text.index(BEGIN) + len(BEGIN):text.index(END)].strip()
        if kept != table.strip():
            failures.append("the table of the doc is not this run's: run "
                            "`make bench-plan` to rewrite it")
            check = True
    for f in failures:
        print("FAIL " + f, file=sys.stderr)
    return 1 if check and failures else 0


if __name__ == "__main__":
    sys.exit(main())
