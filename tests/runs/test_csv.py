#!/usr/bin/python3
"""test_csv.py SOURCE_DIR LOCKLAB_BIN - CSV lines that stand alone.

Real short runs on the Redis locklab starts and stops itself:

- `run` of a fault scenario (a holder paused past its ttl: violations)
  with --csv: every line carries the run's verdict, safe, violations,
  invariants_hold, scenario and algorithm, each equal to its report.json's
  figure, text for text; report.json's summary holds the same;
- `run --json -`: the summary on stdout carries them too;
- `compare` of a fault scenario (a holder crashes: a fault window and a
  stuck lock) with --csv and --json FILE: every row carries the scenario,
  the fault windows' cost summed over its run's windows (fault_windows,
  fault_granted, fault_granted_within, fault_failed, fault_ambiguous,
  fault_longest_no_grant_ms, fault_recovered, fault_recovery_ms) and
  stuck_ms, each equal to what its run folder's report.json says (the
  milliseconds as three decimals of report.json's figure), and compare.json
  (what --json writes) holds the same in each row's fault_cost.

The columns that were there before keep their places: the headers are held
whole. Parsed with Python's csv module. Exit 1 on any FAIL.
"""
import csv
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import check_lines  # noqa: E402  (tests/lib)
from check_lines import fail, ok  # noqa: E402

RUN_HEAD = ["operation", "count", "per_second", "mean_ms", "p50_ms", "p90_ms", "p99_ms",
            "p99.9_ms", "p100_ms", "errors", "ambiguous",
            "verdict", "safe", "violations", "invariants_hold", "scenario", "algorithm"]
COMPARE_HEAD = ["algorithm", "verdict", "safe", "violations", "elapsed_s", "steps", "acquired",
                "busy", "errors", "per_second", "p50_ms", "p90_ms", "p99_ms", "p99.9_ms",
                "p100_ms", "fenced_pairs", "rejected_accesses", "invariants_hold", "run_dir",
                "note",
                "scenario", "fault_windows", "fault_granted", "fault_granted_within",
                "fault_failed", "fault_ambiguous", "fault_longest_no_grant_ms",
                "fault_recovered", "fault_recovery_ms", "stuck_ms"]


def locklab(bin_, args, want_rc):
    """Runs locklab; its stdout, or None (said) when the exit is not want_rc."""
    print("ran    locklab " + " ".join(args))
    p = subprocess.run([bin_] + args, capture_output=True, text=True, timeout=120)
    if p.returncode != want_rc:
        fail(f"locklab {' '.join(args)}: exit {p.returncode}, expected {want_rc}\n"
             + p.stderr[-2000:])
        return None
    return p.stdout


def table(text):
    return list(csv.reader(io.StringIO(text, newline=""), strict=True))


def word(b):
    return "true" if b else "false"


def ms(x):
    """A figure of report.json as the CSV writes it: three decimals."""
    return f"{x:.3f}"


def check_run(bin_, tmp):
    out = locklab(bin_, ["run", "scenarios/flash_sale_pause.json", "--duration", "3.5",
                         "--out", os.path.join(tmp, "run"), "--csv"], 0)
    if out is None:
        return
    rep = json.load(open(os.path.join(tmp, "run", "report.json")))
    t = table(out)
    if t[0] != RUN_HEAD:
        fail(f"run: header {t[0]}, expected {RUN_HEAD}")
        return
    print("         " + out.replace("\n", "\n         ").rstrip())
    if [r[0] for r in t[1:]] != list(rep["operations"]):
        fail(f"run: operations {[r[0] for r in t[1:]]}, report.json has {list(rep['operations'])}")
    # a fault run that broke the lock, so safe and violations say something
    if not rep["faults"][0]["fired"] or rep["checker"]["violations"] == 0:
        fail(f"run: the pause did not strike ({rep['faults'][0]['fired']}) or no violation "
             f"({rep['checker']['violations']}): nothing to hold the columns to")
    want = [rep["verdict"], word(rep["safety"]["safe"]), str(rep["checker"]["violations"]),
            word(rep["invariants_hold"]), rep["scenario"]["name"], rep["algorithm"]]
    for r in t[1:]:
        if r[11:] != want:
            fail(f"run: {r[0]}'s {dict(zip(RUN_HEAD[11:], r[11:]))}, report.json's "
                 f"{dict(zip(RUN_HEAD[11:], want))}")
    s = rep["summary"]
    got = [s["verdict"], word(s["safe"]), str(s["violations"]), word(s["invariants_hold"]),
           s["scenario"], s["algorithm"]]
    if got != want:
        fail(f"run: report.json's summary {got}, its own figures {want}")
    if not check_lines.failed:
        ok(f"run: {len(t) - 1} lines, each with report.json's {', '.join(want)}")


