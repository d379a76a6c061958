#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The real-run accuracy benchmark: runs the jobs of jobs.py (real PyTorch
jobs with a known straggler), analyses each with `strag analyze` in both
trace layouts (as torch 1.13 writes them, and re-exported in the torch 2.x
Kineto layout by to_kineto2.py), and scores the right rank, the right cause
and the right persistence against the job's ground truth.

usage: score.py STRAG [--reruns N] [--only CASE,...] [--quick] [--keep DIR]
                [--doc FILE | --no-doc] [--min-score X] [--python PY]

  --reruns N     run every case N times (default 3; --quick: 1): the
                 machine is noisy, the table gives the spread
  --only CASES   these cases only (jobs.py list)
  --quick        the small subset that `make test` runs (QUICK below)
  --keep DIR     keep the traces, truths and strag's JSON under DIR (else a
                 temporary folder, removed at the end)
  --doc FILE     write the table there (default: docs/accuracy.md of the
                 project, only for a run of every case; --only / --quick
                 write no table unless --doc is given)
  --min-score X  exit 1 when the share of (case, layout, rerun) analyses
                 with the right rank and the right cause is below X
                 (without it the exit status is 0 whatever the score: the
                 score is a measurement)
  --python PY    the interpreter with torch (else $STRAG_TORCH_PYTHON,
                 /usr/bin/python3, this one)

Exits 77 (CTest SKIP_RETURN_CODE) when no interpreter can import torch with
gloo, 2 when the jobs themselves fail.
"""
import argparse
import collections
import datetime
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PROJECT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(PROJECT, "tests", "realrun"))
import jobs  # noqa: E402  (no torch at import time)
import to_kineto2  # noqa: E402
import trace_stats  # noqa: E402
from torch_env import find_torch_python, run_group  # noqa: E402

SKIP = 77
LAYOUTS = ("torch113", "kineto2")
# One case per mechanism that `make test` guards: a healthy job, the small
# world's ideal, a persistent and a transient DataLoader stall.
QUICK = ("ddp-healthy-4", "ddp-slow-rank-2", "dataloader-slow-4",
         "dataloader-stall-4")
JOB_TIMEOUT_S = 240
TWINS_HEADING = "## Simulated twins"
STRAG_TIMEOUT_S = 120


# --- Reading strag's verdict. --------------------------------------------------

def _persistence_label(value):
    """'persistent' / 'transient' / 'unknown' / None from what strag wrote
    (a string, or an object with a label or a `persistent` flag)."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        for key in ("label", "verdict", "kind", "persistence"):
            if isinstance(value.get(key), str):
                return value[key]
        if isinstance(value.get("persistent"), bool):
            return "persistent" if value["persistent"] else "transient"
    return None


def verdict(doc):
    """(rank or None, cause, persistence) from strag's analysis JSON."""
    report = doc.get("report", {})
    cause = report.get("probable_cause")
    straggler = report.get("largest_straggler")
    rank = straggler.get("rank") if isinstance(straggler, dict) else None
    persistence = None
    for f in report.get("findings", []):
        if f.get("cause") == cause and "persistence" in f:
            persistence = _persistence_label(f["persistence"])
            break
    if persistence is None:
        persistence = _persistence_label(report.get("persistence"))
    return rank, cause, persistence


def accepted_ranks(truth, layout):
    """The ranks that count as right. For files without any rank (torch's
    default names, torch 1.13 layout) strag can only number them in a
    stated order: the position of the straggler's file among the sorted
    names counts too."""
    ranks = set(truth["straggler_ranks"])
    if layout == "torch113" and truth["opts"].get("file_names") == "default":
        names = sorted(truth["files"])
        ranks |= {names.index(n) for n, r in truth["files"].items()
                  if r in truth["straggler_ranks"]}
    return ranks


def score_one(truth, layout, doc):
    rank, cause, persistence = verdict(doc)
    healthy = truth["cause"] == "none"
    rank_ok = rank is None if healthy else rank in accepted_ranks(truth,
                                                                  layout)
    cause_ok = cause == truth["cause"]
    pers_ok = None if healthy else persistence == truth["persistence"]
    return {"rank": rank, "cause": cause, "persistence": persistence,
            "rank_ok": rank_ok, "cause_ok": cause_ok, "pers_ok": pers_ok,
            "slowdown": doc.get("slowdown")}


# --- Running. --------------------------------------------------------------------

def run_job(python, name, folder):
    """Runs the case into `folder` (a second time if the job fails, e.g. a
    port taken between picking and binding it); returns its seconds."""
    for attempt in (1, 2):
        shutil.rmtree(folder, ignore_errors=True)
        start = time.monotonic()
        r = run_group([python, os.path.join(HERE, "jobs.py"), "run", name,
                       "--out", folder], JOB_TIMEOUT_S)
        if r.returncode == 0 and os.path.exists(
                os.path.join(folder, "truth.json")):
            return time.monotonic() - start, None
        error = f"exit {r.returncode}: {r.stderr.strip()[-1500:]}"
    return None, error


