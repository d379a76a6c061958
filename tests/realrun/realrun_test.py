#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Real-run tests (issue 5): real PyTorch DDP jobs, one straggler each.

Each job runs ddp_job.py (4 processes on the CPU, gloo, torch.profiler; one
trace per rank in a folder), then `strag analyze FOLDER --json OUT` must name
the injected straggler's rank and a fitting cause, and call the balanced job
healthy. The straggler is rank 2, not 0, so that a default cannot pass. A
real job on a shared 2-core machine is noisy: a case whose verdict is wrong
runs once more (a fresh job) and must be right then (the first verdict is
printed); docs/accuracy.md measures the rate over many runs.

usage: realrun_test.py STRAG_BINARY [--keep DIR] [--only JOB[,JOB...]]
                       [--python PY] [unittest options]

  --keep DIR   keep the traces and the JSON under DIR/<job>/ (else a
               temporary folder, removed at the end)
  --only JOBS  run only these jobs (balanced, larger-batch,
               sleep-before-forward, few-pauses)
  --python PY  the interpreter with torch (else $STRAG_TORCH_PYTHON, then
               /usr/bin/python3, then this one, then python3 on PATH)
  --jobs-only  run the jobs and check their traces, not strag (to check
               that the jobs inject their straggler reliably on a machine)

