#!/usr/bin/env bash
# testhosts.sh - N "hosts" on this one machine, for tests that place lock
# servers on other machines and drive faults over SSH (as Jepsen's control
# node drives its nodes). Each host is a network namespace joined to the
# others by a bridge in the root namespace, with its own PID, mount and UTS
# namespaces, private /tmp and /var/tmp, and its own sshd (key-only root
# login; every command it runs is logged with a timestamp).
#   testhosts.sh up DIR N       make N hosts (1..8); write DIR's files; one line per host
#   testhosts.sh down DIR       remove everything `up` made for DIR (idempotent,
#                               also after a partial `up` or a crash)
#   testhosts.sh log DIR I [sshd]  host I's command log (or its sshd's own log)
# Host I of claim K is hI at 10.231.K.(10+I); the bridge llbrK is 10.231.K.1.
# DIR gets what the caller reads: id_ed25519(.pub), known_hosts,
# inventory.ini, hosts.json, ssh_config, and state (what `down` needs,
# written before each thing is made). The hosts' own files (keys, sshd
# configs, logs) live in /run/locklab-testhosts/K, which every host still
# sees: DIR may be under /tmp, which each host hides behind its own tmpfs.
# If DIR is lost, `down /run/locklab-testhosts/K` works from the copy there.
# /run/locklab-testhosts/last-k (the K claimed last) is all that stays.
# A host's command log has one line per ssh command, "SECONDS.NANOSECONDS
# COMMAND" (the command as sent, its newlines written \n; a login without a
# command is "(login shell)").
# The hosts share this machine's root file system (its binaries, /root,
# /etc): only /tmp and /var/tmp are their own. Run as root.
set -uo pipefail

RUNROOT=/run/locklab-testhosts
NET=10.231
MAX_HOSTS=8
MAX_K=250
READY_SECONDS=10 # up: for every sshd to answer
GONE_TENTHS=50   # down: 5 s for every killed process to be gone
# Tests of `up`'s own failure set it to a program that is no sshd.
SSHD=${LOCKLAB_TESTHOSTS_SSHD:-/usr/sbin/sshd}

self=$(readlink -f "$0")
state= # the state file being written (up) or read (down)
hd=    # RUNROOT/K once claimed

usage() {
  echo "usage: testhosts.sh up DIR N | down DIR | log DIR I [sshd]" >&2
  exit 2
}

# --- small helpers ---------------------------------------------------------

