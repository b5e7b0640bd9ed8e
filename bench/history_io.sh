#!/usr/bin/env bash
# The history's write and read speed in each form (bench/history_io.c), on a
# real full-rate run repeated to millions of sections:
#   bench/history_io.sh [SECONDS] [COPIES]
# runs bench/uncontended.json for SECONDS (default 20) with --history-jsonl,
# prints both files' bytes per section, then repeats the history COPIES
# times (default: enough for 2 million sections) and times each writer and
# each reader (history_reader.h, what `locklab check` loads through).
# Targets (issue 26): at most 100 bytes a section, at least 1M sections/s read.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-20}
dir=$(scripts/build.sh)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/locklab-history-io.XXXXXX")
trap 'rm -rf -- "$tmp"' EXIT
"$dir/locklab" run bench/uncontended.json --duration "$seconds" --out "$tmp/run" \
  --history-jsonl -q
sections=$(grep -c '"type":"ok","f":"acquire"' "$tmp/run/history.jsonl")
for f in history.llh history.jsonl; do
  bytes=$(stat -c %s "$tmp/run/$f")
  echo "run: $f $bytes bytes, $sections sections, $((bytes / sections)) B/section"
done
copies=${2:-$(((2000000 + sections - 1) / sections))}
"$dir/bench/history_io" "$tmp/run/history.llh" "$copies" "$tmp"
