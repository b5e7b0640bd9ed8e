#!/usr/bin/env bash
# `locklab hosts` against hosts the test makes (tests/lib/testhosts.sh:
# network namespaces with their own PID and mount namespaces, each with its
# own sshd): every host reached over SSH and asked what it has, and each
# way it can go wrong one line and exit 3 (a host not there, a key it
# refuses, a host key not the known one, a package it lacks) or 2 (an
# inventory with a typo), nothing changed on any host. The probe's command
# is seen in each host's command log; clock offsets read about 0 here
# (one kernel clock under every namespace).
#   tests/fleet/test_hosts_cmd.sh SOURCE_DIR LOCKLAB_BIN
set -uo pipefail
cleanup_more() { [ -n "${hosts:-}" ] && "$th" down "$hosts" >/dev/null 2>&1; }
# shellcheck source=tests/lib/run_test.sh
. "$(dirname "$0")/../lib/run_test.sh" hosts-cmd "$@"
th="$src/tests/lib/testhosts.sh"
hosts="$tmp/hosts"
if ! "$th" up "$hosts" 2 >"$tmp/up.out" 2>&1; then
  fail "testhosts up: $(cat "$tmp/up.out")"
  exit 1
fi
kh="$hosts/known_hosts"
h1=$(sed -n 's/^h1 .*ansible_host=\([0-9.]*\).*/\1/p' "$hosts/inventory.ini")
subnet=${h1%.*}

# hosts_rc NAME ARGS...: run locklab hosts, its output in tmp/NAME.out, status in rc
hosts_rc() {
  local name=$1
  shift
  rc=0
  TMPDIR=$tmp timeout 60 "$bin" hosts "$@" >"$tmp/$name.out" 2>&1 || rc=$?
}
expect_line() { # expect_line NAME WANT_RC REGEX: the status, one error line matching
  local name=$1 want=$2 re=$3 errs
  errs=$(grep -c '^locklab: ' "$tmp/$name.out")
  if [ "$rc" -eq "$want" ] && [ "$errs" -eq 1 ] && grep -Eq "$re" "$tmp/$name.out"; then
    ok "$name: exit $rc: $(grep '^locklab: ' "$tmp/$name.out")"
  else
    fail "$name: exit $rc (want $want), $errs error lines: $(tr '\n' '|' <"$tmp/$name.out")"
  fi
}

# --- every host reached and asked ---------------------------------------------
hosts_rc all --hosts "$hosts/inventory.ini" --ssh-known-hosts "$kh" --needs redis,sentinel,etcd
if [ "$rc" -eq 0 ] && grep -q '^End of hosts: PASS - 2 of 2 hosts reached, fit to run redis,sentinel,etcd$' "$tmp/all.out"; then
  ok "all: $(tail -n 1 "$tmp/all.out")"
else
  fail "all: exit $rc: $(cat "$tmp/all.out")"
