# shellcheck shell=bash disable=SC2034 # src, bin, tmp, pid and failed are the sourcing script's
# run_test.sh - what a tests/*/*.sh script shares, sourced first:
# SOURCE_DIR and LOCKLAB_BIN from its arguments (src, bin; the working
# folder becomes src), a temporary folder of its own (tmp, named after
# NAME, removed at exit unless LOCKLAB_KEEP_TMP=1, which says where it
# stays), the locklab it runs in the background (pid: killed by that PID
# at exit), and its ok/fail lines (failed: 1 once one failed, the script's
# exit status). A script with more to clean at exit defines cleanup_more
# before sourcing this; one whose locklab writes into tmp as it stops sets
# stop_gently=1 (Ctrl-C first, up to 30 s to finish, then the kill); one
# with more arguments names them in more_args
# (its usage line shows them, each must be given, and it reads them as $3
# on once this has checked them: nothing is made before).
#   . "$(dirname "$0")/../lib/run_test.sh" NAME "$@"
test_name=$1
shift
usage="usage: $(basename "$0") SOURCE_DIR LOCKLAB_BIN${more_args:+ $more_args}"
read -ra more_names <<<"${more_args:-}"
for ((arg = 1; arg <= 2 + ${#more_names[@]}; arg++)); do
  [ -n "${!arg:-}" ] || { echo "$usage" >&2; exit 2; }
done
src=$1
bin=$2
cd "$src" || exit 1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/locklab-$test_name.XXXXXX") || exit 1
pid=
failed=0
fail() { echo "FAIL: $*"; failed=1; }
ok() { echo "ok: $*"; }
cleanup() {
  if [ -n "$pid" ] && [ "${stop_gently:-0}" = 1 ]; then
    kill -INT "$pid" 2>/dev/null
    for _ in $(seq 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  fi
  [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  declare -F cleanup_more >/dev/null && cleanup_more
  if [ "${LOCKLAB_KEEP_TMP:-0}" = 1 ]; then
    echo "$(basename "$0"): LOCKLAB_KEEP_TMP=1: kept $tmp"
  else
    rm -rf -- "$tmp"
  fi
}
trap cleanup EXIT
# interrupt_after DIR SECONDS [WAIT]: Ctrl-C to the locklab in pid
# SECONDS after DIR appears (its run under way; WAIT s at most for it,
# 10 unless given), then waited for: its exit status in rc, pid cleared.
interrupt_after() {
  local i tries=$((${3:-10} * 20))
  for ((i = 0; i < tries; i++)); do
    [ -d "$1" ] && break
    sleep 0.05
  done
  sleep "$2"
  kill -INT "$pid"
  wait "$pid"
  rc=$?
  pid=
}
