"""history.json and history.html (`locklab history`) held to the
report.json files they were made from, and the regression rule worked out
here again, apart from reports/history.c:

  a complete run is flagged "p99" when its acquire p99 is more than 1.5x
  the median p99 of the earlier complete runs of its series that acquired
  something, "qps" when its QPS is under 2/3 of their median QPS; any run
  is flagged "safety" when it is UNSAFE and the run before it was safe.

and the series key worked out again too: a series is one scenario name x
algorithm x key, the key FNV-1a 64 of the canonical JSON (Python's
json.dumps with sorted keys, no spaces, ensure_ascii off) of the settings:
the scenario without name, description, file and defaults, the algorithm,
and per server its kind, layout (the text in parentheses without its
pids), version (meta.servers) and proxied (endpoints); null for a part
the report.json lacks.

index_facts(doc, reports) checks the JSON (tests/runs/test_schemas.sh and
test_history_index.sh use it); check(hdir, h) the page as Chromium shows it,
with html_check.py's helpers in h (`html_check.py history DIR`).
Python 3 standard library only.
"""
import json
import os
import re
import statistics


def server_key(rep, text):
    """One entry of report.json's servers as the key holds it."""
    m = re.match(r"(\S*) ?(\S*)(?: \((.*)\))?$", text)
    kind, address, how = m.group(1), m.group(2), m.group(3) or ""
    tokens = [re.sub(r"pid [0-9]+", "", t).rstrip() for t in how.split(", ")] if how else []
    meta = rep.get("meta", {}).get("servers")
    version = None
    if isinstance(meta, list):
        for x in meta:
            if x.get("kind") == kind and x.get("address") == address:
                version = x.get("version") if isinstance(x.get("version"), str) else None
                break
    proxied = None
    for e in rep.get("endpoints", []) or []:
        if e.get("server") == text and isinstance(e.get("proxied"), bool):
            proxied = e["proxied"]
            break
    return {"kind": kind, "layout": ", ".join(t for t in tokens if t), "version": version,
            "proxied": proxied}


def key_object(rep):
    """The settings that put a run on its series."""
    scn = rep.get("scenario")
    if isinstance(scn, dict):
        scn = {k: v for k, v in scn.items() if k not in ("name", "description", "file", "defaults")}
    else:
        scn = None
    servers = rep.get("servers")
    if isinstance(servers, list):
        servers = [server_key(rep, x) if isinstance(x, str) else None for x in servers]
    else:
        servers = None
    alg = rep.get("algorithm")
    return {"algorithm": alg if isinstance(alg, str) else None, "scenario": scn,
            "servers": servers}


def key_of(settings):
    """FNV-1a 64 of the canonical JSON, 16 hex digits."""
    text = json.dumps(settings, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    h = 0xcbf29ce484222325
    for c in text.encode():
        h = ((h ^ c) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return "%016x" % h


def figures(rep):
    """What the index takes of one report.json."""
    acq = rep["operations"]["acquire"]
    return {"scenario": rep["scenario"]["name"], "algorithm": rep["algorithm"],
            "started_at": rep["started_at"], "start_wall_ns": rep["start_wall_ns"],
            "verdict": rep["verdict"], "complete": rep["complete"], "qps": acq["qps"],
            "acquire_p50_ms": acq.get("p50_ms"), "acquire_p99_ms": acq.get("p99_ms"),
            "safe": rep["safety"]["safe"], "violations": rep["checker"]["violations"],
            "safety": rep["safety"]["text"]}


def expected_flags(runs):
    """The rule over one series, oldest first: a list of flag lists."""
    out = []
    for k, r in enumerate(runs):
        base = [x for x in runs[:k] if x["complete"] and x["acquire_p99_ms"] is not None]
        flags = []
        if r["complete"] and base:
            p99 = statistics.median(x["acquire_p99_ms"] for x in base)
            qps = statistics.median(x["qps"] for x in base)
            if r["acquire_p99_ms"] is not None and r["acquire_p99_ms"] > 1.5 * p99:
                flags.append("p99")
            if r["qps"] < qps * 2 / 3:
                flags.append("qps")
        if k > 0 and runs[k - 1]["safe"] and not r["safe"]:
            flags.append("safety")
        out.append(flags)
    return out


def close(a, b):
    if a is None or b is None:
        return a is b
    return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))


