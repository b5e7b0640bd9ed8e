#!/usr/bin/env bash
# The guards in front of the lock, on one managed Redis: lock.rate_limit's
# token bucket and the flash sale's circuit breaker with its degrade path
# (docs/scenario.md). The bucket: 8 clients at 50 tokens a second and a
# 20 ms wait hold the grants to the bucket's rate (at most 5 + 50 a second
# of the run and its last step), and refuse the rest unsent (counted, not
# in the history), each after its 20 ms wait: so no more refusals than
# 8 clients waiting 20 ms at a time can make. The breaker: the server killed for 2 s, so every request
# fails; the breaker opens, the purchases meanwhile are served with no
# lock (degraded_steps, degraded_orders) and the report's counts line says
# so; once the stock runs out that path has sold more than there was.
#   tests/runs/test_guards.sh SOURCE_DIR LOCKLAB_BIN
set -uo pipefail
# shellcheck source=tests/lib/run_test.sh
. "$(dirname "$0")/../lib/run_test.sh" guards "$@"
py=/usr/bin/python3

counter() { # REPORT_DIR NAME
  "$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["counters"][sys.argv[2]])' \
    "$1/report.json" "$2"
}

cat >"$tmp/bucket.json" <<'JSON'
{ "name": "guards_bucket", "clients": 8, "duration_s": 3, "seed": 1,
  "lock": { "algorithm": "redis", "ttl_ms": 2000, "wait_ms": 20,
            "rate_limit": { "rate": 50, "burst": 5 } },
  "workload": { "type": "flash_sale", "items": 8, "stock": 100000, "critical_ms": 1,
                "skew": "per_client" } }
JSON
"$bin" run "$tmp/bucket.json" --quiet --out "$tmp/bucket" >"$tmp/bucket.log" 2>&1
rc=$?
[ "$rc" -eq 0 ] && ok "bucket: exit 0" || fail "bucket: exit $rc: $(tail -2 "$tmp/bucket.log")"
granted=$(counter "$tmp/bucket" acquire_ok)
limited=$(counter "$tmp/bucket" acquire_limited)
elapsed=$("$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["elapsed_s"])' "$tmp/bucket/report.json")
most=$("$py" -c "import math; print(5 + math.ceil(50 * $elapsed))")
[ "$granted" -gt 0 ] && [ "$granted" -le "$most" ] && ok "bucket: $granted grants, at most $most in $elapsed s" ||
  fail "bucket: $granted grants, more than $most in $elapsed s (or none)"
[ "$limited" -gt 0 ] && [ "$limited" -le $((8 * 3000 / 20 + 8)) ] &&
  ok "bucket: $limited acquires refused unsent, each after its wait" ||
  fail "bucket: $limited refused (none, or more than 8 clients waiting 20 ms each can be)"
invokes=$(grep -c '' <("$bin" show --history "$tmp/bucket" 2>/dev/null | grep '"f":"acquire"' | grep '"type":"invoke"'))
[ "$invokes" -le $((granted + 8 * 2)) ] && ok "bucket: the refused are not in the history ($invokes invokes)" ||
  fail "bucket: $invokes acquire invokes in the history for $granted grants"
grep -q "token bucket (50/s): $limited acquires refused unsent" "$tmp/bucket/report.md" &&
  ok "bucket: report.md counts them" || fail "bucket: report.md's counts line: $(grep -m1 '^acquire:' "$tmp/bucket/report.md")"

cat >"$tmp/breaker.json" <<'JSON'
{ "name": "guards_breaker", "clients": 8, "duration_s": 6, "seed": 1,
  "lock": { "algorithm": "redis", "ttl_ms": 2000, "wait_ms": 200 },
  "workload": { "type": "flash_sale", "items": 1, "stock": 1200, "critical_ms": 2,
                "breaker_failure_rate": 0.5, "breaker_min_requests": 4,
                "breaker_window_ms": 500, "breaker_open_ms": 1000 },
  "faults": [ { "at_ms": 1000, "type": "kill", "target": "redis-1", "restart_after_ms": 2000 } ],
  "expect": { "violations": 0, "invariants": "broken" } }
JSON
"$bin" run "$tmp/breaker.json" --quiet --out "$tmp/breaker" >"$tmp/breaker.log" 2>&1
rc=$?
[ "$rc" -eq 0 ] && ok "breaker: exit 0 (as expected: an invariant broken, no violation)" ||
  fail "breaker: exit $rc: $(tail -2 "$tmp/breaker.log")"
opened=$(counter "$tmp/breaker" breaker_opened)
steps=$(counter "$tmp/breaker" degraded_steps)
orders=$(counter "$tmp/breaker" degraded_orders)
[ "$opened" -ge 1 ] && [ "$steps" -gt 0 ] && [ "$orders" -gt 0 ] &&
  ok "breaker: opened $opened times, $steps purchases degraded, $orders orders" ||
  fail "breaker: opened $opened, degraded $steps, orders $orders"
"$py" - "$tmp/breaker/report.json" <<'PY' && ok "breaker: no_oversell broken, no violation, the degrade path named" || fail "breaker: invariants $(grep -m3 'oversell\|violations' "$tmp/breaker/report.md")"
import json, sys
r = json.load(open(sys.argv[1]))
inv = {i["name"]: i for i in r["invariants"]}
assert r["checker"]["violations"] == 0, r["checker"]["violations"]
assert not inv["no_oversell"]["holds"], inv["no_oversell"]
assert "by the degrade path, with no lock" in inv["no_oversell"]["detail"], inv["no_oversell"]["detail"]
PY