# A process's start time (clock ticks since boot), so a PID the system has
# given to another process since is never signalled as ours.
proc_start() {
  local stat
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  stat=${stat##*) } # the command name may hold spaces and parentheses
  read -ra f <<<"$stat"
  echo "${f[19]}" # field 22 of stat; 20th after the name
}
# alive PID START: that process still exists and is not a zombie.
alive() {
  local now st
  now=$(proc_start "$1") || return 1
  [ "$now" = "$2" ] || return 1
  st=$(sed -n 's/^State:\t\(.\).*/\1/p' "/proc/$1/status" 2>/dev/null)
  [ -n "$st" ] && [ "$st" != Z ]
}
# note WORDS...: one line of state, before the thing it names is made, in
# DIR/state and in RUNROOT/K/state (so `down RUNROOT/K` works if DIR is gone).
note() {
  echo "$*" >>"$state"
  [ -n "$hd" ] && [ -d "$hd" ] && echo "$*" >>"$hd/state"
  return 0
}
json_str() { # a JSON string of $1 (paths here hold no control characters)
  local s=${1//\\/\\\\}
  printf '"%s"' "${s//\"/\\\"}"
}
abs_dir() { # DIR made absolute (it need not exist yet)
  case $1 in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac
}
host_addr() { echo "$NET.$1.$((10 + $2))"; }

# --- up --------------------------------------------------------------------

# fail_up MESSAGE: the one line that says what failed, then everything made
# so far is removed.
fail_up() {
  echo "testhosts: up: $*" >&2
  trap - INT TERM
  down_from "$state" quiet
  exit 1
}
# must COMMAND...: run it; on failure, fail_up with its last line of stderr.
must() {
  local err
  err=$("$@" 2>&1) || fail_up "$* failed: ${err##*$'\n'}"
}

# Is 10.231.K.0/24 (or a name of claim K) in use by anything on this machine?
subnet_in_use() {
  local k=$1
  ip -o -4 addr show | grep -qF " $NET.$k." && return 0
  ip -4 route show | grep -q "^$NET\.$k\." && return 0
  ip link show "llbr$k" >/dev/null 2>&1 && return 0
  ip -o link show | grep -q ": llv$k-" && return 0
  ip netns list | grep -q "^llh$k-" && return 0
  return 1
}
# claim_k: a K whose RUNROOT/K this `up` made (mkdir is atomic, so two
# `up`s at once never share one) and whose subnet nothing uses. The search
# starts after the K claimed last (RUNROOT/last-k, a hint only), so a K just
# released is not taken again at once: a test that has just run `down` and
# looks for what is left of K's names sees its own leftovers, not another
# test's new hosts.
claim_k() {
  local k n last
  [ -d "$RUNROOT" ] || mkdir -m 0755 "$RUNROOT" 2>/dev/null || [ -d "$RUNROOT" ] || return 1
  last=$(cat "$RUNROOT/last-k" 2>/dev/null)
  [[ $last =~ ^[0-9]{1,3}$ ]] || last=0
  for ((n = 1; n <= MAX_K; n++)); do
    k=$(((last + n - 1) % MAX_K + 1))
    subnet_in_use "$k" && continue
    mkdir -m 0755 "$RUNROOT/$k" 2>/dev/null || continue
    if subnet_in_use "$k"; then # made between the look and the claim
      rmdir "$RUNROOT/$k"
      continue
    fi
    echo "$k" >"$RUNROOT/last-k.$$" && mv -f "$RUNROOT/last-k.$$" "$RUNROOT/last-k"
    echo "$k"
    return 0
  done
  return 1
}

# The client key (one per `up`, authorized on every host) and the logging
# wrapper every host's sshd forces: it logs the command, then runs it as
# sshd would have (the user's shell -c, so stdin, stdout, stderr and the
# exit status are the command's own); no command is a login shell.
make_shared_files() {
  local dir=$1 k=$2
  note file "$dir/id_ed25519"
  note file "$dir/id_ed25519.pub"
  must ssh-keygen -q -t ed25519 -N '' -C "locklab-testhosts-$k" -f "$dir/id_ed25519"
  chmod 600 "$dir/id_ed25519" "$dir/id_ed25519.pub"
  cp "$dir/id_ed25519.pub" "$hd/authorized_keys"
  chmod 600 "$hd/authorized_keys"
  cat >"$hd/logcmd.sh" <<'EOF'
# ForceCommand of a testhosts sshd: logcmd.sh LOGFILE
# One line per command: "SECONDS.NANOSECONDS COMMAND", the command as sent
# (so grep -F finds it) but for its newlines, written as \n.
if [ -n "${SSH_ORIGINAL_COMMAND+set}" ]; then
  printf '%s %s\n' "$(date +%s.%N)" "${SSH_ORIGINAL_COMMAND//$'\n'/\\n}" >>"$1"
  exec "${SHELL:-/bin/sh}" -c "$SSH_ORIGINAL_COMMAND"
fi
printf '%s %s\n' "$(date +%s.%N)" "(login shell)" >>"$1"
exec "${SHELL:-/bin/sh}" -l
EOF
}

# Host I's key and sshd config, in RUNROOT/K/hI (sshd re-execs itself per
# connection and re-reads both, so they must stay visible inside the host).
make_host_files() {
  local k=$1 i=$2 h="$hd/h$2"
  mkdir -m 0755 "$h" || fail_up "h$i: cannot make $h"
  must ssh-keygen -q -t ed25519 -N '' -C "h$i" -f "$h/ssh_host_ed25519_key"
  : >"$h/cmd.log"
  cat >"$h/sshd_config" <<EOF
# testhosts h$i: key-only root login on its own address; every command logged
ListenAddress $(host_addr "$k" "$i"):22
HostKey $h/ssh_host_ed25519_key
PidFile none
AuthorizedKeysFile $hd/authorized_keys
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
UseDNS no
PrintMotd no
PrintLastLog no
X11Forwarding no
# parallel clients (Ansible forks, many faults at once) must not be refused
MaxStartups 64:30:128
MaxSessions 64
Subsystem sftp /usr/lib/openssh/sftp-server
ForceCommand /bin/bash $hd/logcmd.sh $h/cmd.log
EOF
}

make_bridge() {
  local k=$1
  note bridge "llbr$k"
  must ip link add "llbr$k" type bridge
  must ip addr add "$NET.$k.1/24" dev "llbr$k"
  must ip link set "llbr$k" up
}

# Host I's network: its namespace, a veth whose inside end is eth0 with
# the host's address, the outside end on the bridge; lo up.
make_host_net() {
  local k=$1 i=$2 ns="llh$1-$2" veth="llv$1-$2"
  note netns "$ns"
  must ip netns add "$ns"
  note veth "$veth"
  must ip link add "$veth" type veth peer name eth0 netns "$ns"
  must ip link set "$veth" master "llbr$k" up
  must ip -n "$ns" addr add "$(host_addr "$k" "$i")/24" dev eth0
  must ip -n "$ns" link set eth0 up
  must ip -n "$ns" link set lo up
}

# first_child PID: PID's first child, waited for up to 5 s.
first_child() {
  local n c
  for ((n = 0; n < 50; n++)); do
    read -r c _ 2>/dev/null <"/proc/$1/task/$1/children" # stderr first: the launcher may be gone
    [ -n "${c:-}" ] && { echo "$c"; return 0; }
    kill -0 "$1" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}

# Host I's processes: `unshare --fork` (the launcher, in the host's netns)
# and its child, the new PID namespace's init, which becomes sshd (see
# host_main). Killing that init ends every process of the host.
start_host() {
  local k=$1 i=$2 ns="llh$1-$2" h="$hd/h$2" launcher init
  ip netns exec "$ns" unshare --pid --mount --uts --fork --mount-proc --propagation private \
    /bin/bash "$self" _host "$h" "h$i" </dev/null >>"$h/sshd.log" 2>&1 &
  launcher=$!
  note launcher "$launcher" "$(proc_start "$launcher")" "$ns"
  init=$(first_child "$launcher") ||
    fail_up "h$i: its namespaces did not start, $(last_words "$h/sshd.log")"
  note init "$init" "$(proc_start "$init")" "$ns"
  echo "$init $(proc_start "$init")" >"$h/init.pid"
}

# last_words LOG: the last line of a host's log, for a one-line reason.
last_words() {
  local l
  l=$(tail -1 "$1" 2>/dev/null)
  [ -n "$l" ] && echo "its log ends: $l" || echo "nothing in its log"
}

# wait_ready K N: every sshd answers with the key this harness gave it
# (ssh-keyscan: no command is run, so the command logs hold only the
# tests' own), all within READY_SECONDS (a try that hangs takes 1 s).
wait_ready() {
  local k=$1 n=$2 i t addr want got init start deadline=$((SECONDS + READY_SECONDS))
  for ((i = 1; i <= n; i++)); do
    addr=$(host_addr "$k" "$i")
    read -r _ want _ <"$hd/h$i/ssh_host_ed25519_key.pub"
    read -r init start <"$hd/h$i/init.pid"
    for ((t = 0; ; t++)); do
      got=$(ssh-keyscan -T 1 -t ed25519 "$addr" 2>/dev/null | awk '{print $3}')
      [ "$got" = "$want" ] && break
      [ -n "$got" ] && fail_up "h$i ($addr): answered with a key that is not its own"
      alive "$init" "$start" || fail_up "h$i ($addr): its sshd exited, $(last_words "$hd/h$i/sshd.log")"
      ((SECONDS < deadline && t < 10 * READY_SECONDS)) ||
        fail_up "h$i ($addr): sshd did not answer in $READY_SECONDS s, $(last_words "$hd/h$i/sshd.log")"
      sleep 0.1
    done
  done
}

# DIR's files for the caller: known_hosts, the Ansible inventory, the same
# as JSON, and an ssh -F config.
write_caller_files() {
  local dir=$1 k=$2 n=$3 i addr key sep=
  for f in known_hosts inventory.ini hosts.json ssh_config; do note file "$dir/$f"; done
  key="$dir/id_ed25519"
  : >"$dir/known_hosts"
  {
    echo "[locklab]"
  } >"$dir/inventory.ini"
  echo "[" >"$dir/hosts.json"
  : >"$dir/ssh_config"
  for ((i = 1; i <= n; i++)); do
    addr=$(host_addr "$k" "$i")
    echo "$addr $(cut -d' ' -f1,2 "$hd/h$i/ssh_host_ed25519_key.pub")" >>"$dir/known_hosts"
    echo "h$i ansible_host=$addr ansible_port=22 ansible_user=root ansible_ssh_private_key_file=$key" >>"$dir/inventory.ini"
    printf '%s  {"name": "h%d", "address": "%s", "port": 22, "user": "root", "key": %s}' \
      "$sep" "$i" "$addr" "$(json_str "$key")" >>"$dir/hosts.json"
    sep=$',\n'
    cat >>"$dir/ssh_config" <<EOF
Host h$i $addr
  HostName $addr
  User root
  Port 22
  IdentityFile $key
  IdentitiesOnly yes
  UserKnownHostsFile $dir/known_hosts
  GlobalKnownHostsFile /dev/null
  StrictHostKeyChecking yes
  BatchMode yes
  ConnectTimeout 5
EOF
  done
  printf '\n]\n' >>"$dir/hosts.json"
  # Ansible's ssh must hold the hosts to the same keys.
  printf '\n[locklab:vars]\nansible_ssh_common_args=%s\n' \
    "'-o UserKnownHostsFile=$dir/known_hosts -o StrictHostKeyChecking=yes -o GlobalKnownHostsFile=/dev/null'" \
    >>"$dir/inventory.ini"
}

cmd_up() {
  local dir n k i init
  dir=$(abs_dir "$1")
  n=$2
  { [[ $n =~ ^[1-9]$ ]] && ((n <= MAX_HOSTS)); } || { echo "testhosts: up: N must be 1..$MAX_HOSTS, not '$n'" >&2; exit 2; }
  [ "$(id -u)" = 0 ] || { echo "testhosts: up: must run as root" >&2; exit 1; }
  [ -e "$dir/state" ] && { echo "testhosts: up: $dir already has hosts (testhosts.sh down $dir first)" >&2; exit 1; }
  if [ ! -d "$dir" ]; then
    mkdir -p "$dir" || exit 1
    state="$dir/state"
    note madedir "$dir"
  fi
  state="$dir/state"
  note file "$state" # so that `down RUNROOT/K` removes it too
  trap 'fail_up "interrupted"' INT TERM
  k=$(claim_k) || fail_up "no free subnet $NET.K.0/24 (K 1..$MAX_K) or cannot make $RUNROOT"
  hd="$RUNROOT/$k"
  # the claim is made: from here on, `down` removes RUNROOT/K
  note k "$k"
  note hd "$hd"
  echo "$dir" >"$hd/owner"
  cp "$state" "$hd/state"
  make_shared_files "$dir" "$k"
  for ((i = 1; i <= n; i++)); do make_host_files "$k" "$i"; done
  make_bridge "$k"
  for ((i = 1; i <= n; i++)); do
    make_host_net "$k" "$i"
    start_host "$k" "$i"
  done
  write_caller_files "$dir" "$k" "$n"
  wait_ready "$k" "$n"
  note ready "$n"
  trap - INT TERM
  for ((i = 1; i <= n; i++)); do
    read -r init _ <"$hd/h$i/init.pid"
    echo "h$i $(host_addr "$k" "$i") netns=llh$k-$i pid=$init"
  done
}

# --- inside a host ---------------------------------------------------------

# _host HOSTDIR NAME: runs as PID 1 of the host's new PID namespace, in its
# own mount and UTS namespaces: its name, its private /tmp and /var/tmp,
# then sshd in its place (PID 1 reaps the orphans of every session).
host_main() {
  hostname "$2" || exit 1
  mount -t tmpfs -o mode=1777 "tmpfs-$2" /tmp || exit 1
  mount -t tmpfs -o mode=1777 "tmpfs-$2" /var/tmp || exit 1
  [ -d /run/sshd ] || mkdir -m 0755 /run/sshd # sshd's privilege-separation root (Debian's)
  exec "$SSHD" -D -e -f "$1/sshd_config"
}

# --- down ------------------------------------------------------------------

# Names read back from a state file are held to the shapes `up` writes, so
# a damaged file can never name another interface, namespace or folder.
valid() {
  case $1 in
  bridge) [[ $2 =~ ^llbr[0-9]{1,3}$ ]] ;;
  netns) [[ $2 =~ ^llh[0-9]{1,3}-[0-9]$ ]] ;;
  veth) [[ $2 =~ ^llv[0-9]{1,3}-[0-9]$ ]] ;;
  hd) [[ $2 =~ ^$RUNROOT/[0-9]{1,3}$ ]] ;;
  file) [[ ${2##*/} =~ ^(id_ed25519|id_ed25519.pub|known_hosts|inventory.ini|hosts.json|ssh_config|state)$ ]] ;;
  pid) [[ $2 =~ ^[0-9]+$ ]] && [ "$2" -gt 1 ] ;;
  esac
}

# down_from STATE [quiet]: undo what STATE lists, whatever of it exists.
down_from() {
  local st=$1 quiet=${2:-} key a b c
  local -a pids=() starts=() kinds=() nss=() veths=() bridges=() files=() hds=() madedirs=()
  [ -f "$st" ] || return 0
  while read -r key a b c; do
    case $key in
    launcher | init) valid pid "$a" && pids+=("$a") && starts+=("$b") && kinds+=("$key") ;;
    netns) valid netns "$a" && nss+=("$a") ;;
    veth) valid veth "$a" && veths+=("$a") ;;
    bridge) valid bridge "$a" && bridges+=("$a") ;;
    hd) valid hd "$a" && hds+=("$a") ;;
    file) valid file "$a" && files+=("$a") ;;
    madedir) madedirs+=("$a") ;;
    esac
  done <"$st"
  : "$c" # the netns on pid lines is for people reading the file
  kill_hosts
  local ns v br h f
  for ns in "${nss[@]}"; do ip netns del "$ns" 2>/dev/null; done
  for v in "${veths[@]}"; do ip link del "$v" 2>/dev/null; done # gone with its peer's netns, usually
  for br in "${bridges[@]}"; do ip link del "$br" 2>/dev/null; done
  # RUNROOT/K is the claim on K's names and subnet: released last, and only
  # once the rest is gone, so no other `up` takes K while any of it lives
  # (and a `down` that failed can be run again from the same state).
  check_gone "$quiet" || return 1
  for h in "${hds[@]}"; do
    rm -rf -- "$h" || { [ -n "$quiet" ] || echo "testhosts: down: cannot remove $h" >&2; return 1; }
  done
  for f in "${files[@]}"; do rm -f -- "$f"; done
  rm -f -- "$st"
  for f in "${madedirs[@]}"; do rmdir -- "$f" 2>/dev/null; done
  return 0
}

