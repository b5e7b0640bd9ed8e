#!/usr/bin/env bash
# Runs over time: three real runs of one scenario (1.5 s each, Redis
# started and stopped by locklab) into the default runs/ of a temporary
# folder, each with other settings: as written; the same scenario file
# copied with one fault added (a 20 ms latency toxic each way on the Redis
# endpoint through locklab's proxy for the whole run); as written with
# --rate 200 (open loop). Then:
# - runs/latest names each run's folder as that run ends (relative);
# - `locklab history --fail-on-regression` (DIR runs/ by default): three
#   series of one run each, the two later ones saying what differs from
#   the first ("new series: rate 0.0 -> 200.0 (vs KEY)"), no regression,
#   exit 0; history.json lists them with the figures of each report.json,
#   each series's key worked out again from its report.json and the flags
#   the rule gives (tests/pages/check_history.py); history.html in
#   headless Chromium shows them (html_check.py history);
# - a fixture run: the first run's folder copied, started a second after
#   the last, its acquire p99 10x and its QPS a tenth: on the first run's
#   series, flagged "p99 10.0x, qps 0.10x", exit 1 with
#   --fail-on-regression, 0 without;
# - a report.json that is not JSON is listed as skipped, not fatal; --out
#   elsewhere keeps the page's links right; a DIR that is no folder is one
#   line and exit 2.
#   tests/runs/test_history_index.sh SOURCE_DIR LOCKLAB_BIN
set -uo pipefail
# shellcheck source=tests/lib/run_test.sh
. "$(dirname "$0")/../lib/run_test.sh" history_index "$@"
py=/usr/bin/python3
work=$tmp/work
mkdir -p "$work"
cat >"$work/probe.json" <<'EOF'
{
  "name": "history_probe",
  "description": "Eight buyers, each on an item of its own: an acquire is one round trip to Redis.",
  "clients": 8,
  "duration_s": 1.5,
  "seed": 1,
  "lock": { "algorithm": "redis", "ttl_ms": 2000, "wait_ms": 3000 },
  "workload": { "type": "flash_sale", "items": 8, "stock": 1000000, "critical_ms": 1, "skew": "per_client" },
  "expect": { "violations": 0, "invariants": "hold" }
}
EOF
"$py" - "$work/probe.json" "$work/slow.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["faults"] = [{"at_ms": 0, "type": "latency", "target": "redis-1", "stream": "both",
                "latency": 20, "duration_ms": 1500}]
json.dump(d, open(sys.argv[2], "w"), indent=2)
PY

