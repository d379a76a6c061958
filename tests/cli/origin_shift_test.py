#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The ops CSV's time origin changes no result (issue 11, section 1).

Every start_ts of a trace is shifted by 0, 1e3, 1e6 and 1.7e9 s (an epoch)
in exact decimal arithmetic; `strag analyze --json` must give byte-identical
JSON for every shift. The example job always runs; the three published
traces run when ../shared/data is present.

usage: origin_shift_test.py STRAG_BINARY SOURCE_DIR [SHARED_DATA_DIR]
"""
import gzip
import hashlib
import os
import subprocess
import sys
import tempfile
import unittest
from decimal import Decimal

STRAG = sys.argv[1] if len(sys.argv) > 1 else "build/strag"
SOURCE = sys.argv[2] if len(sys.argv) > 2 else "."
DATA = sys.argv[3] if len(sys.argv) > 3 else os.path.join(SOURCE, "..", "shared", "data")
SHIFTS = ["0", "1000", "1000000", "1700000000"]


def shift_trace(src, shift, dst):
    """Writes `src` with every start_ts + `shift` (exact, plain decimals)."""
    delta = Decimal(shift)
    with gzip.open(src, "rt") as f, gzip.open(dst, "wt", compresslevel=1) as g:
        header = f.readline()
        g.write(header)
        col = header.strip().split(",").index("start_ts")
        for line in f:
            fields = line.rstrip("\n").split(",")
            fields[col] = format(Decimal(fields[col]) + delta, "f")
            g.write(",".join(fields) + "\n")


class OriginShiftTest(unittest.TestCase):
    def check(self, trace, meta):
        digests = {}
        with tempfile.TemporaryDirectory() as tmp:
            for shift in SHIFTS:
                shifted = os.path.join(tmp, f"trace-{shift}.csv.gz")
                out = os.path.join(tmp, f"analysis-{shift}.json")
                shift_trace(trace, shift, shifted)
                args = [STRAG, "analyze", shifted, "--json", out, "--quiet"]
                if meta:
                    args += ["--meta", meta]
                result = subprocess.run(args, capture_output=True, text=True,
                                        timeout=300)
                self.assertEqual(result.returncode, 0, result.stderr)
                with open(out, "rb") as f:
                    digests[shift] = hashlib.sha256(f.read()).hexdigest()
        self.assertEqual(len(set(digests.values())), 1, digests)

    def test_example_job(self):
        demo = os.path.join(SOURCE, "examples", "demo")
        self.check(os.path.join(demo, "trace-demo.csv.gz"),
                   os.path.join(demo, "meta-demo.yaml"))

    def test_published_traces(self):
        folder = os.path.join(DATA, "osdi25-whatif")
        if not os.path.isdir(folder):
            self.skipTest(f"reference data not found at {folder}")
        for name in ["AR", "ST", "SE"]:
            with self.subTest(trace=name):
                self.check(os.path.join(folder, f"trace-{name}.csv.gz"),
                           os.path.join(folder, f"meta-{name}.yaml"))


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], "-v"])
