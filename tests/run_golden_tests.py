#!/usr/bin/python3
"""run_golden_tests.py — IR golden tests for the passes.

Every tests/passes/*.gir file is one test. Its directive `#! pass NAME`
names a pass of the compile pipeline; the driver runs
`graphc dump FILE --print-after=NAME` (from the test's folder, so FILE is the
bare file name) and compares stdout byte for byte with the sibling file
FILE-without-.gir + `.expected`. A test whose directives include
`#! expect-error: MSG` must instead make that command exit with status 1
and print "FILE: MSG" on stderr.

Expected files are written once with --update (it writes the current dump of
every test that has a `#! pass` directive) and then CHECKED BY HAND: a golden
file states what the pass must do, so it is read line by line before it is
committed. The driver prints a unified diff for each mismatch and closes with
"N passed, M failed"; the exit status is non-zero on any failure.
"""
import argparse
import difflib
import os
import re
import subprocess
import sys
from pathlib import Path

PASS_RE = re.compile(r"^#!\s*pass\s+(\S+)\s*$", re.M)
ERR_RE = re.compile(r"^#!\s*expect-error:\s?(.*?)\s*$", re.M)
TIMEOUT = 120


def run_test(graphc, f, update):
    """Returns None (pass) or the failure text."""
    text = f.read_text()
    m = PASS_RE.search(text)
    if not m:
        return "no `#! pass NAME` directive"
    cmd = [graphc, "dump", f.name, f"--print-after={m.group(1)}"]
    try:
        p = subprocess.run(cmd, cwd=f.parent, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                           errors="replace", timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        return f"timed out after {TIMEOUT}s"
    e = ERR_RE.search(text)
    if e:
        want = f"{f.name}: {e.group(1)}"
        if p.returncode != 1:
            return f"expected exit status 1, got {p.returncode}; stderr: {p.stderr.strip()}"
        return None if want in p.stderr else f"stderr lacks '{want}'; got: {p.stderr.strip()}"
    if p.returncode != 0:
        return f"graphc dump failed (exit {p.returncode}): {p.stderr.strip()}"
    exp_path = f.with_suffix(".expected")
    if update:
        exp_path.write_text(p.stdout)
        return None
    if not exp_path.exists():
        return f"missing {exp_path.name} (write it with --update, then check it by hand)"
    exp = exp_path.read_text()
    if p.stdout == exp:
        return None
    diff = difflib.unified_diff(exp.splitlines(True), p.stdout.splitlines(True), exp_path.name, "got")
    return "dump differs from the expected file:\n" + "".join(diff).rstrip()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--graphc", required=True, help="path of the graphc binary")
    ap.add_argument("--dir", default=str(Path(__file__).resolve().parent / "passes"),
                    help="folder of *.gir golden tests (default: tests/passes)")
    ap.add_argument("--filter", help="only tests whose file name contains this substring")
    ap.add_argument("--update", action="store_true",
                    help="(re)write the .expected files from the current output; check them by hand")
    args = ap.parse_args()
    graphc = os.path.abspath(args.graphc)
    files = sorted(Path(args.dir).resolve().glob("*.gir"))
    if args.filter:
        files = [f for f in files if args.filter in f.name]
    passed = failed = 0
    for f in files:
        why = run_test(graphc, f, args.update)
        if why:
            failed += 1
            print(f"FAIL {f.name}: {why}", flush=True)
        else:
            passed += 1
    print(f"{passed} passed, {failed} failed")
    return 1 if failed or not files else 0


if __name__ == "__main__":
    sys.exit(main())
