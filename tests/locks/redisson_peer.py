#!/usr/bin/env python3
"""redisson_peer.py - a second RLock client, independent of locklab, that
speaks Redisson's protocol on the wire, so a test can make it and locklab
contend on one lock and judge both from one merged history.

Written from Redisson's own source (RedissonLock's acquire and unlock
scripts, RedissonBaseLock's names, RedissonObject.prefixName, LockPubSub,
renewal/LockTask's renew script), never from locklab's code: the point is
that two implementations read from the same published protocol agree.

What it does on the wire, as RedissonLock does:
- the lock is a hash named exactly the lock name; our field is
  `<uuid>:<thread id>` (one uuid4 per process, the worker's native thread
  id); its value is the re-entry count;
- acquire: one EVAL that creates or re-enters (HINCRBY 1, PEXPIRE lease)
  and returns nil, or returns the PTTL of the holder's lock;
- a loser SUBSCRIBEs on a second connection to the lock's channel
  (`redisson_lock__channel:{name}`), tries again, and waits for a message
  at most the PTTL it got (and at most the rest of its wait), as
  tryLock(waitTime) does, instead of polling;
- while a lock is held a watchdog thread renews it every lease/3 with the
  renew script (PEXPIRE only while our field is there);
- unlock: the unlock script (with its latch key
  `redisson_unlock_latch:{name}:<request id>`), publishing 0 on the
  channel when the count reaches 0, then DEL of the latch key.

It writes its own critical sections as a locklab history (docs/history.md),
times from CLOCK_MONOTONIC (time.monotonic_ns) so the file merges with
locklab's (tests/lib/history_merge.py), and prints one summary line:
  redisson_peer client=1000 owner=... grants=.. reentries=.. waits=..
  woken_message=.. woken_timeout=.. busy=.. errors=.. releases=..
  lost=.. renewals=.. complete=true|false
A re-entrant hold (--reenter) writes each take and each release, so the
second take is a section nested in the first (docs/history.md, "modes and
re-entry"): the key is free only after the second release.

Python 3 standard library only. Every wait has a deadline, and the process
exits within --deadline-s whatever happens.

exit: 0 done, 1 a reply Redisson's protocol does not allow (or a failed
re-entry), 2 bad usage, 3 cut short by the deadline or the server.
"""

import argparse
import json
import os
import socket
import sys
import threading
import time
import uuid

ACQUIRE = (
    "if ((redis.call('exists', KEYS[1]) == 0) "
    "or (redis.call('hexists', KEYS[1], ARGV[2]) == 1)) then "
    "redis.call('hincrby', KEYS[1], ARGV[2], 1); "
    "redis.call('pexpire', KEYS[1], ARGV[1]); "
    "return nil; "
    "end; "
    "return redis.call('pttl', KEYS[1]);"
)

UNLOCK = (
    "local val = redis.call('get', KEYS[3]); "
    "if val ~= false then "
    "return tonumber(val);"
    "end; "
    "if (redis.call('hexists', KEYS[1], ARGV[3]) == 0) then "
    "return nil;"
    "end; "
    "local counter = redis.call('hincrby', KEYS[1], ARGV[3], -1); "
    "if (counter > 0) then "
    "redis.call('pexpire', KEYS[1], ARGV[2]); "
    "redis.call('set', KEYS[3], 0, 'px', ARGV[5]); "
    "return 0; "
    "else "
    "redis.call('del', KEYS[1]); "
    "redis.call(ARGV[4], KEYS[2], ARGV[1]); "
    "redis.call('set', KEYS[3], 1, 'px', ARGV[5]); "
    "return 1; "
    "end; "
)

RENEW = (
    "local result = {} "
    "for i = 1, #KEYS, 1 do "
    "if (redis.call('hexists', KEYS[i], ARGV[i + 1]) == 1) then "
    "redis.call('pexpire', KEYS[i], ARGV[1]); "
    "table.insert(result, 1); "
    "else "
    "table.insert(result, 0); "
    "end; "
    "end; "
    "return result;"
)

UNLOCK_MESSAGE = b"0"  # LockPubSub.UNLOCK_MESSAGE
READ_UNLOCK_MESSAGE = b"1"  # LockPubSub.READ_UNLOCK_MESSAGE: wakes every waiter


def prefix_name(prefix, name):
    """RedissonObject.prefixName: a name with a hash tag keeps its own."""
    if "{" in name:
        return prefix + ":" + name
    return prefix + ":{" + name + "}"


