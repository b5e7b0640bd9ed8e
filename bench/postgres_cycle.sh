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
# One pgbench transaction is one lock cycle. pgbench runs twice a round:
# with 2 threads multiplexing the clients (its usual -j 2), and with one
# thread per client (-j CLIENTS), which is how locklab's engine runs its
# clients today; on a 2-core machine the client's scheduling costs the
# server CPU, so the two differ. Rounds alternate peer and locklab so
# drift on this shared machine hits all; the ratios are of the medians.
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

# pgbench's transactions per second with $2 threads, connections made
# before the clock starts
peer_rate() {
  "$pgbench" -n -h 127.0.0.1 -p "$port" -U postgres -c "$clients" -j "$2" -T "$secs" \
    -f "$work/$1.sql" postgres 2>&1 | sed -n 's/^tps = \([0-9.]*\) (without initial connection time)$/\1/p'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }

for lock in postgres-advisory postgres-row; do
  # locklab first, once, so the row lock's rows exist for pgbench
  "$bin" run bench/uncontended.json --algorithm "$lock" --postgres "$pg_eps" \
    --clients "$clients" --duration 1 --quiet --out "$work/warm-$lock" >/dev/null
  printf '%s\n%-6s %12s %12s %12s %9s %9s\n' "$lock:" round "pgbench -j2" "-j$clients" locklab/s "ratio j2" "ratio j$clients"
  p2s=() pns=() locks=()
  for r in $(seq "$rounds"); do
    p2=$(peer_rate "$lock" 2)
    pn=$(peer_rate "$lock" "$clients")
    "$bin" run bench/uncontended.json --algorithm "$lock" --postgres "$pg_eps" \
      --clients "$clients" --duration "$secs" --quiet --out "$work/run-$lock-$r" >/dev/null
    lk=$(acquire_rate "$work/run-$lock-$r")
    printf '%-6s %12.1f %12.1f %12.1f %9s %9s\n' "$r" "$p2" "$pn" "$lk" "$(ratio "$lk" "$p2")" "$(ratio "$lk" "$pn")"
    p2s+=("$p2") pns+=("$pn") locks+=("$lk")
  done
  m2=$(printf '%s\n' "${p2s[@]}" | median)
  mn=$(printf '%s\n' "${pns[@]}" | median)
  ml=$(printf '%s\n' "${locks[@]}" | median)
  printf '%s median over %s rounds: locklab %.1f cycles/s; pgbench -j 2 %.1f tps (ratio %s), -j %s %.1f tps (ratio %s); target >= 0.9\n' \
    "$lock" "$rounds" "$ml" "$m2" "$(ratio "$ml" "$m2")" "$clients" "$mn" "$(ratio "$ml" "$mn")"
done
