#!/usr/bin/env bash
# What other tools take in, from real short runs on a Redis locklab starts
# and stops itself: --csv parsed by Python's csv module and held figure by
# figure to the run's report.json; --json - piped into jq (stdout holds
# report.json and nothing else, byte for byte the run folder's); --json
# FILE a copy; --percentiles with its exact keys in report.json, the CSV
# and compare.json; bad --percentiles refused with exit 2 and one line,
# nothing started; compare and matrix --csv, one row per algorithm, per
# row and seed. Every run is at most 2 s of load.
#   tests/runs/test_outputs.sh SOURCE_DIR LOCKLAB_BIN
set -uo pipefail
src=${1:?usage: test_outputs.sh SOURCE_DIR LOCKLAB_BIN}
bin=${2:?usage: test_outputs.sh SOURCE_DIR LOCKLAB_BIN}
py=/usr/bin/python3 # Debian's, with python3-jsonschema
command -v jq >/dev/null || { echo "test_outputs: jq is missing (scripts/install-deps.sh)" >&2; exit 1; }
cd "$src" || exit 1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/locklab-outputs.XXXXXX") || exit 1
trap 'rm -rf -- "$tmp"' EXIT
failed=0
fail() { echo "FAIL   $*"; failed=1; }
ok() { echo "ok     $*"; }

# A run with --csv, --json FILE and chosen percentiles: stdout is CSV alone.
"$bin" run scenarios/flash_sale_pause.json --duration 2 --out "$tmp/csv" --csv \
  --json "$tmp/copy.json" --percentiles 50,99,99.9,99.99 >"$tmp/csv.out" 2>"$tmp/csv.err"
rc=$?
echo "ran    csv (exit $rc): locklab run scenarios/flash_sale_pause.json --duration 2 --csv --json FILE --percentiles 50,99,99.9,99.99"
[ "$rc" -eq 0 ] || { fail "csv: exit $rc, expected 0 (PASS: expected UNSAFE)"; sed 's/^/         /' "$tmp/csv.err"; }
cmp -s "$tmp/copy.json" "$tmp/csv/report.json" && ok "csv: --json FILE is report.json byte for byte" ||
  fail "csv: --json FILE differs from the run folder's report.json"
grep -q '^End of run: PASS (expected UNSAFE' "$tmp/csv.err" && ok "csv: the summary went to stderr" ||
  fail "csv: no verdict line on stderr"

# --json -: stdout is report.json alone, jq reads it.
"$bin" run scenarios/flash_sale.json --duration 1 --out "$tmp/json" --json - >"$tmp/json.out" 2>"$tmp/json.err"
rc=$?
echo "ran    json (exit $rc): locklab run scenarios/flash_sale.json --duration 1 --json -"
[ "$rc" -eq 0 ] || { fail "json: exit $rc, expected 0"; sed 's/^/         /' "$tmp/json.err"; }
cmp -s "$tmp/json.out" "$tmp/json/report.json" && ok "json: stdout is report.json byte for byte" ||
  fail "json: stdout is not the run folder's report.json"
got=$(jq -r '.summary.verdict' <"$tmp/json.out")
[ "$got" = PASS ] && ok "json: jq .summary.verdict: PASS" || fail "json: jq .summary.verdict: \"$got\""
got=$(jq -c '.operations.acquire.percentiles | keys_unsorted' <"$tmp/json.out")
want='["p50.00","p90.00","p99.00","p99.90","p100.00"]'
[ "$got" = "$want" ] && ok "json: the default percentiles $got" || fail "json: percentiles keys $got, expected $want"

# compare: one CSV row per algorithm, the acquires' chosen percentiles.
"$bin" compare scenarios/flash_sale.json --algorithms redis,redis-naive --duration 0.5 \
  --out "$tmp/cmp" --csv --percentiles 50,99 >"$tmp/cmp.out" 2>"$tmp/cmp.err"
rc=$?
echo "ran    compare (exit $rc): locklab compare scenarios/flash_sale.json --algorithms redis,redis-naive --duration 0.5 --csv --percentiles 50,99"
[ "$rc" -eq 0 ] || { fail "compare: exit $rc, expected 0"; sed 's/^/         /' "$tmp/cmp.err"; }

