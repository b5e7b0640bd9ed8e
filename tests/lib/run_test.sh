# shellcheck shell=bash disable=SC2034 # src, bin, tmp, pid and failed are the sourcing script's
# run_test.sh - what a tests/runs/*.sh script shares, sourced first:
# SOURCE_DIR and LOCKLAB_BIN from its arguments (src, bin; the working
# folder becomes src), a temporary folder of its own (tmp, named after
# NAME, removed at exit unless LOCKLAB_KEEP_TMP=1), the locklab it runs in
# the background (pid: killed by that PID at exit), and its ok/fail lines
# (failed: 1 once one failed, the script's exit status). A script with
# more to clean at exit defines cleanup_more before sourcing this.
#   . "$(dirname "$0")/../lib/run_test.sh" NAME "$@"
test_name=$1
shift
src=${1:?usage: $(basename "$0") SOURCE_DIR LOCKLAB_BIN}
bin=${2:?usage: $(basename "$0") SOURCE_DIR LOCKLAB_BIN}
cd "$src" || exit 1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/locklab-$test_name.XXXXXX") || exit 1
pid=
failed=0
fail() { echo "FAIL: $*"; failed=1; }
ok() { echo "ok: $*"; }
cleanup() {
  [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  declare -F cleanup_more >/dev/null && cleanup_more
  [ "${LOCKLAB_KEEP_TMP:-0}" = 1 ] || rm -rf "$tmp"
}
trap cleanup EXIT
