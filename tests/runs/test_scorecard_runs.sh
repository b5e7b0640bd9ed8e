#!/usr/bin/env bash
# `locklab scorecard` for real, small: two locks (redis, PostgreSQL's
# advisory lock) through two classes (no fault; the holder paused past its
# lease), real servers, under a private TMPDIR (mode 0700, as mktemp makes
# it). The grid must say what the published results say (Kleppmann: an
# unfenced lease is unsafe under a pause; a session lock is not), the
# folder must hold together (scorecard.json against its schema, the page
# against the JSON, every link a report that exists, JUnit), and a cell's
# scenario must repeat its finding under `locklab run`. Then what a user
# meets around it: --plan (nothing started), bad input (exit 2, nothing
# made), --require-safe (exit 1), Ctrl-C (exit 130, the partial grid
# written, no server left).
#   tests/runs/test_scorecard_runs.sh SOURCE_DIR LOCKLAB_BIN
set -uo pipefail
py=/usr/bin/python3
# anything still running from this test's servers (their folders are in $tmp)
cleanup_more() { pkill -KILL -f "$tmp" 2>/dev/null; }
# shellcheck source=tests/lib/run_test.sh
. "$(dirname "$0")/../lib/run_test.sh" scorecard "$@" # $tmp 0700: no chmod
export TMPDIR=$tmp

# cell ROW CLASS FIELD: one field of a cell of $tmp/sc/scorecard.json
cell() {
  "$py" - "$tmp/sc/scorecard.json" "$@" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
row, cls, field = sys.argv[2:5]
for r in doc["rows"]:
    if r["label"] == row:
        for c in r["cells"]:
            if c["class"] == cls:
                print(c.get(field))
EOF
}

# 1. --plan: every cell as it would run, nothing started, no folder made.
"$bin" scorecard --plan --out "$tmp/plan" >"$tmp/plan.log" 2>&1
rc=$?
if [ $rc -ne 0 ] || [ -e "$tmp/plan" ]; then
  fail "--plan exited $rc or made its folder"
elif ! grep -q "^  leader_lost  *n/a: the replicated layout does not apply: .*redlock runs its own" \
  "$tmp/plan.log"; then
  fail "--plan: redlock's leader_lost is not n/a with the loader's reason"; cat "$tmp/plan.log"
elif ! grep -q "^  holder_paused_past_lease  *lease 1000 ms, 1 redis server" "$tmp/plan.log"; then
  fail "--plan: redis's cell does not show its lease and layout"; cat "$tmp/plan.log"
else
  ok "--plan shows each cell's lease, layout and faults, and n/a with why"
fi

# 2. Bad input: one located line, exit 2, nothing made.
printf '{"name": "b", "scenario": "../../scenarios/flash_sale.json", "ttl_ms": 1000,\n "classes": [{"name": "p", "title": "t", "short": "s", "strikes": "x",\n   "faults": [{"type": "client_pause", "at_leases": -2}]}]}\n' >"$tmp/bad.json"
out=$("$bin" scorecard --suite "$tmp/bad.json" --out "$tmp/bad" 2>&1)
rc=$?
want="locklab: $tmp/bad.json:3:53: classes[0].faults[0].at_leases: expected a number of leases in 0..1000"
if [ $rc -ne 2 ] || [ -e "$tmp/bad" ] || [[ $out != "$want"* ]] || [ "$(printf '%s\n' "$out" | wc -l)" -ne 1 ]; then
  fail "a bad suite: exit $rc, \"$out\""
else
  ok "a bad suite: exit 2, $out"
fi
out=$("$bin" scorecard --only redis/holder_pasued --out "$tmp/bad" 2>&1)
rc=$?
if [ $rc -ne 2 ] || [ -e "$tmp/bad" ] || [[ $out != *"--only names no class of"* ]]; then
  fail "--only with an unknown class: exit $rc, \"$out\""
else
  ok "--only with an unknown class: exit 2"
fi

# 3. The grid, for real.
"$bin" scorecard --algorithms redis,postgres-advisory --no-fenced-rows \
  --classes none,holder_paused_past_lease --out "$tmp/sc" --junit "$tmp/sc/junit.xml" \
  >"$tmp/sc.log" 2>&1
rc=$?
if [ $rc -ne 0 ]; then
  fail "the grid exited $rc"; tail -30 "$tmp/sc.log"
else
  ok "the grid: exit 0"
fi
for want in "redis none safe" "redis holder_paused_past_lease unsafe" \
  "postgres-advisory none safe" "postgres-advisory holder_paused_past_lease safe"; do
  set -- $want
  got=$(cell "$1" "$2" verdict)
  [ "$got" = "$3" ] && ok "$1 / $2: $got" || fail "$1 / $2: $got, want $3"
done
known=$(cell redis holder_paused_past_lease known)
[ "$known" = redis_pause_unfenced ] && ok "the unsafe cell names its known result" ||
  fail "the unsafe cell's known result: $known"
grep -q "^Answer: .*postgres-advisory" "$tmp/sc.log" && ! grep -q "^Answer: [^;]*redis " "$tmp/sc.log" &&
  ok "the answer names postgres-advisory, not redis" || { fail "the answer line"; grep Answer "$tmp/sc.log"; }
if "$py" "$src/tests/pages/check_scorecard.py" --schema "$src/docs/schema/scorecard.schema.json" \
  "$tmp/sc" >"$tmp/check.log" 2>&1; then
  ok "scorecard.json, scorecard.html and junit.xml hold together"
else
  fail "check_scorecard.py"; cat "$tmp/check.log"
fi
# the cell's own scenario repeats its finding
"$bin" run "$tmp/sc/redis/holder_paused_past_lease/scenario.json" --seed 1 --out "$tmp/again" \
  --quiet >"$tmp/again.log" 2>&1
v=$("$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["checker"]["violations"])' \
  "$tmp/again/report.json" 2>/dev/null)
[ "${v:-0}" -gt 0 ] && ok "the cell's scenario.json repeats its violations ($v)" ||
  fail "locklab run of the cell's scenario: violations ${v:-none}"

# 4. --require-safe: exit 1 when a named row was unsafe.
"$bin" scorecard --only redis/holder_paused_past_lease --require-safe redis --out "$tmp/req" \
  >"$tmp/req.log" 2>&1
rc=$?
[ $rc -eq 1 ] && ok "--require-safe redis: exit 1" || { fail "--require-safe exited $rc"; tail "$tmp/req.log"; }

# 5. Ctrl-C: exit 130, the partial grid written and marked, no server left.
"$bin" scorecard --algorithms redis --no-fenced-rows --classes none,holder_paused_past_lease \
  --out "$tmp/int" >"$tmp/int.log" 2>&1 &
pid=$!
interrupt_after "$tmp/int/redis/none/seed-1" 1
complete=$("$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["complete"])' \
  "$tmp/int/scorecard.json" 2>/dev/null)
if [ $rc -ne 130 ] || [ "$complete" != False ]; then
  fail "Ctrl-C: exit $rc, complete $complete"; tail "$tmp/int.log"
elif pgrep -f "$tmp/" >/dev/null; then
  fail "Ctrl-C left servers running"
else
  ok "Ctrl-C: exit 130, the partial grid written, nothing left running"
fi

[ $failed -eq 0 ] && echo "test_scorecard_runs: all passed"
exit $failed
