#!/usr/bin/env python3
"""redisson_latch_peer.py - a waiter of an RCountDownLatch that locklab
did not write, speaking Redisson's protocol, so a test can make it await
the latches a locklab run sets and counts down.

Written from Redisson's source (RedissonCountDownLatch.await and
getCount, getChannelName, CountDownLatchPubSub), never from locklab's
code: getCount is GET of the latch's name (a missing key is 0); await
returns at once at 0; else it SUBSCRIBEs on a second connection to
`redisson_countdownlatch__channel__{<name>}`, reads the count again, and
while it is above 0 waits for the zero message "0" (the new-count message
"1" wakes no waiter: onMessage runs the listeners on the zero alone),
reading the count again after it; then UNSUBSCRIBE.

A round: the peer waits for the latch to be set (polls GET every 5 ms:
the harness's, not Redisson's, since a missing latch is open), then
awaits it. It prints one summary line:
  redisson_latch_peer latch=... rounds=.. passes=.. woken_zero=..
  woken_new=.. errors=.. complete=true|false

Python 3 standard library only; the process exits within --deadline-s.
exit: 0 done, 1 a reply the protocol does not allow, 2 bad usage, 3 cut
short by the deadline or the server.
"""

import argparse
import os
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from redisson_peer import Deadline, ProtocolError, Resp  # noqa: E402

ZERO_COUNT_MESSAGE = b"0"
NEW_COUNT_MESSAGE = b"1"


def channel_of(name):
    """RedissonCountDownLatch.getChannelName: braces whatever the name."""
    return "redisson_countdownlatch__channel__{" + name + "}"


def get_count(conn, name):
    v = conn.call("GET", name)
    return 0 if v is None else int(v)


class Waiter:
    def __init__(self, a, deadline_ns):
        self.a = a
        self.conn = Resp(a.host, a.port, deadline_ns, 2000)
        self.sub = Resp(a.host, a.port, deadline_ns, 2000)
        self.channel = channel_of(a.latch)
        self.stats = dict.fromkeys(["rounds", "passes", "woken_zero", "woken_new", "errors"], 0)

    def armed(self):
        """Until the latch is set (a round begins); False at the deadline."""
        while get_count(self.conn, self.a.latch) <= 0:
            time.sleep(0.005)
        return True

    def wait_message(self):
        """One message on the channel: the zero (True) or another (False)."""
        while True:
            m = self.sub.read(wait_ms=60000)
            if isinstance(m, list) and len(m) == 3 and m[0] == b"message":
                if m[2] == ZERO_COUNT_MESSAGE:
                    self.stats["woken_zero"] += 1
                    return True
                if m[2] == NEW_COUNT_MESSAGE:
                    self.stats["woken_new"] += 1
                    return False
                raise ProtocolError("unknown latch message %r" % m[2])

    def await_zero(self):
        name = self.a.latch
        if get_count(self.conn, name) == 0:
            return
        self.sub.send("SUBSCRIBE", self.channel)
        ack = self.sub.read()
        if not (isinstance(ack, list) and ack[0] == b"subscribe"):
            raise ProtocolError("SUBSCRIBE answered %r" % ack)
        try:
            while get_count(self.conn, name) > 0:
                while not self.wait_message():
                    pass  # a new count: CountDownLatchPubSub runs no listener
        finally:
            self.sub.send("UNSUBSCRIBE", self.channel)
            while True:
                r = self.sub.read()
                if isinstance(r, list) and r[0] == b"unsubscribe":
                    break

    def run(self):
        for _ in range(self.a.rounds):
            self.armed()
            self.stats["rounds"] += 1
            self.await_zero()
            self.stats["passes"] += 1


def main(argv):
    p = argparse.ArgumentParser()
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--latch", required=True)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--deadline-s", type=float, default=30)
    a = p.parse_args(argv)
    deadline_ns = time.monotonic_ns() + int(a.deadline_s * 1e9)
    rc, w = 0, None
    try:
        w = Waiter(a, deadline_ns)
        w.run()
    except ProtocolError as e:
        print("redisson_latch_peer: %s" % e, file=sys.stderr)
        rc = 1
    except (Deadline, socket.timeout, ConnectionError, OSError) as e:
        print("redisson_latch_peer: cut short: %r" % e, file=sys.stderr)
        rc = 3
    s = w.stats if w else {}
    print(
        "redisson_latch_peer latch=%s %s complete=%s"
        % (a.latch, " ".join("%s=%d" % kv for kv in s.items()), "true" if rc == 0 else "false")
    )
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
