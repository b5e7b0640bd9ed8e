#!/usr/bin/env bash
# Installs what locklab needs on Debian 12, and nothing when it is all there.
# Needs root (or sudo) only when something is missing.
set -euo pipefail

packages=(
  build-essential cmake pkg-config
  clang libclang-rt-dev
  redis-server redis-tools redis-sentinel libhiredis-dev
  zookeeper zookeeper-bin libzookeeper-st-dev
  etcd-server etcd-client libcurl4-openssl-dev
  postgresql pgbouncer libpq-dev
  mariadb-server libmariadb-dev
  libjansson-dev libcmocka-dev zlib1g-dev
  libfaketime
  docker-compose
  python3-jsonschema bash-completion jq
  nftables openssh-server iproute2
  libhdrhistogram-java chromium
  prometheus
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
if [ ${#missing[@]} -gt 0 ]; then
  echo "locklab: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  # Debian's package starts no daemon without systemd; if one runs on 6379 it
  # is not ours and locklab never uses that port. The same for prometheus:
  # tests/runs/test_metrics.sh runs its binary itself, on ports of its own.
fi

# Tab completion for locklab (also as build/locklab), where bash-completion
# loads it on first use. Written only when it differs, so a second run
# needs no root; a failure here costs the completion, not the set-up.
completion_src="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/locklab.bash"
completion_dst=/usr/share/bash-completion/completions/locklab
if ! cmp -s "$completion_src" "$completion_dst"; then
  $sudo install -D -m 0644 "$completion_src" "$completion_dst" ||
    echo "locklab: could not install $completion_dst; try: source $completion_src" >&2
fi

# The wire tests' peers that locklab did not write (npm's ioredis and
# node-redisson, pinned in tests/wire/package-lock.json): Node.js and npm
# from Debian when no node is installed at all (a node from elsewhere, with
# its own npm, is used as it is), then the packages, again only when the
# lock file changed since they were installed.
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "locklab: installing nodejs npm" >&2
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
fi
wire="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/tests/wire"
if ! cmp -s "$wire/package-lock.json" "$wire/node_modules/.package-lock.json.installed"; then
  echo "locklab: installing the wire tests' npm packages (tests/wire)" >&2
  (cd "$wire" && npm ci --no-audit --no-fund --loglevel=error >/dev/null) &&
    cp "$wire/package-lock.json" "$wire/node_modules/.package-lock.json.installed"
fi
