#!/usr/bin/python3
"""test_docs.py SOURCE_DIR LOCKLAB_BIN - the docs, run against the binary.

README.md and docs/*.md are read; what they show locklab doing is done,
and what they quote locklab saying is compared with what it says. A doc
that drifts from the binary fails here. One line per check (PASS, FAIL or
SKIP, the doc and line, what); exit 1 on any FAIL. Standard library only.

What is checked, and the conventions a doc follows for it:

1. Commands. Every line of a ```sh block is a command. Lines that invoke
   locklab (`build/locklab ...`, `locklab ...`) run, one after another in
   the block's order, in a temporary folder holding copies of scenarios/
   and tests/fixtures/, with TMPDIR pointing inside it (so `cluster up`
   cannot meet anyone else's cluster). `./scripts/...`, docker and any
   other command are listed as SKIP with the reason. `NAME=value` lines set
   shell variables for the lines after them.

   Expected exit status: 0, unless the line's trailing comment says
   otherwise, as its first words or in parentheses anywhere in it:
       build/locklab check /tmp/pause       # exit 1: the run had violations
       locklab check /tmp/pause    # reads its history.jsonl (exit 1)

   What is changed to run in CI, always said on the line's output:
   - `run`/`compare` without `--duration` get one: 1 s, or the shortest
     run that keeps the scenario's meaning when that is longer (its last
     fault ends, plus 1 s; two periods of a scheduled_tasks workload),
     never longer than the scenario's own duration;
   - an absolute `--out DIR` becomes a folder inside the temporary one,
     and so does DIR wherever a later line of the doc names it (or a
     path inside it), so `run ... --out /tmp/pause` then
     `check /tmp/pause` work in sequence;
   - `--redis`/`--zookeeper`/`--etcd`/`--postgres` (servers this machine does not have, e.g. the
     docker-compose fleet) are replaced by closed loopback ports: the line
     must get through usage and validation and stop at connecting, exit 3;
   - `[optional]` parts of a synopsis line are left out, and each option
     they name must appear in `locklab --help`.
   After every block that ran `cluster up`, `cluster down` runs whatever
   happened (and the servers its state file names are stopped by PID if
   that did not stop them).

2. Error examples. locklab's errors are one line on stderr, "locklab: "
   included, and a doc quotes them whole. In a plain ``` block, a line
   that starts "locklab: " is an error example, of the form
       locklab: FILE[:LINE[:COL] | : byte N]: message
   with FILE ending .json (a scenario) or .jsonl/.llh (a history). The
   lines above it in the block, back to the previous error line, are
   FILE's text: the test writes them to FILE (a bare name, t.json, h.jsonl:
   none of the tree's) in the working folder, so the doc shows what caused
   the error and where its column points:
       {"clients": 0, "workload": {"type": "flash_sale"}}
       locklab: t.json:1:13: clients: 0 is out of range (1..100000)
   With no lines above it, FILE is the tree's (a fixture of
   tests/fixtures/, copied in), or absent, and the error must say so. Then
   a scenario runs as `locklab show FILE`, and a file of the tree also as
   `locklab run FILE` (closed server ports, so a file that turned valid
   starts nothing), a history as `locklab check FILE`; each must exit 2
   with exactly that line as all its stderr. `locklab: FILE...` (the
   form, FILE in capitals) is skipped. A "locklab: " line of another form
   outside a marked block
   (3.), or an inline `code` span quoting an error, fails: an error is
   shown in a block, with its input or its fixture.

3. Output examples.
   - A block right after a comment line `<!-- output of: locklab ARGS -->`
     shows what that command prints: each of its lines must be a line of
     the output (stdout, and stderr without "locklab: "), exactly. A block
     whose every line starts "locklab: " shows errors: its lines must be
     the command's whole stderr, prefix and all.
   - `<!-- shape of: locklab ARGS -->` is the same for output that holds
     run-specific figures: numbers that stand alone (not `p99`'s) are
     masked and runs of spaces are one space on both sides, so the column
     headers, verdict words, invariant names and sentences must match.
   - In both, `(exit N)` at the end of the comment gives the exit status
     expected (0 otherwise). ARGS run as written, after the doc's ```sh
     blocks above the marker, with their --out folders (a marker's
     `check /tmp/pause` reads what an earlier `run --out /tmp/pause` wrote,
     and the folder's name in the output is the doc's).
   - A block that starts with the compare banner (`locklab compare
     scenario=NAME ...`) is checked by shape against a 1-s `compare` of
     scenarios/NAME.json with the algorithms its rows name (its
     `End of compare:` line, if shown, names none).
   - A block of history lines must be a string constant of one of
     tests/unit/test_history*.c (which pin the writer to it byte for byte), and
     `locklab check` on it must PASS; an inline `checker: S sections, ...`
     template (capital letters for numbers) must match that check's line.

4. JSON. A ```json block introduced by "this file is `PATH`" must be that
   file's text. A ```json scenario (one with a workload, or a `"key": ...`
   fragment of its top-level keys, given flash_sale as its workload) must
   be valid: `locklab show` (which starts nothing) exits 0. A ```json block
   of history lines must be lines of the doc's whole-history example.

5. Which algorithm runs which scenario. A table whose header starts
   `| scenario | refuses |` lists the scenarios that locklab refuses with
   some algorithms; every scenarios/*.json with every algorithm of
   `locklab list` must be refused by `locklab show --algorithm` (exit 2)
   exactly when the table says so. A row `*` lists the algorithms that
   refuse every scenario but the ones its first cell names in `code` (each
   such row with its own). A
   paragraph saying "every scenario runs with every (or any) algorithm"
   must name, in `code`, every scenario refused and every algorithm
   refusing it.

6. Lists of kinds. A comment `<!-- every KIND -->` marks a list of every
   name of a kind; tests/lib/kind_lists.py gives the form. It must name
   exactly what `locklab list KIND` prints (faults in its order): a name
   missing or one more fails, saying which. Each KIND is marked at least
   once in the docs.

Blocks of any other kind are listed as SKIP with their first line.
"""
import difflib
import glob
import itertools
import json
import math
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import kind_lists  # noqa: E402  (tests/lib)

