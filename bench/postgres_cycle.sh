#!/usr/bin/env bash
# locklab's PostgreSQL lock cycles on uncontended keys against pgbench
# running the same statements at the same client count on the same
# server, in the same run.
#
# Peer: `pgbench -n -f` with the lock's own statements, client c on the key
# lock:stock:<c> as locklab's client c is (bench/uncontended.json: every
# client its own key):
#   postgres-advisory: the grant (pg_advisory_lock under lock_timeout, set
#     in the same statement) and pg_advisory_unlock: two round trips;
#   postgres-row: BEGIN; SET LOCAL lock_timeout; SELECT ... FOR UPDATE as
#     one message (pgbench's \; joins them as locklab sends them), then
#     COMMIT: two round trips.
# One pgbench transaction is one lock cycle. Rounds alternate peer and
# locklab so drift on this shared machine hits both; the ratio is of the
# medians.
#
#   bench/postgres_cycle.sh [ROUNDS]  (env: LOCKLAB_BIN, CLIENTS=16, SECONDS_PER_RUN=5)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${LOCKLAB_BIN:-build/locklab}
pgbench=${PGBENCH:-/usr/lib/postgresql/15/bin/pgbench}
rounds=${1:-3}
clients=${CLIENTS:-16}
secs=${SECONDS_PER_RUN:-5}
[ -x "$bin" ] || { echo "build first: scripts/build.sh" >&2; exit 2; }
[ -x "$pgbench" ] || { echo "no pgbench at $pgbench (apt-get install postgresql)" >&2; exit 2; }

. bench/cluster_lib.sh
cluster_up 0 0 0 1
port=${pg_eps##*:}
echo "PostgreSQL on $pg_eps; $clients clients, ${secs}s per run"

cat >"$work/postgres-advisory.sql" <<'SQL'
SELECT pg_advisory_lock(hashtextextended('lock:stock:' || :client_id, 0)) FROM (SELECT set_config('lock_timeout', '1000', false)) AS timeout;
SELECT pg_advisory_unlock(hashtextextended('lock:stock:' || :client_id, 0));
SQL
cat >"$work/postgres-row.sql" <<'SQL'
BEGIN \; SET LOCAL lock_timeout = 1000 \; SELECT key FROM locklab_locks WHERE key = 'lock:stock:' || :client_id FOR UPDATE;
COMMIT;
SQL

# pgbench's transactions per second, connections made before the clock starts
peer_rate() {
  "$pgbench" -n -h 127.0.0.1 -p "$port" -U postgres -c "$clients" -j 2 -T "$secs" \
    -f "$work/$1.sql" postgres 2>&1 | sed -n 's/^tps = \([0-9.]*\) (without initial connection time)$/\1/p'
}

for lock in postgres-advisory postgres-row; do
  # locklab first, once, so the row lock's rows exist for pgbench
  "$bin" run bench/uncontended.json --algorithm "$lock" --postgres "$pg_eps" \
    --clients "$clients" --duration 1 --quiet --out "$work/warm-$lock" >/dev/null
  printf '%s\n%-6s %14s %14s %8s\n' "$lock:" round pgbench/s locklab/s ratio
  peers=() locks=()
  for r in $(seq "$rounds"); do
    peer=$(peer_rate "$lock")
    "$bin" run bench/uncontended.json --algorithm "$lock" --postgres "$pg_eps" \
      --clients "$clients" --duration "$secs" --quiet --out "$work/run-$lock-$r" >/dev/null
    lk=$(acquire_rate "$work/run-$lock-$r")
    printf '%-6s %14.1f %14.1f %8.3f\n' "$r" "$peer" "$lk" \
      "$(awk -v a="$lk" -v b="$peer" 'BEGIN { print a / b }')"
    peers+=("$peer") locks+=("$lk")
  done
  mp=$(printf '%s\n' "${peers[@]}" | median)
  ml=$(printf '%s\n' "${locks[@]}" | median)
  awk -v l="$ml" -v p="$mp" -v n="$rounds" -v lock="$lock" 'BEGIN {
    printf "%s median over %d rounds: locklab %.1f cycles/s, pgbench %.1f tps, ratio %.3f (target >= 0.9)\n", lock, n, l, p, l / p }'
done
