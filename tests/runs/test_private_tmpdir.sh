#!/usr/bin/env bash
# PostgreSQL and pgbouncer under a private TMPDIR (mktemp -d: mode 0700,
# which the postgres user they run as cannot pass through): runs of
# postgres-advisory, alone and behind pgbouncer, pass with TMPDIR set to
# one. What the postgres user must reach is in the run's shared folder,
# /var/tmp/locklab-UID/<16 hex digits> (sim/fleet/cluster.h), seen while
# the run goes: the servers' folders, PostgreSQL's socket (a path under
# 107 bytes), the run folder's links to them. Once the run has ended the
# shared folder is gone, nothing orphaned is left in the user's folder, no
# run folder is left in TMPDIR, and the servers' logs were kept through
# the links.
#   tests/runs/test_private_tmpdir.sh SOURCE_DIR LOCKLAB_BIN
set -uo pipefail
# shellcheck source=tests/lib/run_test.sh
. "$(dirname "$0")/../lib/run_test.sh" private-tmpdir "$@"

base=/var/tmp
[ -d "$base" ] || base=/tmp
user_dir=$base/locklab-$(id -u)
private=$(mktemp -d "$tmp/private.XXXXXX") || exit 1
[ "$(stat -c %a "$private")" = 700 ] && ok "TMPDIR $private is private (0700)" ||
  fail "mktemp -d made $private $(stat -c %a "$private"), not 0700"

# The user's folder holds only live runs' shared folders: one whose owner
# file can be locked has no owner left, a leak.
orphans() {
  local d out=""
  for d in "$user_dir"/*; do
    [ -e "$d" ] || continue
    if [ ! -e "$d/owner.lock" ] || flock -n "$d/owner.lock" true 2>/dev/null; then
      out+=" $d"
    fi
  done
  echo "$out"
}

# case_run NAME ARGS...: run locklab with TMPDIR=$private, look at the
# shared folder while it runs, then at what is left.
case_run() {
  local name=$1
  shift
  local out="$tmp/out-$name" shared="" sock="" links=0 i
  TMPDIR=$private "$bin" run "$@" --quiet --out "$out" >"$tmp/$name.log" 2>&1 &
  pid=$!
  for i in $(seq 600); do # up to 60 s for PostgreSQL to listen
    local l
    for l in "$private"/locklab-*/postgres-* "$private"/locklab-*/pgbouncer-*; do
      [ -L "$l" ] || continue
      shared=$(dirname "$(readlink "$l")")
    done
    [ -n "$shared" ] && sock=$(ls "$shared"/postgres-*/.s.PGSQL.[0-9]* 2>/dev/null | grep -v "\.lock$" | head -1)
    [ -n "$sock" ] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  links=$(find "$private" -maxdepth 2 -type l 2>/dev/null | wc -l)
  wait "$pid"
  local rc=$?
  pid=
  [ "$rc" -eq 0 ] && ok "$name: exit 0" || fail "$name: exit $rc ($(tail -3 "$tmp/$name.log"))"
  [[ $shared == "$user_dir"/[0-9a-f]* ]] && ok "$name: servers' folders in $shared" ||
    fail "$name: no shared folder under $user_dir seen (\"$shared\")"
  [ "$links" -ge 1 ] && ok "$name: the run folder links to them ($links)" ||
    fail "$name: no link from the run folder to the servers' folders"
  if [ -n "$sock" ] && [ "${#sock}" -lt 107 ]; then
    ok "$name: PostgreSQL's socket $sock (${#sock} bytes)"
  else
    fail "$name: PostgreSQL's socket \"$sock\" missing or 107 bytes or more"
  fi
  [ -n "$shared" ] && [ ! -e "$shared" ] && ok "$name: $shared removed" ||
    fail "$name: $shared left: $(ls -A "$shared" 2>&1 | tr '\n' ' ')"
  local left
  left=$(orphans)
  [ -z "$left" ] && ok "$name: nothing orphaned in $user_dir" || fail "$name: left in $user_dir:$left"
  [ -z "$(ls -A "$private")" ] && ok "$name: nothing left in TMPDIR" ||
    fail "$name: left in TMPDIR: $(ls -A "$private" | tr '\n' ' ')"
  [ -s "$out/servers/pg-1.log" ] && ok "$name: PostgreSQL's log kept" ||
    fail "$name: no $out/servers/pg-1.log ($(ls "$out/servers" 2>&1 | tr '\n' ' '))"
  [ "$(stat -c %a "$user_dir")" = 711 ] && ok "$name: $user_dir is 0711" ||
    fail "$name: $user_dir is $(stat -c %a "$user_dir"), not 0711"
}

cat >"$tmp/pgbouncer.json" <<'JSON'
{ "name": "private_tmpdir_pgbouncer", "clients": 4, "duration_s": 3, "seed": 1,
  "lock": { "algorithm": "postgres-advisory", "ttl_ms": 2000, "wait_ms": 5000,
            "postgres": { "pooler": "session" } },
  "workload": { "type": "flash_sale", "items": 2, "stock": 100000, "critical_ms": 5 } }
JSON

case_run advisory scenarios/flash_sale.json --algorithm postgres-advisory --duration 3
case_run pgbouncer "$tmp/pgbouncer.json"
exit $failed
