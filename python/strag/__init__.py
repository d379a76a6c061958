# SPDX-License-Identifier: Apache-2.0
"""strag from Python: find and price the stragglers of a distributed job.

    import strag
    r = strag.analyze("trace-AR.csv.gz")   # as `strag analyze trace-AR.csv.gz`
    r["slowdown"]          # the values of `strag analyze --json` (a dict)
    r.steps                # per-step table (pandas DataFrame, or dict of arrays)
    strag.analyze("trace-AR.csv.gz", fix=["stage=3"])["counterfactuals"]

The same C++ core as the `strag` binary, run without the GIL: the report is
rendered by the CLI's own JSON renderer and parsed here, so it equals
`strag analyze --json` value for value; the tables are NumPy arrays copied
once from the C++ columns (pandas DataFrames when pandas is installed).
Keyword arguments are the CLI's flags (`--usd-per-gpu-hour` is
`usd_per_gpu_hour`). Bad options and bad input raise ValueError with the
CLI's message. Documentation: python/README.md in the source tree.
"""

import json as _json
import os as _os
import warnings as _warnings

from . import _strag

try:
    import pandas as _pd
except ImportError:  # NumPy arrays only
    _pd = None

__version__ = _strag.__version__
__all__ = ["Analysis", "OP_TYPES", "analyze", "plan"]

# Names of the op types: the ops table's `op_type` column holds their index.
OP_TYPES = tuple(_strag.op_type_names)


class Analysis(dict):
    """The analysis of one job: the `strag.analysis/1` document of
    `strag analyze --json` (docs/formats/analysis-json.md) as a dict, and

    steps           per step: step, t_observed_s, t_replayed_s, t_ideal_s,
                    slowdown, launch_slowdown
    workers         per traced worker, worst first: rank, dp, pp, score
    ops             the ops table of an ops CSV (rank, dp, pp, [tp, cp,]
                    step, op_type, seq_id, chunk, microbatch, start_ns,
                    dur_ns[, tokens]); None for profiler traces
    decompositions  {"optype" | "dp_rank" | "stage" | "pipeline_stage":
                    {"key": [...], "slowdown": array, "per_step": array
                    [keys x steps]}}, "un-fix only this group"
    plan            the `strag.plan/1` dict (`strag plan --json`) when
                    analysed with plan=True, else None
    warnings        what the CLI prints as warnings
    json            the JSON text itself

    Tables are pandas DataFrames when pandas is installed (op_type then a
    Categorical of OP_TYPES), else dicts of NumPy arrays (op_type the index
    into OP_TYPES).
    """

    def __init__(self, raw):
        super().__init__(_json.loads(raw["json"]))
        self.json = raw["json"]
        self.plan = (None if raw["plan_json"] is None
                     else _json.loads(raw["plan_json"]))
        self.warnings = list(raw["warnings"])
        self.steps = _table(raw["steps"])
        self.workers = _table(raw["workers"])
        self.ops = _ops_table(raw["ops"])
        self.decompositions = raw["decompositions"]


def _table(columns):
    return _pd.DataFrame(columns) if _pd is not None else columns


def _ops_table(columns):
    if columns is None or _pd is None:
        return columns
    frame = _pd.DataFrame(columns)
    frame["op_type"] = _pd.Categorical.from_codes(
        columns["op_type"].astype("int16"), categories=list(OP_TYPES))
    return frame


def _strings(value, name):
    if value is None:
        return []
    if isinstance(value, (str, _os.PathLike)):
        return [_os.fspath(value)]
    try:
        return [_os.fspath(v) if isinstance(v, _os.PathLike) else v
                for v in value]
    except TypeError:
        raise TypeError(f"{name}: expected a string or a list of strings, "
                        f"got {type(value).__name__}") from None


def _layers(value):
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        return str(value)
    return ",".join(str(v) for v in value)


def _rank_map(value):
    """{file: rank}, or the CLI's "FILE=RANK,..." text."""
    if value is None:
        return {}
    if isinstance(value, dict):
        return value
    out = {}
    for item in str(value).split(","):
        file, eq, rank = item.rpartition("=")
        if not eq or not file or not rank.isdigit():
            raise ValueError("rank_map: expected FILE=RANK[,FILE=RANK...], "
                             f'got "{item}"')
        out[file] = int(rank)
    return out


def analyze(inputs, *, meta=None, dp=None, pp=None, tp=None, cp=None,
            vpp=None, rank_map=None, hosts=None, fix=None, unfix=None, pool=None,
            threads=None, gpus=None, days=None, hours=None,
            usd_per_gpu_hour=None, plan=False, layers=None,
            checkpoint_interval_min=None, restart_min=None, token_cap=None,
            max_line_bytes=None, max_token_bytes=None, max_event_bytes=None):
    """Analyses a job as `strag analyze INPUTS [flags]` does.

    inputs: an ops CSV (.csv / .csv.gz), or PyTorch profiler (Kineto)
    traces: a folder, or a list of per-rank .json[.gz] files.
    Keyword arguments are the flags of `strag analyze` (`strag help
    analyze`): meta (default: meta-X.yaml beside trace-X.csv[.gz], or
    meta.yaml), dp/pp/tp/cp/vpp, rank_map ({file: rank} or "F=R,..."),
    hosts (a `RANK HOST` file: nodes by host),
    fix / unfix (a selector or a list: "rank=5", "stage=3",
    "optype=backward-compute", "stage=3,step=821", "rank=0+17"), pool,
    threads, gpus, days | hours, usd_per_gpu_hour, plan (rank the
    mitigations) with layers, checkpoint_interval_min, restart_min,
    token_cap, and max_line_bytes / max_token_bytes / max_event_bytes.

    Returns an Analysis (a dict equal to the --json document, with the
    tables). Raises ValueError for bad options or input, naming the file.
    """
    raw = _strag.analyze(
        _strings(inputs, "inputs"),
        meta=None if meta is None else _os.fspath(meta),
        dp=dp, pp=pp, tp=tp, cp=cp, vpp=vpp, rank_map=_rank_map(rank_map),
        hosts=None if hosts is None else _os.fspath(hosts),
        fix=_strings(fix, "fix"), unfix=_strings(unfix, "unfix"), pool=pool,
        threads=threads, gpus=gpus, days=days, hours=hours,
        usd_per_gpu_hour=usd_per_gpu_hour, plan=bool(plan),
        layers=_layers(layers),
        checkpoint_interval_min=checkpoint_interval_min,
        restart_min=restart_min, token_cap=token_cap,
        max_line_bytes=max_line_bytes, max_token_bytes=max_token_bytes,
        max_event_bytes=max_event_bytes)
    for w in raw["warnings"]:
        _warnings.warn(w, stacklevel=2)
    return Analysis(raw)


def plan(inputs, **options):
    """The ranked mitigations, as `strag plan INPUTS --json` (a dict of
    strag.plan/1); the options are analyze()'s."""
    options["plan"] = True
    return analyze(inputs, **options).plan