def analyze(strag, trace_dir, out_json):
    start = time.monotonic()
    try:
        r = subprocess.run([strag, "analyze", trace_dir, "--json", out_json],
                           capture_output=True, text=True,
                           timeout=STRAG_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return None, f"timed out after {STRAG_TIMEOUT_S} s", STRAG_TIMEOUT_S
    seconds = time.monotonic() - start
    if r.returncode != 0 or not os.path.exists(out_json):
        msg = (r.stderr.strip() or r.stdout.strip()).splitlines()
        return None, f"exit {r.returncode}: {' | '.join(msg[-3:])}", seconds
    with open(out_json) as f:
        return json.load(f), None, seconds


def run_case(strag, python, name, folder):
    """One rerun of one case: job, re-export, check, both analyses."""
    row = {"case": name, "layouts": {}}
    row["job_s"], error = run_job(python, name, folder)
    if error:
        row["job_error"] = error
        return row
    truth = trace_stats.load_truth(folder)
    to_kineto2.reexport(folder)
    try:
        row["injected"], row["injected_text"] = trace_stats.verify(folder)
    except Exception as e:  # a check that cannot read the trace: say so
        row["injected"], row["injected_text"] = False, f"check failed: {e}"
    row["strag_s"] = 0.0
    for layout in LAYOUTS:
        doc, err, seconds = analyze(strag, os.path.join(folder, layout),
                                    os.path.join(folder,
                                                 f"analysis-{layout}.json"))
        row["strag_s"] += seconds
        if doc is None:
            row["layouts"][layout] = {"error": err, "rank_ok": False,
                                      "cause_ok": False, "pers_ok": False if
                                      truth["persistence"] else None}
        else:
            row["layouts"][layout] = score_one(truth, layout, doc)
    row["truth"] = {k: truth[k] for k in ("straggler_ranks", "cause",
                                          "persistence", "world_size")}
    return row


# --- Reporting. --------------------------------------------------------------------

def said(r):
    if "error" in r:
        return "error: " + r["error"][:160]
    rank = "no straggler" if r["rank"] is None else f"rank {r['rank']}"
    return f"{rank}, {r['cause']}, {r['persistence'] or '-'}"


def tally(rows):
    """case -> layout -> counts and what strag said."""
    out = collections.OrderedDict()
    for row in rows:
        case = out.setdefault(row["case"], {"runs": 0, "injected": 0,
                                            "job_errors": 0, "layouts": {}})
        case["runs"] += 1
        case["truth"] = row.get("truth", case.get("truth"))
        if "job_error" in row:
            case["job_errors"] += 1
            case["job_error"] = row["job_error"]
            continue
        case["injected"] += bool(row["injected"])
        case["injected_text"] = row["injected_text"]
        for layout, r in row["layouts"].items():
            c = case["layouts"].setdefault(layout, collections.Counter())
            c["n"] += 1
            c["rank"] += bool(r["rank_ok"])
            c["cause"] += bool(r["cause_ok"])
            c["both"] += bool(r["rank_ok"] and r["cause_ok"])
            c["pers"] += bool(r["pers_ok"])
            c["pers_n"] += r["pers_ok"] is not None
            c.setdefault("said", [])
            c["said"].append(said(r))
    return out


def totals(t):
    n = both = rank = cause = pers = pers_n = 0
    healthy_named = healthy_n = 0
    for case in t.values():
        for c in case["layouts"].values():
            n += c["n"]
            both += c["both"]
            rank += c["rank"]
            cause += c["cause"]
            pers += c["pers"]
            pers_n += c["pers_n"]
            if case["truth"] and case["truth"]["cause"] == "none":
                healthy_n += c["n"]
                healthy_named += c["n"] - c["both"]
    return dict(n=n, both=both, rank=rank, cause=cause, pers=pers,
                pers_n=pers_n, healthy_n=healthy_n,
                healthy_named=healthy_named)


def frac(a, b):
    return f"{a}/{b}" if b else "-"


def truth_text(truth):
    if not truth:
        return "?"
    if truth["cause"] == "none":
        return "healthy"
    ranks = "+".join(map(str, truth["straggler_ranks"]))
    return f"rank {ranks}, {truth['cause']}, {truth['persistence']}"


def machine():
    model = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} CPUs (nproc {len(os.sched_getaffinity(0))})"