TIMEOUT_S = 120
# The unit tests whose string constants the docs quote: the history
# writer's whole example.
HISTORY_TESTS = "tests/unit/test_history*.c"
ERR_RE = re.compile(r"^locklab: (?P<path>[\w./-]+\.(?P<ext>json|jsonl|llh))"
                    r"(?::\d+(?::\d+)?|: byte \d+)?: \S")
# an error quoted inline, with or without the prefix: it belongs in a block
INLINE_ERR_RE = re.compile(r"^(?:locklab: \S|[\w./-]+\.(?:json|jsonl|llh)(?::\d+)+: )")
MARKER_RE = re.compile(r"^<!--\s*(?P<kind>output of|shape of):\s*(?P<cmd>.*?)\s*-->\s*$")
EXIT_RE = re.compile(r"(?:^exit (\d+)\b|\(exit (\d+)\))")
NUM_RE = re.compile(r"(?<![\w.])[-+]?\d+(?:\.\d+)?(?![\w])")
LOCKLAB_NAMES = ("locklab", "build/locklab", "./build/locklab")
SCENARIO_KEYS = {"name", "description", "clients", "duration_s", "requests", "seed", "lock",
                 "workload", "fencing", "faults", "expect", "servers"}


class Doc:
    """One markdown file: fenced blocks, and paragraphs outside them."""

    def __init__(self, root, rel):
        self.rel = rel
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            self.lines = f.read().split("\n")
        self.blocks = []  # dicts: lang, line (1-based, of the fence), body (list), before (text), marker
        self.paragraphs = []  # (line, text) outside blocks
        i, para, para_line, before = 0, [], 0, []
        while i < len(self.lines):
            line = self.lines[i]
            m = re.match(r"^```(\S*)\s*$", line)
            if m:
                if para:
                    self.paragraphs.append((para_line, "\n".join(para)))
                    para = []
                j = i + 1
                while j < len(self.lines) and self.lines[j].strip() != "```":
                    j += 1
                prev = [l for l in self.lines[max(0, i - 3):i] if l.strip()]
                marker = MARKER_RE.match(prev[-1].strip()) if prev else None
                self.blocks.append({"lang": m.group(1), "line": i + 1, "body": self.lines[i + 1:j],
                                    "before": "\n".join(before[-12:]), "marker": marker})
                before = []
                i = j + 1
                continue
            before.append(line)
            if line.strip():
                if not para:
                    para_line = i + 1
                para.append(line)
            elif para:
                self.paragraphs.append((para_line, "\n".join(para)))
                para = []
            i += 1
        if para:
            self.paragraphs.append((para_line, "\n".join(para)))

    def inline_spans(self):
        for line, text in self.paragraphs:
            for m in re.finditer(r"`([^`]+)`", text):
                yield line + text.count("\n", 0, m.start()), " ".join(m.group(1).split())


