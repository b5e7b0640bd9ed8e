#!/usr/bin/env python3
"""monitor_check.py - what MONITOR showed the clients of a Redis Cluster
send, held to Redisson's RLock protocol as tests/fixtures/redisson_wire.json
pins it from Redisson's source at a named commit; with --latch, what
locklab's latch sent, held to the fixture's RCountDownLatch.

Each EVAL or EVALSHA (its body from the EVAL itself, or from the SCRIPT
LOAD that MONITOR showed before it) is matched to one of the fixture's
scripts by the Redis commands its body calls, in order; then its KEYS and
ARGV are held to that script's: the lock name, the channel and latch built
from it as Redisson builds them, a lease and a latch lifetime that are
numbers, the holder's field, the unlock message, the publish command
expected. An unlock is followed by a DEL of its latch.

The clients are told apart by their field: locklab's is
"<16 hex digits>:<client>:<life>:1" (one Redisson thread of one client),
node-redisson's "<uuid>:<uuid>". Other commands (the workload's own
reads and writes, CLUSTER SLOTS, ...) are not the lock's and are skipped.

  monitor_check.py FIXTURE --publish spublish|publish --client locklab|node-redisson
                   [--client ...] MONITOR_LOG...
prints one line per client:
  monitor: locklab: 812 acquire, 790 unlock, 3 renew, 790 latch DEL; each as RedissonLock at 66863978
exit 0 when every one of them matched and each named client sent at
least one acquire and one unlock, 1 otherwise (the first mismatches
printed), 2 bad usage.

  monitor_check.py FIXTURE --latch MONITOR_LOG...
holds every trySetCount, countDown and delete script (matched by the calls its
body makes, in order), every GET of a latch's name and every SUBSCRIBE and
UNSUBSCRIBE of a latch channel to the fixture's countdownlatch: the
channel built from the name as Redisson builds it, the messages, the
count a number, PUBLISH. It prints
  monitor: latch: 40 trySetCount, 120 countDown, 310 getCount, 90 SUBSCRIBE, 90 UNSUBSCRIBE, 1 delete; each as RedissonCountDownLatch at 66863978
and exits 0 when all matched and each of the first five was seen, 1
otherwise.
"""

import argparse
import hashlib
import json
import re
import sys

LINE = re.compile(r'^\d+\.\d+ \[\d+ [^\]]+\] (.*)$')
ARG = re.compile(r'"((?:[^"\\]|\\.)*)"')
CALL = re.compile(r"redis\.call\(\s*(?:'(\w+)'|(ARGV\[\d+\]))")
FIELD = {
    "locklab": re.compile(r"^[0-9a-f]{16}:\d+:\d+:1$"),
    "node-redisson": re.compile(r"^[0-9a-f-]{36}:[0-9a-f-]{36}$"),
}
REQUEST_ID = {"locklab": re.compile(r"^[0-9a-f]{32}$"), "node-redisson": re.compile(r"^.+$")}


def unescape(s):
    """MONITOR's quoting: \\" \\\\ \\n \\r \\t and \\xHH."""
    out, i = bytearray(), 0
    raw = s.encode("latin-1", "backslashreplace")
    while i < len(raw):
        c = raw[i]
        if c == 0x5C and i + 1 < len(raw):
            n = chr(raw[i + 1])
            if n == "x" and i + 3 < len(raw):
                out.append(int(raw[i + 2 : i + 4], 16))
                i += 4
                continue
            out += {"n": b"\n", "r": b"\r", "t": b"\t", "a": b"\a", "b": b"\b"}.get(n, n.encode())
            i += 2
            continue
        out.append(c)
        i += 1
    return out.decode("utf-8", "replace")


def commands(paths):
    for p in paths:
        with open(p, encoding="latin-1") as f:
            for line in f:
                m = LINE.match(line.rstrip("\n"))
                if m:
                    yield [unescape(a) for a in ARG.findall(m.group(1))]


def prefix_name(prefix, name):
    return "%s:%s" % (prefix, name) if "{" in name else "%s:{%s}" % (prefix, name)


def calls_of(body):
    return [a or b for a, b in CALL.findall(body)]


