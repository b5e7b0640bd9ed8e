#!/usr/bin/env bash
# The HTML pages of real runs, opened in headless Chromium and held to the
# JSON they were written from by tests/pages/html_check.py: report.html of a
# client pause (violations drawn as lock timelines), of a known-results
# matrix row (Redlock, a node restarted empty) and of an open-loop run with
# a Redis server paused; matrix.html and compare.html with their links.
# Then a deliberately broken copy of a page must be caught: a missing
# image, a script writing to the console, a network fetch, a wrong figure.
#   tests/pages/test_html.sh SOURCE_DIR LOCKLAB_BIN
# Skips (exit 0) only when /usr/bin/chromium is not installed
# (scripts/install-deps.sh installs it). LOCKLAB_KEEP_TMP=1 keeps the
# runs and screenshots.
set -euo pipefail
# shellcheck source=tests/lib/run_test.sh
. "$(dirname "$0")/../lib/run_test.sh" html "$@"
if [ ! -x /usr/bin/chromium ]; then
  echo "test_html: SKIP: /usr/bin/chromium is not installed (scripts/install-deps.sh installs it)"
  exit 0
fi
py=/usr/bin/python3
export LOCKLAB_BIN="$bin" # html_check.py exports a run's history.llh with it
check=$src/tests/pages/html_check.py

# One locklab command (its own servers, started and stopped by it), its
# output in $tmp/NAME.log. SIGINT after 120 s (locklab stops its servers on
# it), SIGKILL 30 s later. Exit 0 (PASS) or 1 (FAIL) leave pages to check.
locklab() {
  local name=$1 rc=0
  shift
  timeout -s INT -k 30 120 "$bin" "$@" --quiet >"$tmp/$name.log" 2>&1 || rc=$?
  echo "ran    $name (exit $rc): locklab $*"
  if [ "$rc" -gt 1 ]; then
    echo "FAIL   $name: exit status $rc; its output:"
    sed 's/^/         /' "$tmp/$name.log"
    failed=1
    return 1
  fi
}

# html_check.py MODE DIR [options], its output indented.
html_check() {
  local rc=0
  "$py" "$check" "$@" >"$tmp/check.out" 2>&1 || rc=$?
  sed 's/^/         /' "$tmp/check.out"
  if [ "$rc" -eq 0 ]; then
    echo "ok     html_check.py $*"
  else
    echo "FAIL   html_check.py $* (exit $rc)"
    failed=1
  fi
}

# (i) a holder paused past its ttl: violations, lock timelines, a client band.
if locklab pause run scenarios/flash_sale_pause.json --duration 5 --out "$tmp/pause"; then
  html_check run "$tmp/pause"

  # A broken copy must fail, each defect by name: a missing image (a failed
  # load, which only DevTools reports), a script writing console.error (on
  # chromium's stderr), a fetch from the network, a card one off, a green
  # PASS alone beside violations, UNSAFE out of the colour of danger.
  cp -r "$tmp/pause" "$tmp/broken"
  "$py" - "$tmp/broken/report.html" <<'PY'
import re, sys
path = sys.argv[1]
with open(path) as f:
    page = f.read()
page = page.replace("<body>", '<body><img src="missing.png">'
                    '<img src="http://127.0.0.1:9/net.png">'
                    '<script>console.error("html-check-probe")</script>', 1)
page, n = re.subn(r'(data-figure="violations">)(\d+)<',
                  lambda m: "%s%d<" % (m.group(1), int(m.group(2)) + 1), page)
assert n == 1, "no violations card to change"
# the issue's page: a green PASS alone beside violations, and UNSAFE in green
page, n = re.subn(r'<span class="verdict UNSAFE" (data-safety="unsafe"[^>]*)>[^<]*</span>',
                  r'<span class="verdict SAFE" \1>safe</span>', page, count=1)
assert n == 1, "no UNSAFE badge to hide"
page, n = re.subn(r'\.UNSAFE\{background:#c62828\}', ".UNSAFE{background:#2a7d2a}", page)
assert n == 1, "no .UNSAFE colour to change"
page, n = re.subn(r'data-commit="[^"]*"', 'data-commit="0000000"', page, count=1)
assert n == 1, "no meta line to change"
with open(path, "w") as f:
    f.write(page)
