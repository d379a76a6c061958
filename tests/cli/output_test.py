#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Outputs that are whole or absent (issue 11 §3): `strag analyze` and
`strag simulate` write every output to a temporary file and rename it into
place when all are complete. A full disk (RLIMIT_FSIZE: write() fails with
EFBIG; /dev/full: ENOSPC) or a late option error leaves no output file and
an existing one untouched, and says why; `-` is standard output; an output
that is an input is refused; bad output paths are refused before any work.

usage: output_test.py STRAG_BINARY SOURCE_DIR
"""
import gzip
import json
import os
import resource
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import unittest

STRAG = sys.argv[1] if len(sys.argv) > 1 else "build/strag"
SOURCE = sys.argv[2] if len(sys.argv) > 2 else "."
EXAMPLE = os.path.join(SOURCE, "examples", "demo", "trace-demo.csv.gz")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "perfetto"))
import check_perfetto  # noqa: E402

SPEC = """\
job: {dp: 2, pp: 2, microbatches: 4, steps: 4, seed: 3}
compute: {forward_ms: 4, backward_ms: 8}
comm: {p2p_ms: 0.2, dp_allgather_ms: 2, dp_reducescatter_ms: 3}
stragglers:
  - {kind: slow_worker, rank: 2, factor: 1.4}
