#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The HTML report renders in headless Chromium (issue 4 acceptance).

Opens reports in Debian's `chromium`, driven over the DevTools protocol on a
pipe (stdlib only), and checks: no uncaught exception, no console or log
error, no request leaves the file (it works offline), every chart has an
ECharts instance of the right series type drawn into a painted canvas, and
the on-call summary, the findings and the ranked workers are in the page.

Reports: the one `render_html_fixture` writes (a synthesised job analysed end
to end), and, once `strag analyze` has `--html FILE`, the demo trace's.

usage: html_report_test.py RENDER_FIXTURE STRAG_BINARY SOURCE_DIR

Exits 77 (CTest SKIP_RETURN_CODE) when no Chromium is installed
(scripts/install-deps.sh installs it); STRAG_CHROMIUM names another binary.
STRAG_HTML_SCREENSHOT=DIR saves a PNG of each page there.
"""
import base64
import fcntl
import json
import re
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

FIXTURE = sys.argv[1] if len(sys.argv) > 1 else "build/tests/render_html_fixture"
STRAG = sys.argv[2] if len(sys.argv) > 2 else "build/strag"
SOURCE = sys.argv[3] if len(sys.argv) > 3 else "."
SKIP = 77
TIMEOUT_S = 60

CHART_SERIES = {
    "chart-heatmap": "heatmap",
    "chart-steps": "line",
    "chart-optype": "bar",
    "chart-stage": "bar",
    "chart-timeline": "custom",
}

# Runs in the page once it has loaded; returns what the checks need.
PROBE = r"""
(() => {
  const out = {charts: {}, text: document.body.innerText,
               worker_rows: document.querySelectorAll('#workers tr').length,
               finding_rows: document.querySelectorAll('#findings tr').length,
               plan: Array.from(document.querySelectorAll(
                   '#plan-table tr[data-policy]')).map(r => r.dataset.policy),
               blob: !!document.getElementById('strag-data')};
  for (const id of %s) {
    const el = document.getElementById(id);
    const r = {present: !!el};
    if (el) {
      const chart = window.echarts && echarts.getInstanceByDom(el);
      const canvas = el.querySelector('canvas');
      r.rendered = el.getAttribute('data-rendered') === 'true';
      r.canvas = !!canvas;
      r.painted = 0;
      if (canvas && canvas.width > 0 && canvas.height > 0) {
        const px = canvas.getContext('2d')
                       .getImageData(0, 0, canvas.width, canvas.height).data;
        for (let i = 3; i < px.length; i += 4 * 7) if (px[i] !== 0) ++r.painted;
      }
      if (chart) {
        const series = chart.getOption().series;
        r.series = series.map(s => s.type);
        r.points = series.map(s => (s.data || []).length);
      }
    }
    out.charts[id] = r;
  }
  // The heatmap: its colour range under each scale (the buttons switch it
  // synchronously), labelled cells, and the outlined cells' ranks.
  const hm = window.echarts &&
             echarts.getInstanceByDom(document.getElementById('chart-heatmap'));
  if (hm) {
    const range = () => {
      const v = hm.getOption().visualMap[0];
      return [v.min, v.max];
    };
    const button = s => document.querySelector(
        '#heatmap-scale button[data-scale="' + s + '"]');
    out.heatmap = {job: range()};
    if (button('smon')) {
      button('smon').click();
      out.heatmap.smon = range();
      button('job').click();
      out.heatmap.back = range();
    }
    const series = hm.getOption().series[0];
    out.heatmap.labels = !!(series.label && series.label.show);
    out.heatmap.outlined = series.data.filter(
        d => d.itemStyle && d.itemStyle.borderWidth > 2).map(d => d.value);
    out.heatmap.values = series.data.map(d => d.value[2]);
    out.heatmap.y = hm.getOption().yAxis[0].data;
  }
  const steps = window.echarts &&
                echarts.getInstanceByDom(document.getElementById('chart-steps'));
  if (steps) out.steps_axis = steps.getOption().xAxis[0].type;
  out.legend = Array.from(document.querySelectorAll('#timeline-legend span')).map(
      s => [s.textContent, s.querySelector('i').style.background]);
  const tl = window.echarts &&
             echarts.getInstanceByDom(document.getElementById('chart-timeline'));
  if (tl) out.timeline_rows = tl.getOption().yAxis[0].data;
  return JSON.stringify(out);
})()
""" % json.dumps(sorted(CHART_SERIES))


def find_chromium():
    for name in (os.environ.get("STRAG_CHROMIUM"), "chromium",
                 "chromium-browser", "google-chrome"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


class Browser:
    """Headless Chromium with --remote-debugging-pipe: commands on its fd 3,
    replies and events on its fd 4, each message JSON ended by a NUL byte."""

    def __init__(self, binary, profile):
        to_child_r, self.to_child = os.pipe()
        self.from_child, from_child_w = os.pipe()

        def wire():  # in the child: the two pipe ends become fds 3 and 4
            r = fcntl.fcntl(to_child_r, fcntl.F_DUPFD, 10)
            w = fcntl.fcntl(from_child_w, fcntl.F_DUPFD, 10)
            os.dup2(r, 3)
            os.dup2(w, 4)

        self.proc = subprocess.Popen(
            [binary, "--headless", "--no-sandbox", "--disable-gpu",
             "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update",
             "--disable-sync", "--user-data-dir=" + profile,
             "--remote-debugging-pipe", "--window-size=1280,2400",
             "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, close_fds=False, preexec_fn=wire)
        os.close(to_child_r)
        os.close(from_child_w)
        self.buffer = b""
        self.next_id = 0
        self.events = []  # (session, method, params), in arrival order

    def close(self):
        try:
            self.send("Browser.close", wait=False)
            self.proc.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()
        os.close(self.to_child)
        os.close(self.from_child)

    def _read_message(self, deadline):
        while b"\0" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no answer from Chromium")
            ready, _, _ = select.select([self.from_child], [], [], left)
            if ready:
                chunk = os.read(self.from_child, 1 << 20)
                if not chunk:
                    raise ConnectionError("Chromium closed the pipe")
                self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)

    def send(self, method, params=None, session=None, wait=True):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self.to_child, json.dumps(message).encode() + b"\0")
        if not wait:
            return None
        deadline = time.monotonic() + TIMEOUT_S
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            if "method" in reply:
                self.events.append((reply.get("sessionId"), reply["method"],
                                    reply.get("params", {})))

    def wait_event(self, method, session, timeout_s=TIMEOUT_S):
        deadline = time.monotonic() + timeout_s
        seen = 0
        while True:
            for s, m, _ in self.events[seen:]:
                if s == session and m == method:
                    return
            seen = len(self.events)
            reply = self._read_message(deadline)
            if "method" in reply:
                self.events.append((reply.get("sessionId"), reply["method"],
                                    reply.get("params", {})))


def load_page(binary, path, screenshot=None):
    """Loads `path`; returns (probe result, problems, requests)."""
    with tempfile.TemporaryDirectory() as profile:
        browser = Browser(binary, profile)
        try:
            target = browser.send("Target.createTarget", {"url": "about:blank"})
            session = browser.send("Target.attachToTarget",
                                   {"targetId": target["targetId"],
                                    "flatten": True})["sessionId"]
            for domain in ("Runtime", "Log", "Page", "Network"):
                browser.send(domain + ".enable", session=session)
            url = "file://" + os.path.abspath(path)
            browser.send("Page.navigate", {"url": url}, session=session)
            browser.wait_event("Page.loadEventFired", session)
            # ECharts may paint over a few frames: probe until the painted
            # pixel counts stop changing.
            probe, last = {}, None
            for _ in range(100):
                result = browser.send("Runtime.evaluate",
                                      {"expression": PROBE,
                                       "returnByValue": True}, session=session)
                probe = json.loads(result["result"]["value"])
                painted = [c.get("painted") for c in probe["charts"].values()]
                if all(painted) and painted == last:
                    break
                last = painted
                time.sleep(0.1)
            if screenshot:
                shot = browser.send("Page.captureScreenshot",
                                    {"format": "png", "captureBeyondViewport": True},
                                    session=session)
                with open(screenshot, "wb") as f:
                    f.write(base64.b64decode(shot["data"]))
            return probe, problems(browser.events), requests(browser.events, url)
        finally:
            browser.close()


def problems(events):
    """Uncaught exceptions, console errors and error log entries."""
    found = []
    for _, method, p in events:
        if method == "Runtime.exceptionThrown":
            d = p["exceptionDetails"]
            found.append("exception: " + d.get("exception", {}).get(
                "description", d.get("text", "")))
        elif method == "Runtime.consoleAPICalled" and p["type"] in ("error", "assert"):
            found.append("console.%s: %s" % (p["type"], " ".join(
                str(a.get("value", a.get("description", ""))) for a in p["args"])))
        elif method == "Log.entryAdded" and p["entry"]["level"] == "error":
            found.append("log: " + p["entry"]["text"])
    return found


def requests(events, page_url):
    """URLs the page asked for besides itself (data: URLs are inline)."""
    return [p["request"]["url"] for _, m, p in events
            if m == "Network.requestWillBeSent"
            and p["request"]["url"] != page_url
            and not p["request"]["url"].startswith(("data:", "blob:"))]


class HtmlReportTest(unittest.TestCase):
    chromium = None

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def check_page(self, path, expect_rows):
        shots = os.environ.get("STRAG_HTML_SCREENSHOT")
        shot = (os.path.join(shots, os.path.basename(path) + ".png")
                if shots else None)
        probe, found, external = load_page(self.chromium, path, shot)
        self.assertEqual(found, [], "console errors")
        self.assertEqual(external, [], "requests beyond the file")
        self.assertTrue(probe["blob"])
        for chart, series in CHART_SERIES.items():
            c = probe["charts"][chart]
            with self.subTest(chart=chart):
                self.assertTrue(c["present"] and c["rendered"] and c["canvas"], c)
                self.assertEqual(set(c.get("series", [])), {series}, c)
                self.assertGreater(min(c["points"]), 0, c)
                self.assertGreater(c["painted"], 100, c)
        heatmap = probe["charts"]["chart-heatmap"]
        self.assertEqual(heatmap["points"],
                         [expect_rows.get("cells", expect_rows["workers"])])
        self.check_heatmap(probe, expect_rows)
        self.check_timeline(probe, expect_rows)
        for text in ("On-call summary", "job utilization", "dominant cause",
                     "largest straggler", "excess step time", "persistence",
                     "probable cause", "Findings", "Ranked workers",
                     "Worst step timeline"):
            self.assertIn(text, probe["text"])
        self.assertEqual(probe["worker_rows"],
                         1 + min(20, expect_rows["workers"]))
        self.assertGreater(probe["finding_rows"], 1)
        return probe

    def check_heatmap(self, probe, expect):
        """The job's own colour range by default, SMon's 1.0-1.5 on request,
        values in small maps, the largest straggler outlined."""
        h = probe["heatmap"]
        values = [v for v in h["values"] if v is not None]
        lo, hi = min(min(values), 1.0), max(values)
        self.assertAlmostEqual(h["job"][0], lo, places=9)
        self.assertAlmostEqual(h["job"][1], max(hi, lo + 0.05), places=9)
        self.assertEqual(h["smon"], [1.0, 1.5])
        self.assertEqual(h["back"], h["job"])
        self.assertEqual(h["labels"], len(h["values"]) <= 400)
        straggler = expect.get("straggler")
        if straggler is None:
            return
        if "cells" in expect:  # rank x step: the straggler's row
            row = h["y"].index(str(straggler))
            self.assertEqual({v[1] for v in h["outlined"]}, {row})
        else:  # [dp, pp, score, rank]
            self.assertEqual({v[3] for v in h["outlined"]}, {straggler})

    def check_timeline(self, probe, expect):
        """One colour per op type; the straggler's rows first; a numeric step
        axis."""
        self.assertEqual(probe["steps_axis"], "value")
        colours = [c for _, c in probe["legend"]]
        self.assertGreater(len(colours), 1)
        self.assertEqual(len(set(colours)), len(colours), probe["legend"])
        straggler = expect.get("straggler")
        rows = probe.get("timeline_rows") or []
        if straggler is not None and any("(straggler)" in r for r in rows):
            self.assertIn("(straggler)", rows[0])
            self.assertIn("(straggler)", rows[1])

    def test_fixture_report(self):
        path = os.path.join(self.tmp.name, "fixture.html")
        title = "fixture <job> & \"quotes\""
        subprocess.run([FIXTURE, path, title], check=True, timeout=120)
        probe = self.check_page(path, {"workers": 32})
        self.assertIn("strag report: " + title, probe["text"])  # escaped, shown
        self.assertIn("global rank", probe["text"])

    def test_strag_analyze_html(self):
        html = os.path.join(self.tmp.name, "demo.html")
        example = os.path.join(SOURCE, "examples", "demo", "trace-demo.csv.gz")
        run = subprocess.run([STRAG, "analyze", example, "--html", html,
                              "--quiet"], capture_output=True, text=True,
                             timeout=300)
        if "unknown flag --html" in run.stderr:
            self.skipTest("strag analyze has no --html yet")
        self.assertEqual(run.returncode, 0, run.stderr)
        with open(html, encoding="utf-8") as f:
            text = f.read()
        start = text.index('id="strag-data">') + len('id="strag-data">')
        data = json.loads(text[start:text.index("</script>", start)])
        self.check_page(html, {"workers": len(data["heatmap"]["cells"]),
                               "straggler": data["heatmap"]["straggler"]})

    def test_plan_html(self):
        """`strag plan --html`: the report with its plan section, in the
        order of the plan's JSON and terminal."""
        html = os.path.join(self.tmp.name, "plan.html")
        plan_json = os.path.join(self.tmp.name, "plan.json")
        example = os.path.join(SOURCE, "examples", "demo", "trace-demo.csv.gz")
        run = subprocess.run([STRAG, "plan", example, "--html", html, "--json",
                              plan_json], capture_output=True, text=True,
                             timeout=300)
        self.assertEqual(run.returncode, 0, run.stderr)
        with open(html, encoding="utf-8") as f:
            text = f.read()
        start = text.index('id="strag-data">') + len('id="strag-data">')
        data = json.loads(text[start:text.index("</script>", start)])
        probe = self.check_page(html, {"workers": len(data["heatmap"]["cells"]),
                                       "straggler": data["heatmap"]["straggler"]})
        with open(plan_json) as f:
            fixes = json.load(f)["plan"]["fixes"]
        self.assertEqual(probe["plan"], [x["policy"] for x in fixes])
        self.assertGreater(len(probe["plan"]), 0)
        self.assertIn("Plan", probe["text"])
        ranked = [x["policy"] for x in fixes if x["rank"] is not None]
        self.assertEqual(re.findall(r"^  \d+\. ([a-z_]+) ", run.stdout, re.M),
                         ranked)

    def test_kineto_traces_html(self):
        """A job read from PyTorch profiler traces (layout unknown: one
        column per rank) renders the same charts."""
        spec = os.path.join(self.tmp.name, "spec.yaml")
        with open(spec, "w") as f:
            f.write("job: {dp: 6, pp: 1, microbatches: 2, steps: 5, seed: 3}\n"
                    "stragglers:\n  - {kind: slow_worker, rank: 4, factor: 1.4}\n")
        out = os.path.join(self.tmp.name, "sim")
        subprocess.run([STRAG, "simulate", spec, "--out", out, "--format",
                        "kineto"], check=True, capture_output=True, timeout=120)
        html = os.path.join(self.tmp.name, "kineto.html")
        run = subprocess.run([STRAG, "analyze", os.path.join(out, "kineto"),
                              "--html", html, "--quiet"], capture_output=True,
                             text=True, timeout=300)
        self.assertEqual(run.returncode, 0, run.stderr)
        with open(html, encoding="utf-8") as f:
            text = f.read()
        start = text.index('id="strag-data">') + len('id="strag-data">')
        data = json.loads(text[start:text.index("</script>", start)])
        grid = data["heatmap"]["grid"]
        self.assertEqual(len(grid["ranks"]), 6)
        self.assertEqual(data["heatmap"]["straggler"], 4)
        probe = self.check_page(html, {"workers": 6, "straggler": 4,
                                       "cells": 6 * len(grid["steps"])})
        self.assertIn("By rank", probe["text"])
        self.assertIn("rank x step", probe["text"])
        self.assertIn("6 kineto trace file(s)", probe["text"])
        self.assertNotIn("PP stage", probe["text"])


if __name__ == "__main__":
    HtmlReportTest.chromium = find_chromium()
    if HtmlReportTest.chromium is None:
        print("SKIP: no Chromium (install Debian's `chromium`: "
              "scripts/install-deps.sh; or set STRAG_CHROMIUM)")
        sys.exit(SKIP)
    unittest.main(argv=sys.argv[:1], verbosity=2)
