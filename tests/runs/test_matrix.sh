#!/usr/bin/env bash
# `locklab matrix`: the shipped known-results matrix (scenarios/matrix/),
# one seed each, must match row for row: a verdict that changes fails the
# build. Then what a user meets around it: matrix.json against its schema,
# a row whose expectation is wrong (exit 1, the row says why), bad input
# (exit 2, nothing started, no folder made), --only and --seeds, and Ctrl-C
# (exit 130, the table written and marked cut short, no server left).
#   tests/runs/test_matrix.sh SOURCE_DIR LOCKLAB_BIN
set -uo pipefail
py=/usr/bin/python3
# anything still running from this test's servers (their folders are in $tmp)
cleanup_more() { pkill -KILL -f "$tmp" 2>/dev/null; }
# shellcheck source=tests/lib/run_test.sh
. "$(dirname "$0")/../lib/run_test.sh" matrix "$@"
chmod 711 "$tmp" # the postgres user passes through to its servers' folders
# Servers started under TMPDIR=$tmp keep their folders there: a process
# whose command line names $tmp is one of ours (ZooKeeper's java); Redis
# and its sentinels retitle themselves, so every pid a report names (its
# servers, the ones a fault started) must be gone too.
left_running() {
  pgrep -f "$tmp/locklab" >/dev/null && return 0
  for pid in $(grep -rhoE '(pid|as pid) [0-9]+' --include=report.json "$tmp" 2>/dev/null |
    grep -oE '[0-9]+$' | sort -u); do
    grep -qaE 'redis|sentinel|zookeeper' "/proc/$pid/cmdline" 2>/dev/null && return 0
  done
  return 1
}

validate() { # FILE: matrix.json against its schema
  "$py" - "$1" "$src/docs/schema/matrix.schema.json" <<'EOF'
import json, sys, jsonschema
doc, schema = (json.load(open(p)) for p in sys.argv[1:3])
jsonschema.validate(doc, schema)
EOF
}