def strag_id(strag):
    """The binary's size, modification time and hash prefix: the table is
    only meaningful for the binary that made it."""
    import hashlib
    st = os.stat(strag)
    with open(strag, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()[:12]
    when = datetime.datetime.fromtimestamp(st.st_mtime).isoformat(
        timespec="seconds")
    return f"built {when}, {st.st_size} bytes, sha256 {digest}"


def render_doc(t, meta):
    tot = totals(t)
    lines = [
        "# Accuracy on real PyTorch runs",
        "",
        "How often `strag analyze` names the right straggler, the right cause "
        "and the right persistence on",
        "real multi-process PyTorch jobs with a known straggler "
        "(`bench/accuracy/`, issue 9). Each case is",
        "a real job (gloo on 127.0.0.1, CPU, `torch.profiler`) run "
        f"{meta['reruns']} time(s); each run is analysed in both",
        "trace layouts: `torch113` (the files as torch 1.13 writes them) and "
        "`kineto2` (the same profile",
        "re-exported in the torch 2.x Kineto layout: `distributedInfo`, "
        "`cat`, `Input Dims`, one epoch clock).",
        "A cell `k/n` counts the runs that were right. This table is a "
        "measurement, rewritten by each full run.",
        "",
        f"- machine: {meta['machine']}",
        f"- date: {meta['date']}",
        f"- torch: {meta['torch']} ({meta['python']}); strag: "
        f"`{meta['strag']}`",
        f"- strag binary: {meta.get('strag_id', '?')}",
        f"- reruns: {meta['reruns']}; wall time {meta['wall_s']:.0f} s; "
        f"load average at the start {meta.get('load', '?')} (other work on "
        "the machine blurs the signals)",
        "",
        "## Totals",
        "",
        f"- right rank and right cause: **{frac(tot['both'], tot['n'])}** "
        f"analyses "
        f"({100 * tot['both'] / max(tot['n'], 1):.0f}%)",
        f"- right rank: {frac(tot['rank'], tot['n'])}; right cause: "
        f"{frac(tot['cause'], tot['n'])}; right persistence (stragglers "
        f"only): {frac(tot['pers'], tot['pers_n'])}",
        f"- healthy runs called a straggler (or misread): "
        f"{frac(tot['healthy_named'], tot['healthy_n'])}",
        "",
        "## Per case",
        "",
        "| case | truth | injected | layout | rank | cause | persistence | "
        "strag said (last run) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, case in t.items():
        inj = frac(case["injected"], case["runs"] - case["job_errors"])
        if case["job_errors"]:
            inj += f" ({case['job_errors']} job failure(s))"
        for layout in LAYOUTS:
            c = case["layouts"].get(layout)
            if not c:
                lines.append(f"| {name} | {truth_text(case['truth'])} | "
                             f"{inj} | {layout} | - | - | - | job failed |")
                continue
            pers = "n/a" if not c["pers_n"] else frac(c["pers"], c["pers_n"])
            lines.append(
                f"| {name} | {truth_text(case['truth'])} | {inj} | {layout} "
                f"| {frac(c['rank'], c['n'])} | {frac(c['cause'], c['n'])} | "
                f"{pers} | {c['said'][-1].replace('|', '/')} |")
    lines += [
        "",
        "`injected`: runs whose traces show the injected straggler, checked "
        "without strag (`trace_stats.py`:",
        "the straggler's compute, DataLoader or pause time against the other "
        "ranks'). Ground truth: `bench/accuracy/README.md`.",
        "",
        "## How to run",
        "",
        "`make bench-accuracy` builds `build/strag` and runs every case 3 "
        "times (`/usr/bin/python3",
        "bench/accuracy/score.py ./build/strag --reruns 3`), then rewrites "
        "this page. `--only CASE,...` runs",
        "some cases, `--keep DIR` keeps the traces and strag's JSON, "
        "`--quick` runs the subset of `make test`",
        f"({', '.join(QUICK)}; 1 run, both layouts). It needs Debian's "
        "`python3-torch` (run with",
        "`/usr/bin/python3`) and takes a few minutes on 2 cores; the table "
        "changes a little from run to run,",
        "because the machine is noisy: compare the spread, not one run.",
        "",
    ]
    return "\n".join(lines)


def print_summary(t, wall_s):
    for name, case in t.items():
        parts = []
        for layout in LAYOUTS:
            c = case["layouts"].get(layout)
            if c:
                parts.append(f"{layout} rank {frac(c['rank'], c['n'])} cause "
                             f"{frac(c['cause'], c['n'])} pers "
                             f"{frac(c['pers'], c['pers_n'])}: "
                             f"{c['said'][-1]}")
        print(f"{name} [{truth_text(case['truth'])}] injected "
              f"{case['injected']}/{case['runs']}"
              + (f" JOB FAILED: {case.get('job_error', '')[:300]}"
                 if case["job_errors"] else ""))
        for p in parts:
            print("    " + p)
        if case.get("injected_text"):
            print("    check: " + case["injected_text"])
    tot = totals(t)
    print(f"total: right rank and cause {frac(tot['both'], tot['n'])}, "
          f"rank {frac(tot['rank'], tot['n'])}, cause "
          f"{frac(tot['cause'], tot['n'])}, persistence "
          f"{frac(tot['pers'], tot['pers_n'])}; healthy misread "
          f"{frac(tot['healthy_named'], tot['healthy_n'])}; "
          f"{wall_s:.0f} s")
    return tot


def main(argv=None):
    p = argparse.ArgumentParser(add_help=True, description=__doc__.split(
        "\n\n")[0])
    p.add_argument("strag")
    p.add_argument("--reruns", type=int)
    p.add_argument("--only")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--keep")
    p.add_argument("--doc")
    p.add_argument("--no-doc", action="store_true")
    p.add_argument("--min-score", type=float)
    p.add_argument("--python")
    args = p.parse_args(argv)
    strag = os.path.abspath(args.strag)
    names = list(jobs.CASES)
    if args.quick:
        names = list(QUICK)
    if args.only:
        names = [n.strip() for n in args.only.split(",") if n.strip()]
        unknown = [n for n in names if n not in jobs.CASES]
        if unknown:
            p.error(f"unknown case(s) {unknown}; cases: {list(jobs.CASES)}")
    reruns = args.reruns or (1 if args.quick else 3)
    doc = args.doc
    if doc is None and not (args.quick or args.only or args.no_doc):
        doc = os.path.join(PROJECT, "docs", "accuracy.md")
    if not os.access(strag, os.X_OK):
        print(f"score.py: {strag} is not an executable", file=sys.stderr)
        return 2
    python, version = find_torch_python(args.python)
    if python is None:
        print(f"SKIP: no Python interpreter can import torch with gloo "
              f"({version}); scripts/install-deps.sh installs python3-torch",
              file=sys.stderr)
        return SKIP
    print(f"accuracy: torch {version} from {python}; {len(names)} case(s) x "
          f"{reruns} run(s) x {len(LAYOUTS)} layouts", file=sys.stderr)

    if args.keep:
        work = os.path.abspath(args.keep)
        os.makedirs(work, exist_ok=True)
        cleanup = None
    else:
        cleanup = tempfile.TemporaryDirectory(prefix="strag-accuracy-")
        work = cleanup.name
    start = time.monotonic()
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    ident = strag_id(strag)
    rows = []
    try:
        for k in range(reruns):
            for name in names:
                row = run_case(strag, python, name,
                               os.path.join(work, name, f"run-{k}"))
                rows.append(row)
                lay = row["layouts"]
                print(f"accuracy: run {k + 1}/{reruns} {name}: job "
                      f"{row.get('job_s') or 0:.1f} s, strag "
                      f"{row.get('strag_s', 0):.1f} s; " + "; ".join(
                          f"{l}: {said(r)}" for l, r in lay.items())
                      + ("" if row.get("injected", True) else
                         " (injection NOT visible)"),
                      file=sys.stderr, flush=True)
    finally:
        if cleanup:
            cleanup.cleanup()
    wall_s = time.monotonic() - start
    t = tally(rows)
    tot = print_summary(t, wall_s)
    if ident != strag_id(strag):
        print("accuracy: warning: the strag binary changed during the run",
              file=sys.stderr)
        ident += " (it changed during the run: mixed results)"
    if args.keep:
        with open(os.path.join(work, "results.json"), "w") as f:
            json.dump(rows, f, indent=1)
    if doc:
        meta = {"machine": machine(),
                "date": datetime.date.today().isoformat(),
                "torch": version, "python": python, "reruns": reruns,
                "strag_id": ident, "load": load,
                "strag": os.path.relpath(strag, PROJECT)
                if strag.startswith(PROJECT) else strag, "wall_s": wall_s}
        kept = ""  # sim_twins.py's section survives a rewrite
        if os.path.exists(doc):
            with open(doc) as f:
                old = f.read()
            at = old.find("\n" + TWINS_HEADING)
            if at >= 0:
                kept = old[at:]
        with open(doc, "w") as f:
            f.write(render_doc(t, meta).rstrip("\n") + "\n" + kept)
        print(f"accuracy: wrote {doc}", file=sys.stderr)
    if all("job_error" in r for r in rows):
        return 2
    if args.min_score is not None:
        failed = sum(c["job_errors"] for c in t.values()) * len(LAYOUTS)
        score = tot["both"] / max(tot["n"] + failed, 1)
        if score < args.min_score:
            print(f"accuracy: score {score:.2f} is below --min-score "
                  f"{args.min_score}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
