#!/usr/bin/env bash
# The no-false-alarm sweep: random scenario shapes from the schema's valid
# ranges (tests/lib/sweep_gen.c, one shape per seed), each run with every
# correct lock, no faults. A correct lock must PASS every one of them; a
# FAIL (or a shape the validator refuses, exit 2) is a defect of the
# testbed, and the seed replays it. The refusals that are no defect, NOT
# RUN and counted: postgres-optimistic and mysql-optimistic, which are not
# locks, do not run
# the workloads that need exclusion (cache_rebuild, scheduled_tasks); a
# lock does not run a workload whose sections it cannot grant
# (redisson-semaphore grants permits, the other workloads are exclusive;
# a latch, redisson-latch, is not a lock and runs the latch workload alone).
#
#   scripts/sweep.sh [--shapes N] [--first-seed S] [--seeds S1,S2,...]
#                    [--duration SEC] [--algorithms A,B,...] [--keep DIR]
#
# Seeds S..S+N-1 (defaults: 30 shapes from seed 1, 2 s each), or exactly
# the seeds --seeds lists (to replay some); every correct lock (each that
# `locklab list` does not tag [unsafe]) unless --algorithms names some.
# One managed fleet (5 redis-servers, 1 ZooKeeper, 1 etcd, 1 PostgreSQL,
# and 1 MariaDB when the algorithms include a mysql-* lock, on 127.0.0.1)
# serves the whole sweep and is brought down on every exit,
# Ctrl-C included. --keep DIR
# keeps every shape and run folder there; otherwise they are deleted.
# Exit 0 when every run passed, 1 when one failed, 2 on bad usage, 3 when
# the fleet would not start. LOCKLAB_BIN (with LOCKLAB_SWEEP_GEN) runs a
# built binary of one's own instead of building build/.
set -euo pipefail

usage() {
  echo "usage: scripts/sweep.sh [--shapes N] [--first-seed S] [--seeds S1,S2,...]" \
    "[--duration SEC] [--algorithms A,B,...] [--keep DIR]" >&2
  exit 2
}

shapes=30 first=1 list="" duration=2 keep="" algorithms=""
while [ $# -gt 0 ]; do
  [ $# -ge 2 ] || usage
  case "$1" in
    --shapes) shapes=$2 ;;
    --first-seed) first=$2 ;;
    --seeds) list=$2 ;;
    --duration) duration=$2 ;;
    --algorithms) algorithms=$2 ;;
    --keep) keep=$2 ;;
    *) usage ;;
  esac
  shift 2
