#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""`strag analyze` on PyTorch profiler (Kineto) traces written by
`strag simulate --format kineto`: clock offsets recovered at scale, the
injected straggler found, and damaged input (truncated JSON or gzip, a
missing or duplicated rank, negative durations, a collective one rank never
joins) reported by file while the analysis goes on.

usage: kineto_cli_test.py STRAG_BINARY [SHARED_DATA_DIR]
"""
import glob
import gzip
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "perfetto"))
import check_perfetto  # noqa: E402  (Perfetto's import rules)

STRAG = sys.argv[1] if len(sys.argv) > 1 else "build/strag"
DATA = sys.argv[2] if len(sys.argv) > 2 else os.path.join(
    os.path.dirname(__file__), "..", "..", "..", "shared", "data")

# 64 traced ranks (DP 16 x PP 4), one slow worker. Communication has no
# noise: members of a collective then end at the same instant, which is what
# the aligner relies on (a real NCCL collective ends within microseconds).
SPEC_64 = """\
job: {dp: 16, pp: 4, microbatches: 4, steps: 4, seed: 7}
compute: {forward_ms: 4, backward_ms: 8, noise: {dist: lognormal, sigma: 0.02}}
comm: {p2p_ms: 0.2, dp_allgather_ms: 2, dp_reducescatter_ms: 3, noise: {dist: lognormal, sigma: 0}}
stragglers:
  - {kind: slow_worker, rank: 37, factor: 1.5}
"""

# 4 ranks of pure DP, for the damaged-input cases.
SPEC_4 = """\
job: {dp: 4, pp: 1, microbatches: 2, steps: 4, seed: 3}
compute: {forward_ms: 4, backward_ms: 8}
comm: {dp_allgather_ms: 2, dp_reducescatter_ms: 3}
stragglers:
  - {kind: slow_worker, rank: 2, factor: 1.4}
