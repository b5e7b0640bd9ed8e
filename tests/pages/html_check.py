#!/usr/bin/env python3
"""Hold locklab's HTML pages to the JSON they were written from, as a
browser shows them.

  html_check.py [--load-mode open|closed] run DIR   DIR/report.html against DIR/report.json
  html_check.py compare DIR                         DIR/compare.html against DIR/compare.json
  html_check.py matrix DIR                          DIR/matrix.html against DIR/matrix.json
  html_check.py history DIR                         DIR/history.html, history.json (check_history.py)

Each page is opened three times in headless Chromium (/usr/bin/chromium,
or $CHROMIUM), each under `timeout 60`:

1. `--dump-dom` with `--enable-logging=stderr --v=0`: the DOM Chromium
   built is what the checks below parse (not the file), and its stderr must
   carry no console message (`:CONSOLE` lines: the pages have no script, so
   any message is an error) and no "Failed to load resource" line.
2. Over the DevTools protocol (`--remote-debugging-pipe`): every request
   the page made and every console, log and exception event. Chromium 130+
   no longer prints a failed subresource load (a broken <img src>) to
   stderr, only to DevTools, so this is what catches one: any
   Network.loadingFailed, Log entry of level error or warning,
   Runtime.consoleAPICalled or Runtime.exceptionThrown fails the page, and
   so does any request besides the page itself (the pages say "nothing
   fetched").
3. `--screenshot` at 1150x3000 into DIR/<page>.png: the PNG must be there,
   its header must say 1150x3000, and it must not be blank (size, and the
   variety of its scanlines).

Then the DOM against the JSON (docs/report-json.md says what the JSON
means; reports/html.c, compare.c and matrix.c what the page draws). Every
mismatch is printed; exit 0 when there is none, 1 otherwise, 2 on bad
usage. Python 3 standard library only.
"""
import html.parser
import json
import math
import os
import re
import select
import signal
import struct
import subprocess
import sys
import tempfile
import time
import zlib

import check_compare as compare_story  # compare.html's time charts, costs, settings, labels
import check_charts  # the time charts cannot mislead
import check_groups  # violations grouped by stale holder
from check_meta import check_meta

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
TIMEOUT_S = 60
WINDOW = (1150, 3000)
MAX_HOVER_COLS = 600  # hover columns per time chart before seconds are grouped

problems = []


def fail(msg):
    problems.append(msg)
    print("MISMATCH " + msg)


def note(msg):
    print("ok       " + msg)


# --- the DOM --------------------------------------------------------------

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param",
        "source", "track", "wbr"}


class Node:
    __slots__ = ("tag", "attrs", "children", "parent")

    def __init__(self, tag, attrs, parent):
        self.tag = tag
        self.attrs = attrs
        self.children = []
        self.parent = parent

    def get(self, name, default=None):
        return self.attrs.get(name, default)

    def classes(self):
        return set((self.attrs.get("class") or "").split())

    def text(self):
        out = []

        def walk(n):
            for c in n.children:
                if isinstance(c, str):
                    out.append(c)
                else:
                    walk(c)
        walk(self)
        return "".join(out)

    def iter(self):
        for c in self.children:
            if isinstance(c, Node):
                yield c
                yield from c.iter()

    def find_all(self, tag=None, cls=None, attr=None, **eq):
        """Descendants by tag, class names (all of them), attribute present,
        attribute values (data_figure="x" for data-figure)."""
        want = set(cls.split()) if cls else set()
        for n in self.iter():
            if tag and n.tag != tag:
                continue
            if want and not want <= n.classes():
                continue
            if attr and attr not in n.attrs:
                continue
            if any(n.attrs.get(k.replace("_", "-")) != v for k, v in eq.items()):
                continue
            yield n

    def first(self, *a, **k):
        return next(self.find_all(*a, **k), None)

    def cells(self):
        return [c for c in self.children if isinstance(c, Node) and c.tag in ("td", "th")]


