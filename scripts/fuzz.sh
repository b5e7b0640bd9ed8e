#!/usr/bin/env bash
# Run each libFuzzer target for SECONDS (default 60), one after the other:
#   scripts/fuzz.sh [SECONDS]
# fuzz_scenario starts from the shipped scenarios (scenarios/**/*.json and
# tests/fixtures/), fuzz_history from the small real histories in
# tests/fuzz/history/ (a few runs' history.jsonl and a history.llh, which the
# reader tells apart by their first bytes, cut short with --rate or
# --requests, and the doc's whole example). What each run finds new is kept
# in build-fuzz/corpus/TARGET, so later runs start from it. A finding (a
# crash, a leak, undefined behaviour, a timeout) stops the script with
# libFuzzer's exit code and its input in build-fuzz/findings/; it belongs in
# tests/unit/test_history_read.c or a tests/unit/test_scenario_*.c as a unit test, exactly.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
case "$seconds" in
  '' | *[!0-9]*) echo "usage: scripts/fuzz.sh [SECONDS]" >&2; exit 2 ;;
esac
dir=$(scripts/build.sh fuzz)
mkdir -p "$dir/findings"

# NAME KIND...: tests/fuzz/NAME.dict, then every name `locklab list KIND`
# prints as a JSON string, so a new kind is among the words with no edit.
dict() {
  local name=$1 kind
  shift
  cp "tests/fuzz/$name.dict" "$dir/$name.dict"
  for kind in "$@"; do
    "$dir/locklab" list "$kind" | sed 's/.*/"\\"&\\""/' >>"$dir/$name.dict"
  done
}
dict scenario algorithms workloads faults servers
dict history faults

# TARGET SEEDS...: fuzz for $seconds; the last lines say what it reached.
fuzz() {
  local target=$1
  shift
  mkdir -p "$dir/corpus/$target"
  echo "== $target, ${seconds} s"
  # -timeout: an input that takes over 10 s hangs; -rss_limit_mb: one that
  # wants 2 GiB is a finding (check /dev/zero once grew to 8.7 GB).
  local rc=0
  "$dir/tests/fuzz/$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -dict="$dir/${target#fuzz_}.dict" \
    -artifact_prefix="$dir/findings/$target-" "$dir/corpus/$target" "$@" \
    >"$dir/$target.log" 2>&1 || rc=$?
  if [ "$rc" -ne 0 ]; then
    tail -n 60 "$dir/$target.log"
    echo "locklab: $target found something (exit $rc); its input is in $dir/findings/" >&2
    exit "$rc"
  fi
  grep -E '^#[0-9]+[[:space:]]+DONE|^Done [0-9]+ runs|^stat::number_of_executed_units' "$dir/$target.log"
}

fuzz fuzz_scenario scenarios tests/fixtures
fuzz fuzz_history tests/fuzz/history
