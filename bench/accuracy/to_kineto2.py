#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Re-exports the traces of a benchmark job, as torch 1.13 wrote them, in the
layout of the torch 2.x (Kineto) profiler, so that every case is scored in
both layouts.

torch 1.13 (Debian's python3-torch, built without Kineto) writes a bare JSON
array of complete events, no `cat`, `pid` "CPU functions", small thread ids,
integer microseconds counted from the start of each profiling cycle, no
shapes (even with record_shapes=True) and no rank. torch 2.x writes, and
this writes:

  {"schemaVersion": 1, "deviceProperties": [],
   "distributedInfo": {"backend": "gloo", "rank": R, "world_size": N,
                       "pg_count": K, "pg_config": [{"pg_name": "0",
                         "pg_desc": "default_pg",
                         "backend_config": "cpu:gloo,cuda:gloo",
                         "pg_size": N, "ranks": [0, ...]}, ...]},
   "traceEvents": [...], "traceName": ..., "displayTimeUnit": "ms",
   "baseTimeNanoseconds": B}

- every complete event gets a `cat`: `user_annotation` for record_function
  spans (ProfilerStep#N, Optimizer.step#..., DistributedDataParallel.forward,
  enumerate(DataLoader)#..., gloo:*, a user's own annotations), `cpu_op` for
  operators (aten::*, c10d::*, autograd nodes, ...);
- `pid` is the process id, `tid` the thread's (the main thread's is the pid);
  process_name / thread_name metadata events and the profiler's `Trace` span
  are added, as Kineto writes them;
- `args` carry `External id`, `Ev Idx`, and `Input Dims` for the events whose
  shapes the job recorded (jobs.py keeps them from profiler.events());
- one epoch clock: `ts` + `baseTimeNanoseconds` / 1000 is the event's wall
  clock time in microseconds (since 1970), from the epoch time each rank
  noted when each ProfilerStep began (sidecar step_anchors); `ts` keeps three
  decimals, as Kineto's do. `baseTimeNanoseconds` is the rank's first event,
  rounded down to a whole second (each process has its own, as in Kineto).

Not added, because torch 1.13 did not record them and inventing them would
be a guess: record_param_comms events (collective name, sizes, sequence
numbers, process group per call), python_function events (with_stack), and
Input type / Concrete Inputs.

usage: to_kineto2.py JOB_DIR [--out DIR]
  JOB_DIR holds torch113/ and sidecar/ (jobs.py run); writes DIR (default
  JOB_DIR/kineto2/) with the same file names.
"""
import argparse
import json
import os
import re
import sys

BACKWARD_NODE = re.compile(r"^[A-Za-z_]\w*Backward\d*$")
BARE_OPS = {"detach", "detach_"}  # operators whose name has no namespace
ANNOTATION_PREFIXES = ("ProfilerStep#", "Optimizer.", "enumerate(DataLoader)",
                       "DistributedDataParallel.", "gloo:", "nccl:", "mpi:")


def category(name):
    """The `cat` torch 2.x gives an event of this name (CPU activity)."""
    if name.startswith(ANNOTATION_PREFIXES):
        return "user_annotation"
    if "::" in name or BACKWARD_NODE.match(name) or name in BARE_OPS:
        return "cpu_op"
    return "user_annotation"  # a record_function span of the user's


def epoch_offset_ns(events, anchors):
    """ns to add to (ts in us x 1000) to get the epoch clock: from the
    ProfilerStep#N spans of this file and the epoch times the rank noted just
    after each prof.step() (each note is after its step's start: the smallest
    difference is the closest). torch 1.13 names the step that begins in
    prof.step() after the step number before the call (step_num - 1): the
    pairing whose differences agree best is taken, so either naming works."""
    starts = {}
    for e in events:
        name = e.get("name", "")
        if e.get("ph") == "X" and name.startswith("ProfilerStep#"):
            starts[int(name[len("ProfilerStep#"):])] = e["ts"]
    best = None
    for shift in (-1, 0, 1):
        diffs = [epoch - int(round(starts[n + shift] * 1000))
                 for n, epoch in anchors if n + shift in starts]
        if len(diffs) < 2:
            continue
        spread = sorted(diffs)[len(diffs) // 2] - min(diffs)
        if best is None or spread < best[0]:
            best = (spread, min(diffs))
    if best is None:
        raise ValueError("too few ProfilerStep spans with an epoch anchor")
    return best[1]


def shapes_index(shapes):
    """(tid, ts, dur) -> list of [name, input_shapes] (recorded order)."""
    index = {}
    for name, ts, dur, tid, dims in shapes:
        index.setdefault((tid, ts, dur), []).append([name, dims])
    return index


def convert(events, side, file_info, trace_name):
    pid = side["pid"]
    anchors = side["step_anchors"]
    offset = epoch_offset_ns(events, anchors)
    xs = [e for e in events if e.get("ph") == "X"]
    first_ns = min(int(round(e["ts"] * 1000)) + offset for e in xs)
    base = first_ns // 10**9 * 10**9
    index = shapes_index(file_info.get("shapes", []))

    def tid_of(t):
        return pid if t in (1, "1") else pid + int(t)

    out, tids = [], set()
    for i, e in enumerate(xs):
        name = e["name"]
        ts_ns = int(round(e["ts"] * 1000)) + offset - base
        args = {"External id": i + 1, "Ev Idx": i}
        dims = None
        for cand in index.get((e["tid"], e["ts"], e["dur"]), []):
            same = cand[0] == name or (cand[0] == "ProfilerStep*" and
                                       name.startswith("ProfilerStep#"))
            if same:
                dims = cand[1]
                break
        if dims is not None and side.get("record_shapes"):
            args["Input Dims"] = dims
        tid = tid_of(e["tid"])
        tids.add(tid)
        out.append({"ph": "X", "cat": category(name), "name": name,
                    "pid": pid, "tid": tid, "ts": round(ts_ns / 1000, 3),
                    "dur": round(float(e["dur"]), 3), "args": args})
    span_start = min(ev["ts"] for ev in out)
    span_end = max(ev["ts"] + ev["dur"] for ev in out)
    meta = [{"name": "process_name", "ph": "M", "ts": span_start, "pid": pid,
             "tid": 0, "args": {"name": "python3"}},
            {"name": "process_labels", "ph": "M", "ts": span_start,
             "pid": pid, "tid": 0, "args": {"labels": "CPU"}}]
    for tid in sorted(tids):
        meta.append({"name": "thread_name", "ph": "M", "ts": span_start,
                     "pid": pid, "tid": tid,
                     "args": {"name": f"thread {tid} ({tid})"}})
    meta.append({"ph": "X", "cat": "Trace", "ts": span_start,
                 "dur": round(span_end - span_start, 3), "pid": "Spans",
                 "tid": "PyTorch Profiler", "name": "PyTorch Profiler (0)",
                 "args": {"Op count": 0}})
    world = side["world_size"]
    groups = [{"pg_name": "0", "pg_desc": "default_pg",
               "backend_config": "cpu:gloo,cuda:gloo", "pg_size": world,
               "ranks": list(range(world))}]
    for k, ranks in enumerate(side.get("groups", []), start=1):
        groups.append({"pg_name": str(k), "pg_desc": "undefined",
                       "backend_config": "cpu:gloo,cuda:gloo",
                       "pg_size": len(ranks), "ranks": ranks})
    return {"schemaVersion": 1, "deviceProperties": [],
            "distributedInfo": {"backend": "gloo", "rank": side["rank"],
                                "world_size": world, "pg_count": len(groups),
                                "pg_config": groups},
            "traceEvents": meta + out, "traceName": trace_name,
            "displayTimeUnit": "ms", "baseTimeNanoseconds": base}


def write_kineto(doc, path):
    """One event per line, as Kineto writes (a JSON object)."""
    with open(path, "w") as f:
        f.write("{\n")
        for key, value in doc.items():
            if key == "traceEvents":
                continue
            f.write(f"  {json.dumps(key)}: {json.dumps(value)},\n")
        f.write('  "traceEvents": [\n')
        events = doc["traceEvents"]
        for i, e in enumerate(events):
            f.write("  " + json.dumps(e) + (",\n" if i + 1 < len(events)
                                            else "\n"))
        f.write("  ]\n}\n")


def reexport(job_dir, out_dir=None):
    """Re-exports every trace of the job; returns the files written."""
    out_dir = out_dir or os.path.join(job_dir, "kineto2")
    os.makedirs(out_dir, exist_ok=True)
    side_dir = os.path.join(job_dir, "sidecar")
    written = []
    for side_name in sorted(os.listdir(side_dir)):
        with open(os.path.join(side_dir, side_name)) as f:
            side = json.load(f)
        for info in side["files"]:
            with open(os.path.join(job_dir, "torch113", info["trace"])) as f:
                events = json.load(f)
            if isinstance(events, dict):
                events = events.get("traceEvents", [])
            path = os.path.join(out_dir, info["trace"])
            write_kineto(convert(events, side, info, path), path)
            written.append(path)
    return written


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("job_dir")
    p.add_argument("--out")
    args = p.parse_args(argv)
    for path in reexport(args.job_dir, args.out):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