PY
  rc=0
  "$py" "$check" run "$tmp/broken" >"$tmp/broken.out" 2>&1 || rc=$?
  missing=
  for want in "failed to load (Image): net::ERR_FILE_NOT_FOUND" \
    ":CONSOLE" "html-check-probe" "a <script> element" \
    "refers to the network" "the page fetched http://127.0.0.1:9/net.png" \
    "card violations shows" "a green PASS badge alone beside" \
    ".UNSAFE's background is '#2a7d2a'" "meta line data-commit='0000000'"; do
    grep -qF -- "$want" "$tmp/broken.out" || missing="$missing [$want]"
  done
  if [ "$rc" -eq 1 ] && [ -z "$missing" ]; then
    echo "ok     a broken copy of report.html fails: $(grep -c '^MISMATCH' "$tmp/broken.out") mismatches, each defect named"
  else
    echo "FAIL   a broken copy of report.html: exit $rc (expected 1), not reported:${missing:- -}; its output:"
    sed 's/^/         /' "$tmp/broken.out"
    failed=1
  fi
fi

# (ii) one row of the known-results matrix: matrix.html and the run's page.
if locklab matrix matrix "$src/scenarios/matrix" --only redlock_restart_empty --out "$tmp/matrix"; then
  html_check matrix "$tmp/matrix"
  runs=0
  for d in "$tmp"/matrix/redlock_restart_empty/seed-*/; do
    [ -f "$d/report.html" ] || continue
    runs=$((runs + 1))
    html_check run "${d%/}"
  done
  if [ "$runs" -ne 1 ]; then
    echo "FAIL   matrix: $runs run folders with a report.html under $tmp/matrix/redlock_restart_empty, expected 1"
    failed=1
  fi
fi

# (iii) open loop at 200 steps/s with the Redis server paused 1.5 s.
cat >"$tmp/open_loop_pause.json" <<'EOF'
{
  "name": "open_loop_server_pause",
  "description": "Open loop at 200 steps/s; the Redis server paused (SIGSTOP) for 1.5 s.",
  "clients": 16,
  "duration_s": 6,
  "rate": 200,
  "seed": 1,
  "lock": { "algorithm": "redis" },
  "workload": { "type": "flash_sale" },
  "faults": [ { "at_ms": 2000, "type": "pause", "target": "one", "duration_ms": 1500 } ]
}
EOF
if locklab open run "$tmp/open_loop_pause.json" --out "$tmp/open"; then
  html_check --load-mode open run "$tmp/open"
fi

# (iv) a comparison: compare.html, its links, and each run's page.
if locklab compare compare "$src/scenarios/flash_sale_pause.json" --algorithms redis,zookeeper \
  --duration 3 --out "$tmp/compare"; then
  html_check compare "$tmp/compare"
  for a in redis zookeeper; do
    html_check run "$tmp/compare/$a"
  done
fi

# (v) every run above indexed by `locklab history` (the matrix row's and the
# comparison's runs among them), each as its report.json (check_history.py).
if "$bin" history "$tmp" --out "$tmp/history" >"$tmp/history.log" 2>&1; then
  "$py" - "$src/tests/pages" "$tmp" <<'PY' || failed=1
import json, os, sys
sys.path.insert(0, sys.argv[1])
sys.path.insert(0, "tests/lib")
import check_history
import check_lines
from check_lines import fail, ok
tmp = sys.argv[2]
found = {}
for root, dirs, files in os.walk(tmp):
    if "report.json" in files:
        found[os.path.realpath(os.path.join(root, "report.json"))] = json.load(
            open(os.path.join(root, "report.json")))
        dirs[:] = []
doc = json.load(open(os.path.join(tmp, "history", "history.json")))
for b in check_history.index_facts(doc, found):
    fail("history.json: " + b)
if not check_lines.failed:
    ok(f"locklab history: {doc['runs']} runs in {len(doc['series'])} series, matrix and "
       f"compare folders included, each as its report.json")
check_lines.done()
PY
else
  echo "FAIL   locklab history $tmp: $(cat "$tmp/history.log")"
  failed=1
fi

if [ "$failed" -ne 0 ]; then
  echo "test_html: FAILED"
  exit 1
fi
echo "test_html: every page passed"
