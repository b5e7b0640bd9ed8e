#!/usr/bin/env bash
# How locklab's uncontended Redis lock cycle holds up as virtual clients
# grow: 50, 1000, 4000, 10000 by default, each row paired with
# redis-benchmark at the same concurrency on the same redis-server in the
# same run.
#
# A cycle is SET NX PX then the compare-and-delete EVALSHA (the release
# script of algorithms/redis.c), so with the server as the bottleneck the
# best N clients can do is
#     limit = 1 / (1/SET_rps + 1/EVALSHA_rps)
# both measured by redis-benchmark with N connections, each on random keys
# (-r), as locklab's clients each have their own key here (flash_sale,
# per_client skew, one item per client: nobody waits for anyone).
#
# Memory: locklab's peak RSS (GNU time's %M) at N clients and at 1 client;
# RSS per client = (peak at N - peak at 1) / N, what each more client costs
# beyond the fixed part (the binary, the server list, the report).
#
# The server gets core 0, locklab and redis-benchmark core 1 (taskset, when
# there and the machine has two cores), as bench/redis_cycle.sh does.
# A count the engine refuses is said on its row and the sweep goes on.
# Targets: ratio >= 0.95 at every count; <= 64 KB RSS per client at 10000.
#
#   bench/client_sweep.sh [COUNT...]  (env: LOCKLAB_BIN, SECONDS_PER_RUN, PIN=0 to not pin)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(realpath "${LOCKLAB_BIN:-build/locklab}")
secs=${SECONDS_PER_RUN:-3}
counts=("$@")
[ ${#counts[@]} -gt 0 ] || counts=(50 1000 4000 10000)
[ -x "$bin" ] || { echo "build first: scripts/build.sh" >&2; exit 2; }
command -v redis-benchmark >/dev/null || { echo "redis-benchmark not found" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "GNU time not found (apt-get install time)" >&2; exit 2; }
max=0
for n in "${counts[@]}"; do
  [[ "$n" =~ ^[1-9][0-9]*$ ]] || { echo "$n: not a client count" >&2; exit 2; }
  [ "$n" -gt "$max" ] && max=$n
done
# each of N clients holds a connection, redis-benchmark's N too, and both a few fds more
if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt $((max + 64)) ]; then
  ulimit -n $((max + 64)) 2>/dev/null ||
    { echo "open files: $(ulimit -n), $max clients need $((max + 64)) (ulimit -n)" >&2; exit 2; }
fi

. bench/lib.sh
pin_server=() pin_client=()
if [ "${PIN:-1}" = 1 ] && command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
  pin_server=(taskset -c 0) pin_client=(taskset -c 1)
fi
redis_args=(--maxclients $((max + 32)))
start_redis "${pin_server[@]}"

# algorithms/redis.c's release: delete the key only while it holds our owner
release="if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0"
sha=$(redis-cli -p "$port" SCRIPT LOAD "$release")

rps() { # N, then the command; redis-benchmark -q prints "NAME: 105263.16 requests per second, ..."
  local c=$1
  shift
  "${pin_client[@]}" redis-benchmark -h 127.0.0.1 -p "$port" -c "$c" -n $((c > 5000 ? 20 * c : 100000)) \
    -r 1000000 -q "$@" 2>/dev/null | tr '\r' '\n' |
    awk '/requests per second/ { for (i = 1; i <= NF; i++) if ($i == "requests") v = $(i-1) } END { print v }' ||
    true # no rate (connections refused): the caller says so on the row
}

# One run of N clients, each on its own key; sets cycle, p50, p99 (ms), rss (KB), or why.
locklab_run() {
  local n=$1 out="$work/run-$1"
  cat >"$work/sweep-$n.json" <<EOF
{
  "name": "client_sweep",
  "clients": $n,
  "duration_s": $secs,
  "lock": { "algorithm": "redis", "ttl_ms": 10000, "wait_ms": 1000 },
  "workload": { "type": "flash_sale", "items": $n, "stock": 1000000000, "critical_ms": 0, "skew": "per_client" },
  "expect": { "violations": 0 }
}
EOF
  local rc=0
  "${pin_client[@]}" /usr/bin/time -f %M -o "$work/rss-$n" "$bin" run "$work/sweep-$n.json" \
    --redis "127.0.0.1:$port" --quiet --out "$out" >/dev/null 2>"$work/err-$n" || rc=$?
  why=""
  if [ "$rc" -ne 0 ]; then # GNU time's own line ("Command exited with non-zero status") is not locklab's
    why="locklab exit $rc: $(grep -v '^Command exited' "$work/err-$n" | head -n 1)"
    return 1
  fi
  read -r cycle p50 p99 < <(awk -F'|' '$2 ~ /^ acquire $/ {
      for (i = 4; i <= 7; i++) gsub(/ /, "", $i); print $4, $5, $7 }' "$out/report.md")
  rss=$(tail -n 1 "$work/rss-$n")
}

echo "redis-server on 127.0.0.1:$port${pin_server[*]:+ (server: ${pin_server[*]}, clients: ${pin_client[*]})}; ${secs} s a run"
locklab_run 1 || { echo "the 1-client run failed: $why" >&2; exit 3; }
base=$rss
echo "locklab's peak RSS at 1 client: $((base / 1024)) MB (subtracted below: RSS per client = (peak - that) / N)"
printf '%7s %11s %11s %11s %11s %9s %9s %9s %9s %7s\n' clients set_rps evalsha_rps limit locklab \
  p50_ms p99_ms rss_MB KB/client ratio
fails=()
for n in "${counts[@]}"; do
  redis-cli -p "$port" FLUSHALL >/dev/null
  if ! locklab_run "$n"; then # its peer is not measured: there is nothing to hold it against
    printf '%7s  %s\n' "$n" "$why"
    fails+=("$n: not run")
    continue
  fi
  redis-cli -p "$port" FLUSHALL >/dev/null
  set_rps=$(rps "$n" SET 'lock:__rand_int__' owner NX PX 10000)
  eval_rps=$(rps "$n" EVALSHA "$sha" 1 'lock:__rand_int__' owner)
  if [ -z "$set_rps" ] || [ -z "$eval_rps" ]; then
    printf '%7s  redis-benchmark gave no rate at %s connections\n' "$n" "$n"
    fails+=("$n: no redis-benchmark rate")
    continue
  fi
  read -r limit ratio per < <(awk -v s="$set_rps" -v e="$eval_rps" -v c="$cycle" -v r="$rss" \
    -v b="$base" -v n="$n" 'BEGIN { l = 1 / (1/s + 1/e); printf "%.1f %.3f %.1f\n", l, c / l, (r - b) / n }')
  printf '%7s %11.1f %11.1f %11.1f %11.1f %9s %9s %9.1f %9.1f %7.3f\n' "$n" "$set_rps" "$eval_rps" \
    "$limit" "$cycle" "$p50" "$p99" "$(awk -v r="$rss" 'BEGIN { print r / 1024 }')" "$per" "$ratio"
  awk -v r="$ratio" 'BEGIN { exit !(r < 0.95) }' && fails+=("$n: ratio $ratio < 0.95")
  [ "$n" = 10000 ] && awk -v p="$per" 'BEGIN { exit !(p > 64) }' && fails+=("10000: $per KB a client > 64")
done
if [ ${#fails[@]} -eq 0 ]; then
  echo "targets (ratio >= 0.95 at every count; <= 64 KB a client at 10000): met"
else
  echo "targets (ratio >= 0.95 at every count; <= 64 KB a client at 10000): missed: $(IFS=';'; echo "${fails[*]}")"
  exit 1
fi
