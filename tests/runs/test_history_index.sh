#!/usr/bin/env bash
# Runs over time: three real runs of one scenario (1.5 s each, Redis
# started and stopped by locklab) into the default runs/ of a temporary
# folder, the third slowed on purpose: the same scenario file copied with
# one fault added, a 20 ms latency toxic each way on the Redis endpoint
# through locklab's proxy for the whole run, so each acquire costs two
# 20 ms trips where the others cost a loopback round trip. Then:
# - runs/latest names each run's folder as that run ends (relative);
# - `locklab history` (DIR runs/ by default): history.json lists the three,
#   oldest first, with the figures of each report.json, the flags the rule
#   gives (worked out again in tests/pages/check_history.py), the third
#   flagged for its p99; history.html in headless Chromium shows them in
#   that order with the flag (html_check.py history);
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
  (cd "$work" && timeout -s INT -k 30 60 "$bin" run "$1" --quiet) >"$tmp/run.log" 2>&1 || rc=$?
  if [ "$rc" -ne 0 ]; then
    fail "locklab run $1: exit $rc: $(cat "$tmp/run.log")"
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
  ok "run $1: runs/latest -> $target"
}
run probe.json && run probe.json && run slow.json
if [ "${#folders[@]}" -ne 3 ]; then
  echo "test_history_index: FAILED (the runs)"
  exit 1
fi

rc=0
(cd "$work" && "$bin" history) >"$tmp/history.out" 2>&1 || rc=$?
sed 's/^/         /' "$tmp/history.out"
[ "$rc" -eq 0 ] || fail "locklab history: exit $rc"
grep -q "^history_probe .*REGRESSION p99" "$tmp/history.out" || fail "the table flags no run's p99"

# history.json: the three oldest first, each with its report.json's figures,
# the flags as the rule gives them, and the third (the slowed one) flagged.
"$py" - "$src/tests/pages" "$work" "${folders[@]}" <<'PY' || failed=1
import os, sys
sys.path.insert(0, sys.argv[1])
import check_history
work, folders = sys.argv[2], sys.argv[3:]
os.chdir(work)
doc, reports = check_history.load_index(folders)
bad = check_history.index_facts(doc, reports)
s = doc["series"]
if [(x["scenario"], x["algorithm"]) for x in s] != [("history_probe", "redis")]:
    bad.append(f"series {[(x['scenario'], x['algorithm']) for x in s]}, expected one")
else:
    got = [os.path.basename(r["folder"]) for r in s[0]["runs"]]
    if got != folders:
        bad.append(f"runs in the order {got}, they ran in the order {folders}")
    third = s[0]["runs"][-1]
    if "p99" not in third["flags"]:
        bad.append(f"the slowed run is not flagged for its p99: {third}")
    if not reports[os.path.realpath(third["report"])]["faults"]:
        bad.append("the last run is not the slowed one")
if doc["skipped"]:
    bad.append(f"skipped {doc['skipped']}")
for b in bad:
    print("FAIL: history.json: " + b)
if not bad:
    r = s[0]["runs"]
    print("ok: history.json: 3 runs oldest first, p99 " +
          ", ".join("%.3f ms%s" % (x["acquire_p99_ms"], " " + str(x["flags"]) if x["flags"] else "")
                    for x in r) + "; figures as each report.json, flags as the rule gives")
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
    ("the first two runs swapped", lambda m: runs(m).insert(0, runs(m).pop(1))),
    ("the slowed run's flags dropped", lambda m: runs(m)[2].update(flags=[])),
    ("a run's p99 off by 1 ms", lambda m: runs(m)[0].update(acquire_p99_ms=runs(m)[0]["acquire_p99_ms"] + 1)),
    ("a run left out", lambda m: (runs(m).pop(0), m.update(runs=2))),
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
if sys.argv[2] != "0" or doc["runs"] != 3 or len(sk) != 1 or \
        not sk[0]["path"].endswith("broken/report.json") or not sk[0]["why"].startswith("not JSON"):
    print(f"FAIL: a broken report.json: exit {sys.argv[2]}, runs {doc['runs']}, skipped {sk}")
    sys.exit(1)
print(f"ok: a broken report.json is skipped ({sk[0]['why']}), the 3 runs still indexed")
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
