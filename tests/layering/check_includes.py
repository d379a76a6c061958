#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks every `#include "..."` under src/ against the dependencies the
CMake targets declare (as Perfetto's `gn check` does): all targets share the
include root src/, so without this a module could include what its DEPS do
not allow, and the layering of docs/architecture.md would erode unseen.

A file belongs to the target whose SRCS list it (a header: the library of
its folder; ingest/<format>/ is ingest_<format>). An include of a file of
target T is allowed from target S when T is S or among S's dependencies,
followed transitively (strag:: ones; a test target's own DEPS count for its
sources). Includes that resolve to no file under src/ (generated sources,
system headers in quotes) are not checked.

usage: check_includes.py SRC_DIR        exit 0, or 1 listing each violation
       check_includes.py --self-test    the check fails on a wrong include
"""
import os
import re
import shutil
import sys
import tempfile

CALL = re.compile(r"strag_cc_(library|test)\s*\((.*?)\)\s*$",
                  re.S | re.M)
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
KEYWORDS = {"NAME", "SRCS", "DEPS"}


def parse_call(body):
    """{'NAME': [...], 'SRCS': [...], 'DEPS': [...]} of one call."""
    out, key = {}, None
    body = re.sub(r"#[^\n]*", "", body)
    for word in body.split():
        if word in KEYWORDS:
            key = word
            out.setdefault(key, [])
        elif key:
            out[key].append(word)
    return out


def load_targets(src):
    """targets: name -> {'deps': set, 'files': set, 'dir': rel, 'test': bool}"""
    targets = {}
    for root, _, files in os.walk(src):
        if "CMakeLists.txt" not in files:
            continue
        rel = os.path.relpath(root, src)
        with open(os.path.join(root, "CMakeLists.txt")) as f:
            text = f.read()
        # Calls span lines up to the first ")" that closes them; the
        # non-greedy match with re.M stops at a line ending in ")".
        for kind, body in re.findall(r"strag_cc_(library|test)\s*\(([^)]*)\)",
                                     text):
            call = parse_call(body)
            name = call["NAME"][0]
            srcs = {os.path.normpath(os.path.join(rel, s))
                    for s in call.get("SRCS", []) if "$" not in s}
            deps = {d[len("strag::"):] for d in call.get("DEPS", [])
                    if d.startswith("strag::")}
            targets[name] = {"deps": deps, "files": srcs, "dir": rel,
                             "test": kind == "test"}
    return targets


def closure(targets, name):
    seen, todo = set(), [name]
    while todo:
        t = todo.pop()
        if t in seen or t not in targets:
            continue
        seen.add(t)
        todo.extend(targets[t]["deps"])
    return seen


def library_of_dir(targets, rel_dir):
    """The library that owns the headers of folder `rel_dir`."""
    parts = rel_dir.split(os.sep)
    for k in range(len(parts), 0, -1):
        prefix = os.sep.join(parts[:k])
        libs = [n for n, t in targets.items()
                if not t["test"] and t["dir"] == prefix]
        # ingest/<format>/...: the library named ingest_<format>.
        if len(libs) > 1 or (libs and len(parts) > k):
            named = "_".join(parts[:k + 1]) if len(parts) > k else None
            if named in targets:
                return named
        if len(libs) == 1:
            return libs[0]
        if libs:
            return sorted(libs)[0]
    return None


def owner(targets, path, by_file):
    if path in by_file:
        return by_file[path]
    return library_of_dir(targets, os.path.dirname(path))


# Seams finer than targets (docs/architecture.md): renderers render the
# report model, never an input or the simulator; randomness stays in sim/.
FORBIDDEN = [
    ("report/render/", ("sim/", "ingest/"),
     "a renderer takes the report model; it reads no input and runs no "
     "simulator"),
    ("", ("sim/random.h",), "randomness is drawn in sim/ only"),
    ("cli/", ("whatif/", "diagnose/", "mitigate/", "econ/", "graph/",
              "replay/"),
     "the command line parses, reads, calls the report builder and renders; "
     "the analysis is report/'s to call"),
]


def forbidden(path, inc):
    for where, prefixes, why in FORBIDDEN:
        if not path.startswith(where):
            continue
        if inc == "sim/random.h" and path.startswith("sim/"):
            continue
        if any(inc.startswith(p) for p in prefixes):
            return why
    return None


def check(src):
    targets = load_targets(src)
    by_file = {}
    for name, t in targets.items():
        for f in t["files"]:
            by_file[f] = name
    problems = []
    for root, _, files in os.walk(src):
        for fn in sorted(files):
            if not fn.endswith((".h", ".cc")):
                continue
            path = os.path.normpath(os.path.relpath(os.path.join(root, fn),
                                                    src))
            if not fn.endswith(".h") and path not in by_file:
                continue  # built by another folder (bench, fuzz drivers)
            me = owner(targets, path, by_file)
            if me is None:
                continue
            allowed = closure(targets, me)
            # A test helper header may use what the folder's tests use.
            if fn.endswith(".h") and "test" in fn:
                for n, t in targets.items():
                    if t["test"] and t["dir"] == targets[me]["dir"]:
                        allowed |= closure(targets, n)
            with open(os.path.join(root, fn), errors="replace") as f:
                text = f.read()
            for line_no, inc in ((text.count("\n", 0, m.start()) + 1,
                                  m.group(1))
                                 for m in INCLUDE.finditer(text)):
                target_path = os.path.normpath(inc)
                if not os.path.exists(os.path.join(src, target_path)):
                    continue
                why = forbidden(path, target_path)
                if why:
                    problems.append(f"src/{path}:{line_no}: includes "
                                    f"\"{inc}\": {why}")
                other = owner(targets, target_path, by_file)
                if other is None or other in allowed:
                    continue
                problems.append(
                    f"src/{path}:{line_no}: includes \"{inc}\" of target "
                    f"{other}, which {me} does not depend on")
    return problems


def self_test(src):
    """A deliberately wrong include must be found; main must pass."""
    tmp = tempfile.mkdtemp(prefix="strag-layering-")
    try:
        copy = os.path.join(tmp, "src")
        shutil.copytree(src, copy)
        base = os.path.join(copy, "base", "str_format.cc")
        with open(base, "a") as f:
            f.write('\n#include "report/report.h"\n')
        found = check(copy)
        if not any("base/str_format.cc" in p and "report" in p
                   for p in found):
            print("self-test: a base -> report include was not found")
            return 1
    finally:
        shutil.rmtree(tmp)
    print("self-test: the wrong include base -> report is reported")
    return 0


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    src = os.path.join(here, "..", "..", "src")
    if len(sys.argv) > 1 and sys.argv[1] == "--self-test":
        return self_test(src)
    if len(sys.argv) > 1:
        src = sys.argv[1]
    problems = check(src)
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} include(s) against the declared dependencies")
        return 1
    print("includes: every one within its target's declared dependencies")
    return 0


if __name__ == "__main__":
    sys.exit(main())
