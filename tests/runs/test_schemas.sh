#!/usr/bin/env bash
# report.json and compare.json of real short runs, validated against
# docs/schema/report.schema.json and docs/schema/compare.schema.json, and
# history.json (locklab history of them all) against history.schema.json
# (JSON Schema 2020-12) with Debian's python3-jsonschema. The runs give the
# shapes the schemas branch on that a short run produces reliably: PASS,
# FAIL, INCOMPLETE, faults fired, fencing, a crash, the watchdog, each
# workload and lock, an interrupted comparison (INCOMPLETE and NOT RUN
# rows), a comparison with an algorithm that cannot run the scenario. Then
# a few facts no schema can state, then mutated copies that must fail.
#   tests/runs/test_schemas.sh SOURCE_DIR LOCKLAB_BIN
set -uo pipefail
py=/usr/bin/python3 # Debian's, with python3-jsonschema; not a pyenv one
"$py" -c 'import jsonschema' 2>/dev/null ||
  { echo "test_schemas: $py cannot import jsonschema (apt-get install python3-jsonschema)" >&2; exit 1; }
# On the way out, however it goes, the interrupted comparison, if still
# running, is stopped and waited for: it writes into $tmp as it stops.
stop_gently=1
# shellcheck source=tests/lib/run_test.sh
. "$(dirname "$0")/../lib/run_test.sh" schemas "$@"

# One locklab command into $tmp/NAME; any exit status but the ones that
# leave a report behind (0 PASS, 1 FAIL, 3 INCOMPLETE) is a failure.
locklab() {
  local name=$1
  shift
  "$bin" "$@" --out "$tmp/$name" --quiet >"$tmp/$name.log" 2>&1
  local rc=$?
  echo "ran    $name (exit $rc): locklab $*"
  if [ "$rc" -gt 1 ] && [ "$rc" -ne 3 ]; then
    echo "FAIL   $name: exit status $rc; its output:"
    sed 's/^/         /' "$tmp/$name.log"
    failed=1
  fi
}

locklab redis run scenarios/flash_sale.json --algorithm redis --duration 1
locklab redlock run scenarios/flash_sale_watchdog_pause.json --algorithm redlock --duration 2
locklab pause run scenarios/flash_sale_pause.json --duration 2
locklab pause_fail run scenarios/flash_sale_pause.json --duration 1.5 --clients 1
locklab fenced run scenarios/flash_sale_pause_fenced.json --duration 2
locklab crash run scenarios/flash_sale_crash.json --duration 2.5
locklab cache run scenarios/cache_rebuild.json --duration 1
# open loop: report.json's load branches on it
locklab open run scenarios/cache_rebuild.json --duration 1.5 --rate 40
locklab tasks run scenarios/scheduled_tasks.json --algorithm zookeeper --duration 2
locklab ids run scenarios/order_ids_naive_slow.json --duration 1
# the workloads of lock modes: readers sharing, permits, a permit lost
locklab reads run scenarios/read_mostly.json --duration 1
locklab torn run scenarios/read_mostly_naive_slow.json --duration 1
locklab pool run scenarios/pool_crash.json --duration 2.5
locklab latch run scenarios/latch.json --algorithm redisson-latch-naive --duration 1.5
# network faults: a holder's black hole (client, servers), a one-way fault
locklab holehold run scenarios/redis_holder_blackhole_fenced.json --duration 3
locklab oneway run scenarios/redlock_oneway_blackhole.json --duration 3.5
locklab compare compare scenarios/flash_sale.json --algorithms redis,zookeeper --duration 1
# redlock gives no fencing tokens: its row is NOT RUN, with the reason.
locklab cannot compare scenarios/flash_sale_pause_fenced.json --algorithms redis,redlock --duration 2
# a pool on a lock that is no semaphore: NOT RUN, for its workload
locklab nopool compare scenarios/pool.json --algorithms redis,redisson-semaphore --duration 1

# Ctrl-C inside the first of two runs: that one INCOMPLETE, the other NOT RUN.
# The run's folder appears as it starts (after the servers): then 1 s more.
"$bin" compare scenarios/flash_sale.json --algorithms redis,zookeeper --duration 30 \
  --out "$tmp/interrupted" --quiet >"$tmp/interrupted.log" 2>&1 &