class Checker:
    def __init__(self, src, binary):
        self.src = os.path.abspath(src)
        self.bin = os.path.abspath(binary)
        self.fails = 0
        self.tmp = tempfile.mkdtemp(prefix="locklab-docs-")
        self.work = os.path.join(self.tmp, "work")
        self.tmpdir = os.path.join(self.tmp, "tmpdir")
        os.makedirs(os.path.join(self.work, "tests"))
        os.makedirs(self.tmpdir)
        shutil.copytree(os.path.join(self.src, "scenarios"), os.path.join(self.work, "scenarios"))
        shutil.copytree(os.path.join(self.src, "tests", "fixtures"),
                        os.path.join(self.work, "tests", "fixtures"))
        self.env = dict(os.environ, TMPDIR=self.tmpdir)
        # Bound, never listening: a connect is refused at once. Held to the end.
        self.closed = []
        for _ in range(15):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            self.closed.append(s)
        ports = ["127.0.0.1:%d" % s.getsockname()[1] for s in self.closed]
        self.closed_redis, self.closed_zk = ports[:8], ports[8:11]
        self.closed_etcd, self.closed_pg = ports[11:14], ports[14:]
        self.cluster_dirs = set()
        self.seq = itertools.count(1)  # scratch names; next() is safe across the probe threads
        self.outmap = {}
        self.docs = [Doc(self.src, "README.md")] + [
            Doc(self.src, os.path.join("docs", n))
            for n in sorted(os.listdir(os.path.join(self.src, "docs"))) if n.endswith(".md")]
        self.helps = {}
        self.kinds_listed = {}
        self.c_strings = {}

    # ---- output and running ------------------------------------------------

    def report(self, verdict, where, what, detail=None):
        if verdict == "FAIL":
            self.fails += 1
        print("%-4s  %s  %s" % (verdict, where, what), flush=True)
        for line in (detail or "").splitlines():
            print("        " + line, flush=True)

    def run(self, argv, timeout=TIMEOUT_S):
        """(exit, stdout, stderr, seconds); Ctrl-C on timeout so locklab stops its servers."""
        t0 = time.monotonic()
        p = subprocess.Popen(argv, cwd=self.work, env=self.env, stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            out, err = p.communicate(timeout=timeout)
        except (KeyboardInterrupt, SystemExit):  # stopped ourselves: so is locklab, cleanly
            p.send_signal(signal.SIGINT)
            p.wait(20)
            raise
        except subprocess.TimeoutExpired:
            p.send_signal(signal.SIGINT)
            try:
                out, err = p.communicate(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
                out, err = p.communicate()
            err += "\n(test_docs: timed out after %d s, interrupted)" % timeout
            return -1, out, err, time.monotonic() - t0
        return p.returncode, out, err, time.monotonic() - t0

    def out_lines(self, out, err):
        lines = out.splitlines()
        for l in err.splitlines():
            lines.append(l[len("locklab: "):] if l.startswith("locklab: ") else l)
        return lines

    def scratch(self, name):
        return os.path.join(self.tmp, "%03d-%s" % (next(self.seq), re.sub(r"[^\w.-]", "_", name)))

    def help_of(self, command):
        """`locklab help COMMAND` and `locklab --help`, as one text."""
        if command not in self.helps:
            self.helps[command] = self.run([self.bin, "--help"])[1] + (
                self.run([self.bin, "help", command])[1] if command else "")
        return self.helps[command]

    def closed_servers(self):
        return ["--redis", ",".join(self.closed_redis), "--zookeeper", ",".join(self.closed_zk)]

    # ---- the C sources the docs lean on ------------------------------------

    def files_of(self, pattern):
        """The files a glob names under the source folder, relative to it, sorted."""
        return sorted(os.path.relpath(p, self.src)
                      for p in glob.glob(os.path.join(self.src, pattern)))

    def holder_of(self, pattern, s):
        """The first file of a glob with s among its string constants, or None."""
        return next((rel for rel in self.files_of(pattern) if s in self.strings_of(rel)), None)

    def strings_of(self, rel):
        """Every string constant of a C file, adjacent literals joined, escapes undone."""
        if rel in self.c_strings:
            return self.c_strings[rel]
        with open(os.path.join(self.src, rel), encoding="utf-8") as f:
            text = f.read()
        tok = re.compile(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|/\*.*?\*/|//[^\n]*|\s+|.',
                         re.S)
        found, cur = set(), None
        for m in tok.finditer(text):
            t = m.group(0)
            if t.startswith('"'):
                cur = (cur or "") + unescape_c(t[1:-1])
            elif t.isspace() or t.startswith("/*") or t.startswith("//"):
                continue
            else:
                if cur is not None:
                    found.add(cur)
                cur = None
        if cur is not None:
            found.add(cur)
        self.c_strings[rel] = found
        return found

    # ---- 1. commands -------------------------------------------------------

    def short_duration(self, scenario):
        """Seconds to append as --duration, or None to keep the scenario's own."""
        try:
            with open(os.path.join(self.work, scenario), encoding="utf-8") as f:
                d = json.load(f)
        except (OSError, ValueError):
            return "1"
        ms = 1000
        for fault in d.get("faults") or []:
            ms = max(ms, fault.get("at_ms", 0) + fault.get("duration_ms", 0) + 1000)
        w = d.get("workload") or {}
        if w.get("type") == "scheduled_tasks":
            ms = max(ms, 2 * w.get("period_ms", 1000))
        own = float(d.get("duration_s", 10)) * 1000
        if ms >= own:
            return None
        return str(math.ceil(ms / 1000))

    def check_sh_block(self, doc, block):
        vars_, outmap, notes_cluster = {}, self.outmap, []
        lines, n = [], 0
        body = block["body"]
        while n < len(body):  # join backslash continuations
            start, text = n, body[n]
            while text.endswith("\\") and n + 1 < len(body):
                n += 1
                text = text[:-1] + " " + body[n].strip()
            lines.append((block["line"] + 1 + start, text))
            n += 1
        try:
            for lineno, text in lines:
                code, comment = split_comment(text)
                if not code.strip():
                    continue
                where = "%s:%d" % (doc.rel, lineno)
                shown = code.strip()
                m = re.match(r"^([A-Za-z_]\w*)=(\S*)$", shown)
                if m:
                    vars_[m.group(1)] = " ".join(shlex.split(m.group(2)))
                    continue
                # a synopsis: [optional] parts left out, their options known to --help
                optional = re.findall(r"\s*\[[^\]]*\]", shown)
                code = shown
                for part in optional:
                    code = code.replace(part, "", 1)
                try:
                    argv = shlex.split(expand_vars(code, vars_))
                except ValueError as e:
                    self.report("FAIL", where, shown, "cannot split as a shell line: %s" % e)
                    continue
                if argv[0].startswith("./scripts/") or argv[0].startswith("scripts/"):
                    self.report("SKIP", where, shown, "a script, not run here (scripts/test.sh runs "
                                "this suite; demo.sh installs packages)")
                    continue
                if argv[0] in ("docker", "docker-compose"):
                    self.report("SKIP", where, shown, "docker: no Docker engine on this machine")
                    continue
                if argv[0] not in LOCKLAB_NAMES:
                    self.report("SKIP", where, shown, "not a locklab command")
                    continue
                if any(t in ("|", "||", "&&", ";", "&", ">", ">>", "<") for t in argv):
                    self.report("SKIP", where, shown, "a shell pipeline or redirection: not run")
                    continue
                self.run_doc_command(where, shown, argv[1:], comment, outmap, notes_cluster,
                                     optional)
        finally:
            for d in notes_cluster:
                self.cluster_down(d)
                self.cluster_dirs.discard(d)

    def run_doc_command(self, where, shown, args, comment, outmap, clusters, optional):
        notes, expect = [], 0
        m = EXIT_RE.search(comment.strip())
        if m:
            expect = int(m.group(1) or m.group(2))
        helptext = self.help_of(args[0] if args else "")
        missing = [name for part in optional for name in re.findall(r"--[\w-]+", part)
                   if not re.search(r"(?<![\w-])%s(?![\w-])" % re.escape(name), helptext)]
        if optional:
            notes.append("[optional] parts left out")
        args = [map_path(a, outmap) for a in args]
        if args and args[0] in ("run", "compare"):
            if "--out" in args:
                i = args.index("--out") + 1
                if i < len(args) and os.path.isabs(args[i]) and not args[i].startswith(self.tmp):
                    new = self.scratch("out" + args[i])
                    outmap[args[i]] = new
                    args[i] = new
                    notes.append("--out in the temporary folder")
            if "--duration" not in args and len(args) > 1:
                d = self.short_duration(args[1])
                if d:
                    args += ["--duration", d]
                    notes.append("--duration %s appended" % d)
            for opt, closed in (("--redis", self.closed_redis), ("--zookeeper", self.closed_zk),
                                ("--etcd", self.closed_etcd), ("--postgres", self.closed_pg)):
                if opt in args:
                    i = args.index(opt) + 1
                    if i < len(args):
                        args[i] = ",".join(closed[:max(1, len(args[i].split(",")))])
                        notes.append("%s on closed ports" % opt)
                        expect = 3
        if args[:2] == ["cluster", "up"]:
            d = args[args.index("--dir") + 1] if "--dir" in args else None
            clusters.append(d)
            self.cluster_dirs.add(d)
        code, out, err, secs = self.run([self.bin] + args)
        what = "%s%s -> exit %d" % (shown, "  [%s]" % "; ".join(notes) if notes else "", code)
        if missing:
            self.report("FAIL", where, what, "not in locklab help %s: %s" % (
                args[0], ", ".join(missing)))
        elif code != expect:
            self.report("FAIL", where, what, "expected exit %d; the last lines:\n%s" % (
                expect, "\n".join((out + err).splitlines()[-8:])))
        else:
            self.report("PASS", where, "%s  (%.1f s)" % (what, secs))

    def cluster_down(self, d):
        args = [self.bin, "cluster", "down"] + (["--dir", d] if d else [])
        self.run(args, timeout=60)
        state = os.path.join(self.work, d or os.path.join(self.tmpdir, "locklab-cluster"), "state")
        # cluster down stopped them unless the state file is still there
        if os.path.exists(state):
            pids = []
            with open(state) as f:
                for line in f:
                    if line.startswith("supervisor="):
                        pids.append(int(line.split("=")[1]))
                    elif line.startswith("server="):
                        pids.append(int(line.split()[-1]))
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGTERM)
                except (ProcessLookupError, PermissionError):
                    pass
            print("        cluster down left %s; sent SIGTERM to %s" % (state, pids), flush=True)

    # ---- 2. messages -------------------------------------------------------

    def check_error_block(self, doc, block):
        """Each error line of the block, with the lines above it as its file."""
        text = []
        for k, line in enumerate(block["body"]):
            where = "%s:%d" % (doc.rel, block["line"] + 1 + k)
            if not line.startswith("locklab: "):
                if line.strip():
                    text.append(line)
                continue
            m = ERR_RE.match(line)
            if line.startswith("locklab: FILE"):
                self.report("SKIP", where, line, "the form of an error, not one")
            elif not m:
                self.report("FAIL", where, line, "an error line that is not "
                            "locklab: FILE.json|.jsonl|.llh[:LINE[:COL]]: message")
            else:
                self.check_error(where, line, m, text)
            text = []
        if text:
            self.report("FAIL", "%s:%d" % (doc.rel, block["line"]), "error block",
                        "lines after its last error line: " + text[0][:60])

    def check_error(self, where, line, m, text):
        path = m.group("path")
        written = None
        if text:
            if "/" in path or os.path.exists(os.path.join(self.src, path)):
                self.report("FAIL", where, line, "an input shown in the doc goes to a bare "
                            "name the tree does not have, not %s" % path)
                return
            written = os.path.join(self.work, path)
            with open(written, "w", encoding="utf-8") as f:
                f.write("\n".join(text) + "\n")
        if m.group("ext") == "json":
            # run only on the tree's files, as ever: with closed ports its servers are
            # external, which a doc's input (a kill, sentinels) may refuse first
            runs = [["show", path]] + ([] if text else [
                ["run", path] + self.closed_servers() + ["--out", self.scratch("err")]])
        else:
            runs = [["check", path]]
        try:
            for argv in runs:
                code, out, err, _ = self.run([self.bin] + argv)
                got = [self.known_elided(line, l) for l in err.splitlines()]
                shown = "locklab %s %s" % (argv[0], path)
                if code == 2 and got == [line]:
                    self.report("PASS", where, "%s  [%s%s: exit 2]" % (
                        line, shown, ", from the doc's text" if text else ""))
                else:
                    self.report("FAIL", where, line, "%s: exit %d%s, and said on stderr:\n%s" % (
                        shown, code, "" if code == 2 else " (expected 2)",
                        "\n".join(got[-6:]) or "(nothing)"))
        finally:
            if written:
                os.unlink(written)

    def known_elided(self, msg, line):
        """line as msg writes it when msg ends "(known: ...)" and line names
        there exactly what `locklab list KIND` prints for some KIND: the docs
        need not retype a list a new kind changes (test_kinds holds the lists)."""
        tail = "(known: ...)"
        if not msg.endswith(tail) or not line.startswith(msg[:-len("...)")]):
            return line
        names = line[len(msg) - len("...)"):].rstrip(")").split(", ")
        return msg if any(names == self.listed(k) for k in kind_lists.KINDS) else line

    # ---- 3. output examples ------------------------------------------------

    def check_output_block(self, doc, block, kind, cmd):
        where = "%s:%d" % (doc.rel, block["line"])
        expect = 0
        m = re.search(r"\(exit (\d+)\)\s*$", cmd)
        if m:
            expect, cmd = int(m.group(1)), cmd[:m.start()].strip()
        argv = shlex.split(cmd)
        if not argv or argv[0] not in LOCKLAB_NAMES:
            self.report("FAIL", where, "marker: %s" % cmd, "the marker must name a locklab command")
            return
        lines = [l for l in block["body"] if l.strip()]
        if kind == "output of" and all(l.startswith("locklab: ") for l in lines):
            code, out, err, _ = self.run([self.bin] + argv[1:])
            got = [self.known_elided(w, g) for w, g in zip(lines, err.splitlines())]
            got += err.splitlines()[len(lines):]
            if code == expect and got == lines:
                self.report("PASS", where, "errors of %s: stderr exactly, exit %d" % (cmd, code))
            else:
                self.report("FAIL", where, "errors of %s" % cmd, "exit %d (expected %d); stderr:\n%s"
                            % (code, expect, err.rstrip() or "(nothing)"))
            return
        code, out, err, secs = self.run([self.bin] + [map_path(a, self.outmap) for a in argv[1:]])
        for old, new in self.outmap.items():  # the doc's names for the folders
            out, err = out.replace(new, old), err.replace(new, old)
        self.compare_lines(where, "%s: %s (exit %d, %.1f s)" % (kind, cmd, code, secs), lines,
                           self.out_lines(out, err), kind == "shape of",
                           None if code == expect else "exit %d, expected %d" % (code, expect))

    def compare_lines(self, where, what, want, got, shape, problem=None):
        norm = (lambda s: " ".join(NUM_RE.sub("N", s).split())) if shape else (lambda s: s)
        have = {norm(l) for l in got}
        missing = [l for l in want if norm(l) not in have]
        if problem or missing:
            detail = [problem] if problem else []
            for l in missing:
                detail.append("not printed: " + (norm(l) if shape else l))
                near = difflib_close(norm(l), list(have))
                if near:
                    detail.append("  nearest:   " + near)
            self.report("FAIL", where, what, "\n".join(detail))
        else:
            self.report("PASS", where, what + ("  [by shape: numbers masked]" if shape else ""))

    def check_compare_banner(self, doc, block):
        where = "%s:%d" % (doc.rel, block["line"])
        lines = [l for l in block["body"] if l.strip()]
        m = re.search(r"scenario=(\S+)", lines[0])
        algos = [l.split()[0] for l in lines[2:]  # a row's own lines are indented
                 if l.split() and not l.startswith(("(", "End of compare:", " "))]
        args = ["compare", "scenarios/%s.json" % m.group(1), "--algorithms", ",".join(algos),
                "--duration", "1", "--out", self.scratch("compare")]
        code, out, err, secs = self.run([self.bin] + args)
        self.compare_lines(where, "compare table: locklab %s (%.1f s)" % (
            " ".join(args[:-2]), secs), lines, self.out_lines(out, err), True,
            None if code == 0 else "exit %d, expected 0" % code)

    def check_history_block(self, doc, block, templates):
        where = "%s:%d" % (doc.rel, block["line"])
        text = "\n".join(block["body"]) + "\n"
        held = self.holder_of(HISTORY_TESTS, text)
        if held:
            self.report("PASS", where, "history example: a string of %s, "
                        "which pins the writer to it" % held)
        else:
            self.report("FAIL", where, "history example",
                        "not, byte for byte, a string constant of " + HISTORY_TESTS)
        path = self.scratch("history") + ".jsonl"
        with open(path, "w") as f:
            f.write(text)
        code, out, err, _ = self.run([self.bin, "check", path])
        if code == 0 and "End of check: PASS" in out:
            self.report("PASS", where, "locklab check on the history example -> PASS, exit 0")
        else:
            self.report("FAIL", where, "locklab check on the history example",
                        "exit %d:\n%s" % (code, out + err))
        for tline, tmpl in templates:
            rx = "^" + re.sub(r"\\ ", " ", re.sub(r"\b[A-Z]\b", r"\\d+", re.escape(tmpl))) + "$"
            hit = any(re.match(rx, l) for l in out.splitlines())
            self.report("PASS" if hit else "FAIL", "%s:%d" % (doc.rel, tline),
                        "template `%s` matches locklab check's output" % tmpl,
                        None if hit else "check printed:\n" + out)
        return set(block["body"])

    # ---- 4. JSON -----------------------------------------------------------

    def check_json_block(self, doc, block, history_lines):
        where = "%s:%d" % (doc.rel, block["line"])
        text = "\n".join(block["body"]) + "\n"
        lines = [l for l in block["body"] if l.strip()]
        try:
            objs = [json.loads(l) for l in lines]
            if all(isinstance(o, dict) and ("time" in o or o.get("type") in ("start", "end"))
                   for o in objs):
                missing = [l for l in lines if l not in history_lines]
                self.report("FAIL" if missing else "PASS", where,
                            "history lines are lines of the doc's whole-history example",
                            "\n".join("not there: " + l for l in missing))
                return
        except ValueError:
            pass
        m = re.search(r"this\s+file\s+is\s+`([^`]+)`", block["before"])
        if m:
            try:
                with open(os.path.join(self.src, m.group(1)), encoding="utf-8") as f:
                    same = f.read() == text
            except OSError as e:
                same = False
            self.report("PASS" if same else "FAIL", where, "json block is %s, byte for byte"
                        % m.group(1))
        try:
            d = json.loads(text)
        except ValueError:
            try:
                d = json.loads("{" + text + "}")
            except ValueError as e:
                self.report("FAIL", where, "json block", "not JSON: %s" % e)
                return
        if not isinstance(d, dict) or ("workload" not in d and not set(d) <= SCENARIO_KEYS):
            self.report("SKIP", where, "json block: not a scenario (no workload, keys %s)"
                        % ", ".join(sorted(d)[:6]) if isinstance(d, dict) else "json block")
            return
        d.setdefault("workload", {"type": "flash_sale"})
        path = self.scratch("scenario") + ".json"
        with open(path, "w") as f:
            json.dump(d, f)
        code, out, err, _ = self.run([self.bin, "show", path])
        self.report("PASS" if code == 0 else "FAIL", where,
                    "json block is a valid scenario (locklab show: exit %d)" % code,
                    None if code == 0 else (out + err)[-600:])

    # ---- 5. which algorithm runs which scenario ----------------------------

    def check_refusals(self):
        table, where, stars = None, None, []
        for doc in self.docs:
            for k, line in enumerate(doc.lines):
                if re.match(r"^\|\s*scenario\s*\|\s*refuses\s*\|", line):
                    table, where = {}, "%s:%d" % (doc.rel, k + 1)
                    for row in doc.lines[k + 2:]:
                        if not row.startswith("|"):
                            break
                        cells = [c.strip() for c in row.strip("|").split("|")]
                        # "`*` (...)": refused by these with every scenario of the folder
                        # but the ones its parentheses name in `code` (its exceptions)
                        # (each `*` row with its own exceptions)
                        name = re.match(r"`?([^`]*)`?", cells[0]).group(1)
                        algos = set(re.findall(r"`([^`]+)`", cells[1]))
                        if name == "*":
                            stars.append((algos, set(re.findall(r"`([^`]+)`", cells[0])[1:])))
                        else:
                            table.setdefault(name, set()).update(algos)
        listing = self.run([self.bin, "list"])[1]
        first = listing.split("algorithms:\n", 1)[-1].split("\n\n", 1)[0]
        algos = [a for a in re.findall(r"^  (\S+)  ", first, re.M) if not a.endswith(":")]
        scenarios = sorted(n for n in os.listdir(os.path.join(self.work, "scenarios"))
                           if n.endswith(".json"))

        refused, odd = {}, []
        for s in scenarios:
            for a in algos:
                code = self.run([self.bin, "show", "scenarios/" + s, "--algorithm", a])[0]
                if code == 2:
                    refused.setdefault(s, set()).add(a)
                elif code != 0:
                    odd.append("%s with %s: show exits %d (expected 2 refused or 0)" % (s, a, code))
        everywhere = set()
        if table is None:
            self.report("FAIL", "docs", "no `| scenario | refuses |` table in the docs")
        else:
            everywhere = set().union(*(algos for algos, _ in stars))
            spared = set().union(*(but for _, but in stars))
            for s in scenarios:
                for algos, but in stars:
                    table[s] = table.get(s, set()) | (algos if s not in but else set())
            wrong = ["%s: table says %s, locklab refuses %s" % (
                s, sorted(table.get(s, ())) or "none", sorted(refused.get(s, ())) or "none")
                for s in scenarios if table.get(s, set()) != refused.get(s, set())]
            wrong += ["%s: in the table, not in scenarios/" % s for s in table if s not in scenarios]
            wrong += ["%s: spared by `*`, not in scenarios/" % s for s in spared if s not in scenarios]
            self.report("FAIL" if wrong or odd else "PASS", where,
                        "refusals of %d scenarios x %d algorithms (%s) match the table" % (
                            len(scenarios), len(algos), ", ".join(algos)), "\n".join(wrong + odd))
        for doc in self.docs:
            for line, text in doc.paragraphs:
                m = re.search(r"[Ee]very scenario runs with (every|any) algorithm", text)
                if not m:
                    continue
                names = set(re.findall(r"`([^`]+)`", text))
                # an algorithm refusing every scenario is named, its scenarios need not be
                unnamed = sorted({n for s, a in refused.items() for n in ({s} if a - everywhere
                                  else set()) | a if n not in names})
                self.report("FAIL" if unnamed else "PASS", "%s:%d" % (doc.rel, line),
                            '"%s..." names what locklab refuses' % m.group(0),
                            "locklab refuses: %s; not named there: %s" % ("; ".join(
                                "%s with %s" % (s, ", ".join(sorted(a)))
                                for s, a in sorted(refused.items())), ", ".join(unnamed))
                            if unnamed else None)

    # ---- 6. lists of kinds ----------------------------------------------------

    def listed(self, kind):
        """`locklab list KIND`'s names, asked once a run."""
        if kind not in self.kinds_listed:
            self.kinds_listed[kind] = self.run([self.bin, "list", kind])[1].split()
        return self.kinds_listed[kind]

    def check_kind_lists(self):
        for where, title, wrong in kind_lists.check(self.src, self.listed):
            self.report("FAIL" if wrong else "PASS", where, title, "\n".join(wrong))

    # ---- the whole -----------------------------------------------------------

    def main(self):
        print("test_docs: %s against %s (working in %s)" % (self.src, self.bin, self.tmp))
        self.check_kind_lists()
        self.check_refusals()
        history_lines = set()
        for doc in self.docs:
            self.outmap = {}  # --out folders of the doc's commands, for its later ones
            templates = [(l, s) for l, s in doc.inline_spans() if s.startswith("checker: ")]
            for line, span in doc.inline_spans():
                if INLINE_ERR_RE.match(span):
                    self.report("FAIL", "%s:%d" % (doc.rel, line), span, "an error quoted "
                                "inline: show it in a block, whole, with its input (2.)")
            for block in doc.blocks:
                body = [l for l in block["body"] if l.strip()]
                where = "%s:%d" % (doc.rel, block["line"])
                if block["lang"] == "sh":
                    self.check_sh_block(doc, block)
                elif block["lang"] == "json":
                    continue  # after the history examples they are compared with
                elif block["marker"]:
                    self.check_output_block(doc, block, block["marker"].group("kind"),
                                            block["marker"].group("cmd"))
                elif body and body[0].startswith("locklab compare  scenario="):
                    self.check_compare_banner(doc, block)
                elif body and all(l.startswith("{") and l.endswith("}") for l in body):
                    history_lines |= self.check_history_block(doc, block, templates)
                elif body and any(l.startswith("locklab: ") for l in body):
                    self.check_error_block(doc, block)
                else:
                    self.report("SKIP", where, "``` %s block: %s" % (
                        block["lang"] or "plain", (body[0] if body else "(empty)")[:60]),
                        "not locklab output")
        for doc in self.docs:
            for block in doc.blocks:
                if block["lang"] == "json":
                    self.check_json_block(doc, block, history_lines)
        return self.fails

    def cleanup(self):
        """Clusters down first (their folders are in self.tmp), then self.tmp
        goes, failed or not, unless LOCKLAB_KEEP_TMP=1 keeps it for a look."""
        for s in self.closed:
            s.close()
        down = False
        try:
            for d in list(self.cluster_dirs):
                self.cluster_down(d)
            down = True
        finally:
            if not down:  # interrupted: what may still run there keeps its files
                print("test_docs: cluster down interrupted: kept %s" % self.tmp)
            elif os.environ.get("LOCKLAB_KEEP_TMP") == "1":
                print("test_docs: LOCKLAB_KEEP_TMP=1: kept %s" % self.tmp)
            else:
                # rmtree removes a symbolic link inside, never what it points to
                shutil.rmtree(self.tmp, ignore_errors=True)
                if self.fails:
                    print("test_docs: removed %s (LOCKLAB_KEEP_TMP=1 keeps it)" % self.tmp)


def unescape_c(s):
    def one(m):
        e = m.group(1)
        simple = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "\\": "\\", '"': '"', "'": "'",
                  "a": "\a", "b": "\b", "f": "\f", "v": "\v", "?": "?"}
        if e[0] == "x":
            return chr(int(e[1:], 16))
        if e[0] in "01234567" and len(e) > 1:
            return chr(int(e, 8))
        return simple.get(e, e)
    return re.sub(r"\\(x[0-9a-fA-F]+|[0-7]{1,3}|.)", one, s)


