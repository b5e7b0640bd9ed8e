"""report.html's violations by group (sim/check/groups.h), held to
report.json's "violation_groups" (docs/report-json.md): one lock timeline
per drawn group with the stale holder's lease running out marked and every
pair of the group marked, and a table of groups with each group's listed
pairs on demand (<details>).

check(dom, rep, name, fail, note): dom is html_check.py's parsed DOM (Node),
rep report.json; fail and note print a mismatch and a passed check.
"""

MAX_TIMELINES = 10  # groups drawn (reports/html.c, CONTEXT_WINDOWS)
MAX_LANES = 20      # clients in one timeline (reports/html_timelines.c)
MAX_BARS = 400      # sections drawn in one timeline
MAX_PAIR_ROWS = 100  # pairs under one group (reports/html_tables.c)


def _num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return float("nan")


def _close(a, b, tol=2e-6):
    return abs(a - b) <= tol


def _drawn_want(groups):
    """The groups report.html draws: the 10 with the most pairs (ties: the
    earlier), in the list's order."""
    order = sorted(range(len(groups)), key=lambda i: (-groups[i]["pairs"], i))
    return sorted(order[:MAX_TIMELINES])


def _check_counts(vg, rep, name, fail):
    bad = 0
    viol = rep["checker"]["violations"]
    pairs = sum(g["pairs"] for g in vg["list"]) + vg["other_pairs"]
    if pairs != viol:
        bad += 1
        fail(f"{name}: violation_groups: pairs of the kept groups + other_pairs = {pairs}, "
             f"checker.violations = {viol}")
    if len(vg["list"]) + vg["other_groups"] != vg["groups"]:
        bad += 1
        fail(f"{name}: violation_groups: {len(vg['list'])} kept + {vg['other_groups']} other "
             f"!= {vg['groups']} groups")
    if viol > 0 and not vg["list"]:
        bad += 1
        fail(f"{name}: {viol} violations and no group kept")
    listed = [v for v in rep["checker"]["listed"] if not v["fenced"]]
    for i, g in enumerate(vg["list"]):
        st = g["stale"]
        mine = [v for v in listed if v["key"] == g["key"] and v["a"]["client"] == st["client"]
                and _close(v["a"]["from_s"], st["from_s"])]
        if len(mine) != g["listed"]:
            bad += 1
            fail(f"{name}: group {i + 1}: listed {g['listed']}, checker.listed has {len(mine)} "
                 f"pairs with its stale holder first")
        # a late holder's lease ran from the stop it waited out, not from its entry
        late = g["blame"] == "late_holder"
        since = g["late"]["stop_from_s"] if late else st["from_s"]
        if g["lease_ends_s"] is not None and vg["lease_ttl_ms"] and not _close(
                g["lease_ends_s"], since + vg["lease_ttl_ms"] / 1000.0, 1e-6):
            bad += 1
            fail(f"{name}: group {i + 1}: lease_ends_s {g['lease_ends_s']}, expected its "
                 f"{'stop' if late else 'entry'} {since} + {vg['lease_ttl_ms']} ms")
        if vg["leaseless"] and g["lease_ends_s"] is not None:
            bad += 1
            fail(f"{name}: group {i + 1}: lease_ends_s {g['lease_ends_s']} for a lock with no lease")
    return bad


def _check_timeline(d, g, i, name, fail):
    bad = 0
    st = g["stale"]
    want = (g["key"], str(st["client"]), str(g["pairs"]))
    got = (d.get("data-key"), d.get("data-stale"), d.get("data-pairs"))
    if got != want:
        bad += 1
        fail(f"{name}: timeline {i + 1}: (key, stale, pairs) = {got}, violation_groups gives {want}")
    if not _close(_num(d.get("data-stale-from-s")), st["from_s"]):
        bad += 1
        fail(f"{name}: timeline {i + 1}: stale holder from {d.get('data-stale-from-s')} s, "
             f"violation_groups {st['from_s']}")
    held = [h for h in d.find_all("g", cls="held") if h.get("data-client") == str(st["client"])]
    tok = "-" if not st["token"] else str(st["token"])
    if not any(h.get("data-token") == tok for h in held):
        bad += 1
        fail(f"{name}: timeline {i + 1}: no held bar for the stale holder, client {st['client']} "
             f"token {tok}")
    lease = g["lease_ends_s"]
    marks = list(d.find_all("g", cls="lease-end"))
    # a late holder's lease ran out before it entered: outside its window
    if lease is not None and st["from_s"] <= lease <= max(st["to_s"], g["reach_s"]):
        if len(marks) != 1 or not _close(_num(marks[0].get("data-at-s")), lease):
            bad += 1
            fail(f"{name}: timeline {i + 1}: lease-expiry markers "
                 f"{[m.get('data-at-s') for m in marks]}, expected one at {lease} s")
    pairs = list(d.find_all("g", cls="pair"))
    note_p = d.first("p", attr="data-pairs-drawn")
    drawn = int(note_p.get("data-pairs-drawn")) if note_p is not None else -1
    if drawn != len(pairs):
        bad += 1
        fail(f"{name}: timeline {i + 1}: {len(pairs)} pair marks, its note says {drawn}")
    room = (not g["holders_more"] and len(g["holders"]) < MAX_LANES
            and g["pairs"] + 1 <= MAX_BARS)
    if room and len(pairs) != g["pairs"]:
        bad += 1
        fail(f"{name}: timeline {i + 1}: {len(pairs)} pairs marked, the group has {g['pairs']} "
             f"(every one fits: {len(g['holders'])} clients)")
    if not room and not 0 < len(pairs) <= g["pairs"]:
        bad += 1
        fail(f"{name}: timeline {i + 1}: {len(pairs)} pairs marked of {g['pairs']}")
    clients = {p.get("data-client") for p in pairs}
    if not g["holders_more"] and not clients <= {str(c) for c in g["holders"]}:
        bad += 1
        fail(f"{name}: timeline {i + 1}: pairs marked on clients {sorted(clients)}, the group's "
             f"holders are {g['holders']}")
    return bad