pid=$!
interrupt_after "$tmp/interrupted/redis" 1
echo "ran    interrupted (exit $rc): locklab compare scenarios/flash_sale.json --algorithms redis,zookeeper --duration 30, SIGINT 1 s into the redis run"
if [ "$rc" -ne 130 ]; then
  echo "FAIL   interrupted: exit status $rc, expected 130; its output:"
  sed 's/^/         /' "$tmp/interrupted.log"
  failed=1
fi

# Every run above indexed (runs, comparisons' runs, the interrupted one):
# history.json and history.html written into $tmp itself, beside the runs.
rc=0
"$bin" history "$tmp" >"$tmp/history.log" 2>&1 || rc=$?
echo "ran    history (exit $rc): locklab history $tmp"
if [ "$rc" -ne 0 ]; then
  echo "FAIL   history: exit status $rc; its output:"
  sed 's/^/         /' "$tmp/history.log"
  failed=1
fi

"$py" - "$src/docs/schema" "$tmp" "$bin" <<'PY' || failed=1
import copy, json, os, sys
import jsonschema
from jsonschema import Draft202012Validator, validators

sys.path.insert(0, "tests/lib")
import check_lines
from check_lines import fail

schema_dir, tmp, locklab = sys.argv[1], sys.argv[2], sys.argv[3]

# JSON has one number type; jansson writes integers without a fraction.
# Make "integer" mean exactly that, so a count written as 3.0 is drift too.
strict = Draft202012Validator.TYPE_CHECKER.redefine(
    "integer", lambda checker, x: isinstance(x, int) and not isinstance(x, bool))
Strict = validators.extend(Draft202012Validator, type_checker=strict)

validator = {}
for kind in ("report", "compare", "history"):
    path = os.path.join(schema_dir, kind + ".schema.json")
    try:
        with open(path) as f:
            schema = json.load(f)
        Draft202012Validator.check_schema(schema)
    except (OSError, ValueError, jsonschema.SchemaError) as e:
        fail(f"{path}: not a valid 2020-12 schema: {e}")
        sys.exit(1)
    validator[kind] = Strict(schema)
    print(f"ok     {os.path.relpath(path, os.path.dirname(schema_dir))}: a valid 2020-12 schema")

def errors(kind, doc):
    """Every error, deepest first inside anyOf/oneOf, as 'path: message'."""
    out = []
    def walk(e, depth):
        msg = e.message if len(e.message) <= 160 else e.message[:150] + " [...]"
        out.append("  " * depth + f"{e.json_path}: {msg}")
        for sub in sorted(e.context, key=lambda s: list(s.absolute_path))[:6]:
            walk(sub, depth + 1)
    for e in sorted(validator[kind].iter_errors(doc), key=lambda e: list(e.absolute_path)):
        walk(e, 0)
    return out

def load(rel):
    path = os.path.join(tmp, rel)
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        fail(f"{rel}: cannot read: {e}")
        return None

def check(kind, rel, doc, facts):
    errs = errors(kind, doc) + [f"$ (cross-check): {m}" for m in facts(doc)]
    if errs:
        fail(f"{rel}: {len(errs)} error(s) against {kind}.schema.json")
        for line in errs:
            print("         " + line)
    else:
        print(f"ok     {rel}")

