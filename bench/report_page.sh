#!/usr/bin/env bash
# report.html of a long run: its size, and how long headless Chromium takes
# to open it, two ways, each against a blank page opened the same way in
# the same round (the peer):
#  - in the browser: a wrapper page loads it in an iframe and reads the
#    time from navigation to its load event plus a layout of the whole
#    page (performance.now(); the report itself has no script);
#  - the whole process: chromium started, the page opened and painted (a
#    screenshot), chromium gone: what a person waits for, start-up
#    included.
#
#   bench/report_page.sh [RUN_DIR] [ROUNDS]
#     RUN_DIR: a finished run's folder; without one, bench/long_run.json runs
#     first (30 minutes; DURATION=S shortens it) into a temporary folder.
#   env: LOCKLAB_BIN, CHROMIUM (default chromium)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${LOCKLAB_BIN:-build/locklab}
chromium=${CHROMIUM:-chromium}
rounds=${2:-5}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
command -v "$chromium" >/dev/null || { echo "no $chromium: apt-get install chromium" >&2; exit 2; }

dir=${1:-}
if [ -z "$dir" ]; then
  [ -x "$bin" ] || { echo "build first: scripts/build.sh" >&2; exit 2; }
  dir=$work/run
  extra=()
  [ -n "${DURATION:-}" ] && extra=(--duration "$DURATION")
  "$bin" run bench/long_run.json --out "$dir" --quiet "${extra[@]}" || [ $? -eq 1 ]
fi
page=$dir/report.html
[ -f "$page" ] || { echo "no $page" >&2; exit 2; }
printf '<!DOCTYPE html><html><head><title>blank</title></head><body></body></html>\n' \
  >"$work/blank.html"

# in-browser milliseconds to load and lay out one page (through a wrapper)
load_ms() {
  cat >"$work/wrap.html" <<HTML
<!DOCTYPE html><html><body><script>
const t0 = performance.now();
function done(f) {
  f.contentDocument.documentElement.scrollHeight; // lays the whole page out
  document.body.setAttribute('data-ms', (performance.now() - t0).toFixed(0));
}
</script><iframe src="file://$1" width="1150" height="3000" onload="done(this)"></iframe></body></html>
HTML
  timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --allow-file-access-from-files \
    --dump-dom "file://$work/wrap.html" 2>/dev/null | grep -o 'data-ms="[0-9]*"' | tr -dc 0-9
  echo
}

# whole-process milliseconds: start, open and paint one page, exit
open_ms() {
  local t0 t1
  t0=$(date +%s%N)
  timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --hide-scrollbars \
    --window-size=1150,3000 --screenshot="$work/shot.png" "file://$1" >/dev/null 2>&1
  t1=$(date +%s%N)
  echo $(((t1 - t0) / 1000000))
}

elapsed=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("%.0f s, %d acquires, %d violations" % (r["elapsed_s"], r["operations"]["acquire"]["count"], r["checker"]["violations"]))' "$dir/report.json")
bytes=$(stat -c %s "$page")
echo "run: $elapsed"
echo "report.html: $bytes bytes ($(python3 -c "print('%.2f' % ($bytes / 1048576))") MiB)"
printf '%-6s %14s %14s %16s %16s\n' round page_load_ms blank_load_ms page_process_ms blank_process_ms
pl=() bl=() pp=() bp=()
for r in $(seq "$rounds"); do
  pl+=("$(load_ms "$page")")
  bl+=("$(load_ms "$work/blank.html")")
  pp+=("$(open_ms "$page")")
  bp+=("$(open_ms "$work/blank.html")")
  printf '%-6s %14s %14s %16s %16s\n' "$r" "${pl[-1]}" "${bl[-1]}" "${pp[-1]}" "${bp[-1]}"
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
echo "median in the browser: report $(median "${pl[@]}") ms, blank page $(median "${bl[@]}") ms"
echo "median whole process:  report $(median "${pp[@]}") ms, blank page $(median "${bp[@]}") ms"
