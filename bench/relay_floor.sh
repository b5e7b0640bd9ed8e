#!/usr/bin/env bash
# The floor under bench/proxy_cost.sh: how close to the direct rate any
# relay in user space can come on this machine. The same Redis lock cycle,
# same clients, same redis-server, same run, rounds alternating: straight to
# the server; through locklab's proxy with no toxic (--proxy); and through
# bench/relay_floor (a bare epoll relay, its own process) in each of its
# modes: copy (recv and send, as the proxy does), drain (edge-triggered,
# recv until EAGAIN) and splice (socket -> pipe -> socket). For each, the
# rate over the direct rate, and the CPU per cycle of everything the cycle
# runs on (locklab, the server, the relay) direct over that path's, read in
# /proc from 1 s in to 1 s before the run's end. When the bare relay's
# ratio is as far from 0.9 as the proxy's, the gap is the relay hop's
# (two loopback TCP crossings a message), not the proxy's code.
#
#   bench/relay_floor.sh [ROUNDS]  (env: LOCKLAB_BIN, CLIENTS, SECONDS_PER_RUN)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${LOCKLAB_BIN:-build/locklab}
relay=${RELAY_BIN:-$(dirname "$bin")/bench/relay_floor}
rounds=${1:-3}
clients=${CLIENTS:-50}
secs=${SECONDS_PER_RUN:-5}
if [ ! -x "$bin" ] || [ ! -x "$relay" ]; then echo "build first: scripts/build.sh" >&2; exit 2; fi
[ "$secs" -ge 3 ] || { echo "SECONDS_PER_RUN must be 3 or more" >&2; exit 2; }
hz=$(getconf CLK_TCK)

. bench/lib.sh
start_redis
relay_pid=""
trap '[ -n "$relay_pid" ] && kill "$relay_pid" 2>/dev/null; cleanup' EXIT

# utime + stime ticks of the processes named (a gone one counts 0)
ticks() { for p in "$@"; do cat "/proc/$p/stat" 2>/dev/null || true; done | awk '{ s += $14 + $15 } END { print s + 0 }'; }

# A free loopback port for the relay to listen on.
free_port() {
  local p
  for _ in $(seq 50); do
    p=$((20000 + RANDOM % 40000))
    (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return; }
  done
  echo "no free port" >&2
  exit 3
}

# rate (acquires/s) and CPU us per cycle of one run: run NAME PATH, PATH one
# of direct, proxy, copy, drain, splice
run() {
  local name=$1 path=$2 target=$port extra=() rport
  relay_pid=""
  if [ "$path" = proxy ]; then
    extra=(--proxy)
  elif [ "$path" != direct ]; then
    rport=$(free_port)
    "$relay" "$path" "$rport" "$port" >"$work/relay.out" &
    relay_pid=$!
    for _ in $(seq 100); do grep -q listening "$work/relay.out" 2>/dev/null && break; sleep 0.05; done
    grep -q listening "$work/relay.out" || { echo "bench: relay_floor $path did not listen" >&2; exit 3; }
    target=$rport
  fi
  "$bin" run bench/uncontended.json --redis "127.0.0.1:$target" --clients "$clients" --duration "$secs" \
    --quiet --out "$work/$name" ${extra[@]+"${extra[@]}"} >/dev/null &
  local pid=$! a0 a1
  sleep 1
  a0=$(ticks "$pid" "$server" $relay_pid)
  sleep $((secs - 2))
  a1=$(ticks "$pid" "$server" $relay_pid)
  wait "$pid" || { local rc=$?; echo "bench: locklab run $name exited $rc: $(head -1 "$work/$name"/report.md 2>/dev/null)" >&2; exit 3; }
  if [ -n "$relay_pid" ]; then
    kill "$relay_pid"
    wait "$relay_pid" 2>/dev/null || true
    relay_pid=""
  fi
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); a=r["operations"]["acquire"]
rate = a["count"] / r["elapsed_s"]; hz, s = int(sys.argv[3]), int(sys.argv[4])
print("%.1f %.1f" % (rate, int(sys.argv[2]) / hz / s * 1e6 / rate))' \
    "$work/$name/report.json" $((a1 - a0)) "$hz" $((secs - 2))
}

paths=(proxy copy drain splice)
median() { sort -n | awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
echo "redis-server on 127.0.0.1:$port; $clients clients; $secs s per run; each path: rate / direct (CPU per cycle direct / path)"
printf '%-6s %11s %9s' round direct_rps direct_us
for p in "${paths[@]}"; do printf ' %16s' "$p"; done
echo
declare -A rates cpus
for r in $(seq "$rounds"); do
  read -r d_rps d_us < <(run "d$r" direct)
  printf '%-6s %11.1f %9.1f' "$r" "$d_rps" "$d_us"
  for p in "${paths[@]}"; do
    read -r rps us < <(run "$p$r" "$p")
    ratio=$(awk -v a="$rps" -v b="$d_rps" 'BEGIN { printf "%.3f", a / b }')
    cpu=$(awk -v d="$d_us" -v u="$us" 'BEGIN { printf "%.3f", d / u }')
    printf ' %16s' "$ratio ($cpu)"
    rates[$p]+="$ratio " cpus[$p]+="$cpu "
  done
  echo
done
for p in "${paths[@]}"; do
  # shellcheck disable=SC2086 # the lists are space-separated numbers
  echo "median over $rounds rounds, $p: rate / direct $(printf '%s\n' ${rates[$p]} | median), CPU per cycle direct / $p $(printf '%s\n' ${cpus[$p]} | median)"
done
