#!/usr/bin/env bash
# `locklab check` on the history of a real full-rate run, in one pass (the
# default) beside the whole history loaded (--in-memory, as `run` checks
# its own), on the same file in the same run: sections a second and peak
# RSS (/usr/bin/time -v) of each, and their outputs compared byte for byte.
# Two runs of bench/uncontended.json, SECONDS/5 and SECONDS long, show
# whether the memory grows with the length of the run: the last lines give
# the one pass's peak RSS and sections of the long one over the short one's
# (a ratio near 1 for RSS against about 5 for the sections: bounded).
# The issue's target (26): >= 1M sections/s, memory bounded by the keys.
#
#   bench/check_file.sh [SECONDS]   (default 60)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
short=$(((seconds + 4) / 5))
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (GNU time)" >&2; exit 2; }
dir=$(scripts/build.sh)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/locklab-check-file.XXXXXX")
trap 'rm -rf -- "$tmp"' EXIT

declare -A rss_of sections_of
measure() { # run-folder mode [--in-memory]
  local run=$1 mode=$2
  shift 2
  /usr/bin/time -v "$dir/locklab" check "$run/history.llh" "$@" >"$tmp/$mode.out" \
    2>"$tmp/$mode.time" || true
  local rss wall secs sections
  rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$tmp/$mode.time")
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$tmp/$mode.time")
  secs=$(echo "$wall" | awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; print s }')
  sections=$(sed -n 's/^checker: \([0-9]*\) sections.*/\1/p' "$tmp/$mode.out")
  printf '  %-10s %10d sections in %6.2f s: %9.0f sections/s, peak RSS %7.1f MiB\n' "$mode" \
    "$sections" "$secs" "$(echo "$sections $secs" | awk '{ print ($2 > 0 ? $1 / $2 : 0) }')" \
    "$(echo "$rss" | awk '{ print $1 / 1024 }')"
  rss_of[$run.$mode]=$rss
  sections_of[$run.$mode]=$sections
}

for s in "$short" "$seconds"; do
  "$dir/locklab" run bench/uncontended.json --duration "$s" --out "$tmp/run-$s" -q >/dev/null ||
    true
  bytes=$(stat -c %s "$tmp/run-$s/history.llh")
  echo "check_file: a ${s} s run of bench/uncontended.json, history.llh $((bytes / 1048576)) MiB"
  measure "$tmp/run-$s" stream
  measure "$tmp/run-$s" in-memory --in-memory
  if ! cmp -s "$tmp/stream.out" "$tmp/in-memory.out"; then
    echo "check_file: the one-pass check and the in-memory one print differently" >&2
    diff "$tmp/stream.out" "$tmp/in-memory.out" | head >&2
    exit 1
  fi
done
for mode in stream in-memory; do
  long=$tmp/run-$seconds.$mode short_run=$tmp/run-$short.$mode
  awk -v m="$mode" -v rl="${rss_of[$long]}" -v rs="${rss_of[$short_run]}" \
    -v sl="${sections_of[$long]}" -v ss="${sections_of[$short_run]}" \
    'BEGIN { printf "  %-10s long/short: peak RSS %.2fx for %.2fx the sections\n", m, rl / rs, sl / ss }'
done