class Check:
    def __init__(self, fixture, publish, clients):
        self.fx = fixture
        self.publish = publish
        self.clients = clients
        self.by_calls = {tuple(s["calls"]): n for n, s in fixture["scripts"].items()}
        self.sha = {}
        self.count = {c: dict.fromkeys(["acquire", "unlock", "renew", "del"], 0) for c in clients}
        self.latches = {c: set() for c in clients}
        self.bad = []

    def wrong(self, what):
        if len(self.bad) < 20:
            self.bad.append(what)

    def feed(self, argv):
        if not argv:
            return
        cmd = argv[0].upper()
        if cmd == "SCRIPT" and len(argv) == 3 and argv[1].upper() == "LOAD":
            self.sha[hashlib.sha1(argv[2].encode()).hexdigest()] = argv[2]
        elif cmd in ("EVAL", "EVALSHA") and len(argv) >= 3:
            body = argv[1] if cmd == "EVAL" else self.sha.get(argv[1].lower())
            if cmd == "EVAL":
                self.sha[hashlib.sha1(body.encode()).hexdigest()] = body
            if body is None:
                return self.wrong("EVALSHA %s of a script MONITOR never showed loaded" % argv[1])
            n = int(argv[2])
            self.script(body, argv[3 : 3 + n], argv[3 + n :])
        elif cmd == "DEL" and len(argv) == 2:
            for c in self.clients:
                if argv[1] in self.latches[c]:
                    self.latches[c].discard(argv[1])
                    self.count[c]["del"] += 1

    def client_of(self, field):
        for c in self.clients:
            if FIELD[c].match(field):
                return c
        return None

    def script(self, body, keys, args):
        name = self.by_calls.get(tuple(calls_of(body)))
        if name is None:
            return  # not one of RLock's (a workload's own script)
        field = args[1] if name in ("acquire", "renew") else args[2] if len(args) > 2 else ""
        who = self.client_of(field)
        if who is None:
            return  # another client's (a peer beside the one checked)
        getattr(self, "check_" + name)(who, keys, args)
        self.count[who][name] += 1

    def check_acquire(self, who, keys, args):
        if len(keys) != 1 or len(args) != 2 or not args[0].isdigit():
            self.wrong("%s acquire: KEYS %r ARGV %r, not [<name>] [<lease ms>, <field>]" % (who, keys, args))

    def check_unlock(self, who, keys, args):
        if len(keys) != 3 or len(args) != 5:
            return self.wrong("%s unlock: %d KEYS, %d ARGV (3 and 5 expected)" % (who, len(keys), len(args)))
        name = keys[0]
        want_channel = prefix_name("redisson_lock__channel", name)
        head = prefix_name("redisson_unlock_latch", name) + ":"
        if keys[1] != want_channel:
            self.wrong("%s unlock of %s: channel %r, Redisson's is %r" % (who, name, keys[1], want_channel))
        if not keys[2].startswith(head) or not REQUEST_ID[who].match(keys[2][len(head) :]):
            self.wrong("%s unlock of %s: latch %r, not %s<request id>" % (who, name, keys[2], head))
        msg = self.fx["names"]["unlock_message"]
        if args[0] != msg or not args[1].isdigit() or not args[4].isdigit():
            self.wrong("%s unlock of %s: ARGV %r" % (who, name, args))
        if args[3] != self.publish:
            self.wrong("%s unlock of %s: published with %r, expected %r" % (who, name, args[3], self.publish))
        self.latches[who].add(keys[2])

    def check_renew(self, who, keys, args):
        if len(keys) < 1 or len(args) != len(keys) + 1 or not args[0].isdigit():
            self.wrong("%s renew: KEYS %r ARGV %r" % (who, keys, args))


