#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Simulated twins (issue 9): the same simulated job read as the ops CSV and
as its Kineto export must agree.

For the presets (balanced, ar, st, se) and N random specs (seeded: DP x PP x
TP x CP, 1F1B or interleaved, every injector kind), `strag simulate --format
csv,kineto` writes both; `strag analyze` reads each. Checked per job:
  - the same probable cause from both;
  - S from the Kineto traces within 2% of the ops CSV's, or closer than it to
    the simulator's true slowdown (truth.json, when it gives one: the robust
    ideal of profiler traces leaves the straggler out of the ideal, the
    published mean does not);
  - nowhere S < 1 or utilization > 100% (a failed model is not a result).

usage: sim_twins.py STRAG [--random N] [--seed S] [--keep DIR] [--doc FILE]
Prints one line per job and a summary; exits 1 when a job disagrees. With
--doc, writes the lines as the "## Simulated twins" section of FILE
(docs/accuracy.md), replacing the one there.
"""
import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile

PRESETS = ("balanced", "ar", "st", "se")
KINDS = ("slow_worker", "gc_pause", "slow_link", "dataloader_stall", "none")


def random_spec(rng, k):
    """The k-th random job: a small hybrid layout and one injector."""
    pp = rng.choice([1, 2, 4])
    dp = rng.choice([2, 4, 8] if pp > 1 else [4, 8, 16])
    tp = rng.choice([1, 2])
    cp = 1 if pp == 1 else rng.choice([1, 1, 2])
    vpp = 2 if pp == 4 and rng.random() < 0.25 else 1
    mb = pp * rng.choice([2, 3]) if pp > 1 else rng.choice([1, 2, 4])
    world = dp * pp * tp * cp
    kind = KINDS[k % len(KINDS)]
    rank = rng.randrange(world)
    lines = [
        f"job: {{dp: {dp}, pp: {pp}, tp: {tp}, cp: {cp}, vpp: {vpp}, "
        f"microbatches: {mb}, steps: 6, seed: {1000 + k}}}",
        "compute: {forward_ms: 6, backward_ms: 12, "
        "noise: {dist: lognormal, sigma: 0.03}}",
        "comm: {p2p_ms: 0.3, dp_allgather_ms: 2, dp_reducescatter_ms: 3}",
    ]
    straggler = {
        "slow_worker": f"{{kind: slow_worker, rank: {rank}, "
                       f"factor: {rng.choice([1.3, 1.6, 2.0])}}}",
        "gc_pause": f"{{kind: gc_pause, rank: {rank}, rate_per_step: 0.5, "
                    "pause_ms: 40}",
        "slow_link": f"{{kind: slow_link, node: {rank // 8}, factor: 3.0}}",
        "dataloader_stall": f"{{kind: dataloader_stall, rank: {rank}, "
                            "probability: 1.0, stall_ms: 30}",
    }.get(kind)
    if straggler:
        lines += ["stragglers:", "  - " + straggler]
    return f"random-{k:02d}-{kind}", "\n".join(lines) + "\n"


def run(*args):
    return subprocess.run(list(args), capture_output=True, text=True,
                          timeout=600)


def analyze(strag, path):
    out = path.rstrip("/") + ".analysis.json"
    r = run(strag, "analyze", path, "--json", out, "--quiet")
    if r.returncode != 0:
        return None, r.stderr.strip()[-300:]
    with open(out) as f:
        return json.load(f), ""


def true_slowdown(truth):
    values = [s["slowdown"] for s in truth.get("stragglers", [])
              if s.get("slowdown")]
    return values[0] if len(values) == 1 else None


def check(strag, name, folder, sim_args):
    r = run(strag, "simulate", *sim_args, "--out", folder, "--format",
            "csv,kineto")
    if r.returncode != 0:
        return False, f"{name}: simulate failed: {r.stderr.strip()[-300:]}"
    with open(os.path.join(folder, "truth.json")) as f:
        truth = json.load(f)
    csv, err = analyze(strag, os.path.join(folder, "ops.csv.gz"))
    if csv is None:
        return False, f"{name}: ops CSV analysis failed: {err}"
    kin, err = analyze(strag, os.path.join(folder, "kineto"))
    if kin is None:
        return False, f"{name}: Kineto analysis failed: {err}"
    s_csv, s_kin = csv["slowdown"], kin["slowdown"]
    c_csv = csv["report"]["probable_cause"]
    c_kin = kin["report"]["probable_cause"]
    true_s = true_slowdown(truth)
    close = abs(s_kin / s_csv - 1) <= 0.02 or (
        true_s is not None and abs(s_kin - true_s) < abs(s_csv - true_s))
    problems = []
    if c_csv != c_kin:
        problems.append(f"cause {c_kin} != {c_csv}")
    if not close:
        problems.append("S differs")
    for label, doc in (("ops CSV", csv), ("Kineto", kin)):
        util = doc["report"].get("utilization", 0)
        if doc["slowdown"] < 1 or util > 1:
            problems.append(f"{label}: S {doc['slowdown']:.3f}, "
                            f"utilization {util:.3f}")
    line = (f"{name:28s} S ops CSV {s_csv:.4f} Kineto {s_kin:.4f}"
            + (f" true {true_s:.4f}" if true_s else "")
            + f"; cause {c_csv} / {c_kin}"
            + ("" if not problems else "  <- " + "; ".join(problems)))
    return not problems, line


HEADING = "## Simulated twins"


def write_section(doc, lines, summary, args):
    """Replaces (or appends) the twins section of `doc`."""
    text = open(doc).read() if os.path.exists(doc) else ""
    at = text.find("\n" + HEADING)
    if at >= 0:
        end = text.find("\n## ", at + 1)
        rest = text[end:] if end >= 0 else ""
        text = text[:at] + rest
    section = [
        "", HEADING, "",
        "The same simulated job read as the ops CSV and as its Kineto export "
        "(`bench/accuracy/sim_twins.py`:",
        f"the presets and {args.random} random specs, seed {args.seed}, every "
        "injector kind). Agreement: the same",
        "probable cause, S within 2% of the ops CSV's or closer than it to "
        "the simulator's true slowdown, and",
        "no S < 1 or utilization > 100%. " + summary + ".",
        "", "```"] + lines + ["```", ""]
    with open(doc, "w") as f:
        f.write(text.rstrip("\n") + "\n" + "\n".join(section))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("strag")
    p.add_argument("--random", type=int, default=20)
    p.add_argument("--seed", type=int, default=9)
    p.add_argument("--presets", default=",".join(PRESETS))
    p.add_argument("--keep")
    p.add_argument("--doc")
    args = p.parse_args(argv)
    root = args.keep or tempfile.mkdtemp(prefix="strag-twins-")
    os.makedirs(root, exist_ok=True)
    rng = random.Random(args.seed)
    jobs = [(name, ["--preset", name, "--steps-window", "0:7"])
            for name in args.presets.split(",") if name]
    for k in range(args.random):
        name, spec = random_spec(rng, k)
        path = os.path.join(root, name + ".yaml")
        with open(path, "w") as f:
            f.write(spec)
        jobs.append((name, [path]))
    good, lines = 0, []
    try:
        for name, sim_args in jobs:
            ok, line = check(args.strag, name, os.path.join(root, name),
                             sim_args)
            good += ok
            lines.append(line)
            print(line, flush=True)
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    summary = f"sim twins: {good} of {len(jobs)} agree"
    print(summary)
    if args.doc:
        write_section(args.doc, lines, summary, args)
    return 0 if good == len(jobs) else 1


if __name__ == "__main__":
    sys.exit(main())
