#!/usr/bin/env bash
# Redisson's RLock with its watchdog (ttl 1 s, renewed every 333 ms) behind
# a sentinel, the replication link cut from the start, the master killed at
# 1.5 s (a `kill` of the `leader`, not the `failover` kind) and back empty
# 3 s later. The sentinel names the promoted replica some 1.7 s after the
# kill (500 ms down-after, then its once-a-second INFO to see the
# promotion). The holder's section runs 5 s, past that moment: its
# renewals fail while no master answers (the holder carries on, as
# Redisson's does), the waiters ask the sentinel again, reach the promoted
# replica, which never had the hash, and one of them takes the lock while
# the holder still works: UNSAFE (Redisson #775, #4706). A section that
# ended before the sentinel named the new master (the scorecard's 3 leases)
# leaves no window, which is why this test holds past it.
#   tests/runs/test_redisson_kill_leader.sh SOURCE_DIR LOCKLAB_BIN
set -uo pipefail
# shellcheck source=tests/lib/run_test.sh
. "$(dirname "$0")/../lib/run_test.sh" redisson-kill-leader "$@"

cat >"$tmp/scenario.json" <<'JSON'
{
  "name": "redisson_watchdog_kill_leader",
  "clients": 4,
  "duration_s": 7,
  "seed": 1,
  "lock": { "algorithm": "redisson", "ttl_ms": 1000, "wait_ms": 3000, "watchdog": true,
            "redis": { "sentinels": 1 } },
  "workload": { "type": "flash_sale", "items": 1, "stock": 1000000, "critical_ms": 5000 },
  "faults": [
    { "type": "timeout", "target": "replication", "stream": "both", "at_ms": 0 },
    { "type": "kill", "target": "leader", "at_ms": 1500, "restart_after_ms": 3000 }
  ],
  "expect": { "violations": ">0" }
}
JSON

"$bin" run "$tmp/scenario.json" -q -o "$tmp/run" >"$tmp/out" 2>"$tmp/err"
rc=$?
report=$tmp/run/report.json
if [ "$rc" = 0 ] && [ -f "$report" ]; then
  ok "exit 0: the expected violations came"
else
  fail "exit $rc, stderr: $(cat "$tmp/err")"
fi
# What makes it unsafe, read from the report: the holder's renewals failed
# and yet it held its whole section; the sentinel named redis-2; the
# overlap's second holder entered after the kill.
read -r renew_errors hold_max kill_end violations < <(python3 - "$report" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
c = r["counters"]
print(c["renew_errors"], int(r["operations"]["hold"]["max_ms"]),
      "leads" if "redis-2 leads" in (r["faults"][1]["end_detail"] or "") else "other",
      r["checker"]["violations"])
PY
)
if [ "${renew_errors:-0}" -gt 0 ] && [ "${hold_max:-0}" -ge 5000 ]; then
  ok "$renew_errors renewals failed and a section still lasted $hold_max ms"
else
  fail "renew_errors ${renew_errors:-?}, longest hold ${hold_max:-?} ms: a failed renewal ended a section"
fi
if [ "${kill_end:-}" = leads ] && [ "${violations:-0}" -gt 0 ]; then
  ok "the sentinel named redis-2 and $violations violation(s) followed"
else
  fail "kill end: ${kill_end:-?}, violations ${violations:-?}"
fi
exit $failed