# matrix: a folder of one short scenario, one CSV row per row and seed.
mkdir -p "$tmp/rows"
jq '.name = "short" | .duration_s = 0.5' scenarios/flash_sale.json >"$tmp/rows/short.json"
"$bin" matrix "$tmp/rows" --seeds 2 --out "$tmp/mx" --csv --percentiles 99.9 >"$tmp/mx.out" 2>"$tmp/mx.err"
rc=$?
echo "ran    matrix (exit $rc): locklab matrix ROWS --seeds 2 --csv --percentiles 99.9 (one flash_sale row of 0.5 s)"
[ "$rc" -eq 0 ] || { fail "matrix: exit $rc, expected 0"; sed 's/^/         /' "$tmp/mx.err"; }

"$py" - "$tmp" "$src/docs/schema" <<'PY' || failed=1
import csv, json, os, sys
import jsonschema
sys.path.insert(0, "tests/lib")
import check_lines
from check_lines import fail, ok
tmp, schemas = sys.argv[1], sys.argv[2]
def rows(name):
    with open(os.path.join(tmp, name), newline="") as f:
        return list(csv.reader(f, strict=True))
def close(a, b):  # the CSV's ms are report.json's to the microsecond
    return abs(float(a) - b) < 0.0005 + 1e-9

rep = json.load(open(os.path.join(tmp, "csv", "report.json")))
t = rows("csv.out")
head = ["operation", "count", "per_second", "mean_ms", "p50_ms", "p99_ms", "p99.9_ms",
        "p99.99_ms", "errors", "ambiguous", "verdict", "safe", "violations", "invariants_hold",
        "scenario", "algorithm"]
if t[0] != head:
    fail(f"csv: header {t[0]}, expected {head}")
elif [r[0] for r in t[1:]] != list(rep["operations"]):
    fail(f"csv: operations {[r[0] for r in t[1:]]}, report.json has {list(rep['operations'])}")
else:
    keys = ["p50.00", "p99.00", "p99.90", "p99.99"]
    for r in t[1:]:
        op = rep["operations"][r[0]]
        if list(op.get("percentiles", {})) not in ([], keys) or (op["count"] and list(op["percentiles"]) != keys):
            fail(f"csv: report.json's {r[0]}.percentiles keys {list(op.get('percentiles', {}))}, expected {keys}")
        if int(r[1]) != op["count"] or not abs(float(r[2]) - op["qps"]) < 0.0005:
            fail(f"csv: {r[0]} count, per_second {r[1]}, {r[2]}; report.json {op['count']}, {op['qps']}")
        if op["count"]:
            cells = [close(r[3], op["mean_ms"])] + [close(v, op["percentiles"][k]) for v, k in zip(r[4:8], keys)]
            if not all(cells):
                fail(f"csv: {r[0]} {r[3:8]} against report.json {op['mean_ms']}, {op['percentiles']}")
        elif any(r[3:8]):
            fail(f"csv: {r[0]} has no sample but figures {r[3:8]}")
    c = rep["counters"]
    acq = next(r for r in t if r[0] == "acquire")
    if (int(acq[8]), int(acq[9])) != (c["acquire_errors"], c["acquire_ambiguous"]):
        fail(f"csv: acquire errors, ambiguous {acq[8:10]}; report.json {c['acquire_errors']}, {c['acquire_ambiguous']}")
    if rep["operations"]["acquire"]["count"] < 50:
        fail(f"csv: only {rep['operations']['acquire']['count']} acquires: nothing to hold the figures to")
    if not check_lines.failed:
        ok(f"csv: {len(t) - 1} operations, every figure as report.json's (acquire p99.99 {acq[7]} ms)")
s = rep["summary"]
if list(s["acquire_ms"]) != ["p50.00", "p99.00", "p99.90", "p99.99"] or s["acquired"] != rep["operations"]["acquire"]["count"]:
    fail(f"csv: report.json's summary {s}")
def valid(what, doc, kind):
    schema = json.load(open(os.path.join(schemas, kind + ".schema.json")))
    errs = list(jsonschema.Draft202012Validator(schema).iter_errors(doc))
    if errs:
        fail(f"{what} with --percentiles against {kind}.schema.json: {errs[0].json_path}: {errs[0].message[:200]}")
    else:
        ok(f"{what} with --percentiles matches docs/schema/{kind}.schema.json")
valid("report.json", rep, "report")

