#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The collector's ingest cost, end to end: `strag serve` (HTTP, NDJSON
parse, SQLite group commit with synchronous=FULL, the online detector) fed
by the load generator with a healthy 1,024-rank job at 10, 100 and 1,000
records per request. Reports records per collector CPU-second (its own
process_cpu_seconds_total), the wall rate, and the ack latency histogram's
mean; plus the detector's cost per step from diagnose_online_benchmark
when BENCH_DIR holds it.

usage: ingest_bench.py STRAG [--steps N] [--bench-dir build/src/diagnose]
"""
import argparse
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

SPEC = """job: {{dp: 1024, pp: 1, tp: 1, microbatches: 2, steps: {steps}, seed: 3}}
compute: {{forward_ms: 300, backward_ms: 600, noise: {{dist: lognormal, sigma: 0.03}}}}
comm: {{dp_allgather_ms: 20, dp_reducescatter_ms: 40}}
"""


def metric(text, name):
    for line in text.splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{"):
            return float(line.split()[-1])
    return 0.0


def run(strag, per_request, steps):
    tmp = tempfile.mkdtemp(prefix="strag-ingest-bench-")
    try:
        path = os.path.join(tmp, "job.yaml")
        with open(path, "w") as f:
            f.write(SPEC.format(steps=steps))
        c = serve_test.Collector(tmp, "--no-capture", token=False)
        try:
            with urllib.request.urlopen(c.url("/metrics")) as r:
                cpu0 = metric(r.read().decode(), "process_cpu_seconds_total")
            t0 = time.time()
            p = subprocess.run([strag, "simulate", path, "--live", c.url(""),
                                "--rate", "0", "--records-per-request",
                                str(per_request)], capture_output=True, text=True)
            wall = time.time() - t0
            if p.returncode != 0:
                raise RuntimeError(p.stderr)
            with urllib.request.urlopen(c.url("/metrics")) as r:
                m = r.read().decode()
        finally:
            c.stop()
        cpu = metric(m, "process_cpu_seconds_total") - cpu0
        records = metric(m, 'strag_ingest_records_total{result="accepted"}')
        n = metric(m, "strag_ingest_request_duration_seconds_count")
        lat = metric(m, "strag_ingest_request_duration_seconds_sum") / n if n else 0
        return records, cpu, wall, lat
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("strag")
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--bench-dir", default=None)
    a = ap.parse_args()
    serve_test.STRAG = os.path.abspath(a.strag)
    print("| records per request | records | collector CPU-s | records per CPU-s "
          "| wall records/s | mean ack |")
    print("|---|---|---|---|---|---|")
    for per in (10, 100, 1000):
        records, cpu, wall, lat = run(serve_test.STRAG, per, a.steps)
        print("| %d | %.0f | %.2f | %.0f | %.0f | %.1f ms |" % (
            per, records, cpu, records / cpu if cpu else 0, records / wall,
            lat * 1e3), flush=True)
    if a.bench_dir:
        exe = os.path.join(a.bench_dir, "diagnose_online_benchmark")
        if os.path.exists(exe):
            p = subprocess.run([exe, "--benchmark_min_time=0.5"],
                               capture_output=True, text=True)
            print(p.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
