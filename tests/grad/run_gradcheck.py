#!/usr/bin/python3
"""run_gradcheck.py — gradient checks of every differentiable op.

Cases are text-IR graphs: the dedicated ones in tests/grad/cases/**/*.gir
(randomized shapes with broadcasting and attributes, written by
gen_cases.py at test time into WORK/generated, plus hand-written ones) and
every positive op test in tests/ops/**/*.gir. For each case the driver

  1. writes seeded random inputs (seed: the file name and --seed; `#! range
     %x LO HI` directives as in tests/run_op_tests.py; `#! grad-range` takes
     precedence, for ops that need inputs away from a kink);
  2. runs `graphc gradcheck FILE in.npy...`: the probe loss (every float
     output times a fixed random tensor, summed), autodiff in the f64
     interpreter against central finite differences (eps 1e-6) for every
     float input and float constant of rank >= 1, |analytic - numeric| <=
     1e-5 + 1e-3 |numeric|;
  3. for the dedicated cases (and with --compile for all), compiles the same
     gradient graph to C (`graphc compile --grad --loss=probe --wrt=...
     --emit-main`), builds and runs it, and compares every output (loss and
     gradients) with `graphc run --grad` (the interpreter) within 1e-4 +
     1e-3 |expected|.

An op test whose graph has an op without a gradient is NOGRAD, one without
a float input or constant NOPARAM (listed with --only, not counted as
passes); one marked `#! no-gradcheck REASON` is SKIP. Every op
that `graphc ops` lists with a gradient must occur in at least one passing
case, or the run fails. One line per failure, then the counts; exit status 1
on any failure.
"""
import argparse
import concurrent.futures
import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT / "tests"))
import run_op_tests as rot  # noqa: E402  (input parsing and generation, comparison)

GRANGE_RE = re.compile(r'^#!\s*grad-range\s+%(' + rot.NAME + r')\s+(\S+)\s+(\S+)\s*$', re.M)
SKIP_RE = re.compile(r'^#!\s*no-gradcheck\s*(.*)$', re.M)
CONST_RE = re.compile(r'^\s*const\s+%(' + rot.NAME + r')\s*:\s*([a-z0-9]+)\s*\[([^\]]*)\]', re.M)
OP_RE = re.compile(r'=\s*([A-Z][A-Za-z0-9]*)\(')
FLOATS = ("f32", "f64")
STRICT = "-O1 -std=c99 -Wall -Wextra -Werror -pedantic -Wdouble-promotion"
SAN = "-fsanitize=address,undefined -fno-sanitize-recover=all"


def params(text, inputs):
    """The parameters gradcheck picks by default: float inputs, then float constants of rank >= 1."""
    names = [n for n, dt, _ in inputs if dt in FLOATS]
    for m in CONST_RE.finditer(text):
        dims = [d for d in re.sub(r"\s", "", m.group(3)).split(",") if d]
        if m.group(2) in FLOATS and dims:
            names.append(rot.unquote(m.group(1)))
    return names


def write_inputs(f, text, work, seed):
    gname, inputs, ranges, _ = rot.parse_test(text)
    ranges.update({rot.unquote(m.group(1)): (rot.number(m.group(2)), rot.number(m.group(3)))
                   for m in GRANGE_RE.finditer(text)})
    h = int.from_bytes(hashlib.sha256(Path(f).name.encode()).digest()[:8], "little")
    rng = np.random.default_rng([h, seed])
    files = []
    for k, (name, dtype, dims) in enumerate(inputs):
        lo, hi = ranges.get(name, (-2.0, 2.0))
        p = work / f"in{k}.npy"
        np.save(p, rot.make_input(rng, dtype, dims, lo, hi))
        files.append(str(p))
    return gname, inputs, files