"""


def run(*args, fsize=None):
    """Runs strag; `fsize`: a file-size limit in bytes, so that a write
    beyond it fails with EFBIG as on a full disk (SIGXFSZ ignored)."""
    def limit():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
    return subprocess.run([STRAG, *args], capture_output=True, text=True,
                          timeout=300, preexec_fn=limit if fsize else None)


class OutputTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="strag-output-")

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def path(self, *names):
        return os.path.join(self.tmp, *names)

    def spec(self):
        path = self.path("spec.yaml")
        with open(path, "w") as f:
            f.write(SPEC)
        return path

    def assert_only(self, folder, names):
        """`folder` holds exactly `names`: no temporary file left behind."""
        self.assertEqual(sorted(os.listdir(folder)), sorted(names))

    def assert_error(self, r, code, *fragments):
        self.assertEqual(r.returncode, code, r.stderr)
        errors = [l for l in r.stderr.splitlines() if l.startswith("strag: error:")]
        self.assertEqual(len(errors), 1, r.stderr)
        for fragment in fragments:
            self.assertIn(fragment, errors[0])

    # A full disk: the write fails, the message says why, nothing is left.
    def test_disk_full_leaves_no_output(self):
        out = self.path("a.json")
        r = run("analyze", EXAMPLE, "--quiet", "--json", out, fsize=4096)
        self.assert_error(r, 1, "cannot write " + out, os.strerror(27))  # EFBIG
        self.assert_only(self.tmp, [])

    def test_disk_full_leaves_existing_outputs_untouched(self):
        names = ("a.json", "a.html", "a.perfetto.json")
        for n in names:
            with open(self.path(n), "w") as f:
                f.write("old " + n)
        # The JSON fits, the HTML does not: none is replaced.
        r = run("analyze", EXAMPLE, "--quiet", "--json", self.path(names[0]),
                "--html", self.path(names[1]), "--perfetto", self.path(names[2]),
                fsize=200_000)
        self.assert_error(r, 1, "cannot write", os.strerror(27))
        for n in names:
            with open(self.path(n)) as f:
                self.assertEqual(f.read(), "old " + n)
        self.assert_only(self.tmp, names)

    def test_dev_full_says_no_space(self):
        if not os.path.exists("/dev/full"):
            self.skipTest("no /dev/full")
        r = run("analyze", EXAMPLE, "--quiet", "--json", "/dev/full")
        self.assert_error(r, 1, "cannot write /dev/full: No space left on device")
        self.assertTrue(stat.S_ISCHR(os.stat("/dev/full").st_mode))  # not replaced

    def test_simulate_disk_full_leaves_no_files(self):
        out = self.path("sim")
        r = run("simulate", self.spec(), "--out", out, "--format", "csv,kineto",
                fsize=20_000)
        self.assert_error(r, 1, "cannot write " + out, os.strerror(27))
        self.assertFalse(os.path.exists(out))  # the folders it made are gone
        # An existing folder keeps its files, as they were.
        os.makedirs(os.path.join(out, "kineto"))
        with open(os.path.join(out, "meta.yaml"), "w") as f:
            f.write("old")
        r = run("simulate", self.spec(), "--out", out, "--format", "csv,kineto",
                fsize=20_000)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assert_only(out, ["kineto", "meta.yaml"])
        self.assert_only(os.path.join(out, "kineto"), [])
        with open(os.path.join(out, "meta.yaml")) as f:
            self.assertEqual(f.read(), "old")

    # A late option error: nothing written, before or after the analysis.
    def test_bad_perfetto_steps_leaves_no_output(self):
        outs = [self.path(n) for n in ("a.json", "a.html", "a.perfetto.json")]
        r = run("analyze", EXAMPLE, "--quiet", "--json", outs[0], "--html",
                outs[1], "--perfetto", outs[2], "--perfetto-steps", "99999")
        self.assert_error(r, 2, "99999")
        self.assert_only(self.tmp, [])
        sim = self.path("sim")
        r = run("simulate", self.spec(), "--out", sim, "--analyze", "--json",
                outs[0], "--perfetto", outs[2], "--perfetto-steps", "99999")
        self.assert_error(r, 2, "--perfetto-steps", "99999")
        self.assertEqual(r.stdout, "")  # refused before the simulation
        self.assert_only(self.tmp, ["spec.yaml"])

    def test_simulate_analyze_commits_everything_together(self):
        sim, js = self.path("sim"), self.path("a.json")
        r = run("simulate", self.spec(), "--out", sim, "--analyze", "--quiet",
                "--json", js)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assert_only(sim, ["meta.yaml", "ops.csv.gz", "truth.json"])
        with gzip.open(os.path.join(sim, "ops.csv.gz"), "rt") as f:
            self.assertTrue(f.readline().strip())
        with open(js) as f:
            self.assertIn("slowdown", json.load(f))
        # New files get the usual permissions (0666 less the umask).
        umask = os.umask(0)
        os.umask(umask)
        self.assertEqual(stat.S_IMODE(os.stat(js).st_mode), 0o666 & ~umask)

    # "-" is standard output; the summary then goes to stderr.
    def test_json_to_stdout(self):
        r = run("analyze", EXAMPLE, "--json", "-")
        self.assertEqual(r.returncode, 0, r.stderr)
        doc = json.loads(r.stdout)
        self.assertIn("slowdown", doc)
        self.assertIn("slowdown S", r.stderr)  # the summary

    def test_perfetto_and_html_to_stdout(self):
        r = run("analyze", EXAMPLE, "--quiet", "--perfetto", "-",
                "--perfetto-steps", "110")
        self.assertEqual(r.returncode, 0, r.stderr)
        pf = self.path("p.json")
        with open(pf, "w") as f:
            f.write(r.stdout)
        rep = check_perfetto.check_file(pf)
        self.assertTrue(rep.ok(), check_perfetto.format_report(pf, rep))
        r = run("analyze", EXAMPLE, "--quiet", "--html", "-")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(r.stdout.lstrip().lower().startswith("<!doctype html"))
        r = run("simulate", self.spec(), "--analyze", "--json", "-")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("slowdown", json.loads(r.stdout))
        self.assertIn("strag simulate:", r.stderr)

    def test_two_outputs_to_stdout_refused(self):
        r = run("analyze", EXAMPLE, "--json", "-", "--perfetto", "-")
        self.assert_error(r, 2, "--perfetto", "standard output")
        self.assertEqual(r.stdout, "")

    # An output that is an input is refused, however it is named.
    def test_output_that_is_an_input_is_refused(self):
        trace = self.path("trace-x.csv.gz")
        shutil.copy(EXAMPLE, trace)
        with open(trace, "rb") as f:
            before = f.read()
        link = self.path("link.csv.gz")
        os.symlink(trace, link)
        for out in (trace, link, os.path.join(self.tmp, ".", "trace-x.csv.gz")):
            r = run("analyze", trace, "--json", out)
            self.assert_error(r, 2, out, "is an input")
        meta = self.path("meta.yaml")
        with open(meta, "w") as f:
            f.write("dp_size: 8\n")
        r = run("analyze", trace, "--meta", meta, "--html", meta)
        self.assert_error(r, 2, meta, "is an input")
        with open(trace, "rb") as f:
            self.assertEqual(f.read(), before)
        spec = self.spec()
        r = run("simulate", spec, "--analyze", "--json", spec)
        self.assert_error(r, 2, spec, "is an input")
        # A Kineto folder: its trace files are inputs.
        sim = self.path("sim")
        self.assertEqual(run("simulate", spec, "--out", sim, "--format",
                             "kineto").returncode, 0)
        rank0 = os.path.join(sim, "kineto", "rank-0.pt.trace.json")
        r = run("analyze", os.path.join(sim, "kineto"), "--perfetto", rank0)
        self.assert_error(r, 2, rank0, "is an input")

    # Bad output paths: refused before any work, nothing written.
    def test_bad_output_paths_refused_up_front(self):
        ok = self.path("ok.json")
        cases = [
            (self.path("no", "such", "a.json"), "no"),
            (self.tmp, "folder"),
            (os.path.join(EXAMPLE, "a.json"), "not a folder"),
        ]
        for bad, fragment in cases:
            r = run("analyze", EXAMPLE, "--json", ok, "--html", bad)
            self.assert_error(r, 2, "--html", bad, fragment)
            self.assertEqual(r.stdout, "")
            self.assertFalse(os.path.exists(ok))
        r = run("analyze", EXAMPLE, "--json", ok, "--html", ok)
        self.assert_error(r, 2, "--html", "already the output of --json")
        if os.geteuid() != 0:  # root writes anywhere
            ro = self.path("ro")
            os.mkdir(ro, 0o500)
            r = run("analyze", EXAMPLE, "--json", os.path.join(ro, "a.json"))
            self.assert_error(r, 2, "Permission denied")
        with open(self.path("file"), "w") as f:
            f.write("x")
        r = run("simulate", self.spec(), "--out", self.path("file", "sim"))
        self.assert_error(r, 2, "--out", "not a folder")
        self.assertEqual(r.stdout, "")

    # A link as output: the file it names is replaced, the link stays.
    def test_output_through_a_link(self):
        real, link = self.path("real.json"), self.path("link.json")
        with open(real, "w") as f:
            f.write("old")
        os.symlink(real, link)
        r = run("analyze", EXAMPLE, "--quiet", "--json", link)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(os.path.islink(link))
        with open(real) as f:
            self.assertIn("slowdown", json.load(f))


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