"""


def run(*args):
    return subprocess.run([STRAG, *args], capture_output=True, text=True,
                          timeout=300)


class KinetoCliTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="strag-kineto-")

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def simulate(self, spec, *flags, fmt="kineto"):
        path = os.path.join(self.tmp, "spec.yaml")
        with open(path, "w") as f:
            f.write(spec)
        out = os.path.join(self.tmp, "sim")
        r = run("simulate", path, "--out", out, "--format", fmt, *flags)
        self.assertEqual(r.returncode, 0, r.stderr)
        return os.path.join(out, "kineto")

    def analyze(self, folder, perfetto=False):
        """Runs the analysis; returns (exit code, stderr, JSON or None).
        `perfetto`: also exports the timelines, checked against Perfetto's
        import rules."""
        js = os.path.join(self.tmp, "analysis.json")
        pf = os.path.join(self.tmp, "analysis.perfetto.json")
        if os.path.exists(js):
            os.remove(js)
        r = run("analyze", folder, "--json", js, "--quiet",
                *(["--perfetto", pf] if perfetto else []))
        if perfetto and r.returncode == 0:
            rep = check_perfetto.check_file(pf)
            self.assertTrue(rep.ok(), check_perfetto.format_report(pf, rep))
            self.assertGreater(rep.stats["flows"], 0)
        result = None
        if os.path.exists(js):
            with open(js) as f:
                result = json.load(f)
        return r.returncode, r.stderr, result

    def test_64_ranks_offsets_and_straggler(self):
        folder = self.simulate(SPEC_64, "--clock-offset-ms", "50", "--gzip")
        with open(os.path.join(folder, "..", "clock-offsets.json")) as f:
            truth = json.load(f)
        self.assertEqual(truth["world_size"], 64)
        code, err, result = self.analyze(folder, perfetto=True)
        self.assertEqual(code, 0, err)
        # Offsets make collectives end before their last member starts:
        # the clocks are aligned, not kept (issue 9).
        self.assertFalse(result["input"]["clock"]["kept_raw"])
        found = {int(k): v for k, v in result["input"]["clock"]["offset_ns"].items()}
        injected = {r["rank"]: r["clock_offset_ns"] for r in truth["ranks"]}
        self.assertEqual(sorted(found), sorted(injected))
        # Aligned = raw + found and raw = true + injected: found + injected is
        # the same for every rank (the common origin is arbitrary).
        sums = [found[r] + injected[r] for r in injected]
        origin = statistics.median(sums)
        worst_us = max(abs(s - origin) for s in sums) / 1e3
        print(f"64 ranks, offsets up to {max(abs(v) for v in injected.values()) / 1e6:.1f} ms:"
              f" recovered within {worst_us:.3f} us", file=sys.stderr)
        self.assertLessEqual(worst_us, 10.0)
        file_rank = next(r["rank"] for r in truth["ranks"] if r["global_rank"] == 37)
        self.assertEqual(result["report"]["largest_straggler"]["rank"], file_rank)
        self.assertEqual(result["report"]["probable_cause"], "faulty_worker")

    def test_generic_model_agrees_with_megatron_model(self):
        """The same simulated pipeline job, analysed from its ops CSV (the
        published Megatron model) and from its Kineto traces (the generic
        model, which infers the dependencies), gives nearly the same S."""
        folder = self.simulate(SPEC_64, fmt="csv,kineto")
        _, err, generic = self.analyze(folder)
        self.assertIsNotNone(generic, err)
        _, err, megatron = self.analyze(os.path.join(folder, "..", "ops.csv.gz"))
        self.assertIsNotNone(megatron, err)
        print(f"S: generic {generic['slowdown']:.4f}, Megatron {megatron['slowdown']:.4f}",
              file=sys.stderr)
        self.assertAlmostEqual(generic["slowdown"], megatron["slowdown"], delta=0.02)
        self.assertEqual(generic["job"]["steps"], megatron["job"]["steps"])

    def test_several_kernels_per_op_keep_every_step(self):
        """Real ops launch many kernels each. With 1, 2 and 4 kernels per op
        (a zero-length optimizer: its kernels start as collectives of other
        streams start, without being waited on), every step keeps the
        reference step's structure, no wait edge contradicts a step, and S
        is the same as with one kernel per op."""
        spec = ("job: {dp: 4, pp: 2, microbatches: 4, steps: 8, seed: 7}\n"
                "compute: {forward_ms: 4, backward_ms: 8, "
                "noise: {dist: lognormal, sigma: 0.02}}\n"
                "comm: {p2p_ms: 0.2, dp_allgather_ms: 2, "
                "dp_reducescatter_ms: 3, "
                "noise: {dist: lognormal, sigma: 0.05}}\n"
                "stragglers:\n  - {kind: slow_worker, rank: 5, factor: 1.3}\n")
        slowdowns = []
        for kernels in ("1", "2", "4"):
            folder = self.simulate(spec, "--kernels-per-op", kernels)
            js = os.path.join(self.tmp, f"k{kernels}.json")
            r = run("analyze", folder, "--json", js)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertNotIn("step dropped", r.stderr, kernels)
            self.assertNotIn("contradict", r.stderr, kernels)
            with open(js) as f:
                result = json.load(f)
            self.assertEqual(result["job"]["steps"], 8, kernels)
            slowdowns.append(result["slowdown"])
            shutil.rmtree(os.path.dirname(folder))
        print(f"S with 1, 2, 4 kernels per op: {slowdowns}", file=sys.stderr)
        for s in slowdowns[1:]:
            self.assertAlmostEqual(s, slowdowns[0], delta=1e-6)

    def twins(self, spec, *flags):
        """Simulates `spec` as ops CSV and Kineto traces; returns the truth
        and both analyses (ops CSV, Kineto)."""
        folder = self.simulate(spec, *flags, fmt="csv,kineto")
        with open(os.path.join(folder, "..", "truth.json")) as f:
            truth = json.load(f)
        _, err, megatron = self.analyze(os.path.join(folder, "..", "ops.csv.gz"))
        self.assertIsNotNone(megatron, err)
        _, err, generic = self.analyze(folder, perfetto=True)
        self.assertIsNotNone(generic, err)
        return truth, megatron, generic

    def test_dp_x_pp_slow_rank_named_wherever_it_sits(self):
        """Issue 9: a DP 4 x PP 4 Kineto job names its slow rank, with its
        stage and replica, as its ops-CSV twin does; S within 2%."""
        for rank in (1, 6, 9, 15):
            spec = ("job: {dp: 4, pp: 4, microbatches: 8, steps: 6, seed: 3}\n"
                    "compute: {forward_ms: 8, backward_ms: 16, "
                    "noise: {dist: lognormal, sigma: 0.02}}\n"
                    f"stragglers:\n  - {{kind: slow_worker, rank: {rank}, "
                    "factor: 1.3}\n")
            truth, megatron, generic = self.twins(spec)
            want = truth["stragglers"][0]
            for name, r in (("ops CSV", megatron), ("kineto", generic)):
                report = r["report"]
                self.assertEqual(report["probable_cause"], "faulty_worker", name)
                s = report["largest_straggler"]
                self.assertEqual((s["dp"], s["pp"]), (want["dp"], want["pp"]),
                                 f"{name}, rank {rank}")
                self.assertLessEqual(report["utilization"], 1.0)
            self.assertEqual(generic["input"]["layout"],
                             "p2p chains: 4 pipeline(s) of 4 stages")
            # Absolute clocks (baseTimeNanoseconds), causal as written: kept.
            self.assertTrue(generic["input"]["clock"]["kept_raw"])
            ratio = generic["slowdown"] / megatron["slowdown"]
            print(f"slow rank {rank}: S ops CSV {megatron['slowdown']:.4f}, "
                  f"Kineto {generic['slowdown']:.4f}, true {want['slowdown']:.4f}",
                  file=sys.stderr)
            self.assertLess(abs(ratio - 1), 0.02)

    def test_presets_agree_across_formats(self):
        """The same simulated job read as ops CSV and as Kineto traces: the
        same probable cause, nowhere S < 1 (a failed model)."""
        for preset in ("balanced", "st", "ar"):
            out = os.path.join(self.tmp, preset)
            r = run("simulate", "--preset", preset, "--out", out, "--format",
                    "csv,kineto", "--steps-window", "0:5")
            self.assertEqual(r.returncode, 0, r.stderr)
            _, err, megatron = self.analyze(os.path.join(out, "ops.csv.gz"))
            _, err, generic = self.analyze(os.path.join(out, "kineto"))
            self.assertIsNotNone(generic, err)
            print(f"{preset}: S ops CSV {megatron['slowdown']:.4f}, Kineto "
                  f"{generic['slowdown']:.4f}", file=sys.stderr)
            self.assertEqual(generic["report"]["probable_cause"],
                             megatron["report"]["probable_cause"], preset)
            self.assertGreaterEqual(generic["slowdown"], 1.0, preset)
            if preset != "ar":  # ar: the robust ideal leaves the straggler out
                self.assertLess(abs(generic["slowdown"] / megatron["slowdown"] - 1),
                                0.02, preset)

    def test_one_step_capture_names_the_slow_rank(self):
        """Issue 9: one step of 8 ranks is enough to name who everyone
        waited for; persistence is unknown."""
        spec = ("job: {dp: 8, pp: 1, microbatches: 2, steps: 3, seed: 5}\n"
                "compute: {forward_ms: 8, backward_ms: 16}\n"
                "stragglers:\n  - {kind: slow_worker, rank: 5, factor: 1.5}\n")
        folder = self.simulate(spec, "--steps-window", "1:1")
        code, err, result = self.analyze(folder)
        self.assertEqual(code, 0, err)
        report = result["report"]
        self.assertEqual(report["largest_straggler"]["rank"], 5, report)
        self.assertEqual(report["probable_cause"], "faulty_worker")
        self.assertIsNone(report["persistence"]["persistent"])

    def test_one_step_capture_names_the_late_rank(self):
        """Issue 9: one step of 8 ranks, one starting late (its batch not
        ready): that rank is named, as data loading."""
        spec = ("job: {dp: 8, pp: 1, microbatches: 2, steps: 3, seed: 5}\n"
                "compute: {forward_ms: 8, backward_ms: 16}\n"
                "stragglers:\n  - {kind: dataloader_stall, rank: 5, "
                "probability: 1.0, stall_ms: 40}\n")
        folder = self.simulate(spec, "--steps-window", "1:1")
        code, err, result = self.analyze(folder)
        self.assertEqual(code, 0, err)
        report = result["report"]
        self.assertEqual(report["largest_straggler"]["rank"], 5, report)
        self.assertEqual(report["probable_cause"], "data_loading")
        self.assertIsNone(report["persistence"]["persistent"])

    def test_default_names_and_rank_map(self):
        """Issue 9: tensorboard_trace_handler's names without distributedInfo
        are numbered in file-name order with a warning; --rank-map names
        them; two profiling cycles of a rank are merged."""
        folder = self.simulate(SPEC_4, fmt="kineto")
        renamed = os.path.join(self.tmp, "renamed")
        os.makedirs(renamed)
        mapping = {}
        for name in sorted(os.listdir(folder)):
            rank = int(re.search(r"rank-(\d+)", name).group(1))
            with open(os.path.join(folder, name)) as f:
                doc = json.load(f)
            del doc["distributedInfo"]
            # Reverse order of names, so that file-name order is wrong.
            new = f"host_{900 - rank}.1700000000{rank}.pt.trace.json"
            mapping[new] = rank
            with open(os.path.join(renamed, new), "w") as f:
                json.dump(doc, f)
        js = os.path.join(self.tmp, "a.json")
        r = run("analyze", renamed, "--json", js, "--quiet")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("numbered in file-name order", r.stderr)
        with open(js) as f:
            named_by_order = json.load(f)["report"]["largest_straggler"]["rank"]
        rank_map = ",".join(f"{n}={k}" for n, k in mapping.items())
        r = run("analyze", renamed, "--json", js, "--quiet", "--rank-map", rank_map)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("numbered in file-name order", r.stderr)
        with open(js) as f:
            report = json.load(f)["report"]
        self.assertEqual(report["largest_straggler"]["rank"], 2)  # SPEC's
        self.assertEqual(named_by_order, 3 - 2)  # names reversed
        bad = run("analyze", renamed, "--rank-map", "x.json=-1")
        self.assertEqual(bad.returncode, 2)
        self.assertIn("--rank-map", bad.stderr)

    def test_profiling_cycles_are_merged(self):
        """Two files per rank, steps 0-2 and 3-5 (schedule(repeat=2)): one
        analysis of all six steps."""
        spec = SPEC_4.replace("steps: 4", "steps: 6")
        cycles = os.path.join(self.tmp, "cycles")
        os.makedirs(cycles)
        for window in ("0:2", "3:5"):
            folder = self.simulate(spec, "--steps-window", window)
            for name in os.listdir(folder):
                base = name.replace(".pt.trace.json", "")
                shutil.copy(os.path.join(folder, name),
                            os.path.join(cycles, f"{base}.{window[0]}.pt.trace.json"))
        code, err, result = self.analyze(cycles)
        self.assertEqual(code, 0, err)
        self.assertIn("merged", err)
        self.assertEqual(result["job"]["steps"], 6, err)

    def damaged(self):
        """A 4-rank job's traces (plain JSON) to damage."""
        return self.simulate(SPEC_4)

    def assert_goes_on(self, folder, *fragments):
        code, err, result = self.analyze(folder)
        self.assertEqual(code, 0, err)
        self.assertIsNotNone(result, err)
        warnings = result["input"]["warnings"]
        text = "\n".join(warnings)
        if os.environ.get("STRAG_SHOW_WARNINGS"):
            print(text, file=sys.stderr)
        for fragment in fragments:
            self.assertRegex(text, fragment)
            self.assertRegex(err, fragment)
        self.assertGreater(result["slowdown"], 1.0)
        return result

    def test_ddp_perfetto_export_passes_import_rules(self):
        """A DDP job (the arrow into its slow rank used to end before it
        started): its export passes Perfetto's import rules."""
        folder = self.simulate(SPEC_4)
        code, err, _ = self.analyze(folder, perfetto=True)
        self.assertEqual(code, 0, err)

    def test_truncated_json(self):
        folder = self.damaged()
        path = os.path.join(folder, "rank-1.pt.trace.json")
        with open(path, "rb") as f:
            data = f.read()
        with open(path, "wb") as f:
            f.write(data[: len(data) // 2])
        result = self.assert_goes_on(folder, re.escape(path) + r".*byte \d+")
        self.assertEqual(result["input"]["missing_ranks"], [1])

    def test_truncated_gzip(self):
        folder = self.damaged()
        path = os.path.join(folder, "rank-1.pt.trace.json")
        with open(path, "rb") as f:
            data = gzip.compress(f.read())
        os.remove(path)
        with open(path + ".gz", "wb") as f:
            f.write(data[: len(data) * 2 // 3])
        result = self.assert_goes_on(folder, re.escape(path + ".gz") + r".*gzip.*truncated")
        self.assertEqual(result["input"]["missing_ranks"], [1])

    def test_missing_rank_file(self):
        folder = self.damaged()
        os.remove(os.path.join(folder, "rank-3.pt.trace.json"))
        result = self.assert_goes_on(folder, r"1 of 4 ranks have no usable trace")
        self.assertEqual(result["input"]["missing_ranks"], [3])

    def test_two_files_claim_one_rank(self):
        folder = self.damaged()
        shutil.copy(os.path.join(folder, "rank-0.pt.trace.json"),
                    os.path.join(folder, "rank-0-copy.pt.trace.json"))
        self.assert_goes_on(folder, r"rank-0.*claims rank 0.*rank-0.*ignored")

    def test_negative_duration(self):
        folder = self.damaged()
        path = os.path.join(folder, "rank-1.pt.trace.json")
        with open(path) as f:
            text = f.read()
        # The first kernel's duration becomes negative.
        text = re.sub(r'("cat": ?"kernel".*?"dur": ?)([0-9.]+)', r"\1-\2", text,
                      count=1, flags=re.S)
        with open(path, "w") as f:
            f.write(text)
        self.assert_goes_on(folder, re.escape(path) + r".*negative")

    def test_collective_one_rank_never_joins(self):
        folder = self.damaged()
        path = os.path.join(folder, "rank-3.pt.trace.json")
        with open(path) as f:
            lines = f.read().split("\n")
        # Events are one per line: drop rank 3's first NCCL kernel.
        drop = next(i for i, l in enumerate(lines)
                    if '"kernel"' in l and "ncclDevKernel_" in l)
        lines[drop - 1] = lines[drop - 1].rstrip(",") + ("," if lines[drop].endswith(",") else "")
        del lines[drop]
        with open(path, "w") as f:
            f.write("\n".join(lines))
        self.assert_goes_on(folder, r"rank-3.*no NCCL kernel",
                            r"rank 3.*instead of.*step dropped")


    def test_sampled_pair_is_not_diagnosed(self):
        """2 of 128 ranks, thinned events: numbers for the traced ranks,
        honest warnings, and no probable cause."""
        folder = os.path.join(DATA, "hta-kineto", "sampled-2of128")
        if not os.path.isdir(folder):
            self.skipTest(f"{folder} is absent (../shared/data not checked out)")
        code, err, result = self.analyze(folder)
        self.assertEqual(code, 0, err)
        self.assertEqual(result["input"]["world_size"], 128)
        self.assertEqual(len(result["input"]["missing_ranks"]), 126)
        self.assertIn("no diagnosis: only 2 of 128 ranks are traced", err)
        self.assertEqual(result["report"]["probable_cause"], "none")
        self.assertTrue(result["report"]["dominant_cause"].startswith("unknown"))
        self.assertEqual(result["report"]["findings"], [])
        self.assertIsNone(result["report"]["largest_straggler"])
        self.assertEqual(result["cost"]["gpus"], 2)  # not extrapolated to 128

    def test_every_hta_file_is_analysed(self):
        """Every real trace of ../shared/data/hta-kineto, alone: exit 0, a
        report, and (one rank each) no diagnosis but honest numbers."""
        root = os.path.join(DATA, "hta-kineto")
        if not os.path.isdir(root):
            self.skipTest(f"{root} is absent (../shared/data not checked out)")
        files = sorted(glob.glob(os.path.join(root, "**", "*.json.gz"), recursive=True))
        self.assertGreaterEqual(len(files), 9)
        for path in files:
            if "sampled-2of128" in path:
                continue  # a pair: test_sampled_pair_is_not_diagnosed
            with self.subTest(path=path):
                code, err, result = self.analyze(path)
                self.assertEqual(code, 0, err)
                self.assertGreaterEqual(result["job"]["steps"], 1)
                self.assertEqual(result["report"]["probable_cause"], "none")
                self.assertIn("no diagnosis: only one rank is traced", err)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
