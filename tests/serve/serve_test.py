#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""`strag serve` end to end: the protocol's security answers, exactly-once
storage across kill -9, Prometheus exposition and alert rules (promtool),
detection of simulated stragglers through the load generator, history, and
the dashboard in headless Chromium.

usage: serve_test.py STRAG SOURCE_DIR [--only NAME]
"""
import gzip
import json
import re
import os
import random
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.error
import urllib.request

STRAG = None
SOURCE = None
TOKEN = "test-token-0123456789abcdef"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Collector:
    """A `strag serve` child on a free loopback port."""

    def __init__(self, tmp, *extra, token=True, db=None, port=None):
        self.tmp = tmp
        self.db = db or os.path.join(tmp, "live.db")
        self.port = port or free_port()
        self.args = [STRAG, "serve", "--listen", "127.0.0.1:%d" % self.port,
                     "--db", self.db] + list(extra)
        if token:
            path = os.path.join(tmp, "token")
            with open(path, "w") as f:
                f.write(TOKEN + "\n")
            self.args += ["--token-file", path]
        self.token = TOKEN if token else None
        self.log = open(os.path.join(tmp, "serve-%d.log" % self.port), "ab")
        self.proc = None
        self.start()

    def start(self):
        self.proc = subprocess.Popen(self.args, stdout=self.log,
                                     stderr=self.log)
        deadline = time.time() + 20
        while time.time() < deadline:
            try:
                with urllib.request.urlopen(self.url("/healthz"), timeout=1):
                    return
            except Exception:
                if self.proc.poll() is not None:
                    raise RuntimeError("strag serve exited with %d" %
                                       self.proc.returncode)
                time.sleep(0.1)
        raise RuntimeError("strag serve did not start")

    def url(self, path):
        return "http://127.0.0.1:%d%s" % (self.port, path)

    def request(self, path, body=None, headers=None, token=True):
        h = dict(headers or {})
        if token and self.token:
            h["Authorization"] = "Bearer " + self.token
        req = urllib.request.Request(self.url(path), data=body, headers=h,
                                     method="POST" if body is not None else "GET")
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                return r.status, r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.read()

    def post_raw(self, path, body, headers):
        """POST that survives the server answering before the body is sent
        (413 on Content-Length): the answer is read after a broken pipe."""
        import http.client
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        conn.putrequest("POST", path)
        for k, v in headers.items():
            conn.putheader(k, v)
        conn.putheader("Content-Length", str(len(body)))
        conn.endheaders()
        try:
            conn.send(body)
        except (BrokenPipeError, ConnectionResetError):
            pass
        try:
            r = conn.getresponse()
            return r.status, r.read()
        finally:
            conn.close()

    def live(self, job, since=-1):
        if self.proc.poll() is not None:
            raise RuntimeError("strag serve exited with %d" % self.proc.returncode)
        code, body = self.request("/api/v1/jobs/%s/live?since_step=%d" % (job, since))
        return json.loads(body) if code == 200 else None

    def restart(self):
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(timeout=20)
        self.start()

    def kill9(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


def step_line(job, rank, seq, step, epoch=1, step_ns=100_000_000, coll=1000):
    return json.dumps({"kind": "step", "job": job, "rank": rank, "epoch": epoch,
                       "seq": seq, "step": step, "t_end_ns": 10**18 + step * step_ns,
                       "step_ns": step_ns, "coll": {"dp": [coll, 1]}},
                      separators=(",", ":"))


def count(db, sql):
    with sqlite3.connect("file:%s?mode=ro" % db, uri=True) as c:
        return c.execute(sql).fetchone()[0]


class ServeTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="strag-serve-test-")
        self.collectors = []

    def tearDown(self):
        for c in self.collectors:
            c.stop()
        if os.environ.get("STRAG_KEEP_TMP"):
            print("kept", self.tmp)
            return
        shutil.rmtree(self.tmp, ignore_errors=True)

    def collector(self, *extra, **kw):
        c = Collector(self.tmp, *extra, **kw)
        self.collectors.append(c)
        return c

    # --- security -----------------------------------------------------------
    def test_security_answers(self):
        c = self.collector("--no-capture")
        body = (step_line("j", 0, 1, 1) + "\n").encode()
        code, _ = c.request("/v1/ingest", body, token=False)
        self.assertEqual(code, 401)
        code, _ = c.request("/v1/ingest", body,
                            headers={"Authorization": "Bearer wrong-token-xxxxxxxx"},
                            token=False)
        self.assertEqual(code, 401)
        bad = (step_line("j", 0, 1, 1) + "\n" + step_line("j", 0, 2, 2) + "\n" +
               '{"kind":"step","job":"j","rank":0,"epoch":1,"seq":3,"step":3,'
               '"step_ns":"soon"}\n').encode()
        code, answer = c.request("/v1/ingest", bad)
        self.assertEqual(code, 400)
        self.assertIn("line 3", json.loads(answer)["error"])
        self.assertIn("step_ns", json.loads(answer)["error"])
        big = b"x" * (9 << 20)
        code, _ = c.post_raw("/v1/ingest", big,
                             {"Authorization": "Bearer " + TOKEN})
        self.assertEqual(code, 413)
        # A gzip bomb: 64 MiB of newlines in a small body.
        bomb = gzip.compress(b"\n" * (64 << 20), 9)
        self.assertLess(len(bomb), 1 << 20)
        code, answer = c.request("/v1/ingest", bomb,
                                 headers={"X-Strag-Encoding": "gzip"})
        self.assertEqual(code, 413, answer)
        code, _ = c.post_raw("/v1/ingest", bomb, {"Authorization": "Bearer " + TOKEN,
                                                  "Content-Encoding": "gzip"})
        self.assertEqual(code, 413)
        rss_kb = int(open("/proc/%d/status" % c.proc.pid).read()
                     .split("VmHWM:")[1].split()[0])
        self.assertLess(rss_kb, 200 * 1024, "peak RSS %d kB" % rss_kb)
        # Nothing of the refused requests was stored; a good one is.
        code, answer = c.request("/v1/ingest", gzip.compress(body),
                                 headers={"X-Strag-Encoding": "gzip"})
        self.assertEqual(code, 200, answer)
        self.assertEqual(json.loads(answer)["stored"], 1)
        self.assertEqual(count(c.db, "SELECT COUNT(*) FROM steps"), 1)

    def test_non_loopback_needs_a_token(self):
        p = subprocess.run([STRAG, "serve", "--listen", "0.0.0.0:0", "--db",
                            os.path.join(self.tmp, "x.db")],
                           capture_output=True, text=True, timeout=30)
        self.assertEqual(p.returncode, 2)
        self.assertIn("--token-file", p.stderr)

    # --- durability ---------------------------------------------------------
    def test_exactly_once_across_kill_9(self):
        c = self.collector("--no-capture")
        ranks, steps, per_request = 16, 2000, 25
        acked = {}
        lock = threading.Lock()
        stop = threading.Event()
        last_ack = [0.0]

        def agent(rank):
            # One request in flight; resend until acknowledged; paced so
            # that the load spans every kill.
            seq = 0
            pending = []
            for step in range(steps):
                seq += 1
                pending.append((seq, step_line("dur", rank, seq, step)))
                if len(pending) < per_request and step != steps - 1:
                    continue
                body = ("\n".join(l for _, l in pending) + "\n").encode()
                while not stop.is_set():
                    try:
                        code, _ = c.request("/v1/ingest", body)
                    except Exception:
                        code = 0
                    if code == 200:
                        with lock:
                            for s, _ in pending:
                                acked[(rank, s)] = True
                            last_ack[0] = time.time()
                        pending = []
                        break
                    time.sleep(random.uniform(0, 0.2))
                time.sleep(0.1)

        threads = [threading.Thread(target=agent, args=(r,)) for r in range(ranks)]
        for t in threads:
            t.start()
        restarted = 0.0
        for _ in range(3):
            time.sleep(random.uniform(0.5, 1.0))
            c.kill9()
            time.sleep(0.2)
            c.start()
            restarted = time.time()
        for t in threads:
            t.join(timeout=300)
        stop.set()
        self.assertGreater(last_ack[0], restarted,
                           "the load ended before the last kill")
        self.assertEqual(len(acked), ranks * steps)
        stored = count(c.db, "SELECT COUNT(*) FROM steps WHERE job=(SELECT id FROM jobs WHERE name='dur')")
        distinct = count(c.db, "SELECT COUNT(*) FROM (SELECT DISTINCT rank, seq FROM steps)")
        checksum = count(c.db, "SELECT SUM(rank * 100003 + seq * 7 + step) FROM steps")
        expect = sum(r * 100003 + s * 7 + (s - 1) for r in range(ranks)
                     for s in range(1, steps + 1))
        self.assertEqual(stored, ranks * steps)
        self.assertEqual(distinct, ranks * steps)
        self.assertEqual(checksum, expect)

    # --- exposition ---------------------------------------------------------
    def test_promtool_metrics_and_rules(self):
        promtool = shutil.which("promtool")
        if not promtool:
            self.skipTest("promtool is not installed (Debian package prometheus)")
        c = self.collector("--no-capture", "--continuity", "0")
        self.play(c, "promjob", "--preset", "ar", "--rate", "0", last_step=43)
        code, text = c.request("/metrics")
        self.assertEqual(code, 200)
        self.assertIn(b'strag_job_utilization_ratio{train_job="promjob"}', text)
        self.assertIn(b"strag_straggler_lateness_seconds{", text)
        p = subprocess.run([promtool, "check", "metrics"], input=text,
                           capture_output=True)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        rules = os.path.join(SOURCE, "examples", "live", "strag-alerts.yml")
        p = subprocess.run([promtool, "check", "rules", rules], capture_output=True)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        p = subprocess.run([promtool, "test", "rules",
                            os.path.join(SOURCE, "examples", "live", "strag-alerts-test.yml")],
                           capture_output=True)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)

    # --- detection through the load generator --------------------------------
    def play(self, c, job, *args, last_step=0):
        p = subprocess.run([STRAG, "simulate", *args, "--live", c.url(""),
                            "--job", job, "--token-file",
                            os.path.join(self.tmp, "token")],
                           capture_output=True, text=True, timeout=600)
        self.assertEqual(p.returncode, 0, p.stderr)
        # Let the collector close the steps up to `last_step` (all ranks
        # reported them; a loaded machine may lag).
        deadline = time.time() + 60
        while time.time() < deadline:
            live = c.live(job)
            if live and live["steps_closed"] > 0 and live["last_step"] >= last_step:
                break
            time.sleep(0.2)
        return p.stdout

    def spec(self, name, text):
        path = os.path.join(self.tmp, name + ".yaml")
        with open(path, "w") as f:
            f.write(text)
        return path

    def test_loadgen_slow_worker_alerts_with_rank_and_cause(self):
        c = self.collector("--no-capture", "--continuity", "20")
        spec = self.spec("slow", """