t = rows("cmp.out")
cmp = json.load(open(os.path.join(tmp, "cmp", "compare.json")))
valid("compare.json", cmp, "compare")
if t[0][10:12] != ["p50_ms", "p99_ms"] or [r[0] for r in t[1:]] != ["redis", "redis-naive"]:
    fail(f"compare: header {t[0]}, rows {[r[0] for r in t[1:]]}")
else:
    for r, row in zip(t[1:], cmp["algorithms"]):
        one = json.load(open(os.path.join(row["run_dir"], "report.json")))
        p = one["operations"]["acquire"]["percentiles"]
        want = [row["verdict"], str(one["safety"]["safe"]).lower(), one["checker"]["violations"],
                one["operations"]["acquire"]["count"]]
        got = [r[1], r[2], int(r[3]), int(r[6])]
        if got != want or not (close(r[10], p["p50.00"]) and close(r[11], p["p99.00"])) \
                or list(row["acquire_percentiles"]) != ["p50.00", "p99.00"]:
            fail(f"compare: {r[0]}: {r} against report.json {want} {p}")
    if not check_lines.failed:
        ok("compare: one row per algorithm, held to each report.json")

t = rows("mx.out")
mx = json.load(open(os.path.join(tmp, "mx", "matrix.json")))
valid("matrix.json", mx, "matrix")
runs = mx["rows"][0]["runs"]
if t[0][13:14] != ["p99.9_ms"] or [(r[0], r[2]) for r in t[1:]] != [("short", "1"), ("short", "2")]:
    fail(f"matrix: header {t[0]}, rows {[r[:3] for r in t[1:]]}")
elif not all(close(r[13], x["acquire_percentiles"]["p99.90"]) and r[3] == x["verdict"]
             for r, x in zip(t[1:], runs)):
    fail(f"matrix: rows {t[1:]} against matrix.json {runs}")
else:
    ok("matrix: one row per seed, held to matrix.json")
check_lines.done()
PY

# Bad --percentiles: exit 2, one line naming the option and the value,
# nothing started (no run folder made, no server: the option is read first).
for v in 0 100.5 50,,99 abc 99,99.0 1,2,3,4,5,6,7,8,9,10,11; do
  "$bin" run scenarios/flash_sale.json --percentiles "$v" --out "$tmp/refused" >"$tmp/bad.out" 2>"$tmp/bad.err"
  rc=$?
  lines=$(wc -l <"$tmp/bad.err")
  if [ "$rc" -ne 2 ] || [ "$lines" -ne 1 ] || ! grep -q '^locklab: --percentiles: ' "$tmp/bad.err" ||
    [ -s "$tmp/bad.out" ] || [ -e "$tmp/refused" ]; then
    fail "--percentiles $v: exit $rc, stderr: $(cat "$tmp/bad.err")"
  fi
done
want='locklab: --percentiles: expected numbers in (0, 100] separated by commas, got "100.5" (see locklab --help)'
"$bin" matrix --percentiles 50,100.5 2>"$tmp/bad.err"
rc=$?
[ "$rc" -eq 2 ] && [ "$(cat "$tmp/bad.err")" = "$want" ] && ok "bad --percentiles: exit 2, one line naming the value" ||
  fail "matrix --percentiles 50,100.5: exit $rc, stderr: $(cat "$tmp/bad.err")"

# --json FILE where no file can go, and --csv with --json -: refused the same way.
for args in "--json $tmp/none/x.json" "--json $tmp" "--csv --json -"; do
  # shellcheck disable=SC2086 # the words of args, split on purpose
  "$bin" compare scenarios/flash_sale.json $args --out "$tmp/refused" >"$tmp/bad.out" 2>"$tmp/bad.err"
  rc=$?
  if [ "$rc" -ne 2 ] || [ "$(wc -l <"$tmp/bad.err")" -ne 1 ] || [ -s "$tmp/bad.out" ] || [ -e "$tmp/refused" ]; then
    fail "compare $args: exit $rc, stderr: $(cat "$tmp/bad.err")"
  fi
done
ok "--json FILE with no folder to go in, --csv with --json -: exit 2, one line, nothing started"

if [ "$failed" -ne 0 ]; then
  echo "test_outputs: FAILED"
  exit 1
fi
echo "test_outputs: CSV, JSON on stdout and the percentiles as the docs say"
