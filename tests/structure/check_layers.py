#!/usr/bin/env python3
"""The layering of docs/architecture.md, held against the code.

Every folder sits on a floor of that page's "Layers" table and may reach
only folders on floors below its own. A folder reaches another when one
of its files includes a header of the other (every include names its
path from the project's root), or when one of its object files calls a
function or reads data that an object file of the other defines (read
from the built objects with nm, so a call through a macro or from an
inline function counts as the compiler saw it). Each pair that reaches
upward must stand in the page's exceptions table with its reason, and
every exception listed must still be needed.

usage: check_layers.py SOURCE_DIR BUILD_DIR [--list]
"""
import collections
import os
import re
import subprocess
import sys

DOC = "docs/architecture.md"
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
ROW = re.compile(r"^\|\s*([^|]*?)\s*\|\s*([^|]*?)\s*\|(?:\s*([^|]*?)\s*\|)?\s*$")
# The targets whose objects make locklab; bench/ and tests/ stand beside it.
TARGETS = ("locklab_algorithms.dir", "locklab_core.dir", "locklab.dir")


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def section_rows(text, title):
    """The table rows under the heading `title` of the page, past its head."""
    lines = text.split("\n")
    try:
        at = lines.index(title)
    except ValueError:
        fail("%s has no heading %r" % (DOC, title))
    rows = []
    for line in lines[at + 1:]:
        if line.startswith("#"):
            break
        m = ROW.match(line)
        if m and not set(m.group(1)) <= set("-: "):
            rows.append(m.groups())
    return rows[1:]  # the head


def read_layers(root):
    text = open(os.path.join(root, DOC)).read()
    floor = {}
    for number, folders, _ in section_rows(text, "### The floors"):
        for name in re.findall(r"`([^`]+)`", folders):
            floor[name] = int(number)
    if not floor:
        fail("%s: the floors table names no folder" % DOC)
    allowed = {}
    for pair, why, _ in section_rows(text, "### Exceptions"):
        m = re.fullmatch(r"`([^`]+)` -> `([^`]+)`", pair)
        if not m or not why:
            fail("%s: an exception is `FROM` -> `TO` with its reason: %r" % (DOC, pair))
        allowed[(m.group(1), m.group(2))] = why
    return floor, allowed


def folder_of(rel, floor):
    """The deepest folder of the table that holds rel ("sim/main.c" is in "sim")."""
    parts = rel.split("/")[:-1]
    while parts:
        name = "/".join(parts)
        if name in floor:
            return name
        parts.pop()
    return None


def includes(root, floor, edges):
    for top in sorted({f.split("/")[0] for f in floor}):
        for d, _, files in os.walk(os.path.join(root, top)):
            for f in sorted(files):
                if not f.endswith((".c", ".h")):
                    continue
                path = os.path.join(d, f)
                rel = os.path.relpath(path, root)
                src = folder_of(rel, floor)
                for n, line in enumerate(open(path, errors="replace"), 1):
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    to = folder_of(m.group(1), floor)
                    if to and src and to != src:
                        edges[(src, to)].append("%s:%d includes %s" % (rel, n, m.group(1)))


def objects(root, build):
    for d, _, files in os.walk(os.path.join(build, "CMakeFiles")):
        target = next((t for t in TARGETS if ("/" + t) in d + "/"), None)
        for f in files:
            if target and f.endswith(".c.o"):
                path = os.path.join(d, f)
                rel = path.split(target + "/", 1)[1][: -len(".o")]
                # a build folder keeps the object of a file since moved
                # or removed: only the sources there are now count
                if rel.startswith("generated/") or os.path.exists(os.path.join(root, rel)):
                    yield path, rel


def calls(root, build, floor, edges):
    defined, used = {}, []
    for obj, rel in objects(root, build):
        src = folder_of(rel, floor)
        if src is None:
            fail("%s: %s is on no floor of the table" % (DOC, rel))
        out = subprocess.run(["nm", "-P", obj], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            name, kind = line.split()[:2]
            if kind == "U":
                used.append((src, rel, name))
            elif kind in "TDBRCV":
                defined[name] = src
    if not defined:
        fail("no objects of %s under %s: build first" % (", ".join(TARGETS), build))
    for src, rel, name in used:
        to = defined.get(name)
        if to and to != src:
            edges[(src, to)].append("%s calls %s" % (rel, name))


def main():
    if len(sys.argv) < 3:
        fail(__doc__.strip().split("\n")[-1])
    root, build = sys.argv[1], sys.argv[2]
    floor, allowed = read_layers(root)
    edges = collections.defaultdict(list)
    includes(root, floor, edges)
    calls(root, build, floor, edges)
    upward = sorted(p for p in edges if floor[p[0]] <= floor[p[1]])
    print("%d pairs of folders reach one another; %d reach a floor not below their own, "
          "%d of them listed as exceptions" %
          (len(edges), len(upward), sum(p in allowed for p in upward)))
    if "--list" in sys.argv:
        for p in upward:
            print("  %s -> %s: %s" % (p[0], p[1], "; ".join(sorted(set(edges[p]))[:3])))
    bad = [p for p in upward if p not in allowed]
    stale = [p for p in allowed if p not in upward]
    for src, to in bad:
        print("%s (floor %d) reaches %s (floor %d): %s" %
              (src, floor[src], to, floor[to], "; ".join(sorted(set(edges[(src, to)]))[:3])))
    for src, to in stale:
        print("%s lists %s -> %s as an exception, and no longer needs it" % (DOC, src, to))
    if bad or stale:
        fail("the layering of %s does not hold" % DOC)
    print("ok: every folder reaches only the floors below it, but the %d exceptions %s lists" %
          (len(allowed), DOC))


if __name__ == "__main__":
    main()
