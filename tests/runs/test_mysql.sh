#!/usr/bin/env bash
# The MySQL locks through the binary, on MariaDB servers locklab starts:
# - compare flash_sale with mysql-named, mysql-row and mysql-optimistic:
#   exit 0, PASS, every one safe, each report.json valid against the schema
#   (scenario.lock.mysql in it);
# - mysql-row with its server killed and back with its data 1 s later:
#   PASS, safe, the kill and the restart in the report;
# - a mysql-row holder paused past lock.mysql.wait_timeout_s: UNSAFE, and
#   told so at its release only without lock.mysql.reconnect;
# - a server of the user's own (`cluster up --mysql-nodes 1`, a user with
#   a password made in it): a run with --mysql and --mysql-defaults-file
#   logs in as that user, passes, and leaves no locklab database behind.
# No mariadbd of this test's is left running: each is found by the folder
# it works in, under the test's own.
#   tests/runs/test_mysql.sh SOURCE_DIR LOCKLAB_BIN
set -uo pipefail
cleanup_more() {
  [ -n "${cluster_dir:-}" ] && TMPDIR=$tmp "$bin" cluster down --dir "$cluster_dir" >/dev/null 2>&1
  # every mariadbd whose data folder is under tmp, by its PID
  for p in $(pgrep -x mariadbd); do
    grep -qz -- "--datadir=$tmp" "/proc/$p/cmdline" 2>/dev/null && kill -KILL "$p"
  done
}
# shellcheck source=tests/lib/run_test.sh
. "$(dirname "$0")/../lib/run_test.sh" mysql "$@"
export TMPDIR=$tmp # the runs' folders, so that their servers are found under it

left_running() {
  local p n=0
  for p in $(pgrep -x mariadbd); do
    tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -q -- "--datadir=$tmp" && n=$((n + 1))
  done
  echo "$n"
}

valid_reports() {
  python3 - "$src/docs/schema/report.schema.json" "$@" <<'PY'
import json, sys
import jsonschema
schema = json.load(open(sys.argv[1]))
for path in sys.argv[2:]:
    report = json.load(open(path))
    jsonschema.validate(report, schema)
    assert "mysql" in report["scenario"]["lock"], path
PY
}

"$bin" compare scenarios/flash_sale.json --algorithms mysql-named,mysql-row,mysql-optimistic \
  --duration 5 --out "$tmp/mc" >"$tmp/out" 2>"$tmp/err"
rc=$?
last=$(tail -1 "$tmp/out")
if [ "$rc" = 0 ] && [[ "$last" == "End of compare: PASS"*"safe: mysql-named, mysql-row, mysql-optimistic" ]]; then
  ok "compare: exit 0, $last"
else
  fail "compare: exit $rc, last line: $last; stderr: $(tail -3 "$tmp/err")"
fi
if valid_reports "$tmp"/mc/mysql-*/report.json; then
  ok "each report.json matches report.schema.json, scenario.lock.mysql in it"
else
  fail "a report.json does not match the schema"
fi

cat >"$tmp/kill.json" <<'JSON'
{
  "name": "mysql_row_server_killed",
  "clients": 8,
  "duration_s": 4,
  "seed": 1,
  "lock": { "algorithm": "mysql-row", "ttl_ms": 1000, "wait_ms": 2000 },
  "workload": { "type": "flash_sale", "items": 2, "stock": 1000000, "critical_ms": 20 },
  "faults": [ { "type": "kill", "target": "leader", "at_ms": 1000, "restart_after_ms": 1000 } ],
  "expect": { "violations": 0 }
}
JSON
"$bin" run "$tmp/kill.json" -o "$tmp/kill" >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" = 0 ] && grep -q "SIGKILL mysql-1" "$tmp/out" && grep -q "back on port .* data kept" "$tmp/out" &&
  grep -q "End of run: PASS (safe)" "$tmp/out"; then
  ok "mysql-row through its server's kill and restart with data: PASS (safe)"
