#!/usr/bin/env bash
# The offline checker on the history of a long full-rate run: SECTIONS
# critical sections over KEYS keys (bench/check_speed.c makes them), fed
# as a stream (checker_event: nothing kept) against the whole-history
# checker (history_sections + checker_run, all kept), and against the
# checker as it was before the stream (TODAY_REF, built here from git), on
# the same input in the same run. Per mode: its counts (all three must
# agree), sections a second, and the peak RSS (/usr/bin/time -v). The
# issue's target: the stream at >= 1M sections/s, its memory bounded by
# the keys, not the length.
#
#   bench/check_speed.sh [SECTIONS] [KEYS]   (default 5000000 64; env TODAY_REF)
set -euo pipefail
cd "$(dirname "$0")/.."
sections=${1:-5000000}
keys=${2:-64}
bin=build/bench/check_speed
[ -x "$bin" ] || { echo "build first: scripts/build.sh" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (GNU time)" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The checker before the stream: the commit before the one that added sweep.c.
ref=${TODAY_REF:-$(git rev-list HEAD -- sim/check/sweep.c | tail -1)^}
git show "$ref:sim/check/checker.c" |
  sed -e 's/\bchecker_run\b/today_checker_run/g' \
      -e 's/\bchecker_attach_stalls\b/today_checker_attach_stalls/g' \
      -e '/^void checker_result_free(struct check_result \*r)$/,/^}$/d' >"$work/today_checker.c"
today="$work/check_speed_today"
cc -O2 -g -I. -DTODAY_CHECKER -o "$today" bench/check_speed.c "$work/today_checker.c" \
  build/liblocklab_core.a -lm -lpthread

measure() { # mode binary
  /usr/bin/time -v "$2" "$1" "$sections" "$keys" >"$work/$1.out" 2>"$work/$1.time"
  local rss
  rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$work/$1.time")
  printf '%s; peak RSS %d MiB\n' "$(cat "$work/$1.out")" $((rss / 1024))
}
echo "check_speed: $sections sections over $keys keys (today: $(git rev-parse --short "$ref"))"
measure stream "$bin"
measure whole "$bin"
measure today "$today"
counts() { sed 's/;.*//' "$work/$1.out" | sed 's/^[a-z]*: //'; }
if [ "$(counts stream)" != "$(counts whole)" ] || [ "$(counts whole)" != "$(counts today)" ]; then
  echo "check_speed: the modes disagree" >&2
  exit 1
fi
