"""The docs' lists of kinds, and how each differs from `locklab list`.

A comment `<!-- every KIND -->` in README.md or docs/*.md (KIND as
`locklab list KIND` takes it: algorithms, workloads, faults, servers)
marks a list of every name of that kind; `<!-- every KIND but NAME, ...
-->` leaves those out (each must be one of the kind). On a line of its own
before a table, the list is the table's first column, a `code` name a row;
inside a line, it is the `code` spans after the comment (quotes inside
them dropped: `"kill"`) up to the end of its table cell or paragraph, or to
a `<!-- /every -->` before that. Marked lines inside fenced blocks, and a
marker quoted in `code` (as architecture.md names the convention), mark
nothing.

These lists are the checked-in lists of every kind: test_kinds and
test_docs both hold them to `locklab list`, so a kind gone from the build,
or from a list, fails. Faults keep the registry's order in every full list:
a fault's place there is its number in history files.
"""
import glob
import itertools
import os
import re

KINDS = ("algorithms", "workloads", "faults", "servers", "suites")
ORDERED = ("faults",)
EVERY_RE = re.compile(r"<!--\s*every\s+(\w+)(?:\s+but\s+(.*?))?\s*-->")
EVERY_END = "<!-- /every -->"


def doc_paths(root):
    """README.md and docs/*.md, relative to root, in a fixed order."""
    docs = sorted(os.path.relpath(p, root) for p in glob.glob(os.path.join(root, "docs", "*.md")))
    return ["README.md"] + docs


def names_after(lines, k, m):
    """The names the list marked by m on line k of lines gives."""
    line = lines[k]
    if line.strip() == m.group(0):  # a table follows: its first column
        rows = itertools.dropwhile(lambda l: not l.strip(), lines[k + 1:])
        rows = list(itertools.takewhile(lambda l: l.startswith("|"), rows))[2:]
        return [(re.findall(r"`([^`]+)`", r.split("|")[1]) or [""])[0] for r in rows]
    rest = line[m.end():]
    if line.startswith("|"):  # to the end of its cell, a | outside `code`
        rest = re.match(r"(?:`[^`]*`|[^|`])*", rest).group(0)
    else:  # to the end of its paragraph
        more = itertools.takewhile(lambda l: l.strip(), lines[k + 1:])
        rest = "\n".join([rest] + list(more))
    rest = rest.split(EVERY_END, 1)[0]
    return [n.strip('"') for n in re.findall(r"`([^`]+)`", rest)]


def marked(rel, lines):
    """Each list marked in one doc: (where, kind, but, names, marker)."""
    fenced = False
    for k, line in enumerate(lines):
        fenced ^= line.startswith("```")
        bare = re.sub(r"`[^`]*`", lambda q: " " * len(q.group(0)), line)
        for m in [] if fenced else EVERY_RE.finditer(bare):
            but = [b.strip() for b in (m.group(2) or "").split(",") if b.strip()]
            yield "%s:%d" % (rel, k + 1), m.group(1), but, names_after(lines, k, m), m.group(0)


def wrong_names(kind, listed, but, got):
    """How one list differs from `locklab list KIND` (listed): [] when it does not."""
    want = [n for n in listed if n not in but]
    out = ["%s: not a name `locklab list %s` prints" % (n, kind) for n in but if n not in listed]
    out += ["missing: %s (`locklab list %s` prints it)" % (n, kind) for n in want if n not in got]
    out += ["one more: %s (`locklab list %s` does not print it%s)" % (
        n, kind, ", or it is left out by `but`" if n in but else "") for n in got if n not in want]
    if not out and kind in ORDERED and not but and got != want:
        out.append("in another order than `locklab list %s`: %s" % (kind, " ".join(got)))
    return out


def check(root, listed_of):
    """Every marked list of the docs under root against listed_of(KIND).

    Yields (where, title, problems); a KIND no doc marks yields once with
    where "docs"."""
    seen = set()
    for rel in doc_paths(root):
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            lines = f.read().split("\n")
        for where, kind, but, got, marker in marked(rel, lines):
            if kind not in KINDS:
                yield where, marker, ["KIND is one of " + ", ".join(KINDS)]
                continue
            seen.add(kind)
            title = "every %s: %d named%s" % (kind, len(got),
                                              " (but %s)" % ", ".join(but) if but else "")
            yield where, title, wrong_names(kind, listed_of(kind), but, got)
    for kind in KINDS:
        if kind not in seen:
            yield "docs", "no `<!-- every %s -->` list in the docs" % kind, ["none"]