def report_facts(d):
    out = []
    if d.get("scenario", {}).get("lock", {}).get("algorithm") != d.get("algorithm"):
        out.append("scenario.lock.algorithm differs from algorithm")
    t = d.get("timeline", {})
    if len(t.get("ok", [])) != len(t.get("failed", [])):
        out.append("timeline.ok and timeline.failed differ in length")
    c = d.get("checker", {})
    if c.get("violations") != c.get("overlaps", 0) - c.get("fenced_pairs", 0):
        out.append("checker.violations is not overlaps - fenced_pairs")
    if c.get("witness_agrees") != (c.get("witness_concurrent_entries") == c.get("concurrent_entries")):
        out.append("checker.witness_agrees does not match the two counts")
    if c.get("fenced_pairs") != sum(1 for p in c.get("listed", []) if p.get("fenced")) \
            and len(c.get("listed", [])) < 1000:
        out.append("checker.fenced_pairs differs from the fenced pairs in listed")
    s = d.get("safety", {})
    if s.get("violations") != c.get("violations"):
        out.append("safety.violations is not checker.violations")
    broken = sum(1 for i in d.get("invariants", []) if not i.get("holds") and not i.get("advisory"))
    if s.get("invariants_broken") != broken:
        out.append(f"safety.invariants_broken is {s.get('invariants_broken')}, the invariants "
                   f"give {broken}")
    if s.get("so_far") and d.get("complete") and not c.get("history_dropped"):
        out.append("safety.so_far in a complete run with every history event")
    if d.get("meta", {}).get("started_at") != d.get("started_at"):
        out.append("meta.started_at is not started_at")
    k = d.get("counters", {})
    for op in ("acquire", "release", "renew"):
        # /3 renamed *_unsent: the old key stays beside the new for one version
        if k.get(f"{op}_unsent") != k.get(f"{op}_no_effect"):
            out.append(f"counters.{op}_unsent {k.get(op + '_unsent')} is not {op}_no_effect "
                       f"{k.get(op + '_no_effect')}")
        if k.get(f"{op}_errors") != k.get(f"{op}_no_effect", 0) + k.get(f"{op}_ambiguous", 0):
            out.append(f"counters.{op}_errors is not {op}_no_effect + {op}_ambiguous")
    return out

def cost_facts(r, rep):
    """A row's settings and fault-window cost are its report.json's (the
    row's floats to 6 significant digits)."""
    out, al = [], r.get("algorithm")
    scn = rep.get("scenario", {})
    if (r.get("settings") or {}).get("lock") != scn.get("lock") or \
            (r.get("settings") or {}).get("defaults") != scn.get("defaults"):
        out.append(f"{al}: settings.lock/defaults differ from its report.json's scenario")
    want_stuck = rep.get("stuck_locks", {}).get("stuck_ms") or 0
    if r.get("stuck_lock_ms") is None or abs(r["stuck_lock_ms"] - want_stuck) > 1e-5 * want_stuck + 1e-6:
        out.append(f"{al}: stuck_lock_ms {r.get('stuck_lock_ms')}, its report.json {want_stuck}")
    faults, want = r.get("faults") or [], rep.get("faults", [])
    if len(faults) != len(want):
        out.append(f"{al}: {len(faults)} faults, its report.json {len(want)}")
    for i, (x, y) in enumerate(zip(faults, want)):
        a, b = x.get("availability"), y.get("availability")
        if (a is None) != (b is None) or (a and any(
                (a[k] is None) != (b[k] is None) or
                (a[k] is not None and abs(a[k] - b[k]) > 1e-5 * abs(b[k]) + 1e-6) for k in b)):
            out.append(f"{al}: faults[{i}].availability {a}, its report.json {b}")
    return out

def compare_facts(dirname):
    def facts(d):
        out = []
        rows = d.get("algorithms", [])
        if "not_run" in d and d["not_run"] != sum(r.get("verdict") == "NOT RUN" for r in rows):
            out.append(f"not_run is {d['not_run']}, the rows say otherwise")
        for r in rows:
            if not r.get("run_dir"):
                continue
            rel = os.path.join(dirname, r.get("algorithm", "?"), "report.json")
            if os.path.realpath(r["run_dir"]) != os.path.realpath(os.path.dirname(os.path.join(tmp, rel))):
                out.append(f"{r.get('algorithm')}: run_dir {r['run_dir']} is not {dirname}/{r.get('algorithm')}")
                continue
            rep = load(rel)
            if rep is None:
                continue
            # each seed's verdict is its run's; the row's is judged from them
            for k in r.get("seeds") or []:
                srep = load(os.path.relpath(os.path.join(k["run_dir"], "report.json"), tmp)) \
                    if k.get("run_dir") else None
                if srep is not None and (srep.get("verdict"), srep.get("safety")) != (
                        k.get("verdict"), k.get("safety")):
                    out.append(f"{r.get('algorithm')}: seed {k.get('seed')}: verdict, safety "
                               f"{k.get('verdict')}, {k.get('safety')}; its report.json "
                               f"{srep.get('verdict')}, {srep.get('safety')}")
            unsafe = sum(bool(k.get("unsafe")) for k in r.get("seeds") or [])
            if (r.get("verdict") == "UNSAFE") != (unsafe > 0) or r.get("unsafe_seeds") != unsafe:
                out.append(f"{r.get('algorithm')}: verdict {r.get('verdict')}, unsafe_seeds "
                           f"{r.get('unsafe_seeds')}, its seeds {unsafe} unsafe")
            if rep.get("checker", {}).get("violations") != r.get("violations"):
                out.append(f"{r.get('algorithm')}: violations differ from its report.json")
            if rep.get("safety") != r.get("safety"):
                out.append(f"{r.get('algorithm')}: safety differs from its report.json")
            out += cost_facts(r, rep)
        ran = [k["safety"] for r in rows for k in r.get("seeds") or [] if k.get("safety")]
        s = d.get("safety", {})
        want = (len(ran), sum(not x["safe"] for x in ran), sum(x["violations"] for x in ran))
        if (s.get("runs"), s.get("unsafe_runs"), s.get("violations")) != want:
            out.append(f"safety: runs, unsafe_runs, violations "
                       f"{(s.get('runs'), s.get('unsafe_runs'), s.get('violations'))}, the rows "
                       f"give {want}")
        return out
    return facts

