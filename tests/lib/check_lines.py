"""check_lines.py - the FAIL/ok lines of the Python checks the shell tests
run (tests/runs/*.sh: run_test.sh's fail/ok are the shell side's), and
whether one failed: their exit status. Imported with tests/lib on sys.path
(the scripts run from the source folder)."""
import sys

failed = False


def fail(msg):
    global failed
    failed = True
    print("FAIL   " + msg)


def ok(msg):
    print("ok     " + msg)


def done():
    """Exit 1 once a check failed, else 0."""
    sys.exit(1 if failed else 0)
