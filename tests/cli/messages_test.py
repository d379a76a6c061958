#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Messages a terminal can show, and inputs no answer may rest on (issue 11,
sections 1 and 4): control bytes in echoed input are escaped, every broken
limit is named, contradicting metadata is refused with both values, a
Kineto rank in another unit withholds the diagnosis, and calculators never
print inf.

usage: messages_test.py STRAG_BINARY SOURCE_DIR
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
DEMO = os.path.join(SOURCE, "examples", "demo", "trace-demo.csv.gz")
HEADER = "dp_rank,stage,rank,step,optype,start_ts,duration,seq_id"

SPEC_4 = """\
job: {dp: 4, pp: 1, microbatches: 2, steps: 6, seed: 3}
compute: {forward_ms: 4, backward_ms: 8}
comm: {dp_allgather_ms: 2, dp_reducescatter_ms: 3}
"""


def run(*args):
    return subprocess.run([STRAG, *args], capture_output=True, timeout=300)


class MessagesTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def path(self, name):
        return os.path.join(self.tmp.name, name)

    def write(self, name, data):
        with open(self.path(name), "wb") as f:
            f.write(data.encode() if isinstance(data, str) else data)
        return self.path(name)

    def assert_error(self, result, *fragments):
        """Exit 2, one error line naming every fragment, no raw control."""
        err = result.stderr.decode("utf-8", "replace")
        self.assertEqual(result.returncode, 2, err)
        lines = [l for l in err.splitlines() if l.startswith("strag: error:")]
        self.assertEqual(len(lines), 1, err)
        for fragment in fragments:
            self.assertIn(fragment, lines[0])
        self.assertFalse(any(b < 0x20 and b not in (0x0a, 0x09)
                             for b in result.stderr), result.stderr)

    def test_control_bytes_are_escaped(self):
        csv = self.write("esc.csv", HEADER + "\x1b[2J,x\n")
        self.assert_error(run("analyze", csv), "\\x1b[2J", csv)

    def test_cr_only_line_endings(self):
        csv = self.write("cr.csv", HEADER + "\r0,0,0,1,forward-compute,0,1,0\r")
        self.assert_error(run("analyze", csv), csv, "CR only")

    def test_integer_limits_are_named(self):
        meta = self.write("m.yaml", "dp_size: 2147483648\n")
        self.assert_error(run("analyze", DEMO, "--meta", meta),
                          "dp_size", "out of range (at most 16777216)")
        meta = self.write("m.yaml", "tp_size: 2147483647\n")
        self.assert_error(run("analyze", DEMO, "--meta", meta),
                          "tp_size", "at most 16777216")
        csv = self.write("rank.csv", HEADER + "\n0,0,99999999999,1,"
                         "forward-compute,0,1,0\n")
        self.assert_error(run("analyze", csv), csv, "line 2", "rank",
                          "out of range (at most 2147483647)")

    def test_metadata_against_the_trace(self):
        # The example job is DP 4 x PP 4 x TP 2 = 32 GPUs.
        meta = self.write("m.yaml", "tp_size: 2\nworld_size: 100\n")
        self.assert_error(run("analyze", DEMO, "--meta", meta),
                          "world_size 100", "= 32")
        meta = self.write("m.yaml", "pp_size: 8\ntp_size: 2\n")
        result = run("analyze", DEMO, "--meta", meta, "--quiet")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn(b"metadata says pp 8 but the trace has 4", result.stderr)

    def test_analysis_errors_name_the_file(self):
        with gzip.open(DEMO, "rt") as f:
            lines = f.read().splitlines()
        cols = lines[0].split(",")
        dur = cols.index("duration")
        rows = [lines[0]]
        for line in lines[1:]:
            fields = line.split(",")
            fields[dur] = "0"
            rows.append(",".join(fields))
        csv = self.write("zero.csv", "\n".join(rows) + "\n")
        self.assert_error(run("analyze", csv), csv, "zero duration")

    def test_calculators_refuse_what_overflows(self):
        self.assert_error(run("tail", "10", "twopoint:100ms,p=0.1,p=0.2,d=1ms"),
                          "p is given twice")
        self.assert_error(run("tail", "1000000000", "normal:1e307s,1e307s"),
                          "too large")
        self.assert_error(run("cost", "--slowdown", "2", "--gpus", "1000000",
                              "--days", "1e305"), "too large")

    def test_kineto_rank_in_nanoseconds(self):
        spec = self.write("spec.yaml", SPEC_4)
        out = self.path("sim")
        result = run("simulate", spec, "--out", out, "--format", "kineto")
        self.assertEqual(result.returncode, 0, result.stderr)
        trace = os.path.join(out, "kineto", "rank-1.pt.trace.json")
        with open(trace) as f:
            doc = json.load(f)
        for event in doc["traceEvents"]:
            for key in ("ts", "dur"):
                if key in event:
                    event[key] *= 1000
        with open(trace, "w") as f:
            json.dump(doc, f)
        js = self.path("analysis.json")
        result = run("analyze", os.path.join(out, "kineto"), "--json", js,
                     "--quiet")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn(b"rank 1", result.stderr)
        self.assertIn(b"nanoseconds", result.stderr)
        with open(js) as f:
            report = json.load(f)
        text = json.dumps(report)
        self.assertIn("no diagnosis", text)
        self.assertIn('"probable_cause": "none"', text)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], "-v"])