def index_facts(doc, reports):
    """Problems of history.json against reports: {realpath of a report.json:
    its parsed JSON}, every report.json the index should hold."""
    out = []
    seen = {}
    for s in doc.get("series", []):
        runs = s.get("runs", [])
        for r in runs:
            path = os.path.realpath(r.get("report", ""))
            if path in seen:
                out.append(f"{r.get('report')}: indexed twice")
            seen[path] = r
            if (r.get("scenario"), r.get("algorithm")) != (s.get("scenario"), s.get("algorithm")):
                out.append(f"{r.get('report')}: in the series of {s.get('scenario')} x "
                           f"{s.get('algorithm')}")
            if os.path.realpath(os.path.join(r.get("folder", ""), "report.json")) != path:
                out.append(f"{r.get('report')}: folder {r.get('folder')} is not its folder")
            rep = reports.get(path)
            if rep is None:
                out.append(f"{r.get('report')}: no such report among the runs")
                continue
            for k, v in figures(rep).items():
                got = r.get(k)
                same = close(got, v) if isinstance(v, float) or isinstance(got, float) else got == v
                if not same:
                    out.append(f"{r.get('report')}: {k} {got!r}, its report.json {v!r}")
        starts = [r.get("start_wall_ns", 0) for r in runs]
        if starts != sorted(starts):
            out.append(f"series {s.get('scenario')} x {s.get('algorithm')}: not oldest first: "
                       f"{starts}")
        want = expected_flags([figures(reports[os.path.realpath(r["report"])]) for r in runs
                               if os.path.realpath(r.get("report", "")) in reports])
        got = [r.get("flags") for r in runs]
        if len(want) == len(got) and want != got:
            out.append(f"series {s.get('scenario')} x {s.get('algorithm')}: flags {got}, the "
                       f"rule gives {want}")
    out += series_facts(doc, reports)
    missing = sorted(set(reports) - set(seen))
    if missing:
        out.append(f"{len(missing)} report.json not indexed: {missing[:3]}")
    if doc.get("runs") != len(seen):
        out.append(f"runs is {doc.get('runs')}, the series hold {len(seen)}")
    flagged = [(r["folder"], r["flags"]) for s in doc.get("series", []) for r in s["runs"]
               if r.get("flags")]
    listed = [(x.get("folder"), x.get("flags")) for x in doc.get("regressions", [])]
    if flagged != listed:
        out.append(f"regressions {listed}, the flagged runs {flagged}")
    return out


def differences(a, b):
    """How many settings differ: objects and arrays of one length by
    their members, anything else as one."""
    if a == b and type(a) is type(b):
        return 0
    if isinstance(a, dict) and isinstance(b, dict):
        return sum(differences(a.get(k), b.get(k)) if k in a and k in b else 1
                   for k in set(a) | set(b))
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return sum(differences(x, y) for x, y in zip(a, b))
    return 1


def series_facts(doc, reports):
    """Each series one key, every run's settings as its report.json gives,
    the series in order and each new one's after as the rule gives."""
    out = []
    order = []
    for i, s in enumerate(doc.get("series", [])):
        runs = s.get("runs", [])
        where = f"series {i} ({s.get('scenario')} x {s.get('algorithm')})"
        if s.get("key") != key_of(s.get("settings")):
            out.append(f"{where}: key {s.get('key')}, its settings hash to "
                       f"{key_of(s.get('settings'))}")
        for r in runs:
            rep = reports.get(os.path.realpath(r.get("report", "")))
            if rep is not None and key_object(rep) != s.get("settings"):
                out.append(f"{where}: {r.get('report')}: settings {key_object(rep)}, the "
                           f"series's {s.get('settings')}")
        order.append((s.get("scenario"), s.get("algorithm"),
                      runs[0].get("start_wall_ns", 0) if runs else 0, s.get("key")))
        name = (s.get("scenario"), s.get("algorithm"))
        earlier = [x for x in doc["series"][:i] if (x.get("scenario"), x.get("algorithm")) == name]
        after = s.get("after")
        if not earlier and after is not None:
            out.append(f"{where}: the first of its name, yet after {after}")
        if earlier:
            # the one it differs least from; of those that tie, the latest
            counts = [differences(x.get("settings"), s.get("settings")) for x in earlier]
            best = max(k for k, n in enumerate(counts) if n == min(counts))
            if after is None or after.get("key") != earlier[best].get("key") or \
                    not after.get("differs"):
                out.append(f"{where}: after {after}, it differs least from "
                           f"{earlier[best].get('key')} ({counts[best]} settings)")
    if order != sorted(order) or len({(a, b, k) for a, b, _, k in order}) != len(order):
        out.append(f"series not one per scenario x algorithm x key in order: {order}")
    return out


def load_reports(doc):
    """The report.json of every run history.json names, by realpath."""
    out = {}
    for s in doc.get("series", []):
        for r in s.get("runs", []):
            path = os.path.realpath(r.get("report", ""))
            try:
                with open(path) as f:
                    out[path] = json.load(f)
            except (OSError, ValueError):
                pass
    return out


def load_index(folders):
    """runs/history.json of the current folder, and the report.json of each
    of folders (runs/F) by realpath, as history.json names them."""
    with open("runs/history.json") as f:
        doc = json.load(f)
    reports = {}
    for name in folders:
        path = f"runs/{name}/report.json"
        with open(path) as f:
            reports[os.path.realpath(path)] = json.load(f)
    return doc, reports