def split_comment(line):
    """(code, comment) at the first # outside quotes that starts a word."""
    q = None
    for i, c in enumerate(line):
        if q:
            if c == q:
                q = None
            elif c == "\\" and q == '"':
                continue
        elif c in "'\"":
            q = c
        elif c == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i], line[i + 1:]
    return line, ""


def expand_vars(line, vars_):
    return re.sub(r"\$\{?([A-Za-z_]\w*)\}?", lambda m: vars_.get(m.group(1), m.group(0)), line)


def map_path(p, outmap):
    for old, new in outmap.items():
        if p == old or p.startswith(old.rstrip("/") + "/"):
            return new + p[len(old.rstrip("/")):]
    return p


def difflib_close(s, pool):
    near = difflib.get_close_matches(s, pool, n=1, cutoff=0.6)
    return near[0] if near else None


def main(argv):
    if len(argv) != 3:
        print("usage: test_docs.py SOURCE_DIR LOCKLAB_BIN", file=sys.stderr)
        return 2
    # ctest's timeout sends SIGTERM: leave through the finally, which stops any cluster
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    c = Checker(argv[1], argv[2])
    try:
        fails = c.main()
    finally:
        c.cleanup()
    print("test_docs: %d failed" % fails if fails else "test_docs: all passed")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
