#!/usr/bin/env python3
"""Every kind, held to its registries.

tests/structure/kinds.txt lists every kind of the build (lines `KIND NAME`,
in the registry's order); `locklab list KIND` prints what the registries
hold. The two must name the same, in the same order: a name missing from
either side fails, saying which, so a kind cannot disappear unseen. Then
what other tools read must name every kind that list prints, and no
other: the report schema's enums (report.schema.json's fault_type and
workload type, compare.schema.json's workload), the fuzz dictionaries
(tests/fuzz/*.dict: every name among their words), and `locklab help run`,
whose --algorithm must list every algorithm.

usage: check_kinds.py SOURCE_DIR LOCKLAB_BIN
"""
import json
import os
import re
import subprocess
import sys

KINDS_FILE = "tests/structure/kinds.txt"
KINDS = ("algorithms", "workloads", "faults", "servers")
# (schema, the JSON pointer of an enum, the kind it must list exactly)
SCHEMA_ENUMS = (
    ("docs/schema/report.schema.json", "/$defs/fault_type/enum", "faults"),
    ("docs/schema/report.schema.json", "/$defs/workload/properties/type/enum", "workloads"),
    ("docs/schema/compare.schema.json", "/properties/workload/enum", "workloads"),
)
# (dictionary, the kinds whose every name must be one of its words)
DICTS = (
    ("tests/fuzz/scenario.dict", KINDS),
    ("tests/fuzz/history.dict", ("faults",)),
)


def listed(binary, kind):
    out = subprocess.run([binary, "list", kind], stdout=subprocess.PIPE, text=True, check=True)
    return out.stdout.split()


def read_kinds(root):
    """kinds.txt as {KIND: [NAME, ...]}, and its lines that are not KIND NAME."""
    table, bad = {k: [] for k in KINDS}, []
    with open(os.path.join(root, KINDS_FILE), encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip() or line.startswith("#"):
                continue
            words = line.split()
            if len(words) != 2 or words[0] not in table:
                bad.append("%s:%d: not KIND NAME with KIND one of %s: %r"
                           % (KINDS_FILE, n, ", ".join(KINDS), line.rstrip()))
            else:
                table[words[0]].append(words[1])
    return table, bad


def differ(kind, want, got, where, exact_order):
    """The lines saying how got (in where) differs from locklab's want."""
    out = ["%s: %s names %s, which `locklab list %s` does not print" % (where, kind, n, kind)
           for n in got if n not in want]
    out += ["%s: `locklab list %s` prints %s, which %s does not name" % (where, kind, n, where)
            for n in want if n not in got]
    if not out and exact_order and got != want:
        out.append("%s: %s in another order than `locklab list %s`: %s" % (
            where, kind, kind, " ".join(got)))
    return out


def pointer(doc, path):
    for part in path.strip("/").split("/"):
        doc = doc[part]
    return doc


def help_algorithms(binary):
    """The names --algorithm lists in `locklab help run`."""
    text = subprocess.run([binary, "help", "run"], stdout=subprocess.PIPE, text=True,
                          check=True).stdout
    m = re.search(r"--algorithm NAME\s+(.*?)\(locklab list", text, re.S)
    return re.findall(r"[a-z][a-z0-9-]*", re.sub(r"\bor\b", ",", m.group(1))) if m else []


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip().split("\n")[-1])
        return 2
    root, binary = sys.argv[1], sys.argv[2]
    names = {k: listed(binary, k) for k in KINDS}
    table, problems = read_kinds(root)
    for kind in KINDS:
        problems += differ(kind, names[kind], table[kind], KINDS_FILE, True)
    for rel, path, kind in SCHEMA_ENUMS:
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            enum = pointer(json.load(f), path)
        problems += differ(kind, names[kind], enum, "%s %s" % (rel, path), False)
    for rel, kinds in DICTS:
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            words = set(re.findall(r'^"\\"(.*)\\""\s*$', f.read(), re.M))
        for kind in kinds:
            problems += ["%s: `locklab list %s` prints %s, which it does not hold (as \"\\\"%s\\\"\")"
                         % (rel, kind, n, n) for n in names[kind] if n not in words]
    problems += differ("algorithms", names["algorithms"], help_algorithms(binary),
                       "`locklab help run` --algorithm", True)
    for p in problems:
        print("FAIL: " + p)
    if problems:
        return 1
    print("ok: %s, %d schema enums, %d dictionaries and `help run` name every kind "
          "`locklab list` prints (%s)" % (KINDS_FILE, len(SCHEMA_ENUMS), len(DICTS), ", ".join(
              "%d %s" % (len(names[k]), k) for k in KINDS)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
