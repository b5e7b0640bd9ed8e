#!/usr/bin/env bash
# docker-compose.yml describes the fleet locklab manages itself: checked
# with docker-compose's own parser (`config`; no Docker engine needed) and
# then for what locklab's instructions rely on: the services, every port on
# 127.0.0.1 only, five Redis masters on 7001-7005, one ZooKeeper server list,
# three etcd members on 7379-7381 with one initial cluster, PostgreSQL on
# 7432.
#   tests/runs/test_compose.sh SOURCE_DIR
set -euo pipefail
cd "${1:-$(dirname "$0")/../..}"
command -v docker-compose >/dev/null ||
  { echo "test_compose: docker-compose is not installed (scripts/install-deps.sh installs it)" >&2; exit 1; }
docker-compose -f docker-compose.yml config -q
docker-compose -f docker-compose.yml config > "${TMPDIR:-/tmp}/locklab-compose.$$.yml"
trap 'rm -f "${TMPDIR:-/tmp}/locklab-compose.$$.yml"' EXIT
# Debian's docker-compose runs on the system python3, which brings PyYAML.
/usr/bin/python3 - "${TMPDIR:-/tmp}/locklab-compose.$$.yml" <<'PY'
import sys, yaml
doc = yaml.safe_load(open(sys.argv[1]))
svc = doc["services"]
want = {f"redis-{i}" for i in range(1, 6)} | {"redis-master", "redis-replica", "redis-sentinel"} \
     | {f"zk-{i}" for i in range(1, 4)} | {f"etcd-{i}" for i in range(1, 4)} | {"postgres"}
errors = []
if set(svc) != want:
    errors.append(f"services: got {sorted(svc)}, want {sorted(want)}")
published = {}
for name, s in svc.items():
    for p in s.get("ports", []):
        text = p if isinstance(p, str) else f'{p.get("host_ip", "")}:{p.get("published")}:{p.get("target")}'
        if not text.startswith("127.0.0.1:"):
            errors.append(f"{name}: port {text} is not bound to 127.0.0.1")
        published.setdefault(name, []).append(int(text.split(":")[1]))
masters = [published.get(f"redis-{i}", [None])[0] for i in range(1, 6)]
if masters != [7001, 7002, 7003, 7004, 7005]:
    errors.append(f"redis masters publish {masters}, want 7001..7005")
if [published.get(f"zk-{i}", [None])[0] for i in range(1, 4)] != [7181, 7182, 7183]:
    errors.append("zookeeper nodes must publish 7181..7183")
if [published.get(f"etcd-{i}", [None])[0] for i in range(1, 4)] != [7379, 7380, 7381]:
    errors.append("etcd members must publish 7379..7381")
if published.get("postgres", [None])[0] != 7432:
    errors.append("postgres must publish 7432")
clusters = {next(a for a in svc[f"etcd-{i}"]["command"] if a.startswith("--initial-cluster="))
            for i in range(1, 4) if f"etcd-{i}" in svc}
if len(clusters) != 1:
    errors.append(f"etcd: initial clusters {clusters} must agree")
lists = {svc[f"zk-{i}"]["environment"]["ZOO_SERVERS"] for i in range(1, 4) if f"zk-{i}" in svc}
ids = sorted(svc[f"zk-{i}"]["environment"]["ZOO_MY_ID"] for i in range(1, 4) if f"zk-{i}" in svc)
if len(lists) != 1 or ids != ["1", "2", "3"]:
    errors.append(f"zookeeper: server lists {lists}, ids {ids}: must agree, ids 1..3")
for e in errors:
    print("test_compose:", e, file=sys.stderr)
sys.exit(1 if errors else 0)
PY
echo "test_compose: docker-compose.yml ok ($(docker-compose -f docker-compose.yml config --services | wc -l) services)"
