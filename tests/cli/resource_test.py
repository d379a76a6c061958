#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Resource test (issue 11, §5): inputs that describe far more than any
machine holds end with exit code 2 and a one-line message, under a 2 GB
address-space limit (`ulimit -v 2000000`), in bounded time, without a large
allocation.

Each case is one row of CASES: a name, a function that writes its inputs
into a fresh folder and returns strag's arguments, and the fragments its
error line must contain. Add a case by adding a row (a gzip bomb, a huge
claimed world, deep nesting: write the file in `setup`).

usage: resource_test.py STRAG_BINARY
"""
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
import unittest

STRAG = sys.argv[1] if len(sys.argv) > 1 else "build/strag"
ADDRESS_SPACE = 2_000_000 * 1024  # bytes: `ulimit -v 2000000`
TIME_LIMIT_S = 30                 # each case, acceptance of issue 11
PEAK_RSS_LIMIT_KB = 200 * 1024    # default: "no large allocation"


class Case:
    def __init__(self, name, setup, fragments, returncode=2,
                 peak_rss_kb=PEAK_RSS_LIMIT_KB):
        self.name = name
        self.setup = setup        # setup(folder) -> strag arguments
        self.fragments = fragments
        self.returncode = returncode
        self.peak_rss_kb = peak_rss_kb  # the child's own peak resident size


def spec_case(name, yaml, *flags, fragments):
    """`strag simulate SPEC FLAGS...` of a spec text."""
    def setup(folder):
        path = os.path.join(folder, "huge.yaml")
        with open(path, "w") as f:
            f.write(yaml)
        return ["simulate", path, *[x.format(dir=folder) for x in flags]]
    return Case(name, setup, fragments)


TOO_LARGE = ("huge.yaml: the job is too large for this machine", "need about",
             "address-space limit (ulimit -v)", "--max-ops N")

CASES = [
    # simulate refuses what it cannot hold (§2), with --out and --analyze.
    spec_case("simulate dp 1e7", "job: {dp: 10000000}\n", "--out", "{dir}/o",
              fragments=TOO_LARGE + ("90,000,000 ops",)),
    spec_case("simulate steps 1e9", "job: {steps: 1e9}\n", "--out", "{dir}/o",
              fragments=TOO_LARGE + ("7,000,000,000 ops",)),
    spec_case("simulate microbatches 1e9", "job: {microbatches: 1e9}\n",
              "--analyze", fragments=TOO_LARGE + ("2,000,000,005 ops",)),
    spec_case("simulate per_microbatch 1e9",
              "sequences: {per_microbatch: 1e9}\n", "--out", "{dir}/o",
              fragments=TOO_LARGE + ("1,000,000,000 sequence lengths",)),
    spec_case("simulate 65k GPUs x 64 microbatches x 100 steps",
              "job: {dp: 1024, pp: 8, tp: 8, microbatches: 64, steps: 100}\n",
              "--out", "{dir}/o", "--analyze",
              fragments=TOO_LARGE + ("293,478,400 ops",)),
    spec_case("simulate 65k DP x 1 step, analysed",
              "job: {dp: 65536, microbatches: 64}\n", "--analyze",
              fragments=TOO_LARGE),
    # --max-ops lifts the memory check; the replay's indexes still bound it.
    spec_case("simulate 2^31 steps with --max-ops",
              "job: {dp: 4, steps: 2147483647}\n", "--analyze", "--max-ops",
              "9223372036854775807",
              fragments=("huge: the job is too large to simulate",)),
]


def limit_address_space():
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


def run_case(case, folder):
    """(exit code, stderr, seconds, peak resident KB) of one case: the
    child's own peak, from wait4; killed after TIME_LIMIT_S."""
    args = case.setup(folder)
    with open(os.path.join(folder, "stdout"), "w+") as out, \
            open(os.path.join(folder, "stderr"), "w+") as err:
        start = time.monotonic()
        proc = subprocess.Popen([STRAG, *args], stdout=out, stderr=err,
                                preexec_fn=limit_address_space)
        timer = threading.Timer(TIME_LIMIT_S, proc.kill)
        timer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            timer.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)
        elapsed = time.monotonic() - start
        err.seek(0)
        return proc.returncode, err.read(), elapsed, usage.ru_maxrss


class ResourceTest(unittest.TestCase):
    def test_cases(self):
        for case in CASES:
            with self.subTest(case=case.name), \
                    tempfile.TemporaryDirectory() as folder:
                code, err, elapsed, peak_kb = run_case(case, folder)
                print(f"{case.name}: exit {code}, {elapsed:.2f} s, "
                      f"peak {peak_kb / 1024:.0f} MB", file=sys.stderr)
                self.assertLess(elapsed, TIME_LIMIT_S, case.name)
                self.assertEqual(code, case.returncode, err)
                lines = err.strip().splitlines()
                self.assertEqual(len(lines), 1, err)
                self.assertTrue(lines[0].startswith("strag: error: "), err)
                for fragment in case.fragments:
                    self.assertIn(fragment, lines[0])
                self.assertLess(peak_kb, case.peak_rss_kb, case.name)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], "-v"])
