#!/usr/bin/env python3
"""history_merge.py - merges histories of processes that shared one machine
(their times are all CLOCK_MONOTONIC, docs/history.md) into one history
that `locklab check` judges as a whole: locklab's own run and the
independent clients that contended with it (tests/locks/redisson_peer.py).

  history_merge.py BASE.jsonl OTHER.jsonl... > MERGED.jsonl

The base's start line is kept, widened to cover every file: its mono_ns is
the earliest start (wall_ns moved by as much), its clients the highest
client number seen plus one. Every other line goes in time order (on a tie
the base's first, then the files in the order given). The end line ends at
the latest end, complete only when every file is, with the reasons of
those that are not and the sum of their drops.

A client number used by two files is refused (exit 2): their sections
would be matched as one client's. So is a file that is not a history:
missing start line, a line that is not JSON.
"""

import heapq
import json
import sys


def die(msg):
    print("history_merge: " + msg, file=sys.stderr)
    sys.exit(2)


def read(path):
    start, end, events = None, None, []
    with open(path) as f:
        for no, text in enumerate(f, 1):
            if not text.strip():
                continue
            try:
                o = json.loads(text)
            except ValueError as e:
                die("%s:%d: not JSON: %s" % (path, no, e))
            if not isinstance(o, dict):
                die("%s:%d: not a JSON object" % (path, no))
            if o.get("type") == "start":
                start = o
            elif o.get("type") == "end":
                end = o
            elif start is None:
                die("%s:%d: a line before the start line" % (path, no))
            elif not isinstance(o.get("time"), int):
                die('%s:%d: no integer "time"' % (path, no))
            else:
                events.append(o)
    if start is None:
        die("%s: no start line" % path)
    return start, end, events


def main(paths):
    if len(paths) < 2:
        die("usage: history_merge.py BASE.jsonl OTHER.jsonl...")
    files = [read(p) for p in paths]
    owner = {}  # client number -> the file that uses it
    for path, (start, _, events) in zip(paths, files):
        for e in events:
            p = e.get("process")
            if isinstance(p, int) and owner.setdefault(p, path) != path:
                die("%s: client %d is also a client of %s" % (path, p, owner[p]))
    base = dict(files[0][0])
    clients = [p for p in owner] + [base.get("clients", 0) - 1]
    if base.get("clients") is not None:
        for path, (_, _, events) in zip(paths[1:], files[1:]):
            for e in events:
                p = e.get("process")
                if isinstance(p, int) and p < base["clients"]:
                    die("%s: client %d is one of the base's %d clients" % (path, p, base["clients"]))
    earliest = min(s["mono_ns"] for s, _, _ in files)
    if base.get("wall_ns"):
        base["wall_ns"] -= base["mono_ns"] - earliest
    base["mono_ns"] = earliest
    base["clients"] = max(clients) + 1
    out = [json.dumps(base, separators=(",", ":"))]
    streams = [[(e["time"], i, k, e) for k, e in enumerate(ev)] for i, (_, _, ev) in enumerate(files)]
    last = earliest
    for t, _, _, e in heapq.merge(*streams):
        out.append(json.dumps(e, separators=(",", ":")))
        last = t
    ends = [end for _, end, _ in files]
    complete = all(e is not None and e.get("complete") is True for e in ends)
    end = {"type": "end", "mono_ns": max([last] + [e["mono_ns"] for e in ends if e]), "complete": complete}
    if not complete:
        why = []
        for path, e in zip(paths, ends):
            if e is None:
                why.append("%s: no end line" % path)
            elif e.get("complete") is not True:
                why.append("%s: %s" % (path, e.get("reason", "incomplete")))
        end["reason"] = "; ".join(why)
    end["dropped"] = sum(e.get("dropped", 0) for e in ends if e)
    out.append(json.dumps(end, separators=(",", ":")))
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