# One run from $work with the default out (runs/...); then runs/latest must
# be a relative link to a new folder holding its report.json.
folders=()
run() {
  local rc=0 target
  (cd "$work" && timeout -s INT -k 30 60 "$bin" run "$@" --quiet) >"$tmp/run.log" 2>&1 || rc=$?
  if [ "$rc" -ne 0 ]; then
    fail "locklab run $*: exit $rc: $(cat "$tmp/run.log")"
    return 1
  fi
  target=$(readlink "$work/runs/latest") || { fail "after run $1: runs/latest is no link"; return 1; }
  case "$target" in
  */* | "") fail "runs/latest -> '$target': not the name of a folder beside it"; return 1 ;;
  esac
  for f in "${folders[@]}"; do
    [ "$f" != "$target" ] || { fail "runs/latest still names $f after run $1"; return 1; }
  done
  [ -f "$work/runs/$target/report.json" ] || { fail "runs/latest -> $target holds no report.json"; return 1; }
  folders+=("$target")
  ok "run $*: runs/latest -> $target"
}
run probe.json && run slow.json && run probe.json --rate 200
if [ "${#folders[@]}" -ne 3 ]; then
  echo "test_history_index: FAILED (the runs)"
  exit 1
fi

# history: each run its own series, no regression, exit 0 even when a
# regression would fail it.
rc=0
(cd "$work" && "$bin" history --fail-on-regression --wide) >"$tmp/history.out" 2>&1 || rc=$?
sed 's/^/         /' "$tmp/history.out"
[ "$rc" -eq 0 ] || fail "locklab history --fail-on-regression of three unlike runs: exit $rc"
# without --wide: within 120 columns, what differs on a line under its row
(cd "$work" && "$bin" history) >"$tmp/narrow.out" 2>&1
if awk 'length($0) > 120 { bad = 1 } END { exit bad }' "$tmp/narrow.out" &&
  grep -A1 "  new series$" "$tmp/narrow.out" | grep -qx "    rate 0.0 -> 200.0 (vs [0-9a-f]\{8\})"; then
  ok "history without --wide: within 120 columns, each new series's difference under its row"
else
  fail "history without --wide: $(cat "$tmp/narrow.out")"
fi
"$py" - "$src/tests/pages" "$work" "$tmp/history.out" "${folders[@]}" <<'PY' || failed=1
import os, sys
sys.path.insert(0, sys.argv[1])
import check_history
work, out, folders = sys.argv[2], sys.argv[3], sys.argv[4:]
os.chdir(work)
doc, reports = check_history.load_index(folders)
bad = check_history.index_facts(doc, reports)
s = doc["series"]
keys = [x["key"] for x in s]
got = [(x["scenario"], x["algorithm"], [os.path.basename(r["folder"]) for r in x["runs"]],
        x["after"]) for x in s]
want = [("history_probe", "redis", [folders[0]], None),
        ("history_probe", "redis", [folders[1]],
         {"key": keys[0], "differs": "faults 0 entries -> 1 entry, servers[0].proxied false -> true"}),
        ("history_probe", "redis", [folders[2]], {"key": keys[0], "differs": "rate 0.0 -> 200.0"})]
if got != want:
    bad.append(f"series {got}, expected {want}")
lines = open(out).read().splitlines()
if lines[0] != "history of runs: 3 runs in 3 series, 0 regressions, 0 report.json skipped":
    bad.append(f"summary line {lines[0]!r}")
tails = [l.split("  ")[-1] for l in lines[2:5]]
want_tails = ["new series",
              f"new series: faults 0 entries -> 1 entry, servers[0].proxied false -> true (vs {keys[0][:8]})",
              f"new series: rate 0.0 -> 200.0 (vs {keys[0][:8]})"]
if tails != want_tails:
    bad.append(f"the rows end {tails}, expected {want_tails}")
if [l.split()[2] for l in lines[2:5]] != [k[:8] for k in keys]:
    bad.append(f"the series column {[l.split()[2] for l in lines[2:5]]}, keys {keys}")
for b in bad:
    print("FAIL: history of unlike runs: " + b)
if not bad:
    print(f"ok: three unlike runs, three series ({', '.join(k[:8] for k in keys)}), each new one "
          "saying what differs, no regression, keys as their report.json hash to")
sys.exit(1 if bad else 0)
PY

# A fixture run: the first run's folder copied, a second after the last,
# its p99 10x and its QPS a tenth: flagged on the first run's series.
cp -r "$work/runs/${folders[0]}" "$work/runs/zz-slower"
"$py" - "$work/runs" "${folders[@]}" <<'PY'
import json, sys
runs, folders = sys.argv[1], sys.argv[2:]
last = max(json.load(open(f"{runs}/{f}/report.json"))["start_wall_ns"] for f in folders)
path = f"{runs}/zz-slower/report.json"
d = json.load(open(path))
d["start_wall_ns"] = last + 1000000000
d["started_at"] = "2099-01-01T00:00:00.000Z"
acq = d["operations"]["acquire"]
acq["p99_ms"] *= 10
acq["qps"] /= 10
json.dump(d, open(path, "w"), indent=2)
PY
folders+=(zz-slower)
for want in 1 0; do
  opt=--fail-on-regression
  [ "$want" -eq 1 ] || opt=
  rc=0
  (cd "$work" && "$bin" history $opt) >"$tmp/regressed.out" 2>&1 || rc=$?
  if [ "$rc" -eq "$want" ] &&
    grep -qx "history of runs: 4 runs in 3 series, 1 regression, 0 report.json skipped" "$tmp/regressed.out" &&
    [ "$(grep -c "REGRESSION" "$tmp/regressed.out")" -eq 1 ] &&
    grep -A1 "^history_probe .* 2099-01-01 00:00:00 .*  REGRESSION$" "$tmp/regressed.out" |
    grep -qx "    p99 10.0x, qps 0.10x the median of 1 earlier run"; then
    ok "the fixture run flagged REGRESSION p99 10.0x, qps 0.10x: history ${opt:-without --fail-on-regression} exits $rc"
  else
    fail "history $opt with the fixture run: exit $rc (expected $want): $(cat "$tmp/regressed.out")"
  fi
done
sed 's/^/         /' "$tmp/regressed.out"
"$py" - "$src/tests/pages" "$work" "${folders[@]}" <<'PY' || failed=1
import os, sys
sys.path.insert(0, sys.argv[1])
import check_history
work, folders = sys.argv[2], sys.argv[3:]
os.chdir(work)
doc, reports = check_history.load_index(folders)
bad = check_history.index_facts(doc, reports)
first = doc["series"][0]["runs"]
if [os.path.basename(r["folder"]) for r in first] != [folders[0], "zz-slower"] or \
        first[1]["flags"] != ["p99", "qps"]:
    bad.append(f"the first series {[(r['folder'], r['flags']) for r in first]}")
if [(x["folder"].split("/")[-1], x["text"]) for x in doc["regressions"]] != \
        [("zz-slower", "p99 10.0x, qps 0.10x")]:
    bad.append(f"regressions {doc['regressions']}")
for b in bad:
    print("FAIL: history.json with the fixture run: " + b)
if not bad:
    print("ok: history.json: the fixture run on the first run's series, flagged p99 and qps")
sys.exit(1 if bad else 0)
PY

if [ -x /usr/bin/chromium ]; then
  rc=0
  (cd "$work" && "$py" "$src/tests/pages/html_check.py" history runs) >"$tmp/check.out" 2>&1 || rc=$?
  sed 's/^/         /' "$tmp/check.out"
  if [ "$rc" -eq 0 ]; then
    ok "history.html in Chromium as history.json"
  else
    fail "html_check.py history runs: exit $rc"
  fi
else
  echo "note: /usr/bin/chromium is not installed: history.html not opened"
fi

# The checks must catch what they exist to catch: history.json with two
# runs swapped, a flag dropped, a figure changed, a run left out; the page
# with the flagged row's flag, or its place, lost.
"$py" - "$src/tests/pages" "$work" "${folders[@]}" <<'PY' || failed=1
import copy, os, re, sys
sys.path.insert(0, sys.argv[1])
import check_history
import html_check as h
work, folders = sys.argv[2], sys.argv[3:]
os.chdir(work)
doc, reports = check_history.load_index(folders)
def runs(m):
    return m["series"][0]["runs"]
mutants = [
    ("the two runs of a series swapped", lambda m: runs(m).insert(0, runs(m).pop(1))),
    ("the fixture run's flags dropped", lambda m: runs(m)[1].update(flags=[])),
    ("a run's p99 off by 1 ms", lambda m: runs(m)[0].update(acquire_p99_ms=runs(m)[0]["acquire_p99_ms"] + 1)),
    ("a run left out", lambda m: (runs(m).pop(0), m.update(runs=3))),
    ("a series's key changed", lambda m: m["series"][1].update(key="0" * 16)),
    ("the rate run on the first series", lambda m: (runs(m).append(m["series"][2]["runs"][0]),
                                                   m["series"].pop(2))),
    ("a new series's after dropped", lambda m: m["series"][2].update(after=None)),
]
bad = 0
for what, mutate in mutants:
    m = copy.deepcopy(doc)
    mutate(m)
    if check_history.index_facts(m, reports):
        print(f"ok: history.json with {what} is caught")
    else:
        bad += 1
        print(f"FAIL: history.json with {what} passes")
page = open("runs/history.html").read()
rows = re.findall(r"<tr[^>]*data-run=.*?</tr>\n", page)
swapped = page.replace(rows[0], "\0").replace(rows[-1], rows[0]).replace("\0", rows[-1])
page_mutants = [
    ("the flagged row's class and word gone",
     page.replace('<tr class="regressed"', "<tr", 1).replace("REGRESSION ", "", 1)),
    ("the newest row first", swapped),
]
for what, text in page_mutants:
    h.problems.clear()
    h.fail = lambda msg: h.problems.append(msg)
    check_history.check_page(h.parse_dom(text), doc, "history.html", h)
    if h.problems:
        print(f"ok: history.html with {what} is caught: {h.problems[0]}")
    else:
        bad += 1
        print(f"FAIL: history.html with {what} passes")
sys.exit(1 if bad else 0)
PY

# --out elsewhere: the page's links lead from there to the run folders.
rc=0
(cd "$work" && "$bin" history runs --out "$tmp/elsewhere") >/dev/null 2>&1 || rc=$?
if [ "$rc" -ne 0 ] || [ ! -f "$tmp/elsewhere/history.html" ]; then
  fail "locklab history runs --out elsewhere: exit $rc"
else
  missing=$("$py" - "$tmp/elsewhere/history.html" <<'PY'
import os, re, sys
page = sys.argv[1]
links = re.findall(r'href="([^"#][^"]*)"', open(page).read())
print(" ".join(l for l in links if not os.path.exists(os.path.join(os.path.dirname(page), l))) or
      ("none" if links else "no links"))
PY
)
  if [ "$missing" = none ]; then
    ok "--out elsewhere: every link of its page leads to a run"
  else
    fail "--out elsewhere: links leading nowhere: $missing"
  fi
fi

# A report.json that is not JSON: skipped with why, the others indexed.
mkdir -p "$work/runs/broken"
printf '{"schema": "locklab.report/2",' >"$work/runs/broken/report.json"
rc=0
(cd "$work" && "$bin" history) >"$tmp/broken.out" 2>&1 || rc=$?
"$py" - "$work/runs/history.json" "$rc" <<'PY' || failed=1
import json, sys
doc = json.load(open(sys.argv[1]))
sk = doc["skipped"]
if sys.argv[2] != "0" or doc["runs"] != 4 or len(sk) != 1 or \
        not sk[0]["path"].endswith("broken/report.json") or not sk[0]["why"].startswith("not JSON"):
    print(f"FAIL: a broken report.json: exit {sys.argv[2]}, runs {doc['runs']}, skipped {sk}")
    sys.exit(1)
print(f"ok: a broken report.json is skipped ({sk[0]['why']}), the 4 runs still indexed")
PY
grep -q "^skipped runs/broken/report.json: not JSON" "$tmp/broken.out" || fail "the table does not list the skipped file"

# A DIR that is no folder: one line, exit 2, nothing written.
rc=0
"$bin" history "$tmp/nowhere" >"$tmp/bad.out" 2>&1 || rc=$?
if [ "$rc" -eq 2 ] && [ "$(wc -l <"$tmp/bad.out")" -eq 1 ] && grep -q "nowhere" "$tmp/bad.out" &&
  [ ! -e "$tmp/nowhere" ]; then
  ok "history of a missing folder: exit 2, $(cat "$tmp/bad.out")"
else
  fail "history of a missing folder: exit $rc, $(cat "$tmp/bad.out")"
fi

if [ "$failed" -ne 0 ]; then
  echo "test_history_index: FAILED"
  exit 1
fi
echo "test_history_index: all passed"
