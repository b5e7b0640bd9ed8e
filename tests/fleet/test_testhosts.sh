#!/usr/bin/env bash
# tests/lib/testhosts.sh makes hosts that are hosts: for 3 of them, each
# answers ssh (the generated ssh_config, key only, its known key only) under
# its own name, with its own PID 1 and few processes, its own /tmp and
# /var/tmp; h1 reaches a Redis on h2 and so does this machine; every
# command lands in its host's log. Then `down` leaves nothing: no process,
# netns, link, address or folder. Also after `up` was SIGKILLed midway,
# after a host's init was killed, after `up` failed (an sshd that exits),
# and for two `up`s at once (as ctest -j2 runs two tests).
#   tests/fleet/test_testhosts.sh SOURCE_DIR
# shellcheck disable=SC2015,SC2317 # A && ok || fail: ok always succeeds; cleanup runs from the trap
set -uo pipefail
src=${1:?usage: test_testhosts.sh SOURCE_DIR}
th="$src/tests/lib/testhosts.sh"
runroot=/run/locklab-testhosts
tmp=$(mktemp -d "${TMPDIR:-/tmp}/locklab-testhosts.XXXXXX") || exit 1
failed=0
dirs=() # every DIR given to up: downed at exit, whatever happened
bg=()   # background PIDs of this script: killed at exit
fail() { echo "FAIL: $*"; failed=1; }
ok() { echo "ok: $*"; }
cleanup() {
  local p d
  for p in "${bg[@]}"; do kill -KILL "$p" 2>/dev/null; done
  for d in "${dirs[@]}"; do "$th" down "$d" 2>/dev/null; done
  if [ "${LOCKLAB_KEEP_TMP:-0}" = 1 ]; then
    echo "$(basename "$0"): LOCKLAB_KEEP_TMP=1: kept $tmp"
  else
    rm -rf -- "$tmp"
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
[ "$(id -u)" = 0 ] || { fail "must run as root (network namespaces, sshd)"; exit 1; }

# on DIR HOST CMD...: one command over ssh with DIR's ssh_config, bounded.
on() {
  local dir=$1
  shift
  timeout 20 ssh -F "$dir/ssh_config" "$@"
}
k_of() { awk '$1 == "k" {print $2}' "$1/state" 2>/dev/null; }
# The host processes a state file names ("PID START" per line), read
# before `down` removes it.
pids_of() { awk '$1 == "init" || $1 == "launcher" {print $2, $3}' "$1/state" 2>/dev/null; }
start_of() { local s; s=$(cat "/proc/$1/stat" 2>/dev/null) || return 1; s=${s##*) }; read -ra f <<<"$s"; echo "${f[19]}"; }
# live PID START: the process exists, is that one, and is not a zombie.
live() {
  [ "$(start_of "$1")" = "$2" ] || return 1
  ! grep -q '^State:.Z' "/proc/$1/status" 2>/dev/null
}

# nothing_left NAME K DIR PIDLIST: after `down`, nothing of claim K.
nothing_left() {
  local name=$1 k=$2 dir=$3 plist=$4 left='' p s
  ip netns list | grep -q "^llh$k-" && left+=" netns:$(ip netns list | grep "^llh$k-" | tr '\n' ' ')"
  ip link show "llbr$k" >/dev/null 2>&1 && left+=" link:llbr$k"
  ip -o link show | grep -q ": llv$k-" && left+=" links:llv$k-*"
  ip -o addr show | grep -qF " 10.231.$k." && left+=" address:10.231.$k.*"
  [ -e "$runroot/$k" ] && left+=" folder:$runroot/$k"
  [ -e "$dir/state" ] && left+=" file:$dir/state"
  [ -e "$dir/id_ed25519" ] && left+=" file:$dir/id_ed25519"
  for p in $(pgrep -f "$runroot/$k/" 2>/dev/null) $(pgrep -f "$dir" 2>/dev/null); do
    left+=" process:$p:$(tr '\0' ' ' 2>/dev/null </proc/"$p"/cmdline | cut -c1-60)"
  done
  while read -r p s; do
    [ -n "$p" ] && live "$p" "$s" && left+=" process:$p"
  done <<<"$plist"
  [ -z "$left" ] && ok "$name: down left nothing (no process, netns, link, address or folder of K=$k)" ||
    fail "$name: down left$left"
}

# down_check NAME DIR: down, which must succeed quietly, then nothing left.
down_check() {
  local name=$1 dir=$2 k plist out rc
  k=$(k_of "$dir")
  plist=$(pids_of "$dir")
  out=$("$th" down "$dir" 2>&1)
  rc=$?
  [ "$rc" = 0 ] && [ -z "$out" ] && ok "$name: down exit 0" || fail "$name: down exit $rc: $out"
  [ -n "$k" ] && nothing_left "$name" "$k" "$dir" "$plist"
}

# --- three hosts --------------------------------------------------------

d="$tmp/three"
dirs+=("$d")
out=$("$th" up "$d" 3 2>"$tmp/three.err")
rc=$?
[ "$rc" = 0 ] && [ "$(wc -l <<<"$out")" = 3 ] && ok "up 3: exit 0, one line per host" ||
  fail "up 3: exit $rc: $out $(cat "$tmp/three.err")"
k=$(k_of "$d")
addr() { echo "10.231.$k.$((10 + $1))"; }
for f in id_ed25519 id_ed25519.pub known_hosts inventory.ini hosts.json ssh_config state; do
  [ -s "$d/$f" ] || fail "up 3: no $d/$f"
done
[ "$(stat -c %a "$d/id_ed25519")" = 600 ] && ok "the client key is mode 600" || fail "id_ed25519 is mode $(stat -c %a "$d/id_ed25519")"
[ "$(grep -c "^h[1-3] ansible_host=10.231.$k.1[1-3] ansible_port=22 ansible_user=root ansible_ssh_private_key_file=$d/id_ed25519$" "$d/inventory.ini")" = 3 ] &&
  ok "inventory.ini: [locklab] h1..h3" || fail "inventory.ini: $(cat "$d/inventory.ini")"
python3 -c 'import json,sys; h=json.load(open(sys.argv[1])); assert [x["name"] for x in h]==["h1","h2","h3"] and all(x["port"]==22 and x["user"]=="root" for x in h), h' \
  "$d/hosts.json" && ok "hosts.json: h1..h3" || fail "hosts.json: $(cat "$d/hosts.json")"

init1=$(tr '\0' ' ' </proc/1/cmdline)
for i in 1 2 3; do
  name=$(on "$d" "h$i" hostname)
  [ "$name" = "h$i" ] && ok "h$i: ssh with ssh_config, hostname h$i" || fail "h$i: hostname '$name'"
  n=$(on "$d" "h$i" 'ps -e --no-headers | wc -l')
  p1=$(on "$d" "h$i" 'tr "\0" " " </proc/1/cmdline')
  [[ $n =~ ^[0-9]+$ ]] && ((n <= 8)) && [[ $p1 == *sshd* ]] && [ "$p1" != "$init1" ] &&
    ok "h$i: $n processes, PID 1 is its sshd, not this machine's init" ||
    fail "h$i: $n processes, PID 1 '$p1'"
done
listen=$(on "$d" h1 ss -Hltn | awk '{print $4}')
[ "$listen" = "$(addr 1):22" ] && ok "h1: sshd listens on $(addr 1):22 only" || fail "h1 listens on: $listen"

# A command's stdin, stdout, stderr and exit status are its own.
got=$(echo in | on "$d" h1 'cat; echo err >&2; exit 7' 2>"$tmp/err")
rc=$?
[ "$rc" = 7 ] && [ "$got" = in ] && [ "$(cat "$tmp/err")" = err ] &&
  ok "h1: stdin, stdout, stderr and the exit status (7) pass through" || fail "h1: rc=$rc out='$got' err='$(cat "$tmp/err")'"

# A file written on h1 is on h1 only; one written here is not on h1.
probe="/var/tmp/locklab-testhosts-probe.$$"
on "$d" h1 "echo h1 > $probe"
[ "$(on "$d" h1 "cat $probe")" = h1 ] && [ ! -e "$probe" ] && on "$d" h2 "test ! -e $probe" &&
  ok "h1's /var/tmp file is on h1, not on this machine or h2" || fail "$probe: seen where it was not written"
echo here >"/tmp/locklab-testhosts-probe.$$"
on "$d" h1 "test ! -e /tmp/locklab-testhosts-probe.$$" && ok "this machine's /tmp file is not on h1" ||
  fail "h1 sees this machine's /tmp"
rm -f "/tmp/locklab-testhosts-probe.$$"

# h1 reaches h2: a Redis on h2's address, pinged from h1 and from here.
if command -v redis-server >/dev/null; then
  on "$d" h2 "echo \$\$; exec redis-server --port 7777 --bind $(addr 2) --protected-mode no --save '' --appendonly no --daemonize no" \
    >"$tmp/redis.out" 2>&1 &
  rssh=$!
  bg+=("$rssh")
  pong=
  for _ in $(seq 50); do
    pong=$(redis-cli -h "$(addr 2)" -p 7777 ping 2>/dev/null) && [ "$pong" = PONG ] && break
    sleep 0.1
  done
  rpid=$(head -1 "$tmp/redis.out")
  [ "$pong" = PONG ] && ok "this machine reaches redis-server on h2 ($(addr 2):7777)" || fail "no PONG from h2: $(tail -2 "$tmp/redis.out")"
  from1=$(on "$d" h1 "redis-cli -h $(addr 2) -p 7777 ping")
  [ "$from1" = PONG ] && ok "h1 reaches redis-server on h2" || fail "h1 -> h2: '$from1'"
  [[ $rpid =~ ^[0-9]+$ ]] && on "$d" h2 "kill $rpid"
  for _ in $(seq 50); do kill -0 "$rssh" 2>/dev/null || break; sleep 0.1; done
  ! kill -0 "$rssh" 2>/dev/null && ! redis-cli -h "$(addr 2)" -p 7777 ping >/dev/null 2>&1 &&
    ok "redis-server stopped by its PID on h2 ($rpid)" || fail "redis-server on h2 still answers after kill $rpid"
else
  fail "redis-server is not installed: h1 -> h2 not checked"
fi

# The command log: every command, timestamped, in order, on its own host.
log1=$("$th" log "$d" 1)
want=(hostname 'ps -e --no-headers' "echo h1 > $probe" "redis-cli -h $(addr 2) -p 7777 ping")
miss=
for w in "${want[@]}"; do grep -qF " $w" <<<"$log1" || miss+=" '$w'"; done
[ -z "$miss" ] && ok "h1's command log lists its commands" || fail "h1's command log lacks$miss: $log1"
bad=$(grep -cvE '^[0-9]{10}\.[0-9]{9} ' <<<"$log1")
sort -c -n <<<"$log1" 2>/dev/null && [ "$bad" = 0 ] && ok "each line is 'SECONDS.NANOSECONDS COMMAND', in order" ||
  fail "h1's command log: $bad lines without a timestamp, or out of order"
grep -qF redis-server <<<"$log1" && fail "h1's log holds h2's redis-server" ||
  { "$th" log "$d" 2 | grep -qF "exec redis-server" && ok "h2's log has its redis-server, h1's has not"; } ||
  fail "h2's log lacks redis-server"
"$th" log "$d" 1 sshd | grep -q "Accepted publickey for root" && ok "h1's sshd log: Accepted publickey for root" ||
  fail "h1's sshd log: $("$th" log "$d" 1 sshd | tail -2)"

# Only the known key, only the client key.
before=$(wc -l <"$runroot/$k/h1/cmd.log")
: >"$tmp/empty_known_hosts"
err=$(on "$d" h1 -o UserKnownHostsFile="$tmp/empty_known_hosts" true 2>&1)
rc=$?
[ "$rc" != 0 ] && grep -q 'Host key verification failed' <<<"$err" &&
  ok "an empty known_hosts: Host key verification failed" || fail "empty known_hosts: rc=$rc $err"
sed -n 2p "$d/known_hosts" | sed "s/^[^ ]*/$(addr 1)/" >"$tmp/wrong_known_hosts" # h2's key under h1's address
err=$(on "$d" h1 -o UserKnownHostsFile="$tmp/wrong_known_hosts" true 2>&1)
rc=$?
[ "$rc" != 0 ] && grep -q 'Host key verification failed' <<<"$err" &&
  ok "h2's key under h1's address: Host key verification failed" || fail "wrong known key: rc=$rc $err"
err=$(on "$d" h1 -o PubkeyAuthentication=no true 2>&1)
rc=$?
[ "$rc" != 0 ] && grep -q 'Permission denied (publickey)' <<<"$err" &&
  ok "without the key: Permission denied (publickey)" || fail "no key: rc=$rc $err"
[ "$(wc -l <"$runroot/$k/h1/cmd.log")" = "$before" ] && ok "a refused login ran no command" ||
  fail "a refused login ran: $(tail -1 "$runroot/$k/h1/cmd.log")"

down_check "up 3" "$d"
out=$("$th" down "$d" 2>&1)
rc=$?
[ "$rc" = 0 ] && [ -z "$out" ] && ok "down again: exit 0, nothing to do" || fail "down again: exit $rc: $out"

# --- up SIGKILLed midway ------------------------------------------------

d="$tmp/killed"
dirs+=("$d")
"$th" up "$d" 3 >"$tmp/killed.out" 2>&1 &
up=$!
bg+=("$up")
for _ in $(seq 1000); do # up to 10 s for the first host's init
  grep -q '^init ' "$d/state" 2>/dev/null && break
  sleep 0.01
done
kill -KILL "$up"
wait "$up" 2>/dev/null
if grep -q '^ready' "$d/state" 2>/dev/null; then
  fail "up finished before it was killed: not midway"
elif grep -q '^init ' "$d/state" 2>/dev/null; then
  ok "up SIGKILLed midway ($(grep -c '^init ' "$d/state") of 3 hosts started)"
else
  fail "up wrote no host in 10 s: $(cat "$tmp/killed.out")"
fi
down_check "up killed" "$d"

# --- a host's init killed -----------------------------------------------

d="$tmp/init"
dirs+=("$d")
out=$("$th" up "$d" 2 2>&1) || fail "up 2: $out"
ipid=$(awk '$1 == "h1" {sub("pid=", "", $4); print $4}' <<<"$out")
kill -KILL "$ipid"
for _ in $(seq 50); do live "$ipid" "$(awk -v p="$ipid" '$1 == "init" && $2 == p {print $3}' "$d/state")" || break; sleep 0.1; done
! on "$d" h1 -o ConnectTimeout=2 true 2>/dev/null && [ "$(on "$d" h2 hostname)" = h2 ] &&
  ok "h1's init killed ($ipid): h1 is gone, h2 answers" || fail "h1's init killed: h1 still answers, or h2 does not"
down_check "init killed" "$d"

# --- up that fails: its sshd exits ---------------------------------------

d="$tmp/failing"
dirs+=("$d")
LOCKLAB_TESTHOSTS_SSHD=/bin/false "$th" up "$d" 2 >"$tmp/failing.out" 2>"$tmp/failing.err"
rc=$?
# which host's failure is seen first, and whether before or after its
# namespaces' init was seen at all, is the race of a program that exits at
# once: one line naming a host either way
[ "$rc" != 0 ] && [ "$(wc -l <"$tmp/failing.err")" = 1 ] && grep -Eq '^testhosts: up: h[12]' "$tmp/failing.err" &&
  ok "an sshd that exits: up exit $rc, one line: $(cat "$tmp/failing.err")" ||
  fail "failing sshd: exit $rc: $(cat "$tmp/failing.out" "$tmp/failing.err")"
[ ! -e "$d/state" ] && [ -z "$(ls -A "$d" 2>/dev/null)" ] && ok "the failed up removed what it made" ||
  fail "the failed up left $(ls -A "$d")"

# --- two ups at once ----------------------------------------------------

"$th" up "$tmp/a" 2 >"$tmp/a.out" 2>&1 &
pa=$!
"$th" up "$tmp/b" 2 >"$tmp/b.out" 2>&1 &
pb=$!
bg+=("$pa" "$pb")
dirs+=("$tmp/a" "$tmp/b")
wait "$pa"
ra=$?
wait "$pb"
rb=$?
ka=$(k_of "$tmp/a")
kb=$(k_of "$tmp/b")
[ "$ra" = 0 ] && [ "$rb" = 0 ] && [ -n "$ka" ] && [ "$ka" != "$kb" ] &&
  ok "two ups at once: both exit 0, K=$ka and K=$kb" || fail "two ups: $ra $rb: $(cat "$tmp/a.out" "$tmp/b.out")"
[ "$(on "$tmp/a" h2 hostname)" = h2 ] && [ "$(on "$tmp/b" h2 hostname)" = h2 ] &&
  ok "both answer, each on its own subnet" || fail "two ups: a host does not answer"
# the hosts of one up have no route to another's: no default route, no forwarding
on "$tmp/a" h1 "timeout 2 bash -c '</dev/tcp/10.231.$kb.11/22'" 2>/dev/null &&
  fail "a host of K=$ka reached a host of K=$kb" || ok "a host of K=$ka cannot reach K=$kb's hosts"
down_check "two ups (a)" "$tmp/a"
down_check "two ups (b)" "$tmp/b"

[ "$failed" = 0 ] && echo "End of test_testhosts: SUCCESS" || echo "End of test_testhosts: FAILURE"
exit "$failed"
