#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""`strag analyze --window-ops N` (issue 15): an ops CSV read and analysed a
window of steps at a time gives the in-memory path's report, byte for byte
(JSON, text, HTML, Perfetto timelines; the diagnosis from the evidence kept
per step): on a simulated job, the built-in demo and the published traces
(written step by step: read once), and on rows out of step order (read again
through the external sort). A trace over the memory budget takes the same
path by itself. Only the plan needs the whole trace. Bad uses exit 2.

usage: window_test.py STRAG_BINARY SOURCE_DIR [SHARED_DATA_DIR]
"""
import gzip
import json
import os
import subprocess
import sys
import tempfile
import unittest

STRAG = sys.argv[1] if len(sys.argv) > 1 else "build/strag"
SOURCE = sys.argv[2] if len(sys.argv) > 2 else "."
DATA = sys.argv[3] if len(sys.argv) > 3 else os.path.join(SOURCE, "..",
                                                         "shared", "data")
DEMO = os.path.join(SOURCE, "examples", "demo", "trace-demo.csv.gz")
PUBLISHED = os.path.join(DATA, "osdi25-whatif")


def run(*args):
    return subprocess.run([STRAG, *args], capture_output=True, text=True,
                          timeout=600)


class WindowTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def analysis(self, *args):
        out = os.path.join(self.dir, "a.json")
        r = run("analyze", *args, "--json", out, "--quiet",
                "--spill-dir", self.dir)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out) as f:
            return json.load(f)

    def outputs(self, tag, *args):
        """Every output of `analyze ARGS` as bytes, by kind."""
        paths = {k: os.path.join(self.dir, f"{tag}.{k}")
                 for k in ("json", "html", "perfetto")}
        r = run("analyze", *args, "--json", paths["json"], "--html",
                paths["html"], "--perfetto", paths["perfetto"],
                "--spill-dir", self.dir)
        self.assertEqual(r.returncode, 0, r.stderr)
        out = {"text": r.stdout}
        for k, path in paths.items():
            with open(path, "rb") as f:
                out[k] = f.read()
        return out

    def expect_same_report(self, trace, windows, *extra):
        whole = self.outputs("whole", trace, *extra)
        for w in windows:
            part = self.outputs("part", trace, "--window-ops", str(w), *extra)
            for k in whole:
                self.assertEqual(part[k], whole[k], f"{k}, windows of {w}")
        return json.loads(whole["json"])

    def test_simulated_job_in_step_order(self):
        out = os.path.join(self.dir, "sim")
        r = run("simulate", "--preset", "article-hybrid-4096", "--out", out,
                "--no-truth")
        self.assertEqual(r.returncode, 0, r.stderr)
        whole = self.expect_same_report(
            os.path.join(out, "ops.csv.gz"), [1, 50000, "1M"],
            "--fix", "rank=0", "--unfix", "stage=1,step=2")
        self.assertGreater(whole["slowdown"], 1.0)

    def test_demo(self):
        self.expect_same_report(DEMO, [1, 3000])
        # A hosts file names the straggler's host in windows too.
        hosts = os.path.join(self.dir, "hosts.txt")
        with open(hosts, "w") as f:
            f.writelines(f"{r} node-{r // 4}\n" for r in range(16))
        whole = self.expect_same_report(DEMO, [3000], "--hosts", hosts)
        self.assertTrue(whole["report"]["largest_straggler"]["host"])

    def test_published_traces(self):
        if not os.path.exists(os.path.join(PUBLISHED, "trace-AR.csv.gz")):
            self.skipTest(f"published traces not found at {PUBLISHED}")
        for name in ("AR", "ST", "SE"):
            trace = os.path.join(PUBLISHED, f"trace-{name}.csv.gz")
            whole = self.expect_same_report(trace, [10000])
            if name == "AR":
                self.assertEqual(whole["slowdown"], 1.9730450967262543)

    def test_rows_out_of_order_within_runs(self):
        # Steps interleaved row by row: every run of the sort holds every
        # step, and a step's rows are in many runs.
        with gzip.open(DEMO, "rt") as f:
            lines = f.read().splitlines()
        header, rows = lines[0], lines[1:]
        shuffled = rows[::2] + rows[1::2]
        path = os.path.join(self.dir, "trace-shuffled.csv")
        with open(path, "w") as f:
            f.write("\n".join([header] + shuffled) + "\n")
        meta = os.path.join(os.path.dirname(DEMO), "meta-demo.yaml")
        whole = self.analysis(DEMO)
        part = self.analysis(path, "--meta", meta, "--window-ops", "500")
        r = run("analyze", path, "--meta", meta, "--window-ops", "500",
                "--spill-dir", self.dir, "--json", os.path.join(self.dir, "b"))
        self.assertIn("read twice, sorted", r.stderr)
        for k in whole:
            if k != "job":  # names the file
                self.assertEqual(part[k], whole[k], k)

    def test_over_the_memory_budget(self):
        # A trace estimated larger in memory than --memory-budget (default:
        # half the machine's memory) is analysed in windows by itself.
        whole = self.analysis(DEMO)
        out = os.path.join(self.dir, "budget.json")
        r = run("analyze", DEMO, "--memory-budget", "1K", "--json", out,
                "--spill-dir", self.dir)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("(--memory-budget)", r.stderr)
        self.assertIn("analysing it in windows of steps", r.stderr)
        with open(out) as f:
            part = json.load(f)
        self.assertEqual(part, whole)
        # Within the budget: the in-memory report, byte for byte.
        fits = os.path.join(self.dir, "fits.json")
        plain = os.path.join(self.dir, "plain.json")
        for path, extra in ((fits, ["--memory-budget", "1G"]), (plain, [])):
            r = run("analyze", DEMO, *extra, "--json", path, "--quiet")
            self.assertEqual(r.returncode, 0, r.stderr)
        with open(fits, "rb") as a, open(plain, "rb") as b:
            self.assertEqual(a.read(), b.read())
        # What needs the whole trace (the plan) says so, with the way out.
        for args, word in [
                (["plan", DEMO, "--memory-budget", "1K"], "the plan needs"),
                (["analyze", DEMO, "--memory-budget", "lots"],
                 "--memory-budget")]:
            r = run(*args)
            self.assertEqual(r.returncode, 2, (args, r.stderr))
            self.assertIn(word, r.stderr, args)

    def test_large_trace_step_by_step_held_in_memory(self):
        # An ops CSV whose rows come step by step, large enough that its
        # windows held in memory (16 bytes per op and their machinery)
        # take less than its table (here 8.6M ops with `seq_lens`), is read
        # that way: the in-memory report (here `--plan`, which still reads
        # the table, less its plan), in less memory (333 against 530 MB on
        # 2026-12-04).
        spec = os.path.join(self.dir, "spec.yaml")
        with open(spec, "w") as f:
            f.write("job: {dp: 64, pp: 4, microbatches: 8, steps: 720, "
                    "seed: 3}\n"
                    "compute: {forward_ms: 6, backward_ms: 12, noise: "
                    "{dist: lognormal, sigma: 0.03}}\n"
                    "comm: {p2p_ms: 0.3, dp_allgather_ms: 2, "
                    "dp_reducescatter_ms: 3}\n"
                    "stragglers:\n"
                    "  - {kind: slow_worker, rank: 77, factor: 1.4}\n")
        out = os.path.join(self.dir, "big")
        r = run("simulate", spec, "--out", out, "--no-truth")
        self.assertEqual(r.returncode, 0, r.stderr)
        trace = os.path.join(out, "ops.csv.gz")

        # Under ASan its quarantine keeps up to 256 MB of freed memory,
        # which the held windows' churn fills: the peak then measures the
        # sanitizer (660 against 926 MB on 2026-12-04; 380 against 682 MB
        # without it). No effect on an unsanitized binary.
        env = dict(os.environ)
        env["ASAN_OPTIONS"] = ":".join(
            o for o in (env.get("ASAN_OPTIONS", ""), "quarantine_size_mb=0")
            if o)

        def analysed(*extra):
            path = os.path.join(self.dir, "big.json")
            p = subprocess.Popen([STRAG, "analyze", trace, "--json", path,
                                  "--quiet", *extra],
                                 stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE, env=env)
            _, status, usage = os.wait4(p.pid, 0)
            p.returncode = os.waitstatus_to_exitcode(status)
            self.assertEqual(p.returncode, 0, p.stderr.read())
            p.stderr.close()
            with open(path) as f:
                return json.load(f), usage.ru_maxrss
        held, held_rss = analysed()
        whole, whole_rss = analysed("--plan")
        self.assertEqual(held["job"]["ops"], 8570880)
        whole.pop("plan")
        self.assertEqual(held, whole)
        self.assertEqual(held["report"]["probable_cause"], "faulty_worker")
        print(f"held {held_rss} KB, whole {whole_rss} KB", file=sys.stderr)
        self.assertLess(held_rss, 0.7 * whole_rss, (held_rss, whole_rss))

    def test_bad_uses(self):
        cases = [
            (["analyze", DEMO, "--window-ops", "0"], "--window-ops"),
            (["analyze", DEMO, "--window-ops", "many"], "--window-ops"),
            (["analyze", DEMO, "--window-ops", "10", "--perfetto",
              os.path.join(self.dir, "t.json"), "--perfetto-steps",
              "999999"],
             "not a step"),
            (["plan", DEMO, "--window-ops", "10"], "plan"),
            (["analyze", DEMO, "--window-ops", "10", "--spill-dir",
              os.path.join(self.dir, "missing")], "spill"),
        ]
        for args, word in cases:
            r = run(*args)
            self.assertEqual(r.returncode, 2, (args, r.stderr))
            self.assertIn(word, r.stderr, args)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