else
  fail "kill: exit $rc: $(grep -E 'SIG|back|End of' "$tmp/out" | head -3); $(tail -2 "$tmp/err")"
fi

# wait_timeout plays a lease: a holder paused past it loses its session
# and its row, another client takes it, and the paused one writes on
# waking: UNSAFE either way. Without reconnect its release says LOST (it
# learns, too late); with it the COMMIT on the new session says OK.
for reconnect in false true; do
  cat >"$tmp/idle-$reconnect.json" <<JSON
{
  "name": "mysql_row_holder_paused_past_wait_timeout",
  "clients": 8,
  "duration_s": 5,
  "seed": 1,
  "lock": { "algorithm": "mysql-row", "ttl_ms": 1000, "wait_ms": 5000,
            "mysql": { "reconnect": $reconnect, "wait_timeout_s": 1 } },
  "workload": { "type": "flash_sale", "items": 1, "stock": 100000, "critical_ms": 10 },
  "faults": [ { "at_ms": 1000, "type": "client_pause", "target": "holder", "duration_ms": 2500 } ],
  "expect": { "violations": ">0" }
}
JSON
  "$bin" run "$tmp/idle-$reconnect.json" -q -o "$tmp/idle-$reconnect" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  lost=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["counters"]["release_lost"])' \
    "$tmp/idle-$reconnect/report.json" 2>/dev/null)
  want_lost=$([ "$reconnect" = true ] && echo 0 || echo 1)
  if [ "$rc" = 0 ] && [ "${lost:-}" = "$want_lost" ]; then
    ok "reconnect $reconnect: paused past wait_timeout, UNSAFE as expected, $lost release(s) lost"
  else
    fail "reconnect $reconnect: exit $rc, release_lost ${lost:-?} (want $want_lost): $(tail -1 "$tmp/out")"
  fi
done

cluster_dir=$tmp/cluster
"$bin" cluster up --redis-nodes 0 --zookeeper-nodes 0 --mysql-nodes 1 --dir "$cluster_dir" \
  >"$tmp/up" 2>&1 || fail "cluster up: $(tail -2 "$tmp/up")"
port=$("$bin" cluster status --dir "$cluster_dir" | sed -n 's/.*--mysql 127.0.0.1:\([0-9]*\).*/\1/p')
ask() { mariadb --no-defaults -uroot -h127.0.0.1 -P"$port" -N -e "$1"; }
ask "CREATE USER 'lab'@'127.0.0.1' IDENTIFIED BY 'lab-secret';
     GRANT ALL ON locklab.* TO 'lab'@'127.0.0.1'" || fail "cannot make the user"
printf '[client]\nuser=lab\npassword=lab-secret\n' >"$tmp/my.cnf"
chmod 600 "$tmp/my.cnf"
"$bin" run scenarios/flash_sale.json --algorithm mysql-named --duration 2 -q -o "$tmp/own" \
  --mysql "127.0.0.1:$port" --mysql-defaults-file "$tmp/my.cnf" >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" = 0 ] && grep -q "End of run: PASS (safe)" "$tmp/out"; then
  ok "--mysql with --mysql-defaults-file: logged in as lab, PASS (safe)"
else
  fail "own server: exit $rc: $(cat "$tmp/out") $(tail -2 "$tmp/err")"
fi
if [ -z "$(ask "SHOW DATABASES LIKE 'locklab'")" ]; then
  ok "the run dropped its tables and its database from the user's server"
else
  fail "locklab's database stayed: $(ask "SHOW TABLES FROM locklab" | paste -sd' ')"
fi
TMPDIR=$tmp "$bin" cluster down --dir "$cluster_dir" >/dev/null 2>&1 || fail "cluster down"
cluster_dir=

n=$(left_running)
if [ "$n" = 0 ]; then
  ok "no mariadbd of this test's left running"
else
  fail "$n mariadbd of this test's still running"
fi
exit $failed