def check_json_stdout(bin_, tmp):
    out = locklab(bin_, ["run", "scenarios/flash_sale.json", "--duration", "1",
                         "--out", os.path.join(tmp, "json"), "--json", "-"], 0)
    if out is None:
        return
    if out != open(os.path.join(tmp, "json", "report.json")).read():
        fail("run --json -: stdout is not the run folder's report.json")
    rep = json.loads(out)
    s = rep["summary"]
    want = {"verdict": "PASS", "safe": True, "violations": 0, "invariants_hold": True,
            "scenario": "flash_sale", "algorithm": "redis"}
    got = {k: s.get(k) for k in want}
    if got != want or rep["scenario"]["name"] != s["scenario"] or rep["algorithm"] != s["algorithm"]:
        fail(f"run --json -: summary {got}, expected {want}")
    else:
        ok(f"run --json -: .summary carries {got}")


def cost_of(rep):
    """The compare columns, from one run's report.json."""
    win = [f["availability"] for f in rep["faults"] if f.get("availability")]
    cells = [rep["scenario"]["name"], str(len(win))]
    if win:
        rec = [a["recovery_ms"] for a in win]
        cells += [str(sum(a[k] for a in win)) for k in ("granted", "granted_within", "failed",
                                                        "ambiguous")]
        cells += [ms(max(a["longest_no_grant_ms"] for a in win)), word(None not in rec),
                  ms(max(rec)) if None not in rec else ""]
    else:
        cells += [""] * 7
    return cells + [ms(rep["stuck_locks"]["stuck_ms"])], win


def check_compare(bin_, tmp):
    copy = os.path.join(tmp, "cmp-copy.json")
    out = locklab(bin_, ["compare", "scenarios/flash_sale_crash.json", "--algorithms",
                         "redis,redis-naive", "--duration", "3.5", "--out",
                         os.path.join(tmp, "cmp"), "--csv", "--json", copy], 0)
    if out is None:
        return
    text = open(os.path.join(tmp, "cmp", "compare.json")).read()
    if open(copy).read() != text:
        fail("compare: --json FILE is not compare.json byte for byte")
    cmp = json.loads(text)
    t = table(out)
    if t[0] != COMPARE_HEAD:
        fail(f"compare: header {t[0]}, expected {COMPARE_HEAD}")
        return
    print("         " + out.replace("\n", "\n         ").rstrip())
    if [r[0] for r in t[1:]] != ["redis", "redis-naive"]:
        fail(f"compare: rows {[r[0] for r in t[1:]]}")
        return
    for r, row in zip(t[1:], cmp["algorithms"]):
        rep = json.load(open(os.path.join(r[18], "report.json")))
        want, win = cost_of(rep)
        if r[20:] != want:
            fail(f"compare: {r[0]}'s {dict(zip(COMPARE_HEAD[20:], r[20:]))}, its report.json's "
                 f"{dict(zip(COMPARE_HEAD[20:], want))}")
        # the crash opened a window and left a key stuck: no column holds a bare 0
        if not win or rep["stuck_locks"]["stuck_ms"] <= 0:
            fail(f"compare: {r[0]}: {len(win)} fault windows, stuck_ms "
                 f"{rep['stuck_locks']['stuck_ms']}: nothing to hold the columns to")
        # compare.json (what --json - prints): the same, at its 6 significant digits
        six = lambda x: None if x is None else float(f"{x:.6g}")  # noqa: E731
        rec = [a["recovery_ms"] for a in win]
        jwant = {"windows": len(win),
                 **{k: sum(a[k] for a in win) for k in ("granted", "granted_within", "failed",
                                                        "ambiguous")},
                 "longest_no_grant_ms": six(max(a["longest_no_grant_ms"] for a in win)),
                 "recovered": None not in rec,
                 "recovery_ms": six(max(rec)) if None not in rec else None}
        if row["fault_cost"] != jwant:
            fail(f"compare.json: {r[0]}'s fault_cost {row['fault_cost']}, its report.json's {jwant}")
        if row["stuck_lock_ms"] != six(rep["stuck_locks"]["stuck_ms"]):
            fail(f"compare.json: {r[0]}'s stuck_lock_ms {row['stuck_lock_ms']}, its report.json's "
                 f"stuck_locks.stuck_ms {rep['stuck_locks']['stuck_ms']}")
    if not check_lines.failed:
        ok("compare: each row's scenario, fault cost and stuck_ms are its report.json's, "
           "and compare.json's fault_cost too")


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: test_csv.py SOURCE_DIR LOCKLAB_BIN")
    src, bin_ = sys.argv[1], os.path.abspath(sys.argv[2])
    os.chdir(src)
    tmp = tempfile.mkdtemp(prefix="locklab-csv.")
    try:
        check_run(bin_, tmp)
        check_json_stdout(bin_, tmp)
        check_compare(bin_, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if check_lines.failed:
        print("test_csv: FAILED")
    else:
        print("test_csv: every CSV line carries its run's verdict, and compare's its fault cost")
    check_lines.done()


if __name__ == "__main__":
    main()