Exits 77 (CTest SKIP_RETURN_CODE) when no interpreter can import torch with
gloo (scripts/install-deps.sh installs Debian's python3-torch).

To adapt the expectations, edit the check_* function of the job: each states
the straggler's rank and the causes (src/diagnose CauseName) accepted.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

import trace_facts
from torch_env import find_torch_python, run_group

HERE = os.path.dirname(os.path.abspath(__file__))
JOB_SCRIPT = os.path.join(HERE, "ddp_job.py")
SKIP = 77
WORLD = 4
STEPS = 10
STRAGGLER = 2  # not rank 0: a default must not pass by luck
JOB_TIMEOUT_S = 180
STRAG_TIMEOUT_S = 120

# Filled in by main().
STRAG = "build/strag"
PYTHON = None
KEEP = None
JOBS_ONLY = False
TIMINGS = []  # (job, job seconds, strag seconds)

# --- The expectations: one function per job. ---------------------------------
# Each first checks that the traces show the injected straggler (computed
# here from the JSON, trace_facts.py), then what strag says about them.

def check_balanced(test, facts, doc):
    """No straggler: the diagnosis must call the job healthy."""
    for rank, f in facts.items():
        test.assertLess(max(f.start_gap + f.pause), 0.1,
                        f"rank {rank} paused in the balanced job (a very "
                        f"loaded machine?)\n" + trace_facts.summary(facts))
    test.expect_healthy(doc)


def check_larger_batch(test, facts, doc):
    """Rank 2 computes 3x the batch every step: a persistent slow worker."""
    mean = {r: sum(f.compute) / len(f.compute) for r, f in facts.items()}
    others = max(m for r, m in mean.items() if r != STRAGGLER)
    test.assertGreater(mean[STRAGGLER], 1.3 * others,
                       "the larger batch does not show\n" +
                       trace_facts.summary(facts))
    test.expect_straggler(doc, rank=STRAGGLER,
                          causes={"faulty_worker", "compute_imbalance"},
                          worst_worker=True)


def check_sleep_before_forward(test, facts, doc):
    """Rank 2 sleeps at the start of every step (half a step, at least
    40 ms): a host-side delay, every step."""
    late = sum(g >= 0.03 for g in facts[STRAGGLER].start_gap)
    test.assertGreaterEqual(late, STEPS - 1, "the sleep does not show\n" +
                            trace_facts.summary(facts))
    test.expect_straggler(doc, rank=STRAGGLER,
                          causes={"host_pause", "data_loading"},
                          worst_worker=False)


def check_few_pauses(test, facts, doc):
    """Rank 2 pauses mid-step (1.5 steps, at least 150 ms) at 2 of the 10
    steps: transient."""
    paused = [i for i, p in enumerate(facts[STRAGGLER].pause) if p >= 0.1]
    test.assertEqual(paused, [3, 7], "the pauses do not show\n" +
                     trace_facts.summary(facts))
    test.expect_straggler(doc, rank=STRAGGLER, causes={"host_pause"},
                          worst_worker=False)


# name -> (ddp_job.py --straggler, extra job arguments, check)
JOBS = {
    "balanced": ("none", [], check_balanced),
    "larger-batch": ("larger-batch", ["--batch-factor", "3"],
                     check_larger_batch),
    "sleep-before-forward": ("sleep-before-forward",
                             ["--sleep-ms", "40", "--sleep-share", "0.5"],
                             check_sleep_before_forward),
    "few-pauses": ("few-pauses", ["--pause-ms", "150", "--pause-share", "1.5",
                                  "--pause-steps", "3,7"], check_few_pauses),
}


def describe(doc):
    """The diagnosis in a few lines, for failure messages."""
    report = doc.get("report", {})
    lines = [f"probable_cause={report.get('probable_cause')!r} "
             f"largest_straggler={report.get('largest_straggler')} "
             f"S={doc.get('slowdown')} "
             f"launch_slowdown={doc.get('launch_slowdown')}",
             "worker_slowdown: " + ", ".join(
                 f"{w.get('rank')}:{w.get('score')}"
                 for w in doc.get("worker_slowdown", [])[:WORLD])]
    for f in report.get("findings", []):
        lines.append(f"  finding {f.get('cause')} conf={f.get('confidence')} "
                     f"ranks={f.get('ranks')}: {f.get('evidence')}")
    return "\n".join(lines)


class RealRunTest(unittest.TestCase):
    maxDiff = None

    def run_job(self, name, folder):
        """Runs the job into `folder` (once more if the job itself fails,
        e.g. a port taken between picking and binding it)."""
        straggler, extra, _ = JOBS[name]
        command = [PYTHON, JOB_SCRIPT, "--out", folder, "--straggler",
                   straggler, "--rank", str(STRAGGLER), "--world", str(WORLD),
                   "--steps", str(STEPS), *extra]
        for attempt in (1, 2):
            shutil.rmtree(folder, ignore_errors=True)
            start = time.monotonic()
            result = run_group(command, JOB_TIMEOUT_S)
            seconds = time.monotonic() - start
            traces = [f"rank-{r}.pt.trace.json" for r in range(WORLD)]
            if result.returncode == 0 and all(
                    os.path.exists(os.path.join(folder, t)) for t in traces):
                return seconds
            if attempt == 2:
                self.fail(f"the job {name} failed (exit {result.returncode}):"
                          f" {' '.join(command)}\n{result.stderr[-3000:]}")
        return None

    def analyze(self, folder, out_json):
        start = time.monotonic()
        result = subprocess.run([STRAG, "analyze", folder, "--json", out_json],
                                capture_output=True, text=True,
                                timeout=STRAG_TIMEOUT_S)
        seconds = time.monotonic() - start
        self.assertEqual(
            result.returncode, 0,
            f"strag analyze {folder} exited {result.returncode}\n"
            f"stdout: {result.stdout[-2000:]}\nstderr: {result.stderr[-2000:]}")
        with open(out_json) as f:
            doc = json.load(f)
        self.assertEqual(doc.get("schema"), "strag.analysis/1")
        job = doc.get("job", {})
        self.assertEqual(job.get("traced_workers"), WORLD, job)
        # The reader may drop a partial first or last step, not more.
        self.assertTrue(STEPS - 2 <= job.get("steps", 0) <= STEPS, job)
        return doc, seconds

    def run_case(self, name):
        # A real job on a shared 2-core machine is noisy: a case whose
        # verdict is wrong is run once more (a fresh job, new traces) and
        # must be right then; the first verdict is printed, not hidden.
        for attempt in (1, 2):
            try:
                self.run_case_once(name, attempt)
                return
            except self.failureException as e:
                if attempt == 2:
                    raise
                print(f"realrun: {name}: first run wrong, run again:\n{e}",
                      file=sys.stderr)

    def run_case_once(self, name, attempt):
        if KEEP:
            base = os.path.join(KEEP, name if attempt == 1 else f"{name}-2")
        else:
            tmp = tempfile.TemporaryDirectory(prefix=f"realrun-{name}-")
            self.addCleanup(tmp.cleanup)
            base = tmp.name
        folder = os.path.join(base, "traces")
        timing = [name, self.run_job(name, folder), None]
        TIMINGS.append(timing)
        facts = trace_facts.folder_facts(folder)
        self.assertEqual(sorted(facts), list(range(WORLD)))
        for rank, f in facts.items():
            self.assertEqual(len(f.compute), STEPS, f"rank {rank}")
            # 2 buckets a step; torch 1.13 sometimes loses the last step's
            # last gloo:all_reduce (it ends after the profiler stopped).
            self.assertIn(f.allreduces, (2 * STEPS - 1, 2 * STEPS),
                          f"rank {rank}")
        doc = None
        if not JOBS_ONLY:
            doc, timing[2] = self.analyze(folder,
                                          os.path.join(base, "analysis.json"))
        JOBS[name][2](self, facts, doc)

    # --- the checks the job functions use ---

    def expect_healthy(self, doc):
        if doc is None:  # --jobs-only
            return
        report = doc.get("report", {})
        self.assertEqual(report.get("probable_cause"), "none",
                         "the balanced job is not called healthy\n" +
                         describe(doc))

    def expect_straggler(self, doc, rank, causes, worst_worker):
        """The probable cause is in `causes`, its finding names `rank` first,
        and (worst_worker) the worst worker and the largest straggler are
        `rank` too."""
        if doc is None:  # --jobs-only
            return
        report = doc.get("report", {})
        context = f"expected rank {rank}, a cause in {sorted(causes)}\n" + \
            describe(doc)
        self.assertIn(report.get("probable_cause"), causes, context)
        finding = next((f for f in report.get("findings", [])
                        if f.get("cause") in causes), {})
        self.assertTrue(finding.get("ranks"), context)
        self.assertEqual(finding["ranks"][0], rank, context)
        if worst_worker:
            self.assertEqual(doc["worker_slowdown"][0]["rank"], rank, context)
            self.assertEqual(report["largest_straggler"]["rank"], rank,
                             context)

    def test_balanced(self):
        self.run_case("balanced")

    def test_larger_batch(self):
        self.run_case("larger-batch")

    def test_sleep_before_forward(self):
        self.run_case("sleep-before-forward")

    def test_few_pauses(self):
        self.run_case("few-pauses")


def main():
    global STRAG, PYTHON, KEEP, JOBS_ONLY
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("strag")
    parser.add_argument("--keep")
    parser.add_argument("--only")
    parser.add_argument("--python")
    parser.add_argument("--jobs-only", action="store_true")
    args, rest = parser.parse_known_args()
    JOBS_ONLY = args.jobs_only
    STRAG = os.path.abspath(args.strag)
    KEEP = os.path.abspath(args.keep) if args.keep else None
    PYTHON, version = find_torch_python(args.python)
    if PYTHON is None:
        print(f"SKIP: no Python interpreter can import torch with gloo "
              f"({version}); scripts/install-deps.sh installs python3-torch",
              file=sys.stderr)
        return SKIP
    print(f"realrun: torch {version} from {PYTHON}", file=sys.stderr)

    names = list(JOBS)
    if args.only:
        names = [n.strip() for n in args.only.split(",") if n.strip()]
        unknown = [n for n in names if n not in JOBS]
        if unknown:
            parser.error(f"unknown job(s) {unknown}; jobs: {list(JOBS)}")
    suite = unittest.TestSuite(
        RealRunTest("test_" + n.replace("-", "_")) for n in names)
    verbosity = 2 if "-v" in rest else 1
    result = unittest.TextTestRunner(verbosity=verbosity).run(suite)
    for name, job_s, strag_s in TIMINGS:
        strag = "not run" if JOBS_ONLY else \
            f"{strag_s:.2f} s" if strag_s is not None else "failed"
        print(f"realrun: {name}: job {job_s:.1f} s, strag {strag}",
              file=sys.stderr)
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
