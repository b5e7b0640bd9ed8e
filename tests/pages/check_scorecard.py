#!/usr/bin/env python3
"""Hold a scorecard's folder together: scorecard.html against
scorecard.json (and junit.xml when there), the links against the disk.

  check_scorecard.py [--schema FILE] [--dom] [--junit FILE] DIR
  check_scorecard.py [--schema FILE] --sample TEST_SCORECARD

DIR is a folder `locklab scorecard` wrote. Checked:

- scorecard.json against docs/schema/scorecard.schema.json (--schema),
  where python3-jsonschema is installed (Debian's /usr/bin/python3 has it);
- the grid: one cell per row and class of the JSON, in its order, each
  with data-verdict equal to the JSON cell's verdict and the colour class
  v-<verdict> (safe green, unsafe red, mixed striped, incomplete amber, na
  grey, not_run white); a cell with seeds links to the JSON's report (its
  first seed's report.html), one without has no link;
- every link of the page to a report.html points at a file that exists,
  relative to DIR, and every seed's run_dir holds a report.html;
- the answer: the page's last paragraph before the footer reads "Answer: "
  and the JSON's answer.text; the JSON's answer names exactly the rows
  whose every cell that ran was safe in every seed (and none INCOMPLETE),
  worked out again from the cells, in the order of their no-fault P99;
- the JUnit file (--junit FILE, or DIR/junit.xml when there): a testsuite per row, a testcase per cell,
  <failure> exactly for unsafe and mixed cells, <error> for incomplete,
  <skipped> for na and not_run;
- the safe cells whose known result is published unsafe: known_unmet set on
  exactly those, each listed on the page (ul.unmet) with the same sentence.

--dom parses the DOM headless Chromium built (/usr/bin/chromium, or
$CHROMIUM) instead of the file, and fails on any console message.

--sample runs `TEST_SCORECARD --write TMP` (tests/unit/test_scorecard.c:
a hand-built scorecard with an empty report.html per seed), checks TMP
(with --dom when Chromium is there), then checks mutated copies, each of
which must fail: a missing report.html, a cell's verdict changed in the
JSON, a cell's colour changed in the page, the answer changed, a key the
schema does not know, a failure dropped from junit.xml, an unreproduced
finding dropped from the page or from the JSON. TMP is removed
unless LOCKLAB_KEEP_TMP=1.

Exit 0 when every check holds, 1 otherwise, 2 on bad usage. Python 3
standard library, and jsonschema where installed.
"""
import html.parser
import json
import os
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")


