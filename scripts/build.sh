#!/usr/bin/env bash
# Configure and build one flavour of locklab into build/ (or build-$1/).
#   scripts/build.sh            release build with debug info, in build/
#   scripts/build.sh asan       AddressSanitizer + UndefinedBehaviorSanitizer, in build-asan/
#   scripts/build.sh tsan       ThreadSanitizer, in build-tsan/
set -euo pipefail
cd "$(dirname "$0")/.."
flavour=${1:-}
case "$flavour" in
  "")   dir=build;      flags=() ;;
  asan) dir=build-asan; flags=(-DLOCKLAB_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug) ;;
  tsan) dir=build-tsan; flags=(-DLOCKLAB_TSAN=ON -DCMAKE_BUILD_TYPE=Debug) ;;
  *) echo "usage: scripts/build.sh [asan|tsan]" >&2; exit 2 ;;
esac
cmake -S . -B "$dir" "${flags[@]}" >/dev/null
cmake --build "$dir" -j "$(nproc)" -- --no-print-directory >/dev/null
echo "$dir"