job: {dp: 16, pp: 1, tp: 1, microbatches: 2, steps: 300, seed: 3}
compute: {forward_ms: 40, backward_ms: 80, noise: {dist: lognormal, sigma: 0.03}}
comm: {dp_allgather_ms: 5, dp_reducescatter_ms: 10}
stragglers:
  - {kind: slow_worker, rank: 5, factor: 1.3, steps: [100, 299]}
""")
        self.play(c, "slow", spec, "--rate", "0", last_step=299)
        live = c.live("slow")
        alerts = [a for a in live["alerts"]
                  if a["name"] == "TrainingStragglerPersistent" and a["firing"]]
        self.assertTrue(alerts, json.dumps(live)[:2000])
        self.assertEqual(alerts[0]["ranks"][0], 5)
        self.assertEqual(alerts[0]["cause"], "faulty_worker")
        self.assertGreaterEqual(alerts[0]["step"], 100)
        self.assertEqual(live["largest_straggler"], 5)
        # History: the alert is stored; the export reads back.
        p = subprocess.run([STRAG, "history", "--db", c.db, "--alerts"],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("TrainingStragglerPersistent", p.stdout)
        out = os.path.join(self.tmp, "export.csv")
        p = subprocess.run([STRAG, "history", "--db", c.db, "--job", "slow",
                            "--export", out, "--from-step", "150"],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        p = subprocess.run([STRAG, "analyze", out], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("global rank 5", p.stdout)
        p = subprocess.run([STRAG, "history", "--db", c.db, "--job", "slow",
                            "--export", "-", "--json", "--to-step", "9"],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(len(json.loads(p.stdout)["steps"]), 10 * 16)
        # A restarted collector refills its detector from the database.
        c.restart()
        live = c.live("slow")
        self.assertEqual(live["largest_straggler"], 5, live["oncall"])
        self.assertEqual(live["last_step"], 299)

    def test_loadgen_healthy_job_raises_no_alert(self):
        c = self.collector("--no-capture", "--continuity", "20")
        spec = self.spec("healthy", """
