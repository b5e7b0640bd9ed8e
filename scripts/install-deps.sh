#!/usr/bin/env bash
# Installs what locklab needs on Debian 12, and nothing when it is all there.
# Needs root (or sudo) only when something is missing.
set -euo pipefail

packages=(
  build-essential cmake pkg-config
  redis-server redis-tools redis-sentinel libhiredis-dev
  zookeeper zookeeper-bin libzookeeper-mt-dev
  libjansson-dev libcmocka-dev
  docker-compose
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "locklab: installing ${missing[*]}" >&2
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
# Debian's package starts no daemon without systemd; if one runs on 6379 it
# is not ours and locklab never uses that port.
