#!/usr/bin/env bash
# --metrics scraped by a real Prometheus (Debian's prometheus package, its
# binary run here on loopback with a config of the test's own, stopped by
# its PID): a 5 s flash sale on one Redis paused 1.5 s at 2 s, served with
# --metrics-linger 2 so that a scrape comes after the clients have left.
# Then Prometheus's HTTP API must give report.json's figures: the acquire
# counter's last value equal to counters.acquire_ok (and, while the clients
# ran, behind it by at most the acquires granted from that scrape's second
# on: "within one scrape interval"), the latency histogram's count, the
# steps, releases and the witness's entries; the pause's gauge 1 in every
# scrape inside its window and 0 in every one outside it. Before that, the
# option's refusals: a bad HOST:PORT exits 2, a port in use (Prometheus's
# own) exits 3 with nothing started; while the run goes, what the endpoint
# answers curl (the format each Accept header gets, 404, 405); and after,
# the port is free again.
#   tests/runs/test_metrics.sh SOURCE_DIR LOCKLAB_BIN
set -euo pipefail
prom_pid=
# shellcheck disable=SC2317 # run by run_test.sh's clean-up
cleanup_more() {
  [ -n "$prom_pid" ] && kill "$prom_pid" 2>/dev/null && wait "$prom_pid" 2>/dev/null
  return 0
}
# shellcheck source=tests/lib/run_test.sh
. "$(dirname "$0")/../lib/run_test.sh" metrics "$@"
py=python3
prometheus=${PROMETHEUS:-/usr/bin/prometheus}
[ -x "$prometheus" ] || { echo "test_metrics: needs $prometheus (apt-get install prometheus)" >&2; exit 1; }

cat >"$tmp/scen.json" <<'JSON'
{
  "name": "metrics_pause",
  "description": "Flash sale on one Redis, its server paused 1.5 s at 2 s: the fault's gauge on Prometheus's side.",
  "clients": 8,
  "duration_s": 5,
  "seed": 1,
  "lock": { "algorithm": "redis", "ttl_ms": 10000, "wait_ms": 5000 },
  "workload": { "type": "flash_sale", "items": 4, "stock": 1000000, "critical_ms": 1 },
  "faults": [ { "at_ms": 2000, "type": "pause", "target": "one", "duration_ms": 1500 } ],
  "expect": { "violations": 0 }
}
JSON

read -r mport pport <<<"$("$py" -c 'import socket
ss=[socket.socket() for _ in range(2)]
[s.bind(("127.0.0.1", 0)) for s in ss]
print(" ".join(str(s.getsockname()[1]) for s in ss))')"

# 1. Refusals, before anything starts.
refused() { # WANT_RC SAYS WHAT ARGS...: that exit code, one line on stderr saying SAYS, no run folder
  local want=$1 says=$2 what=$3 rc=0
  shift 3
  "$bin" run "$tmp/scen.json" --out "$tmp/refused" "$@" >"$tmp/refused.log" 2>&1 || rc=$?
  if [ "$rc" -eq "$want" ] && [ "$(wc -l <"$tmp/refused.log")" -eq 1 ] && [ ! -e "$tmp/refused" ] &&
    grep -qF -- "$says" "$tmp/refused.log"; then
    ok "$what: exit $rc, nothing started: $(cat "$tmp/refused.log")"
  else
    fail "$what: want exit $want, one line saying \"$says\" and no run folder; got exit $rc: $(cat "$tmp/refused.log")"
  fi
}
refused 2 'expected HOST:PORT, got "127.0.0.1"' "--metrics without a port" --metrics 127.0.0.1
refused 2 "expected a port in 1..65535" "--metrics with port 0" --metrics 127.0.0.1:0
refused 2 "an IPv6 address goes in brackets: [::1]:9464" "--metrics with an IPv6 address out of brackets" \
  --metrics ::1:9464
refused 2 "--metrics-linger needs --metrics HOST:PORT" "--metrics-linger without --metrics" --metrics-linger 1

# 2. Prometheus, scraping every second an endpoint not there yet.
cat >"$tmp/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: locklab
    static_configs:
      - targets: ['127.0.0.1:$mport']
EOF
"$prometheus" --config.file="$tmp/prometheus.yml" --storage.tsdb.path="$tmp/tsdb" \
  --web.listen-address="127.0.0.1:$pport" >"$tmp/prometheus.log" 2>&1 &