def check(args, f, compile_c):
    """(status, detail): status PASS, FAIL, NOGRAD or SKIP."""
    text = Path(f).read_text()
    if rot.ERR_RE.match(text.splitlines()[0] if text else ""):
        return None
    m = SKIP_RE.search(text)
    if m:
        return "SKIP", m.group(1).strip()
    work = Path(args.work) / re.sub(r"[^A-Za-z0-9_.-]", "_", str(Path(f).relative_to(ROOT) if Path(f).is_absolute() and ROOT in Path(f).parents else f))
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    gname, inputs, ins = write_inputs(f, text, work, args.seed)
    p = rot.run([args.graphc, "gradcheck", f, *ins])
    if p.returncode != 0:
        if "has no gradient" in p.stderr:
            return "NOGRAD", p.stderr.strip().splitlines()[-1]
        if "has no trainable parameters" in p.stderr or "has no float output" in p.stderr:
            return "NOPARAM", p.stderr.strip().splitlines()[-1]
        return "FAIL", f"gradcheck: {rot.tail(p.stdout + p.stderr, 900)}"
    if not compile_c:
        return "PASS", ""
    wrt = ",".join(params(text, inputs))
    common = ["--grad", "--loss=probe", f"--wrt={wrt}"]
    ref = work / "ref"
    p = rot.run([args.graphc, "run", f, str(ref), *ins, *common])
    if p.returncode != 0:
        return "FAIL", f"graphc run --grad: {rot.describe(p)}"
    out = work / "c"
    name = "m"
    p = rot.run([args.graphc, "compile", f, "-o", str(out), "--emit-main", "--name", name, *common])
    if p.returncode != 0:
        return "FAIL", f"graphc compile --grad: {rot.describe(p)}"
    cflags = STRICT + (" " + SAN if os.environ.get("GRAPHC_SANITIZE") == "1" else "")
    p = rot.run(["make", "-s", "-C", str(out), f"CFLAGS={cflags}", f"LDFLAGS={SAN if 'fsanitize' in cflags else ''}",
                 "BLAS=0"])
    if p.returncode != 0:
        return "FAIL", f"make: {rot.describe(p)}"
    got = work / "got"
    p = rot.run([str(out / f"{name}_main"), str(got), *ins])
    if p.returncode != 0:
        return "FAIL", f"{name}_main: {rot.describe(p)}"
    exp, res = rot.read_outputs(ref), rot.read_outputs(got)
    if sorted(exp) != sorted(res):
        return "FAIL", f"outputs {sorted(res)} != {sorted(exp)}"
    for k in exp:
        why = rot.compare(res[k], exp[k], 1e-4, 1e-3, False)
        if why:
            return "FAIL", f"compiled C vs interpreter, {k}: {why}"
    return "PASS", "compiled"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--graphc", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--seed", type=int, default=0, help="varies the random inputs and generated shapes")
    ap.add_argument("-j", type=int, default=2)
    ap.add_argument("--compile", action="store_true", help="also compile the op-test cases to C")
    ap.add_argument("--only", help="a substring: only cases whose path contains it")
    ap.add_argument("--no-op-tests", action="store_true", help="only tests/grad/cases (and the generated ones)")
    ap.add_argument("--sample", type=int, default=1,
                    help="check one op test in SAMPLE (chosen by a hash of its path; the dedicated cases all "
                         "run) and skip the coverage check: the sanitizer build's shorter run")
    ap.add_argument("--sample-cases", type=int, default=1,
                    help="check one dedicated case in SAMPLE_CASES (by the same hash; with --sample > 1)")
    args = ap.parse_args()
    args.graphc = str(Path(args.graphc).resolve())
    Path(args.work).mkdir(parents=True, exist_ok=True)
    gen = Path(args.work).resolve() / "generated"
    shutil.rmtree(gen, ignore_errors=True)
    subprocess.run([sys.executable, str(ROOT / "tests/grad/gen_cases.py"), str(gen), "--seed", str(args.seed)], check=True)
    dedicated = sorted(str(p) for p in (ROOT / "tests/grad/cases").rglob("*.gir")) + sorted(str(p) for p in gen.rglob("*.gir"))
    optests = [] if args.no_op_tests else sorted(str(p) for p in (ROOT / "tests/ops").rglob("*.gir"))
    def sampled(files, k):
        return [f for f in files
                if int.from_bytes(hashlib.sha256(os.path.relpath(f, ROOT).encode()).digest()[:4], "little") % k == 0]
    if args.sample > 1:
        optests = sampled(optests, args.sample)
        if args.sample_cases > 1:
            dedicated = sampled(dedicated, args.sample_cases)
    cases = [(f, True) for f in dedicated] + [(f, args.compile) for f in optests]
    if args.only:
        cases = [c for c in cases if args.only in c[0]]
    os.chdir(ROOT)
    results = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.j) as ex:
        futs = {ex.submit(check, args, os.path.relpath(f, ROOT), c): f for f, c in cases}
        for fut in concurrent.futures.as_completed(futs):
            r = fut.result()
            if r:
                results[futs[fut]] = r
    counts = {}
    covered = set()
    for f in sorted(results):
        st, why = results[f]
        counts[st] = counts.get(st, 0) + 1
        rel = os.path.relpath(f, ROOT)
        if st == "FAIL":
            print(f"FAIL {rel}: {why}")
        elif st == "PASS":
            covered.update(OP_RE.findall(Path(f).read_text()))
        elif args.only:
            print(f"{st} {rel}: {why}")
    ops = subprocess.run([args.graphc, "ops"], capture_output=True, text=True, check=True).stdout
    with_grad = [ln.split()[0] for ln in ops.splitlines() if "grad" in ln.split()[2:]]
    missing = [] if args.only or args.sample > 1 else [op for op in with_grad if op not in covered]
    for op in missing:
        print(f"FAIL coverage: op '{op}' has a gradient but no passing gradient check")
    print(", ".join(f"{counts.get(k, 0)} {k.lower()}" for k in ("PASS", "FAIL", "NOGRAD", "NOPARAM", "SKIP"))
          + f"; {len(with_grad)} ops with a gradient, {len(with_grad) - len(missing)} covered")
    return 1 if counts.get("FAIL") or missing else 0


if __name__ == "__main__":
    sys.exit(main())
