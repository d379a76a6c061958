#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The documentation stands alone in a clone (issue 14).

Links: README.md, docs/**/*.md and the READMEs of src/, agents/, bench/ and
web/ are scanned for markdown links (`[text](target)`) and for file paths in
inline code (`src/x/y.h`, `docs/formats/ops-csv.md`, `tests/...`,
`examples/...`, `tools/...`, `scripts/...`, `bench/...`, `agents/...`). Each
must resolve to a file or folder of the repository (a link relative to the
file that holds it, a code path relative to the repository root or to that
file's folder). Nothing may point outside the repository except http(s)
URLs and `../shared/data` (where the tests and benchmarks find the
published traces); documents that are not in the repository (`*.md` names
that no file has, the design notes' `whatif-spec`, `DESIGN.md`, ...) fail.
Fenced code blocks are not scanned.

Usage: every flag that a command's parser accepts (the FlagSpec of the file
that defines its Run function in src/cli, with the shared report and limit
flags it adds) appears in `strag help COMMAND`.

usage: doc_links_test.py ROOT                  links; exit 0, or 1 naming
                                               each file:line and reference
       doc_links_test.py --usage STRAG ROOT    every accepted flag in the help
       doc_links_test.py --self-test           both checks catch bad input
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

LINK = re.compile(r"!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
CODE = re.compile(r"`([^`\n]+)`")
TOP_DIRS = ("docs", "src", "tests", "examples", "tools", "scripts", "bench",
            "agents", "web", "cmake", ".ci")
CODE_PATH = re.compile(r"^(?:\./)?(?:%s)/[A-Za-z0-9_.+/-]*$" %
                       "|".join(re.escape(d) for d in TOP_DIRS))
MD_NAME = re.compile(r"(?<![\w./-])([A-Za-z0-9_][\w.-]*\.md)\b")
# Documents of the design notes outside the repository, by the names the
# docs once cited them with.
OUTSIDE = re.compile(r"\b(whatif-spec|whatif-method|house-style|"
                     r"live-monitoring|peer-tools|wait-states-and-counterfactuals|"
                     r"DESIGN\.md|shared/reference)\b")
ALLOWED_OUTSIDE = "../shared/data"
SKIP_DIRS = {".git", "node_modules", "__pycache__"}


def doc_files(root):
    """README.md, docs/**/*.md and the module READMEs, sorted."""
    out = []
    if os.path.exists(os.path.join(root, "README.md")):
        out.append("README.md")
    for top in ("docs", "src", "agents", "bench", "web", "tools", "examples",
                "python"):
        for dirpath, dirs, files in os.walk(os.path.join(root, top)):
            dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
            for f in sorted(files):
                if top == "docs" and f.endswith(".md") or f == "README.md":
                    out.append(os.path.relpath(os.path.join(dirpath, f), root))
    return out


def md_names(root):
    """Base names of every markdown file of the repository."""
    names = set()
    for dirpath, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs
                   if d not in SKIP_DIRS and not d.startswith("build")]
        names.update(f for f in files if f.endswith(".md"))
    return names


def inside(root, path):
    root = os.path.realpath(root)
    path = os.path.realpath(path)
    return path == root or path.startswith(root + os.sep)


def outside_allowed(root, path):
    data = os.path.realpath(os.path.join(root, ALLOWED_OUTSIDE))
    path = os.path.realpath(path)
    return path == data or path.startswith(data + os.sep)


def check_target(root, doc, target, base_dirs):
    """A problem with one path reference, or None."""
    target = target.split("#", 1)[0]
    target = re.sub(r":\d+(?::\d+)?$", "", target)  # file.cc:123
    if not target:
        return None
    for base in base_dirs:
        path = os.path.normpath(os.path.join(root, base, target))
        if not inside(root, path):
            if outside_allowed(root, path):
                return None
            continue
        if os.path.exists(path):
            return None
    for base in base_dirs:
        path = os.path.normpath(os.path.join(root, base, target))
        if not inside(root, path) and not outside_allowed(root, path):
            return "points outside the repository: %s" % target
    return "does not resolve in the repository: %s" % target


def check_doc(root, doc, names):
    problems = []
    here = os.path.dirname(doc)
    with open(os.path.join(root, doc), encoding="utf-8") as f:
        lines = f.read().split("\n")
    fenced = False
    for number, line in enumerate(lines, 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if fenced:
            continue

        def report(what):
            problems.append("%s:%d: %s" % (doc, number, what))

        for m in LINK.finditer(line):
            target = m.group(1)
            if re.match(r"^(https?:|mailto:|#)", target):
                continue
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):
                report("link with a scheme other than http(s): %s" % target)
                continue
            problem = check_target(root, doc, target, [here])
            if problem:
                report("link " + problem)
        for m in CODE.finditer(line):
            span = m.group(1).strip()
            if span.startswith(ALLOWED_OUTSIDE):
                continue
            if span.startswith("../") and "/" in span[3:]:
                if not re.search(r"[*<>{}… ]", span):
                    problem = check_target(root, doc, span, [here])
                    if problem:
                        report("code path " + problem)
                continue
            if not CODE_PATH.match(span) or re.search(r"[*<>{}…]", span):
                continue
            problem = check_target(root, doc, span, ["", here])
            if problem:
                report("code path " + problem)
        text = LINK.sub(" ", line)
        for m in MD_NAME.finditer(text):
            if m.group(1) not in names:
                report("names a document that is not in the repository: %s"
                       % m.group(1))
        for m in OUTSIDE.finditer(line):
            report("cites a document outside the repository: %s" % m.group(1))
    return problems


def unlisted_docs(root):
    """docs/**/*.md that README.md does not link to."""
    readme = os.path.join(root, "README.md")
    if not os.path.exists(readme):
        return []
    linked = set()
    for target in LINK.findall(read(readme)):
        linked.add(os.path.normpath(target.split("#", 1)[0]))
    return ["README.md: the documentation list does not name %s" % doc
            for doc in doc_files(root)
            if doc.startswith("docs" + os.sep) and doc not in linked]


def check_links(root):
    names = md_names(root)
    problems = []
    for doc in doc_files(root):
        problems += check_doc(root, doc, names)
    return problems + unlisted_docs(root)


# --- usage --------------------------------------------------------------

SPEC_BLOCK = re.compile(r"\.(with_value|booleans)\s*=\s*\{([^}]*)\}", re.S)
ADD_FN = re.compile(r"void\s+(Add\w+Flags)\s*\(\s*FlagSpec\s*\*\s*\w+\s*\)\s*"
                    r"\{(.*?)\n\}", re.S)
COMMAND = re.compile(r"\{\s*\"([a-z-]+)\"\s*,\s*\w+\s*,\s*strag::cli::(\w+)\s*\}")
STRING = re.compile(r"\"([a-z0-9-]+)\"")


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def accepted_flags(cli_dir):
    """command -> sorted flags its parser accepts, from the sources."""
    sources = {f: read(os.path.join(cli_dir, f))
               for f in sorted(os.listdir(cli_dir)) if f.endswith(".cc")}
    adders = {}
    for text in sources.values():
        for name, body in ADD_FN.findall(text):
            adders[name] = set(STRING.findall(body))
    commands = [c for text in sources.values() for c in COMMAND.findall(text)]
    if not commands:
        raise SystemExit("no command table in %s" % cli_dir)
    out = {}
    for command, run in commands:
        files = [f for f, t in sources.items()
                 if re.search(r"Status\s+%s\s*\(" % run, t)]
        if len(files) != 1:
            raise SystemExit("%s: defined in %d files" % (run, len(files)))
        text = sources[files[0]]
        flags = set()
        for _, body in SPEC_BLOCK.findall(text):
            flags.update(STRING.findall(body))
        for name, added in adders.items():
            if re.search(r"\b%s\s*\(" % name, text):
                flags.update(added)
        if not flags and "FlagSpec" in text:
            raise SystemExit("%s: a FlagSpec this check cannot read" % files[0])
        out[command] = sorted(flags)
    return out


def missing_in_help(flags, help_text):
    shown = set(re.findall(r"--([a-z0-9][a-z0-9-]*)", help_text))
    return [f for f in flags if f not in shown]


def check_usage(strag, root):
    problems = []
    for command, flags in accepted_flags(os.path.join(root, "src", "cli")).items():
        run = subprocess.run([strag, "help", command], capture_output=True,
                             text=True, timeout=60)
        if run.returncode != 0:
            problems.append("strag help %s: exit %d" % (command, run.returncode))
            continue
        for flag in missing_in_help(flags, run.stdout):
            problems.append("strag help %s: accepts --%s but does not list it"
                            % (command, flag))
    return problems


# --- self-test ----------------------------------------------------------

def self_test():
    tmp = tempfile.mkdtemp(prefix="strag-doclinks-")
    failures = []
    try:
        os.makedirs(os.path.join(tmp, "repo", "docs", "formats"))
        os.makedirs(os.path.join(tmp, "repo", "src", "x"))
        os.makedirs(os.path.join(tmp, "shared", "data"))
        open(os.path.join(tmp, "repo", "src", "x", "y.h"), "w").close()
        with open(os.path.join(tmp, "repo", "docs", "unlisted.md"), "w") as f:
            f.write("# not in the README\n")
        with open(os.path.join(tmp, "repo", "docs", "formats", "ok.md"), "w") as f:
            f.write("# ok\n[back](../../README.md), `src/x/y.h`, "
                    "[data](../../../shared/data)\n")
        bad = [
            "[a](docs/missing.md)",
            "`src/x/missing.h`",
            "[outside](../shared/reference/whatif-spec.md)",
            "see `whatif-spec` §3",
            "in DESIGN.md",
            "`../elsewhere/notes.txt`",
        ]
        good = [
            "[ok](docs/formats/ok.md#top)", "`src/x/y.h`", "`src/x/y.h:12`",
            "`../shared/data/osdi25-whatif`", "[web](https://example.org/a)",
            "`docs/formats/`", "ok.md", "`tests/*.py`",
        ]
        with open(os.path.join(tmp, "repo", "README.md"), "w") as f:
            for line in good:
                f.write(line + "\n")
            f.write("```\n[in a fence](nowhere.md)\n```\n")
            for line in bad:
                f.write(line + "\n")
        problems = check_links(os.path.join(tmp, "repo"))
        first_bad = len(good) + 4  # the line of bad[0]
        unlisted = [p for p in problems if "does not name" in p]
        problems = [p for p in problems if "does not name" not in p]
        lines = sorted({int(p.split(":")[1]) for p in problems
                        if p.startswith("README.md:")})
        want = list(range(first_bad, first_bad + len(bad)))
        if unlisted != ["README.md: the documentation list does not name "
                        "docs/unlisted.md"]:
            failures.append("links: the unlisted document was not caught: %s"
                            % unlisted)
        if lines != want or any(not p.startswith("README.md:")
                                for p in problems):
            failures.append("links: expected problems on README.md lines %s, "
                            "got:\n  %s" % (want, "\n  ".join(problems)))
    finally:
        shutil.rmtree(tmp)

    # Usage: a parser that accepts a flag the help does not show.
    tmp = tempfile.mkdtemp(prefix="strag-usage-")
    try:
        with open(os.path.join(tmp, "main.cc"), "w") as f:
            f.write('constexpr Command kCommands[] = {\n'
                    '    {"demo", DemoHelp, strag::cli::RunDemo},\n};\n')
        with open(os.path.join(tmp, "shared_flags.cc"), "w") as f:
            f.write("void AddSharedFlags(FlagSpec* spec) {\n"
                    '  spec->with_value.insert("shared");\n}\n')
        with open(os.path.join(tmp, "demo_command.cc"), "w") as f:
            f.write("Status RunDemo(const std::vector<std::string>& args) {\n"
                    "  FlagSpec spec{.with_value = {\"alpha\", \"beta\"},\n"
                    "                .booleans = {\"gamma\"}};\n"
                    "  AddSharedFlags(&spec);\n}\n")
        flags = accepted_flags(tmp)
        if flags != {"demo": ["alpha", "beta", "gamma", "shared"]}:
            failures.append("usage: parsed %s" % flags)
        missing = missing_in_help(flags["demo"],
                                  "usage: demo [--alpha A] [--beta/--gamma]\n")
        if missing != ["shared"]:
            failures.append("usage: expected --shared missing, got %s" % missing)
    finally:
        shutil.rmtree(tmp)

    for f in failures:
        print("self-test: " + f)
    if not failures:
        print("self-test: bad links, outside documents and an unlisted flag "
              "are caught")
    return 1 if failures else 0


def main(argv):
    if argv[1:2] == ["--self-test"]:
        return self_test()
    if argv[1:2] == ["--usage"] and len(argv) == 4:
        problems = check_usage(argv[2], argv[3])
        what = "flag(s) missing from the help"
    elif len(argv) == 2:
        problems = check_links(argv[1])
        what = "reference(s) that do not resolve"
    else:
        print(__doc__, file=sys.stderr)
        return 2
    for p in problems:
        print(p)
    if problems:
        print("%d %s" % (len(problems), what))
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
