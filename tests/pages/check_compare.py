"""compare.html tells the story of a comparison, and matrix.html says only
what is true of it: called from html_check.py (compare and matrix modes)
with the DOM Chromium built, the page's JSON, and html_check's fail/note.

- The time charts (svg.chart.throughput, svg.chart.latency): one series
  per algorithm that ran, in compare.json's order, each held to its run's
  report.json timeline exactly: locks acquired per interval, each
  interval's length (the last one cut at the run's end, marked partial),
  the worst p99 per interval. The fault bands: one per fault that fired,
  from the earliest start to the latest end over the runs' report.json
  faults, a mark per algorithm at its own span, under the plot area (never
  over the series); each series in its lock's colour (the same on every
  page).
- The fault-window cost (table.cost): a row per fault and algorithm, its
  granted, granted_within, failed, ambiguous, longest no grant and recovery equal to
  compare.json's, and compare.json's to the run's report.json.
- The effective settings (div.settings): per algorithm, the lines of
  compare.json's settings.text, and those `locklab show` prints for the
  scenario with that algorithm (LOCKLAB_BIN).
- Bar labels: every label of a bar chart has a textLength (so its extent
  is known exactly) and lies inside its chart's frame and viewBox.
- matrix.html: a footer that says "hover a chart" needs a chart with hover
  text; one that says "hover a seed" needs seed links with a title.
"""
import json
import os
import subprocess


def _floats(text):
    return [None if v == "-" else float(v) for v in text.split(",")] if text else []


def _report(cdir, a):
    path = os.path.join(a["run_dir"] or os.path.join(cdir, a["algorithm"]), "report.json")
    with open(path) as f:
        return json.load(f)


def _ran(cmp):
    return [a for a in cmp["algorithms"] if a["verdict"] != "NOT RUN"]


def _series(svg):
    return [g for g in svg.find_all("g", cls="series") if "data-algorithm" in g.attrs]


def _intervals(rep, g):
    """Locks acquired per interval of g seconds, and each interval's length
    (the last cut at the run's end, as compare_parts.c words it: %.3f)."""
    ok, el = rep["timeline"]["ok"], rep["elapsed_s"]
    counts, lengths = [], []
    for s in range(0, len(ok), g):
        counts.append(sum(ok[s:s + g]))
        lengths.append("%.3f" % max(min(float(g), el - s), 0.001))
    return counts, lengths


def _p99s(rep, g):
    tl = rep["timeline"]
    # by when each acquire began, as report.html draws it, when the run has it
    key = "begun" if "begun_count" in tl else "acquire"
    out = []
    for s in range(0, len(tl[key + "_count"]), g):
        worst = None
        for k in range(s, min(s + g, len(tl[key + "_count"]))):
            v = tl[key + "_p99_ms"][k]
            if tl[key + "_count"][k] and v is not None and (worst is None or v > worst):
                worst = v
        out.append("-" if worst is None else "%.3f" % max(worst, 0.001))
    return out


