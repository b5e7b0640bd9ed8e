# bench/cluster_lib.sh - sourced by the benchmarks that need a managed fleet:
# `locklab cluster up` in a throwaway folder, brought down on exit.
#
#   cluster_up REDIS_NODES ZOOKEEPER_NODES [ETCD_NODES [POSTGRES_NODES]], both default 0
# sets: work (the folder), redis_eps, zk_eps, etcd_eps and pg_eps ("127.0.0.1:p,...").

work=$(mktemp -d)
chmod 711 "$work" # PostgreSQL runs as the postgres user: it must pass through
cluster_dir="$work/cluster"
cleanup() { "$bin" cluster down --dir "$cluster_dir" >/dev/null 2>&1 || true; rm -rf "$work"; }
trap cleanup EXIT

cluster_up() {
  "$bin" cluster up --redis-nodes "$1" --zookeeper-nodes "$2" --etcd-nodes "${3:-0}" \
    --postgres-nodes "${4:-0}" --dir "$cluster_dir" >/dev/null
  redis_eps=$(sed -n 's/^redis=//p' "$cluster_dir/state")
  zk_eps=$(sed -n 's/^zookeeper=//p' "$cluster_dir/state")
  etcd_eps=$(sed -n 's/^etcd=//p' "$cluster_dir/state")
  pg_eps=$(sed -n 's/^postgres=//p' "$cluster_dir/state")
}

# Locks acquired per second in a run folder's report.json.
acquire_rate() {
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("%.1f" % (r["operations"]["acquire"]["count"] / r["elapsed_s"]))' "$1/report.json"
}

median() { sort -n | awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