seen = {"verdict": set(), "effect": set(), "workload": set(), "algorithm": set(), "row": set(),
        "fired": set(), "end_s": set()}
reports, compares, by_path = [], [], {}
for name in sorted(os.listdir(tmp)):
    d = os.path.join(tmp, name)
    if not os.path.isdir(d):
        continue
    rels = []
    if os.path.exists(os.path.join(d, "compare.json")):
        rel = os.path.join(name, "compare.json")
        doc = load(rel)
        if doc is not None:
            check("compare", rel, doc, compare_facts(name))
            seen["row"] |= {r.get("verdict") for r in doc.get("algorithms", [])}
            compares.append(doc)
        rels = [os.path.join(name, a, "report.json") for a in sorted(os.listdir(d))
                if os.path.exists(os.path.join(d, a, "report.json"))]
    elif os.path.exists(os.path.join(d, "report.json")):
        rels = [os.path.join(name, "report.json")]
    else:
        fail(f"{name}: wrote neither report.json nor compare.json")
    for rel in rels:
        doc = load(rel)
        if doc is None:
            continue
        check("report", rel, doc, report_facts)
        reports.append(doc)
        by_path[os.path.realpath(os.path.join(tmp, rel))] = doc
        seen["verdict"].add(doc.get("verdict"))
        seen["algorithm"].add(doc.get("algorithm"))
        seen["workload"].add(doc.get("scenario", {}).get("workload", {}).get("type"))
        for p in doc.get("checker", {}).get("listed", []):
            seen["effect"] |= {p["a"].get("effect"), p["b"].get("effect")}
        for f in doc.get("faults", []):
            seen["fired"].add(f.get("fired"))
            if f.get("fired"):
                seen["end_s"].add("null" if f.get("end_s") is None else "number")

# history.json: the schema, and each run as its report.json, every report
# found above indexed once, the flags as the rule gives them
# (tests/pages/check_history.py works the rule out again).
sys.path.insert(0, "tests/pages")
import check_history
history = load("history.json")
if history is not None:
    check("history", "history.json", history, lambda d: check_history.index_facts(d, by_path))

print("seen   " + "; ".join(f"{k}: {', '.join(sorted(map(str, v)))}" for k, v in seen.items()))

# The schemas name a workload or a fault type by a pattern (a new kind
# touches no schema): what the reports wrote must be the build's own names.
import subprocess
def listed(kind):
    return set(subprocess.run([locklab, "list", kind], stdout=subprocess.PIPE, text=True,
                              check=True).stdout.split())
fault_types = {f.get("type") for d in reports for f in d.get("scenario", {}).get("faults", [])}
for kind, names in (("workloads", seen["workload"]), ("faults", fault_types)):
    unknown = sorted(str(n) for n in names - listed(kind))
    if unknown:
        fail(f"reports name {kind} that `locklab list {kind}` does not print: {', '.join(unknown)}")
    else:
        print(f"ok     every {kind[:-1]} the reports name is one of `locklab list {kind}`")

# The schemas must reject what they exist to catch: one real file, mutated.
# A mutant must add an error of its own, so this holds even while the file
# itself has errors.
def at(doc, path):
    for k in path:
        doc = doc[k]
    return doc

