#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Every Perfetto export passes Perfetto's import rules (check_perfetto.py):
the published traces AR, ST and SE (when SHARED_DATA_DIR holds them), and
always simulated jobs: ops CSV (a pipeline preset, every step exported) and
a DDP job's Kineto traces. Prints the events, slices and flows of each.

usage: perfetto_exports_test.py STRAG_BINARY [SHARED_DATA_DIR]
"""
import os
import subprocess
import sys
import tempfile
import unittest

import check_perfetto

STRAG = sys.argv[1] if len(sys.argv) > 1 else "build/strag"
DATA = sys.argv[2] if len(sys.argv) > 2 else os.path.join(
    os.path.dirname(__file__), "..", "..", "..", "shared", "data")
OSDI = os.path.join(DATA, "osdi25-whatif")

DDP_SPEC = """\
job: {dp: 8, pp: 1, microbatches: 2, steps: 6, seed: 5}
compute: {forward_ms: 4, backward_ms: 8, noise: {dist: lognormal, sigma: 0.05}}
comm: {dp_allgather_ms: 2, dp_reducescatter_ms: 3}
stragglers:
  - {kind: slow_worker, rank: 5, factor: 1.5}
"""


def run(*args):
    return subprocess.run([STRAG, *args], capture_output=True, text=True,
                          timeout=600)


class PerfettoExportsTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def check(self, path):
        rep = check_perfetto.check_file(path)
        print(check_perfetto.format_report(os.path.basename(path), rep),
              file=sys.stderr)
        self.assertTrue(rep.ok(), check_perfetto.format_report(path, rep))
        self.assertGreater(rep.stats["flows"], 0)
        self.assertGreater(rep.stats["slices"], 0)

    def test_published_traces(self):
        traces = [t for t in ("AR", "ST", "SE")
                  if os.path.exists(os.path.join(OSDI, "trace-%s.csv.gz" % t))]
        if not traces:
            self.skipTest("no published traces in " + OSDI)
        for t in traces:
            out = os.path.join(self.tmp.name, "trace-%s.perfetto.json" % t)
            r = run("analyze", os.path.join(OSDI, "trace-%s.csv.gz" % t),
                    "--quiet", "--perfetto", out)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.check(out)

    def test_simulated_pipeline_every_step(self):
        out = os.path.join(self.tmp.name, "balanced.perfetto.json")
        r = run("simulate", "--preset", "balanced", "--analyze", "--quiet",
                "--perfetto", out, "--perfetto-steps", "0,1,2,3,4,5,6,7,8,9")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.check(out)

    def test_simulated_ddp_kineto(self):
        spec = os.path.join(self.tmp.name, "ddp.yaml")
        with open(spec, "w") as f:
            f.write(DDP_SPEC)
        sim = os.path.join(self.tmp.name, "sim")
        r = run("simulate", spec, "--out", sim, "--format", "csv,kineto")
        self.assertEqual(r.returncode, 0, r.stderr)
        for name, source in (("ddp-kineto", os.path.join(sim, "kineto")),
                             ("ddp-csv", os.path.join(sim, "ops.csv.gz"))):
            out = os.path.join(self.tmp.name, name + ".perfetto.json")
            r = run("analyze", source, "--quiet", "--perfetto", out)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.check(out)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