fi
for h in h1 h2; do
  row=$(grep "^$h " "$tmp/all.out")
  # the host's own hostname (its UTS namespace), root, and a clock offset
  # within 5 ms of this machine's: one kernel clock here
  if [[ $row =~ ^$h\ +$subnet\.[0-9]+:22\ +root\ +root\ +$h\ +([-+][0-9]+\.[0-9]+)\ ms ]] &&
    awk -v o="${BASH_REMATCH[1]}" 'BEGIN { exit !(o < 5 && o > -5) }'; then
    ok "all: $row"
  else
    fail "all: row of $h: '$row'"
  fi
  if "$th" log "$hosts" "${h#h}" | grep -q 'uname -r'; then
    ok "all: $h's command log has the probe"
  else
    fail "all: $h's command log lacks the probe: $("$th" log "$hosts" "${h#h}" | tail -n 3)"
  fi
done
hosts_rc json --hosts "$hosts/hosts.json" --ssh-known-hosts "$kh"
[ "$rc" -eq 0 ] && ok "json: the JSON inventory too: $(tail -n 1 "$tmp/json.out")" ||
  fail "json: exit $rc: $(cat "$tmp/json.out")"

# --- a host not there: an address of the test's subnet no host has -------------
key="$hosts/id_ed25519"
hosts_rc unreachable --nodes "$h1,$subnet.99" --ssh-key "$key" --ssh-known-hosts "$kh"
expect_line unreachable 3 "^locklab: host $subnet\.99 \(root@$subnet\.99 port 22\): .*(No route to host|timed out|Connection refused)"
grep -q '^End of hosts: INCOMPLETE - 1 of 2 hosts reached$' "$tmp/unreachable.out" &&
  ok "unreachable: the reachable one is still asked" || fail "unreachable: $(tail -n 1 "$tmp/unreachable.out")"

# --- a key the host does not know -----------------------------------------------
ssh-keygen -q -t ed25519 -N '' -f "$tmp/other_key"
hosts_rc key --nodes "$h1" --ssh-key "$tmp/other_key" --ssh-known-hosts "$kh"
expect_line key 3 "^locklab: host $h1 .*Permission denied \(publickey\)"

# --- a host key not the known one, and first use accepted when asked ---------------
: >"$tmp/empty_known"
hosts_rc hostkey --nodes "$h1" --ssh-key "$key" --ssh-known-hosts "$tmp/empty_known"
expect_line hostkey 3 "^locklab: host $h1 .*Host key verification failed"
hosts_rc accept --nodes "$h1" --ssh-key "$key" --ssh-known-hosts "$tmp/empty_known" --ssh-accept-new-host-key
if [ "$rc" -eq 0 ] && [ "$(wc -l <"$tmp/empty_known")" -ge 1 ]; then
  ok "accept: --ssh-accept-new-host-key added $h1's key and reached it"
else
  fail "accept: exit $rc: $(cat "$tmp/accept.out")"
fi
# a changed key stays refused with it
awk '{ print $1, $2, "AAAAC3NzaC1lZDI1NTE5AAAAIOaMaYDHfmu375y6GUK76tSfLlhUjbejF82ok2yBZF3v" }' "$tmp/empty_known" >"$tmp/changed_known"
hosts_rc changed --nodes "$h1" --ssh-key "$key" --ssh-known-hosts "$tmp/changed_known" --ssh-accept-new-host-key
expect_line changed 3 "^locklab: host $h1 .*(Host key verification failed|REMOTE HOST IDENTIFICATION HAS CHANGED)"

# --- a host without a server's package (hidden in h2's own mount namespace) -------
# (etcd is a file of its own; redis-sentinel and redis-server are links to one)
etcd_bin=$(readlink -f "$(command -v etcd)")
ssh -F "$hosts/ssh_config" h2 "mount --bind /dev/null $etcd_bin" ||
  fail "missing: could not hide $etcd_bin on h2"
hosts_rc missing --hosts "$hosts/inventory.ini" --ssh-known-hosts "$kh" --needs redis,etcd
expect_line missing 3 "^locklab: host h2: etcd not found, so it cannot run etcd \(Debian's package etcd-server\)$"
[ -f "$etcd_bin" ] && ok "missing: this machine's $etcd_bin untouched" ||
  fail "missing: $etcd_bin is gone here"

# --- inventories with a typo: exit 2 before any host is reached ------------------
printf '[locklab]\nh1 ansible_host=%s ansible_port=2x\n' "$h1" >"$tmp/typo.ini"
lines_before=$("$th" log "$hosts" 1 | wc -l)
hosts_rc typo --hosts "$tmp/typo.ini" --ssh-known-hosts "$kh"
expect_line typo 2 "^locklab: $tmp/typo.ini:2:"
printf '[{"name": "h1", "adress": "%s"}]\n' "$h1" >"$tmp/typo.json"
hosts_rc typo_json --hosts "$tmp/typo.json" --ssh-known-hosts "$kh"
expect_line typo_json 2 '^locklab: .*typo.json: \$\[0\]\.adress: unknown key'
[ "$("$th" log "$hosts" 1 | wc -l)" -eq "$lines_before" ] &&
  ok "typo: no command reached h1" || fail "typo: h1 ran commands for a refused inventory"

# --- nothing of locklab's left: no ssh master, no control folder ------------------
if pgrep -f "$tmp/locklab-ssh-" >/dev/null; then
  fail "an ssh master is still running: $(pgrep -af "$tmp/locklab-ssh-")"
else
  ok "no ssh master left"
fi
ls -d "$tmp"/locklab-ssh-* >/dev/null 2>&1 && fail "control folders left: $(ls -d "$tmp"/locklab-ssh-*)" ||
  ok "no control folder left"

if ! "$th" down "$hosts" >"$tmp/down.out" 2>&1; then
  fail "testhosts down: $(cat "$tmp/down.out")"
fi
hosts=
exit "$failed"
