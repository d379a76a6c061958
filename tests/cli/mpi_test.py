#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""`mpirun -n K strag analyze ...` (issue 15): the processes share the
replays (each its share of the steps, pools and per-step series gathered),
and the lead one writes outputs byte-identical to one process's: the demo,
a simulated job, the published traces, trace-AR tiled 4 times across DP
(bench/anchor/tile_ops_csv.py), the plan, and PyTorch profiler
(Kineto) sets, for K = 2, 3, 4 on one machine (--oversubscribe); with
--window-ops, each process reading a share and holding its steps, and the
fallbacks (a quoted line break: each reads alone; a bad row: the one
process's error). Bad input is one error line and exit 2. Skips (77) where strag was built without MPI
or mpirun is missing.

usage: mpi_test.py BUILD_DIR SOURCE_DIR [SHARED_DATA_DIR]
"""
import filecmp
import gzip
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

BUILD = sys.argv[1] if len(sys.argv) > 1 else "build"
SOURCE = sys.argv[2] if len(sys.argv) > 2 else "."
DATA = sys.argv[3] if len(sys.argv) > 3 else os.path.join(SOURCE, "..",
                                                         "shared", "data")
STRAG = os.path.join(BUILD, "strag")
DEMO = os.path.join(SOURCE, "examples", "demo", "trace-demo.csv.gz")
PUBLISHED = os.path.join(DATA, "osdi25-whatif")
KINETO = os.path.join(DATA, "hta-kineto")

ENV = dict(os.environ,
           # CI runs as root; the tests are one machine's processes.
           OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_rmaps_base_oversubscribe="1",
           # Containers often forbid the cross-memory attach of shared memory.
           OMPI_MCA_btl_vader_single_copy_mechanism="none",
           # OpenMPI keeps allocations to the end: not strag's leaks.
           ASAN_OPTIONS=os.environ.get("ASAN_OPTIONS", "") +
           ":detect_leaks=0")


def run(*args, processes=1):
    cmd = [STRAG, *args]
    if processes > 1:
        cmd = ["mpirun", "--oversubscribe", "-n", str(processes), *cmd]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=900,
                          env=ENV)


class MpiTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def expect_identical(self, args, counts=(2, 3, 4), flag="--json"):
        one = os.path.join(self.dir, "one.out")
        r = run(*args, flag, one, "--quiet")
        self.assertEqual(r.returncode, 0, r.stderr)
        for k in counts:
            many = os.path.join(self.dir, f"many-{k}.out")
            r = run(*args, flag, many, "--quiet", processes=k)
            self.assertEqual(r.returncode, 0, (k, r.stderr[-3000:]))
            self.assertTrue(filecmp.cmp(one, many, shallow=False),
                            f"{args} {flag}: {k} processes differ from one")

    def test_demo_json_and_html(self):
        self.expect_identical(["analyze", DEMO])
        self.expect_identical(["analyze", DEMO], counts=(3,), flag="--html")

    def test_plan(self):
        self.expect_identical(["plan", DEMO], counts=(2,))

    def test_simulated_job_and_selections(self):
        out = os.path.join(self.dir, "sim")
        r = run("simulate", "--preset", "article-hybrid-4096", "--out", out,
                "--no-truth")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.expect_identical(
            ["analyze", os.path.join(out, "ops.csv.gz"), "--fix", "rank=0",
             "--unfix", "stage=1,step=2", "--pool", "op"], counts=(4,))

    def test_published_traces(self):
        if not os.path.exists(os.path.join(PUBLISHED, "trace-AR.csv.gz")):
            self.skipTest(f"published traces not found at {PUBLISHED}")
        for name in ("AR", "ST", "SE"):
            self.expect_identical(
                ["analyze", os.path.join(PUBLISHED, f"trace-{name}.csv.gz")],
                counts=(4,))

    def test_tiled_trace(self):
        source = os.path.join(PUBLISHED, "trace-AR.csv.gz")
        if not os.path.exists(source):
            self.skipTest(f"published traces not found at {PUBLISHED}")
        tiled = os.path.join(self.dir, "trace-AR-x4.csv.gz")
        r = subprocess.run(
            [sys.executable,
             os.path.join(SOURCE, "bench", "anchor", "tile_ops_csv.py"), "4",
             tiled, "--trace", source, "--level", "1"],
            capture_output=True, text=True, timeout=600)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.expect_identical(["analyze", tiled], counts=(3,))

    def test_kineto_sets(self):
        sets = ["ns_resolution_trace", "df_index_resolver", "sampled-2of128"]
        if not os.path.isdir(os.path.join(KINETO, sets[0])):
            self.skipTest(f"Kineto traces not found at {KINETO}")
        for name in sets:  # the last one has a single step: no share
            self.expect_identical(["analyze", os.path.join(KINETO, name)],
                                  counts=(3,))

    def test_kineto_files_read_by_shares(self):
        # One profiler trace per rank (8), one of them damaged: each process
        # reads its share, and all of them report what one process does
        # (the damaged file's warning included).
        spec = os.path.join(self.dir, "spec.yaml")
        with open(spec, "w") as f:
            f.write("job: {dp: 4, pp: 2, microbatches: 4, steps: 6, seed: 5}\n"
                    "stragglers:\n"
                    "  - {kind: slow_worker, rank: 6, factor: 1.3}\n")
        out = os.path.join(self.dir, "kin")
        r = run("simulate", spec, "--out", out, "--format", "kineto", "--gzip",
                "--no-truth")
        self.assertEqual(r.returncode, 0, r.stderr)
        folder = os.path.join(out, "kineto")
        files = sorted(os.listdir(folder))
        self.assertEqual(len(files), 8, files)
        with open(os.path.join(folder, files[5]), "wb") as f:
            f.write(gzip.compress(b'{"traceEvents": [ {"ph": '))
        self.expect_identical(["analyze", folder], counts=(3, 4))
        r = run("analyze", folder, "--json", os.path.join(self.dir, "k.json"),
                processes=3)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("8 profiler traces over 3 processes, each reading its "
                      "share", r.stderr)
        self.assertEqual(r.stderr.count(files[5]), 1, r.stderr)

    def test_large_trace_read_by_shares_without_flags(self):
        # From 4M ops an ops CSV is read by shares under mpirun without
        # --window-ops (rows in any order: here rank by rank), each process
        # holding its steps: one process's report.
        spec = os.path.join(self.dir, "spec.yaml")
        with open(spec, "w") as f:
            f.write("job: {dp: 64, pp: 4, microbatches: 8, steps: 400, "
                    "seed: 3}\n"
                    "stragglers:\n"
                    "  - {kind: slow_worker, rank: 77, factor: 1.4}\n")
        out = os.path.join(self.dir, "big")
        r = run("simulate", spec, "--out", out, "--no-truth")
        self.assertEqual(r.returncode, 0, r.stderr)
        with gzip.open(os.path.join(out, "ops.csv.gz"), "rt") as f:
            lines = f.read().splitlines()
        by_rank = os.path.join(self.dir, "trace-big.csv")
        with open(by_rank, "w") as f:
            f.write("\n".join([lines[0]] + sorted(
                lines[1:], key=lambda r: int(r.split(",")[2]))) + "\n")
        shutil.copy(os.path.join(out, "meta.yaml"),
                    os.path.join(self.dir, "meta-big.yaml"))
        self.expect_identical(["analyze", by_rank], counts=(2,))
        r = run("analyze", by_rank, "--json", os.path.join(self.dir, "b.json"),
                processes=2)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("4761600 ops over 2 processes, each holding its steps",
                      r.stderr)

    def test_bad_input_is_one_error(self):
        r = run("analyze", os.path.join(self.dir, "missing.csv"), processes=3)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertEqual(r.stderr.count("strag: error:"), 1, r.stderr)

    # --window-ops: each process reads a share of the chunks and holds only
    # its steps (load/distributed_ops_csv.h).
    def test_windows_each_process_holds_its_steps(self):
        self.expect_identical(["analyze", DEMO, "--window-ops", "1000"])
        # The whole report, diagnosis and timelines included, is the one
        # process's in memory: the evidence of each process's steps is
        # gathered, the slowest step's timeline sent by its holder.
        # Fewer steps than processes (a capture of two steps): each reads
        # and analyses the whole job alone, the same report.
        with gzip.open(DEMO, "rt") as f:
            lines = f.read().splitlines()
        first_steps = sorted({int(r.split(",")[3]) for r in lines[1:]})[:2]
        two = os.path.join(self.dir, "trace-two-steps.csv")
        with open(two, "w") as f:
            f.write("\n".join([lines[0]] + [
                r for r in lines[1:] if int(r.split(",")[3]) in first_steps])
                    + "\n")
        meta = os.path.join(os.path.dirname(DEMO), "meta-demo.yaml")
        self.expect_identical(["analyze", two, "--meta", meta, "--window-ops",
                               "100"], counts=(3,))
        for flag in ("--json", "--perfetto"):
            one = os.path.join(self.dir, "in-memory.out")
            many = os.path.join(self.dir, "windows-3.out")
            r = run("analyze", DEMO, flag, one, "--quiet")
            self.assertEqual(r.returncode, 0, r.stderr)
            r = run("analyze", DEMO, "--window-ops", "1000", flag, many,
                    "--quiet", processes=3)
            self.assertEqual(r.returncode, 0, r.stderr[-3000:])
            self.assertTrue(filecmp.cmp(one, many, shallow=False), flag)
        source = os.path.join(PUBLISHED, "trace-AR.csv.gz")
        if not os.path.exists(source):
            self.skipTest(f"published traces not found at {PUBLISHED}")
        # Rows come rank by rank: every process sends most of its rows away.
        self.expect_identical(["analyze", source, "--window-ops", "20000"])
        r = run("analyze", source, "--window-ops", "20000", "--json",
                os.path.join(self.dir, "a.json"), processes=3)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("117216 ops over 3 processes, each holding its steps",
                      r.stderr)

    def write_ar_with(self, name, edit):
        """trace-AR as text with edit(lines) applied (3 chunks), gzipped
        unless the name ends in .csv (then read by byte ranges)."""
        source = os.path.join(PUBLISHED, "trace-AR.csv.gz")
        if not os.path.exists(source):
            self.skipTest(f"published traces not found at {PUBLISHED}")
        with gzip.open(source, "rt", newline="") as f:
            lines = f.read().split("\n")
        edit(lines)
        path = os.path.join(self.dir, name)
        if name.endswith(".csv"):
            with open(path, "w", newline="") as f:
                f.write("\n".join(lines))
        else:
            with gzip.open(path, "wt", newline="", compresslevel=1) as f:
                f.write("\n".join(lines))
        shutil.copy(os.path.join(PUBLISHED, "meta-AR.yaml"),
                    os.path.join(self.dir, "meta.yaml"))
        return path

    def test_windows_plain_csv_by_byte_ranges(self):
        path = self.write_ar_with("plain.csv", lambda lines: None)
        self.expect_identical(["analyze", path, "--window-ops", "20000"])

    def test_windows_quoted_line_break_read_alone(self):
        # A quoted line break in the last chunk: a chunk boundary could cut
        # it, so every process reads the file alone; the same report.
        def edit(lines):
            lines[0] += ",note"
            for i in range(1, len(lines)):
                if lines[i]:
                    lines[i] += ',"two\nlines"' if i == 100000 else ",x"
        for name in ("quoted.csv.gz", "quoted.csv"):
            path = self.write_ar_with(name, edit)
            self.expect_identical(["analyze", path, "--window-ops", "20000"],
                                  counts=(2,))
            r = run("analyze", path, "--window-ops", "20000", "--json",
                    os.path.join(self.dir, "q.json"), processes=2)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertNotIn("each holding its steps", r.stderr)

    def test_windows_bad_row_same_error(self):
        def edit(lines):
            fields = lines[90000].split(",")
            fields[7] = "x7"  # seq_id
            lines[90000] = ",".join(fields)
        self.expect_same_error(self.write_ar_with("bad.csv.gz", edit))
        self.expect_same_error(self.write_ar_with("bad.csv", edit))

    def expect_same_error(self, path):
        one = run("analyze", path, "--window-ops", "20000")
        self.assertEqual(one.returncode, 2, one.stderr)
        self.assertIn("line 90001", one.stderr)
        for k in (2, 3):
            many = run("analyze", path, "--window-ops", "20000", processes=k)
            self.assertEqual(many.returncode, 2, many.stderr)
            self.assertEqual(many.stderr.count("strag: error:"), 1,
                             many.stderr)
            # (mpirun adds its own notice of the exit status after it)
            mine = [l for l in many.stderr.splitlines()
                    if l.startswith("strag")]
            self.assertEqual(mine, one.stderr.splitlines())


def main():
    if not os.path.exists(os.path.join(BUILD, "strag-mpi")):
        print("SKIP: strag-mpi not built (no MPI found: libopenmpi-dev)")
        return 77
    if shutil.which("mpirun") is None:
        print("SKIP: no mpirun (openmpi-bin)")
        return 77
    suite = unittest.defaultTestLoader.loadTestsFromTestCase(MpiTest)
    result = unittest.TextTestRunner(verbosity=2).run(suite)
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
