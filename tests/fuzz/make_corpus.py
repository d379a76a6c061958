#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Seed corpora for the fuzz targets (make fuzz), one small file per case
class of issue 11 and of the readers' formats: valid inputs to mutate, and
the adversarial ones (BOM, NUL, CR-only lines, control bytes, huge ids and
claims, epoch origins, deep nests, a small gzip bomb, truncated gzip).

usage: make_corpus.py OUT_DIR SOURCE_DIR
Writes OUT_DIR/{ops_csv,kineto,spec}/NAME. Deterministic.
"""
import gzip
import json
import os
import sys

OUT = sys.argv[1]
SOURCE = sys.argv[2] if len(sys.argv) > 2 else "."
HEADER = "dp_rank,stage,rank,step,optype,start_ts,duration,seq_id,mc,mb_id,gmc"


def write(kind, name, data):
    folder = os.path.join(OUT, kind)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def demo_rows(n):
    with gzip.open(os.path.join(SOURCE, "examples", "demo",
                                "trace-demo.csv.gz"), "rt") as f:
        lines = f.read().splitlines()
    return lines[0], lines[1:1 + n]


def ops_csv():
    header, rows = demo_rows(40)
    text = "\n".join([header] + rows) + "\n"
    write("ops_csv", "demo-40", text)
    write("ops_csv", "demo-40.gz", gzip.compress(text.encode(), mtime=0))
    write("ops_csv", "truncated.gz", gzip.compress(text.encode(), mtime=0)[:90])
    write("ops_csv", "bom-crlf", "\ufeff" + text.replace("\n", "\r\n"))
    write("ops_csv", "cr-only", text.replace("\n", "\r"))
    write("ops_csv", "nul", header + "\n0,0,0,1,forward\x00compute,0,1,0,0,0,0\n")
    write("ops_csv", "escape", header + "\x1b[2J\n")
    write("ops_csv", "huge-ids",
          HEADER + "\n2147483647,99999999999,0,-9223372036854775808,"
          "forward-compute,0,1,2147483647,0,0,0\n")
    epoch = []
    for row in rows:
        f = row.split(",")
        f[5] = "1700000000." + f[5].replace(".", "")[:12]
        epoch.append(",".join(f))
    write("ops_csv", "epoch", "\n".join([header] + epoch) + "\n")
    write("ops_csv", "long-line", header + "\n" + "9" * 4096)
    write("ops_csv", "meta", "dp_size: 2147483648\ntp_size: 2147483647\n"
          "world_size: 100\n")
    write("ops_csv", "meta-styles", "---\n{trial_name: &t 'a''b', dp_size: 4,"
          "\n  alias: *t, note: \"x\\ty\"}\n")
    write("ops_csv", "meta-deep", "a: " + "{" * (1 << 20))
    # A small bomb: 8 MiB of NULs in 8 KiB.
    write("ops_csv", "bomb.gz", gzip.compress(b"\0" * (8 << 20), mtime=0))


def kineto_event(name, ts, dur, **args):
    e = {"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": 1,
         "ts": ts, "dur": dur}
    if args:
        e["args"] = args
    return e


def kineto():
    events = [kineto_event("ProfilerStep#1", 1000, 5000)]
    events.append({"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0,
                   "tid": 7, "ts": 1100, "dur": 900,
                   "args": {"stream": 7, "correlation": 1}})
    events.append({"ph": "X", "cat": "kernel",
                   "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
                   "pid": 0, "tid": 7, "ts": 2100, "dur": 300,
                   "args": {"stream": 7}})
    doc = {"distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 2},
           "traceEvents": events}
    text = json.dumps(doc)
    write("kineto", "small", text)
    write("kineto", "small.gz", gzip.compress(text.encode(), mtime=0))
    write("kineto", "bom", "\ufeff" + text)
    huge = dict(doc, distributedInfo={"rank": 0, "world_size": 1000000000})
    write("kineto", "huge-world", json.dumps(huge))
    nest = [kineto_event("ProfilerStep#1", 0, 10 ** 7)]
    for i in range(2000):
        nest.append(kineto_event("record_param_comms", 1 + i, 10 ** 6 - 2 * i,
                                 **{"Collective name": "allreduce",
                                    "Process Group Name": "0"}))
    write("kineto", "deep-nest", json.dumps({"traceEvents": nest}))
    ns = dict(doc, traceEvents=[dict(e, ts=e["ts"] * 1000, dur=e["dur"] * 1000)
                                for e in events])
    write("kineto", "nanoseconds", json.dumps(ns))
    write("kineto", "whitespace", "{" + " " * 100000 + "}")
    write("kineto", "long-string", '{"traceEvents": [{"name": "' + "x" * 100000
          + '"}]}')
    write("kineto", "bare-list", json.dumps(events))
    write("kineto", "bomb.gz", gzip.compress(b" " * (8 << 20), mtime=0))


def spec():
    write("spec", "small", "job: {dp: 4, pp: 2, microbatches: 4, steps: 3, "
          "seed: 1}\ncompute: {forward_ms: 4, backward_ms: 8}\n"
          "comm: {dp_allgather_ms: 2, dp_reducescatter_ms: 3, p2p_ms: 0.2}\n"
          "stragglers:\n  - {kind: slow_worker, rank: 2, factor: 1.4}\n")
    write("spec", "huge", "job: {dp: 10000000, pp: 8, microbatches: 1e9, "
          "steps: 1e9}\n")
    # yaml-cpp's hostile cases: 1 MB of nesting, "billion laughs", a long
    # scalar used through many aliases, block and multi-line styles.
    write("spec", "deep-brackets", "job: " + "[" * (1 << 20))
    laughs = "l0: &l0 [" + ", ".join(["lol"] * 10) + "]\n"
    for i in range(1, 9):
        laughs += f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 10) + "]\n"
    write("spec", "laughs", laughs)
    write("spec", "wide-alias", "s: &s " + "x" * 100000 + "\nl: ["
          + "*s, " * 200 + "]\n")
    write("spec", "styles", "%YAML 1.2\n---\njob: &j\n  dp: 2\n  steps: 2\n"
          "compute: {forward_ms: !!float 4, backward_ms: 8}\nnote: |\n  a\n"
          "  b\nstragglers:\n  - kind: slow_worker\n    rank: 1\n"
          "    factor: >-\n      1.5\n...\n")
    write("spec", "huge-durations", "job: {dp: 2, steps: 2}\ncompute: "
          "{forward_ms: 1e15, backward_ms: 8}\nstragglers:\n  - {kind: "
          "slow_worker, rank: 0, factor: 1e300}\n")


def agent():
    step = ('{"kind":"step","job":"llm","rank":3,"epoch":17,"seq":2,"step":40,'
            '"t_end_ns":1764412345123456789,"step_ns":1742000000,'
            '"fwd_ns":41000000,"bwd_ns":82000000,"opt_ns":3100000,'
            '"coll":{"dp":[54000000,12],"tp":[120000000,512]},"tokens":65536,'
            '"sum_s2":2.1e9,"flags":["ckpt"],"clock":"gpu"}')
    rank = ('{"kind":"rank","job":"llm","rank":3,"epoch":17,"seq":1,'
            '"world_size":8,"dp":3,"pp":0,"host":"n0"}')
    drop = ('{"kind":"drop","job":"llm","rank":3,"epoch":17,"seq":9,'
            '"first_seq":3,"last_seq":9}')
    write("agent", "batch", "\n".join([rank, step, drop]) + "\n")
    write("agent", "many", (step + "\n") * 200)
    write("agent", "long-line", '{"kind":"rank","job":"' + "x" * 70000 + '"}')


if __name__ == "__main__":
    ops_csv()
    kineto()
    spec()
    agent()