prom_pid=$!
api="http://127.0.0.1:$pport/api/v1"
# Its first scrape comes once its target discovery has settled (about 5 s):
# the run starts after it, so that every second of the run is scraped.
scraped=0
for _ in $(seq 300); do
  if curl -sf "$api/query?query=up" 2>/dev/null | grep -q '"job":"locklab"'; then scraped=1; break; fi
  sleep 0.1
done
[ $scraped = 1 ] || { fail "Prometheus never scraped 127.0.0.1:$mport: $(tail -3 "$tmp/prometheus.log")"; exit 1; }

refused 3 "--metrics: cannot listen on 127.0.0.1:$pport: Address already in use" \
  "--metrics on a port in use (Prometheus's own)" --metrics "127.0.0.1:$pport"

# 3. The run, scraped; meanwhile what the endpoint answers curl.
timeout -s INT -k 20 60 "$bin" run "$tmp/scen.json" --out "$tmp/run" -q --metrics "127.0.0.1:$mport" \
  --metrics-linger 2 >"$tmp/run.log" 2>&1 &
pid=$!
url="http://127.0.0.1:$mport"
# the endpoint listens before the servers start; the run's figures come
# once its clients are set up
for _ in $(seq 200); do curl -sf "$url/metrics" 2>/dev/null | grep -q '^locklab_run_info' && break; sleep 0.05; done
answer() { # URL CURL-ARGS...: "STATUS CONTENT-TYPE LAST-LINE-OF-BODY"
  local u=$1
  shift
  curl -s -o "$tmp/body" -w '%{http_code} %{content_type}' "$@" "$u" || true
  printf ' %s' "$(tail -n 1 "$tmp/body" 2>/dev/null)"
}
om='application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1'
expect_answer() { # WHAT WANT URL CURL-ARGS...
  local what=$1 want=$2 got
  shift 2
  got=$(answer "$@")
  # shellcheck disable=SC2053 # want is a pattern
  if [[ $got == $want ]]; then ok "$what: $got"; else fail "$what: got \"$got\", want \"$want\""; fi
}
expect_answer "Prometheus 2.42's Accept gets OpenMetrics, ended by # EOF" \
  "200 application/openmetrics-text; version=1.0.0; charset=utf-8 # EOF" "$url/metrics" -H "Accept: $om"
expect_answer "curl's */* gets the 0.0.4 text, no # EOF" \
  "200 text/plain; version=0.0.4; charset=utf-8 locklab_fault_active{*kind=\"pause\",target=\"one\"} [01]" "$url/metrics"
# Prometheus's own linter, on the 0.0.4 text (it reads no OpenMetrics)
promtool=$(dirname "$prometheus")/promtool
if [ -x "$promtool" ]; then
  if lint=$(curl -s "$url/metrics" | "$promtool" check metrics 2>&1) && [ -z "$lint" ]; then
    ok "promtool check metrics: the 0.0.4 text parses and lints clean"
  else
    fail "promtool check metrics: $lint"
  fi
fi
expect_answer "another path is not found" "404 text/plain; charset=utf-8 locklab serves /metrics only" "$url/"
expect_answer "a POST is refused" "405 text/plain; charset=utf-8 GET /metrics only" "$url/metrics" -X POST
rc=0
wait "$pid" || rc=$?
pid=
if [ $rc -ne 0 ]; then
  fail "locklab run --metrics exited $rc: $(cat "$tmp/run.log")"
  exit 1
fi
ok "ran: locklab run scen.json --metrics 127.0.0.1:$mport --metrics-linger 2 (exit 0)"
# Listened on again as any server would (SO_REUSEADDR: the scraper's closed
# connections may wait in TIME_WAIT); refused while a socket listens there.
if "$py" -c 'import socket,sys
s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen()' "$mport" 2>/dev/null; then
  ok "the metrics port is free once locklab has exited"
else
  fail "127.0.0.1:$mport still bound after locklab exited"
fi

# Each series over the last minute, as Prometheus stored it (one sample
# per scrape), into a file per query for the checker below.
for q in 'locklab_acquires_total{outcome="ok"}' 'locklab_clients_running' 'locklab_steps_total' \
  'locklab_releases_total{outcome="ok"}' 'locklab_concurrent_entries_total' \
  'locklab_acquire_latency_seconds_count' 'locklab_acquire_latency_seconds_bucket{le="+Inf"}' \
  'locklab_elapsed_seconds' 'locklab_fault_active{kind="pause"}' 'locklab_run_info'; do
  name=$(tr -c 'a-z_\n' '_' <<<"${q%%\{*}")
  curl -sfG "$api/query" --data-urlencode "query=${q}[2m]" >"$tmp/q.$name.json" ||
    fail "Prometheus's API refused $q"
