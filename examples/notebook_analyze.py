#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# strag in a notebook: analyze a trace, read the slowdown, look at the
# per-step table, ask a counterfactual. Each "# %%" is a cell (Jupyter,
# VS Code); run it whole as a script too:
#
#   make python
#   PYTHONPATH=build/python python3 examples/notebook_analyze.py [TRACE]
#
# TRACE: an ops CSV (default: the published trace AR of the OSDI'25
# artifact when ../shared/data holds it, else the example job of
# examples/demo), or a folder of PyTorch profiler traces.

# %% Analyze (the same as `strag analyze TRACE --json`)
import os
import sys

import strag

here = os.path.dirname(os.path.abspath(__file__))
ar = os.path.join(here, "..", "..", "shared", "data", "osdi25-whatif",
                  "trace-AR.csv.gz")
demo = os.path.join(here, "demo", "trace-demo.csv.gz")
trace = sys.argv[1] if len(sys.argv) > 1 else (ar if os.path.exists(ar)
                                                 else demo)
r = strag.analyze(trace)
print(f"{r['job']['traced_workers']} workers, {r['job']['steps']} steps")
print(f"slowdown S = {r['slowdown']:.4f}: {100 * r['waste']:.1f}% of the "
      f"GPU time lost to stragglers")
print("probable cause:", r["report"]["probable_cause"])

# %% The per-step table (a pandas DataFrame when pandas is installed)
steps = r.steps
if hasattr(steps, "sort_values"):
    print(steps.sort_values("slowdown", ascending=False).head(5))
else:  # a dict of NumPy arrays
    import numpy as np
    worst = np.argsort(-steps["slowdown"])[:5]
    for i in worst:
        print(f"step {steps['step'][i]}: T = {steps['t_replayed_s'][i]:.3f} s,"
              f" ideal {steps['t_ideal_s'][i]:.3f} s,"
              f" slowdown {steps['slowdown'][i]:.3f}")

# %% The worst workers, and S with only one stage left unfixed
print(r["worker_slowdown"][:3])
print("S by stage:", r["slowdown_by_stage"])

# %% Counterfactual: fix only the last stage, un-fix only DP rank 0
last = r["job"]["pp"] - 1
cf = strag.analyze(trace, fix=f"stage={last}", unfix="dp=0")
def percent(x):  # null when T equals T_ideal
    return "n/a" if x is None else f"{100 * x:.1f}%"


for c in cf["counterfactuals"]:
    print(f"{c['direction']} only {c['selector']}: fixed alone recovers "
          f"{percent(c['rem'])} of the loss; left alone unfixed causes "
          f"{percent(c['add'])}")
