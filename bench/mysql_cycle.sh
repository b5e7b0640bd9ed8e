#!/usr/bin/env bash
# locklab's mysql-named lock cycle on uncontended keys against mysqlslap
# (MariaDB's own load client) running the same statements at the same
# client count on the same server, in the same run.
#
# Peer: `mysqlslap --query` with the lock's own two statements, each
# client on a name of its own as locklab's client c is on lock:stock:<c>
# (bench/uncontended.json: every client its own key): SELECT GET_LOCK(name,
# 1) and SELECT RELEASE_LOCK(name), two round trips, one cycle. mysqlslap's
# --number-of-queries is the run's count of statements, shared out among
# its clients (each runs Q / CLIENTS of them), so a run is Q / 2 cycles in
# the seconds it reports. Rounds alternate peer and locklab so drift on this shared
# machine hits both; the ratio is of the medians.
#
#   bench/mysql_cycle.sh [ROUNDS]  (env: LOCKLAB_BIN, CLIENTS=16, SECONDS_PER_RUN=5, QUERIES=200000)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${LOCKLAB_BIN:-build/locklab}
rounds=${1:-3}
clients=${CLIENTS:-16}
secs=${SECONDS_PER_RUN:-5}
queries=${QUERIES:-200000}
[ -x "$bin" ] || { echo "build first: scripts/build.sh" >&2; exit 2; }
command -v mysqlslap >/dev/null || { echo "mysqlslap not found (apt-get install mariadb-client)" >&2; exit 2; }

. bench/cluster_lib.sh
"$bin" cluster up --redis-nodes 0 --zookeeper-nodes 0 --mysql-nodes 1 --dir "$cluster_dir" >/dev/null
mysql_ep=$(sed -n 's/^mysql=//p' "$cluster_dir/state")
[ -n "$mysql_ep" ] || { echo "no mysql line in $cluster_dir/state" >&2; exit 3; }
port=${mysql_ep##*:}
echo "MariaDB on $mysql_ep; $clients clients, ${secs}s a locklab run, $queries statements a mysqlslap run"

# mysqlslap's --create-schema is where it connects, and it makes none for a
# --query of one's own: its clients failed to connect ("Unknown database")
# and it still printed a time, a run of nothing. Made here, kept (--no-drop).
mysql -h 127.0.0.1 -P "$port" -u root -e 'CREATE DATABASE IF NOT EXISTS locklab_bench'

cycle="SELECT GET_LOCK(CONCAT('lock:stock:', CONNECTION_ID()), 1);"
cycle+="SELECT RELEASE_LOCK(CONCAT('lock:stock:', CONNECTION_ID()))"

peer_rate() { # cycles a second: QUERIES / 2 over mysqlslap's average seconds
  local s
  s=$(mysqlslap -h 127.0.0.1 -P "$port" -u root --concurrency="$clients" --iterations=1 \
    --number-of-queries="$queries" --create-schema=locklab_bench --no-drop --delimiter=';' \
    --query="$cycle" 2>"$work/slap.err" | sed -n 's/^.*Average number of seconds to run all queries: \([0-9.]*\) seconds$/\1/p')
  awk -v q="$queries" -v s="$s" 'BEGIN { if (s > 0) printf "%.1f", q / 2 / s }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }

printf '%-6s %12s %12s %9s\n' round mysqlslap/s locklab/s ratio
peers=() locks=()
for r in $(seq "$rounds"); do
  p=$(peer_rate)
  if [ -z "$p" ] || [ -s "$work/slap.err" ]; then # a client that failed makes its time no peer's
    echo "mysqlslap failed: $(head -n 1 "$work/slap.err")" >&2
    exit 3
  fi
  "$bin" run bench/uncontended.json --algorithm mysql-named --mysql "$mysql_ep" \
    --clients "$clients" --duration "$secs" --quiet --out "$work/run-$r" >/dev/null
  l=$(acquire_rate "$work/run-$r")
  printf '%-6s %12.1f %12.1f %9s\n' "$r" "$p" "$l" "$(ratio "$l" "$p")"
  peers+=("$p") locks+=("$l")
done
mp=$(printf '%s\n' "${peers[@]}" | median)
ml=$(printf '%s\n' "${locks[@]}" | median)
printf 'mysql-named median over %s rounds: locklab %.1f cycles/s; mysqlslap %.1f cycles/s (ratio %s); target >= 0.9\n' \
  "$rounds" "$ml" "$mp" "$(ratio "$ml" "$mp")"