def put(*path):
    return lambda m, value: at(m, path[:-1]).__setitem__(path[-1], value)

def drop(*path):
    return lambda m: at(m, path[:-1]).pop(path[-1])

report_mutants = [
    ("no checker (a required key)", drop("checker")),
    ("operations.acquire.count a string", lambda m: put("operations", "acquire", "count")(m, "12")),
    ("counters.steps written as 3.0", lambda m: put("counters", "steps")(m, 3.0)),
    ("counters.pauses negative", lambda m: put("counters", "pauses")(m, -1)),
    ("an unknown top-level key", lambda m: put("surprise")(m, 1)),
    ('verdict "OK"', lambda m: put("verdict")(m, "OK")),
    ("complete false and verdict PASS or FAIL", lambda m: put("complete")(m, False)),
    ('fault type "Client Hang"', lambda m: put("scenario", "faults", 0, "type")(m, "Client Hang")),
    ('workload type "queue!"', lambda m: put("scenario", "workload", "type")(m, "queue!")),
    ("a flash_sale workload with cache_rebuild's keys", lambda m: put("scenario", "workload", "keys")(m, 4)),
    ("scenario.defaults a string", lambda m: put("scenario", "defaults")(m, "x")),
    ("renew_ms 100 and the watchdog off",
     lambda m: (put("scenario", "lock", "watchdog")(m, False), put("scenario", "lock", "renew_ms")(m, 100))),
    ("lock.zookeeper on a redis run",
     lambda m: put("scenario", "lock", "zookeeper")(m, {"ensemble": 1, "session_timeout_ms": 1000})),
    ("operations.acquire lacking p99_ms at count > 0", drop("operations", "acquire", "p99_ms")),
    ("operations.acquire_failed holding a p50_ms at count 0",
     lambda m: at(m, ["operations"]).__setitem__("acquire_failed", {"count": 0, "qps": 0.0, "p50_ms": 1.0})),
    ("an unfired fault with a start_s", lambda m: put("faults", 0, "fired")(m, False)),
    ('a listed pair with effect "lost"', lambda m: put("checker", "listed", 0, "a", "effect")(m, "lost")),
    ("no safety (a required key)", drop("safety")),
    ("counters lacking acquire_no_effect (/3)", drop("counters", "acquire_no_effect")),
    ("counters lacking acquire_unsent (kept for one version)", drop("counters", "acquire_unsent")),
    ("schema locklab.report/2", lambda m: put("schema")(m, "locklab.report/2")),
    ("safety.safe flipped against its violations",
     lambda m: put("safety", "safe")(m, not m["safety"]["safe"])),
    ('safety.text "PASS"', lambda m: put("safety", "text")(m, "PASS")),
    ("no summary (a required key)", drop("summary")),
    ('a percentile keyed "p99.9", not memtier\'s "p99.90"',
     lambda m: put("operations", "acquire", "percentiles", "p99.9")(m, 1.0)),
    ("operations.acquire lacking its percentiles at count > 0",
     drop("operations", "acquire", "percentiles")),
    ("no meta (a required key)", drop("meta")),
    ("a server's version unknown with no why", lambda m: put("meta", "servers", 0, "version")(m, None)),
]

def compare_row(m):
    return next(r for r in m["algorithms"] if r.get("run_dir"))