def check_time_charts(dom, cmp, reps, name, fail, note, colours=None):
    bad = 0
    ran = [a["algorithm"] for a in _ran(cmp)]
    for cls in ("throughput", "latency"):
        svg = dom.first("svg", cls="chart " + cls)
        if svg is None:
            fail(f"{name}: no <svg class=\"chart {cls}\">: no {cls} over time per algorithm")
            bad += 1
            continue
        series = _series(svg)
        got = [g.get("data-algorithm") for g in series]
        if got != ran:
            bad += 1
            fail(f"{name}: {cls} chart's series {got}, the algorithms that ran {ran}")
        for g in series:
            al = g.get("data-algorithm")
            path = g.first("path")
            if colours and (path is None or path.get("stroke") != colours.get(al, "#333333")):
                bad += 1
                fail(f"{name}: {cls} chart, {al}: drawn in {path.get('stroke') if path else None}"
                     f", its colour on every page {colours.get(al)}")
            if al not in reps:
                continue
            rep, step = reps[al], int(g.get("data-interval-s", "0") or 0)
            if step < 1:
                bad += 1
                fail(f"{name}: {cls} chart, {al}: data-interval-s {g.get('data-interval-s')!r}")
                continue
            if cls == "throughput":
                counts, lengths = _intervals(rep, step)
                got = ([int(v) for v in g.get("data-counts", "").split(",") if v],
                       g.get("data-lengths-s", "").split(","))
                if got != (counts, lengths):
                    bad += 1
                    fail(f"{name}: throughput, {al}: counts/lengths {got}, its report.json "
                         f"timeline.ok and elapsed_s give {(counts, lengths)}")
                partial = bool(lengths) and float(lengths[-1]) < step - 1e-9
                marked = g.first("path", cls="partial") is not None
                if g.get("data-partial") != ("last" if partial else "none") or marked != partial:
                    bad += 1
                    fail(f"{name}: throughput, {al}: last interval {lengths[-1:]} s of {step}: "
                         f"data-partial {g.get('data-partial')!r}, dashed path {marked}")
                elif partial:
                    last = max(rep["elapsed_s"] - (len(counts) - 1) * step, 0.001)
                    rate = "%.1f/s" % (counts[-1] / last)
                    title = g.first("title")
                    if title is None or rate not in title.text():
                        bad += 1
                        fail(f"{name}: throughput, {al}: the partial interval's title does not "
                             f"give its scaled rate {rate}")
            else:
                want = _p99s(rep, step)
                got = g.get("data-p99-ms", "").split(",")
                if got != want:
                    bad += 1
                    fail(f"{name}: latency, {al}: p99 per interval {got}, its report.json "
                         f"timeline gives {want}")
        bad += _check_bands(svg, cls, cmp, reps, name, fail)
    if bad == 0:
        note(f"{name}: throughput and latency over time: one series per algorithm "
             f"({', '.join(ran)}), counts, interval lengths (the partial last one marked) and "
             f"p99 equal to each run's report.json, fault bands at the runs' spans")
    return bad


def _check_bands(svg, cls, cmp, reps, name, fail):
    bad = 0
    bands = [g for g in svg.children if getattr(g, "tag", None) == "g" and "data-fault" in g.attrs]
    want = []
    for i, spec in enumerate(cmp.get("faults") or []):
        lived = []
        for al, rep in reps.items():
            x = rep["faults"][i] if i < len(rep["faults"]) else {}
            if x.get("fired"):
                end = x["end_s"] if x.get("end_s") is not None else rep["elapsed_s"]
                lived.append((al, x["start_s"], end))
        if lived:
            want.append((i, spec, lived))
    if len(bands) != len(want):
        fail(f"{name}: {cls} chart has {len(bands)} fault bands, {len(want)} faults fired in "
             f"the runs")
        return 1
    for g, (i, spec, lived) in zip(bands, want):
        a, b = min(x[1] for x in lived), max(x[2] for x in lived)
        got = (g.get("data-fault"), g.get("data-from-s"), g.get("data-to-s"))
        if got != (str(i), "%.3f" % a, "%.3f" % b):
            bad += 1
            fail(f"{name}: {cls} chart's band {got}, the runs give fault {i} "
                 f"{a:.3f} .. {b:.3f} s")
        label = g.first("text")
        if label is None or "(as run)" not in label.text():
            bad += 1
            fail(f"{name}: {cls} chart's band of fault {i} does not say which span it draws")
        marks = {m.get("data-run"): (m.get("data-from-s"), m.get("data-to-s"))
                 for m in g.find_all("rect", cls="span-mark")}
        frame = svg.first("rect", cls="frame")
        foot = float(frame.get("y")) + float(frame.get("height")) if frame is not None else 0
        inside = [m.get("data-run") for m in g.find_all("rect", cls="span-mark")
                  if float(m.get("y")) < foot]
        if inside:
            bad += 1
            fail(f"{name}: {cls} chart's band of fault {i}: the span marks of {inside} lie on "
                 f"the plot (above y {foot:.1f}), over the series")
        wmarks = {al: ("%.3f" % s, "%.3f" % e) for al, s, e in lived}
        if marks != wmarks:
            bad += 1
            fail(f"{name}: {cls} chart's band of fault {i}: per-algorithm spans {marks}, the "
                 f"runs' report.json {wmarks}")
    return bad


def _close(a, b):
    return abs(a - b) <= 0.0005 + abs(b) * 1e-5


