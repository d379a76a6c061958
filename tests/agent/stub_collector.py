#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A stub of `strag serve`'s agent endpoints, for the agent's tests.

It checks what the agent sends against docs/formats/agent-protocol.md:
the bearer token, the body encoding, every record's keys and types, and
the order of seq numbers in each stream (job, rank, epoch): consecutive
from 1, duplicates (seq <= the last stored) counted and not stored, a
"drop" record standing for the records it names. A request with a bad
record gets a 400 and stores nothing. Anything wrong is appended to
`errors`.

Faults for the tests: `script` holds actions for the next ingest
requests, one each:
  ("status", code[, headers])  answer code without storing
  ("store-then", code)         store, then answer code (a lost ack)
  ("store-then-close",)        store, then close the socket unanswered
  ("close",)                   close the socket unanswered, store nothing
`max_records` answers 413 above that count; `blocked` answers 503 with
Retry-After; `commands` ride on every ack.

Run alone (for tests/agent/ddp_live_job.py):
  stub_collector.py [--port P] [--token T] [--seconds S]
prints the URL, then a summary JSON line at the end.
"""
import argparse
import gzip
import http.server
import json
import socket
import sys
import threading
import time
import urllib.parse

INT = (int,)
NUM = (int, float)
COMMON = {"kind": str, "job": str, "rank": INT, "epoch": INT, "seq": INT}
RANK_KEYS = {"world_size": INT, "dp": INT, "pp": INT, "tp": INT, "cp": INT,
             "dp_size": INT, "pp_size": INT, "tp_size": INT, "cp_size": INT,
             "local_rank": INT, "microbatches": INT, "pid": INT, "host": str,
             "device": str, "torch": str, "agent": str,
             "usd_per_gpu_hour": NUM}
STEP_KEYS = {"step": INT, "t_end_ns": INT, "step_ns": INT, "data_ns": INT,
             "fwd_ns": INT, "bwd_ns": INT, "opt_ns": INT, "gc_ns": INT,
             "gc_n": INT, "gc_gen": INT, "coll": dict, "tokens": NUM,
             "seqs": NUM, "sum_s2": NUM, "flags": list, "clock": str}
DROP_KEYS = {"first_seq": INT, "last_seq": INT}
COLL_KINDS = {"dp", "pp", "tp", "cp", "ep", "other"}
FLAGS = {"warmup", "ckpt", "eval", "skipped", "capture"}


def check_record(r):
    """'' when r is a valid record, else what is wrong."""
    if not isinstance(r, dict):
        return "not an object"
    for k, t in COMMON.items():
        if k not in r:
            return "missing %r" % k
        if not isinstance(r[k], t) or isinstance(r[k], bool):
            return "%r: bad type" % k
    if r["seq"] < 1 or r["rank"] < 0 or r["rank"] >= 1 << 24:
        return "bad seq or rank"
    job = r["job"]
    if not 1 <= len(job) <= 128 or any(
            not (c.isascii() and (c.isalnum() or c in "._:-")) for c in job):
        return "bad job name"
    keys = {"rank": RANK_KEYS, "step": STEP_KEYS, "drop": DROP_KEYS}.get(r["kind"])
    if keys is None:
        return "bad kind %r" % r["kind"]
    for k, t in keys.items():
        if k in r and (not isinstance(r[k], t) or isinstance(r[k], bool)):
            return "%r: bad type %r" % (k, type(r[k]).__name__)
    if r["kind"] == "step":
        for k in ("step", "step_ns"):
            if k not in r:
                return "missing %r" % k
        for k in ("step_ns", "data_ns", "fwd_ns", "bwd_ns", "opt_ns", "gc_ns"):
            if r.get(k, 0) < 0:
                return "%r < 0" % k
        for k, v in r.get("coll", {}).items():
            if k not in COLL_KINDS:
                return "coll kind %r" % k
            if (not isinstance(v, list) or len(v) != 2 or
                    not all(isinstance(x, int) and x >= 0 for x in v)):
                return "coll %r: %r" % (k, v)
        if not set(r.get("flags", [])) <= FLAGS:
            return "flags %r" % r["flags"]
        if r.get("clock", "host") not in ("host", "gpu"):
            return "clock"
    if r["kind"] == "drop":
        if "first_seq" not in r or "last_seq" not in r:
            return "drop without first_seq/last_seq"
        if not 1 <= r["first_seq"] <= r["last_seq"] == r["seq"]:
            return "drop: need first_seq <= last_seq == seq"
    return ""


class StubCollector(object):
    def __init__(self, token=None, host="127.0.0.1", port=0,
                 flush_interval_s=None):
        self.token = token
        self.flush_interval_s = flush_interval_s
        self.lock = threading.Lock()
        self.records = []  # stored, in order
        self.last_seq = {}  # stream -> last stored seq
        self.duplicates = 0
        self.gaps = 0
        self.errors = []
        self.requests = []  # (path, status, records in the body, headers)
        self.script = []
        self.max_records = None
        self.blocked = False
        self.retry_after = "0.05"
        self.commands = []
        self.uploads = []  # (query dict, decoded JSON)
        self.request_times = []
        stub = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                if self.path == "/healthz":
                    return self._reply(200, b"ok", "text/plain")
                return self._reply(404, b"{}")

            def do_POST(self):
                try:
                    stub._post(self)
                except Exception as e:  # a bug in the stub, not the agent
                    stub.errors.append("stub: %r" % (e,))
                    try:
                        self._reply(500, b'{"error":"stub"}')
                    except Exception:
                        pass

            def _reply(self, code, body, ctype="application/json", headers=()):
                self.send_response(code)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                for k, v in headers:
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(body)

            def _drop_connection(self):
                self.close_connection = True
                try:
                    self.connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

        self.server = http.server.ThreadingHTTPServer((host, port), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.url = "http://%s:%d" % (host, self.port)
        self.thread = threading.Thread(target=self.server.serve_forever,
                                       daemon=True)

    def start(self):
        self.thread.start()
        return self

    def stop(self):
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    # ------------------------------------------------------------------

    def _post(self, h):
        length = int(h.headers.get("Content-Length", "0"))
        body = h.rfile.read(length)
        u = urllib.parse.urlsplit(h.path)
        hdrs = {k.lower(): v for k, v in h.headers.items()}
        if "content-encoding" in hdrs:
            self.errors.append("Content-Encoding sent (the protocol uses "
                               "X-Strag-Encoding)")
        if self.token is not None and \
                hdrs.get("authorization") != "Bearer " + self.token:
            with self.lock:
                self.requests.append((h.path, 401, 0, hdrs))
            return h._reply(401, b'{"error":"bad token"}')
        try:
            if hdrs.get("x-strag-encoding") == "gzip":
                body = gzip.decompress(body)
            elif hdrs.get("x-strag-encoding"):
                return h._reply(400, b'{"error":"encoding"}')
        except OSError:
            self.errors.append("bad gzip body")
            return h._reply(400, b'{"error":"gzip"}')
        if u.path == "/v1/traces":
            return self._trace(h, u, body)
        if u.path != "/v1/ingest":
            return h._reply(404, b'{"error":"no such path"}')
        if hdrs.get("content-type") != "application/x-ndjson":
            self.errors.append("content-type %r" % hdrs.get("content-type"))
        lines = [l for l in body.split(b"\n") if l.strip()]
        with self.lock:
            self.request_times.append(time.monotonic())
            action = self.script.pop(0) if self.script else None
            self.requests.append((h.path, None, len(lines), hdrs))
            idx = len(self.requests) - 1
        status = self._ingest(h, lines, action)
        with self.lock:
            p, _, n, hd = self.requests[idx]
            self.requests[idx] = (p, status, n, hd)

    def _ingest(self, h, lines, action):
        if action and action[0] == "status":
            h._reply(action[1], b'{"error":"scripted"}',
                     headers=action[2] if len(action) > 2 else ())
            return action[1]
        if action and action[0] == "close":
            h._drop_connection()
            return -1
        if self.blocked:
            h._reply(503, b'{"error":"busy"}',
                     headers=[("Retry-After", self.retry_after)])
            return 503
        if self.max_records is not None and len(lines) > self.max_records:
            h._reply(413, b'{"error":"too many records"}')
            return 413
        recs = []
        for i, line in enumerate(lines):
            try:
                r = json.loads(line)
            except ValueError:
                self.errors.append("line %d: not JSON" % (i + 1))
                h._reply(400, b'{"error":"json"}')
                return 400
            why = check_record(r)
            if why:
                self.errors.append("line %d: %s: %s" % (i + 1, why, line[:200]))
                h._reply(400, json.dumps({"error": why}).encode())
                return 400
            recs.append(r)
        stored = dup = 0
        with self.lock:
            for r in recs:
                key = (r["job"], r["rank"], r["epoch"])
                last = self.last_seq.get(key, 0)
                seq = r["seq"]
                if seq <= last:
                    dup += 1
                    continue
                if seq != last + 1:
                    ok = r["kind"] == "drop" and r["first_seq"] == last + 1
                    if not ok:
                        self.gaps += 1
                        self.errors.append("stream %r: seq %d after %d"
                                           % (key, seq, last))
                if last == 0 and r["kind"] != "rank":
                    self.errors.append("stream %r: first record is %s, not "
                                       "rank" % (key, r["kind"]))
                self.last_seq[key] = seq
                self.records.append(r)
                stored += 1
            self.duplicates += dup
            ack = {"ok": True, "stored": stored, "duplicates": dup,
                   "commands": list(self.commands)}
            if self.flush_interval_s is not None:
                ack["flush_interval_s"] = self.flush_interval_s
        if action and action[0] == "store-then":
            h._reply(action[1], b'{"error":"scripted after store"}')
            return action[1]
        if action and action[0] == "store-then-close":
            h._drop_connection()
            return -1
        h._reply(200, json.dumps(ack).encode())
        return 200

    def _trace(self, h, u, body):
        q = dict(urllib.parse.parse_qsl(u.query))
        try:
            doc = json.loads(body)
        except ValueError as e:
            self.errors.append("trace upload: not JSON: %r" % (e,))
            return h._reply(400, b'{"error":"json"}')
        with self.lock:
            self.uploads.append((q, doc))
            self.requests.append((h.path, 201, 0, {}))
        h._reply(201, b'{"ok":true}')

    # ------------------------------------------------------------------
    # queries for the tests

    def steps(self, rank=None):
        with self.lock:
            return [r for r in self.records if r["kind"] == "step" and
                    (rank is None or r["rank"] == rank)]

    def kind(self, kind):
        with self.lock:
            return [r for r in self.records if r["kind"] == kind]

    def wait_for(self, pred, timeout=10.0):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if pred():
                return True
            time.sleep(0.01)
        return pred()

    def summary(self):
        with self.lock:
            ranks = {}
            for r in self.records:
                if r["kind"] != "step":
                    continue
                s = ranks.setdefault(r["rank"], {"steps": 0, "step_ns": 0,
                                                 "coll_ns": 0, "gc_ns": 0,
                                                 "data_ns": 0})
                s["steps"] += 1
                s["step_ns"] += r["step_ns"]
                s["coll_ns"] += sum(v[0] for v in r["coll"].values())
                s["gc_ns"] += r["gc_ns"]
                s["data_ns"] += r["data_ns"]
            return {"records": len(self.records), "duplicates": self.duplicates,
                    "errors": self.errors[:20], "streams": len(self.last_seq),
                    "ranks": ranks}


def main():
    p = argparse.ArgumentParser(description="the agent protocol's stub collector")
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--token")
    p.add_argument("--seconds", type=float, default=60.0)
    args = p.parse_args()
    with StubCollector(token=args.token, port=args.port) as s:
        print(s.url, flush=True)
        try:
            time.sleep(args.seconds)
        except KeyboardInterrupt:
            pass
        print(json.dumps(s.summary()), flush=True)
    return 1 if s.errors else 0


if __name__ == "__main__":
    sys.exit(main())
