#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks a Chrome trace-event JSON file against the rules of Perfetto's
JSON importer, so that ui.perfetto.dev shows every slice and every arrow
(what the importer drops is counted in its stats table instead):

- ranges: every ts, and every X slice's ts + dur, in microseconds, fits
  int64 nanoseconds (the importer's unit) and is not negative; dur >= 0.
- nesting: complete ("X") slices of one thread track (pid, tid) nest
  properly, in the importer's order (ts, then longer first): a slice that
  starts inside another must end inside it
  (slice_drop_overlapping_complete_event).
- flows (v1 "s"/"t"/"f" with id, v2 bind_id with flow_out/flow_in on X
  slices): the importer handles events in ts order and binds a flow event
  to the slice open on its track at its ts, so every flow event must lie
  inside a slice of its own track (flow_no_enclosing_slice), every end must
  come at or after its start (flow_end_without_start), an id starts once
  (flow_duplicate_id), and every start has an end.
- order (strag's own contract, on by default): non-metadata events appear in
  the file in non-decreasing ts order, and the top-level keys are known ones
  with displayTimeUnit first (the importer stops at an unknown key and warns
  about a late displayTimeUnit).

Timestamps are read as decimals (no binary rounding): a ns-exact check.

usage: check_perfetto.py [--unsorted-ok] [--stats] FILE...
         exit 0 when every file passes, else 1 listing the first problems
       check_perfetto.py --self-test
         the checker passes a good trace and fails each kind of bad one
"""
import collections
import decimal
import json
import os
import sys
import tempfile

INT64_MAX = 2**63 - 1
KNOWN_KEYS = {"traceEvents", "displayTimeUnit", "metadata", "otherData",
              "systemTraceEvents", "stackFrames", "samples"}
MAX_LISTED = 10


def _ns(value):
    """A ts / dur in microseconds as exact ns (Decimal), or None."""
    if isinstance(value, bool) or not isinstance(value, (int, decimal.Decimal)):
        return None
    return decimal.Decimal(value) * 1000


class Report:
    def __init__(self):
        self.problems = collections.Counter()
        self.examples = collections.defaultdict(list)
        self.stats = collections.Counter()

    def add(self, kind, text):
        self.problems[kind] += 1
        if len(self.examples[kind]) < MAX_LISTED:
            self.examples[kind].append(text)

    def ok(self):
        return not self.problems


def _describe(i, e):
    return "event %d (ph %s, pid %s, tid %s, ts %s, name %r)" % (
        i, e.get("ph"), e.get("pid"), e.get("tid"), e.get("ts"), e.get("name"))


def check_document(doc, sorted_required=True):
    """Applies the import rules to a parsed trace; returns a Report."""
    rep = Report()
    if isinstance(doc, list):
        events = doc
    elif isinstance(doc, dict):
        events = doc.get("traceEvents")
        keys = list(doc.keys())
        for k in keys:
            if k not in KNOWN_KEYS:
                rep.add("unknown_top_level_key", k)
        if sorted_required and "displayTimeUnit" in doc and keys[0] != "displayTimeUnit":
            rep.add("display_time_unit_too_late", "keys in order: %s" % keys)
    else:
        events = None
    if not isinstance(events, list):
        rep.add("no_trace_events", "no traceEvents array")
        return rep

    timed = []  # (ts_ns, file index, event)
    last_ts = None
    for i, e in enumerate(events):
        if not isinstance(e, dict) or not isinstance(e.get("ph"), str):
            rep.add("bad_event", "event %d is not an object with a ph" % i)
            continue
        ph = e["ph"]
        rep.stats["events"] += 1
        if ph == "M":
            continue
        ts = _ns(e.get("ts"))
        if ts is None:
            rep.add("bad_ts", _describe(i, e))
            continue
        if ts < 0 or ts > INT64_MAX:
            rep.add("ts_out_of_range", _describe(i, e))
        if ph == "X":
            dur = _ns(e.get("dur"))
            if dur is None or dur < 0:
                rep.add("bad_dur", _describe(i, e))
                continue
            if ts + dur > INT64_MAX:
                rep.add("end_out_of_range", _describe(i, e))
        if sorted_required and last_ts is not None and ts < last_ts:
            rep.add("out_of_order", _describe(i, e))
        last_ts = ts
        timed.append((ts, i, e))

    # The importer's order: by ts, then (for slices at one ts) the longer
    # first so that it becomes the parent; otherwise the file order.
    def key(item):
        ts, i, e = item
        if e["ph"] == "X":
            return (ts, 0, -_ns(e.get("dur")), i)
        return (ts, 1, 0, i)

    timed.sort(key=key)
    stacks = collections.defaultdict(list)   # track -> [(start, end, index)]
    pending_v1 = {}                          # (id, cat, name) -> start ts
    pending_v2 = {}                          # bind_id -> start ts
    seen_v2_in = collections.Counter()

    def enclosing(track, ts):
        """The innermost slice of `track` open at ts, or None."""
        stack = stacks[track]
        while stack and stack[-1][1] <= ts and not (stack[-1][0] == stack[-1][1] == ts):
            stack.pop()
        return stack[-1] if stack else None

    for ts, i, e in timed:
        ph = e["ph"]
        track = (e.get("pid"), e.get("tid", e.get("pid")))
        if ph == "X":
            rep.stats["slices"] += 1
            end = ts + _ns(e["dur"])
            stack = stacks[track]
            while stack and stack[-1][1] <= ts and not (
                    stack[-1][0] == stack[-1][1] == ts and end == ts):
                stack.pop()
            if stack and end > stack[-1][1]:
                rep.add("slice_drop_overlapping_complete_event",
                        "%s overlaps event %d partially" % (_describe(i, e), stack[-1][2]))
                continue
            stack.append((ts, end, i))
            for flow_key in ("flow_in", "flow_out"):
                if e.get(flow_key) and "bind_id" not in e:
                    rep.add("flow_invalid_id", _describe(i, e))
            if "bind_id" in e:
                bind = str(e["bind_id"])
                if e.get("flow_in"):
                    if bind not in pending_v2:
                        rep.add("flow_end_without_start", _describe(i, e))
                    else:
                        seen_v2_in[bind] += 1
                        rep.stats["flows"] += 1
                        del pending_v2[bind]
                if e.get("flow_out"):
                    if bind in pending_v2:
                        rep.add("flow_duplicate_id", _describe(i, e))
                    pending_v2[bind] = ts
        elif ph in ("s", "t", "f"):
            if "id" not in e:
                rep.add("flow_invalid_id", _describe(i, e))
                continue
            fid = (str(e["id"]), e.get("cat"), e.get("name"))
            if enclosing(track, ts) is None:
                rep.add("flow_no_enclosing_slice", _describe(i, e))
            if ph == "s":
                if fid in pending_v1:
                    rep.add("flow_duplicate_id", _describe(i, e))
                pending_v1[fid] = ts
            elif fid not in pending_v1:
                rep.add("flow_end_without_start", _describe(i, e))
            elif ph == "f":
                rep.stats["flows"] += 1
                del pending_v1[fid]
    for fid in pending_v1:
        rep.add("flow_start_without_end", "flow id %s" % fid[0])
    for bind in pending_v2:
        rep.add("flow_start_without_end", "bind_id %s" % bind)
    return rep


def load(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        import gzip
        data = gzip.decompress(data)
    return json.loads(data, parse_float=decimal.Decimal)


def check_file(path, sorted_required=True):
    try:
        doc = load(path)
    except (OSError, ValueError) as err:
        rep = Report()
        rep.add("json_parser_failure", "%s: %s" % (path, err))
        return rep
    return check_document(doc, sorted_required)


def format_report(path, rep):
    lines = ["%s: %d events, %d slices, %d flows: %s" % (
        path, rep.stats["events"], rep.stats["slices"], rep.stats["flows"],
        "ok" if rep.ok() else "FAILED")]
    for kind, n in sorted(rep.problems.items()):
        lines.append("  %s: %d" % (kind, n))
        lines.extend("    " + x for x in rep.examples[kind])
    return "\n".join(lines)


def self_test():
    """A good trace passes; each rule catches its bad trace."""
    def x(ts, dur, tid=1, **kw):
        return dict(ph="X", name="op", pid=1, tid=tid, ts=ts, dur=dur, **kw)

    def flow(ph, ts, fid, tid=1):
        e = dict(ph=ph, id=fid, name="w", cat="c", pid=1, tid=tid, ts=ts)
        if ph == "f":
            e["bp"] = "e"
        return e

    meta = [dict(ph="M", name="process_name", pid=1, args=dict(name="p"))]
    good = meta + [x(0, 10), x(0, 20, tid=2), x(2, 3), x(5, 5), flow("s", 9, 1),
                   x(10, 0), x(10, 5), flow("f", 11, 1, tid=2)]
    cases = {
        None: good,
        "slice_drop_overlapping_complete_event": meta + [x(0, 10), x(5, 10)],
        "flow_end_without_start": meta + [x(0, 10), x(0, 10, tid=2),
                                          flow("f", 2, 1, tid=2), flow("s", 8, 1)],
        "flow_start_without_end": meta + [x(0, 10), flow("s", 2, 1)],
        "flow_duplicate_id": meta + [x(0, 10), flow("s", 1, 1), flow("s", 2, 1),
                                     flow("f", 3, 1)],
        "flow_no_enclosing_slice": meta + [x(0, 10), flow("s", 2, 1),
                                           flow("f", 30, 1)],
        "ts_out_of_range": meta + [x(-1, 1)],
        "end_out_of_range": meta + [x(9223372036854775, 1)],
        "bad_dur": meta + [x(0, -1)],
        "out_of_order": meta + [x(5, 1), x(0, 1)],
    }
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        for expected, events in cases.items():
            path = os.path.join(tmp, "t.json")
            with open(path, "w") as f:
                json.dump({"displayTimeUnit": "ms", "traceEvents": events}, f)
            rep = check_file(path)
            if expected is None and not rep.ok():
                failures.append("good trace failed:\n" + format_report(path, rep))
            elif expected is not None and expected not in rep.problems:
                failures.append("%s not caught:\n%s" % (expected, format_report(path, rep)))
        # Invalid JSON and a late displayTimeUnit.
        path = os.path.join(tmp, "bad.json")
        with open(path, "w") as f:
            f.write('{"traceEvents": [')
        if "json_parser_failure" not in check_file(path).problems:
            failures.append("truncated JSON not caught")
        with open(path, "w") as f:
            json.dump({"traceEvents": good, "displayTimeUnit": "ms"}, f)
        if "display_time_unit_too_late" not in check_file(path).problems:
            failures.append("late displayTimeUnit not caught")
    for f in failures:
        print(f)
    print("self-test: %s" % ("ok" if not failures else "FAILED"))
    return 0 if not failures else 1


def main(argv):
    if argv == ["--self-test"]:
        return self_test()
    sorted_required = "--unsorted-ok" not in argv
    paths = [a for a in argv if not a.startswith("--")]
    if not paths:
        print(__doc__)
        return 2
    failed = 0
    for path in paths:
        rep = check_file(path, sorted_required)
        if not rep.ok() or "--stats" in argv:
            print(format_report(path, rep))
        failed += not rep.ok()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
