#!/usr/bin/python3
"""run_op_tests.py — the per-op test driver.

Every tests/ops/**/*.gir file is one test, of one of two kinds:

* A graph that must be rejected: its first line is `#! expect-error: MSG`.
  `graphc compile FILE -o DIR` must exit with status 1, print "FILE: MSG" on
  stderr (FILE exactly as passed on the command line) and leave no DIR behind.

* A graph that must compute the same thing in the reference interpreter and in
  the generated C: the driver reads the `input %x: dtype[dims]` lines, writes
  seeded random inputs as .npy files (seed = hash of the file name, so runs
  repeat), runs `graphc run FILE OUT in0.npy ...`, compiles with
  `graphc compile FILE -o DIR --emit-main --name NAME` (NAME: the file stem
  made a C identifier), builds DIR with make under strict
  C99 warnings (and the sanitizers when GRAPHC_SANITIZE=1; half of the tests
  with BLAS=0, the portable kernels; NAME.c includes the runtime kernels it
  calls, so each test compiles only what its op uses), runs
  DIR/NAME_main OUT2 in0.npy ... and compares every output file: same dtype
  and shape, floats within atol + rtol*|expected| (NaN equals NaN), integers
  and bools exactly.

Directives (comment lines): `#! range %x LO HI` sets input x's random range
(default -2..2; integers LO..HI inclusive), `#! fold` keeps constant folding on
(it is off by default, --no-fold, so ops fed by constants reach the C code),
`#! cuda-layout L` compiles with `--cuda-layout=L` when the target is cuda, and
`#! tol ATOL RTOL` the
tolerances (default 1e-5 1e-5).

`--opt LEVEL` (0 or 2, default 2) compiles at -O0 or -O2; the reference
stays `graphc run` without -O (the graph as loaded), so at -O2 the
optimizing passes are checked against it too.

`--target cuda` compiles with `--target=cuda` instead and builds the runner
with `make emu`: the generated CUDA sources as C99 on graphc's CPU emulation
of CUDA and cuBLAS (runtime/cuda/gc_cuda_emu.h; no GPU needed), compared with
the interpreter the same way. A test whose graph the CUDA backend refuses
("the CUDA backend ...", exit 1, no folder) is counted as refused, not as
passed; `--max-refused N` fails the run when more than N are refused, so the
backend's coverage cannot shrink unnoticed. Error tests run as with C.
`--nvcc-every K` also compiles the NAME.cu of every K-th passing test (in
file order) with nvcc (`make NAME.o`; CUDA_HOME, default /usr/local/cuda):
valid CUDA, checked without a GPU. Without nvcc the run exits with status 77
(ctest's "skipped") before testing anything. nvcc runs with --Werror all-warnings and
the host compiler's -Wall -Wextra, and with -DGC_CUDNN_FUSED -DGC_CUDNN_TIME, which add the
set-up of cuDNN's fused Conv calls and the timed algorithm choice to what is compiled (so
does the --cuda-jit host build below).
`--cuda-jit` compiles with `--target=cuda --cuda-jit` instead: the host code
(NAME.c) launches through the driver API and finds its kernels with the
emulated NVRTC, which `make emu` runs the same way. `--nvrtc TOOL` (with
--cuda-jit) also compiles every passing test's NAME_kernels.cu with NVRTC
for sm_90 (TOOL: the build's nvrtc_check) and builds its host code with the
C compiler against the CUDA headers and libraries (`make NAME_main`, strict
C99, linked, not run); without TOOL (the toolkit was not found at configure
time) the run exits with status 77 before testing anything.

`--every K [--offset R]` runs only the tests whose index in file order is R
mod K (a sample, for CI's time budget); with `--compile-all` every other test
is still compiled (graphc compile, no build and no run), so that a compile
failure or a CUDA refusal anywhere in the folder still counts.

Unless --no-coverage, the driver also checks that every op listed in
ir/ops.def has at least one positive and one `_err_` test. It prints one line
per failure and closes with "N passed, M failed"; the exit status is non-zero
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
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
# The instruction set the generated C is built for, as the generated Makefile picks it:
# -march=native where the compiler takes it (the AVX-512 / AVX2 kernels of runtime/cpu),
# unless GRAPHC_CPU_FLAGS says otherwise ("" builds the portable C kernels; the -O0 ctests
# set it so that both kernel paths run through the suite).
def _cpu_flags():
    if "GRAPHC_CPU_FLAGS" in os.environ:
        return os.environ["GRAPHC_CPU_FLAGS"].split()
    try:
        r = subprocess.run([os.environ.get("CC", "cc"), "-march=native", "-E", "-x", "c", "/dev/null"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return []
    return ["-march=native"] if r.returncode == 0 else []


CPU_FLAGS = _cpu_flags()


def cuda_device():
    """(compute capability as "90", name) of CUDA device 0 as nvidia-smi reports it, or (None, why
    not) -- the --gpu runs of run_onnx_suite.py and torch_models.py ask it."""
    if not shutil.which("nvidia-smi"):
        return None, "nvidia-smi: not installed"
    try:
        p = subprocess.run(["nvidia-smi", "--query-gpu=compute_cap,name", "--format=csv,noheader", "-i", "0"],
                           stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           errors="replace", timeout=60)
    except (OSError, subprocess.SubprocessError) as e:
        return None, f"nvidia-smi: {e}"
    if p.returncode != 0 or "," not in p.stdout:
        return None, "nvidia-smi: " + (" ".join((p.stderr or p.stdout).split())[:200] or "no device")
    cap, name = [x.strip() for x in p.stdout.splitlines()[0].split(",", 1)]
    return cap.replace(".", ""), name
STRICT_CFLAGS = " ".join(["-O1", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-Wdouble-promotion"] + CPU_FLAGS)
SAN_FLAGS = "-fsanitize=address,undefined -fno-sanitize-recover=all"
TIMEOUT = 300  # seconds for any one command

NAME = r'(?:"(?:[^"\\]|\\.)*"|[A-Za-z0-9_.$/\-]+)'
INPUT_RE = re.compile(r'^\s*input\s+%(' + NAME + r')\s*:\s*([a-z0-9]+)\s*\[([^\]]*)\]', re.M)
GRAPH_RE = re.compile(r'^\s*graph\s+(' + NAME + r')\s*\{', re.M)
RANGE_RE = re.compile(r'^#!\s*range\s+%(' + NAME + r')\s+(\S+)\s+(\S+)\s*$', re.M)
TOL_RE = re.compile(r'^#!\s*tol\s+(\S+)\s+(\S+)\s*$', re.M)
FOLD_RE = re.compile(r'^#!\s*fold\s*$', re.M)
LAYOUT_RE = re.compile(r'^#!\s*cuda-layout\s+(auto|nchw|nhwc)\s*$', re.M)
ERR_RE = re.compile(r'^#!\s*expect-error:\s?(.*?)\s*$')

NP_DTYPES = {
    "f32": np.float32, "f64": np.float64, "f16": np.float16, "bf16": np.uint16,
    "i8": np.int8, "u8": np.uint8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
    "u16": np.uint16, "u32": np.uint32, "u64": np.uint64, "bool": np.bool_,
}
INT_DTYPES = ("i8", "u8", "i16", "i32", "i64", "u16", "u32", "u64")


def unquote(name):
    if name.startswith('"'):
        return bytes(name[1:-1], "utf-8").decode("unicode_escape")
    return name


def to_bf16_bits(x):
    """float array -> uint16 bits of the bfloat16 nearest (ties to even)."""
    b = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    b = (b + 0x7FFF + ((b >> 16) & 1)) >> 16
    return b.astype(np.uint16)


def from_bf16_bits(u):
    return (np.asarray(u, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


def number(s):
    """A range bound: an exact int when written as one (u64 needs all 64 bits), else a float."""
    return int(s) if re.fullmatch(r"[+-]?\d+", s) else float(s)


def parse_test(text):
    """Returns (graph name, [(input, dtype, dims)], {input: (lo, hi)}, (atol, rtol))."""
    m = GRAPH_RE.search(text)
    gname = unquote(m.group(1)) if m else None
    inputs = []
    for m in INPUT_RE.finditer(text):
        dims = [int(d) for d in re.sub(r"\s", "", m.group(3)).split(",") if d]
        inputs.append((unquote(m.group(1)), m.group(2), dims))
    ranges = {unquote(m.group(1)): (number(m.group(2)), number(m.group(3))) for m in RANGE_RE.finditer(text)}
    m = TOL_RE.search(text)
    tol = (float(m.group(1)), float(m.group(2))) if m else (1e-5, 1e-5)
    return gname, inputs, ranges, tol


def make_input(rng, dtype, dims, lo, hi):
    if dtype not in NP_DTYPES:
        raise ValueError(f"unknown input dtype '{dtype}'")
    shape = tuple(dims)
    if dtype == "bool":
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if dtype in INT_DTYPES:
        if int(hi) > np.iinfo(np.int64).max:  # beyond the default int64 draw (u64 only)
            return rng.integers(int(lo), int(hi), size=shape, endpoint=True, dtype=np.uint64)
        return rng.integers(int(lo), int(hi), size=shape, endpoint=True).astype(NP_DTYPES[dtype])
    x = rng.uniform(lo, hi, size=shape)
    if dtype == "bf16":
        return to_bf16_bits(x.astype(np.float32))
    return x.astype(NP_DTYPES[dtype])


def run(cmd, cwd=None, env=None):
    try:
        return subprocess.run(cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, timeout=TIMEOUT, text=True, errors="replace")
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(cmd, -999, "", f"timed out after {TIMEOUT}s")


def tail(s, n=600):
    s = s.strip()
    return s if len(s) <= n else "..." + s[-n:]


def describe(p):
    return f"exit {p.returncode}: {tail(p.stderr or p.stdout)}"


def as_comparable(a, bf16):
    """bf16 outputs come back as uint16 bits, as u16 ones do: uint16 is read
    as bf16 in tests whose text mentions bf16 (and compared exactly elsewhere)."""
    if a.dtype == np.uint16 and bf16:
        return from_bf16_bits(a).astype(np.float64), True
    if a.dtype.kind == "f":
        return a.astype(np.float64), True
    return a, False


def compare(got, exp, atol, rtol, bf16):
    """None when got matches exp, else the reason."""
    if got.dtype != exp.dtype:
        return f"dtype {got.dtype} != expected {exp.dtype}"
    if got.shape != exp.shape:
        return f"shape {got.shape} != expected {exp.shape}"
    g, isf = as_comparable(got, bf16)
    e, _ = as_comparable(exp, bf16)
    if not isf:
        bad = g != e
        if bad.any():
            i = np.flatnonzero(bad)[0]
            return f"{bad.sum()} elements differ; first at flat index {i}: got {g.flat[i]} expected {e.flat[i]}"
        return None
    with np.errstate(invalid="ignore", over="ignore"):
        ok = (g == e) | (np.isnan(g) & np.isnan(e)) | (np.abs(g - e) <= atol + rtol * np.abs(e))
    if not ok.all():
        i = np.flatnonzero(~ok)[0]
        return (f"{(~ok).sum()} elements out of tolerance (atol={atol}, rtol={rtol}); first at flat index {i}: "
                f"got {g.flat[i]!r} expected {e.flat[i]!r}")
    return None


def read_outputs(d):
    return {p.name: np.load(p, allow_pickle=False) for p in sorted(Path(d).glob("*.npy"))}


def check_error(args, f, text, work, msg):
    out = work / "out"
    p = run([args.graphc, "compile", f, "-o", str(out), f"-O{args.opt}"])
    if p.returncode != 1:
        return f"expected exit status 1 from graphc compile, got {p.returncode}: {tail(p.stderr)}"
    want = f"{f}: {msg}"
    if want not in p.stderr:
        return f"stderr lacks '{want}'; got: {tail(p.stderr)}"
    if out.exists():
        return f"output folder {out} left behind after an error"
    return None


def c_name(f):
    """The model name a test compiles under: the file stem made a C identifier."""
    cname = re.sub(r"[^A-Za-z0-9_]", "_", Path(f).stem)
    if not re.match(r"[A-Za-z_]", cname):
        cname = "t_" + cname
    return cname[:40].rstrip("_")  # graphc's limit for model names


def compile_test(args, f, fold, cdir, cname):
    """graphc compile of test f into cdir; None, REFUSED or the failure reason."""
    target = [] if args.target == "c" else [f"--target={args.target}"] + (["--cuda-jit"] if args.cuda_jit else [])
    layout = LAYOUT_RE.search(Path(f).read_text()) if args.target == "cuda" else None
    if layout:
        target.append(f"--cuda-layout={layout.group(1)}")
    p = run([args.graphc, "compile", f, "-o", str(cdir), "--emit-main", "--name", cname, f"-O{args.opt}"] + fold + target)
    if p.returncode == 1 and args.target == "cuda" and "the CUDA backend" in p.stderr and not cdir.exists():
        return REFUSED
    if p.returncode != 0:
        return f"graphc compile failed, {describe(p)}"
    return None


def check_compiles(args, f, text, work):
    """--compile-all, a test outside the --every sample: graphc compile only (no build, no run)."""
    m = ERR_RE.match(text.split("\n", 1)[0])
    if m:
        return check_error(args, f, text, work, m.group(1))
    fold = [] if FOLD_RE.search(text) else ["--no-fold"]
    return compile_test(args, f, fold, work / "c", c_name(f))


def check_run(args, f, text, work):
    gname, inputs, ranges, (atol, rtol) = parse_test(text)
    if not gname:
        return "no `graph NAME {` line"
    seed = int.from_bytes(hashlib.sha256(Path(f).name.encode()).digest()[:8], "little")
    rng = np.random.default_rng(seed)
    in_files = []
    for k, (name, dtype, dims) in enumerate(inputs):
        lo, hi = ranges.get(name, (-2.0, 2.0))
        try:
            arr = make_input(rng, dtype, dims, lo, hi)
        except ValueError as e:
            return f"input %{name}: {e}"
        path = work / f"in{k}.npy"
        np.save(path, arr, allow_pickle=False)
        in_files.append(str(path))

    out_ref, out_c, cdir = work / "out_interp", work / "out_c", work / "c"
    out_ref.mkdir()
    out_c.mkdir()
    # Constant folding stays off unless the test asks for it (`#! fold`), so
    # that ops fed only by constants still reach their C emitters.
    fold = [] if FOLD_RE.search(text) else ["--no-fold"]
    p = run([args.graphc, "run", f, str(out_ref)] + fold + in_files)
    if p.returncode != 0:
        return f"graphc run failed, {describe(p)}"
    cname = c_name(f)
    why = compile_test(args, f, fold, cdir, cname)
    if why:
        return why
    if args.target == "cuda":
        cflags = " ".join(["-O1", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic"])
        if os.environ.get("GRAPHC_SANITIZE") == "1":
            cflags += " " + SAN_FLAGS
        p = run(["make", "-s", "-C", str(cdir), f"CFLAGS={cflags}", "emu"])
        if p.returncode != 0:
            return f"make emu failed, {describe(p)}"
        exe = cdir / f"{cname}_main_emu"
        p = run([str(exe), str(out_c)] + in_files)
        if p.returncode != 0:
            return f"{exe.name} failed, {describe(p)}"
        ref, got = read_outputs(out_ref), read_outputs(out_c)
        if not ref or sorted(ref) != sorted(got):
            return f"output files differ: interpreter wrote {sorted(ref)}, emulated CUDA wrote {sorted(got)}"
        for name in ref:
            why = compare(got[name], ref[name], atol, rtol, "bf16" in text)
            if why:
                return f"output {name} (CUDA, emulated): {why}"
        if args.nvcc_every and args.file_index[f] % args.nvcc_every == 0:
            p = run(["make", "-s", "-C", str(cdir), f"NVCC={args.nvcc}",
                     "NVCCFLAGS=-O2 --Werror all-warnings -Xcompiler -Wall,-Wextra -DGC_CUDNN_FUSED -DGC_CUDNN_TIME",
                     f"{cname}.o"])
            if p.returncode != 0:
                return f"nvcc failed, {describe(p)}"
            args.nvcc_done.append(f)
        if args.nvrtc:
            p = run([args.nvrtc, "--arch=sm_90", str(cdir / f"{cname}_kernels.cu")])
            if p.returncode != 0:
                return f"NVRTC failed, {describe(p)}"
            p = run(["make", "-s", "-C", str(cdir), f"CFLAGS={cflags} -DGC_CUDNN_FUSED -DGC_CUDNN_TIME", f"{cname}_main"])
            if p.returncode != 0:
                return f"the --cuda-jit host build (make {cname}_main) failed, {describe(p)}"
            args.nvrtc_done.append(f)
        return None
    cflags, ldflags = STRICT_CFLAGS, ""
    if os.environ.get("GRAPHC_SANITIZE") == "1":
        cflags += " " + SAN_FLAGS
        ldflags = SAN_FLAGS
    # Half of the tests (by seed) build the portable kernels, the rest let the
    # Makefile use OpenBLAS where present, so both paths of the runtime run.
    blas = "0" if seed & 1 else "auto"
    make_vars = [f"CFLAGS={cflags}", f"LDFLAGS={ldflags}", f"BLAS={blas}", "CPU_FLAGS=" + " ".join(CPU_FLAGS)]
    p = run(["make", "-s", "-C", str(cdir)] + make_vars + [f"{cname}_main"])
    if p.returncode != 0:
        return f"make BLAS={blas} failed, {describe(p)}"
    exe = cdir / f"{cname}_main"
    if not exe.exists():
        return f"make did not produce {exe}"
    p = run([str(exe), str(out_c)] + in_files)
    if p.returncode != 0:
        return f"{exe.name} failed, {describe(p)}"

    ref, got = read_outputs(out_ref), read_outputs(out_c)
    if not ref:
        return "graphc run wrote no .npy output"
    if sorted(ref) != sorted(got):
        return f"output files differ: interpreter wrote {sorted(ref)}, compiled program wrote {sorted(got)}"
    for name in ref:
        why = compare(got[name], ref[name], atol, rtol, "bf16" in text)
        if why:
            return f"output {name} (BLAS={blas}): {why}"
    return None


REFUSED = "refused by the CUDA backend"


def run_one(args, f, root_work):
    """Runs test file f; returns None (pass) or the failure reason."""
    text = Path(f).read_text()
    first = text.split("\n", 1)[0]
    rel = os.path.relpath(f, args.dir)
    work = root_work / re.sub(r"[^A-Za-z0-9_.-]", "_", rel)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    m = ERR_RE.match(first)
    try:
        if not in_sample(args, f):
            why = check_compiles(args, f, text, work)
        else:
            why = check_error(args, f, text, work, m.group(1)) if m else check_run(args, f, text, work)
    except Exception as e:  # a driver bug or unreadable output must fail the test, not the run
        why = f"driver error: {type(e).__name__}: {e}"
    if (not why or why == REFUSED) and not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return why


def in_sample(args, f):
    return args.file_index[f] % args.every == args.offset % args.every


def op_names(ops_def):
    return re.findall(r"^\s*OP\(\s*([A-Za-z0-9_]+)\s*,", Path(ops_def).read_text(), re.M)


def coverage_failures(files, ops_def):
    """Ops from ops.def lacking a positive or an `_err_` test file."""
    pos, err = [], []
    for f in files:
        base = Path(f).name.lower()
        text = Path(f).read_text()
        first = text.split("\n", 1)[0]
        (err if "_err_" in base or ERR_RE.match(first) else pos).append((base, text, first))
    fails = []
    for op in op_names(ops_def):
        prefix = op.lower() + "_"
        call = re.compile(r"=\s*" + re.escape(op) + r"\s*\(")
        if not any(b.startswith(prefix) or call.search(t) for b, t, _ in pos):
            fails.append(f"coverage: op '{op}' has no positive test in tests/ops")
        if not any(b.startswith(prefix) or f"({op})" in first for b, _, first in err):
            fails.append(f"coverage: op '{op}' has no `_err_` test in tests/ops")
    return fails


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--graphc", required=True, help="path of the graphc binary")
    ap.add_argument("--dir", default="tests/ops", help="folder searched for *.gir tests (recursively)")
    ap.add_argument("--work", help="scratch folder (default: a temporary one)")
    ap.add_argument("--filter", help="only tests whose path contains this substring")
    ap.add_argument("-j", type=int, default=os.cpu_count() or 1, help="parallel tests")
    ap.add_argument("--keep", action="store_true", help="keep the work folders of passing tests")
    ap.add_argument("--ops-def", default=str(ROOT / "ir" / "ops.def"))
    ap.add_argument("--no-coverage", action="store_true", help="skip the per-op coverage check")
    ap.add_argument("--opt", choices=("0", "2"), default="2", help="compile at -O0 or -O2 (default 2)")
    ap.add_argument("--coverage-only", action="store_true", help="only run the per-op coverage check")
    ap.add_argument("--target", choices=("c", "cuda"), default="c",
                    help="backend (default c); cuda runs the generated CUDA on the CPU emulation")
    ap.add_argument("--every", type=int, default=1,
                    help="run only every K-th test in file order (a sample; the sanitizer build's CUDA run)")
    ap.add_argument("--offset", type=int, default=0,
                    help="with --every K: the sample is the tests whose index in file order is this, mod K")
    ap.add_argument("--compile-all", action="store_true",
                    help="with --every: still compile (graphc compile only) every test outside the sample, so "
                         "that a compile failure or a --max-refused refusal anywhere is caught")
    ap.add_argument("--nvcc-every", type=int, default=0,
                    help="with --target cuda: also compile every K-th passing test's .cu with nvcc")
    ap.add_argument("--cuda-jit", action="store_true",
                    help="with --target cuda: compile with --cuda-jit (kernels by NVRTC at init; emulated here)")
    ap.add_argument("--nvrtc", metavar="TOOL",
                    help="with --cuda-jit: compile each passing test's kernels with TOOL (nvrtc_check) and build "
                         "its host code against CUDA; empty: skip the run (exit 77)")
    ap.add_argument("--max-refused", type=int, default=-1,
                    help="with --target cuda: fail when more tests than this are refused (default: no limit)")
    args = ap.parse_args()
    args.graphc = os.path.abspath(args.graphc)

    files = sorted(str(p) for p in Path(args.dir).rglob("*.gir"))
    failures, passed, refused, compiled = [], 0, [], 0
    args.file_index = {f: i for i, f in enumerate(files)}
    args.nvcc_done, args.nvrtc_done = [], []
    if args.nvrtc is not None:
        if not args.nvrtc or not os.access(args.nvrtc, os.X_OK):
            print("SKIPPED: no nvrtc_check (libnvrtc and nvrtc.h were not found when graphc was configured: "
                  "the CUDA toolkit is not installed); the generated kernels were not compiled with NVRTC")
            return 77
        args.nvrtc = os.path.abspath(args.nvrtc)
    if args.nvcc_every:
        cuda_home = os.environ.get("CUDA_HOME", "/usr/local/cuda")
        args.nvcc = shutil.which("nvcc") or (cuda_home + "/bin/nvcc" if os.access(cuda_home + "/bin/nvcc", os.X_OK) else None)
        if not args.nvcc:
            print(f"SKIPPED: no nvcc on PATH or in {cuda_home}/bin (the CUDA toolkit is not installed); "
                  "the generated CUDA was not compiled with nvcc")
            return 77
    if not args.no_coverage and not args.filter:
        cov = coverage_failures(files, args.ops_def)
        failures += cov
        passed += 2 * len(op_names(args.ops_def)) - len(cov)
    if not args.coverage_only:
        if args.filter:
            files = [f for f in files if args.filter in f]
        if args.every > 1 and not args.compile_all:
            files = [f for f in files if in_sample(args, f)]
        root_work = Path(args.work or tempfile.mkdtemp(prefix="graphc-optests-")).resolve()
        root_work.mkdir(parents=True, exist_ok=True)
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.j)) as pool:
            results = pool.map(lambda f: (f, run_one(args, f, root_work)), files)
            for f, why in results:
                if why == REFUSED:
                    refused.append(f)
                elif why:
                    failures.append(f"FAIL {f}: {why}")
                    print(failures[-1], flush=True)
                elif in_sample(args, f):
                    passed += 1
                else:
                    compiled += 1
        if not args.work and not args.keep and not any(f.startswith("FAIL") for f in failures):
            shutil.rmtree(root_work, ignore_errors=True)
    for line in failures:
        if not line.startswith("FAIL"):
            print(line)
    if args.target == "cuda":
        if args.nvcc_every:
            print(f"nvcc compiled the CUDA of {len(args.nvcc_done)} tests ({args.nvcc})")
        if args.nvrtc:
            print(f"NVRTC compiled the kernels, and cc the host code, of {len(args.nvrtc_done)} tests ({args.nvrtc})")
        print(f"{passed} passed, {len(failures)} failed, {len(refused)} refused by the CUDA backend"
              + (f", {compiled} outside the --every sample compiled only" if compiled else ""))
        if args.max_refused >= 0 and len(refused) > args.max_refused:
            print(f"FAIL: {len(refused)} tests refused, more than --max-refused {args.max_refused}")
            return 1
        return 1 if failures else 0
    print(f"{passed} passed, {len(failures)} failed"
          + (f", {compiled} outside the --every sample compiled only" if compiled else ""))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