class Deadline(Exception):
    """The process's --deadline-s came before the operation could end."""


class ProtocolError(Exception):
    """A reply the protocol does not allow: the peer stops (exit 1)."""


class Resp:
    """One RESP2 connection. Every read waits at most until `limit()`, the
    earlier of the call's io timeout and the process's deadline."""

    def __init__(self, host, port, deadline_ns, io_ms):
        self.deadline_ns = deadline_ns
        self.io_ms = io_ms
        self.buf = b""
        self.sock = socket.create_connection((host, port), timeout=self._left(io_ms))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def _left(self, ms):
        left = (self.deadline_ns - time.monotonic_ns()) / 1e9
        if left <= 0:
            raise Deadline()
        return min(left, ms / 1000.0)

    def close(self):
        self.sock.close()

    def send(self, *args):
        out = [b"*%d\r\n" % len(args)]
        for a in args:
            b = a if isinstance(a, bytes) else str(a).encode()
            out.append(b"$%d\r\n%s\r\n" % (len(b), b))
        self.sock.settimeout(self._left(self.io_ms))
        self.sock.sendall(b"".join(out))

    def _parse(self, pos):
        """(reply, next position) of the reply at buf[pos:], or None when
        the buffer does not hold all of it yet. Nothing is consumed until a
        whole reply is there, so a read that times out leaves the stream
        intact for the next one."""
        eol = self.buf.find(b"\r\n", pos)
        if eol < 0:
            return None
        kind, rest, pos = self.buf[pos : pos + 1], self.buf[pos + 1 : eol], eol + 2
        if kind == b"+":
            return rest, pos
        if kind == b"-":
            return ProtocolError(rest.decode(errors="replace")), pos
        if kind == b":":
            return int(rest), pos
        if kind == b"$":
            n = int(rest)
            if n < 0:
                return None, pos
            if len(self.buf) < pos + n + 2:
                return None
            return self.buf[pos : pos + n], pos + n + 2
        if kind == b"*":
            n = int(rest)
            if n < 0:
                return None, pos
            items = []
            for _ in range(n):
                got = self._parse(pos)
                if got is None:
                    return None
                items.append(got[0])
                pos = got[1]
            return items, pos
        raise ProtocolError("unknown RESP type %r" % self.buf[pos : pos + 20])

    def read(self, wait_ms=None):
        """One reply; socket.timeout when none came within wait_ms (the io
        timeout when None) or before the deadline."""
        ms = self.io_ms if wait_ms is None else wait_ms
        until = time.monotonic_ns() + int(max(ms, 0) * 1e6)
        while True:
            got = self._parse(0)
            if got is not None:
                self.buf = self.buf[got[1] :]
                return got[0]
            left = (min(until, self.deadline_ns) - time.monotonic_ns()) / 1e9
            if left <= 0:
                if time.monotonic_ns() >= self.deadline_ns:
                    raise Deadline()
                raise socket.timeout()
            self.sock.settimeout(left)
            try:
                chunk = self.sock.recv(65536)
            except socket.timeout:
                continue  # the checks above say which limit it was
            if not chunk:
                raise ConnectionError("the server closed the connection")
            self.buf += chunk

    def call(self, *args):
        self.send(*args)
        r = self.read()
        if isinstance(r, ProtocolError):
            raise r
        return r


class History:
    """The peer's own history (docs/history.md): a start line, its lines in
    time order (the clock is read under the writer's lock, so the worker's
    and the watchdog's lines never go backwards), an end line."""

    def __init__(self, path, client, lease_ms):
        self.f = open(path, "w") if path else None
        self.client = client
        self.mu = threading.Lock()
        self.start_ns = time.monotonic_ns()
        wall = time.time_ns()
        self._put(
            {
                "type": "start",
                "locklab": 1,
                "mono_ns": self.start_ns,
                "wall_ns": wall,
                "scenario": "redisson_peer",
                "algorithm": "redisson-peer",
                "clients": client + 1,
                "ttl_ms": lease_ms,
            }
        )

    def _put(self, obj):
        if self.f:
            self.f.write(json.dumps(obj, separators=(",", ":")) + "\n")
            self.f.flush()

    def op(self, typ, f, key, owner, **extra):
        with self.mu:
            line = {"time": time.monotonic_ns(), "process": self.client, "type": typ, "f": f}
            line.update(key=key, owner=owner, **extra)
            self._put(line)

    def end(self, complete, reason):
        with self.mu:
            line = {"type": "end", "mono_ns": time.monotonic_ns(), "complete": complete}
            if not complete:
                line["reason"] = reason
            line["dropped"] = 0
            self._put(line)
            if self.f:
                self.f.close()
                self.f = None