done

if "$py" - "$tmp" <<'EOF'; then
import json, math, sys
tmp = sys.argv[1]
r = json.load(open(tmp + "/run/report.json"))
start = r["start_wall_ns"] / 1e9
bad = []

def series(name):
    res = json.load(open("%s/q.%s.json" % (tmp, name)))["data"]["result"]
    assert len(res) == 1, "%s: %d series" % (name, len(res))
    return [(float(t), float(v)) for t, v in res[0]["values"]]

def last(name):
    return series(name)[-1][1]

acq = series("locklab_acquires_total")
running = dict(series("locklab_clients_running"))
want = r["counters"]["acquire_ok"]
print("   report.json counters.acquire_ok %d; Prometheus's last locklab_acquires_total{outcome=\"ok\"} %d (%d samples)"
      % (want, acq[-1][1], len(acq)))
if acq[-1][1] != want:
    bad.append("last acquire count %d, report.json %d" % (acq[-1][1], want))
after = [v for t, v in acq if running.get(t) == 0]
if not after or after[-1] != want:
    bad.append("no scrape after the clients left gave %d: %s" % (want, after))
# The last scrape while the clients ran: behind report.json by at most the
# acquires granted from its second on (timeline.acquire_count, per second).
during = [(t, v) for t, v in acq if running.get(t, 0) > 0]
if len(during) < 3:
    bad.append("only %d scrapes while the clients ran" % len(during))
else:
    t, v = during[-1]
    s = max(0, int(math.floor(t - start)))
    bound = sum(r["timeline"]["acquire_count"][s:])
    print("   last scrape while running at %.2f s: %d, %d behind; granted from second %d on: %d"
          % (t - start, v, want - v, s, bound))
    if not 0 <= want - v <= bound:
        bad.append("the last scrape while running (%d at %.2f s) is not within %d of %d" % (v, t - start, bound, want))
for name, field in [("locklab_steps_total", r["counters"]["steps"]),
                    ("locklab_releases_total", r["counters"]["release_ok"]),
                    ("locklab_concurrent_entries_total", r["checker"]["witness_concurrent_entries"]),
                    ("locklab_acquire_latency_seconds_count", r["operations"]["acquire"]["count"]),
                    ("locklab_acquire_latency_seconds_bucket", r["operations"]["acquire"]["count"])]:
    if last(name) != field:
        bad.append("%s last %s, report.json %s" % (name, last(name), field))
if abs(last("locklab_elapsed_seconds") - r["elapsed_s"]) > 0.0005:
    bad.append("elapsed %s, report.json %s" % (last("locklab_elapsed_seconds"), r["elapsed_s"]))
info = json.load(open(tmp + "/q.locklab_run_info.json"))["data"]["result"][0]["metric"]
if (info["scenario"], info["algorithm"], info["version"]) != ("metrics_pause", "redis", r["locklab"]):
    bad.append("run_info %s" % info)
# The pause's gauge: 1 in the scrapes inside its window, 0 outside. A
# sample is stamped when its scrape began, a little before it was read.
f = r["faults"][0]
on, off = start + f["start_s"], start + f["end_s"]
slack = 0.5  # a scrape on a busy machine reads a while after it is stamped
gauge = series("locklab_fault_active")
ones = [t - start for t, v in gauge if v == 1]
print("   pause window %.3f..%.3f s; scrapes with the gauge at 1: %s" % (f["start_s"], f["end_s"], ["%.2f" % x for x in ones]))
if not ones:
    bad.append("the pause's gauge was never 1")
for t, v in gauge:
    inside = on - slack <= t <= off
    outside = t < on or t > off - slack
    if (v == 1 and not inside) or (v == 0 and not outside):
        bad.append("gauge %d at %.3f s, window %.3f..%.3f s" % (v, t - start, f["start_s"], f["end_s"]))
for b in bad:
    print("   " + b)
sys.exit(1 if bad else 0)
EOF
  ok "Prometheus's figures agree with report.json"
else
  fail "Prometheus's figures and report.json differ"
fi
exit $failed