def check_cost(dom, cmp, reps, name, fail, note):
    bad, n = 0, 0
    table = dom.first("table", cls="cost")
    faults = cmp.get("faults") or max((r["faults"] for r in reps.values()), key=len, default=[])
    if table is None:
        if faults:
            fail(f"{name}: no table.cost: no fault-window cost per algorithm "
                 f"({len(faults)} fault(s) in the scenario)")
            return 1
        return 0
    rows = {(r.get("data-run"), r.get("data-fault")): r
            for r in table.find_all("tr", attr="data-fault")}
    for a in _ran(cmp):
        al = a["algorithm"]
        for i, x in enumerate(a.get("faults") or []):
            av = x["availability"]
            rep_av = reps[al]["faults"][i].get("availability") if al in reps else None
            if (av is None) != (rep_av is None) or (av and any(
                    not _close(av[k], rep_av[k]) if isinstance(av[k], float) else av[k] != rep_av[k]
                    for k in av)):
                bad += 1
                fail(f"{name}: compare.json {al} fault {i} availability {av}, its report.json "
                     f"{rep_av}")
            r = rows.get((al, str(i)))
            if r is None:
                bad += 1
                fail(f"{name}: table.cost has no row for {al}, fault {i}")
                continue
            n += 1
            if av is None:
                continue
            cell = {k: c for c in r.cells() for k in c.attrs if k.startswith("data-")}
            ints = {"data-granted": av["granted"], "data-granted-within": av["granted_within"],
                    "data-failed": av["failed"], "data-ambiguous": av["ambiguous"]}
            for k, v in ints.items():
                if k not in cell or cell[k].get(k) != str(v):
                    bad += 1
                    fail(f"{name}: cost of {al}, fault {i}: {k} "
                         f"{cell[k].get(k) if k in cell else None}, compare.json {v}")
            gap = cell.get("data-no-grant-ms")
            if gap is None or not _close(float(gap.get("data-no-grant-ms")),
                                         av["longest_no_grant_ms"]):
                bad += 1
                fail(f"{name}: cost of {al}, fault {i}: longest no grant "
                     f"{gap.get('data-no-grant-ms') if gap else None} ms, compare.json "
                     f"{av['longest_no_grant_ms']}")
            rec = cell.get("data-recovery-ms")
            got = rec.get("data-recovery-ms") if rec is not None else None
            want = av["recovery_ms"]
            if got is None or (want is None) != (got == "never") or (
                    want is not None and not _close(float(got), want)):
                bad += 1
                fail(f"{name}: cost of {al}, fault {i}: recovery {got} ms, compare.json {want}")
    if len(rows) != n:
        bad += 1
        fail(f"{name}: table.cost has {len(rows)} rows, compare.json {n} (fault, algorithm) pairs")
    stuck = {x.get("data-run"): x.get("data-stuck-lock-ms")
             for x in dom.find_all("span", attr="data-stuck-lock-ms")}
    for a in _ran(cmp) if faults else []:
        want = (reps[a["algorithm"]]["stuck_locks"].get("stuck_ms") or 0
                if a["algorithm"] in reps else a.get("stuck_lock_ms"))
        got = stuck.get(a["algorithm"])
        if got is None or want is None or not _close(float(got), want):
            bad += 1
            fail(f"{name}: {a['algorithm']}'s stuck lock {got} ms, its report.json {want}")
    if bad == 0:
        note(f"{name}: fault-window cost: {n} row(s), granted/failed/ambiguous/no grant/recovery "
             f"equal to compare.json, and compare.json's to each report.json; each run's stuck "
             f"lock as its report.json's")
    return bad


def _show_lines(scn, algorithm):
    """The settings lines `locklab show` prints for the scenario as the run
    had it (its file, from the working folder the run had, with the
    clients and duration it ran with): from "  lock:" to "  servers:"."""
    cmd = [os.environ["LOCKLAB_BIN"], "show", scn["file"], "--algorithm", algorithm,
           "--clients", str(scn["clients"]), "--duration", "%g" % (scn["duration_ms"] / 1000)]
    if scn.get("rate"):
        cmd += ["--rate", "%g" % scn["rate"]]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True,
                         timeout=60).stdout.splitlines()
    lines = []
    for line in out[next((k for k, x in enumerate(out) if x.startswith("  lock:")), len(out)):]:
        if not line.startswith("  ") or line.startswith("  servers:"):
            break
        lines.append(line.strip())
    return lines


