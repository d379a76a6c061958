#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Live detection against ground truth, at scale: simulated jobs of 1,024
ranks (DP 128 x PP 4 x TP 2, about 1 s per step) with one injected fault
each, played to `strag serve` by the load generator (`strag simulate
--live`), scored on the first straggler alert: right rank (its TP group
holds the injected rank; a stage for stage imbalance, the job for
sequence-length imbalance, the node's ranks for a slow link) and right
cause. The healthy job must raise no alert. Also measures the collector's
ingest cost (records per CPU-second, from its own /metrics).

usage: live_truth.py STRAG [--steps N] [--healthy-steps N] [--only CASE]
                           [--doc docs/live.md]   (rewrites its table)

Data time is the simulated time, so playing as fast as the collector
accepts (--rate 0) gives the alerts of a job played at 1 step/s.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "serve"))
import serve_test  # noqa: E402

BASE = """job: {{dp: 128, pp: 4, tp: 2, microbatches: 8, steps: {steps}, seed: {seed}}}
compute: {{forward_ms: 26, backward_ms: 52, noise: {{dist: lognormal, sigma: 0.04}}}}
comm: {{p2p_ms: 1, dp_allgather_ms: 10, dp_reducescatter_ms: 20,
        noise: {{dist: lognormal, sigma: 0.05}}}}
"""

# name: (extra spec text, expected cause, ranks that count as right)
CASES = {
    "slow_worker": ("""stragglers:
  - {{kind: slow_worker, rank: 517, factor: 1.25, steps: [{onset}, {last}]}}
""", "faulty_worker", {517}),
    "gc_pause": ("""stragglers:
  - {{kind: gc_pause, rank: 300, rate_per_step: 0.5, pause_ms: 250, steps: [{onset}, {last}]}}
""", "host_pause", {300, 301}),
    "dataloader_stall": ("""stragglers:
  - {{kind: dataloader_stall, rank: 700, stall_ms: 150, steps: [{onset}, {last}]}}
""", "data_loading", {700, 701}),
    "stage_imbalance": ("""model: {{layers: 32, loss_layer_cost: 4}}
""", "stage_imbalance", set(range(768, 1024))),
    "sequence_length": ("""sequences: {{dist: lognormal, median: 2048, sigma: 0.6, max: 8192,
             per_microbatch: 1, quadratic: 0.0001}}
""", "sequence_length_imbalance", None),
    "slow_link": ("""stragglers:
  - {{kind: slow_link, node: 40, factor: 4, steps: [{onset}, {last}]}}
""", "communication", None),
    "healthy": ("", None, None),
}


def get(c, path):
    with urllib.request.urlopen(c.url(path), timeout=60) as r:
        return r.read()


def run_case(strag, name, steps, tmp):
    extra, cause, right = CASES[name]
    onset = steps // 4
    spec = BASE.format(steps=steps, seed=7) + extra.format(onset=onset,
                                                           last=steps - 1)
    path = os.path.join(tmp, name + ".yaml")
    with open(path, "w") as f:
        f.write(spec)
    c = serve_test.Collector(tmp, "--no-capture", "--continuity", "60",
                             token=False)
    try:
        t0 = time.time()
        p = subprocess.run([strag, "simulate", path, "--live", c.url(""),
                            "--job", name, "--rate", "0"],
                           capture_output=True, text=True)
        if p.returncode != 0:
            raise RuntimeError(p.stderr)
        played = time.time() - t0
        # Every rank reported every step: they close as the live thread
        # ticks; a loaded machine may lag.
        deadline = time.time() + 120
        while True:
            live = json.loads(get(c, "/api/v1/jobs/%s/live" % name))
            if live["last_step"] >= steps - 1 or time.time() > deadline:
                break
            time.sleep(0.3)
        metrics = get(c, "/metrics").decode()
    finally:
        c.stop()
    cpu = float([l.split()[1] for l in metrics.splitlines()
                 if l.startswith("process_cpu_seconds_total")][0])
    records = float([l.split()[1] for l in metrics.splitlines()
                     if l.startswith('strag_ingest_records_total{result="accepted"}')][0])
    alerts = [a for a in live["alerts"] if a["name"] == "TrainingStragglerPersistent"]
    first = alerts[0] if alerts else None
    step_s = live["mean_step_s"]
    if cause is None:
        ok = not alerts
        got = "no alert" if ok else "%d alerts (%s)" % (len(alerts), first["cause"])
        delay = None
    else:
        ok = bool(first) and first["cause"] == cause and (
            right is None or (first["ranks"] and first["ranks"][0] in right))
        got = ("%s on %s" % (first["cause"], first["ranks"][:4])) if first else "no alert"
        start = onset if "{onset}" in extra else 0  # else: from the start
        delay = (first["step"] - start) * step_s if first else None
    return {"case": name, "ok": ok, "got": got, "expected": cause or "no alert",
            "delay_s": delay, "steps": steps, "step_s": step_s,
            "records": records, "cpu_s": cpu, "played_s": played}


def table(rows):
    out = ["| case | expected | first alert | alert after the fault began | right |",
           "|---|---|---|---|---|"]
    for r in rows:
        d = "" if r["delay_s"] is None else "%.0f s" % r["delay_s"]
        out.append("| %s (%d steps of %.2f s) | %s | %s | %s | %s |" % (
            r["case"], r["steps"], r["step_s"], r["expected"], r["got"], d,
            "yes" if r["ok"] else "**no**"))
    rec = sum(r["records"] for r in rows)
    cpu = sum(r["cpu_s"] for r in rows)
    out.append("")
    out.append("Collector cost over these runs: %.0f records in %.1f CPU-s "
               "(ingest, SQLite, detection): %.0f records per CPU-second." %
               (rec, cpu, rec / cpu if cpu else 0))
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("strag")
    ap.add_argument("--steps", type=int, default=400)
    ap.add_argument("--healthy-steps", type=int, default=400)
    ap.add_argument("--only", action="append")
    ap.add_argument("--doc")
    a = ap.parse_args()
    serve_test.STRAG = os.path.abspath(a.strag)
    rows = []
    for name in a.only or list(CASES):
        tmp = tempfile.mkdtemp(prefix="strag-live-truth-")
        try:
            steps = a.healthy_steps if name == "healthy" else a.steps
            r = run_case(serve_test.STRAG, name, steps, tmp)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        print("%-18s %-5s %s (expected %s)" % (r["case"], "ok" if r["ok"] else "WRONG",
                                             r["got"], r["expected"]), flush=True)
        rows.append(r)
    text = table(rows)
    print(text)
    if a.doc:
        with open(a.doc) as f:
            doc = f.read()
        begin, end = "<!-- live-truth -->\n", "<!-- /live-truth -->\n"
        i, j = doc.index(begin) + len(begin), doc.index(end)
        with open(a.doc, "w") as f:
            f.write(doc[:i] + text + doc[j:])
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
