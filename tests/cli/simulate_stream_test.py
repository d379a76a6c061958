#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""`strag simulate --out` streams its ops CSV (issue 15): the job is
simulated a window of steps at a time and its rows go straight into a
multi-member gzip, compressed on every core. The text must be the bytes of
the whole-table writer (which `--format csv,kineto` still uses) whatever the
window (`--window-steps N`, a test hook), the members must read back with
gzip and with strag, and the memory must stay bounded: a job whose whole
table does not fit runs under `ulimit -v`.

usage: simulate_stream_test.py STRAG_BINARY
"""
import gzip
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
import zlib

STRAG = sys.argv[1] if len(sys.argv) > 1 else "build/strag"

# Every kind of injection (transient, step-ranged, planned), sequences
# balanced over the replicas (their cap couples all steps), every noise.
SPEC = """\
job: {dp: 4, pp: 4, tp: 2, microbatches: 8, steps: 13, gpus_per_node: 4, seed: 7}
model: {layers: 8, loss_layer_cost: 1.5}
compute: {forward_ms: 8, backward_ms: 16, optimizer_ms: 2, noise: {dist: lognormal, sigma: 0.1}}
sequences: {dist: lognormal, median: 2048, sigma: 0.6, max: 16384, per_microbatch: 4,
            quadratic: 0.0002, balance: dp}
comm: {p2p_ms: 0.3, dp_allgather_ms: 2, dp_reducescatter_ms: 3, layernorm_ms: 0.5,
       embedding_ms: 0.4, clip_ms: 0.2, noise: {dist: exponential}}
stragglers:
  - {kind: slow_worker, rank: 9, factor: 1.3, probability: 0.5, steps: [2, 10], op: backward}
  - {kind: gc_pause, ranks: all, rate_per_step: 0.05, pause_ms: 30}
  - {kind: gc_pause, ranks: [1, 17], planned: {every: 3}, pause_ms: 50, steps: [1, 12]}
  - {kind: slow_link, node: 2, factor: 3.0, steps: [5, 9], probability: 0.7}
  - {kind: dataloader_stall, ranks: all, probability: 0.05, stall_ms: 10, steps: [4, 20]}
"""

BACKUP = """\
job: {dp: 6, backup_workers: 2, microbatches: 3, steps: 17, seed: 5}
compute: {forward_ms: 5, backward_ms: 10, noise: {dist: exponential}}
comm: {dp_allgather_ms: 1, dp_reducescatter_ms: 2}
stragglers:
  - {kind: slow_worker, rank: 2, factor: 2.0, probability: 0.4}
"""

INTERLEAVED = """\
job: {dp: 2, pp: 4, vpp: 2, cp: 2, microbatches: 8, steps: 7, seed: 9}
compute: {forward_ms: 3, backward_ms: 6, noise: {dist: lognormal, sigma: 0.05}}
comm: {p2p_ms: 0.1, dp_allgather_ms: 1, dp_reducescatter_ms: 1}
stragglers:
  - {kind: slow_link, node: 1, factor: 2.0}
"""

# 5,790,720 ops (the article's 4,096-GPU job over 120 steps): its whole
# table and text need about 2 GB, streamed it needs about 250 MB.
LONG = """\
job: {dp: 64, pp: 8, tp: 8, microbatches: 16, steps: 120, gpus_per_node: 8, seed: 3}
model: {layers: 64, loss_layer_cost: 0.8}
compute: {forward_ms: 8, backward_ms: 16, noise: {dist: lognormal, sigma: 0.02}}
comm: {p2p_ms: 0.3, dp_allgather_ms: 12, dp_reducescatter_ms: 18}
stragglers:
  - {kind: slow_worker, rank: 1842, factor: 1.2}
