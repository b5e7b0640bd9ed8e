#!/usr/bin/env bash
# The whole test suite, as CI runs it: install what is missing, build, run
# every test (unit tests, real-Redis lock tests, whole scenario runs), then
# the unit tests again under AddressSanitizer+UndefinedBehaviorSanitizer,
# then each libFuzzer target for 30 s.
# LOCKLAB_TSAN=1 adds the lock and run tests under ThreadSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh

echo "== build"
scripts/build.sh >/dev/null
echo "== tests"
ctest --test-dir build --output-on-failure -j 2

echo "== unit tests under ASan+UBSan"
scripts/build.sh asan >/dev/null
ctest --test-dir build-asan --output-on-failure -L unit

# The scenario loader and the history reader take any file: a short run of
# each libFuzzer target from its seeds keeps what fuzzing found fixed.
echo "== fuzzing, 30 s a target"
scripts/fuzz.sh 30

if [ "${LOCKLAB_TSAN:-0}" = 1 ]; then
  echo "== lock and run tests under TSan"
  scripts/build.sh tsan >/dev/null
  TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/tests/lib/tsan.supp" \
    ctest --test-dir build-tsan --output-on-failure -L 'redis|zookeeper|run'
fi
echo "== all tests passed"
