# shellcheck shell=bash disable=SC2154,SC2034 # pids, pid_of, tmp, py, merge, bin, fail and ok are the sourcing script's; port and redis_pid are set for it
# peer_checks.sh - what the wire tests share, sourced after run_test.sh:
# the background peers they run beside locklab and the checks of their
# summaries and merged histories. The sourcing script keeps every PID it
# started in pids (and a peer's by its name in pid_of), and sets py (the
# python) and merge (tests/lib/history_merge.py).

# reap PID: wait for it and forget it, so the end never signals a PID
# the system may have given to another process since.
reap() {
  local rc=0 p keep=()
  wait "$1" || rc=$?
  for p in "${pids[@]}"; do
    [ "$p" = "$1" ] || keep+=("$p")
  done
  pids=("${keep[@]}")
  return "$rc"
}
# One key of a peer's summary line (file $1, key $2).
field() { sed -n "s/.* $2=\([^ ]*\).*/\1/p" "$1"; }
# Wait for a peer; its exit must be 0 and its summary say complete=true.
peer_wait() {
  local name=$1 pid rc=0
  pid=${pid_of[$name]}
  reap "$pid" || rc=$?
  if [ "$rc" -ne 0 ] || [ "$(field "$tmp/$name.sum" complete)" != true ]; then
    fail "peer $name exited $rc: $(cat "$tmp/$name.sum" "$tmp/$name.err")"
    return 1
  fi
  echo "ran    peer $name: $(cat "$tmp/$name.sum")"
}
# Every key of a summary, compared: expect NAME KEY OP VALUE.
expect() {
  local name=$1 key=$2 op=$3 want=$4 got
  got=$(field "$tmp/$name.sum" "$key")
  local met=false
  if [[ $got =~ ^[0-9]+$ ]]; then
    case $op in
      -eq) [ "$got" -eq "$want" ] && met=true ;;
      -ge) [ "$got" -ge "$want" ] && met=true ;;
    esac
  fi
  if [ "$met" != true ]; then
    fail "peer $name: $key is ${got:-missing}, expected $op $want $(grep -s 'woken by' "$tmp/$name.err" | head -5 | tr '\n' ' ')"
  fi
}
# locklab check on a merged history: check_merged NAME EXPECT FILES...
check_merged() {
  local name=$1 want=$2 rc=0
  shift 2
  if ! "$py" "$merge" "$@" >"$tmp/$name.jsonl" 2>"$tmp/$name.merge.err"; then
    fail "$name: history_merge refused: $(cat "$tmp/$name.merge.err")"
    return 1
  fi
  "$bin" check "$tmp/$name.jsonl" --expect "$want" --show-violations 2 >"$tmp/$name.check" 2>&1 || rc=$?
  if [ "$rc" -ne 0 ]; then
    fail "$name: locklab check --expect '$want' exited $rc:"
    sed 's/^/         /' "$tmp/$name.check"
    return 1
  fi
  ok "$name: $(grep '^checker:' "$tmp/$name.check")"
}
# redis-server on a free loopback port, into port and redis_pid (the
# sourcing script stops it by that PID): the port is free when asked and
# taken by the server a moment later; another process may take it in
# between, so a server that does not answer is stopped and another port
# tried (3 times at most). 1, its log shown, when none answered.
redis_on_free_port() {
  local p
  port=
  for _ in 1 2 3; do
    p=$("$py" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    redis-server --port "$p" --bind 127.0.0.1 --save '' --appendonly no \
      --dir "$tmp" --loglevel warning >"$tmp/redis.log" 2>&1 &
    redis_pid=$!
    for _ in $(seq 50); do
      if [ "$(redis-cli -p "$p" ping 2>/dev/null)" = PONG ]; then
        port=$p
        break
      fi
      sleep 0.1
    done
    [ -n "$port" ] && return 0
    kill "$redis_pid" 2>/dev/null || true
    wait "$redis_pid" 2>/dev/null || true
    redis_pid=
  done
  echo "FAIL   redis-server did not answer on a free port (3 tries); its log:"
  sed 's/^/         /' "$tmp/redis.log"
  return 1
}
