"""check_meta.py - the meta line of report.html, compare.html and
matrix.html held to the "meta" of the JSON the page was written from, and
that meta held to what the test can see for itself: this host's name,
cores and kernel, `redis-server --version`, the command line read back by
a shell into the same words, the proxy present exactly when one ran.
Called from html_check.py with its fail and note."""
import os
import re
import shlex
import subprocess

_redis_version = None


def redis_server_version():
    """What redis-server (as locklab starts it) says of itself: the v=."""
    global _redis_version
    if _redis_version is None:
        exe = os.environ.get("LOCKLAB_REDIS_SERVER") or "redis-server"
        try:
            out = subprocess.run([exe, "--version"], capture_output=True, text=True,
                                 timeout=10).stdout
        except (OSError, subprocess.SubprocessError):
            out = ""
        m = re.search(r"\bv=(\S+)", out)
        _redis_version = m.group(1) if m else ""
    return _redis_version


def locklab_version():
    """`$LOCKLAB_BIN --version`'s line, the binary that wrote the pages; "" without it."""
    exe = os.environ.get("LOCKLAB_BIN")
    if not exe:
        return ""
    try:
        return subprocess.run([exe, "--version"], capture_output=True, text=True,
                              timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def host_facts():
    u = os.uname()
    return {"name": u.nodename, "cores_online": os.sysconf("SC_NPROCESSORS_ONLN"),
            "cores_usable": len(os.sched_getaffinity(0)),
            "kernel": f"{u.sysname} {u.release} {u.machine}"}


def groups(servers):
    """[(kind, version, count, addresses)] in order of first appearance, as
    the page shows them: one per kind and version."""
    out = []
    for s in servers:
        key = (s["kind"], s["version"] or "")
        g = next((x for x in out if x[0] == key), None)
        if g is None:
            g = [key, 0, []]
            out.append(g)
        g[1] += 1
        if s["address"]:
            g[2].append(s["address"])
    return [(k[0], k[1], n, " ".join(a)) for k, n, a in out]


def check_meta(dom, doc, name, fail, note, kind, folder):
    """kind: "run", "compare" or "matrix"; folder: where the page is."""
    bad = 1  # problems below, counted from 1: 1 means none
    meta = doc.get("meta")
    if not isinstance(meta, dict):
        fail(f"{name}: its JSON has no meta object (got {meta!r})")
        return
    p = dom.first("p", cls="runmeta")
    if p is None:
        fail(f"{name}: no meta line (p.runmeta) under the header")
        return
    want = {"data-host": meta["host"]["name"],
            "data-cores-online": str(meta["host"]["cores_online"]),
            "data-cores-usable": str(meta["host"]["cores_usable"]),
            "data-kernel": meta["host"]["kernel"],
            "data-locklab-version": meta["locklab"]["version"],
            "data-commit": meta["locklab"]["commit"],
            "data-started-at": meta["started_at"],
            "data-command-line": meta["command_line"]}
    for attr, value in want.items():
        if p.get(attr) != value:
            bad += 1
            fail(f"{name}: meta line {attr}={p.get(attr)!r}, the JSON's meta {value!r}")
    text = p.text()
    for shown in (meta["host"]["name"], meta["locklab"]["version"], meta["locklab"]["commit"],
                  meta["started_at"][:10]):
        if shown not in text:
            bad += 1
            fail(f"{name}: the meta line does not show {shown!r}: {text[:200]!r}")
    code = p.first("code", data_figure="command-line")
    if code is None or code.text() != meta["command_line"]:
        bad += 1
        fail(f"{name}: the command line shown is "
             f"{code.text() if code is not None else None!r}, meta {meta['command_line']!r}")
    # the host as this test sees it (the run ran here, under the same affinity)
    for k, v in host_facts().items():
        if meta["host"][k] != v:
            bad += 1
            fail(f"{name}: meta.host.{k} {meta['host'][k]!r}, this host's {v!r}")
    # the command line: a shell reads it back into argv, which names the command and the folder
    if shlex.split(meta["command_line"]) != meta["argv"]:
        bad += 1
        fail(f"{name}: meta.command_line {meta['command_line']!r} reads back as "
             f"{shlex.split(meta['command_line'])}, not argv {meta['argv']}")
    argv = meta["argv"]
    # a run page of a comparison or a matrix row names the command that made it
    commands = ("run", "compare", "matrix") if kind == "run" else (kind,)
    if len(argv) < 2 or argv[1] not in commands:
        bad += 1
        fail(f"{name}: meta.argv {argv}: not a `{'`, `'.join(commands)}` command")
    out = next((argv[i + 1] for i in range(len(argv) - 1) if argv[i] in ("--out", "-o")), None)
    here = os.path.realpath(folder)
    if out is None or not (here + "/").startswith(os.path.realpath(out).rstrip("/") + "/"):
        bad += 1
        fail(f"{name}: meta.argv's --out {out!r} is not {folder} nor a folder above it")
    # the servers: each as the page shows it; the proxy exactly when one ran
    shown = [(s.get("data-server-kind"), s.get("data-server-version"), int(s.get("data-server-count") or 0),
              s.get("data-server-addresses")) for s in p.find_all("span", cls="server")]
    if shown != groups(meta["servers"]):
        bad += 1
        fail(f"{name}: the meta line's servers {shown}, the JSON's {groups(meta['servers'])}")
    proxies = [s for s in meta["servers"] if s["kind"] == "proxy"]
    if kind == "run":
        ran = doc.get("proxy") is not None
        if len(proxies) != (1 if ran else 0):
            bad += 1
            fail(f"{name}: {len(proxies)} proxy entries in meta.servers; report.json's proxy "
                 f"{'ran' if ran else 'is null'}")
        if meta["started_at"] != doc.get("started_at"):
            bad += 1
            fail(f"{name}: meta.started_at {meta['started_at']}, started_at {doc.get('started_at')}")
        addresses = [re.sub(r"^\S+ (\S+) .*$", r"\1", s) for s in doc.get("servers", [])]
        mine = [s["address"] for s in meta["servers"] if s["kind"] != "proxy"]
        if mine != addresses:
            bad += 1
            fail(f"{name}: meta.servers' addresses {mine}, report.json's servers {addresses}")
    for s in proxies:
        if s["version"] != meta["locklab"]["version"]:
            bad += 1
            fail(f"{name}: the proxy's version {s['version']!r}, locklab's {meta['locklab']['version']!r}")
    said = locklab_version()
    built = f"locklab {meta['locklab']['version']} (commit {meta['locklab']['commit']})"
    if said and said != built:
        bad += 1
        fail(f"{name}: meta.locklab says {built!r}, `locklab --version` {said!r}")
    redis = redis_server_version()
    for s in meta["servers"]:
        if s["kind"] in ("redis", "sentinel") and s["version"] != redis:
            bad += 1
            fail(f"{name}: meta.servers {s['kind']} {s['address']}: version {s['version']!r} "
                 f"({s['unknown_why']}), `redis-server --version` says v={redis}")
        if s["version"] is None and not s["unknown_why"]:
            bad += 1
            fail(f"{name}: meta.servers {s['kind']}: no version and no why")
    if bad == 1:
        note(f"{name}: meta line as the JSON's meta (host {meta['host']['name']}, "
             f"{meta['host']['cores_online']} cores, locklab {meta['locklab']['version']} "
             f"{meta['locklab']['commit']}, servers "
             f"{', '.join(f'{k} {v}' + (f' x{n}' if n > 1 else '') for k, v, n, _ in shown)}); "
             f"the command line reads back into argv")
