#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The Python module (python/, issue 14): `strag.analyze` gives what
`strag analyze --json` gives, value for value, with the CLI's options as
keyword arguments; the published AR trace reproduces the OSDI'25 values from
Python; a counterfactual (fix / unfix) and the plan agree with the CLI; the
NumPy tables have their shapes, dtypes and the report's values; bad input
raises ValueError naming the file; the example script runs.

usage: strag_module_test.py STRAG_BINARY SHARED_DATA_DIR [EXAMPLE_SCRIPT]
with the module importable (PYTHONPATH=build/python). The AR cases skip
without SHARED_DATA_DIR/osdi25-whatif (exit 77 when nothing else failed);
the rest runs on examples/demo.
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

STRAG = sys.argv[1] if len(sys.argv) > 1 else "build/strag"
DATA = sys.argv[2] if len(sys.argv) > 2 else "../shared/data"
EXAMPLE = sys.argv[3] if len(sys.argv) > 3 else None
SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
DEMO = os.path.join(SOURCE, "examples", "demo", "trace-demo.csv.gz")
AR_DIR = os.path.join(DATA, "osdi25-whatif")
AR = os.path.join(AR_DIR, "trace-AR.csv.gz")

import numpy as np  # noqa: E402
import strag  # noqa: E402


def cli_json(*args):
    """`strag analyze ARGS --json -` parsed."""
    p = subprocess.run([STRAG, "analyze", *args, "--json", "-", "--quiet"],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def cli_error(*args):
    """The CLI's one-line error for ARGS, without the "strag: error: "."""
    p = subprocess.run([STRAG, "analyze", *args, "--quiet"],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 2, (p.returncode, p.stderr)
    line = p.stderr.strip().splitlines()[0]
    prefix = "strag: error: "
    return line[len(prefix):] if line.startswith(prefix) else line


def column(table, name):
    """A column as a NumPy array, from a DataFrame or a dict of arrays."""
    return np.asarray(table[name])


def by_step(doc, key):
    return [doc[key][str(s)] for s in sorted(int(k) for k in doc[key])]


class TablesMixin:
    def check_tables(self, r):
        steps = sorted(int(s) for s in r["step_time"]["replayed"])
        n = len(steps)
        self.assertEqual(column(r.steps, "step").tolist(), steps)
        self.assertEqual(column(r.steps, "step").dtype, np.int64)
        for name, key in [("t_observed_s", "observed"),
                          ("t_replayed_s", "replayed"),
                          ("t_ideal_s", "ideal")]:
            col = column(r.steps, name)
            self.assertEqual(col.dtype, np.float64)
            self.assertEqual(col.shape, (n,))
            # Exact: the JSON numbers read back to the same binary64.
            self.assertEqual(col.tolist(),
                             [r["step_time"][key][str(s)] for s in steps])
        self.assertEqual(column(r.steps, "slowdown").tolist(),
                         [r["slowdown_per_step"][str(s)] for s in steps])
        workers = r["worker_slowdown"]
        self.assertEqual(len(column(r.workers, "rank")), len(workers))
        self.assertEqual(column(r.workers, "rank").dtype, np.int32)
        self.assertEqual(column(r.workers, "rank").tolist(),
                         [w["rank"] for w in workers])
        self.assertEqual(column(r.workers, "score").tolist(),
                         [w["score"] for w in workers])
        stage = r.decompositions["stage"]
        self.assertEqual(stage["per_step"].shape, (len(stage["key"]), n))
        for k, v in zip(stage["key"], stage["slowdown"]):
            self.assertEqual(v, r["slowdown_by_stage"][k])
        ops = r.ops
        self.assertIsNotNone(ops)
        self.assertEqual(len(column(ops, "rank")), r["job"]["ops"])
        for name, dtype in [("rank", np.int32), ("dp", np.int32),
                            ("pp", np.int32), ("step", np.int64),
                            ("start_ns", np.int64), ("dur_ns", np.int64)]:
            self.assertEqual(column(ops, name).dtype, dtype, name)
        self.assertEqual(len(np.unique(column(ops, "rank"))),
                         r["job"]["traced_workers"])
        self.assertTrue((column(ops, "dur_ns") >= 0).all())
        if strag._pd is not None:
            self.assertEqual(
                set(ops["op_type"].cat.categories), set(strag.OP_TYPES))
        else:
            codes = column(ops, "op_type")
            self.assertEqual(codes.dtype, np.uint8)
            self.assertLess(int(codes.max()), len(strag.OP_TYPES))


class DemoTest(unittest.TestCase, TablesMixin):
    """On the example job of the repository (always present)."""

    def test_same_as_cli(self):
        r = strag.analyze(DEMO)
        self.assertEqual(dict(r), cli_json(DEMO))
        self.assertIsNone(r.plan)
        self.check_tables(r)

    def test_options_as_keywords(self):
        kw = dict(fix=["stage=1", "rank=0+3"], unfix="dp=0",
                  pool="optype-stage", gpus=64, hours=6,
                  usd_per_gpu_hour=3.5, threads=2)
        r = strag.analyze(DEMO, **kw)
        self.assertEqual(dict(r), cli_json(
            DEMO, "--fix", "stage=1", "--fix", "rank=0+3", "--unfix", "dp=0",
            "--pool", "optype-stage", "--gpus", "64", "--hours", "6",
            "--usd-per-gpu-hour", "3.5", "--threads", "2"))
        self.assertEqual([c["selector"] for c in r["counterfactuals"]],
                         ["stage=1", "rank=0+3", "dp=0"])

    def test_hosts_file(self):
        with tempfile.TemporaryDirectory() as tmp:
            hosts = os.path.join(tmp, "hosts.txt")
            with open(hosts, "w") as f:
                f.writelines("%d gpu-%d\n" % (r, r // 4) for r in range(32))
            r = strag.analyze(DEMO, hosts=hosts)
            self.assertEqual(dict(r), cli_json(DEMO, "--hosts", hosts))
            self.assertEqual(r["report"]["largest_straggler"]["host"], "gpu-2")

    def test_bad_file_raises_value_error_naming_it(self):
        with tempfile.TemporaryDirectory() as tmp:
            missing = os.path.join(tmp, "trace-missing.csv")
            with self.assertRaises(ValueError) as e:
                strag.analyze(missing)
            self.assertIn(missing, str(e.exception))
            self.assertEqual(str(e.exception), cli_error(missing))
            bad = os.path.join(tmp, "trace-bad.csv")
            with open(bad, "w") as f:
                f.write("rank,dp_rank\n1,2,3\n")
            with self.assertRaises(ValueError) as e:
                strag.analyze(bad)
            self.assertIn(bad, str(e.exception))
            self.assertEqual(str(e.exception), cli_error(bad))

    def test_bad_options_raise_value_error(self):
        with self.assertRaises(ValueError) as e:
            strag.analyze(DEMO, fix="nosuchkey=3")
        self.assertEqual(str(e.exception),
                         cli_error(DEMO, "--fix", "nosuchkey=3"))
        for kw in [dict(pool="nope"), dict(threads=0), dict(days=1, hours=2),
                   dict(gpus=0), dict(usd_per_gpu_hour=-1),
                   dict(layers="8"), dict(dp=0),
                   dict(max_line_bytes=10), dict(days=float("nan"))]:
            with self.assertRaises(ValueError, msg=str(kw)):
                strag.analyze(DEMO, **kw)
        with self.assertRaises(ValueError):
            strag.analyze([DEMO, DEMO])
        with self.assertRaises(TypeError):
            strag.analyze(DEMO, nosuchoption=1)

    def test_plan_same_as_cli(self):
        p = subprocess.run([STRAG, "plan", DEMO, "--json", "-", "--quiet"],
                           capture_output=True, text=True, timeout=300)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(strag.plan(DEMO), json.loads(p.stdout))
        r = strag.analyze(DEMO, plan=True, restart_min=5)
        self.assertEqual(dict(r), cli_json(DEMO, "--plan", "--restart-min",
                                           "5"))
        self.assertIn("plan", r)

    @unittest.skipUnless(EXAMPLE, "no example script given")
    def test_example_script_runs(self):
        p = subprocess.run([sys.executable, EXAMPLE, DEMO],
                           capture_output=True, text=True, timeout=300)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("slowdown", p.stdout)


@unittest.skipUnless(os.path.exists(AR), f"reference data not found: {AR}")
class PublishedArTest(unittest.TestCase, TablesMixin):
    """The published trace AR (OSDI'25 artifact, ../shared/data)."""

    @classmethod
    def setUpClass(cls):
        cls.r = strag.analyze(AR)
        with open(os.path.join(AR_DIR, "result-AR.json")) as f:
            cls.published = json.load(f)

    def close(self, actual, expected, what):
        # As tests/golden/osdi25_golden_test.cc: the method is reproduced to
        # rounding noise (relative 1e-12, absolute 1e-9 near zero).
        err = abs(actual - expected)
        self.assertTrue(err <= 1e-12 * abs(expected) or err <= 1e-9,
                        f"{what}: {actual} != {expected}")

    def test_same_as_cli(self):
        self.assertEqual(dict(self.r), cli_json(AR))
        self.check_tables(self.r)

    def test_published_values(self):
        r, pub = self.r, self.published
        self.close(r["slowdown"], pub["blocking_slowdown"], "S")
        self.close(r["launch_slowdown"], pub["launch_slowdown"],
                   "launch slowdown")
        for ours, theirs in [("observed", "step_t_base"),
                             ("replayed", "step_t_nodelay"),
                             ("ideal", "step_t_noblk")]:
            self.assertEqual(set(r["step_time"][ours]), set(pub[theirs]))
            for step, v in pub[theirs].items():
                self.close(r["step_time"][ours][step], v, f"{ours}[{step}]")
        # The tables carry the same numbers.
        steps = column(self.r.steps, "step")
        t = column(self.r.steps, "t_replayed_s")
        for s, v in zip(steps.tolist(), t.tolist()):
            self.close(v, pub["step_t_nodelay"][str(s)], f"T[{s}]")
        for key in ["optype", "dp_rank", "stage"]:
            expected = pub["blocking_decompose_by_" + key]
            got = r["slowdown_by_" + key]
            self.assertEqual(set(got), set(expected), key)
            for k, v in expected.items():
                self.close(got[k], v, f"S_{key}[{k}]")
        for name, ours in [("mw", "fix_worst_workers"),
                           ("ms", "fix_last_stage")]:
            with open(os.path.join(AR_DIR, f"{name}-AR.json")) as f:
                m = json.load(f)
            cf = r[ours]
            for k_pub, k_ours in [("trem", "t_rem"), ("tadd", "t_add"),
                                  ("tori", "t_ori"), ("tideal", "t_ideal"),
                                  ("rem", "rem"), ("add", "add")]:
                self.close(cf[k_ours], m[k_pub], f"{name}.{k_pub}")

    def test_counterfactual(self):
        r = strag.analyze(AR, fix=["stage=3"], unfix=["dp=2"])
        cli = cli_json(AR, "--fix", "stage=3", "--unfix", "dp=2")
        self.assertEqual(dict(r), cli)
        fix, unfix = r["counterfactuals"]
        self.assertEqual((fix["selector"], fix["direction"]), ("stage=3", "fix"))
        self.assertEqual((unfix["selector"], unfix["direction"]),
                         ("dp=2", "unfix"))
        # Fixing only stage 3 recovers M_S of the loss: the same selection
        # as fix_last_stage (AR has 4 stages).
        self.close(fix["rem"], self.r["fix_last_stage"]["rem"], "rem")
        # The analysis itself does not change with the selectors.
        self.assertEqual(r["slowdown"], self.r["slowdown"])


if __name__ == "__main__":
    program = unittest.main(argv=[sys.argv[0]], exit=False, verbosity=2)
    result = program.result
    if not result.wasSuccessful():
        sys.exit(1)
    if not os.path.exists(AR):
        print(f"SKIP: the AR cases need the reference data ({AR})")
        sys.exit(77)
    sys.exit(0)