job: {dp: 16, pp: 1, tp: 1, microbatches: 2, steps: 600, seed: 4}
compute: {forward_ms: 40, backward_ms: 80, noise: {dist: lognormal, sigma: 0.05}}
comm: {dp_allgather_ms: 5, dp_reducescatter_ms: 10}
""")
        self.play(c, "healthy", spec, "--rate", "0", last_step=599)
        live = c.live("healthy")
        straggler = [a for a in live["alerts"] if a["name"] != "TrainingStepRegimeChange"]
        self.assertEqual(straggler, [])
        self.assertEqual(live["state"], "healthy")
        # Polling an idle job: 304 with the ETag of the last answer.
        req = urllib.request.Request(c.url("/api/v1/jobs/healthy/live?since_step=599"),
                                     headers={"Authorization": "Bearer " + TOKEN})
        with urllib.request.urlopen(req) as r:
            etag = r.headers["ETag"]
        self.assertTrue(etag)
        req.add_header("If-None-Match", etag)
        with self.assertRaises(urllib.error.HTTPError) as cm:
            urllib.request.urlopen(req)
        self.assertEqual(cm.exception.code, 304)

    # --- dashboard ----------------------------------------------------------
    def test_dashboard_in_headless_chromium(self):
        chromium = shutil.which("chromium") or shutil.which("chromium-browser")
        if not chromium:
            self.skipTest("chromium is not installed")
        c = self.collector("--no-capture", "--continuity", "10", token=False)
        spec = self.spec("dash", """