def check_page(dom, doc, name, h):
    """history.html's DOM against history.json."""
    before = len(h.problems)
    series = doc["series"]
    regs = doc["regressions"]
    badge = dom.first(data_figure="regressions")
    want = f"{len(regs)} regression{'' if len(regs) == 1 else 's'}"
    if badge is None or badge.text().strip() != want or \
            ("REGRESSED" if regs else "STEADY") not in badge.classes():
        h.fail(f"{name}: the title's badge is {badge and badge.text().strip()!r} "
               f"{badge and sorted(badge.classes())}, history.json gives {want!r}")
    for fig, n in (("runs", doc["runs"]), ("series", len(series)),
                   ("skipped", len(doc["skipped"]))):
        node = dom.first(data_figure=fig)
        if node is None or node.text().strip() != str(n):
            h.fail(f"{name}: {fig} shows {node and node.text().strip()!r}, history.json {n}")
    sheet = "".join(n.text() for n in dom.find_all("style"))
    if "tr.regressed td{background:#fdecea}" not in sheet:
        h.fail(f"{name}: no red background for a regressed run's row in the page's style")
    items = list(dom.find_all("li", attr="data-series"))
    got = [(int(li.get("data-series")), int(li.get("data-run"))) for li in items]
    want_items = [(i, k) for i, s in enumerate(series) for k, r in enumerate(s["runs"])
                  if r["flags"]]
    if got != want_items:
        h.fail(f"{name}: the regressions list names (series, run) {got}, history.json "
               f"{want_items}")
    rows_seen = 0
    for i, s in enumerate(series):
        where = f"{s['scenario']} x {s['algorithm']}"
        rows = [tr for tr in dom.find_all("tr", attr="data-run")
                if tr.get("data-series") == str(i)]
        rows_seen += len(rows)
        if [tr.get("data-started") for tr in rows] != [r["started_at"] for r in s["runs"]]:
            h.fail(f"{name}: {where}: rows started {[tr.get('data-started') for tr in rows]}, "
                   f"history.json (oldest first) {[r['started_at'] for r in s['runs']]}")
            continue
        for tr, r in zip(rows, s["runs"]):
            cells = [c.text().strip() for c in tr.cells()]
            text = " | ".join(cells)
            flagged = "regressed" in tr.classes()
            if flagged != bool(r["flags"]) or tr.get("data-flags").split() != r["flags"]:
                h.fail(f"{name}: {where}: row of {r['started_at']}: flagged {flagged}, "
                       f"data-flags {tr.get('data-flags')!r}; history.json {r['flags']}")
            if ("REGRESSION" in text) != bool(r["flags"]):
                h.fail(f"{name}: {where}: row of {r['started_at']} reads {text!r}")
            for v in ("%.1f" % r["qps"],
                      "-" if r["acquire_p99_ms"] is None else "%.3f" % r["acquire_p99_ms"],
                      r["verdict"], r["safety"]):
                if v not in cells and not any(v == b.text().strip()
                                              for b in tr.find_all("span", cls="verdict")):
                    h.fail(f"{name}: {where}: row of {r['started_at']} lacks {v!r}: {text!r}")
        if len(s["runs"]) < 2:
            continue
        sec = dom.first("section", id=f"series-{i}")
        if sec is None:
            h.fail(f"{name}: {where}: no <section id=\"series-{i}\"> with its charts")
            continue
        for cls, key in (("history-p99", "acquire_p99_ms"), ("history-qps", "qps")):
            svg = sec.first("svg", cls="chart " + cls)
            if svg is None:
                h.fail(f"{name}: {where}: no <svg class=\"chart {cls}\">")
                continue
            marks = list(svg.find_all("g", cls="mark"))
            want_runs = [k for k, r in enumerate(s["runs"]) if r[key] is not None]
            if [int(m.get("data-run")) for m in marks] != want_runs:
                h.fail(f"{name}: {where}: {cls} marks runs "
                       f"{[m.get('data-run') for m in marks]}, expected {want_runs}")
            ringed = [int(m.get("data-run")) for m in marks if "regressed" in m.classes()
                      and m.first("circle", cls="ring") is not None]
            want_ringed = [k for k in want_runs if s["runs"][k]["flags"]]
            if ringed != want_ringed:
                h.fail(f"{name}: {where}: {cls} rings runs {ringed}, the flagged are "
                       f"{want_ringed}")
    if rows_seen != doc["runs"]:
        h.fail(f"{name}: {rows_seen} run rows, history.json has {doc['runs']} runs")
    if len(h.problems) == before:
        flagged = ", ".join(f"{x['algorithm']} {x['started_at']} ({x['text']})" for x in regs)
        h.note(f"{name}: {doc['runs']} runs in {len(series)} series as history.json, oldest "
               f"first, with their figures; flagged: {flagged or 'none'}")


def check(hdir, h):
    """html_check.py history HDIR: HDIR/history.json against the reports
    it names, HDIR/history.html in Chromium against history.json."""
    path = os.path.join(hdir, "history.json")
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        h.fail(f"{path}: {e}")
        return
    problems = index_facts(doc, load_reports(doc))
    for p in problems:
        h.fail(f"{path}: {p}")
    if not problems:
        h.note(f"{path}: every run's figures as its report.json, series in order, flags as "
               f"the rule gives")
    page = os.path.join(hdir, "history.html")
    dom = h.browse(page)
    if dom is None:
        return
    name = os.path.relpath(page)
    h.self_contained(dom, name)
    h.local_links(dom, page)
    check_page(dom, doc, name, h)
