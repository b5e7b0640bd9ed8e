# shellcheck shell=bash
# bench/lib.sh - sourced by the benchmarks: one throwaway redis-server on a
# free loopback port in a temporary folder, stopped by its PID on exit.
#
#   start_redis [PREFIX...]   e.g. start_redis taskset -c 0
# sets: work (the folder), port, server (the PID). redis_args, an array set
# before, adds to the server's arguments (e.g. --maxclients).

work=$(mktemp -d)
server=""
cleanup() { [ -n "$server" ] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

start_redis() {
  # A port nothing answers on may still be some connection's local end (the
  # ports drawn here overlap the kernel's ephemeral range): then the server
  # cannot bind it and exits, and another port is tried.
  local try
  for try in $(seq 10); do
    for _ in $(seq 50); do
      port=$((20000 + RANDOM % 40000))
      (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null || break
    done
    # shellcheck disable=SC2154 # redis_args is the caller's, and may be unset
    "$@" redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --daemonize no \
      --dir "$work" --logfile "$work/redis.log" ${redis_args[@]+"${redis_args[@]}"} &
    server=$!
    for _ in $(seq 200); do
      redis-cli -p "$port" ping >/dev/null 2>&1 && return 0
      kill -0 "$server" 2>/dev/null || break
      sleep 0.05
    done
    if kill -0 "$server" 2>/dev/null; then
      break # running but not answering: no other port would help
    fi
    wait "$server" 2>/dev/null || true
    server=""
    grep -q "Address already in use" "$work/redis.log" || break
  done
  echo "redis-server did not answer on port $port (attempt $try): $(tail -1 "$work/redis.log" 2>/dev/null)" >&2
  exit 3
}

# The CPU ticks (utime + stime) of the thread named $2 in process $1 (each
# of locklab's threads is named: locklab-proxy, locklab-worker, ...); 0
# when it has none.
thread_ticks() {
  local t
  for t in /proc/"$1"/task/*; do
    if [ "$(cat "$t/comm" 2>/dev/null)" = "$2" ]; then
      awk '{ print $14 + $15 }' "$t/stat" 2>/dev/null || echo 0
      return
    fi
  done
  echo 0
}

# The median of the numbers on stdin, one a line; nothing for none.
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR) print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