"""
ADDRESS_SPACE = 1_000_000_000  # bytes: `ulimit -v 976562`


def run(*args, limit=None):
    def set_limit():
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    return subprocess.run([STRAG, *args], capture_output=True, text=True,
                          timeout=300, preexec_fn=set_limit if limit else None)


def members(path):
    """The gzip members of a file, each inflated on its own."""
    with open(path, "rb") as f:
        data = f.read()
    texts = []
    while data:
        d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        texts.append(d.decompress(data))
        if not d.eof:
            raise ValueError("truncated member")
        data = d.unused_data
    return texts


class SimulateStreamTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="strag-stream-")

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def path(self, *names):
        return os.path.join(self.tmp, *names)

    def simulate(self, spec_text, out, *flags):
        spec = self.path("job.yaml")
        with open(spec, "w") as f:
            f.write(spec_text)
        result = run("simulate", spec, "--out", self.path(out), *flags)
        self.assertEqual(result.returncode, 0, result.stderr)
        with gzip.open(self.path(out, "ops.csv.gz"), "rb") as f:
            text = f.read()
        with open(self.path(out, "truth.json"), "rb") as f:
            truth = f.read()
        return text, truth, result.stdout

    # Any window gives the whole-table writer's bytes, truth.json and summary.
    def test_windows_write_the_whole_tables_bytes(self):
        for name, spec in (("all kinds", SPEC), ("backup", BACKUP),
                           ("interleaved", INTERLEAVED)):
            for steps in ([], ["--steps-window", "3:5"]):
                whole = self.simulate(spec, "whole", "--format", "csv,kineto",
                                      *steps)
                for window in ([], ["--window-steps", "1"],
                               ["--window-steps", "2"], ["--window-steps", "5"]):
                    with self.subTest(spec=name, steps=steps, window=window):
                        streamed = self.simulate(spec, "s", *steps, *window)
                        self.assertGreater(len(streamed[0]), 1000)
                        self.assertEqual(streamed[0], whole[0])
                        self.assertEqual(streamed[1], whole[1])
                        # The Kineto path adds one line of its own.
                        self.assertEqual(streamed[2], "\n".join(
                            l for l in whole[2].split("\n")
                            if "Kineto traces" not in l))

    # Chunks of 8 MiB are members; gzip -dc and strag read them all.
    def test_members_read_back(self):
        result = run("simulate", "--preset", "article-hybrid-4096", "--out",
                     self.path("o"), "--no-truth")
        self.assertEqual(result.returncode, 0, result.stderr)
        gz = self.path("o", "ops.csv.gz")
        texts = members(gz)
        self.assertGreaterEqual(len(texts), 8)
        text = b"".join(texts)
        self.assertEqual(text.count(b"\n"), 965120 + 1)
        gunzip = subprocess.run(["gzip", "-dc", gz], capture_output=True,
                                timeout=120)
        self.assertEqual(gunzip.returncode, 0)
        self.assertEqual(gunzip.stdout, text)
        # strag reads the members as it reads one member of the same text.
        one = self.path("one.csv.gz")
        with open(one, "wb") as f:
            f.write(gzip.compress(text, compresslevel=1))
        reports = [run("analyze", path, "--meta", self.path("o", "meta.yaml"),
                       "--json", "-") for path in (gz, one)]
        for r in reports:
            self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(reports[0].stdout.replace(gz, "X"),
                         reports[1].stdout.replace(one, "X"))

    # Under `ulimit -v` a job whose whole table does not fit (the
    # whole-table path refuses it) is streamed, in bounded memory.
    def test_memory_is_bounded(self):
        probe = run("help", limit=ADDRESS_SPACE)
        if "Sanitizer" in probe.stderr:
            self.skipTest("a sanitized binary needs more address space")
        spec = self.path("long.yaml")
        with open(spec, "w") as f:
            f.write(LONG)
        whole = run("simulate", spec, "--out", self.path("w"), "--format",
                    "csv,kineto", limit=ADDRESS_SPACE)
        self.assertEqual(whole.returncode, 2, whole.stderr)
        self.assertIn("the job is too large for this machine", whole.stderr)
        start = time.monotonic()

        def set_limit():
            resource.setrlimit(resource.RLIMIT_AS,
                               (ADDRESS_SPACE, ADDRESS_SPACE))
        # wait4: the peak resident size of this child alone.
        with open(self.path("stderr"), "w+") as err:
            child = subprocess.Popen(
                [STRAG, "simulate", spec, "--out", self.path("o"),
                 "--no-truth"], stdout=subprocess.DEVNULL, stderr=err,
                preexec_fn=set_limit)
            _, status, usage = os.wait4(child.pid, 0)
            child.returncode = os.waitstatus_to_exitcode(status)
            err.seek(0)
            self.assertEqual(child.returncode, 0, err.read())
        peak_mb = usage.ru_maxrss / 1024
        print(f"5.8 M ops streamed under ulimit -v: "
              f"{time.monotonic() - start:.1f} s, peak {peak_mb:.0f} MB",
              file=sys.stderr)
        self.assertLess(peak_mb, 400)
        lines = 0
        with gzip.open(self.path("o", "ops.csv.gz"), "rb") as f:
            while chunk := f.read(1 << 24):
                lines += chunk.count(b"\n")
        self.assertEqual(lines, 5790720 + 1)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
