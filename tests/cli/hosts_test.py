#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Nodes by host name (issue 14): from tensorboard_trace_handler file names
(`<host>_<pid>.<time>.pt.trace.json`), from `--hosts FILE` (which wins), and
otherwise rank / gpus_per_node with the assumption said in the scope.

usage: hosts_test.py STRAG_BINARY SOURCE_DIR
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

STRAG = sys.argv[1] if len(sys.argv) > 1 else "build/strag"
SOURCE = sys.argv[2] if len(sys.argv) > 2 else "."
DEMO = os.path.join(SOURCE, "examples", "demo", "trace-demo.csv.gz")


def run(*args):
    return subprocess.run([STRAG, *args], capture_output=True, text=True,
                          timeout=300)


class HostsTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def straggler(self, *args):
        out = os.path.join(self.dir, "a.json")
        r = run("analyze", *args, "--json", out, "--quiet")
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out) as f:
            report = json.load(f)["report"]
        return report["largest_straggler"], report["scope"]

    def kineto_job(self):
        """Four ranks on two hosts, rank 3 slow, in tensorboard's names."""
        spec = os.path.join(self.dir, "spec.yaml")
        with open(spec, "w") as f:
            f.write("job: {dp: 4, pp: 1, microbatches: 2, steps: 5, seed: 3}\n"
                    "stragglers:\n  - {kind: slow_worker, rank: 3, factor: 1.4}\n")
        sim = os.path.join(self.dir, "sim")
        r = run("simulate", spec, "--out", sim, "--format", "kineto")
        self.assertEqual(r.returncode, 0, r.stderr)
        folder = os.path.join(sim, "kineto")
        for rank in range(4):
            os.rename(os.path.join(folder, "rank-%d.pt.trace.json" % rank),
                      os.path.join(folder, "gpu-%s_%d.1733134000.pt.trace.json"
                                   % ("ab"[rank // 2], 4000 + rank)))
        return folder

    def test_hosts_from_trace_file_names(self):
        s, scope = self.straggler(self.kineto_job())
        self.assertEqual((s["rank"], s["host"], s["node"]), (3, "gpu-b", 1))
        self.assertEqual(scope, "rank 3, host gpu-b")

    def test_hosts_file_wins(self):
        folder = self.kineto_job()
        hosts = os.path.join(self.dir, "hosts.txt")
        with open(hosts, "w") as f:
            f.write("# rank host\n0 n0\n1 n0\n2 n0\n3 n1\n")
        s, scope = self.straggler(folder, "--hosts", hosts)
        self.assertEqual((s["host"], s["node"]), ("n1", 1))
        self.assertEqual(scope, "rank 3, host n1")

    def test_node_assumed_without_hosts(self):
        s, scope = self.straggler(DEMO)
        self.assertIsNone(s["host"])
        self.assertTrue(scope.endswith("node 1 (if 8 ranks per node)"), scope)
        hosts = os.path.join(self.dir, "hosts.txt")
        with open(hosts, "w") as f:
            f.writelines("%d gpu-%d\n" % (r, r // 4) for r in range(32))
        s, scope = self.straggler(DEMO, "--hosts", hosts)
        self.assertEqual((s["rank"], s["host"]), (9, "gpu-2"))
        self.assertTrue(scope.endswith("host gpu-2"), scope)

    def test_bad_hosts_file(self):
        hosts = os.path.join(self.dir, "hosts.txt")
        for text, message in (
                ("0 a\nx b\n", hosts + ': line 2: expected `RANK HOST`, found "x b"'),
                ("0 a\n", "--hosts " + hosts + ": no host for rank 1 (traced)")):
            with open(hosts, "w") as f:
                f.write(text)
            r = run("analyze", DEMO, "--hosts", hosts)
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertEqual(r.stderr.strip(), "strag: error: " + message)
            self.assertEqual(r.stdout, "")


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