# kill_hosts: SIGKILL each recorded init (which ends its whole PID
# namespace; its launcher, left with no child, exits), then anything still
# in the hosts' network namespaces (a launcher, or a host whose init a
# crashed `up` never wrote down: found by namespace, `ip netns pids`, so
# only ours), and wait, bounded, until none is left.
kill_hosts() {
  local i p t left
  for i in "${!pids[@]}"; do
    [ "${kinds[$i]}" = init ] && alive "${pids[$i]}" "${starts[$i]}" && kill -KILL "${pids[$i]}" 2>/dev/null
  done
  for ((t = 0; t <= GONE_TENTHS; t++)); do
    left=''
    for i in "${!pids[@]}"; do
      alive "${pids[$i]}" "${starts[$i]}" && left+=" ${pids[$i]}"
    done
    for p in $(netns_pids); do # a launcher gets 0.2 s to reap its init and go
      ((t >= 2)) && kill -KILL "$p" 2>/dev/null
      left+=" $p"
    done
    [ -z "$left" ] && return 0
    sleep 0.1
  done
}
netns_pids() { # the live processes in the recorded namespaces
  local ns p st
  for ns in "${nss[@]}"; do
    ip netns list 2>/dev/null | grep -q "^$ns\b" || continue
    for p in $(ip netns pids "$ns" 2>/dev/null); do
      st=$(sed -n 's/^State:\t\(.\).*/\1/p' "/proc/$p/status" 2>/dev/null)
      [ -n "$st" ] && [ "$st" != Z ] && echo "$p"
    done
  done
}