done
[[ "$shapes" =~ ^[0-9]{1,6}$ ]] || usage
[[ "$first" =~ ^[0-9]{1,15}$ ]] || usage
shapes=$((10#$shapes)) first=$((10#$first)) # a leading 0 is not octal here
if [ "$shapes" -lt 1 ]; then usage; fi
seeds=()
if [ -n "$list" ]; then
  IFS=, read -r -a seeds <<<"$list"
  for i in "${!seeds[@]}"; do
    [[ "${seeds[$i]}" =~ ^[0-9]{1,18}$ ]] || usage
    seeds[i]=$((10#${seeds[$i]}))
  done
  [ ${#seeds[@]} -ge 1 ] || usage
else
  for ((i = 0; i < shapes; i++)); do seeds+=($((first + i))); done
fi
[[ "$duration" =~ ^[0-9]+(\.[0-9]+)?$ ]] || usage
if [ -n "$keep" ]; then
  mkdir -p "$keep"
  keep=$(cd "$keep" && pwd) # before the cd below: relative to the caller
fi
cd "$(dirname "$0")/.."

# LOCKLAB_BIN and LOCKLAB_SWEEP_GEN: binaries of one's own (a copy, so
# that a rebuild meanwhile does not change what the sweep runs)
if [ -z "${LOCKLAB_BIN:-}" ]; then
  scripts/build.sh >/dev/null
fi
bin=${LOCKLAB_BIN:-build/locklab}
gen=${LOCKLAB_SWEEP_GEN:-build/tests/sweep_gen}
# the list read whole first: grep -q leaving early would make a long
# list die of SIGPIPE, and pipefail would call a known algorithm unknown
known=$("$bin" list)
if [ -z "$algorithms" ]; then
  # every lock but the unsafe baselines, as locklab list tags them
  algorithms=$(awk '/^algorithms:/ { on = 1; next } on && /^  tags:/ { exit }
                    on && /^  [^ ]/ && !/\[unsafe\]/ { print $1 }' <<<"$known" | paste -sd, -)
fi
IFS=, read -r -a algos <<<"$algorithms"
[ ${#algos[@]} -ge 1 ] || usage
for a in "${algos[@]}"; do
  if ! grep -Eq "^  $a( |\$)" <<<"$known"; then
    echo "sweep: unknown algorithm \"$a\" (see build/locklab list)" >&2
    exit 2
  fi
done
"$gen" "${seeds[0]}" --duration "$duration" >/dev/null || usage
# A run may take its duration plus start, drain and report; a hang is a failure.
limit=$(awk -v d="$duration" 'BEGIN { printf "%d", d + 120 }')

if [ -n "$keep" ]; then
  work=$keep
else
  work=$(mktemp -d "${TMPDIR:-/tmp}/locklab-sweep-XXXXXX")
fi
chmod 711 "$work" # PostgreSQL runs as the postgres user: it must pass through
cluster="$work/cluster"
cleanup() {
  "$bin" cluster down --dir "$cluster" >/dev/null 2>&1 || true
  if [ -z "$keep" ]; then rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'echo "sweep: interrupted" >&2; exit 130' INT TERM

# MariaDB only for the MySQL locks: it costs the fleet a second to install
mysql_nodes=0
for a in "${algos[@]}"; do
  if [[ "$a" == mysql-* ]]; then mysql_nodes=1; fi
done
start=$(date +%s)
if ! "$bin" cluster up --redis-nodes 5 --zookeeper-nodes 1 --etcd-nodes 1 --postgres-nodes 1 \
  --mysql-nodes "$mysql_nodes" --dir "$cluster" >"$work/cluster.out"; then
  cat "$work/cluster.out" >&2
  exit 3
fi
# `cluster status` ends with the flags to use:
#   locklab run SCENARIO --redis 127.0.0.1:P1,...,127.0.0.1:P5 --zookeeper 127.0.0.1:P
status=$("$bin" cluster status --dir "$cluster")
redis=$(sed -n 's/.* --redis \([^ ]*\).*/\1/p' <<<"$status")
zookeeper=$(sed -n 's/.* --zookeeper \([^ ]*\).*/\1/p' <<<"$status")
etcd=$(sed -n 's/.* --etcd \([^ ]*\).*/\1/p' <<<"$status")
postgres=$(sed -n 's/.* --postgres \([^ ]*\).*/\1/p' <<<"$status")
mysql=$(sed -n 's/.* --mysql \([^ ]*\).*/\1/p' <<<"$status")
mysql_flag=()
if [ -n "$mysql" ]; then mysql_flag=(--mysql "$mysql"); fi
if [ -z "$redis" ] || [ -z "$zookeeper" ] || [ -z "$etcd" ] || [ -z "$postgres" ] ||
  { [ "$mysql_nodes" = 1 ] && [ -z "$mysql" ]; }; then
  echo "sweep: no endpoints in \`locklab cluster status\`:" >&2
  echo "$status" >&2
  exit 3
fi

# One line of figures from report.json, and for a failure the reason and
# every broken invariant's detail. Without python3, the verdict line only.
figures() {
  if ! command -v python3 >/dev/null 2>&1 || [ ! -s "$1/report.json" ]; then
    return 0
  fi
  python3 - "$1/report.json" <<'EOF' || true
import json, sys
r = json.load(open(sys.argv[1]))
ops = r.get("operations", {})
acq, failed = ops.get("acquire", {}), ops.get("acquire_failed", {})
ch = r.get("checker", {})
def mark(i):
    if i.get("holds"):
        return "ok"
    return "advisory-missed" if i.get("advisory") else "BROKEN"
inv = ", ".join("%s %s" % (mark(i), i.get("name")) for i in r.get("invariants", []))
print("acquired=%d p99=%.1fms failed=%d violations=%s witness_agrees=%s | %s" % (
    acq.get("count", 0), acq.get("p99_ms", 0.0), failed.get("count", 0),
    ch.get("violations"), ch.get("witness_agrees"), inv))
if r.get("verdict") != "PASS":
    if r.get("failure"):
        print("  failure: %s" % r["failure"])
    for i in r.get("invariants", []):
        if not i.get("holds"):
            print("  %s: %s" % (i.get("name"), i.get("detail")))
EOF
}

passed=0 failed=0 not_run=0 failures=()
for seed in "${seeds[@]}"; do
  shape="$work/shape-$seed.json"
  "$gen" "$seed" --duration "$duration" >"$shape"
  what=$(sed -n 's/.*"description": "\([^"]*\)".*/\1/p' "$shape")
  echo "seed=$seed: $what"
  for a in "${algos[@]}"; do
    out="$work/run-$seed-$a"
    # Empty the Redis servers first, as compare does between algorithms: a
    # key a Redlock round left on a late node lives out its ttl and would
    # cost the next run availability.
    for ep in ${redis//,/ }; do
      redis-cli -h "${ep%:*}" -p "${ep##*:}" FLUSHALL >/dev/null
    done
    # and etcd, whose keys of a run's last leases would outlive it a lease
    ETCDCTL_API=3 etcdctl --endpoints "$etcd" del "" --from-key >/dev/null 2>&1 || true
    if ! "$bin" show "$shape" --algorithm "$a" >/dev/null 2>"$out.why" &&
      grep -Eq "not a lock|sections; [a-z-]+ grants none" "$out.why"; then
      not_run=$((not_run + 1))
      printf '  %-10s NOT RUN  %s\n' "$a" "$(sed 's/^[^:]*:[^:]*:[^:]*: //' "$out.why")"
      continue
    fi
    rc=0
    # --foreground: the run stays in this process group, so a Ctrl-C reaches it
    timeout --foreground -k 10 "$limit" "$bin" run "$shape" --algorithm "$a" \
      --redis "$redis" --zookeeper "$zookeeper" --etcd "$etcd" --postgres "$postgres" \
      "${mysql_flag[@]+"${mysql_flag[@]}"}" --quiet --out "$out" >"$out.out" 2>"$out.err" ||
      rc=$?
    # Interrupted: it stopped, and so does the sweep (bash would not act on
    # a SIGINT its child handled).
    if [ "$rc" = 130 ]; then
      echo "sweep: interrupted" >&2
      exit 130
    fi
    verdict=$(sed -n 's/^End of run: \([A-Z]*\).*/\1/p' "$out.out" | tail -n 1)
    if [ "$rc" = 0 ] && [ "$verdict" = PASS ]; then
      passed=$((passed + 1))
      printf '  %-10s PASS  %s\n' "$a" "$(figures "$out" | sed -n 1p)"
    else
      failed=$((failed + 1))
      failures+=("$seed $a")
      figures "$out" >"$out.fig"
      printf '  %-10s FAIL  exit %s, verdict %s  %s\n' "$a" "$rc" "${verdict:-none}" \
        "$(sed -n 1p "$out.fig")"
      sed -n '2,$p' "$out.fig"
      if [ -s "$out.err" ]; then sed 's/^/  stderr: /' "$out.err" | head -n 5; fi
    fi
  done
  # A fleet that lost a server fails every run after it: say so, and stop.
  if ! "$bin" cluster status --dir "$cluster" >/dev/null; then
    echo "sweep: the fleet lost a server after seed $seed; stopping" >&2
    "$bin" cluster status --dir "$cluster" >&2 || true
    failed=$((failed + 1))
    failures+=("$seed fleet")
    break
  fi
done
wall=$(($(date +%s) - start))

echo
echo "$passed passed, $failed failed, $not_run not run (a workload the lock cannot run)"
echo "wall time: ${wall} s (${#seeds[@]} shapes, ${duration} s each, algorithms $algorithms)"
gen_flags=""
if [ "$duration" != 2 ]; then gen_flags=" --duration $duration"; fi
for f in "${failures[@]+"${failures[@]}"}"; do
  read -r seed a <<<"$f"
  if [ "$a" = fleet ]; then
    echo "FAIL seed=$seed: the fleet lost a server (see the lines above)"
  else
    echo "FAIL seed=$seed algorithm=$a: replay with:" \
      "$gen $seed$gen_flags > s.json && $bin run s.json --algorithm $a"
  fi
done
if [ -n "$keep" ]; then echo "shapes and reports kept in $work"; fi
[ "$failed" = 0 ]
