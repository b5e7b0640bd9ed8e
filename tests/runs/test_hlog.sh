#!/usr/bin/env bash
# The .hlog interval logs of real runs, read by an independent reader
# (tests/lib/hlog_reader.py, written from HdrHistogram's published formats):
# every op's intervals must add up to its .hgrm, and acquire.hlog second by
# second must match report.json's timeline. One open-loop and one
# closed-loop run of a flash sale whose only Redis is paused 1.5 s (an
# empty second, a very slow one). Then, when Debian's libhdrhistogram-java
# is installed, HdrHistogram's own HistogramLogProcessor must read
# acquire.hlog to the same counts and percentiles. Then mutated copies that
# the reader must reject, to show it can fail.
#   tests/runs/test_hlog.sh SOURCE_DIR LOCKLAB_BIN
set -euo pipefail
# shellcheck source=tests/lib/run_test.sh
. "$(dirname "$0")/../lib/run_test.sh" hlog "$@"
reader=$src/tests/lib/hlog_reader.py
jar=/usr/share/java/hdrhistogram.jar
py=python3
export PYTHONDONTWRITEBYTECODE=1 # importing hlog_reader must leave no __pycache__ in the source tree

cat >"$tmp/scen.json" <<'JSON'
{
  "name": "hlog_flash_sale_pause",
  "description": "Flash sale on one Redis, 200 steps/s, the server paused 1.5 s at 2 s: an empty second, then a slow one.",
  "clients": 16,
  "duration_s": 6,
  "seed": 1,
  "rate": 200,
  "lock": { "algorithm": "redis", "ttl_ms": 10000, "wait_ms": 5000 },
  "workload": { "type": "flash_sale", "items": 10, "stock": 1000000, "critical_ms": 1 },
  "faults": [
    { "at_ms": 2000, "type": "pause", "target": "one", "duration_ms": 1500 }
  ],
  "expect": { "violations": 0 }
}
JSON

# One run into $tmp/NAME (locklab starts and stops its own redis-server);
# 0 (PASS) and 1 (FAIL) leave a full run folder, anything else is a failure.
run() {
  local name=$1 rc=0
  shift
  timeout -s INT -k 20 45 "$bin" run "$tmp/scen.json" --out "$tmp/$name" -q "$@" >"$tmp/$name.log" 2>&1 || rc=$?
  if [ "$rc" -gt 1 ]; then
    fail "$name: locklab run $* exited $rc; its output:"
    sed 's/^/         /' "$tmp/$name.log"
    return 1
  fi
  echo "ran: $name (exit $rc): locklab run scen.json $*"
}

# The reader on a run folder must find everything in agreement.
read_ok() {
  local name=$1 out
  if out=$("$py" "$reader" "$tmp/$name" 2>&1); then
    ok "$name: hlog_reader: every .hlog agrees with its .hgrm and report.json"
  else
    fail "$name: hlog_reader found disagreements:"
    sed 's/^/         /' <<<"$out"
  fi
}

runs=()
if run open; then read_ok open; runs+=(open); fi
if run closed --rate 0; then read_ok closed; runs+=(closed); fi

# The runs must have shown what they are for: a second with an acquire
# >= 1 s (the open loop counts from the due time, so the pause always shows)
# and, usually, an empty second (none when the pause began a few ms late
# and let one grant through: a note, not a failure).
if [ "${#runs[@]}" -gt 0 ]; then
  if ! "$py" - "$tmp" "${runs[@]}" <<'PY'; then
import json, sys
tmp, names = sys.argv[1], sys.argv[2:]
empty_any, ok = False, True
for name in names:
    d = json.load(open(f"{tmp}/{name}/report.json"))
    t = d["timeline"]
    empty = [k for k, n in enumerate(t["acquire_count"]) if n == 0]
    slow = [k for k, m in enumerate(t["acquire_max_ms"]) if m is not None and m >= 1000]
    start = d["faults"][0].get("start_s") if d.get("faults") else None
    print(f"ok: {name}: {len(t['acquire_count'])} seconds, acquires per second {t['acquire_count']}, "
          f"none in {empty}, max >= 1 s in {slow}, the pause from {start} s")
    empty_any |= bool(empty)
    if name == "open" and not slow:
        print("FAIL: open: no second with an acquire >= 1 s: the pause did not show")
        ok = False
if not empty_any:
    print("note: no run had a second without a grant this time (the pause began late)")
sys.exit(0 if ok else 1)
PY
    failed=1
  fi
fi

# HdrHistogram's own log processor, when Debian's package is there.
if [ -f "$jar" ] && command -v java >/dev/null; then
  for name in "${runs[@]}"; do
    out=$tmp/$name.proc
    if ! timeout 60 java -cp "$jar" org.HdrHistogram.HistogramLogProcessor \
        -i "$tmp/$name/acquire.hlog" -outputValueUnitRatio 1000 -csv -o "$out" >"$out.log" 2>&1; then
      fail "$name: HistogramLogProcessor could not read acquire.hlog:"
      sed 's/^/         /' "$out.log"
      continue
    fi
    if ! "$py" - "$src/tests/lib" "$tmp/$name" "$out" <<'PY'; then
