#!/usr/bin/env bash
# Does a run's memory stay flat however long it runs? One run of SCENARIO
# for SECONDS at full rate, its RSS (VmRSS of the locklab process) sampled
# every INTERVAL seconds; then the same scenario for a quarter of the time
# as the peer: a bounded run peaks at about the same RSS whatever its
# length, a run that keeps its history grows four times as much. (A
# scenario whose faults fall past the quarter cannot be shortened: the
# RSS at a quarter of the long run is then the figure to compare with.)
#
# Prints each sample, then: the peak RSS of each run and their ratio
# (long / short; target: about 1, under 1.25), the RSS after warm-up (the
# first sample past a tenth of the run) against the last (the growth per
# minute), the critical sections the run checked, and the history's bytes
# on disk per section (target <= 100).
#
#   bench/long_memory.sh [SCENARIO] [SECONDS] [INTERVAL]
#     (defaults: bench/uncontended.json 600 10; env: LOCKLAB_BIN, OUT)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(realpath "${LOCKLAB_BIN:-build/locklab}")
scn=${1:-bench/uncontended.json}
secs=${2:-600}
every=${3:-10}
[ -x "$bin" ] || { echo "build first: scripts/build.sh" >&2; exit 2; }
[[ "$secs" =~ ^[1-9][0-9]*$ && "$every" =~ ^[1-9][0-9]*$ ]] ||
  { echo "SECONDS and INTERVAL are whole seconds" >&2; exit 2; }
out=${OUT:-$(mktemp -d /tmp/locklab-long.XXXXXX)}
mkdir -p "$out"

rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }

# run_sampled DIR SECONDS PRINT: the run, its RSS every $every s; its peak
# (kB) into peak_kb, the samples into samples[]
run_sampled() {
  local dir=$1 s=$2 print=$3 t=0 kb
  samples=()
  peak_kb=0
  "$bin" run "$scn" --duration "$s" --quiet --out "$dir" >"$dir.log" 2>&1 &
  local pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    sleep "$every"
    t=$((t + every))
    kb=$(rss_kb "$pid")
    [ "$kb" -gt 0 ] || continue
    samples+=("$t:$kb")
    [ "$kb" -gt "$peak_kb" ] && peak_kb=$kb
    [ "$print" = 1 ] && printf '  %6d s  %8.1f MB\n' "$t" "$(echo "$kb / 1024" | bc -l)"
  done
  wait "$pid" || true
  tail -1 "$dir.log"
}

sections_of() { # the checker's sections, from report.json
  python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["checker"]["sections"])' "$1/report.json"
}

echo "== $scn for $secs s, RSS every $every s"
run_sampled "$out/long" "$secs" 1
long_peak=$peak_kb
warm_t=0 warm_kb=0 last_t=0 last_kb=0 quarter_kb=0
for x in "${samples[@]}"; do
  t=${x%%:*} kb=${x##*:}
  if [ "$warm_kb" = 0 ] && [ "$t" -ge $((secs / 10)) ]; then warm_t=$t warm_kb=$kb; fi
  if [ "$t" -le $((secs / 4)) ]; then quarter_kb=$kb; fi
  last_t=$t last_kb=$kb
done
short=$(( secs / 4 > every ? secs / 4 : every ))
echo "== the peer: the same for $short s"
run_sampled "$out/short" "$short" 0
short_peak=$peak_kb

sections=$(sections_of "$out/long")
bytes=$(stat -c %s "$out/long/history.llh")
if [ "$short_peak" -gt 0 ]; then
  printf '\npeak RSS: %.1f MB over %d s, %.1f MB over %d s: ratio %.2f (target < 1.25)\n' \
    "$(echo "$long_peak / 1024" | bc -l)" "$secs" "$(echo "$short_peak / 1024" | bc -l)" "$short" \
    "$(echo "$long_peak / $short_peak" | bc -l)"
else # a scenario whose faults come later than the short run's end
  printf '\npeak RSS: %.1f MB over %d s (the shorter peer could not run: %s)\n' \
    "$(echo "$long_peak / 1024" | bc -l)" "$secs" "$(tail -1 "$out/short.log")"
fi
if [ "$quarter_kb" -gt 0 ]; then
  printf 'within the run: %.1f MB at a quarter of it, %.1f MB at its peak: ratio %.2f\n' \
    "$(echo "$quarter_kb / 1024" | bc -l)" "$(echo "$long_peak / 1024" | bc -l)" \
    "$(echo "$long_peak / $quarter_kb" | bc -l)"
fi
if [ "$last_t" -gt "$warm_t" ]; then
  printf 'after warm-up: %.1f MB at %d s, %.1f MB at %d s: %+.2f MB a minute\n' \
    "$(echo "$warm_kb / 1024" | bc -l)" "$warm_t" "$(echo "$last_kb / 1024" | bc -l)" "$last_t" \
    "$(echo "($last_kb - $warm_kb) / 1024 * 60 / ($last_t - $warm_t)" | bc -l)"
fi
printf 'sections: %s; history.llh %.1f MB: %.1f bytes a section (target <= 100)\n' "$sections" \
  "$(echo "$bytes / 1048576" | bc -l)" "$(echo "$bytes / $sections" | bc -l)"
echo "runs in $out"