class Page(html.parser.HTMLParser):
    """The grid's cells, the page's links and its answer paragraph."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.cells = []  # dicts: attrs, href, in document order
        self.links = []
        self.answer = None
        self.unmet = []  # the text of each item of the list of unreproduced findings
        self._unmet = None  # inside that list: the item's text so far, or ""
        self._cell = None
        self._answer = None
        self._depth = 0

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "td" and "cell" in (a.get("class") or "").split():
            self._cell = {"attrs": a, "href": None}
            self.cells.append(self._cell)
        if tag == "a" and "href" in a:
            self.links.append(a["href"])
            if self._cell is not None and self._cell["href"] is None:
                self._cell["href"] = a["href"]
        if tag == "p" and a.get("data-figure") == "answer":
            self._answer = []
        if tag == "ul" and a.get("class") == "unmet":
            self._unmet = ""
        if tag == "li" and self._unmet is not None:
            self.unmet.append("")

    def handle_endtag(self, tag):
        if tag == "td":
            self._cell = None
        if tag == "ul":
            self._unmet = None
        if tag == "p" and self._answer is not None:
            self.answer = "".join(self._answer)
            self._answer = None

    def handle_data(self, data):
        if self._answer is not None:
            self._answer.append(data)
        if self._unmet is not None and self.unmet:
            self.unmet[-1] += data


class Checks:
    def __init__(self, quiet=False):
        self.failed = []
        self.quiet = quiet

    def fail(self, msg):
        self.failed.append(msg)
        if not self.quiet:
            print("FAIL   " + msg)

    def ok(self, msg):
        if not self.quiet:
            print("ok     " + msg)


def page_text(path, dom, ck):
    if not dom:
        with open(path, encoding="utf-8") as f:
            return f.read()
    cmd = ["timeout", "60", CHROMIUM, "--headless=new", "--no-sandbox", "--disable-gpu",
           "--enable-logging=stderr", "--v=0", "--dump-dom", "file://" + os.path.abspath(path)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        ck.fail(f"chromium exited {p.returncode} on {path}")
    for line in p.stderr.splitlines():
        if ":CONSOLE" in line or "Failed to load resource" in line:
            ck.fail(f"{os.path.basename(path)}: the browser said: {line.strip()}")
    return p.stdout


def check_schema(doc, schema_path, ck):
    try:
        import jsonschema
        from jsonschema import Draft202012Validator
    except ImportError:
        ck.ok("schema not checked: this python3 has no jsonschema")
        return
    with open(schema_path) as f:
        schema = json.load(f)
    Draft202012Validator.check_schema(schema)
    errs = sorted(Draft202012Validator(schema).iter_errors(doc), key=lambda e: list(e.path))
    for e in errs[:20]:
        ck.fail(f"scorecard.json {e.json_path}: {e.message[:200]}")
    if not errs:
        ck.ok(f"scorecard.json matches {os.path.basename(schema_path)}")


def check_grid(d, doc, page, ck):
    want = [(r["label"], c["class"], c) for r in doc["rows"] for c in r["cells"]]
    got = page.cells
    if len(got) != len(want):
        ck.fail(f"scorecard.html has {len(got)} cells, scorecard.json {len(want)}")
    bad = 0
    for (label, cls, c), h in zip(want, got):
        a, where = h["attrs"], f"{label} / {cls}"
        if (a.get("data-row"), a.get("data-class")) != (label, cls):
            ck.fail(f"cell {where}: the page has {a.get('data-row')} / {a.get('data-class')} there")
            bad += 1
            continue
        classes = (a.get("class") or "").split()
        colour = [x for x in classes if x.startswith("v-")]
        if a.get("data-verdict") != c["verdict"] or colour != ["v-" + c["verdict"]]:
            ck.fail(f"cell {where}: verdict {c['verdict']} in the JSON, the page's is "
                    f"data-verdict={a.get('data-verdict')} colour {colour}")
            bad += 1
        if h["href"] != c["report"]:
            ck.fail(f"cell {where}: links to {h['href']}, the JSON's report is {c['report']}")
            bad += 1
    if not bad:
        ck.ok(f"{len(want)} cells: each one's colour and verdict the JSON's, each link its "
              f"first seed's report")


def check_links(d, doc, page, ck):
    missing = 0
    for href in sorted(set(page.links)):
        if href.endswith("report.html") and not os.path.isfile(os.path.join(d, href)):
            ck.fail(f"scorecard.html links to {href}: no such file under {d}")
            missing += 1
    for r in doc["rows"]:
        for c in r["cells"]:
            for x in c["runs"]:
                path = os.path.join(d, x["run_dir"], "report.html")
                if not os.path.isfile(path):
                    ck.fail(f"{r['label']} / {c['class']} seed {x['seed']}: no {path}")
                    missing += 1
    if not missing:
        n = sum(1 for h in page.links if h.endswith("report.html"))
        ck.ok(f"{n} links to a report.html, each there; every seed's folder has one")


def safe_everywhere(row):
    ran = [c for c in row["cells"] if c["state"] == "ran"]
    return (row["not_run"] is None and bool(ran)
            and all(c["verdict"] == "safe" for c in ran))


def check_answer(doc, page, ck):
    text = doc["answer"]["text"]
    if page.answer != "Answer: " + text:
        ck.fail(f"the page's answer is {page.answer!r}, the JSON's {'Answer: ' + text!r}")
    else:
        ck.ok("the page's answer line is the JSON's")
    rows = [r for r in doc["rows"] if safe_everywhere(r)]
    for r in doc["rows"]:
        if r["safe_everywhere"] != safe_everywhere(r):
            ck.fail(f"{r['label']}: safe_everywhere {r['safe_everywhere']}, its cells say "
                    f"{safe_everywhere(r)}")
    base = doc["baseline"]

    def p99(r):
        cell = next((c for c in r["cells"] if c["class"] == base and c["state"] == "ran"), None)
        ps = [x["p99_ms"] for x in (cell["runs"] if cell else []) if x["ran"]]
        return max((p for p in ps if p is not None), default=None)
    order = sorted(rows, key=lambda r: (p99(r) is None, p99(r) or 0))
    names = [x["row"] for x in doc["answer"]["locks"]]
    if names != [r["label"] for r in order]:
        ck.fail(f"the answer names {names}; safe everywhere, by no-fault P99: "
                f"{[r['label'] for r in order]}")
    else:
        ck.ok(f"the answer names the {len(names)} rows safe everywhere, by no-fault P99")
    at = 0
    for n in names:  # the line names them in that order
        at = text.find(n, at)
        if at < 0:
            ck.fail(f"the answer line does not name {n} in its place")
            break
        at += len(n)
    if not names and not text.startswith("no lock stayed safe"):
        ck.fail(f"no row is safe everywhere, yet the answer reads {text!r}")


def check_unmet(doc, page, ck):
    """A safe cell whose known result is published unsafe says so, on the page too."""
    want = []
    for r in doc["rows"]:
        for c in r["cells"]:
            unmet = c["verdict"] == "safe" and c["known"] is not None and c["known_unsafe"]
            if unmet != (c["known_unmet"] is not None):
                ck.fail(f"{r['label']} / {c['class']}: known_unmet {c['known_unmet']!r}, "
                        f"the cell is {c['verdict']} and its known result unsafe: {c['known_unsafe']}")
            if c["known_unmet"] is not None:
                want.append(c["known_unmet"])
    got = [(t.split(": ", 1)[1] if ": " in t else t).strip() for t in page.unmet]
    if got != want:
        ck.fail(f"the page lists the unreproduced findings {got}, the JSON {want}")
    else:
        ck.ok(f"the {len(want)} safe cells a published finding calls unsafe say so, JSON and page")


def check_junit(path, doc, ck):
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as e:
        ck.fail(f"{os.path.basename(path)}: not well-formed XML: {e}")
        return
    suites = root.findall("testsuite")
    if len(suites) != len(doc["rows"]):
        ck.fail(f"junit: {len(suites)} testsuites, {len(doc['rows'])} rows")
    bad = 0
    for s, r in zip(suites, doc["rows"]):
        if s.get("name") != r["label"]:
            ck.fail(f"junit: testsuite {s.get('name')!r} where row {r['label']!r} is")
            bad += 1
        cases = s.findall("testcase")
        for t, c in zip(cases, r["cells"]):
            kinds = sorted(x.tag for x in t if x.tag in ("failure", "error", "skipped"))
            want = {"unsafe": ["failure"], "mixed": ["failure"], "incomplete": ["error"],
                    "na": ["skipped"], "not_run": ["skipped"], "safe": []}[c["verdict"]]
            if t.get("name") != c["class"] or kinds != want:
                ck.fail(f"junit: {r['label']} / {t.get('name')}: {kinds}, the cell is "
                        f"{c['verdict']} ({c['class']})")
                bad += 1
        if len(cases) != len(r["cells"]):
            ck.fail(f"junit: {r['label']}: {len(cases)} testcases, {len(r['cells'])} cells")
            bad += 1
    if not bad:
        ck.ok("junit.xml: a testsuite per row, each cell's outcome as its verdict")


def check_dir(d, schema=None, dom=False, quiet=False, junit=None):
    ck = Checks(quiet)
    try:
        with open(os.path.join(d, "scorecard.json")) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        ck.fail(f"{d}/scorecard.json: {e}")
        return ck
    if schema:
        check_schema(doc, schema, ck)
    page = Page()
    page.feed(page_text(os.path.join(d, "scorecard.html"), dom, ck))
    try:
        check_grid(d, doc, page, ck)
        check_links(d, doc, page, ck)
        check_answer(doc, page, ck)
        check_unmet(doc, page, ck)
    except (KeyError, TypeError) as e:
        ck.fail(f"scorecard.json lacks what the checks read: {e!r}")
    junit = junit or os.path.join(d, "junit.xml")
    if os.path.exists(junit):
        check_junit(junit, doc, ck)
    return ck


# --- the sample and its mutants ---------------------------------------------

def edit_json(path, fn):
    with open(path) as f:
        doc = json.load(f)
    fn(doc)
    with open(path, "w") as f:
        json.dump(doc, f)


def edit_text(path, old, new):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    if old not in text:
        raise KeyError(f"{old!r} not in {path}")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text.replace(old, new, 1))


def first_cell(doc, verdict):
    return next(c for r in doc["rows"] for c in r["cells"] if c["verdict"] == verdict)


def mutants(d):
    js, page, junit = (os.path.join(d, n) for n in ("scorecard.json", "scorecard.html", "junit.xml"))
    with open(js) as f:
        doc = json.load(f)
    mixed = first_cell(doc, "mixed")
    return [
        ("a seed's report.html missing",
         lambda: os.remove(os.path.join(d, mixed["report"]))),
        ("a mixed cell called safe in the JSON",
         lambda: edit_json(js, lambda m: first_cell(m, "mixed").update(verdict="safe"))),
        ("an unsafe cell coloured green on the page",
         lambda: edit_text(page, 'class="cell v-unsafe" data-verdict="unsafe"',
                           'class="cell v-safe" data-verdict="unsafe"')),
        ("another answer in the JSON",
         lambda: edit_json(js, lambda m: m["answer"].update(text="redis, always"))),
        ("a lock left out of the answer",
         lambda: edit_json(js, lambda m: m["answer"]["locks"].pop())),
        ("a key the schema does not know",
         lambda: edit_json(js, lambda m: m.update(surprise=1))),
        ("an unreproduced finding dropped from the page",
         lambda: edit_text(page, '<ul class="unmet">', '<ul class="gone">')),
        ("an unreproduced finding the JSON no longer names",
         lambda: edit_json(js, lambda m: next(c for r in m["rows"] for c in r["cells"]
                                              if c["known_unmet"]).update(known_unmet=None))),
        ("an UNSAFE cell's failure dropped from junit.xml",
         lambda: edit_text(junit, '<failure message=', '<system-err message=')),
    ]


def sample(binary, schema):
    tmp = tempfile.mkdtemp(prefix="locklab-scorecard-page.")
    status = 0
    try:
        d = os.path.join(tmp, "card")
        p = subprocess.run([binary, "--write", d], capture_output=True, text=True)
        if p.returncode != 0:
            print(f"FAIL   {binary} --write {d}: exit {p.returncode}\n{p.stderr}")
            return 1
        dom = os.path.exists(CHROMIUM)
        print(f"== the sample ({'the DOM Chromium built' if dom else 'the file: no Chromium'})")
        if check_dir(d, schema, dom).failed:
            status = 1
        for i, (what, mutate) in enumerate(mutants(d)):
            m = os.path.join(tmp, f"mutant-{i}")
            shutil.copytree(d, m)
            try:
                dict(mutants(m))[what]()
            except (KeyError, StopIteration, OSError) as e:
                print(f"FAIL   self-check: cannot make a copy with {what}: {e!r}")
                status = 1
                continue
            ck = check_dir(m, schema, False, quiet=True)
            if ck.failed:
                print(f"ok     self-check: a copy with {what} fails: {ck.failed[0]}")
            else:
                print(f"FAIL   self-check: a copy with {what} passes")
                status = 1
    finally:
        if os.environ.get("LOCKLAB_KEEP_TMP") == "1":
            print(f"check_scorecard: LOCKLAB_KEEP_TMP=1: kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    return status


def main(argv):
    args, schema, dom, binary, junit = [], None, False, None, None
    it = iter(argv)
    for a in it:
        if a == "--schema":
            schema = next(it, None)
        elif a == "--junit":
            junit = next(it, None)
        elif a == "--dom":
            dom = True
        elif a == "--sample":
            binary = next(it, None)
        elif a.startswith("-"):
            args = None
            break
        else:
            args.append(a)
    if args is None or (binary is None) == (len(args) != 1) or (binary and args):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    if binary:
        status = sample(binary, schema)
    else:
        status = 1 if check_dir(args[0], schema, dom, junit=junit).failed else 0
    print("check_scorecard: " + ("FAILED" if status else "every check holds"))
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