class LatchCheck:
    """Every latch command of the log, held to the fixture's countdownlatch."""

    WHAT = ["trySetCount", "countDown", "getCount", "SUBSCRIBE", "UNSUBSCRIBE"]
    SCRIPTS = {"try_set_count": "trySetCount", "count_down": "countDown", "delete": "delete"}

    def __init__(self, fixture):
        self.fx = fixture["countdownlatch"]
        self.head, tail = self.fx["names"]["channel"].split("<name>")
        assert tail == "}"
        self.by_calls = {tuple(s["calls"]): n for n, s in self.fx["scripts"].items()}
        self.names = set()
        self.sha = {}
        self.count = dict.fromkeys(self.WHAT + ["delete"], 0)
        self.bad = []

    def wrong(self, what):
        if len(self.bad) < 20:
            self.bad.append(what)

    def channel(self, name):
        return self.head + name + "}"

    def feed(self, argv):
        if not argv:
            return
        cmd = argv[0].upper()
        if cmd == "SCRIPT" and len(argv) == 3 and argv[1].upper() == "LOAD":
            self.sha[hashlib.sha1(argv[2].encode()).hexdigest()] = argv[2]
        elif cmd in ("EVAL", "EVALSHA") and len(argv) >= 3:
            body = argv[1] if cmd == "EVAL" else self.sha.get(argv[1].lower())
            if body is None:
                return self.wrong("EVALSHA %s of a script MONITOR never showed loaded" % argv[1])
            n = int(argv[2])
            self.script(calls_of(body), argv[3 : 3 + n], argv[3 + n :])
        elif cmd == "GET" and len(argv) == 2 and argv[1] in self.names:
            self.count["getCount"] += 1
        elif cmd in ("SUBSCRIBE", "UNSUBSCRIBE"):
            for ch in argv[1:]:
                self.subscription(cmd, ch)

    def script(self, calls, keys, args):
        name = self.by_calls.get(tuple(calls))
        if name is None or name not in self.SCRIPTS:
            if name is None and any(c in ("decr", "exists") for c in calls):
                self.wrong("a script calling %r is none of RCountDownLatch's" % calls)
            return
        if len(keys) != 2 or keys[1] != self.channel(keys[0]):
            return self.wrong("%s: KEYS %r, not [<name>, %s]" % (name, keys, self.channel("<name>")))
        self.names.add(keys[0])
        n = self.fx["names"]
        want = {
            "try_set_count": [n["new_count_message"], None, "publish"],
            "count_down": [n["zero_count_message"], "publish"],
            "delete": [n["new_count_message"], "publish"],
        }[name]
        if len(args) != len(want) or any(w is not None and a != w for a, w in zip(args, want)):
            return self.wrong("%s of %s: ARGV %r" % (name, keys[0], args))
        if name == "try_set_count" and not args[1].isdigit():
            return self.wrong("trySetCount of %s: count %r is not a number" % (keys[0], args[1]))
        self.count[self.SCRIPTS[name]] += 1

    def subscription(self, cmd, ch):
        if not ch.startswith(self.head):
            return
        if not ch.endswith("}") or ch[len(self.head) : -1] not in self.names:
            return self.wrong("%s %r: no latch of that name was set or counted down" % (cmd, ch))
        self.count[cmd] += 1


def main_latch(fixture, logs):
    ck = LatchCheck(fixture)
    for argv in commands(logs):
        ck.feed(argv)
    print(
        "monitor: latch: %s; each as RedissonCountDownLatch at %s"
        % (", ".join("%d %s" % (ck.count[w], w) for w in ck.WHAT + ["delete"]), fixture["commit"][:8])
    )
    for w in ck.WHAT:
        if ck.count[w] == 0:
            ck.wrong("no %s seen" % w)
    for b in ck.bad:
        print("monitor: MISMATCH " + b)
    return 1 if ck.bad else 0


def main():
    p = argparse.ArgumentParser()
    p.add_argument("fixture")
    p.add_argument("logs", nargs="+")
    p.add_argument("--latch", action="store_true")
    p.add_argument("--publish", choices=["spublish", "publish"])
    p.add_argument("--client", action="append", choices=sorted(FIELD))
    a = p.parse_args()
    with open(a.fixture) as f:
        fx = json.load(f)
    if a.latch:
        return main_latch(fx, a.logs)
    if not a.publish or not a.client:
        p.error("--publish and --client are required without --latch")
    ck = Check(fx, a.publish, a.client)
    for argv in commands(a.logs):
        ck.feed(argv)
    for c in a.client:
        n = ck.count[c]
        print(
            "monitor: %s: %d acquire, %d unlock, %d renew, %d latch DEL; each as RedissonLock at %s"
            % (c, n["acquire"], n["unlock"], n["renew"], n["del"], fx["commit"][:8])
        )
        if n["acquire"] == 0 or n["unlock"] == 0:
            ck.wrong("%s: no acquire or no unlock seen" % c)
    for b in ck.bad:
        print("monitor: MISMATCH " + b)
    return 1 if ck.bad else 0


if __name__ == "__main__":
    sys.exit(main())
