#!/usr/bin/env bash
# Configure and build one flavour of locklab into build/ (or build-$1/).
#   scripts/build.sh            release build with debug info, in build/
#   scripts/build.sh asan       AddressSanitizer + UndefinedBehaviorSanitizer, in build-asan/
#   scripts/build.sh tsan       ThreadSanitizer, in build-tsan/
#   scripts/build.sh fuzz       the libFuzzer targets alone (clang), in build-fuzz/
set -euo pipefail
cd "$(dirname "$0")/.."
flavour=${1:-}
targets=()
case "$flavour" in
  "")   dir=build;      flags=() ;;
  asan) dir=build-asan; flags=(-DLOCKLAB_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug) ;;
  tsan) dir=build-tsan; flags=(-DLOCKLAB_TSAN=ON -DCMAKE_BUILD_TYPE=Debug) ;;
  fuzz) dir=build-fuzz; flags=(-DLOCKLAB_FUZZ=ON -DCMAKE_C_COMPILER=clang)
        targets=(--target fuzz_scenario fuzz_history locklab) ;;
  *) echo "usage: scripts/build.sh [asan|tsan|fuzz]" >&2; exit 2 ;;
esac
cmake -S . -B "$dir" "${flags[@]}" >/dev/null
cmake --build "$dir" -j "$(nproc)" "${targets[@]}" -- --no-print-directory >/dev/null
echo "$dir"
