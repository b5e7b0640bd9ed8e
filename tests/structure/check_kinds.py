#!/usr/bin/env python3
"""Every kind, held to its registries.

The docs' lists of kinds (each marked `<!-- every KIND -->`, the form in
tests/lib/kind_lists.py: docs/algorithms.md's table of algorithms,
docs/scenario.md's workloads, faults and servers, docs/history.md's
faults) are the checked-in lists of every kind of the build; `locklab list
KIND` prints what the registries hold. Each list must name what that
prints (faults in its order, their numbers in history files): a name
missing from either side fails, saying which, so a kind cannot disappear
unseen. Then what other tools read must name every kind that list prints,
and no other: `locklab help run`, whose --algorithm must list every
algorithm. The schemas name a workload or a fault type by a pattern
(report.schema.json's workload_type and fault_type, compare.schema.json's
workload), which every name `locklab list` prints must match, so a new
kind touches no schema. (The fuzz dictionaries
take the names from `locklab list` when scripts/fuzz.sh runs.)

usage: check_kinds.py SOURCE_DIR LOCKLAB_BIN
"""
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import kind_lists  # noqa: E402  (tests/lib)

KINDS = kind_lists.KINDS
# (schema, the JSON pointer of a kind's name, the kind): a string pattern,
# not an enum, so a new kind touches no schema; every name must match it
SCHEMA_NAMES = (
    ("docs/schema/report.schema.json", "/$defs/workload_type", "workloads"),
    ("docs/schema/report.schema.json", "/$defs/fault_type", "faults"),
    ("docs/schema/compare.schema.json", "/properties/workload", "workloads"),
)

def listed(binary, kind):
    out = subprocess.run([binary, "list", kind], stdout=subprocess.PIPE, text=True, check=True)
    return out.stdout.split()


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
    problems, lists = [], 0
    for where, title, wrong in kind_lists.check(root, names.get):
        problems += ["%s: %s: %s" % (where, title, w) for w in wrong]
        lists += 1
    for rel, path, kind in SCHEMA_NAMES:
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            field = pointer(json.load(f), path)
        if "enum" in field or "pattern" not in field:
            problems.append("%s %s: a pattern every %s name matches, not a list" % (rel, path, kind))
            continue
        problems += ["%s %s: `locklab list %s` prints %s, which its pattern %s refuses" % (
            rel, path, kind, n, field["pattern"]) for n in names[kind]
            if not re.fullmatch(field["pattern"], n)]
    problems += differ("algorithms", names["algorithms"], help_algorithms(binary),
                       "`locklab help run` --algorithm", True)
    for p in problems:
        print("FAIL: " + p)
    if problems:
        return 1
    print("ok: the docs' %d lists of kinds, %d schema fields and `help run` name every kind "
          "`locklab list` prints (%s)" % (lists, len(SCHEMA_NAMES), ", ".join(
              "%d %s" % (len(names[k]), k) for k in KINDS)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