job: {dp: 8, pp: 2, tp: 1, microbatches: 4, steps: 200, seed: 5}
compute: {forward_ms: 20, backward_ms: 40, noise: {dist: lognormal, sigma: 0.03}}
comm: {p2p_ms: 1, dp_allgather_ms: 3, dp_reducescatter_ms: 6}
stragglers:
  - {kind: slow_worker, rank: 11, factor: 1.4}
""")
        p = subprocess.run([STRAG, "simulate", spec, "--live", c.url(""),
                            "--job", "dash", "--rate", "0"],
                           capture_output=True, text=True, timeout=600)
        self.assertEqual(p.returncode, 0, p.stderr)
        deadline = time.time() + 60
        while time.time() < deadline and (c.live("dash") or {}).get("last_step", -1) < 199:
            time.sleep(0.2)
        profile = os.path.join(self.tmp, "chrome")
        p = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu",
                            "--user-data-dir=" + profile,
                            "--virtual-time-budget=8000", "--dump-dom",
                            c.url("/?job=dash")],
                           capture_output=True, text=True, timeout=120)
        dom = p.stdout
        self.assertIn('id="js-errors"></pre>', dom, dom[-3000:])
        self.assertEqual(len(re.findall(r"<div data-cell=\"[0-9]", dom)), 16, dom[:3000])
        self.assertIn("global rank 11", dom)
        # The injected worker's cell (dp 3, stage 1) is the hottest.

        cells = {m.group(1): float(m.group(2)) for m in
                 re.finditer(r'data-cell="([0-9]+,[0-9]+)" data-value="([0-9.]+)"', dom)}
        self.assertEqual(max(cells, key=cells.get), "3,1", cells)


def main():
    global STRAG, SOURCE
    STRAG = os.path.abspath(sys.argv[1])
    SOURCE = os.path.abspath(sys.argv[2])
    argv = [sys.argv[0]] + sys.argv[3:]
    unittest.main(argv=argv, verbosity=2)


if __name__ == "__main__":
    main()
