#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""What a benchmark job's traces show, computed directly from the torch 1.13
files (without strag): per rank and profiled step, the step time, the
compute (the union of the main thread's operator spans, communication and
host annotations left out), the DataLoader's __next__ time, annotated GC
time and the longest span of the main thread covered by no event (a host
pause, or a wait for an all-reduce). Then, per case, whether the injected
straggler really shows in them (`verify`).

The scorer prints this next to strag's verdict, so that a miss says whether
the job failed to inject its straggler or strag failed to find it.

usage: trace_stats.py JOB_DIR   (prints the per-rank numbers and the check)
"""
import json
import os
import statistics
import sys

COMM_PREFIXES = ("gloo:", "nccl:", "c10d::", "record_param_comms")
LOADER = "enumerate(DataLoader)"
GC_ANNOTATION = "gc.collect"


def _union(intervals):
    total, end = 0, None
    for b, e in sorted(intervals):
        if end is None or b > end:
            total += e - b
            end = e
        elif e > end:
            total += e - end
            end = e
    return total


def _longest_gap(begin, end, intervals):
    covered, gap = begin, 0
    for b, e in sorted(intervals):
        if b > covered:
            gap = max(gap, b - covered)
        covered = max(covered, e)
    return max(gap, end - covered)


def step_stats(events):
    """{step number: {step_ms, compute_ms, loader_ms, gc_ms, gap_ms}} of one
    file (torch 1.13 layout, or the re-export)."""
    if isinstance(events, dict):
        events = events.get("traceEvents", [])
    xs = [e for e in events if e.get("ph") == "X" and "dur" in e]
    steps = [e for e in xs if e["name"].startswith("ProfilerStep#")]
    main = {e["tid"] for e in steps}
    ops = [e for e in xs if e["tid"] in main and
           not e["name"].startswith("ProfilerStep#")]
    out = {}
    for s in steps:
        b, e_ = s["ts"], s["ts"] + s["dur"]
        inside = [o for o in ops if b <= o["ts"] < e_]
        loaders = [(o["ts"], o["ts"] + o["dur"]) for o in inside
                   if o["name"].startswith(LOADER)]
        gcs = [(o["ts"], o["ts"] + o["dur"]) for o in inside
               if o["name"] == GC_ANNOTATION]

        def in_loader(o):
            return any(lb <= o["ts"] < le for lb, le in loaders)
        compute = [(o["ts"], o["ts"] + o["dur"]) for o in inside
                   if not o["name"].startswith(COMM_PREFIXES)
                   and not o["name"].startswith(LOADER)
                   and o["name"] != GC_ANNOTATION and not in_loader(o)]
        everything = [(o["ts"], o["ts"] + o["dur"]) for o in inside
                      if o["name"] != GC_ANNOTATION]
        out[int(s["name"][len("ProfilerStep#"):])] = {
            "step_ms": s["dur"] / 1e3,
            "compute_ms": _union(compute) / 1e3,
            "loader_ms": _union(loaders) / 1e3,
            "gc_ms": _union(gcs) / 1e3,
            "gap_ms": _longest_gap(b, e_, everything) / 1e3}
    return out


def job_stats(job_dir, layout="torch113"):
    """rank -> list of per-step dicts in step order (active step index)."""
    truth = load_truth(job_dir)
    per_rank = {}
    for name, rank in truth["files"].items():
        with open(os.path.join(job_dir, layout, name)) as f:
            per_rank.setdefault(int(rank), {}).update(step_stats(json.load(f)))
    return {r: [v for _, v in sorted(s.items())]
            for r, s in sorted(per_rank.items())}


def load_truth(job_dir):
    with open(os.path.join(job_dir, "truth.json")) as f:
        return json.load(f)


def _mean(rows, key):
    return statistics.mean(r[key] for r in rows) if rows else 0.0


def verify(job_dir):
    """(ok, text): does the straggler of the truth show in the traces?"""
    truth = load_truth(job_dir)
    stats = job_stats(job_dir)
    cause, ranks = truth["cause"], truth["straggler_ranks"]
    compute = {r: _mean(rows, "compute_ms") for r, rows in stats.items()}
    others = [c for r, c in compute.items() if r not in ranks]
    inj = {int(r): v for r, v in truth.get("injections", {}).items()}
    if cause in ("faulty_worker", "stage_imbalance"):
        heavy = min(compute[r] for r in ranks)
        ref = statistics.median(others) if cause == "faulty_worker" \
            else max(others)
        ratio = heavy / ref if ref else float("inf")
        return ratio >= 1.3, (f"compute of rank(s) {ranks} {heavy:.0f} ms "
                              f"per step vs {ref:.0f} ms ({ratio:.2f}x)")
    if cause in ("data_loading", "host_pause"):
        rank = ranks[0]
        key = "loader_ms" if cause == "data_loading" else None
        shown, parts = 0, []
        for i in inj.get(rank, []):
            step = i["active_step"]
            if step >= len(stats[rank]):
                continue
            row = stats[rank][step]
            got = row[key] if key else max(row["gc_ms"], row["gap_ms"])
            other = max((stats[r][step][key] if key else
                         max(stats[r][step]["gc_ms"], stats[r][step]["gap_ms"]))
                        for r in stats if r != rank)
            # The other ranks wait as long as a host pause lasts (an
            # untraced wait for the all-reduce): only loader time compares.
            ok = got >= 0.7 * i["ms"] and (key is None or got > 2 * other)
            shown += ok
            parts.append(f"step {step}: {got:.0f}/{i['ms']:.0f} ms")
        n = len(inj.get(rank, []))
        return n > 0 and shown == n, (
            f"{shown} of {n} injections show on rank {rank} "
            f"({'; '.join(parts[:4])}{' ...' if len(parts) > 4 else ''})")
    if cause == "sequence_length_imbalance":
        lengths = truth["seq_lengths_active"]
        n = min(len(rows) for rows in stats.values())
        agree = 0
        for s in range(n):
            by_len = max(range(len(lengths)), key=lambda r: lengths[r][s])
            by_time = max(stats, key=lambda r: stats[r][s]["compute_ms"])
            agree += lengths[by_len][s] == lengths[by_time][s]
        slowest = [max(stats, key=lambda r: stats[r][s]["compute_ms"])
                   for s in range(n)]
        return agree >= 0.7 * n, (
            f"the rank with the longest sequences computes longest in "
            f"{agree} of {n} steps; slowest rank per step {slowest}")
    if cause == "none":
        ratio = max(compute.values()) / min(compute.values())
        return ratio < 1.25, (f"compute per rank {min(compute.values()):.0f}-"
                              f"{max(compute.values()):.0f} ms "
                              f"({ratio:.2f}x)")
    return False, f"no check for cause {cause}"


def summary(job_dir):
    lines = []
    for r, rows in job_stats(job_dir).items():
        def col(k):
            return " ".join(f"{x[k]:.0f}" for x in rows)
        lines.append(f"rank {r}: {len(rows)} steps\n  step ms    {col('step_ms')}"
                     f"\n  compute ms {col('compute_ms')}\n  loader ms  "
                     f"{col('loader_ms')}\n  gc ms      {col('gc_ms')}\n"
                     f"  gap ms     {col('gap_ms')}")
    ok, text = verify(job_dir)
    lines.append(f"injection visible: {'yes' if ok else 'NO'}: {text}")
    return "\n".join(lines)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    print(summary(sys.argv[1]))