class TreeBuilder(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = Node("#document", {}, None)
        self.stack = [self.root]

    def _node(self, tag, attrs):
        n = Node(tag, {k: (v if v is not None else "") for k, v in attrs}, self.stack[-1])
        self.stack[-1].children.append(n)
        return n

    def handle_starttag(self, tag, attrs):
        n = self._node(tag, attrs)
        if tag not in VOID:
            self.stack.append(n)

    def handle_startendtag(self, tag, attrs):
        self._node(tag, attrs)

    def handle_endtag(self, tag):
        for i in range(len(self.stack) - 1, 0, -1):
            if self.stack[i].tag == tag:
                del self.stack[i:]
                return

    def handle_data(self, data):
        self.stack[-1].children.append(data)


def parse_dom(text):
    b = TreeBuilder()
    b.feed(text)
    b.close()
    return b.root


# --- Chromium -------------------------------------------------------------

def chromium_args(scratch):
    """Chromium under timeout(1), its profile in scratch/profile; its crash
    handler (which leaves the process group) keeps its database in
    scratch/crash (BREAKPAD_DUMP_LOCATION, chromium_env), so the path names
    it too."""
    return ["timeout", "-k", "5", str(TIMEOUT_S), CHROMIUM, "--headless", "--no-sandbox",
            "--disable-gpu", "--user-data-dir=" + os.path.join(scratch, "profile"),
            "--no-first-run", "--no-default-browser-check", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--disable-extensions"]


def chromium_env(scratch):
    return dict(os.environ, BREAKPAD_DUMP_LOCATION=os.path.join(scratch, "crash"))


def ours_left(pgid, scratch):
    """Live processes of the Chromium we started: in timeout(1)'s process
    group, or naming its scratch folder (the crash handler)."""
    left = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                st = f.read()
            with open(f"/proc/{d}/cmdline", "rb") as f:
                cmd = f.read().decode("utf-8", "replace")
        except OSError:
            continue
        fields = st[st.rindex(")") + 2:].split()
        if fields[0] != "Z" and (int(fields[2]) == pgid or scratch in cmd):
            left.append(int(d))
    return left


def reap(pgid, scratch, what):
    """Wait up to 10 s for the Chromium we started to be gone; then SIGKILL
    what is left of it, by pid."""
    deadline = time.monotonic() + 10
    while True:
        left = ours_left(pgid, scratch)
        if not left:
            return
        if time.monotonic() > deadline:
            break
        time.sleep(0.05)
    for pid in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    print(f"note     {what}: killed {len(left)} chromium process(es) still running 10 s after "
          f"it ended: {left}")


def run_chromium(extra, what):
    """One Chromium under timeout(1): (exit status, stdout, stderr), every
    process of it gone before returning."""
    with tempfile.TemporaryDirectory(prefix="locklab-chromium.") as scratch:
        p = subprocess.Popen(chromium_args(scratch) + extra, env=chromium_env(scratch),
                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
        out, err = p.communicate()
        reap(p.pid, scratch, what)
    return p.returncode, out, err


def page_url(path):
    return "file://" + os.path.abspath(path)


def dump_dom(path):
    """The DOM Chromium built, or None; console lines in stderr are failures."""
    name = os.path.relpath(path)
    rc, out, err = run_chromium(["--enable-logging=stderr", "--v=0", "--dump-dom",
                                 page_url(path)], name)
    err = err.decode("utf-8", "replace")
    if rc != 0:
        fail(f"{name}: chromium --dump-dom exited {rc}"
             f"{' (timed out after %d s)' % TIMEOUT_S if rc in (124, 137) else ''}")
    bad = [line for line in err.splitlines()
           if ":CONSOLE" in line or "Failed to load resource" in line]
    for line in bad:
        fail(f"{name}: chromium's stderr has a console message: {line.strip()}")
    dom = out.decode("utf-8", "replace")
    if "<html" not in dom:
        fail(f"{name}: chromium --dump-dom printed no document ({len(dom)} bytes)")
        return None
    if not bad and rc == 0:
        note(f"{name}: chromium --dump-dom: {len(dom)} bytes of DOM, no console message on stderr")
    return dom


class DevTools:
    """Just enough of the DevTools protocol over --remote-debugging-pipe
    (fd 3: commands to Chromium, fd 4: its answers, each message
    NUL-terminated JSON)."""

    def __init__(self):
        self.scratch = tempfile.TemporaryDirectory(prefix="locklab-chromium.")
        to_r, self.to_w = os.pipe()
        self.from_r, from_w = os.pipe()

        def child():
            # dup2 onto 3 and 4 through high numbers, so neither pipe end is
            # overwritten (or left close-on-exec) whatever numbers it got
            a, b = os.dup(to_r), os.dup(from_w)
            os.dup2(a, 200)
            os.dup2(b, 201)
            os.dup2(200, 3)
            os.dup2(201, 4)
            os.close(200)
            os.close(201)

        self.proc = subprocess.Popen(
            chromium_args(self.scratch.name) + ["--remote-debugging-pipe", "about:blank"],
            env=chromium_env(self.scratch.name), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            preexec_fn=child, close_fds=False)
        os.close(to_r)
        os.close(from_w)
        self.buf = b""
        self.next_id = 0
        self.events = []

    def send(self, method, params=None, session=None):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self.to_w, json.dumps(msg).encode() + b"\0")
        return self.next_id

    def recv(self, deadline):
        while b"\0" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([self.from_r], [], [], left)
            if not ready:
                return None
            chunk = os.read(self.from_r, 1 << 16)
            if not chunk:
                raise RuntimeError("chromium closed the DevTools pipe")
            self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def call(self, method, params=None, session=None, timeout=20):
        i = self.send(method, params, session)
        deadline = time.monotonic() + timeout
        while True:
            m = self.recv(deadline)
            if m is None:
                raise RuntimeError(f"no answer to {method} in {timeout} s")
            if m.get("id") == i:
                if "error" in m:
                    raise RuntimeError(f"{method}: {m['error']}")
                return m.get("result") or {}
            self.events.append(m)

    def close(self):
        try:
            self.send("Browser.close")
        except OSError:
            pass
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.send_signal(signal.SIGTERM)  # timeout(1) passes it to its group
            self.proc.wait()
        reap(self.proc.pid, self.scratch.name, "DevTools probe")
        os.close(self.to_w)
        os.close(self.from_r)
        self.scratch.cleanup()


def devtools_probe(path):
    """Load the page over DevTools; every failed load, console message,
    exception and request that is not the page itself is a failure."""
    name = os.path.relpath(path)
    url = page_url(path)
    dt = DevTools()
    try:
        target = dt.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        s = dt.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            dt.call(domain + ".enable", {}, s)
        dt.call("Page.navigate", {"url": url}, s)
        deadline = time.monotonic() + 30
        loaded = None
        while True:
            # after the load event, 0.5 s more of quiet for late messages
            m = dt.recv(deadline if loaded is None else min(deadline, time.monotonic() + 0.5))
            if m is None:
                break
            dt.events.append(m)
            if m.get("method") == "Page.loadEventFired" and loaded is None:
                loaded = time.monotonic()
    except (RuntimeError, OSError, ValueError, KeyError) as e:
        fail(f"{name}: DevTools probe: {e}")
        dt.close()
        return
    dt.close()
    if loaded is None:
        fail(f"{name}: DevTools: the page never fired its load event")
    requests = []
    found = 0
    for m in dt.events:
        meth, p = m.get("method", ""), m.get("params", {})
        if meth == "Network.requestWillBeSent":
            requests.append(p["request"]["url"])
        elif meth == "Network.loadingFailed":
            found += 1
            fail(f"{name}: a resource failed to load ({p.get('type')}): {p.get('errorText')}"
                 f"{' (canceled)' if p.get('canceled') else ''}")
        elif meth == "Log.entryAdded" and p["entry"].get("level") in ("error", "warning"):
            e = p["entry"]
            found += 1
            fail(f"{name}: console {e.get('level')} ({e.get('source')}): {e.get('text')}"
                 f"{' ' + e['url'] if e.get('url') else ''}")
        elif meth == "Runtime.consoleAPICalled":
            found += 1
            args = " ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", []))
            fail(f"{name}: console.{p.get('type')}: {args}")
        elif meth == "Runtime.exceptionThrown":
            found += 1
            d = p.get("exceptionDetails", {})
            fail(f"{name}: uncaught exception: {d.get('text')} "
                 f"{d.get('exception', {}).get('description', '')}".rstrip())
    for u in requests:
        if u != url:
            found += 1
            fail(f"{name}: the page fetched {u} (it should be self-contained)")
    if url not in requests:
        fail(f"{name}: DevTools saw no request for the page itself")
    elif found == 0 and loaded is not None:
        note(f"{name}: DevTools: loaded, one request (the page), no failed load, "
             f"no console message or exception")


