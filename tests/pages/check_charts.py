"""check_charts.py - report.html's time charts held to report.json: they
must not mislead (reports/html_charts.c). Called by html_check.py on every
run page it checks, with its fail and note.

- The partial last interval: when the run ended inside its last second,
  both time charts mark that interval (<g class="partial">) with its start,
  its length and its counts as report.json gives them (elapsed_s, the last
  entries of timeline.ok/failed and begun_count), and the throughput
  chart draws the last step at count / length, read off the chart's own
  y ticks, not at the raw count (a 0.06 s interval with 16 steps is
  ~270/s, not a collapse to 16/s). A run that ended on a second has none.
- The binning: report.json's begun_count adds up to acquire_count (the
  same grants, binned by when they began); in an open-loop run with a
  server paused for a second or more, every second the pause covers has
  acquires in it (open loop keeps them due) and the worst p99 of the
  latency chart is the second the pause began in, where the longest waits
  began: binned by grant, that second was blank and the peak came after.
- The violation spans: every overlap the checker listed (report.json's
  checker.listed, fenced pairs aside: the later holder's entry to the first
  exit) lies inside a <g class="vspan"> of both time charts, and the
  spans' pair counts add up to those overlaps; each stale holder (a listed
  pair's earlier side) has its lease end marked (<g class="lease">) at its
  grant plus the lock's ttl, unless that falls past the run's end.
"""
import math
import re

TOL_S = 2e-6  # the page prints seconds with 6 decimals


def _num(s):
    try:
        return float(s)
    except (TypeError, ValueError):
        return None


def _y_axis(svg):
    """value -> pixel for the chart's y axis, from its tick labels (the
    ones anchored at the end: the y axis's), and whether it is log."""
    ticks = []
    for t in svg.find_all("text", cls="tick"):
        if t.get("text-anchor") != "end":
            continue
        v = _num(t.text().replace(" ms", "").replace(" s", ""))
        if v is not None:
            ticks.append((v, float(t.get("y")) - 4))
    title = " ".join(t.text() for t in svg.find_all("text", cls="axis"))
    log = "log scale" in title
    frame = svg.first("rect", cls="frame")
    if len(ticks) < 2 or frame is None:
        return None, log
    (v1, p1), (v2, p2) = ticks[0], ticks[-1]
    top, bottom = float(frame.get("y")), float(frame.get("y")) + float(frame.get("height"))

    def f(v):
        if log:
            x = math.log10(v) if v > 0 else -math.inf
            a, b = math.log10(v1), math.log10(v2)
        else:
            x, a, b = v, v1, v2
        y = p1 + (x - a) * (p2 - p1) / (b - a) if x != -math.inf else bottom
        return min(max(y, top), bottom)
    return f, log


def _path_points(d):
    return [(float(a), float(b)) for a, b in re.findall(r"[ML]([-\d.]+) ([-\d.]+)", d or "")]


def check_partial(charts, rep, name, fail, note):
    tl = rep["timeline"]
    n = len(tl["ok"])
    part = rep["elapsed_s"] - (n - 1)
    bad = 0
    for chart, svg in charts.items():
        marks = list(svg.find_all("g", cls="partial"))
        if part >= 0.999:
            if marks:
                bad += 1
                fail(f"{name}: {chart} chart marks a partial interval, but the run lasted "
                     f"{rep['elapsed_s']:.3f} s, a whole last second")
            continue
        if len(marks) != 1:
            bad += 1
            fail(f"{name}: {chart} chart: {len(marks)} partial-interval marks, expected 1 (the "
                 f"run ended {part:.3f} s into second {n - 1})")
            continue
        g = marks[0]
        want = {"data-from-s": str(n - 1), "data-length-s": "%.3f" % max(part, 0.001)}
        if chart == "throughput":
            want["data-ok"] = str(tl["ok"][-1])
            want["data-failed"] = str(tl["failed"][-1])
        elif "begun_count" in tl:
            want["data-count"] = str(tl["begun_count"][-1])
        got = {k: g.get(k) for k in want}
        if got != want:
            bad += 1
            fail(f"{name}: {chart} chart's partial interval {got}, report.json gives {want}")
            continue
        if chart != "throughput":
            continue
        rate = tl["ok"][-1] / max(part, 0.001)
        drawn = _num(g.get("data-ok-per-s"))
        if drawn is None or not math.isclose(drawn, rate, rel_tol=2e-3, abs_tol=2e-3):
            bad += 1
            fail(f"{name}: throughput partial interval drawn as {g.get('data-ok-per-s')}/s, "
                 f"report.json gives {tl['ok'][-1]} in {part:.3f} s = {rate:.3f}/s")
        # the ok series' last step: across the mark, at the rate, not the count
        series = svg.first("g", cls="series")
        step = series.first("g", cls="partial-step") if series is not None else None
        pts = _path_points(step.first("path").get("d")) if step is not None else []
        rect = g.first("rect")
        yof, log = _y_axis(svg)
        if log and tl["ok"][-1] == 0 and not pts:
            continue  # a log axis has no 0: an interval with no grant is a gap, not a step
        if len(pts) != 2 or rect is None or yof is None:
            bad += 1
            fail(f"{name}: throughput chart: no partial step of the ok series to read "
                 f"({len(pts)} points)")
            continue
        x0, x1 = float(rect.get("x")), float(rect.get("x")) + float(rect.get("width"))
        want_y = yof(rate)
        if abs(pts[0][0] - x0) > 0.6 or abs(pts[1][0] - x1) > 0.6 or abs(pts[0][1] - want_y) > 1.5:
            bad += 1
            fail(f"{name}: throughput chart's last ok step from ({pts[0][0]}, {pts[0][1]}) to "
                 f"x {pts[1][0]}; the partial interval is x {x0:.1f} .. {x1:.1f}, its rate "
                 f"{rate:.1f}/s at y {want_y:.1f} ({'log' if log else 'linear'} axis)")
    if bad == 0:
        if part < 0.999:
            note(f"{name}: time charts: the last interval marked partial ({part:.3f} s, "
                 f"{tl['ok'][-1]} ok), its step drawn at {tl['ok'][-1] / max(part, 0.001):.1f}/s")
        else:
            note(f"{name}: time charts: no partial interval, the run lasted whole seconds")


