#!/usr/bin/env bash
# Clients that cannot all connect at the start fail the run soon, not one
# after another: under a limit of 200 open files (locklab's and the
# redis-server it starts, which then takes 168 clients), 400 clients on
# two workers. Many of their tries fail at once (no descriptor left), which
# never waits in the seam: each client kept its worker for its whole 10 s
# of tries before the next began (some 20 minutes here). The run must end
# with exit 3 and the error of one client that could not connect, within
# 60 s (its tries last 10 s); a Ctrl-C during the tries ends it with 130.
#   tests/runs/test_connect_limit.sh SOURCE_DIR LOCKLAB_BIN
set -uo pipefail
# shellcheck source=tests/lib/run_test.sh
. "$(dirname "$0")/../lib/run_test.sh" connect-limit "$@"

# Starts the run under the limit in the background; its PID in pid.
start() {
  (ulimit -n 200 && exec "$bin" run bench/uncontended.json -c 400 -d 1 -q -o "$tmp/$1") \
    >"$tmp/$1.out" 2>"$tmp/$1.err" &
  pid=$!
}

# Waits up to $1 tenths of a second for pid; its status, or 255 if it runs on.
reap() {
  local i
  for ((i = 0; i < $1; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    kill -KILL "$pid"
    wait "$pid" 2>/dev/null
    pid=
    return 255
  fi
  wait "$pid"
  local rc=$?
  pid=
  return $rc
}

start limit
reap 600
rc=$?
if [ "$rc" = 3 ] && grep -q "clients could not connect; client [0-9]*: ." "$tmp/limit.err"; then
  ok "exit 3 within 60 s: $(cat "$tmp/limit.err")"
else
  fail "exit $rc (255: still running after 60 s), stderr: $(cat "$tmp/limit.err")"
fi

start interrupted
sleep 3
kill -INT "$pid"
reap 100
rc=$?
if [ "$rc" = 130 ]; then
  ok "Ctrl-C during the tries: exit 130 within 10 s"
else
  fail "Ctrl-C during the tries: exit $rc (255: still running 10 s after), stderr: $(cat "$tmp/interrupted.err")"
fi
exit $failed
