#!/usr/bin/env bash
# The violations' timelines of report.html, one per group of violations
# (sim/check/groups.h), drawn from a real run's history.llh two ways
# (tests/runs/context_compare.c): from every section, as the whole-history
# check keeps them, and from the few the violations' context rebuilds in a
# second pass over the file (sim/check/context.h), as a run that streams
# its history draws them. Both must group alike, and draw the same byte
# for byte: for the groups report.html draws, for every kept group, and
# from the JSON-lines form of the same history (which numbers keys and
# owners its own way). With no windows the context keeps only the pairs,
# and the drawings must then differ: the comparison can fail.
#   tests/runs/test_context.sh SOURCE_DIR LOCKLAB_BIN CONTEXT_COMPARE_BIN
set -euo pipefail
more_args=CONTEXT_COMPARE_BIN
# shellcheck source=tests/lib/run_test.sh
. "$(dirname "$0")/../lib/run_test.sh" context "$@"
cmp=$3

# Plain Redis locks with no fencing, the holder paused past its ttl twice:
# a few hundred violations among thousands of sections on four hot keys.
cat >"$tmp/scen.json" <<'JSON'
{
  "name": "context_pause_unfenced",
  "description": "redis without fencing, a holder paused 800 ms past its 300 ms ttl twice: violations among many sections",
  "clients": 16,
  "duration_s": 6,
  "seed": 1,
  "lock": { "algorithm": "redis", "ttl_ms": 300, "wait_ms": 5000 },
  "workload": { "type": "flash_sale", "items": 4, "stock": 1000000, "critical_ms": 2 },
  "faults": [
    { "at_ms": 1500, "type": "client_pause", "target": "holder", "duration_ms": 800 },
    { "at_ms": 4000, "type": "client_pause", "target": "holder", "duration_ms": 800 }
  ],
  "expect": { "violations": ">0" }
}
JSON

rc=0
timeout -s INT -k 20 60 "$bin" run "$tmp/scen.json" --out "$tmp/run" -q >"$tmp/run.log" 2>&1 || rc=$?
if [ "$rc" -ne 0 ]; then
  echo "FAIL: locklab run exited $rc (0: PASS with violations expected); its output:"
  sed 's/^/         /' "$tmp/run.log"
  exit 1
fi

# compare NAME EXPECTED_RC ARGS...: context_compare's exit code and line
compare() {
  local name=$1 want=$2 got=0
  shift 2
  "$cmp" "$@" >"$tmp/$name.out" 2>&1 || got=$?
  if [ "$got" -ne "$want" ]; then
    fail "$name: context_compare $* exited $got, expected $want:"
    head -c 4000 "$tmp/$name.out" | sed 's/^/         /'
    return 1
  fi
  ok "$name: $(head -1 "$tmp/$name.out")"
}

compare drawn 0 "$tmp/run/history.llh"
# one timeline per group of violations, as many as report.html draws
read -r same groups < <(sed -n 's/^context_compare: \([0-9]*\) timelines the same, of \([0-9]*\) groups.*/\1 \2/p' "$tmp/drawn.out")
if [ -z "${groups:-}" ] || [ "$groups" -lt 2 ] || [ "$same" -ne $((groups < 10 ? groups : 10)) ]; then
  fail "drawn: expected min(10, groups) timelines, at least 2 groups (two pauses): $(head -1 "$tmp/drawn.out")"
fi
# the context keeps a small part of the run's sections
read -r kept all < <(sed -n 's/.*; \([0-9]*\) sections kept of \([0-9]*\);.*/\1 \2/p' "$tmp/drawn.out")
if [ -z "${kept:-}" ] || [ $((kept * 4)) -gt "$all" ]; then
  fail "drawn: the context kept ${kept:-?} of ${all:-?} sections, expected under a quarter"
fi
compare every 0 "$tmp/run/history.llh" 1000
"$bin" show --history "$tmp/run" >"$tmp/history.jsonl"
compare jsonl 0 "$tmp/history.jsonl"
compare no_windows 1 "$tmp/run/history.llh" 0 10
grep -q 'drawn differently' "$tmp/no_windows.out" ||
  fail "no_windows: expected a timeline drawn differently: $(head -1 "$tmp/no_windows.out")"

exit $failed