compare_mutants = [
    ("a row lacking run_dir (a required key)", lambda m: compare_row(m).pop("run_dir")),
    ("a note that is a number", lambda m: compare_row(m).update(note=5)),
    ('verdict "SKIPPED"', lambda m: compare_row(m).update(verdict="SKIPPED")),
    ("a NOT RUN row with a run_dir and figures", lambda m: compare_row(m).update(verdict="NOT RUN", note="x")),
    ("acquire_ms half null", lambda m: compare_row(m)["acquire_ms"].update(p50=None)),
    ("a row that ran with violations null", lambda m: compare_row(m).update(violations=None)),
    ("a NOT RUN row claiming 0 violations", lambda m: compare_row(m).update(
        verdict="NOT RUN", note="x", run_dir="", invariants="", violations=0,
        acquire_ms={k: None for k in compare_row(m)["acquire_ms"]}, acquire_percentiles=None,
        **{k: None for k in ("elapsed_s", "steps", "acquired", "busy", "errors", "qps",
                             "fenced_pairs", "rejected_accesses", "invariants_hold",
                             "faults", "settings", "stuck_lock_ms", "ttl_ms", "lease_ms",
                             "unsafe_seeds", "seeds")}, safety=None, safety_text="NOT RUN")),
    ("not_run a string", lambda m: m.update(not_run="1")),
    ("an unknown key in a row", lambda m: compare_row(m).update(surprise=True)),
    ("complete a string", lambda m: m.update(complete="yes")),
    ("a row that ran with safety null", lambda m: compare_row(m).update(safety=None)),
    ("no safety summary", lambda m: m.pop("safety")),
    ('a safety summary reading "all good"', lambda m: m["safety"].update(text="all good")),
    ('acquire_percentiles keyed "p50"', lambda m: compare_row(m).update(acquire_percentiles={"p50": 1.0})),
    ("a row that ran with settings null", lambda m: compare_row(m).update(settings=None)),
    ("settings text not as show prints it", lambda m: compare_row(m)["settings"].update(text="ttl=500")),
    ("no planned faults", lambda m: m.pop("faults")),
    # /3: rows judged by what happened, the expectation apart
    ('a row verdict "PASS" (judged by an expectation)', lambda m: compare_row(m).update(verdict="PASS")),
    ("a safe row with an unsafe seed", lambda m: compare_row(m).update(verdict="safe", unsafe_seeds=1)),
    ('expectation state "ok"', lambda m: m["expectation"].update(state="ok")),
    ("no expectation", lambda m: m.pop("expectation")),
    ("a seed that ran with stuck_lock_ms null", lambda m: compare_row(m)["seeds"][0].update(stuck_lock_ms=None)),
    ("a row that ran with lease_ms null", lambda m: compare_row(m).update(lease_ms=None)),
    ("schema locklab.compare/2", lambda m: m.update(schema="locklab.compare/2")),
]

# The report to mutate: a complete redis flash_sale run whose fault fired
# and whose checker listed pairs; the comparison: one with a row that ran.
def fit_report(d):
    return (d.get("complete") is True and d.get("algorithm") == "redis"
            and d.get("scenario", {}).get("workload", {}).get("type") == "flash_sale"
            and any(f.get("fired") for f in d.get("faults", [])[:1])
            and d.get("checker", {}).get("listed") and d["operations"]["acquire"]["count"] > 0)

history_mutants = [
    ("no regressions (a required key)", drop("regressions")),
    ('a flag "slow"', lambda m: m["series"][0]["runs"][0].update(flags=["slow"])),
    ("runs written as 3.0", lambda m: m.update(runs=float(m["runs"]))),
    ("a run lacking its baseline", lambda m: m["series"][0]["runs"][0].pop("baseline")),
    ("a first run with a baseline median", lambda m: m["series"][0]["runs"][0]["baseline"].update(acquire_p99_ms=1.0)),
    ("a safe run with violations", lambda m: m["series"][0]["runs"][0].update(safe=True, violations=3)),
]

bases = (("report", sorted(filter(fit_report, reports), key=lambda d: len(errors("report", d))),
          report_mutants),
         ("compare", sorted((d for d in compares if any(r.get("run_dir") for r in d.get("algorithms", []))),
                            key=lambda d: len(errors("compare", d))), compare_mutants),
         ("history", [history] if history and history.get("series") else [], history_mutants))
for kind, docs, mutants in bases:
    if not docs:
        fail(f"self-check: no {kind}.json of the shape the self-check mutates (see above)")
        continue
    doc = docs[0]
    before = set(errors(kind, doc))
    for what, mutate in mutants:
        m = copy.deepcopy(doc)
        try:
            mutate(m)
        except (KeyError, IndexError, TypeError, StopIteration) as e:
            fail(f"self-check: cannot make a {kind} with {what}: {e!r}")
            continue
        new = [e for e in errors(kind, m) if e not in before]
        if new:
            print(f"ok     self-check: a {kind} with {what} is rejected: {new[0].strip()}")
        else:
            fail(f"self-check: a {kind} with {what} passes the schema")

check_lines.done()
PY

if [ "$failed" -ne 0 ]; then
  echo "test_schemas: FAILED"
  exit 1
fi
echo "test_schemas: all reports match docs/schema"