def png_rows(data, width, height, colour_type, bit_depth):
    """The PNG's filtered scanlines (filter byte included), or None."""
    idat, pos = [], 8
    while pos + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        if kind == b"IDAT":
            idat.append(data[pos + 8:pos + 8 + length])
        pos += 12 + length
    channels = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}.get(colour_type)
    if channels is None or bit_depth != 8:
        return None
    raw = zlib.decompress(b"".join(idat))
    stride = 1 + width * channels
    if len(raw) != stride * height:
        return None
    return [raw[i:i + stride] for i in range(0, len(raw), stride)]


def screenshot(path, png):
    name = os.path.relpath(path)
    if os.path.exists(png):
        os.unlink(png)
    rc, _, _ = run_chromium(["--screenshot=" + png, "--window-size=%d,%d" % WINDOW,
                             "--hide-scrollbars", page_url(path)], name)
    if rc != 0:
        fail(f"{name}: chromium --screenshot exited {rc}")
    if not os.path.isfile(png):
        fail(f"{name}: no screenshot at {png}")
        return
    with open(png, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR":
        fail(f"{name}: {png} is not a PNG")
        return
    width, height, depth, colour = struct.unpack(">IIBB", data[16:26])
    ok = True
    if (width, height) != WINDOW:
        ok = False
        fail(f"{name}: screenshot is {width}x{height}, expected {WINDOW[0]}x{WINDOW[1]}")
    if len(data) < 20000:
        ok = False
        fail(f"{name}: screenshot is only {len(data)} bytes: a blank page?")
    try:
        rows = png_rows(data, width, height, colour, depth)
    except zlib.error as e:
        rows = None
        ok = False
        fail(f"{name}: screenshot's image data does not inflate: {e}")
    distinct = len(set(rows)) if rows else 0
    if rows is not None and distinct < 50:
        ok = False
        fail(f"{name}: screenshot has only {distinct} distinct scanlines of {height}: "
             f"nothing drawn?")
    if ok:
        note(f"{name}: screenshot {os.path.basename(png)}: {width}x{height}, {len(data)} bytes, "
             f"{distinct or '?'} distinct scanlines")


def browse(path):
    """The three Chromium passes over one page; its DOM, or None."""
    if not os.path.isfile(path):
        fail(f"{path}: no such page")
        return None
    dom = dump_dom(path)
    devtools_probe(path)
    screenshot(path, os.path.splitext(path)[0] + ".png")
    return parse_dom(dom) if dom is not None else None


# --- checks every page gets -----------------------------------------------

NET = re.compile(r"^\s*(https?:)?//", re.I)
CSS_URL = re.compile(r"""(?:url\(\s*['"]?|@import\s+['"]?)\s*(https?:)?//""", re.I)
URL_ATTRS = {"src", "href", "xlink:href", "srcset", "poster", "data", "action", "formaction",
             "background", "cite", "longdesc", "manifest", "ping", "icon"}


def self_contained(dom, name):
    bad = 0
    for n in dom.iter():
        if n.tag == "script":
            bad += 1
            fail(f"{name}: a <script> element")
        for k, v in n.attrs.items():
            if k == "xmlns" or k.startswith("xmlns:"):
                continue
            if k.startswith("on"):
                bad += 1
                fail(f"{name}: <{n.tag} {k}=...>: an event handler (script)")
            if v.strip().lower().startswith("javascript:"):
                bad += 1
                fail(f"{name}: <{n.tag} {k}=\"{v}\">: a javascript: URL")
            if (k in URL_ATTRS or k.endswith(":href")) and (NET.search(v) or
                                                            re.search(r"https?://", v, re.I)):
                bad += 1
                fail(f"{name}: <{n.tag} {k}=\"{v}\"> refers to the network")
            if k == "style" and CSS_URL.search(v):
                bad += 1
                fail(f"{name}: <{n.tag} style=\"{v}\"> refers to the network")
        if n.tag == "style" and CSS_URL.search(n.text()):
            bad += 1
            fail(f"{name}: a <style> sheet refers to the network")
        if n.tag == "link" and n.get("href") is not None:
            bad += 1
            fail(f"{name}: <link href=\"{n.get('href')}\">: an external resource")
    if bad == 0:
        note(f"{name}: no <script>, no handler, nothing referred to on the network")


def local_links(dom, page):
    """Every <a href> that is not an anchor must name an existing file."""
    base = os.path.dirname(page)
    missing, n = 0, 0
    for a in dom.find_all("a", attr="href"):
        href = a.get("href")
        if href.startswith("#"):
            continue
        n += 1
        if not os.path.exists(os.path.join(base, href.split("#")[0])):
            missing += 1
            fail(f"{os.path.relpath(page)}: link <a href=\"{href}\"> leads nowhere")
    if missing == 0:
        note(f"{os.path.relpath(page)}: {n} links, every one to an existing file")


def verdict_of(dom, name):
    v = list(dom.find_all(data_figure="verdict"))
    if len(v) != 1:
        fail(f"{name}: {len(v)} verdict elements, expected 1")
        return None
    return v[0].text().strip()


# reports/svg.c's colours (report_algorithm_colour), given to the locks in
# the registry's order and over again past the last
LOCK_PALETTE = ("#1f77b4", "#aec7e8", "#ff7f0e", "#2ca02c", "#9467bd", "#17becf", "#8c564b",
                "#bcbd22", "#e377c2", "#7f7f7f", "#ffbb78", "#98df8a", "#c5b0d5", "#9edae5",
                "#c49c94", "#dbdb8d")
_colours = {}


def algorithm_colours():
    """Each lock's colour, by name: the locks as `locklab list algorithms`
    (the binary in LOCKLAB_BIN) prints them, never a list typed here."""
    if not _colours:
        names = subprocess.run([os.environ.get("LOCKLAB_BIN", "locklab"), "list", "algorithms"],
                               check=True, capture_output=True, text=True, timeout=60).stdout
        _colours.update((n, LOCK_PALETTE[i % len(LOCK_PALETTE)])
                        for i, n in enumerate(names.split()))
    return _colours


# --- the safety beside every verdict ---------------------------------------

DANGER = "#c62828"  # the colour of FAIL; UNSAFE must wear it too


def style_background(dom, cls):
    """The background the page's <style> gives .CLS, or None."""
    sheet = "".join(n.text() for n in dom.find_all("style"))
    m = re.search(r"(?:^|[}\s])\." + re.escape(cls) + r"\{background:([^;}]+)", sheet)
    return m.group(1) if m else None


def check_danger_colour(dom, name):
    got = style_background(dom, "UNSAFE")
    if got != DANGER or style_background(dom, "FAIL") != DANGER:
        fail(f"{name}: .UNSAFE's background is {got!r}, .FAIL's "
             f"{style_background(dom, 'FAIL')!r}: both must be {DANGER}")
        return False
    return True


def check_badges(box, violations, name, where, text=None):
    """box holds a verdict badge and a safety badge beside it. With
    violations, the safety badge says UNSAFE in the colour of danger: a
    green PASS never stands alone beside them. text: what the safety badge
    must read (report.json's safety.text). True when all holds."""
    badges = list(box.find_all("span", cls="verdict"))
    safety = [b for b in badges if b.get("data-safety") is not None]
    passes = [b for b in badges if "PASS" in b.classes()]
    if len(safety) != 1:
        fail(f"{name}: {where}: {len(safety)} safety badges beside the verdict, expected 1")
        return False
    b = safety[0]
    ok = True
    want = "unsafe" if violations > 0 else "safe"
    if b.get("data-safety") != want or b.get("data-violations") != str(violations):
        ok = False
        fail(f"{name}: {where}: safety badge data-safety={b.get('data-safety')!r} "
             f"data-violations={b.get('data-violations')!r}, the JSON gives {want} and "
             f"{violations} violations")
    if violations > 0 and "UNSAFE" not in b.classes():
        ok = False
        fail(f"{name}: {where}: {violations} violations and the safety badge is "
             f"{sorted(b.classes())}, not UNSAFE")
    if violations > 0 and passes and not b.text().strip().startswith("UNSAFE"):
        ok = False
        fail(f"{name}: {where}: a green PASS badge alone beside {violations} violations "
             f"(the badge beside it reads {b.text().strip()!r})")
    if text is not None and b.text().strip() != text:
        ok = False
        fail(f"{name}: {where}: safety badge reads {b.text().strip()!r}, the JSON {text!r}")
    return ok


# --- report.html ----------------------------------------------------------

def ms_label(ms):
    return "%.3f s" % (ms / 1000) if ms >= 1000 else "%.3f ms" % ms


def history_lines(run_dir):
    """The run's history as JSON lines: its history.jsonl when it wrote one
    (run --history-jsonl), else the export of its history.llh (locklab
    show --history, docs/history.md), with the binary in LOCKLAB_BIN."""
    text = os.path.join(run_dir, "history.jsonl")
    if os.path.exists(text):
        with open(text) as f:
            return f.read().splitlines()
    out = subprocess.run([os.environ.get("LOCKLAB_BIN", "locklab"), "show", "--history", run_dir],
                         check=True, capture_output=True, text=True, timeout=60).stdout
    return out.splitlines()


def fault_spans(run_dir, start_mono):
    """The fault spans of history.jsonl as docs/history.md pairs them: a
    start with the next end of the same fault index, type and target."""
    spans, open_ = [], []
    for line in history_lines(run_dir):
        e = json.loads(line)
        if e.get("process") != "nemesis":
            continue
        ident = (e.get("fault"), e.get("f"), e.get("target"))
        if e.get("value") == "start":
            spans.append({"fault": e.get("fault"), "type": e.get("f"),
                          "from_s": (e["time"] - start_mono) / 1e9, "to_s": None})
            open_.append((ident, len(spans) - 1))
        elif e.get("value") == "end":
            for k, (i, s) in enumerate(open_):
                if i == ident:
                    spans[s]["to_s"] = (e["time"] - start_mono) / 1e9
                    del open_[k]
                    break
    return spans


def close(a, b, tol):
    return abs(a - b) <= tol


def check_bands(svg, chart, spans, rep, name):
    bands = [g for g in svg.children if isinstance(g, Node) and g.tag == "g"
             and "data-fault" in g.attrs]
    bad = 0
    if len(bands) != len(spans):
        bad += 1
        fail(f"{name}: {chart} chart has {len(bands)} fault bands, history.jsonl "
             f"{len(spans)} fault spans")
    for i, (g, s) in enumerate(zip(bands, spans)):
        to_s = s["to_s"] if s["to_s"] is not None else rep["elapsed_s"]
        got = (g.get("data-fault"), g.get("data-from-s"), g.get("data-to-s"))
        try:
            same = (int(got[0]) == s["fault"] and close(float(got[1]), s["from_s"], 0.0015)
                    and close(float(got[2]), to_s, 0.0015))
        except (TypeError, ValueError):
            same = False
        if not same:
            bad += 1
            fail(f"{name}: {chart} chart's band {i}: fault {got[0]} {got[1]} .. {got[2]} s, "
                 f"the span is fault {s['fault']} {s['from_s']:.3f} .. {to_s:.3f} s")
        # the band's class is the family report.json says its kind is of
        kind = rep["faults"][s["fault"]]["family"] if 0 <= s["fault"] < len(rep["faults"]) else None
        inner = g.first("g", cls="band")
        if inner is None or kind not in inner.classes():
            bad += 1
            fail(f"{name}: {chart} chart's band {i} ({s['type']}): class "
                 f"{sorted(inner.classes()) if inner else None}, expected band {kind}")
    # the faults report.json says fired: each among the bands, where it says
    fired = [(i, x) for i, x in enumerate(rep["faults"]) if x.get("fired")]
    for i, x in fired:
        mine = [g for g in bands if g.get("data-fault") == str(i)]
        if not mine:
            bad += 1
            fail(f"{name}: {chart} chart: fault {i} ({x['type']}) fired and has no band")
            continue
        if "start_s" in x and not any(close(float(g.get("data-from-s")), x["start_s"], 0.0015)
                                      for g in mine):
            bad += 1
            fail(f"{name}: {chart} chart: no band of fault {i} starts at its start_s "
                 f"{x['start_s']:.3f} (bands from {[g.get('data-from-s') for g in mine]})")
        if "end_s" in x:
            end = x["end_s"] if x["end_s"] is not None else rep["elapsed_s"]
            if not any(close(float(g.get("data-to-s")), end, 0.0015) for g in mine):
                bad += 1
                fail(f"{name}: {chart} chart: no band of fault {i} ends at its end_s "
                     f"{end:.3f} (bands to {[g.get('data-to-s') for g in mine]})")
    for g in bands:
        k = int(g.get("data-fault"))
        if not (0 <= k < len(rep["faults"]) and rep["faults"][k].get("fired")):
            bad += 1
            fail(f"{name}: {chart} chart: a band for fault {k}, which report.json says did "
                 f"not fire")
    if bad == 0:
        note(f"{name}: {chart} chart: {len(bands)} fault band(s), one per span of history.jsonl, "
             f"every fired fault ({len(fired)}) among them at its start_s/end_s")


def hover_groups(svg, n, chart, name):
    """A time chart's hover groups, the seconds each covers, the first second
    of each as it should be, and 1 when their count is wrong (0 otherwise)."""
    g = max(1, (n + MAX_HOVER_COLS - 1) // MAX_HOVER_COLS)
    groups = list(svg.find_all("g", attr="data-second"))
    starts = range(0, n, g)
    if len(groups) == len(starts):
        return g, groups, starts, 0
    fail(f"{name}: {chart} chart has {len(groups)} hover groups, expected {len(starts)} "
         f"({n} seconds in the timeline, {g} per group)")
    return g, groups, starts, 1


def check_throughput(svg, rep, name):
    tl = rep["timeline"]
    g, groups, starts, bad = hover_groups(svg, len(tl["ok"]), "throughput", name)
    want = [(s, g, sum(tl["ok"][s:s + g]), sum(tl["failed"][s:s + g])) for s in starts]
    for x, w in zip(groups, want):
        got = tuple(x.get(k) for k in ("data-second", "data-seconds", "data-ok", "data-failed"))
        if got != tuple(str(v) for v in w):
            bad += 1
            fail(f"{name}: throughput hover group at second {w[0]}: (second, seconds, ok, failed) "
                 f"= {got}, report.json timeline gives {w}")
    if bad == 0:
        note(f"{name}: throughput chart: {len(groups)} hover groups of {g} s, ok and failed "
             f"equal to timeline.ok/failed")


def check_latency(svg, rep, name):
    tl = dict(rep["timeline"])
    if "begun_count" in tl:  # the chart draws latency by when each acquire began
        tl.update({"acquire" + k[5:]: v for k, v in tl.items() if k.startswith("begun")})
    n = len(tl["acquire_count"])
    g, groups, starts, bad = hover_groups(svg, n, "latency", name)

    def p99(k):
        v = tl["acquire_p99_ms"][k]
        return v if v is not None else 0.0

    for x, s in zip(groups, starts):
        w = s  # a group shows its worst second (highest p99), the first of equals
        for k in range(s, min(s + g, n)):
            if p99(k) > p99(w):
                w = k
        cnt = tl["acquire_count"][w]
        vals = [tl[k][w] for k in ("acquire_p50_ms", "acquire_p99_ms", "acquire_max_ms")]
        if cnt == 0 and any(v is not None for v in vals):
            bad += 1
            fail(f"{name}: report.json second {w}: acquire_count 0 but latencies {vals}")
        want = (str(w), str(cnt)) + tuple("%.6f" % (v if v is not None else 0.0) for v in vals)
        got = tuple(x.get(k) for k in ("data-second", "data-count", "data-p50-ms",
                                       "data-p99-ms", "data-max-ms"))
        if got != want:
            bad += 1
            fail(f"{name}: latency hover group at second {s}: (second, count, p50, p99, max) = "
                 f"{got}, report.json timeline gives {want}")
    if bad == 0:
        note(f"{name}: latency chart: {len(groups)} hover groups, count/p50/p99/max equal to "
             f"timeline.acquire_* (6 decimals)")


def check_cards(dom, rep, name):
    def card(fig):
        n = dom.first("b", data_figure=fig)
        return n.text().strip() if n is not None else None

    acq = rep["operations"]["acquire"]
    c = rep["counters"]
    want = {
        "violations": str(rep["checker"]["violations"]),
        "invariants": "hold" if rep["invariants_hold"] else "broken",
        "acquire_failed": str(c["acquire_busy"] + c["acquire_errors"]),
    }
    for fig, key in (("acquire_p50", "p50_ms"), ("acquire_p99", "p99_ms"),
                     ("acquire_max", "max_ms")):
        want[fig] = ms_label(acq[key]) if acq["count"] else "-"
    bad = 0
    for fig, w in want.items():
        got = card(fig)
        if got != w:
            bad += 1
            fail(f"{name}: card {fig} shows {got!r}, report.json gives {w!r}")
    got = card("qps")
    try:
        qok = close(float(got), acq["qps"], 0.05 + 1e-9)
    except (TypeError, ValueError):
        qok = False
    if not qok:
        bad += 1
        fail(f"{name}: card qps shows {got!r}, report.json operations.acquire.qps is {acq['qps']}")
    if bad == 0:
        note(f"{name}: cards: violations {want['violations']}, invariants {want['invariants']}, "
             f"qps, acquire p50/p99/max, failed as report.json")


def check_tables(dom, rep, name):
    bad = 0
    # operations: count, then p50 p90 p99 p99.9 max (3 decimals)
    rows = {r.get("data-op"): r for r in dom.find_all("tr", attr="data-op")}
    if set(rows) != set(rep["operations"]):
        bad += 1
        fail(f"{name}: operations table rows {sorted(rows)}, report.json operations "
             f"{sorted(rep['operations'])}")
    for op, o in rep["operations"].items():
        r = rows.get(op)
        if r is None:
            continue
        cells = [x.text().strip() for x in r.cells()]
        if len(cells) < 2 or cells[1] != str(o["count"]):
            bad += 1
            fail(f"{name}: operations table {op}: count {cells[1] if len(cells) > 1 else None}, "
                 f"report.json {o['count']}")
        keys = ("p50_ms", "p90_ms", "p99_ms", "p999_ms", "max_ms")
        want = ["%.3f" % o[k] if o["count"] else "-" for k in keys]
        if cells[3:8] != want:
            bad += 1
            fail(f"{name}: operations table {op}: p50..max {cells[3:8]}, report.json {want}")
    # faults
    frows = list(dom.find_all("tr", attr="data-fault"))
    if [r.get("data-fault") for r in frows] != [str(i) for i in range(len(rep["faults"]))]:
        bad += 1
        fail(f"{name}: faults table rows {[r.get('data-fault') for r in frows]}, report.json has "
             f"{len(rep['faults'])} faults")
    # invariants
    inv = [(r.get("data-invariant"), r.get("data-holds"))
           for r in dom.find_all("tr", attr="data-invariant")]
    want = [(x["name"], "true" if x["holds"] else "false") for x in rep["invariants"]]
    if inv != want:
        bad += 1
        fail(f"{name}: invariants table {inv}, report.json {want}")
    # fairness
    fair = dom.first("p", data_figure="fairness")
    bars = list(dom.find_all("rect", cls="bar", attr="data-acquired"))
    if fair is None:
        bad += 1
        fail(f"{name}: no fairness figure")
    else:
        acq = [int(b.get("data-acquired")) for b in bars]
        total = str(rep["counters"]["acquire_ok"])
        if fair.get("data-total") != total:
            bad += 1
            fail(f"{name}: fairness data-total {fair.get('data-total')}, report.json "
                 f"counters.acquire_ok {total}")
        if len(bars) != rep["scenario"]["clients"] or \
                [b.get("data-client") for b in bars] != [str(i) for i in range(len(bars))]:
            bad += 1
            fail(f"{name}: {len(bars)} fairness bars, {rep['scenario']['clients']} clients")
        if acq and (str(sum(acq)) != fair.get("data-total") or str(max(acq)) != fair.get(
                "data-max") or str(min(acq)) != fair.get("data-min")):
            bad += 1
            fail(f"{name}: fairness bars sum/max/min {sum(acq)}/{max(acq)}/{min(acq)}, the "
                 f"figure says {fair.get('data-total')}/{fair.get('data-max')}/"
                 f"{fair.get('data-min')}")
    if bad == 0:
        note(f"{name}: tables: operations (counts, percentiles), {len(frows)} fault row(s), "
             f"{len(inv)} invariant(s), fairness total {rep['counters']['acquire_ok']} over "
             f"{len(bars)} clients as report.json")


def check_run(run_dir, load_mode=None):
    page = os.path.join(run_dir, "report.html")
    name = os.path.relpath(page)
    try:
        with open(os.path.join(run_dir, "report.json")) as f:
            rep = json.load(f)
    except (OSError, ValueError) as e:
        fail(f"{run_dir}/report.json: {e}")
        return
    dom = browse(page)
    if dom is None:
        return
    self_contained(dom, name)
    local_links(dom, page)
    charts = {k: dom.first("svg", cls="chart " + k) for k in ("throughput", "latency", "spectrum")}
    for k, svg in charts.items():
        if svg is None:
            fail(f"{name}: the DOM has no <svg class=\"chart {k}\">")
    v = verdict_of(dom, name)
    if v is not None and v != rep["verdict"]:
        fail(f"{name}: verdict {v!r}, report.json {rep['verdict']!r}")
    load = dom.first("p", data_figure="load")
    mode = load.get("data-mode") if load is not None else None
    if mode != rep["load"]["mode"]:
        fail(f"{name}: load data-mode {mode!r}, report.json load.mode {rep['load']['mode']!r}")
    if load_mode is not None and mode != load_mode:
        fail(f"{name}: load data-mode {mode!r}, this run is {load_mode} loop")
    if v == rep["verdict"] and mode == rep["load"]["mode"]:
        note(f"{name}: verdict {v}, load {mode} loop as report.json")
    h1 = dom.first("h1")
    viol = rep["checker"]["violations"]
    badges = h1 is not None and check_badges(h1, viol, name, "the title", rep["safety"]["text"])
    if check_danger_colour(dom, name) and badges:
        note(f"{name}: the title's safety badge reads {rep['safety']['text']!r} beside "
             f"{v}{' in ' + DANGER if viol else ''}, as report.json")
    check_cards(dom, rep, name)
    spans = fault_spans(run_dir, rep["start_mono_ns"])
    if charts["throughput"] is not None:
        check_throughput(charts["throughput"], rep, name)
        check_bands(charts["throughput"], "throughput", spans, rep, name)
    if charts["latency"] is not None:
        check_latency(charts["latency"], rep, name)
        check_bands(charts["latency"], "latency", spans, rep, name)
    if charts["spectrum"] is not None:
        series = [s.first("title").text().split(":")[0] if s.first("title") else None
                  for s in charts["spectrum"].find_all("g", cls="series")]
        want = [op for op, o in rep["operations"].items() if o["count"] > 0]
        if sorted(series) != sorted(want):
            fail(f"{name}: spectrum series {series}, operations with samples {want}")
        else:
            note(f"{name}: spectrum: one series per operation with samples ({', '.join(series)})")
    check_charts.check_run(dom, rep, name, fail, note)
    check_groups.check(dom, rep, name, fail, note)
    check_tables(dom, rep, name)
    check_meta(dom, rep, name, fail, note, "run", run_dir)


# --- compare.html ---------------------------------------------------------

def check_compare(cdir):
    page = os.path.join(cdir, "compare.html")
    name = os.path.relpath(page)
    try:
        with open(os.path.join(cdir, "compare.json")) as f:
            cmp = json.load(f)
    except (OSError, ValueError) as e:
        fail(f"{cdir}/compare.json: {e}")
        return
    dom = browse(page)
    if dom is None:
        return
    self_contained(dom, name)
    check_meta(dom, cmp, name, fail, note, "compare", cdir)
    if dom.first("svg", cls="chart spectrum") is None:
        fail(f"{name}: the DOM has no <svg class=\"chart spectrum\">")
    algs = cmp["algorithms"]
    rows = list(dom.find_all("tr", attr="data-algorithm"))
    bad = 0
    if [r.get("data-algorithm") for r in rows] != [a["algorithm"] for a in algs]:
        bad += 1
        fail(f"{name}: table rows {[r.get('data-algorithm') for r in rows]}, compare.json "
             f"algorithms {[a['algorithm'] for a in algs]}")
    for r, a in zip(rows, algs):
        al = a["algorithm"]
        cells = r.cells()
        text = [c.text().strip() for c in cells]
        if len(text) < 14:
            bad += 1
            fail(f"{name}: row {al} has {len(text)} cells")
            continue
        # the row's judgement by what happened: its word, its words, its colour
        badge = cells[1].first("span", attr="data-verdict")
        word = badge.get("data-verdict") if badge is not None else None
        words = badge.text().strip() if badge is not None else None
        if (word, words) != (a["verdict"], a["safety_text"]):
            bad += 1
            fail(f"{name}: row {al}: verdict {word!r} reading {words!r}, compare.json "
                 f"{a['verdict']!r} and {a['safety_text']!r}")
        want_cls = {"safe": "SAFE", "UNSAFE": "UNSAFE", "INCOMPLETE": "INCOMPLETE",
                    "NOT RUN": "NOTRUN"}[a["verdict"]]
        if badge is not None and want_cls not in badge.classes():
            bad += 1
            fail(f"{name}: row {al}: verdict badge {sorted(badge.classes())}, expected {want_cls}")
        # the expectation beside the scenario's lock alone
        exp = cells[1].first("span", attr="data-expectation")
        if (exp is not None) != (a["scenario_lock"] and a["verdict"] != "NOT RUN") or (
                exp is not None and exp.get("data-expectation") != cmp["expectation"]["state"]):
            bad += 1
            fail(f"{name}: row {al}: expectation badge "
                 f"{exp.get('data-expectation') if exp is not None else None}, compare.json "
                 f"scenario_lock {a['scenario_lock']}, state {cmp['expectation']['state']}")
        ran = a["verdict"] != "NOT RUN"
        if ran:
            n = a["violations"]
            if n > 0 and "unsafe" not in cells[9].classes():
                bad += 1
                fail(f"{name}: row {al}: the violations cell ({n}) is not coloured unsafe")
            if (n > 0 or a["unsafe_seeds"]) and a["verdict"] != "UNSAFE":
                bad += 1
                fail(f"{name}: row {al}: {n} violations, {a['unsafe_seeds']} unsafe seeds, "
                     f"verdict {a['verdict']}")
            # the crash's cost and the lease beside the ttl
            stuck = cells[10].get("data-stuck-ms")
            lease = "none" if a["lease_ms"] == 0 else str(a["lease_ms"])
            if stuck is None or not close(float(stuck), a["stuck_lock_ms"], 0.0005 + 1e-5 * a[
                    "stuck_lock_ms"]) or text[10] != "%.3f" % (a["stuck_lock_ms"] / 1000) or \
                    text[11] != str(a["ttl_ms"]) or text[12] != lease:
                bad += 1
                fail(f"{name}: row {al}: stuck {text[10]!r}, ttl {text[11]!r}, lease "
                     f"{text[12]!r}; compare.json {a['stuck_lock_ms']} ms, {a['ttl_ms']}, {lease}")
            # each seed under its row (with more than one), linked to its page
            under = [t for t in dom.find_all("tr", attr="data-seeds-of")
                     if t.get("data-seeds-of") == al]
            seeds = [x for t in under for x in t.find_all("small", attr="data-seed")]
            want_seeds = [str(x["seed"]) for x in a["seeds"]] if len(a["seeds"]) > 1 else []
            if [x.get("data-seed") for x in seeds] != want_seeds:
                bad += 1
                fail(f"{name}: row {al}: seeds listed {[x.get('data-seed') for x in seeds]}, "
                     f"compare.json {want_seeds}")
            for x, js in zip(seeds, a["seeds"]):
                link = x.first("a", attr="href")
                if js["run_dir"] and (link is None or os.path.realpath(
                        os.path.join(cdir, link.get("href"))) != os.path.realpath(
                        os.path.join(js["run_dir"], "report.html"))):
                    bad += 1
                    fail(f"{name}: row {al}: seed {js['seed']} does not link to its report.html")
        # one colour per lock, the same on every page
        sw = cells[0].first("span", cls="swatch")
        if sw is None or sw.get("data-colour") != algorithm_colours().get(al, "#333333"):
            bad += 1
            fail(f"{name}: row {al}: swatch {sw.get('data-colour') if sw is not None else None}, "
                 f"its colour {algorithm_colours().get(al)}")
        want_v = str(a["violations"]) if ran and a["violations"] is not None else "-"
        if text[9] != want_v:
            bad += 1
            fail(f"{name}: row {al}: violations {text[9]!r}, compare.json {a['violations']!r}")
        want_f = str(a["busy"] + a["errors"]) if ran and a["busy"] is not None else "-"
        if text[8] != want_f:
            bad += 1
            fail(f"{name}: row {al}: failed {text[8]!r}, compare.json busy+errors {want_f!r}")
        fr = a.get("fairness")
        want_fair = ("-" if not ran or fr is None else "inf" if fr["min"] == 0
                     else "%.2f" % (fr["max"] / fr["min"]))
        if text[7] != want_fair:
            bad += 1
            fail(f"{name}: row {al}: max/min {text[7]!r}, compare.json fairness {fr!r}")
        for col, key in ((2, "qps"),):
            if ran and a[key] is not None:
                try:
                    good = close(float(text[col]), a[key], 0.05 + abs(a[key]) * 1e-5)
                except ValueError:
                    good = False
                if not good:
                    bad += 1
                    fail(f"{name}: row {al}: {key} {text[col]!r}, compare.json {a[key]}")
        for col, key in ((3, "p50"), (4, "p99"), (5, "p99.9"), (6, "max")):
            v = a["acquire_ms"][key]
            if v is None:
                good = text[col] == "-"
            else:
                try:
                    good = close(float(text[col]), v, 0.0005 + abs(v) * 1e-5)
                except ValueError:
                    good = False
            if not good:
                bad += 1
                fail(f"{name}: row {al}: acquire {key} {text[col]!r} ms, compare.json {v}")
        links = list(cells[0].find_all("a", attr="href"))
        if ran:
            if len(links) != 1:
                bad += 1
                fail(f"{name}: row {al} ran and has {len(links)} links")
                continue
            target = os.path.join(cdir, links[0].get("href"))
            if not os.path.isfile(target):
                bad += 1
                fail(f"{name}: row {al}: link {links[0].get('href')} leads nowhere")
            elif a["run_dir"] and os.path.realpath(target) != os.path.realpath(
                    os.path.join(a["run_dir"], "report.html")):
                bad += 1
                fail(f"{name}: row {al}: link {links[0].get('href')} is not run_dir "
                     f"{a['run_dir']}'s report.html")
        elif links:
            bad += 1
            fail(f"{name}: row {al} did not run and links to {links[0].get('href')}")
    # the bars: qps and acquire p99 per algorithm that has them
    bars = {}
    for rect in dom.find_all("rect", attr="data-algorithm"):
        bars.setdefault(rect.get("data-algorithm"), []).append(float(rect.get("data-value")))
    for a in algs:
        want = [v for v in (a["qps"], a["acquire_ms"]["p99"]) if v is not None]
        got = bars.get(a["algorithm"], [])
        if len(got) != len(want) or not all(close(g, w, 0.0005 + abs(w) * 1e-5)
                                            for g, w in zip(got, want)):
            bad += 1
            fail(f"{name}: bars of {a['algorithm']}: {got}, compare.json qps, p99 {want}")
    series = list(dom.find_all("svg", cls="chart spectrum"))
    n_lat = sum(1 for a in algs if a["acquire_ms"]["p50"] is not None)
    n_series = len(list(series[0].find_all("g", cls="series"))) if series else 0
    if n_series != n_lat:
        bad += 1
        fail(f"{name}: spectrum has {n_series} series, {n_lat} algorithms have latencies")
    # the verdict word, as compare_verdict words it: only the scenario's lock's
    # expectation can fail a comparison
    vs = [a["verdict"] for a in algs]
    want = ("INCOMPLETE" if "INCOMPLETE" in vs or not cmp["complete"]
            else "FAIL" if cmp["expectation"]["state"] == "missed" else "PASS")
    if want != cmp["verdict"]:
        bad += 1
        fail(f"{name}: compare.json verdict {cmp['verdict']!r}, its rows give {want!r}")
    v = verdict_of(dom, name)
    if v != want:
        bad += 1
        fail(f"{name}: verdict {v!r}, compare.json's rows give {want!r}")
    total = cmp["safety"]["violations"]  # every seed's
    h1 = dom.first("h1")
    if not check_danger_colour(dom, name):
        bad += 1
    if h1 is None or not check_badges(h1, total, name, "the title"):
        bad += 1
    compare_story.check_compare_story(dom, cmp, cdir, name, fail, note, algorithm_colours())
    if bad == 0:
        note(f"{name}: {len(rows)} rows as compare.json (verdict and safety badges, violations, "
             f"failed, qps, latencies), each link to an existing run page, bars and spectrum, "
             f"verdict {v}, {total} violations in all beside an UNSAFE badge when any")


# --- matrix.html ----------------------------------------------------------

def check_matrix(mdir):
    page = os.path.join(mdir, "matrix.html")
    name = os.path.relpath(page)
    try:
        with open(os.path.join(mdir, "matrix.json")) as f:
            mx = json.load(f)
    except (OSError, ValueError) as e:
        fail(f"{mdir}/matrix.json: {e}")
        return
    dom = browse(page)
    if dom is None:
        return
    self_contained(dom, name)
    check_meta(dom, mx, name, fail, note, "matrix", mdir)
    rows = list(dom.find_all("tr", attr="data-row"))
    bad = 0
    if [r.get("data-row") for r in rows] != [x["name"] for x in mx["rows"]]:
        bad += 1
        fail(f"{name}: rows {[r.get('data-row') for r in rows]}, matrix.json "
             f"{[x['name'] for x in mx['rows']]}")
    for r, x in zip(rows, mx["rows"]):
        got = (r.get("data-matched"), r.get("data-runs"))
        want = (str(x["seeds_matched"]), str(x["seeds"]))
        if got != want:
            bad += 1
            fail(f"{name}: row {x['name']}: matched/runs {got}, matrix.json {want}")
        if len(x["runs"]) != x["seeds"]:
            bad += 1
            fail(f"{mdir}/matrix.json: row {x['name']}: seeds {x['seeds']}, {len(x['runs'])} runs")
        counted = [run["violations"] for run in x["runs"] if run["ran"]]
        cell = r.cells()[5] if len(r.cells()) > 5 else r
        if not check_badges(cell, sum(counted), name, f"row {x['name']}"):
            bad += 1
        elif cell.first("span", attr="data-safety").get("data-unsafe-runs") != \
                str(sum(1 for n in counted if n > 0)):
            bad += 1
            fail(f"{name}: row {x['name']}: data-unsafe-runs "
                 f"{cell.first('span', attr='data-safety').get('data-unsafe-runs')!r}, "
                 f"matrix.json's runs {counted}")
        links = list(r.find_all("a", attr="href"))
        ran = [run for run in x["runs"] if run.get("run_dir")]
        if len(links) != len(ran):
            bad += 1
            fail(f"{name}: row {x['name']}: {len(links)} seed links, {len(ran)} runs with a "
                 f"folder")
        for a, run in zip(links, ran):
            target = os.path.join(mdir, a.get("href"))
            if not os.path.isfile(target):
                bad += 1
                fail(f"{name}: row {x['name']} seed {run.get('seed')}: link {a.get('href')} "
                     f"leads nowhere")
            elif os.path.realpath(target) != os.path.realpath(
                    os.path.join(run["run_dir"], "report.html")):
                bad += 1
                fail(f"{name}: row {x['name']} seed {run.get('seed')}: link {a.get('href')} is "
                     f"not run_dir {run['run_dir']}'s report.html")
            if a.text().strip() != str(run["violations"]):
                bad += 1
                fail(f"{name}: row {x['name']} seed {run.get('seed')}: link text "
                     f"{a.text().strip()!r}, matrix.json violations {run['violations']}")
    head = dom.first("p", data_figure="matched")
    want = (str(len(mx["rows"])), str(mx["rows_matched"]))
    got = (head.get("data-rows"), head.get("data-matched")) if head is not None else None
    if got != want:
        bad += 1
        fail(f"{name}: rows/matched {got}, matrix.json {want}")
    wv = ("INCOMPLETE" if not mx["complete"] else
          "PASS" if mx["rows_matched"] == len(mx["rows"]) else "FAIL")
    v = verdict_of(dom, name)
    if v != wv:
        bad += 1
        fail(f"{name}: verdict {v!r}, matrix.json gives {wv!r}")
    compare_story.check_matrix_hover(dom, name, fail, note)
    total = sum(run["violations"] for x in mx["rows"] for run in x["runs"] if run["ran"])
    h1 = dom.first("h1")
    if not check_danger_colour(dom, name):
        bad += 1
    if h1 is None or not check_badges(h1, total, name, "the title"):
        bad += 1
    if bad == 0:
        note(f"{name}: {len(rows)} row(s) as matrix.json (matched/runs, safety), every seed link "
             f"to an existing run page, verdict {v}, {total} violations beside an UNSAFE badge "
             f"when any")


def main(argv):
    load_mode = None
    args = list(argv)
    if len(args) >= 2 and args[0] == "--load-mode" and args[1] in ("open", "closed"):
        load_mode = args[1]
        args = args[2:]
    if len(args) != 2 or args[0] not in ("run", "compare", "matrix", "history"):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    mode, d = args
    if not os.path.isdir(d):
        print(f"html_check.py: {d}: not a folder", file=sys.stderr)
        return 2
    if mode == "run":
        check_run(d, load_mode)
    elif mode == "history":  # history.html, history.json: tests/pages/check_history.py
        import check_history
        check_history.check(d, sys.modules[__name__])
    elif mode == "compare":
        check_compare(d)
    else:
        check_matrix(d)
    if problems:
        print(f"html_check.py {mode} {d}: {len(problems)} mismatch(es)")
        return 1
    print(f"html_check.py {mode} {d}: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