def check_settings(dom, cmp, reps, name, fail, note):
    bad = 0
    blocks = {d.get("data-algorithm"): d for d in dom.find_all("div", cls="settings")}
    shown = 0
    for a in _ran(cmp):
        al = a["algorithm"]
        d = blocks.get(al)
        if d is None:
            bad += 1
            fail(f"{name}: no effective settings shown for {al}")
            continue
        got = [s.text().strip() for s in d.find_all("span", cls="line")]
        if not a.get("settings"):
            bad += 1
            fail(f"{name}: compare.json has no settings for {al}")
            continue
        want = [x.strip() for x in a["settings"]["text"].splitlines()]
        if got != want:
            bad += 1
            fail(f"{name}: {al}'s settings {got}, compare.json settings.text {want}")
        if al in reps and os.environ.get("LOCKLAB_BIN"):
            show = _show_lines(reps[al]["scenario"], al)
            if got != show:
                bad += 1
                fail(f"{name}: {al}'s settings {got}, `locklab show --algorithm {al}` {show}")
            shown += 1
        if al in reps and a["settings"]["lock"] != reps[al]["scenario"]["lock"]:
            bad += 1
            fail(f"{name}: compare.json {al} settings.lock, its report.json scenario.lock differ")
    if bad == 0:
        note(f"{name}: effective settings of {len(blocks)} algorithm(s) as compare.json's, "
             f"{shown} of them as `locklab show` prints them")
    return bad


def check_bar_labels(dom, name, fail, note):
    bad, n = 0, 0
    for svg in dom.find_all("svg", cls="chart bars"):
        vb = [float(v) for v in (svg.get("viewbox") or "0 0 0 0").split()]
        frame = svg.first("rect", cls="frame")
        fx0 = float(frame.get("x")) if frame is not None else vb[0]
        fx1 = fx0 + float(frame.get("width")) if frame is not None else vb[2]
        bars = list(svg.find_all("rect", attr="data-algorithm"))
        labels = list(svg.find_all("text", cls="bar-label"))
        if len(labels) != len(bars):
            bad += 1
            fail(f"{name}: bar chart {svg.get('aria-label')!r}: {len(bars)} bars, "
                 f"{len(labels)} text.bar-label")
        for t in labels or [t for t in svg.find_all("text") if t.get("class") == "tick"
                            and t.get("text-anchor") is None]:
            n += 1
            w = t.get("textlength")  # html.parser lowercases attribute names
            if w is None:
                bad += 1
                fail(f"{name}: bar label {t.text()!r} has no textLength: where it ends is "
                     f"unknown (below: at 7 px a character)")
            x, w = float(t.get("x")), float(w) if w is not None else 7.0 * len(t.text())
            anchor = t.get("text-anchor") or "start"
            x0 = x - w if anchor == "end" else x - w / 2 if anchor == "middle" else x
            if not (fx0 <= x0 and x0 + w <= fx1 and vb[0] <= x0 and x0 + w <= vb[0] + vb[2]):
                bad += 1
                fail(f"{name}: bar label {t.text()!r} spans {x0:.1f} .. {x0 + w:.1f}, its frame "
                     f"{fx0:.1f} .. {fx1:.1f} (viewBox width {vb[2]:.0f})")
    if bad == 0:
        note(f"{name}: {n} bar label(s), each inside its frame and viewBox")
    return bad


def check_compare_story(dom, cmp, cdir, name, fail, note, colours=None):
    """Every check above on compare.html; the number of mismatches."""
    reps = {}
    for a in _ran(cmp):
        try:
            reps[a["algorithm"]] = _report(cdir, a)
        except (OSError, ValueError) as e:
            fail(f"{name}: {a['algorithm']}'s report.json: {e}")
    return (check_time_charts(dom, cmp, reps, name, fail, note, colours)
            + check_cost(dom, cmp, reps, name, fail, note)
            + check_settings(dom, cmp, reps, name, fail, note)
            + check_bar_labels(dom, name, fail, note))


def check_matrix_hover(dom, name, fail, note):
    footer = dom.first("footer")
    text = footer.text() if footer is not None else ""
    charts = [s for s in dom.find_all("svg") if s.first("title") is not None]
    seeds = [a for a in dom.find_all("a", attr="title")]
    if "hover a chart" in text and not charts:
        fail(f"{name}: the footer says \"hover a chart\"; the page has no chart")
        return 1
    if "hover a seed" in text and not seeds:
        fail(f"{name}: the footer says \"hover a seed\"; no seed link has hover text")
        return 1
    note(f"{name}: the footer's hover promise holds ({len(charts)} chart(s), {len(seeds)} seed "
         f"link(s) with hover text)")
    return 0
