#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""What a folder of torch 1.13 CPU traces (rank-<r>.pt.trace.json, as
ddp_job.py writes them) shows, computed directly, without strag: per rank and
step, the compute time, the host gap at the step's start and the longest host
pause in the middle of the step (a gap on the main thread that does not end
with the wait for an all-reduce).

The real-run test checks these first, so that a failure says whether the job
failed to inject its straggler or strag failed to find it.

usage: trace_facts.py FOLDER   (prints a summary)
"""
import glob
import json
import os
import re
import statistics
import sys

MAIN_TID = 1
# Ops that follow the main thread's (untraced) wait for a gradient all-reduce.
AFTER_WAIT = ("aten::as_strided", "torch.distributed.ddp.reducer::")
COMPUTE = ("DistributedDataParallel.forward",
           "autograd::engine::evaluate_function")
# torch 1.13 opens every ProfilerStep#N with a 0-us aten::empty of its own.
PROFILER_OWN = ("aten::empty", "aten::zeros", "aten::zero_")


class RankFacts:
    """Per step (in trace order): seconds of compute, of host gap before the
    step's first op, of the longest other host gap; and the all-reduces."""

    def __init__(self):
        self.compute, self.start_gap, self.pause = [], [], []
        self.allreduces = 0


def rank_facts(events):
    facts = RankFacts()
    main = sorted((e for e in events if e.get("ph") == "X"
                   and e.get("tid") == MAIN_TID),
                  key=lambda e: (e["ts"], -e["dur"]))
    steps = [e for e in main if e["name"].startswith("ProfilerStep#")]
    facts.allreduces = sum(1 for e in events
                           if e.get("name") == "gloo:all_reduce")
    for step in steps:
        begin, end = step["ts"], step["ts"] + step["dur"]
        inside = [e for e in main if begin <= e["ts"] < end and e is not step]
        while inside and inside[0]["name"] in PROFILER_OWN and \
                inside[0]["ts"] - begin <= 10:
            inside.pop(0)
        facts.compute.append(sum(e["dur"] for e in inside
                                 if e["name"].startswith(COMPUTE)) / 1e6)
        start_gap = inside[0]["ts"] - begin if inside else 0
        covered, pause = begin + start_gap, 0
        for e in inside:
            gap = e["ts"] - covered
            if gap > pause and not e["name"].startswith(AFTER_WAIT):
                pause = gap
            covered = max(covered, e["ts"] + e["dur"])
        facts.start_gap.append(start_gap / 1e6)
        facts.pause.append(pause / 1e6)
    return facts


def folder_facts(folder):
    """rank -> RankFacts for every rank-<r>.pt.trace.json in `folder`."""
    out = {}
    for path in glob.glob(os.path.join(folder, "rank-*.pt.trace.json")):
        match = re.search(r"rank-(\d+)\.pt\.trace\.json$", path)
        with open(path) as f:
            events = json.load(f)
        if isinstance(events, dict):  # newer torch: {"traceEvents": [...]}
            events = events.get("traceEvents", [])
        out[int(match.group(1))] = rank_facts(events)
    return dict(sorted(out.items()))


def summary(facts):
    lines = []
    for rank, f in facts.items():
        ms = lambda xs: " ".join(f"{1e3 * x:.0f}" for x in xs)
        lines.append(
            f"rank {rank}: {len(f.compute)} steps, {f.allreduces} all-reduces;"
            f" compute mean {1e3 * statistics.mean(f.compute or [0]):.0f} ms"
            f"\n  compute ms: {ms(f.compute)}\n  start gap ms: "
            f"{ms(f.start_gap)}\n  pause ms: {ms(f.pause)}")
    return "\n".join(lines)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    print(summary(folder_facts(sys.argv[1])))