# check_gone: say what is left (a process, namespace, link or address),
# exit status 1 if anything is.
check_gone() {
  local left='' i ns v br
  for i in "${!pids[@]}"; do
    alive "${pids[$i]}" "${starts[$i]}" && left+=" process ${pids[$i]}"
  done
  for ns in "${nss[@]}"; do ip netns list | grep -q "^$ns\b" && left+=" netns $ns"; done
  for v in "${veths[@]}"; do ip link show "$v" >/dev/null 2>&1 && left+=" link $v"; done
  for br in "${bridges[@]}"; do
    ip link show "$br" >/dev/null 2>&1 && left+=" link $br"
    ip -o -4 addr show | grep -qF " $NET.${br#llbr}." && left+=" address $NET.${br#llbr}.*"
  done
  [ -z "$left" ] && return 0
  [ -n "$1" ] || echo "testhosts: down: left:$left" >&2
  return 1
}

cmd_down() {
  local dir
  dir=$(abs_dir "$1")
  down_from "$dir/state"
}

# --- log -------------------------------------------------------------------

cmd_log() {
  local dir k h
  dir=$(abs_dir "$1")
  [[ $2 =~ ^[1-9]$ ]] || usage
  k=$(awk '$1 == "k" {print $2}' "$dir/state" 2>/dev/null)
  [ -n "$k" ] || { echo "testhosts: log: no hosts in $dir" >&2; exit 1; }
  h="$RUNROOT/$k/h$2"
  [ -d "$h" ] || { echo "testhosts: log: no host h$2 in $dir" >&2; exit 1; }
  case ${3:-cmd} in
  cmd) cat "$h/cmd.log" ;;
  sshd) cat "$h/sshd.log" ;;
  *) usage ;;
  esac
}

case ${1:-} in
up) [ $# = 3 ] || usage; cmd_up "$2" "$3" ;;
down) [ $# = 2 ] || usage; cmd_down "$2" ;;
log) [ $# = 3 ] || [ $# = 4 ] || usage; cmd_log "$2" "$3" "${4:-}" ;;
_host) host_main "$2" "$3" ;;
*) usage ;;
esac