class Peer:
    """One Redisson client: the worker's connection, a pub/sub connection
    for waits, and the watchdog's own connection."""

    def __init__(self, a, deadline_ns, soft_ns):
        self.a = a
        self.deadline_ns = deadline_ns
        self.soft_ns = soft_ns  # no wait or hold goes past it: then the release
        self.id = str(uuid.uuid4())  # ServiceManager's id, one per client
        self.field = "%s:%d" % (self.id, threading.get_native_id())
        self.cmd = Resp(a.host, a.port, deadline_ns, a.io_ms)
        self.sub = Resp(a.host, a.port, deadline_ns, a.io_ms)
        self.wd = Resp(a.host, a.port, deadline_ns, a.io_ms)
        self.hist = History(a.out, a.client, a.lease_ms)
        self.n = dict.fromkeys(
            "grants reentries waits woken_message woken_timeout busy errors "
            "releases lost renewals".split(),
            0,
        )
        self.held = {}  # lock name -> True while held; the watchdog renews these
        self.held_mu = threading.Lock()
        self.stop = threading.Event()

    def channel(self, name):
        return prefix_name(self.a.channel_prefix, name)

    # acquire, as tryLock(waitTime) with the watchdog's lease
    def try_acquire(self, name):
        r = self.cmd.call("EVAL", ACQUIRE, 1, name, self.a.lease_ms, self.field)
        if r is not None and not isinstance(r, int):
            raise ProtocolError("acquire script returned %r" % (r,))
        return r

    def subscribe(self, ch):
        self.sub.send("SUBSCRIBE", ch)
        while True:
            r = self.sub.read()
            if isinstance(r, list) and r[:2] == [b"subscribe", ch.encode()]:
                return

    def unsubscribe(self, ch):
        """Drops what came after the last wait: Redisson's entry is gone
        with its latch once the last waiter unsubscribed."""
        self.sub.send("UNSUBSCRIBE", ch)
        while True:
            r = self.sub.read()
            if isinstance(r, list) and r[:2] == [b"unsubscribe", ch.encode()]:
                return

    def wait_message(self, ch, ms):
        """True when an unlock message came on ch within ms (LockPubSub
        releases the latch on UNLOCK_MESSAGE and READ_UNLOCK_MESSAGE only)."""
        until = time.monotonic_ns() + int(ms * 1e6)
        while True:
            left = (until - time.monotonic_ns()) / 1e6
            if left <= 0:
                return False
            try:
                r = self.sub.read(left)
            except socket.timeout:
                return False
            if (
                isinstance(r, list)
                and len(r) == 3
                and r[0] == b"message"
                and r[1] == ch.encode()
                and r[2] in (UNLOCK_MESSAGE, READ_UNLOCK_MESSAGE)
            ):
                return True

    def acquire(self, name):
        """True once granted; False when the wait elapsed."""
        wait_ns = self.a.wait_ms * 1000000
        t0 = time.monotonic_ns()

        def left_ms():
            return (min(t0 + wait_ns, self.soft_ns) - time.monotonic_ns()) / 1e6

        ttl = self.try_acquire(name)
        if ttl is None:
            return True
        if left_ms() <= 0:
            return False
        self.n["waits"] += 1
        ch = self.channel(name)
        self.subscribe(ch)
        try:
            while True:
                ttl = self.try_acquire(name)
                if ttl is None:
                    return True
                if left_ms() <= 0:
                    return False
                ms = ttl if 0 <= ttl < left_ms() else left_ms()
                if self.wait_message(ch, ms):
                    self.n["woken_message"] += 1
                else:
                    self.n["woken_timeout"] += 1
                if left_ms() <= 0:
                    return False
        finally:
            self.unsubscribe(ch)

    def unlock(self, name):
        """The unlock script's answer: 1 freed, 0 still held (re-entered),
        None not ours. Then the latch key is deleted, as Redisson does."""
        request = os.urandom(16).hex()  # ServiceManager.generateId
        latch = prefix_name("redisson_unlock_latch", name) + ":" + request
        r = self.cmd.call(
            "EVAL", UNLOCK, 3, name, self.channel(name), latch,
            0, self.a.lease_ms, self.field, "publish", self.a.latch_ms,
        )  # fmt: skip
        self.cmd.call("DEL", latch)
        if r not in (None, 0, 1):
            raise ProtocolError("unlock script returned %r" % (r,))
        return r

    def watchdog(self):
        """Renews every held lock every lease/3, as LockTask does; a lock
        whose field is gone is lost and no longer renewed."""
        period = self.a.lease_ms / 3000.0
        while not self.stop.wait(period):
            with self.held_mu:
                names = sorted(self.held)
                if not names:
                    continue
                try:
                    r = self.wd.call(
                        "EVAL", RENEW, len(names), *names, self.a.lease_ms,
                        *([self.field] * len(names)),
                    )  # fmt: skip
                except (OSError, socket.timeout, ProtocolError):
                    for nm in names:
                        self.hist.op("info", "renew", nm, self.field, error="error")
                    continue
                except Deadline:
                    return
                for nm, ok in zip(names, r):
                    if ok == 1:
                        self.n["renewals"] += 1
                        self.hist.op("ok", "renew", nm, self.field)
                    else:
                        self.n["lost"] += 1
                        self.hist.op("fail", "renew", nm, self.field, error="lost")
                        del self.held[nm]

    def hold(self, name):
        """One critical section on name: acquire (twice with --reenter),
        hold, release as often as taken."""
        h, a = self.hist, self.a
        h.op("invoke", "acquire", name, self.field)
        if a.no_lock:  # the negative control: a section with no lock at all
            h.op("ok", "acquire", name, self.field)
            self.n["grants"] += 1
            self.sleep(a.hold_ms)
            h.op("invoke", "release", name, self.field)
            h.op("ok", "release", name, self.field)
            self.n["releases"] += 1
            return
        try:
            got = self.acquire(name)
        except (OSError, socket.timeout, ProtocolError, Deadline):  # sent, no answer: unknown
            h.op("info", "acquire", name, self.field, error="error")
            self.n["errors"] += 1
            raise
        if not got:
            h.op("fail", "acquire", name, self.field, error="busy")
            self.n["busy"] += 1
            return
        with self.held_mu:
            self.held[name] = True
        h.op("ok", "acquire", name, self.field)
        self.n["grants"] += 1
        takes = 1
        if a.reenter:
            h.op("invoke", "acquire", name, self.field)
            try:
                again = self.try_acquire(name)
            except (OSError, socket.timeout, ProtocolError, Deadline):
                h.op("info", "acquire", name, self.field, error="error")
                self.n["errors"] += 1
                raise
            if again is not None:
                raise ProtocolError("re-entry refused on %s by our own lock" % name)
            h.op("ok", "acquire", name, self.field)
            self.n["reentries"] += 1
            takes = 2
        self.sleep(a.hold_ms)
        for k in range(takes, 0, -1):
            last = k == 1
            if last:
                with self.held_mu:
                    self.held.pop(name, None)
            h.op("invoke", "release", name, self.field)
            try:
                r = self.unlock(name)
            except (OSError, socket.timeout, ProtocolError, Deadline):
                h.op("info", "release", name, self.field, error="error")
                self.n["errors"] += 1
                raise
            if r is None:
                # not ours any more: every section still open on it ends here
                h.op("fail", "release", name, self.field, error="lost")
                for _ in range(k - 1):
                    h.op("invoke", "release", name, self.field)
                    h.op("fail", "release", name, self.field, error="lost")
                self.n["lost"] += 1
                with self.held_mu:
                    self.held.pop(name, None)
                return
            if last != (r == 1):
                raise ProtocolError("unlock %d of %d on %s answered %d" % (takes - k + 1, takes, name, r))
            h.op("ok", "release", name, self.field)
        self.n["releases"] += 1

    def sleep(self, ms):
        end = min(time.monotonic_ns() + int(ms * 1e6), self.soft_ns)
        while time.monotonic_ns() < end:
            time.sleep(min(0.05, (end - time.monotonic_ns()) / 1e9))

    def summary(self, complete):
        n = self.n
        return (
            "redisson_peer client=%d owner=%s grants=%d reentries=%d waits=%d "
            "woken_message=%d woken_timeout=%d busy=%d errors=%d releases=%d "
            "lost=%d renewals=%d complete=%s"
        ) % (
            self.a.client, self.field, n["grants"], n["reentries"], n["waits"],
            n["woken_message"], n["woken_timeout"], n["busy"], n["errors"],
            n["releases"], n["lost"], n["renewals"], "true" if complete else "false",
        )  # fmt: skip


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="redisson_peer.py",
        description="An RLock client speaking Redisson's protocol (see the file's opening comment).",
    )
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--lock", action="append", required=True, metavar="NAME",
                   help="a lock name; repeat it or give a comma list; holds go round them")  # fmt: skip
    p.add_argument("--holds", type=int, default=1, help="critical sections to attempt")
    p.add_argument("--run-ms", type=int, default=0, help="start no hold after this long (0: no limit)")
    p.add_argument("--hold-ms", type=int, default=10, help="time inside each critical section")
    p.add_argument("--gap-ms", type=int, default=0, help="time between one release and the next try")
    p.add_argument("--wait-ms", type=int, default=5000, help="tryLock's wait time")
    p.add_argument("--lease-ms", type=int, default=30000, help="the watchdog's lease (lockWatchdogTimeout)")
    # Redisson's default: (timeout 3000 + a retry delay of 1000..2000) x 4 attempts
    p.add_argument("--latch-ms", type=int, default=20000, help="the unlock latch key's life")
    p.add_argument("--io-ms", type=int, default=2000, help="the longest wait for one reply")
    p.add_argument("--reenter", action="store_true", help="take each lock twice, release it twice")
    p.add_argument("--client", type=int, default=1000, help="the process number in the history")
    p.add_argument("--out", help="write the peer's history here")
    p.add_argument("--deadline-s", type=float, default=60.0, help="exit within this long, whatever happens")
    p.add_argument("--channel-prefix", default="redisson_lock__channel",
                   help="negative control only: subscribe and publish here, where Redisson does not")  # fmt: skip
    p.add_argument("--no-lock", action="store_true",
                   help="negative control: record sections without taking the lock")  # fmt: skip
    a = p.parse_args(argv)
    a.lock = [n for item in a.lock for n in item.split(",") if n]
    bad = [
        (a.holds < 0, "--holds must be >= 0"),
        (not a.lock, "--lock needs a name"),
        (not 0 <= a.client <= 1048575, "--client must be 0..1048575"),
        (a.lease_ms < 3, "--lease-ms must be >= 3"),
        (min(a.hold_ms, a.gap_ms, a.wait_ms, a.run_ms) < 0, "times must be >= 0"),
        (a.latch_ms < 1 or a.io_ms < 1, "--latch-ms and --io-ms must be >= 1"),
        (not 0 < a.deadline_s <= 86400, "--deadline-s must be in (0, 86400]"),
    ]
    for cond, msg in bad:
        if cond:
            p.error(msg)
    return a