def _check_table(dom, vg, name, fail):
    bad = 0
    table = dom.first("table", cls="violations groups")
    if table is None:
        fail(f"{name}: no <table class=\"violations groups\">")
        return 1
    rows = list(table.find_all("tr", cls="group"))
    if len(rows) != len(vg["list"]):
        bad += 1
        fail(f"{name}: {len(rows)} group rows, violation_groups keeps {len(vg['list'])}")
    details = [dt for dt in table.find_all("details")]
    if len(details) != len(vg["list"]):
        bad += 1
        fail(f"{name}: {len(details)} <details> of pairs, one per group expected "
             f"({len(vg['list'])})")
    for i, (row, g, dt) in enumerate(zip(rows, vg["list"], details)):
        want = (str(g["stale"]["client"]), str(g["pairs"]))
        got = (row.get("data-stale"), row.get("data-pairs"))
        if got != want:
            bad += 1
            fail(f"{name}: table group {i + 1}: (stale, pairs) = {got}, expected {want}")
        shown = list(dt.find_all("tr", cls="pair"))
        if dt.get("data-listed") != str(g["listed"]) or len(shown) != min(g["listed"],
                                                                           MAX_PAIR_ROWS):
            bad += 1
            fail(f"{name}: table group {i + 1}: {len(shown)} pair rows (data-listed "
                 f"{dt.get('data-listed')}), violation_groups lists {g['listed']} of it")
        if any(p.get("data-a") != str(g["stale"]["client"]) for p in shown):
            bad += 1
            fail(f"{name}: table group {i + 1}: a pair under it does not start with client "
                 f"{g['stale']['client']}")
    other = table.first("tr", cls="other")
    if vg["other_groups"] and (other is None or other.get("data-pairs") != str(vg["other_pairs"])):
        bad += 1
        fail(f"{name}: other groups: row {None if other is None else other.get('data-pairs')}, "
             f"violation_groups other_pairs {vg['other_pairs']}")
    if not vg["other_groups"] and other is not None:
        bad += 1
        fail(f"{name}: an \"other\" row with no other groups")
    return bad


def _check_fault_keys(vg, rep, name, fail):
    """A fault on a holder names the key the group of its stale holder is
    on: the fault's key is the history's, not the workload's numbering."""
    bad = 0
    for f in rep["faults"]:
        if not f.get("fired") or "key" not in f or "client" not in f:
            continue
        for g in vg["list"]:
            same = [x for x in g["faults"] if x["type"] == f["type"] and x.get("client") == f["client"]]
            if same and g["stale"]["client"] == f["client"] and g["key"] != f["key"]:
                bad += 1
                fail(f"{name}: {f['type']} of client {f['client']} names key {f['key']}, "
                     f"its stale holder's group is on {g['key']}")
    return bad


def check(dom, rep, name, fail, note):
    vg = rep.get("violation_groups")
    if vg is None:
        fail(f"{name}: report.json has no violation_groups")
        return
    bad = _check_counts(vg, rep, name, fail)
    timelines = list(dom.find_all("div", cls="lock-timeline"))
    want = _drawn_want(vg["list"])
    flags = [i for i, g in enumerate(vg["list"]) if g["drawn"]]
    if flags != want:
        bad += 1
        fail(f"{name}: violation_groups drawn {flags}, the 10 with the most pairs are {want}")
    if len(timelines) != len(want):
        bad += 1
        fail(f"{name}: {len(timelines)} lock timelines, one per drawn group expected "
             f"({len(want)} of {vg['groups']} groups)")
    for i, (d, k) in enumerate(zip(timelines, want)):
        bad += _check_timeline(d, vg["list"][k], i, name, fail)
    if rep["checker"]["violations"] > 0:
        bad += _check_table(dom, vg, name, fail)
    bad += _check_fault_keys(vg, rep, name, fail)
    if bad == 0 and not vg["groups"]:
        note(f"{name}: no violation, no group, no lock timeline")
    elif bad == 0:
        marks = sum(len(list(d.find_all("g", cls="pair"))) for d in timelines)
        leases = sum(len(list(d.find_all("g", cls="lease-end"))) for d in timelines)
        note(f"{name}: {vg['groups']} violation group(s), pairs summing to "
             f"{rep['checker']['violations']}; {len(timelines)} timeline(s), one per drawn "
             f"group, {leases} lease expiry(ies) in their windows and {marks} pair(s) marked; "
             f"a table row and <details> of listed pairs per group")
