#!/usr/bin/python3
"""run_golden_tests.py — IR golden tests for the passes.

Every tests/passes/*.gir file is one test. Its directive `#! pass NAME`
names a pass of the compile pipeline; the driver runs
`graphc dump FILE --print-after=NAME` (from the test's folder, so FILE is the
bare file name) and compares stdout byte for byte with the sibling file
FILE-without-.gir + `.expected`. A test whose directives include
`#! expect-error: MSG` must instead make that command exit with status 1
and print "FILE: MSG" on stderr.

A test with the directive `#! check-numeric` also proves that the pass kept
the graph's meaning: the dump (which the text IR parser reads back; keep the
test's constants at most 64 elements, or the dump elides them) and the
original file are both run by `graphc run` (the reference interpreter) on
the same seeded random inputs, and every output must agree within
1e-5 + 1e-4 * |x| (integers and bools exactly).

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
import tempfile
from pathlib import Path

import numpy as np

PASS_RE = re.compile(r"^#!\s*pass\s+(\S+)\s*$", re.M)
ERR_RE = re.compile(r"^#!\s*expect-error:\s?(.*?)\s*$", re.M)
NUMERIC_RE = re.compile(r"^#!\s*check-numeric\s*$", re.M)
INPUT_RE = re.compile(r"^\s*input\s+%(\S+?)\s*:\s*(\w+)\[([0-9,\s]*)\]", re.M)
NP_DTYPES = {"f32": np.float32, "f64": np.float64, "f16": np.float16, "i8": np.int8, "u8": np.uint8,
             "i16": np.int16, "i32": np.int32, "i64": np.int64, "bool": np.bool_}
TIMEOUT = 120


def check_numeric(graphc, f, dump):
    """Runs f and its dump on the same random inputs; None or the failure text."""
    if "<elided" in dump:
        return "check-numeric: the dump elides a constant (keep constants at most 64 elements)"
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory(prefix="golden-") as tmp:
        tmp = Path(tmp)
        ins = []
        for i, (name, dt, dims) in enumerate(INPUT_RE.findall(f.read_text())):
            if dt not in NP_DTYPES:
                return f"check-numeric: input %{name} has dtype {dt}, which the check does not generate"
            shape = tuple(int(x) for x in dims.split(",") if x.strip())
            if dt.startswith("f"):
                a = rng.standard_normal(shape).astype(NP_DTYPES[dt])
            elif dt == "bool":
                a = rng.integers(0, 2, shape).astype(np.bool_)
            else:
                a = rng.integers(-5, 6, shape).astype(NP_DTYPES[dt])
            path = tmp / f"in{i}.npy"
            np.save(path, a, allow_pickle=False)
            ins.append(str(path))
        (tmp / "after.gir").write_text(dump)
        outs = []
        for model, out in ((str(f), tmp / "before"), (str(tmp / "after.gir"), tmp / "after")):
            p = subprocess.run([graphc, "run", model, str(out)] + ins, stdin=subprocess.DEVNULL,
                               capture_output=True, text=True, errors="replace", timeout=TIMEOUT)
            if p.returncode != 0:
                return f"check-numeric: graphc run {Path(model).name} failed: {p.stderr.strip()}"
            outs.append(sorted(out.glob("output_*.npy")))
        if len(outs[0]) != len(outs[1]):
            return f"check-numeric: {len(outs[0])} outputs before the pass, {len(outs[1])} after"
        for a_path, b_path in zip(*outs):
            a, b = np.load(a_path), np.load(b_path)
            if a.dtype != b.dtype or a.shape != b.shape:
                return f"check-numeric: {a_path.name} is {a.dtype}{list(a.shape)} before, {b.dtype}{list(b.shape)} after"
            if a.dtype.kind == "f":
                a64, b64 = a.astype(np.float64), b.astype(np.float64)
                ok = np.isclose(b64, a64, rtol=1e-4, atol=1e-5, equal_nan=True).all()
                diff = float(np.nanmax(np.abs(a64 - b64))) if a.size else 0.0
            else:
                ok, diff = np.array_equal(a, b), None
            if not ok:
                return f"check-numeric: {a_path.name} differs before/after the pass (max abs diff {diff})"
    return None


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
        return check_numeric(graphc, f, p.stdout) if NUMERIC_RE.search(text) else None
    if not exp_path.exists():
        return f"missing {exp_path.name} (write it with --update, then check it by hand)"
    exp = exp_path.read_text()
    if p.stdout == exp:
        return check_numeric(graphc, f, p.stdout) if NUMERIC_RE.search(text) else None
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