def check_binning(charts, rep, name, fail, note):
    tl = rep["timeline"]
    if "begun_count" not in tl:
        fail(f"{name}: report.json's timeline has no begun_count (latency by begin)")
        return
    if sum(tl["begun_count"]) != sum(tl["acquire_count"]):
        fail(f"{name}: report.json: begun_count adds up to {sum(tl['begun_count'])}, "
             f"acquire_count to {sum(tl['acquire_count'])}: the same grants, binned apart")
        return
    svg = charts.get("latency")
    pauses = [f for f in rep["faults"] if f.get("type") == "pause" and f.get("fired")
              and f.get("end_s") is not None and f["end_s"] - f["start_s"] >= 1.0]
    if rep["load"]["mode"] != "open" or not pauses or svg is None:
        note(f"{name}: latency by begin: {sum(tl['begun_count'])} grants, as acquire_count")
        return
    groups = {int(g.get("data-second")): g for g in svg.find_all("g", attr="data-second")}
    bad = 0
    for f in pauses:
        first, last = int(math.floor(f["start_s"])), int(math.ceil(f["end_s"])) - 1
        empty = [s for s in range(first, last + 1)
                 if s not in groups or groups[s].get("data-count") == "0"]
        if empty:
            bad += 1
            fail(f"{name}: latency chart blank in second(s) {empty} inside the pause "
                 f"{f['start_s']:.3f} .. {f['end_s']:.3f} s: open loop had acquires due there")
        p99 = {s: _num(g.get("data-p99-ms")) or 0.0 for s, g in groups.items()}
        peak = max(p99, key=lambda s: (p99[s], -s)) if p99 else None
        if peak != first:
            bad += 1
            fail(f"{name}: latency chart's highest p99 is second {peak} "
                 f"({p99.get(peak)} ms), not second {first}, where the pause "
                 f"{f['start_s']:.3f} .. {f['end_s']:.3f} s began")
    if bad == 0:
        note(f"{name}: latency by begin: every second of the pause has acquires, the p99 peak "
             f"is the second the pause began ({', '.join(str(int(f['start_s'])) for f in pauses)})")


def check_violation_spans(charts, rep, name, fail, note):
    listed = [v for v in rep["checker"]["listed"] if not v["fenced"]]
    bad = 0
    for chart, svg in charts.items():
        spans = [(_num(g.get("data-from-s")), _num(g.get("data-to-s")), int(g.get("data-pairs")))
                 for g in svg.find_all("g", cls="vspan")]
        if sum(p for _, _, p in spans) != len(listed):
            bad += 1
            fail(f"{name}: {chart} chart's violation spans count "
                 f"{sum(p for _, _, p in spans)} pairs, checker.listed has {len(listed)} "
                 f"unfenced")
        for v in listed:
            a, b = v["b"]["from_s"], min(v["a"]["to_s"], v["b"]["to_s"])
            if not any(s0 - TOL_S <= a and b <= s1 + TOL_S for s0, s1, _ in spans):
                bad += 1
                fail(f"{name}: {chart} chart: the overlap of clients {v['a']['client']} and "
                     f"{v['b']['client']} ({a:.6f} .. {b:.6f} s) lies in no violation span "
                     f"({[(s0, s1) for s0, s1, _ in spans][:5]})")
                break
        leases = [(g.get("data-client"), _num(g.get("data-granted-s")), _num(g.get("data-at-s")),
                   _num(g.get("data-ttl-ms"))) for g in svg.find_all("g", cls="lease")]
        holders = {(v["a"]["client"], v["a"]["from_s"]) for v in listed}
        ttl = (rep.get("scenario") or {}).get("lock", {}).get("ttl_ms") or 0
        for c, granted in sorted(holders):
            mine = [x for x in leases if x[0] == str(c) and abs(x[1] - granted) <= TOL_S]
            # the marker's ttl is the lease the run kept (ZooKeeper's session
            # may be longer than the scenario's ttl): never shorter
            if not mine and ttl and granted + ttl / 1e3 < rep["elapsed_s"] - 1:
                bad += 1
                fail(f"{name}: {chart} chart: no lease end for client {c}, granted at "
                     f"{granted:.6f} s (markers {leases[:4]})")
            elif mine and (abs(mine[0][2] - (granted + mine[0][3] / 1e3)) > 2 * TOL_S
                           or mine[0][3] < ttl):
                bad += 1
                fail(f"{name}: {chart} chart: client {c}'s lease end at {mine[0][2]} s, "
                     f"granted {granted:.6f} s + ttl {mine[0][3]} ms (the scenario's ttl "
                     f"{ttl} ms)")
    if bad == 0:
        holders = {(v["a"]["client"], v["a"]["from_s"]) for v in listed}
        note(f"{name}: time charts: {len(listed)} listed violation(s) inside the violation "
             f"spans, lease ends of their {len(holders)} stale holder(s) marked")


def check_run(dom, rep, name, fail, note):
    charts = {k: dom.first("svg", cls="chart " + k) for k in ("throughput", "latency")}
    charts = {k: v for k, v in charts.items() if v is not None}
    check_partial(charts, rep, name, fail, note)
    check_binning(charts, rep, name, fail, note)
    check_violation_spans(charts, rep, name, fail, note)