def main(argv):
    a = parse_args(argv)
    # Three limits: the backstop ends the process at --deadline-s whatever
    # blocks; every socket call gives up 0.2 s before; waits and holds end
    # early enough for a release's two calls to fit before that.
    hard_ns = time.monotonic_ns() + int(a.deadline_s * 1e9)
    deadline_ns = hard_ns - int(min(0.2, a.deadline_s / 10) * 1e9)
    soft_ns = deadline_ns - int(min(2 * a.io_ms / 1000.0, a.deadline_s / 4) * 1e9)
    backstop = threading.Timer(a.deadline_s, lambda: os._exit(3))
    backstop.daemon = True
    backstop.start()
    try:
        peer = Peer(a, deadline_ns, soft_ns)
    except (OSError, socket.timeout, Deadline) as e:
        print("redisson_peer: cannot connect to %s:%d: %s" % (a.host, a.port, e), file=sys.stderr)
        return 3
    wd = threading.Thread(target=peer.watchdog, daemon=True)
    wd.start()
    rc, reason = 0, ""
    t0 = time.monotonic_ns()
    try:
        for i in range(a.holds):
            if a.run_ms and time.monotonic_ns() - t0 >= a.run_ms * 1000000:
                break
            if i:
                peer.sleep(a.gap_ms)
            peer.hold(a.lock[i % len(a.lock)])
            if time.monotonic_ns() >= soft_ns:
                raise Deadline()
    except Deadline:
        rc, reason = 3, "the peer's --deadline-s came first"
    except ProtocolError as e:
        rc, reason = 1, "protocol: %s" % e
    except (OSError, socket.timeout) as e:
        rc, reason = 3, "connection: %s" % e
    peer.stop.set()
    wd.join(a.lease_ms / 3000.0 + a.io_ms / 1000.0 + 1)
    peer.hist.end(rc == 0, reason)
    print(peer.summary(rc == 0))
    if reason:
        print("redisson_peer: %s" % reason, file=sys.stderr)
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
