#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Command-line tests of `strag analyze`: the example job, the JSON output,
and every kind of bad input (one clear error naming the file and the place,
exit code 2, no crash).

usage: cli_test.py STRAG_BINARY SOURCE_DIR [SHARED_DATA_DIR]
Set STRAG_UPDATE_GOLDEN=1 (or run `make update-golden`) to rewrite the golden
outputs after a deliberate change.
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
DATA = sys.argv[3] if len(sys.argv) > 3 else os.path.join(SOURCE, "..", "shared", "data")
EXAMPLE = os.path.join(SOURCE, "examples", "demo", "trace-demo.csv.gz")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "perfetto"))
import check_perfetto  # noqa: E402  (Perfetto's import rules)


def run(*args):
    return subprocess.run([STRAG, *args], capture_output=True, text=True,
                          timeout=120)


def assert_perfetto_ok(test, path):
    """The export passes Perfetto's import rules (check_perfetto.py)."""
    rep = check_perfetto.check_file(path)
    test.assertTrue(rep.ok(), check_perfetto.format_report(path, rep))
    test.assertGreater(rep.stats["flows"], 0)


ADDRESS_SPACE = 4 << 30  # SimulateLimitsTest: a budget of 2.1 GB


def limit_address_space():
    import resource
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


def address_space_limit_works():
    """False for a sanitized (ASan) binary: its shadow memory needs more
    address space than any limit that means something."""
    if not hasattr(address_space_limit_works, "result"):
        probe = subprocess.run([STRAG, "help"], capture_output=True, text=True,
                               timeout=60, preexec_fn=limit_address_space)
        address_space_limit_works.result = "Sanitizer" not in probe.stderr
    return address_space_limit_works.result


def run_limited(*args):
    """`run` under ADDRESS_SPACE where the binary allows it."""
    limit = limit_address_space if address_space_limit_works() else None
    return subprocess.run([STRAG, *args], capture_output=True, text=True,
                          timeout=120, preexec_fn=limit)


def example_lines():
    with gzip.open(EXAMPLE, "rt") as f:
        return f.read().splitlines()


class CliTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, name, lines):
        path = os.path.join(self.tmp.name, name)
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        return path

    def assert_bad_input(self, path, *fragments):
        """Exit code 2, one error line on stderr, naming `fragments`."""
        result = run("analyze", path)
        self.assertEqual(result.returncode, 2, result.stderr)
        errors = [l for l in result.stderr.splitlines() if l.startswith("strag: error:")]
        self.assertEqual(len(errors), 1, result.stderr)
        for fragment in (path, *fragments):
            self.assertIn(fragment, errors[0])
        self.assertEqual(result.stdout, "")

    def mutate(self, row_filter, edit):
        """Example lines with `edit(fields)` applied to rows matching."""
        lines = example_lines()
        header = lines[0].split(",")
        out = [lines[0]]
        for line in lines[1:]:
            fields = dict(zip(header, line.split(",")))
            if row_filter(fields):
                fields = edit(fields)
                if fields is None:
                    continue
            out.append(",".join(fields[h] for h in header))
        return out

    # The example job: the slow GPU (global rank 9) is the worst worker.
    def test_example_analysis(self):
        out_json = os.path.join(self.tmp.name, "a.json")
        result = run("analyze", EXAMPLE, "--json", out_json, "--fix", "rank=9",
                     "--unfix", "stage=3")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("slowdown S", result.stdout)
        with open(out_json) as f:
            doc = json.load(f)
        self.assertEqual(doc["schema"], "strag.analysis/1")
        self.assertEqual(doc["job"]["tp"], 2)  # from meta-demo.yaml
        self.assertEqual(doc["worker_slowdown"][0]["rank"], 9)
        self.assertEqual(doc["fix_worst_workers"]["ranks"], [9])
        self.assertGreater(doc["fix_worst_workers"]["rem"], 0.5)
        self.assertEqual(len(doc["counterfactuals"]), 2)
        self.assertEqual(doc["counterfactuals"][1]["direction"], "unfix")
        self.assertEqual(set(doc["step_time"]["observed"]),
                         set(doc["slowdown_per_step"]))

    # Golden diff test of the terminal summary of the example job. Set
    # STRAG_UPDATE_GOLDEN=1 to rewrite the expected file after a deliberate
    # change of the output.
    def test_example_summary_golden(self):
        golden = os.path.join(SOURCE, "tests", "golden", "demo-summary.txt")
        result = subprocess.run(
            [os.path.abspath(STRAG), "analyze", "examples/demo/trace-demo.csv.gz",
             "--fix", "rank=9", "--unfix", "optype=forward-pp-comm"],
            capture_output=True, text=True, timeout=120, cwd=SOURCE)
        self.assertEqual(result.returncode, 0, result.stderr)
        if os.environ.get("STRAG_UPDATE_GOLDEN"):
            with open(golden, "w") as f:
                f.write(result.stdout)
        with open(golden) as f:
            self.assertEqual(result.stdout, f.read())

    # Every number of the example job's analysis JSON, as a golden that runs
    # without the reference data (STRAG_UPDATE_GOLDEN=1 rewrites it).
    def test_example_json_golden(self):
        golden = os.path.join(SOURCE, "tests", "golden", "demo-analysis.json")
        out = os.path.join(self.tmp.name, "demo.json")
        result = subprocess.run(
            [os.path.abspath(STRAG), "analyze", "examples/demo/trace-demo.csv.gz",
             "--fix", "rank=9", "--unfix", "optype=forward-pp-comm",
             "--quiet", "--json", out],
            capture_output=True, text=True, timeout=120, cwd=SOURCE)
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(out) as f:
            text = f.read()
        if os.environ.get("STRAG_UPDATE_GOLDEN"):
            with open(golden, "w") as f:
                f.write(text)
        with open(golden) as f:
            self.assertEqual(text, f.read())

    # The Perfetto export: one process per worker, microsecond times, and
    # every flow start has its end.
    def test_perfetto(self):
        out = os.path.join(self.tmp.name, "t.json")
        result = run("analyze", EXAMPLE, "--quiet", "--perfetto", out,
                     "--perfetto-steps", "110,150")
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(out) as f:
            events = json.load(f)["traceEvents"]
        names = [e for e in events if e.get("ph") == "M" and e.get("name") == "process_name"]
        self.assertEqual(len(names), 16)
        starts = sorted(e["id"] for e in events if e.get("ph") == "s")
        ends = sorted(e["id"] for e in events if e.get("ph") == "f")
        self.assertEqual(starts, ends)
        self.assertGreater(len(starts), 0)
        assert_perfetto_ok(self, out)
        with open(out, "rb") as f:
            before = f.read()
        self.assertEqual(run("analyze", EXAMPLE, "--quiet", "--perfetto", out,
                             "--perfetto-steps", "7").returncode, 2)
        with open(out, "rb") as f:
            self.assertEqual(f.read(), before)  # the old export untouched

    # The same input gives byte-identical output, whatever the thread count.
    def test_deterministic(self):
        a, b = (os.path.join(self.tmp.name, n) for n in ("a.json", "b.json"))
        self.assertEqual(run("analyze", EXAMPLE, "--json", a, "--quiet",
                             "--threads", "1").returncode, 0)
        self.assertEqual(run("analyze", EXAMPLE, "--json", b, "--quiet",
                             "--threads", "3").returncode, 0)
        with open(a, "rb") as fa, open(b, "rb") as fb:
            self.assertEqual(fa.read(), fb.read())

    def test_missing_column(self):
        lines = example_lines()
        header = lines[0].split(",")
        drop = header.index("seq_id")
        rows = [",".join(f for i, f in enumerate(l.split(",")) if i != drop)
                for l in lines]
        self.assert_bad_input(self.write("t.csv", rows), "seq_id")

    def with_field(self, line_number, column, value):
        """The example as a file with one field (1-based line) replaced."""
        lines = example_lines()
        fields = lines[line_number - 1].split(",")
        fields[lines[0].split(",").index(column)] = value
        lines[line_number - 1] = ",".join(fields)
        return self.write("t.csv", lines)

    def test_non_numeric_field(self):
        self.assert_bad_input(self.with_field(5, "duration", "abc"), "line 5",
                              "duration")

    def test_negative_duration(self):
        self.assert_bad_input(self.with_field(10, "duration", "-0.5"), "line 10",
                              "duration")

    def test_unknown_op_type(self):
        self.assert_bad_input(self.with_field(3, "optype", "forward-compote"),
                              "line 3", "optype", "forward-compote")

    # A forward send whose receive is missing on the next stage (stage 1 of
    # DP rank 0 is global rank 4).
    def test_missing_peer(self):
        rows = self.mutate(
            lambda f: f["step"] == "100" and f["dp_rank"] == "0" and
            f["stage"] == "1" and f["optype"] == "forward-recv" and f["seq_id"] == "7",
            lambda f: None)
        self.assert_bad_input(self.write("t.csv", rows), "stage 1",
                              "7 forward-recv ops for 8 forward-compute ops",
                              "step 100", "1: 4")

    # Stage 0 runs its backward pass before its forward pass: the p2p pairs
    # close a cycle.
    def test_dependency_cycle(self):
        def earlier(f):
            f["start_ts"] = repr(float(f["start_ts"]) - 1.0)
            return f
        rows = self.mutate(
            lambda f: f["step"] == "100" and f["dp_rank"] == "0" and
            f["stage"] == "0" and f["optype"] in ("backward-compute", "backward-recv"),
            earlier)
        self.assert_bad_input(self.write("t.csv", rows), "cycle")

    def test_truncated_gzip(self):
        with open(EXAMPLE, "rb") as f:
            data = f.read()
        path = os.path.join(self.tmp.name, "t.csv.gz")
        with open(path, "wb") as f:
            f.write(data[: len(data) // 2])
        self.assert_bad_input(path, "truncated")

    def test_missing_file(self):
        self.assert_bad_input(os.path.join(self.tmp.name, "nope.csv"))

    def test_bad_selector(self):
        result = run("analyze", EXAMPLE, "--fix", "rank=999")
        self.assertEqual(result.returncode, 2)
        self.assertIn("rank=999", result.stderr)

    def test_bad_usage(self):
        self.assertEqual(run("analyze").returncode, 2)
        self.assertEqual(run("analyze", EXAMPLE, "--frobnicate").returncode, 2)
        self.assertEqual(run("no-such-command").returncode, 2)
        self.assertEqual(run("analyze", "--help").returncode, 0)


class SimulateTest(unittest.TestCase):
    SPEC = """
job: {dp: 4, pp: 4, tp: 2, microbatches: 8, steps: 6, seed: 7}
compute: {forward_ms: 10, backward_ms: 20, noise: {dist: lognormal, sigma: 0.02}}
comm: {p2p_ms: 0.2, dp_allgather_ms: 2, dp_reducescatter_ms: 3}
stragglers:
  - {kind: slow_worker, rank: 19, factor: 1.5}
"""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.spec = os.path.join(self.tmp.name, "job.yaml")
        with open(self.spec, "w") as f:
            f.write(self.SPEC)

    def tearDown(self):
        self.tmp.cleanup()

    # The written trace, meta and truth are read back by strag analyze, which
    # names the injected worker (rank 19 = dp 1, stage 2, tp 1: worker 18).
    def test_outputs_round_trip_through_analyze(self):
        out = os.path.join(self.tmp.name, "out")
        result = run("simulate", self.spec, "--out", out)
        self.assertEqual(result.returncode, 0, result.stderr)
        for name in ("ops.csv.gz", "meta.yaml", "truth.json"):
            self.assertTrue(os.path.exists(os.path.join(out, name)), name)
        with open(os.path.join(out, "truth.json")) as f:
            truth = json.load(f)
        self.assertEqual(truth["schema"], "strag.truth/1")
        s = truth["stragglers"][0]
        self.assertEqual((s["rank"], s["dp"], s["pp"], s["tp"], s["worker_rank"]),
                         (19, 1, 2, 1, 18))
        self.assertGreater(s["slowdown"], 1.05)
        analysis = os.path.join(self.tmp.name, "a.json")
        result = run("analyze", os.path.join(out, "ops.csv.gz"), "--json", analysis)
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(analysis) as f:
            doc = json.load(f)
        self.assertEqual(doc["worker_slowdown"][0]["rank"], 18)
        self.assertGreater(doc["fix_worst_workers"]["rem"], 0.5)
        self.assertLess(doc["replay_self_test_max_error"], 1e-6)
        self.assertEqual(doc["job"]["tp"], 2)

    # One builder behind both commands: `simulate --analyze` of what it
    # writes and `analyze` of the written files give the same JSON and HTML
    # (the HTML's title names the input: the only difference), with the
    # same options (here a pool, a fix selector, a price and Perfetto steps).
    def test_simulate_and_analyze_build_the_same_report(self):
        out = os.path.join(self.tmp.name, "out")
        options = ["--pool", "optype-stage", "--fix", "stage=2",
                   "--usd-per-gpu-hour", "3.5", "--hours", "12",
                   "--perfetto-steps", "2,4"]
        def files(tag):
            return [os.path.join(self.tmp.name, tag + ext)
                    for ext in (".json", ".html", ".perfetto.json")]
        sim_json, sim_html, sim_pf = files("sim")
        r = run("simulate", self.spec, "--out", out, "--analyze", "--quiet",
                "--json", sim_json, "--html", sim_html, "--perfetto", sim_pf,
                *options)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.count("strag analyze:"), 0)  # --quiet
        ana_json, ana_html, ana_pf = files("ana")
        trace = os.path.join(out, "ops.csv.gz")
        r = run("analyze", trace, "--quiet", "--json", ana_json, "--html",
                ana_html, "--perfetto", ana_pf, *options)
        self.assertEqual(r.returncode, 0, r.stderr)
        def read(path):
            with open(path, encoding="utf-8") as f:
                return f.read()
        self.assertEqual(read(sim_json), read(ana_json))
        self.assertIn('"counterfactuals": [', read(sim_json))
        title = "simulated job"
        self.assertIn(title, read(sim_html))
        self.assertEqual(read(sim_html).replace(title, "TITLE"),
                         read(ana_html).replace(trace, "TITLE"))
        self.assertEqual(read(sim_pf).replace(title, "TITLE"),
                         read(ana_pf).replace(trace, "TITLE"))
        assert_perfetto_ok(self, sim_pf)

    # Same spec and seed: byte-identical files; another seed: other noise.
    def test_deterministic(self):
        a, b, c = (os.path.join(self.tmp.name, n) for n in "abc")
        for out, seed in ((a, "7"), (b, "7"), (c, "8")):
            self.assertEqual(run("simulate", self.spec, "--out", out, "--seed", seed)
                             .returncode, 0)
        def read(d):
            with gzip.open(os.path.join(d, "ops.csv.gz"), "rb") as f:
                return f.read()
        self.assertEqual(read(a), read(b))
        self.assertNotEqual(read(a), read(c))

    # A bad spec: one error naming the file, the line, the key and the value.
    def test_bad_spec(self):
        bad = os.path.join(self.tmp.name, "bad.yaml")
        with open(bad, "w") as f:
            f.write(self.SPEC.replace("factor: 1.5", "factor: 0.8"))
        result = run("simulate", bad, "--analyze")
        self.assertEqual(result.returncode, 2)
        self.assertIn("bad.yaml", result.stderr)
        self.assertIn("stragglers[0].factor", result.stderr)
        self.assertIn("0.8", result.stderr)
        with open(bad, "w") as f:
            f.write(self.SPEC.replace("rank: 19", "rank: 64"))
        result = run("simulate", bad, "--analyze")
        self.assertEqual(result.returncode, 2)
        self.assertIn("64", result.stderr)
        self.assertEqual(run("simulate", "--preset", "nope", "--analyze").returncode, 2)

    # The motivating example: 4,096 GPUs, 100 ms steps, one worker at 120 ms:
    # the fast workers are busy 83.3% of the time, 81.9 GPU-seconds are lost
    # per step, and the slow worker (global rank 1842) is the worst.
    def test_article_dp4096(self):
        out = os.path.join(self.tmp.name, "a.json")
        result = run("simulate", "--preset", "article-dp4096", "--analyze",
                     "--json", out)
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(out) as f:
            doc = json.load(f)
        self.assertAlmostEqual(doc["cost"]["utilization"], 0.8333, places=3)
        self.assertAlmostEqual(doc["cost"]["lost_gpu_seconds_per_step"], 81.9, delta=0.05)
        self.assertEqual(doc["worker_slowdown"][0]["rank"], 1842)
        self.assertIn("83.3%", result.stdout)

    # --steps-window writes only the chosen steps.
    def test_steps_window(self):
        out = os.path.join(self.tmp.name, "w")
        self.assertEqual(run("simulate", self.spec, "--out", out,
                             "--steps-window", "2:3").returncode, 0)
        with gzip.open(os.path.join(out, "ops.csv.gz"), "rt") as f:
            lines = f.read().splitlines()
        step = lines[0].split(",").index("step")
        self.assertEqual({l.split(",")[step] for l in lines[1:]}, {"2", "3"})


class SimulateLimitsTest(unittest.TestCase):
    """Issue 11: simulate refuses what it cannot hold (before allocating),
    durations past a trace's int64 nanoseconds, and flags outside their
    range; each with exit 2 and one error line that names the limit. Run
    under a 4 GiB address-space limit, so that the memory budget (half of
    the smaller of that and the physical memory) is the same everywhere
    (a sanitized binary runs without it: what depends on the budget is then
    not checked)."""

    SPEC = SimulateTest.SPEC

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def spec(self, text, name="job.yaml"):
        path = os.path.join(self.tmp.name, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def refused(self, *args, fragments=()):
        result = run_limited(*args)
        self.assertEqual(result.returncode, 2, result.stderr)
        errors = [l for l in result.stderr.splitlines() if l.startswith("strag: error:")]
        self.assertEqual(len(errors), 1, result.stderr)
        self.assertEqual(result.stderr.strip(), errors[0])
        for fragment in fragments:
            self.assertIn(fragment, errors[0])
        return errors[0]

    # Each too large: the estimate, what fits, --steps-window, --max-ops.
    def test_huge_jobs_are_refused_by_their_estimate(self):
        limited = address_space_limit_works()
        budget = "more than 2.1 GB (half of the 4.3 GB address-space limit (ulimit -v))"
        for yaml, extra in (
                # --out streams (one step at a time here): the step itself
                # is too large.
                ("job: {dp: 10000000}\n",
                 "90,000,000 ops (9 per step of each of 10,000,000 DP replicas, 1 step)"
                 " need about 5.7 GB"),
                ("job: {steps: 1e9}\n", "7,000,000,000 ops (7 per step of each of 1 "
                 "DP replica, 1,000,000,000 steps)"),
                # Streamed, 64 bytes per step remain (step times, truth.json).
                ("job: {steps: 1000000000}\n", "simulate at most 28,049,285 steps (job.steps)"),
                ("job: {microbatches: 1e9}\n", "2,000,000,005 ops"),
                ("sequences: {per_microbatch: 1e9}\n",
                 "1,000,000,000 sequence lengths and their text), " + budget +
                 "; even one step needs about 8.1 GB: use fewer microbatches "
                 "(job.microbatches), sequences per microbatch "
                 "(sequences.per_microbatch), stages or DP replicas"),
                # 4,194,304 GPUs x 64 microbatches: one step is too large
                # to stream.
                ("job: {dp: 65536, pp: 8, tp: 8, microbatches: 64, steps: 100}\n",
                 "18,782,617,600 ops (2,866 per step of each of 65,536 DP "
                 "replicas, 100 steps) need about 10.8 GB (10.5 GB of it the "
                 "simulation)"),
                # Simulated whole it fits, its whole table for the Kineto
                # writer does not (and analysed in process it fits: --out
                # only; the CSV alone streams, see simulate_stream_test.py).
                ("job: {dp: 64, pp: 8, microbatches: 16, steps: 600}\n",
                 "or keep all 600 steps and write at most"),
        ):
            # Without the address-space limit (under ASan) the budget is
            # the machine's memory: rows refused by the 2 GB budget alone
            # (what one step needs, what fits) would run.
            if not limited and (budget in extra or "at most" in extra
                                or "need about" in extra):
                continue
            path = self.spec(yaml, "huge.yaml")
            modes = [["--out", os.path.join(self.tmp.name, "o")]]
            if "steps: 600" in yaml:
                modes[0] += ["--format", "csv,kineto"]
            else:
                modes.append(["--analyze"])
            for mode in modes:
                with self.subTest(yaml=yaml, mode=mode[0]):
                    error = self.refused("simulate", path, *mode, fragments=(
                        path + ": the job is too large for this machine",
                        "need about", budget if limited else "",
                        ", or set the limit with --max-ops N"))
                    if mode[0] == "--out":
                        self.assertIn(extra, error)
        self.assertFalse(os.path.exists(os.path.join(self.tmp.name, "o")))

    # --max-ops replaces the memory check by a count of simulated ops.
    def test_max_ops(self):
        path = self.spec(self.SPEC)
        out = os.path.join(self.tmp.name, "o")
        # 4 replicas x 6 steps x 186 ops per step of a replica = 4,464 ops.
        self.refused("simulate", path, "--out", out, "--max-ops", "4463", fragments=(
            path + ": the job has 4,464 ops (186 per step of each of 4 DP "
            "replicas, 6 steps), above --max-ops 4,463; simulate at most 5 steps",))
        self.assertEqual(run("simulate", path, "--out", out, "--max-ops", "4464")
                         .returncode, 0)
        self.refused("simulate", path, "--out", out, "--max-ops", "0",
                     fragments=("flag --max-ops: 0 must be at least 1",))
        self.refused("simulate", path, "--out", out, "--max-ops",
                     "99999999999999999999", fragments=(
                         "flag --max-ops: 99999999999999999999 must be at most "
                         "9223372036854775807",))
        # Far beyond memory, allowed by --max-ops, still refused by the
        # replay's 32-bit indexes without allocating.
        huge = self.spec("job: {dp: 4, steps: 2147483647}\n", "wide.yaml")
        self.refused("simulate", huge, "--analyze", "--max-ops",
                     "9223372036854775807", fragments=(
                         "wide: the job is too large to simulate",))

    # Durations whose nanoseconds overflow int64 (UBSan in simulator.cc):
    # refused at validation, naming the line, the key and the limit.
    def test_huge_durations_are_refused(self):
        for yaml, fragment in (
                ("compute: {forward_ms: 1e15}\n",
                 "big.yaml: line 1: compute.forward_ms: 1e15 must be at most 1e9 ms"),
                ("job: {dp: 2}\nstragglers:\n  - {kind: slow_worker, rank: 0, factor: 1e300}\n",
                 "big.yaml: line 3: stragglers[0].factor: 1e300 must be at most 1e6"),
                ("comm: {dp_allgather_ms: 1e300}\n",
                 "comm.dp_allgather_ms: 1e300 must be at most 1e9 ms"),
                ("compute: {noise: {dist: normal, sd_ms: 1e12}}\n",
                 "compute.noise.sd_ms: 1e12 must be at most 1e9 ms"),
                ("job: {dp: 2}\nstragglers:\n  - {kind: dataloader_stall, rank: 0, "
                 "stall_ms: 1e20}\n", "stragglers[0].stall_ms: 1e20 must be at most"),
                # Valid one by one, too long together: a step of 2e6 s.
                ("compute: {forward_ms: 1e9}\njob: {dp: 2}\nstragglers:\n"
                 "  - {kind: slow_worker, rank: 1, factor: 2}\n",
                 "big: step 0, dp 1, stage 0: a drawn forward-compute of 2e+06 s"),
                ("compute: {forward_ms: 1e9, backward_ms: 1e9}\njob: {steps: 600}\n",
                 "big: the simulated trace would last 1.2e+09 s (600 steps), beyond "
                 "the limit of 1e9 s"),
        ):
            with self.subTest(yaml=yaml):
                self.refused("simulate", self.spec(yaml, "big.yaml"), "--out",
                             os.path.join(self.tmp.name, "o"), fragments=(fragment,))

    # At the limits: a trace strag's own analyze reads.
    def test_durations_at_the_limit_give_a_readable_trace(self):
        path = self.spec("job: {dp: 2, steps: 3}\ncompute: {forward_ms: 1e9, "
                         "backward_ms: 1e9}\n")
        out = os.path.join(self.tmp.name, "o")
        result = run("simulate", path, "--out", out)
        self.assertEqual(result.returncode, 0, result.stderr)
        analysis = os.path.join(self.tmp.name, "a.json")
        result = run("analyze", os.path.join(out, "ops.csv.gz"), "--json", analysis,
                     "--quiet")
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(analysis) as f:
            doc = json.load(f)
        self.assertAlmostEqual(doc["slowdown"], 1.0, places=6)

    def test_flags_outside_their_range(self):
        path = self.spec(self.SPEC)
        out = os.path.join(self.tmp.name, "o")
        self.refused("simulate", path, "--out", out, "--steps-window", "6:9", fragments=(
            "flag --steps-window: 6:9 is outside the job's steps 0..5 (job.steps 6)",))
        self.refused("simulate", path, "--out", out, "--steps-window", "2:6", fragments=(
            "flag --steps-window: 2:6 is outside the job's steps 0..5",))
        self.refused("simulate", path, "--analyze", "--steps-window", "1:2", fragments=(
            "flag --steps-window needs --out DIR",))
        self.refused("simulate", path, "--out", out, "--seed", "-1", fragments=(
            "flag --seed: -1 is outside 0 .. 18446744073709551615",))
        self.refused("simulate", path, "--out", out, "--seed", "18446744073709551616",
                     fragments=("is outside 0 .. 18446744073709551615",))
        self.assertFalse(os.path.exists(out))
        self.assertEqual(run("simulate", path, "--out", out, "--seed",
                             "18446744073709551615").returncode, 0)
        self.refused("simulate", path, "--preset", "ar", "--analyze", fragments=(
            "simulate takes a SPEC file or --preset ar, not both (got " + path + ")",))
        self.refused("simulate", path, "--out", out, "--format", "kineto",
                     "--kernels-per-op", "1001", fragments=("1 .. 1000",))
        trace = os.path.join(out, "ops.csv.gz")
        self.refused("analyze", trace, "--tp", "16777217", fragments=(
            "flag --tp: 16777217 must be at most 16777216",))
        self.refused("analyze", trace, "--pp", "0", fragments=(
            "flag --pp: 0 must be at least 1",))
        self.refused("analyze", trace, "--dp", "99999999999999999999", fragments=(
            "flag --dp: 99999999999999999999 must be at most 16777216",))
        self.refused("analyze", trace, "--dp", "2.5", fragments=(
            "flag --dp: \"2.5\" is not an integer",))

    def test_usage_lists_max_ops(self):
        result = run("simulate", "--help")
        self.assertEqual(result.returncode, 0)
        self.assertIn("--max-ops N", result.stdout)


class Osdi25SummaryTest(unittest.TestCase):
    """Golden terminal reports of the three published traces."""

    def check(self, name):
        folder = os.path.join(DATA, "osdi25-whatif")
        if not os.path.exists(os.path.join(folder, f"trace-{name}.csv.gz")):
            self.skipTest(f"reference data not found at {folder}")
        result = subprocess.run([os.path.abspath(STRAG), "analyze", f"trace-{name}.csv.gz"],
                                capture_output=True, text=True, timeout=120, cwd=folder)
        self.assertEqual(result.returncode, 0, result.stderr)
        golden = os.path.join(SOURCE, "tests", "golden", f"osdi25-{name}-summary.txt")
        if os.environ.get("STRAG_UPDATE_GOLDEN"):
            with open(golden, "w") as f:
                f.write(result.stdout)
        with open(golden) as f:
            self.assertEqual(result.stdout, f.read())

    def test_ar(self):
        self.check("AR")

    def test_st(self):
        self.check("ST")

    def test_se(self):
        self.check("SE")


class CalculatorTest(unittest.TestCase):
    # E[max] of 1024 normal workers N(100 ms, 5 ms) = 116.24 ms.
    def test_tail(self):
        result = run("tail", "1024", "normal:100ms,5ms", "--json")
        self.assertEqual(result.returncode, 0, result.stderr)
        doc = json.loads(result.stdout)
        self.assertEqual(doc["schema"], "strag.tail/1")
        flat = json.dumps(doc)
        self.assertIn("0.11624", flat)
        self.assertEqual(run("tail", "1024", "normal:100").returncode, 2)

    # The motivating example: 10% of 983,040 GPU-hours at $2 = $196,608.
    def test_cost(self):
        result = run("cost", "--slowdown", "1.1111111111111112", "--gpus", "4096",
                     "--days", "10")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("196,608", result.stdout)
        self.assertIn("983,040", result.stdout)
        self.assertEqual(run("cost", "--slowdown", "0.5", "--gpus", "8",
                             "--days", "1").returncode, 2)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], "-v"])