import csv, json, sys
sys.path.insert(0, sys.argv[1])
import hlog_reader as R
run_dir, out = sys.argv[2], sys.argv[3]
name = run_dir.rstrip("/").rsplit("/", 1)[-1]
bad = []
counts = json.load(open(run_dir + "/report.json"))["timeline"]["acquire_count"]
log = R.read_log(run_dir + "/acquire.hlog")
rows = [r for r in csv.reader(l for l in open(out) if not l.startswith("#"))]
head, rows = rows[0], rows[1:]
col = {c: i for i, c in enumerate(head)}
if len(rows) != len(counts):
    bad.append(f"{len(rows)} CSV rows, report.json has {len(counts)} seconds")
for k, r in enumerate(rows[:len(counts)]):
    # Timestamp is the interval's end: row k is second k.
    if int(r[col["Int_Count"]]) != counts[k]:
        bad.append(f"second {k}: Int_Count {r[col['Int_Count']]}, report.json acquire_count {counts[k]}")
    # Java's percentiles of the interval against this reader's decoding.
    if k < len(log.intervals):
        h = log.intervals[k].histogram
        for c, v in (("Int_50%", h.value_at_percentile(50)), ("Int_90%", h.value_at_percentile(90)),
                     ("Int_Max", h.max_value)):
            if r[col[c]] != "%.3f" % (v / 1000):
                bad.append(f"second {k}: {c} {r[col[c]]}, hlog_reader {v / 1000:.3f}")
# OUT.hgrm (CSV): its total count is its last TotalCount; its lines are
# acquire.hgrm's (Value, Percentile, TotalCount).
theirs = [r for r in csv.reader(l for l in open(out + ".hgrm") if not l.startswith("#"))][1:]
ours = R.read_hgrm(run_dir + "/acquire.hgrm")
total = int(theirs[-1][2]) if theirs else 0
if total != ours.total:
    bad.append(f"{name}.proc.hgrm total count {total}, acquire.hgrm {ours.total}")
mine = [(v, p, str(c)) for v, p, c, _ in ours.lines]
notes = []
whole = log.intervals[0].histogram.copy()
for iv in log.intervals[1:]:
    whole.add(iv.histogram)
ticks = list(whole.percentile_ticks(5))
if len(theirs) != len(mine):
    bad.append(f"{name}.proc.hgrm has {len(theirs)} lines, acquire.hgrm {len(mine)}")
for j, (t, m) in enumerate(zip(theirs, mine)):
    if (t[0], t[2]) != (m[0], m[2]):
        bad.append(f"line {j + 1}: HistogramLogProcessor {','.join(t[:3])}, acquire.hgrm {','.join(m)}")
    elif t[1] != m[1]:
        # Value and count agree; the Percentile texts may be the two
        # roundings to 12 decimals of one double: C's printf rounds its
        # exact binary value, Java's Formatter its shortest decimal form
        # half up (level 99.97802734375: ...437 vs ...438). Anything else
        # is a real difference.
        from decimal import Decimal, ROUND_HALF_UP
        f = ticks[j][1] / 100.0 if j < len(ticks) else None  # the double behind both texts
        java = None if f is None else \
            str(Decimal(repr(f)).quantize(Decimal("1e-12"), rounding=ROUND_HALF_UP))
        if f is not None and "%.12f" % f == m[1] and java == t[1]:
            notes.append(f"line {j + 1}: Percentile {m[1]} in acquire.hgrm (C printf), "
                         f"{t[1]} from HistogramLogProcessor (Java's Formatter), both {f!r} rounded")
        else:
            bad.append(f"line {j + 1}: Percentile {t[1]} from HistogramLogProcessor, {m[1]} in acquire.hgrm")
for n in notes:
    print("note: " + n)
for b in bad:
    print("         " + b)
if not bad:
    print(f"ok: {name}: HistogramLogProcessor: {len(rows)} intervals, Int_Count = acquire_count, "
          f"Int_50%/90%/Max = hlog_reader's, {total} in all, its .hgrm = acquire.hgrm ({len(mine)} lines)")
sys.exit(1 if bad else 0)
PY
      fail "$name: HistogramLogProcessor disagrees (above)"
    fi
  done
else
  echo "skip: HistogramLogProcessor: $jar not installed (apt-get install libhdrhistogram-java)"
fi

# The reader must be able to fail: mutated copies of the open run's
# acquire.hlog. First a re-encoding of every interval unchanged (the
# mutations' encoder is sound: the reader still agrees), then one count
# changed in one second, one sample moved to another bucket in it, one
# non-empty interval dropped, one base64 character changed; and report.json
# with that second's acquire_max_ms one microsecond higher.
if [ -d "$tmp/open" ]; then
  for m in same count move drop flip max; do
    cp -r "$tmp/open" "$tmp/mut-$m"
  done
  if ! "$py" - "$src/tests/lib" "$tmp" <<'PY'; then
