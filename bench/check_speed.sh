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
# Then the nesting case, through `locklab check` as a user runs it: one
# owner re-entering one key NESTED times and releasing as many (a history
# is untrusted input: a nesting once made the checker quadratic) against
# NESTED flat sections of that owner on that key, each in its own file, in
# the same run: the rate and the peak RSS of each, and their ratios (the
# targets: nested at >= 0.5x the flat rate, <= 1.5x its peak RSS).
#
#   bench/check_speed.sh [SECTIONS] [KEYS] [NESTED]
#     (default 5000000 64 1000000; env TODAY_REF)
set -euo pipefail
cd "$(dirname "$0")/.."
sections=${1:-5000000}
keys=${2:-64}
nested=${3:-1000000}
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
# what the build links check_speed with, its archives found from here
libs() {
  sed 's/.* -o bench\/check_speed *//' build/CMakeFiles/check_speed.dir/link.txt |
    tr ' ' '\n' | sed -e 's|^\(liblocklab_[a-z]*\.a\)$|build/\1|'
}
today="$work/check_speed_today"
cc -O2 -g -I. -DTODAY_CHECKER -o "$today" bench/check_speed.c "$work/today_checker.c" \
  $(libs) -lpthread

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

# The nesting case's histories, as `locklab check` reads them (JSON lines).
history() { # nested|flat N
  awk -v kind="$1" -v n="$2" 'BEGIN {
    print "{\"type\":\"start\",\"locklab\":1,\"mono_ns\":1000,\"wall_ns\":1700000000000000000,\"scenario\":\"nesting\",\"algorithm\":\"redisson\",\"clients\":1,\"seed\":1}"
    t = 1000; acq = "{\"time\":%d,\"process\":0,\"type\":\"ok\",\"f\":\"acquire\",\"key\":\"k\",\"owner\":\"r1:0:0\"%s}\n"
    rel = "{\"time\":%d,\"process\":0,\"type\":\"invoke\",\"f\":\"release\",\"key\":\"k\",\"owner\":\"r1:0:0\"%s,\"effect\":\"applied\"}\n"
    if (kind == "nested") {
      for (i = 0; i < n; i++) printf acq, ++t, (i == 0 ? ",\"seq\":0" : "")
      for (i = 0; i < n; i++) printf rel, ++t, (i == n - 1 ? ",\"seq\":1" : "")
    } else {
      for (i = 0; i < n; i++) { printf acq, ++t, ",\"seq\":" 2 * i; printf rel, ++t, ",\"seq\":" 2 * i + 1 }
    }
    printf "{\"type\":\"end\",\"mono_ns\":%d,\"complete\":true,\"dropped\":0}\n", t + 1
  }' >"$work/$1.jsonl"
}
check_case() { # nested|flat: prints "SECONDS RSS_KB"
  /usr/bin/time -f '%e %M' -o "$work/$1.ctime" build/locklab check "$work/$1.jsonl" >"$work/$1.cout" ||
    { echo "check_speed: locklab check of the $1 history failed" >&2; exit 1; }
  cat "$work/$1.ctime"
}
echo "check_speed: nesting, $nested re-entries and releases by one owner against $nested flat sections"
history nested "$nested"
history flat "$nested"
read -r ns nk < <(check_case nested)
read -r fs fk < <(check_case flat)
grep -h '^checker:' "$work/nested.cout" "$work/flat.cout" | sed 's/^/  /'
awk -v n="$nested" -v ns="$ns" -v nk="$nk" -v fs="$fs" -v fk="$fk" 'BEGIN {
  nr = ns > 0 ? n / ns : 0; fr = fs > 0 ? n / fs : 0
  printf "  nested: %.2f s, %.0f sections/s, peak RSS %d MiB\n", ns, nr, nk / 1024
  printf "  flat:   %.2f s, %.0f sections/s, peak RSS %d MiB\n", fs, fr, fk / 1024
  printf "  nested/flat: rate %.2fx (target >= 0.5), peak RSS %.2fx (target <= 1.5)\n", (fr > 0 ? nr / fr : 0), nk / fk
}'