# 1. The shipped matrix, one seed: every row matches. One exception, read
# in the run's own report: a run the host stopped for longer than its lock
# rides out (a hypervisor's steal of half a second is seen on these
# machines), with every violation inside such a stall, is INCOMPLETE and
# says so (exit 3); that row tested the host, not the lock.
TMPDIR=$tmp "$bin" matrix scenarios/matrix --out "$tmp/all" >"$tmp/all.log" 2>&1
rc=$?
rows=$(ls scenarios/matrix/*.json | wc -l)
if [ $rc -ne 0 ] && [ $rc -ne 3 ]; then
  fail "the shipped matrix exited $rc"
  sed -n '/^row /,$p' "$tmp/all.log"
fi
"$py" - "$tmp/all/matrix.json" "$rows" "$rc" "$src/docs/schema/report.schema.json" <<'EOF' || { fail "matrix.json of the shipped matrix"; sed -n '/^row /,$p' "$tmp/all.log"; }
import json, os, sys
import jsonschema
m = json.load(open(sys.argv[1]))
rows, rc = int(sys.argv[2]), int(sys.argv[3])
# every row's report.json fits its schema: the rows hold the shapes no
# short run of test_schemas makes (fault expectations, sentinels, etcd)
report_schema = jsonschema.Draft202012Validator(json.load(open(sys.argv[4])))
assert len(m["rows"]) == rows, (len(m["rows"]), rows)
host = []
for r in m["rows"]:
    run = r["runs"][0]
    assert os.path.isfile(os.path.join(run["run_dir"], "report.json")), run["run_dir"]
    rep = json.load(open(os.path.join(run["run_dir"], "report.json")))
    bad = ["%s: %s" % (e.json_path, e.message[:160]) for e in report_schema.iter_errors(rep)]
    assert not bad, (r["name"], bad[:3])
    assert rep["checker"]["violations"] == run["violations"], r["name"]
    assert rep["stuck_locks"]["stuck_ms"] == run["stuck_ms"], r["name"]
    assert rep["safety"] == run["safety"], (r["name"], rep["safety"], run["safety"])
    if r["matched"]:
        assert run["matched"], r["name"]
        continue
    # not matched: only as a run the host stalled past its lock's slack
    assert run["verdict"] == "INCOMPLETE", (r["name"], run["failure"])
    assert run["failure"].startswith("the host stalled the testbed"), (r["name"], run["failure"])
    h = rep["host"]
    assert h["metered"] and h["longest_ms"] > h["slack_ms"] > 0, (r["name"], h)
    listed = rep["checker"]["listed"]
    assert listed and all(v["host_stall_ms"] > h["slack_ms"] and not v["faults"] for v in listed), r["name"]
    host.append("%s (%.0f ms > %d ms)" % (r["name"], h["longest_ms"], h["slack_ms"]))
assert (rc == 3) == bool(host), (rc, host)
assert m["matched"] == (not host) and m["rows_matched"] == rows - len(host)
ran = [run["safety"] for r in m["rows"] for run in r["runs"] if run["ran"]]
assert (m["safety"]["runs"], m["safety"]["unsafe_runs"]) == (len(ran), sum(not s["safe"] for s in ran)), m["safety"]
if host:
    print("ok: every row matched but %s, INCOMPLETE: the host stalled past the lock's slack" % ", ".join(host))
else:
    print("ok: every row matched; run folders and figures agree with each report.json")
EOF
# A row that missed: its history's check in the log, whose groups name the
# cause (a lease run out under a holder, a host stall, a fault), as the run
# folder goes with $tmp.
for dir in $("$py" -c 'import json,sys
for r in json.load(open(sys.argv[1]))["rows"]:
    for run in r["runs"]:
        if not run["matched"]: print(run["run_dir"])' "$tmp/all/matrix.json" 2>/dev/null); do
  echo "== the missed run $dir, checked again:"
  "$bin" check "$dir/history.llh" | head -60
done
# Matrix runs keep their history as history.llh alone; the checks below read
# its JSON lines, as `locklab show --history` exports them.
for row in zookeeper_leader_killed redis_sentinel_cut_failover_wait; do
  "$bin" show --history "$tmp/all/$row/seed-1" >"$tmp/all/$row/seed-1/history.jsonl" ||
    fail "locklab show --history of $row's run"
done
# The leader kill, read in the history: the kill, then every client's link
# dropping (Curator's SUSPENDED) and coming back on a new leader.
"$py" - "$tmp/all/zookeeper_leader_killed/seed-1/history.jsonl" <<'EOF' || fail "links in the leader kill's history"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
clients = lines[0]["clients"]
kill = next(l["time"] for l in lines if l.get("f") == "kill" and l.get("value") == "start")
for c in range(clients):
    links = [l for l in lines if l.get("f") == "link" and l["process"] == c]
    assert links and links[0]["value"] == "connected", (c, links[:1])
    after = [l["value"] for l in links if l["time"] > kill]
    assert after[:2] == ["connecting", "connected"], (c, after)
rep = json.load(open(sys.argv[1].replace("history.jsonl", "report.json")))
end = rep["faults"][0]["end_detail"]
assert " leads" in end and rep["faults"][0]["servers"] not in end.split("; ")[-1], end
print("ok: each client's link dropped at the leader kill and came back; %s" % end)
EOF
validate "$tmp/all/matrix.json" && ok "matrix.json fits its schema" || fail "matrix.json schema"
grep -q "^| zookeeper_majority_paused | zookeeper |" "$tmp/all/matrix.md" && ok "matrix.md has the rows" ||
  fail "matrix.md rows"
if [ $rc -eq 0 ]; then
  grep -q "End of matrix: PASS - $rows of $rows rows matched" "$tmp/all.log" && ok "the verdict line" ||
    fail "verdict line: $(tail -1 "$tmp/all.log")"
else
  grep -q "End of matrix: INCOMPLETE - .* (some runs could not be judged)" "$tmp/all.log" &&
    ok "the verdict line says some runs could not be judged" || fail "verdict line: $(tail -1 "$tmp/all.log")"
fi
left_running && fail "servers left running after the matrix"

# The sentinel rows, read in their reports: the failover and its window,
# the violation explained by the cut and the failover, the refused acquires.
"$py" - "$tmp/all" <<'EOF' || fail "the sentinel rows' reports"
import json, sys
root = sys.argv[1]
def rep(row):
    return json.load(open("%s/%s/seed-1/report.json" % (root, row)))
r = rep("redis_sentinel_failover")
f = r["faults"][0]
assert "SIGKILL redis-1" in f["detail"] and "sentinel promoted redis-2" in f["detail"], f["detail"]
assert f["availability"]["recovery_ms"] is not None and f["availability"]["failed"] > 0, f
assert any("sentinel 127.0.0.1:" in s for s in r["servers"]), r["servers"]
r = rep("redis_sentinel_cut_failover")
v = r["checker"]["listed"][0]
names = " ".join(x["type"] for x in v["faults"])
assert "timeout" in names and "failover" in names, v
r = rep("redis_sentinel_cut_failover_wait")
assert r["counters"]["acquire_ok"] == 0 and r["counters"]["acquire_no_effect"] > 0, r["counters"]
h = open("%s/redis_sentinel_cut_failover_wait/seed-1/history.jsonl" % root).read()
assert '"error":"refused"' in h
print("ok: failover promoted, violation explained by the cut and the failover, WAIT refused")
EOF

# The clock jump, both ways: by libfaketime for real (the matrix's run), by
# shortening the keys' ttl when asked, or when libfaketime cannot be had,
# saying why; each a violation. Then a SIGKILLed locklab leaves no
# libfaketime file in /dev/shm.
jump_detail() { "$py" -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["faults"][2]["detail"], "|", r["checker"]["violations"])' "$1"; }
d=$(jump_detail "$tmp/all/redlock_clock_jump/seed-1/report.json")
case $d in *"by libfaketime"*) ok "the matrix's jump was made by libfaketime" ;; *) fail "jump: $d" ;; esac
sed 's/"jump_ms": 20000/"jump_ms": 20000, "method": "ttl"/' scenarios/matrix/24_redlock_clock_jump.json >"$tmp/jump_ttl.json"
TMPDIR=$tmp "$bin" run "$tmp/jump_ttl.json" --out "$tmp/jump-ttl" -q >/dev/null 2>&1
d=$(jump_detail "$tmp/jump-ttl/report.json")
case $d in *"shortening the ttl of its 1 key (method ttl)"*"| "[1-9]*) ok "method ttl: $d" ;; *) fail "method ttl: $d" ;; esac
TMPDIR=$tmp LOCKLAB_LIBFAKETIME=/nonexistent "$bin" run scenarios/matrix/24_redlock_clock_jump.json \
  --out "$tmp/jump-nolib" -q >/dev/null 2>&1
d=$(jump_detail "$tmp/jump-nolib/report.json")
case $d in *"(method ttl: libfaketime is not installed"*"| "[1-9]*) ok "no libfaketime: $d" ;;
  *) fail "no libfaketime: $d" ;; esac
TMPDIR=$tmp "$bin" run scenarios/matrix/24_redlock_clock_jump.json --out "$tmp/jump-kill" -q >/dev/null 2>&1 &
pid=$!
sleep 2.5
kill -KILL "$pid"
wait "$pid" 2>/dev/null
pid=
sleep 0.5
left=$(ls /dev/shm | grep faketime)
[ -z "$left" ] && ok "no libfaketime file in /dev/shm after SIGKILL" || fail "left in /dev/shm: $left"
left_running && fail "servers left running after SIGKILL: $(pgrep -af "$tmp/locklab")"

# External sentinels (--sentinel): a master, a replica and a sentinel this
# test starts itself; locklab asks the sentinel and starts no Redis.
ports=$("$py" -c 'import socket
ss=[socket.socket() for _ in range(3)]
[s.bind(("127.0.0.1", 0)) for s in ss]
print(" ".join(str(s.getsockname()[1]) for s in ss))')
read -r mport rport sport <<<"$ports"
mkdir -p "$tmp/ext"
redis-server --port "$mport" --bind 127.0.0.1 --save '' --appendonly no --dir "$tmp/ext" \
  --repl-diskless-sync-delay 0 --daemonize no >"$tmp/ext/m.log" 2>&1 &
ext_pids=$!
redis-server --port "$rport" --bind 127.0.0.1 --save '' --appendonly no --dir "$tmp/ext" \
  --replicaof 127.0.0.1 "$mport" --daemonize no >"$tmp/ext/r.log" 2>&1 &
ext_pids="$ext_pids $!"
printf 'port %s\nbind 127.0.0.1\ndir %s\nsentinel monitor mymaster 127.0.0.1 %s 1\n' \
  "$sport" "$tmp/ext" "$mport" >"$tmp/ext/s.conf"
for _ in $(seq 100); do redis-cli -p "$rport" info replication 2>/dev/null | grep -q link_status:up && break; sleep 0.1; done
redis-sentinel "$tmp/ext/s.conf" >"$tmp/ext/s.log" 2>&1 &
ext_pids="$ext_pids $!"
for _ in $(seq 100); do redis-cli -p "$sport" ping 2>/dev/null | grep -q PONG && break; sleep 0.1; done
"$bin" run scenarios/matrix/01_none_redis.json --sentinel "127.0.0.1:$sport" --out "$tmp/ext-run" \
  >"$tmp/ext-run.log" 2>&1
rc=$?
kill $ext_pids 2>/dev/null
wait $ext_pids 2>/dev/null
"$py" - "$tmp/ext-run/report.json" "$sport" "$mport" <<'EOF' || fail "the run with an external sentinel (exit $rc): $(tail -3 "$tmp/ext-run.log")"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["verdict"] == "PASS", r["failure"]
assert r["servers"] == ["sentinel 127.0.0.1:%s (external: the redis lock asks it for the master)" % sys.argv[2]], r["servers"]
assert r["counters"]["acquire_ok"] > 0
EOF
[ $rc -eq 0 ] && ok "--sentinel: the lock found the master through an external sentinel"

# 2. A row whose expectation is wrong: exit 1, the row and the run say why.
mkdir -p "$tmp/wrong"
sed 's/"violations": 0/"violations": ">0"/' scenarios/matrix/01_none_redis.json >"$tmp/wrong/a.json"
TMPDIR=$tmp "$bin" matrix "$tmp/wrong" --seeds 2 --out "$tmp/wrong-out" -q >"$tmp/wrong.log" 2>&1
rc=$?
[ $rc -eq 1 ] && ok "a wrong expectation: exit 1" || fail "a wrong expectation exited $rc"
grep -qF "seed 2: FAIL (safe) - violations: expected >0, got 0" "$tmp/wrong.log" && ok "the seed says why" ||
  fail "no reason for seed 2: $(cat "$tmp/wrong.log")"
grep -q "^==" "$tmp/wrong.log" && fail "--quiet printed progress lines"
"$py" - "$tmp/wrong-out/matrix.json" <<'EOF' || fail "matrix.json of the wrong row"
import json, sys
m = json.load(open(sys.argv[1]))
r = m["rows"][0]
assert not m["matched"] and m["rows_matched"] == 0
assert [x["seed"] for x in r["runs"]] == [1, 2] and r["seeds_matched"] == 0
assert r["runs"][0]["failure"] == "violations: expected >0, got 0", r["runs"][0]["failure"]
EOF

# 3. Bad input: exit 2, nothing started, no folder made.
mkdir -p "$tmp/bad"
cp scenarios/matrix/01_none_redis.json "$tmp/bad/a.json"
printf '{"clients": 0, "workload": {"type": "flash_sale"}}\n' >"$tmp/bad/b.json"
out=$(TMPDIR=$tmp "$bin" matrix "$tmp/bad" --out "$tmp/bad-out" 2>&1)
rc=$?
[ $rc -eq 2 ] && [ ! -e "$tmp/bad-out" ] && ok "a bad scenario: exit 2, no folder" ||
  fail "a bad scenario: exit $rc"
[ "$out" = "locklab: $tmp/bad/b.json:1:13: clients: 0 is out of range (1..100000)" ] &&
  ok "the error names the file, line and column" || fail "the error: $out"
mkdir -p "$tmp/empty"
out=$("$bin" matrix "$tmp/empty" 2>&1)
[ $? -eq 2 ] && [ "$out" = "locklab: matrix: $tmp/empty holds no scenario (*.json) (see locklab --help)" ] &&
  ok "an empty folder: exit 2" || fail "an empty folder: $out"
out=$("$bin" matrix --seeds 0 2>&1)
[ $? -eq 2 ] && ok "--seeds 0: exit 2" || fail "--seeds 0: $out"
out=$("$bin" matrix scenarios/matrix --only nothing-like-this 2>&1)
[ $? -eq 2 ] && ok "--only matching nothing: exit 2" || fail "--only nothing: $out"
left_running && fail "servers left running after bad input"

# 4. Ctrl-C in the middle: exit 130, what ran is written, marked cut short.
TMPDIR=$tmp "$bin" matrix scenarios/matrix --only zookeeper --out "$tmp/int" -q >"$tmp/int.log" 2>&1 &
pid=$!
# the first row's folder is made as its servers start; 3 s later it runs
interrupt_after "$tmp/int/none_zookeeper" 3 20
[ $rc -eq 130 ] && ok "Ctrl-C: exit 130" || fail "Ctrl-C: exit $rc"
"$py" - "$tmp/int/matrix.json" <<'EOF' || fail "matrix.json after Ctrl-C"
import json, sys
m = json.load(open(sys.argv[1]))
assert not m["complete"] and not m["matched"]
assert sum(len(r["runs"]) for r in m["rows"]) < len(m["rows"]), "every row ran"
EOF
grep -q "INCOMPLETE" "$tmp/int.log" && grep -q "(cut short)" "$tmp/int.log" &&
  ok "the table says cut short" || fail "no cut-short table: $(cat "$tmp/int.log")"
sleep 0.5
left_running && fail "servers left running after Ctrl-C: $(pgrep -af "$tmp/locklab")"

[ $failed -eq 0 ] && echo "test_matrix: all passed"
exit $failed