import base64, re, struct, sys, zlib
from decimal import Decimal
sys.path.insert(0, sys.argv[1])
import hlog_reader as R
tmp = sys.argv[2]

def leb(n):
    z = 2 * n if n >= 0 else -2 * n - 1  # ZigZag
    out = bytearray()
    for _ in range(8):
        if z < 0x80:
            out.append(z)
            return out
        out.append((z & 0x7F) | 0x80)
        z >>= 7
    out.append(z & 0xFF)  # the 9th byte carries 8 bits
    return out

def encode(h):
    c = h.counts
    last = h.max_index()
    payload, i = bytearray(), 0
    while last is not None and i <= last:
        if c[i]:
            payload += leb(c[i])
            i += 1
        else:
            j = i
            while c[j] == 0:
                j += 1
            payload += leb(-(j - i))
            i = j
    L = h.layout
    raw = struct.pack(">iiiiqqd", 0x1C849313, len(payload), 0, L.digits, L.lowest, L.highest, 1.0) + payload
    z = zlib.compress(raw)
    return base64.b64encode(struct.pack(">ii", 0x1C849314, len(z)) + z).decode()

src = tmp + "/open/acquire.hlog"
lines = open(src).read().splitlines(True)
log = R.read_log(src)
busy = [iv for iv in log.intervals if iv.histogram.total_count > 0]
victim = busy[len(busy) // 2]

def write(name, fn):
    with open(f"{tmp}/mut-{name}/acquire.hlog", "w") as f:
        for n, line in enumerate(lines, 1):
            iv = next((iv for iv in log.intervals if iv.line_no == n), None)
            f.write(line if iv is None else fn(iv, line))

def reencode(iv, h):
    return f"{iv.start_text},{iv.length_text},{iv.max_text},{encode(h)}\n"

write("same", lambda iv, line: reencode(iv, iv.histogram))
def plus_one(iv, line):
    if iv is not victim:
        return line
    h = iv.histogram.copy()
    h.counts[h.max_index()] += 1  # one more sample in its top bucket
    return reencode(iv, h)
write("count", plus_one)
def move_one(iv, line):
    if iv is not victim:
        return line
    h = iv.histogram.copy()
    lo, hi = h.min_index(), h.max_index()
    h.counts[lo] -= 1  # its fastest sample now counted as its slowest
    h.counts[hi] += 1
    return reencode(iv, h)
write("move", move_one)
write("drop", lambda iv, line: "" if iv is victim else line)
def flip(iv, line):
    if iv is not victim:
        return line
    head, b64 = line.rstrip("\n").rsplit(",", 1)
    k = len(b64) // 2
    return f"{head},{b64[:k]}{'A' if b64[k] != 'A' else 'B'}{b64[k + 1:]}\n"
write("flip", flip)
# report.json's max for that second one microsecond more (the text edited
# in place, every other number as written).
k = log.intervals.index(victim)
rep = open(tmp + "/open/report.json").read()
m = re.search(r'"acquire_max_ms": \[([^]]*)\]', rep)
vals = m.group(1).split(",")
vals[k] = " %s" % (Decimal(vals[k].strip()) + Decimal("0.001"))
rep = rep[:m.start(1)] + ",".join(vals).lstrip() + rep[m.end(1):]
open(tmp + "/mut-max/report.json", "w").write(rep)
print(f"made: mutants of open/acquire.hlog at second {victim.start_text} "
      f"({victim.histogram.total_count} acquires): same, count, move, drop, flip; "
      f"of report.json: max (acquire_max_ms[{k}] + 0.001)")
PY
    fail "could not make the mutated copies"
  else
    if out=$("$py" "$reader" "$tmp/mut-same" 2>&1); then
      ok "mut-same: every interval re-encoded unchanged: the reader still agrees"
    else
      fail "mut-same: a faithful re-encoding was rejected:"
      sed 's/^/         /' <<<"$out"
    fi
    for m in count move drop flip max; do
      rc=0
      out=$("$py" "$reader" "$tmp/mut-$m" 2>&1) || rc=$?
      if [ "$rc" -eq 1 ] && grep -q '^DISAGREE ' <<<"$out"; then
        ok "mut-$m: the reader exits 1: $(grep -m1 '^DISAGREE ' <<<"$out" | cut -c10-)"
      else
        fail "mut-$m: the reader exited $rc on a corrupted acquire.hlog; its output:"
        sed 's/^/         /' <<<"$out"
      fi
    done
  fi
fi

if [ "$failed" -ne 0 ]; then
  echo "test_hlog: FAILED"
  exit 1
fi
echo "test_hlog: every .hlog reads back to its .hgrm and report.json"
