#!/usr/bin/python3
"""run_onnx_suite.py — the ONNX backend node-test conformance harness.

Each test_*/ folder of the ONNX node suite holds model.onnx and
test_data_set_0/{input,output}_N.pb. For every test the harness

  1. compiles the model: `graphc compile model.onnx -o DIR --emit-main --name m`;
  2. builds it fast, without make: m.c (which includes the runtime kernels
     it calls) with `cc -O1 -std=c99 -w` (the portable kernels: no BLAS),
     then m_main.c (the .npy driver) at -O0 and m_weights.S;
  3. converts the inputs (graph inputs in order, initializers excluded) to
     .npy with onnx.numpy_helper, runs m_main, and compares every output with
     output_N.pb: dtype and shape equal; floats within
     1e-5 + 1e-3 * |expected| (NaN matches NaN); integers and bools exactly;
  4. with --interp, also runs `graphc run` and compares the same way.

--opt LEVEL (0 or 2, default 2) compiles at -O0 or -O2. The interpreter
(`graphc run` without -O) runs the graph as loaded at either level, so an
-O0 run has no reason to repeat --interp.

Runtime shapes: a test that feeds a shape operand (Reshape's shape,
Slice's starts, ...) as a runtime graph input compiles as it is when graphc
can bound the dims it decides (data-dependent dims, planned at their
maximum). When nothing in the model bounds such a dim (Resize's scales,
Range's bounds), graphc asks for --max-dim=N: with --max-dim N the harness
then compiles the test again with that flag, and a test that passes only so
is counted as "max-dim", apart from "pass". Where graphc still needs a
shape operand to be a constant ("must be a constant"), or fails even with
--max-dim (several dims at that bound can make a tensor too large), the
harness retries with that test's own input values bound into the model (`--bind
NAME=FILE.npy`): first every input but the first, then every input. A test
that passes only so is counted as "bound".

When an input's test data has another shape than the static shape the model
declares (test_castlike_BFLOAT16_to_FLOAT gives 'like' as (1,) against a
declared (3, 4)), the harness compiles a copy of the model declaring the
data's shape and notes "declared shape of NAME overridden by test data" in
the detail; the status is still pass when the outputs match.

Each test gets one status: pass; max-dim (passes with --max-dim); bound
(passes with shape inputs bound);
unsupported (graphc says the op, a dtype or
a feature is unsupported or the C backend has no emitter for it); error (any
other compile, build or run failure); wrong (an output differs). The summary
counts the statuses over all tests and over the float32-only subset (tests
whose model inputs and outputs are all float32 tensors); --csv writes one row
per test (name, status, detail).

Without --suite the suite is generated into WORK/suite with
../shared/tools/gen_onnx_node_suite.py (the shared folder beside the repo
root) using /usr/bin/python3 and Debian's python3-onnx, unless it is
already there.

--target cuda compiles with --target=cuda (--cuda-jit too with that flag) and
builds m.cu (m.c with --cuda-jit) as C99 on graphc's CPU emulation
(-DGC_CUDA_EMULATE), which needs no GPU; with --gpu it builds each test with
its generated Makefile (nvcc for device 0's architecture, or cc and NVRTC
with --cuda-jit) and runs it on the GPU (exit 77 without one). --build-only
--arch N builds the GPU programs on a machine without a GPU and keeps each
test's folder (program, inputs, state.json); --prebuilt then runs and checks
them where the GPU is, with neither graphc nor a compiler. --f32-only keeps
the tests whose model inputs and outputs are all float32, --expected-only
those --expect names (tests/onnx/expected_pass_cuda.txt is the CUDA list).

--expect FILE (one test name per line, '#' comments) turns the run into a
regression guard: it closes with "N passed, M failed" over the listed tests
and exits non-zero if any of them does not pass. --write-expect FILE writes
the names of the tests that passed in this run, to refresh that list.
"""
import argparse
import concurrent.futures
import csv
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper

ROOT = Path(__file__).resolve().parent.parent.parent
GEN_SCRIPT = ROOT.parent / "shared" / "tools" / "gen_onnx_node_suite.py"
CC = os.environ.get("CC", "cc")
# CPU_FLAGS: the instruction set the generated C is built for (tests/run_op_tests.py says how).
sys.path.insert(0, str(ROOT / "tests"))
from run_op_tests import CPU_FLAGS, cuda_device  # noqa: E402
CFLAGS = ["-O1", "-std=c99", "-w"] + CPU_FLAGS
MAIN_CFLAGS = ["-O0", "-std=c99", "-w"] + CPU_FLAGS
ATOL, RTOL = 1e-5, 1e-3
TIMEOUT = 120  # seconds for any one command

# graphc errors that mean "not supported" rather than "broken".
UNSUPPORTED_RE = re.compile(r"unsupported|not (?:a )?supported|does not support|supports only|no emitter|unknown op|"
                            r"no shape inference|no reference evaluation", re.I)


def run(cmd, cwd=None):
    try:
        return subprocess.run(cmd, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, timeout=TIMEOUT, text=True, errors="replace")
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(cmd, -999, "", f"timed out after {TIMEOUT}s")


def one_line(s, n=300):
    s = " ".join((s or "").split())
    return s if len(s) <= n else s[:n] + "..."


def to_bf16_bits(x):
    b = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    return ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)


def from_bf16_bits(u):
    return (np.asarray(u, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


def value_info(vi):
    """(elem_type or None for non-tensors, name)."""
    t = vi.type
    if t.WhichOneof("value") != "tensor_type":
        return None, vi.name
    return t.tensor_type.elem_type, vi.name


def model_ports(model_path):
    m = onnx.load(str(model_path))
    inits = {i.name for i in m.graph.initializer}
    ins = [value_info(v) for v in m.graph.input if v.name not in inits]
    outs = [value_info(v) for v in m.graph.output]
    return ins, outs


def load_pb(path, elem_type):
    t = TensorProto()
    t.ParseFromString(Path(path).read_bytes())
    a = numpy_helper.to_array(t)
    if elem_type == TensorProto.BFLOAT16 and a.dtype != np.uint16:
        a = to_bf16_bits(a)
    return np.array(a, order="C")  # (ascontiguousarray would make a 0-d array 1-d)


def compare(got, exp, bf16):
    """None when got matches exp, else the reason. bf16: both hold bfloat16
    bits as uint16 (otherwise uint16 is an integer dtype, compared exactly)."""
    if got.dtype != exp.dtype:
        return f"dtype {got.dtype} != expected {exp.dtype}"
    if got.shape != exp.shape:
        return f"shape {got.shape} != expected {exp.shape}"
    if bf16 or got.dtype.kind == "f":
        g = from_bf16_bits(got) if bf16 else got
        e = from_bf16_bits(exp) if bf16 else exp
        g, e = g.astype(np.float64), e.astype(np.float64)
        with np.errstate(invalid="ignore", over="ignore"):
            ok = (g == e) | (np.isnan(g) & np.isnan(e)) | (np.abs(g - e) <= ATOL + RTOL * np.abs(e))
        if not ok.all():
            i = np.flatnonzero(~ok)[0]
            return f"{(~ok).sum()} of {ok.size} elements out of tolerance; first at {i}: got {g.flat[i]!r} expected {e.flat[i]!r}"
        return None
    bad = got != exp
    if bad.any():
        i = np.flatnonzero(bad)[0]
        return f"{bad.sum()} of {bad.size} elements differ; first at {i}: got {got.flat[i]!r} expected {exp.flat[i]!r}"
    return None


def check_outputs(outdir, expected, who):
    """None, or (status, detail) for the outputs written to outdir."""
    for k, (exp, bf16) in enumerate(expected):
        p = outdir / f"output_{k}.npy"
        if not p.exists():
            return "error", f"{who} wrote no {p.name}"
        try:
            got = np.load(p, allow_pickle=False)
        except Exception as e:
            return "error", f"{who}: cannot read {p.name}: {e}"
        why = compare(got, exp, bf16)
        if why:
            return "wrong", f"{who} output {k}: {why}"
    return None


PASSING = ("pass", "max-dim", "bound")


def graphc_failure(p, what):
    msg = one_line(p.stderr or p.stdout)
    status = "unsupported" if p.returncode == 1 and UNSUPPORTED_RE.search(msg) else "error"
    return status, f"{what} (exit {p.returncode}): {msg}"


def run_test(args, test):
    """(status, detail, f32_only) for one test folder."""
    work = args.work / test.name
    if not args.prebuilt:
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
    f32 = False
    try:
        ins, outs = model_ports(test / "model.onnx")
        f32 = all(t == TensorProto.FLOAT for t, _ in ins + outs)
        status, detail = check_test(args, test, work, ins, outs)
    except Exception as e:  # a harness bug or unreadable data fails the test, not the run
        status, detail = "error", f"harness: {type(e).__name__}: {one_line(str(e))}"
    if status in PASSING and not args.keep and not args.prebuilt:
        shutil.rmtree(work, ignore_errors=True)
    return status, detail, f32


NEEDS_CONST_RE = re.compile(r"must be a constant|needs constant inputs")


def override_declared_shapes(test, work, ins):
    """(model path, overridden input names). Where an input's test data has
    another shape than the model's static declaration (test_castlike_*: the
    data gives 'like' as (1,), the model declares (3, 4); CastLike reads only
    its dtype), the test compiles a copy of the model whose input declares
    the data's shape. graphc's --shape cannot do this: it refuses to
    contradict a static dim the model declares (a check users rely on)."""
    model = test / "model.onnx"
    m = onnx.load(str(model))
    inits = {i.name for i in m.graph.initializer}
    changed = []
    for k, (t, name) in enumerate(ins):
        pb = test / "test_data_set_0" / f"input_{k}.pb"
        vi = next((v for v in m.graph.input if v.name == name and v.name not in inits), None)
        if t is None or vi is None or not pb.exists() or not vi.type.tensor_type.HasField("shape"):
            continue
        dims = vi.type.tensor_type.shape.dim
        if not all(d.HasField("dim_value") for d in dims):
            continue  # symbolic dims: not a static declaration
        data = load_pb(pb, t).shape
        if tuple(d.dim_value for d in dims) == tuple(data):
            continue
        del vi.type.tensor_type.shape.dim[:]
        for n in data:
            vi.type.tensor_type.shape.dim.add().dim_value = n
        changed.append(name)
    if not changed:
        return model, []
    patched = work / "model_data_shapes.onnx"
    onnx.save(m, str(patched))
    return patched, changed


def check_test(args, test, work, ins, outs):
    cdir = work / "c"
    data = test / "test_data_set_0"
    if args.prebuilt:  # built by an earlier --build-only run: only run and check
        sp = work / "state.json"
        if not sp.exists():
            return "error", "no prebuilt program (its --build-only run failed or did not include it)"
        expected = [(load_pb(data / f"output_{k}.pb", t), t == TensorProto.BFLOAT16)
                    for k, (t, _) in enumerate(outs)]
        return run_built(args, test, work, test / "model.onnx", json.loads(sp.read_text()), expected)
    model, overridden = override_declared_shapes(test, work, ins)
    note = "; ".join(f"declared shape of {name} overridden by test data" for name in overridden)
    compile_cmd = [args.graphc, "compile", str(model), "-o", str(cdir), "--emit-main", "--name", "m",
                   f"-O{args.opt}"] + args.target_flags
    p = run(compile_cmd)
    max_dim = []
    if p.returncode != 0 and args.max_dim and "--max-dim" in (p.stderr or ""):
        max_dim = [f"--max-dim={args.max_dim}"]
        compile_cmd += max_dim
        p = run(compile_cmd)
    # a test that still fails with --max-dim (its bounds make a tensor too
    # large, say) falls back to bound shape inputs, as one that needs constants
    if p.returncode != 0 and not NEEDS_CONST_RE.search(p.stderr or "") and not max_dim:
        return graphc_failure(p, "graphc compile")
    if any(t is None for t, _ in ins + outs):
        return "unsupported", "non-tensor (sequence/optional) model input or output"
    in_files = []
    for k, (t, _) in enumerate(ins):
        pb = data / f"input_{k}.pb"
        if not pb.exists():
            return "error", f"missing {pb.name}"
        path = work / f"in{k}.npy"
        np.save(path, load_pb(pb, t), allow_pickle=False)
        in_files.append(str(path))
    binds = []
    if p.returncode != 0:  # a shape operand is a runtime input: bind the test's values
        names = [n for _, n in ins]
        for first_free in (1, 0):
            binds = [f"--bind={names[k]}={in_files[k]}" for k in range(first_free, len(ins))]
            p = run(compile_cmd + binds)
            if p.returncode == 0 or not (NEEDS_CONST_RE.search(p.stderr or "") or max_dim):
                break
        if p.returncode != 0:
            return graphc_failure(p, "graphc compile")
        in_files = in_files[: len(ins) - len(binds)]
    expected = [(load_pb(data / f"output_{k}.pb", t), t == TensorProto.BFLOAT16) for k, (t, _) in enumerate(outs)]
    if args.target == "cuda" and not args.cuda_jit and not (cdir / "m.cu").exists():
        return "error", "graphc wrote no m.cu for --target=cuda"

    p = build(args, cdir)
    if p.returncode != 0:
        return "error", f"{'make' if args.gpu_arch else 'cc'} failed (exit {p.returncode}): {one_line(p.stderr)}"
    state = {"in": [Path(f).name for f in in_files], "binds": binds, "max_dim": max_dim, "note": note}
    if args.build_only:
        (work / "state.json").write_text(json.dumps(state))
        return "built", ""
    return run_built(args, test, work, model, state, expected)


def build(args, cdir):
    """Builds cdir/m_main: the C target (or the CUDA target on graphc's CPU emulation) with cc, or
    with a device architecture (--gpu, --build-only --arch) the generated Makefile's m_main (nvcc;
    cc and NVRTC with --cuda-jit)."""
    if args.gpu_arch:
        return run(["make", "-s", "m_main", f"NVCCFLAGS=-O2 -arch=sm_{args.gpu_arch} -cudart shared"], cwd=cdir)
    if args.target == "cuda":  # the generated CUDA as C99 on the emulation (gc_cuda_emu.h)
        src = ["m.c"] if args.cuda_jit else ["-x", "c", "m.cu", "-x", "none"]
        return run([CC] + CFLAGS + ["-DGC_CUDA_EMULATE", "-I.", "-o", "m_main"] + src
                   + ["m_main.c", "m_weights.S", "-lm"], cwd=cdir)
    # the model at -O1, the driver (file I/O, most of the compile time of a small model) at -O0
    p = run([CC] + CFLAGS + ["-I.", "-c", "-o", "m.o", "m.c"], cwd=cdir)
    if p.returncode == 0:
        p = run([CC] + MAIN_CFLAGS + ["-I.", "-o", "m_main", "m.o", "m_main.c", "m_weights.S", "-lm"], cwd=cdir)
    return p


def run_built(args, test, work, model, state, expected):
    """Runs work/c/m_main on the inputs of state (what check_test found) and checks the outputs."""
    cdir = work / "c"
    binds, max_dim, note = state["binds"], state["max_dim"], state["note"]
    in_files = [str(work / f) for f in state["in"]]
    out_c = work / "out_c"
    p = run([str(cdir / "m_main"), str(out_c)] + in_files)
    if p.returncode != 0:
        return "error", f"m_main failed (exit {p.returncode}): {one_line(p.stderr or p.stdout)}"
    bad = check_outputs(out_c, expected, "compiled")
    if bad:
        return bad
    if args.interp:
        out_i = work / "out_interp"
        p = run([args.graphc, "run", str(model), str(out_i)] + binds + max_dim + in_files)
        if p.returncode != 0:
            return graphc_failure(p, "graphc run")
        bad = check_outputs(out_i, expected, "interpreter")
        if bad:
            return bad
    if binds:
        bound = "passes with inputs bound: " + " ".join(b.split("=")[1] for b in binds)
        return "bound", "; ".join(x for x in (bound, note) if x)
    if max_dim:
        return "max-dim", "; ".join(x for x in (f"passes with {max_dim[0]}", note) if x)
    return "pass", note


def find_suite(args):
    if args.suite:
        suite = Path(args.suite)
        if (suite / "node").is_dir() and not list(suite.glob("test_*")):
            suite = suite / "node"
        return suite
    gen = args.work / "suite"
    if not (gen / "node").is_dir():
        print(f"generating the ONNX node suite into {gen} ...", flush=True)
        p = subprocess.run(["/usr/bin/python3", str(GEN_SCRIPT), str(gen)], stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace")
        if p.returncode != 0 or not (gen / "node").is_dir():
            sys.exit(f"suite generation failed (exit {p.returncode}): {one_line(p.stdout, 2000)}")
    return gen / "node"


# A passing status ranks below another when it needs less: a test expected
# to pass as fed fails when it then needs --max-dim or bound inputs.
RANK = {"pass": 0, "max-dim": 1, "bound": 2}


def read_expect(path):
    """(name, status) per line "NAME [STATUS]"; STATUS defaults to pass."""
    rows = []
    for line in Path(path).read_text().splitlines():
        words = line.split("#", 1)[0].split()
        if words:
            rows.append((words[0], words[1] if len(words) > 1 else "pass"))
    return rows


def summary_line(label, rows):
    counts = {s: 0 for s in ("pass", "max-dim", "bound", "unsupported", "error", "wrong", "built")}
    for s in rows:
        counts[s] += 1
    return (f"{label}: {len(rows)} tests: {counts['pass']} pass, {counts['max-dim']} pass with --max-dim, "
            f"{counts['bound']} pass with shape inputs bound, "
            f"{counts['unsupported']} unsupported, "
            f"{counts['error']} error, {counts['wrong']} wrong"
            + (f", {counts['built']} built (not run)" if counts["built"] else ""))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--graphc", default=str(ROOT / "build" / "graphc"), help="path of the graphc binary")
    ap.add_argument("--suite", help="folder holding the test_*/ folders (default: generate into WORK/suite)")
    ap.add_argument("--work", help="scratch folder (default: a temporary one)")
    ap.add_argument("--filter", help="only tests whose name contains this substring")
    ap.add_argument("--every", type=int, default=1, help="only every N-th test (after --filter, in name order; "
                    "the sanitizer build's sample); --expect then checks those")
    ap.add_argument("--offset", type=int, default=0, help="with --every N: start at the test of this index (mod N)")
    ap.add_argument("-j", type=int, default=os.cpu_count() or 1, help="parallel tests")
    ap.add_argument("--csv", help="write name,status,detail per test to this file")
    ap.add_argument("--interp", action="store_true", help="also check the reference interpreter (graphc run)")
    ap.add_argument("--opt", choices=("0", "2"), default="2", help="compile at -O0 or -O2 (default 2)")
    ap.add_argument("--max-dim", type=int, help="compile again with --max-dim=N a test that graphc asks it for "
                    "(the bound of data-dependent dims nothing in the model bounds); counted as max-dim")
    ap.add_argument("--expect", help="file of test names that must pass (regression guard)")
    ap.add_argument("--write-expect", metavar="FILE",
                    help="write the names of the passing tests to FILE (to refresh the --expect list)")
    ap.add_argument("--keep", action="store_true", help="keep the work folders of passing tests")
    ap.add_argument("-v", "--verbose", action="store_true", help="one line per test")
    ap.add_argument("--target", choices=("c", "cuda"), default="c",
                    help="backend (default c); cuda runs the generated CUDA on graphc's CPU emulation (C99, "
                         "-DGC_CUDA_EMULATE), or on the GPU with --gpu")
    ap.add_argument("--cuda-jit", action="store_true", help="with --target cuda: compile with --cuda-jit")
    ap.add_argument("--gpu", action="store_true",
                    help="with --target cuda: build each test with its Makefile (nvcc -arch for device 0; cc "
                         "and NVRTC with --cuda-jit) and run it on the GPU; exit 77 without a CUDA device")
    ap.add_argument("--build-only", action="store_true",
                    help="compile and build every test, keep its work folder (program, inputs, state.json) and "
                         "run nothing: with --target cuda --arch N, GPU programs built on a machine without one")
    ap.add_argument("--arch", help="with --build-only: nvcc -arch=sm_ARCH for the GPU programs (e.g. 90)")
    ap.add_argument("--prebuilt", action="store_true",
                    help="run and check the programs an earlier --build-only run left in --work (no graphc, no "
                         "compiler needed)")
    ap.add_argument("--expected-only", action="store_true",
                    help="with --expect: run only the tests the file names")
    ap.add_argument("--f32-only", action="store_true",
                    help="run only the tests whose model inputs and outputs are all float32 tensors")
    args = ap.parse_args()
    args.graphc = os.path.abspath(args.graphc)
    if args.target != "cuda" and (args.cuda_jit or args.gpu or args.arch):
        sys.exit("--cuda-jit, --gpu and --arch need --target cuda")
    if args.arch and not args.build_only:
        sys.exit("--arch goes with --build-only (--gpu takes device 0's)")
    if (args.build_only or args.prebuilt) and not args.work:
        sys.exit("--build-only and --prebuilt need --work")
    if args.expected_only and not args.expect:
        sys.exit("--expected-only needs --expect")
    args.target_flags = [] if args.target == "c" else ["--target=cuda"] + (["--cuda-jit"] if args.cuda_jit else [])
    args.gpu_arch = args.arch.replace("sm_", "") if args.arch else None
    if args.gpu:
        cap, name = cuda_device()
        if cap is None:
            print(f"SKIPPED: no CUDA device ({name})")
            return 77
        args.gpu_arch = args.gpu_arch or cap
        print(f"# on the GPU: {name}, sm_{cap}", flush=True)
    if not args.prebuilt and not os.access(args.graphc, os.X_OK):
        sys.exit(f"graphc binary not found: {args.graphc} (pass --graphc PATH)")
    temp_work = not args.work
    args.work = Path(args.work or tempfile.mkdtemp(prefix="graphc-onnx-")).resolve()
    args.work.mkdir(parents=True, exist_ok=True)

    suite = find_suite(args)
    tests = sorted(p for p in suite.glob("test_*") if p.is_dir() and (p / "model.onnx").exists())
    if args.filter:
        tests = [t for t in tests if args.filter in t.name]
    if args.expected_only:
        named = {n for n, _ in read_expect(args.expect)}
        tests = [t for t in tests if t.name in named]
    if args.f32_only:
        tests = [t for t in tests if all(ty == TensorProto.FLOAT for ty, _ in sum(model_ports(t / "model.onnx"), []))]
    if args.every > 1:
        tests = tests[args.offset % args.every::args.every]
    if not tests:
        sys.exit(f"no test_*/model.onnx under {suite}")
    t0 = time.time()
    results = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.j)) as pool:
        futs = {pool.submit(run_test, args, t): t.name for t in tests}
        for f in concurrent.futures.as_completed(futs):
            name = futs[f]
            results[name] = f.result()
            if args.verbose:
                st, det, _ = results[name]
                print(f"{st:11} {name}" + (f": {det}" if det else ""), flush=True)

    names = sorted(results)
    if args.csv:
        with open(args.csv, "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["name", "status", "detail"])
            for n in names:
                w.writerow([n, results[n][0], results[n][1]])
    print(summary_line("all", [results[n][0] for n in names]))
    print(summary_line("float32-only", [results[n][0] for n in names if results[n][2]]))
    where = "GPU" if args.gpu or args.prebuilt else f"GPU, built for sm_{args.gpu_arch}" if args.gpu_arch else \
        "CPU emulation"
    how = "compiled C" if args.target == "c" else f"CUDA{' --cuda-jit' if args.cuda_jit else ''} on the {where}"
    print(f"({time.time() - t0:.0f} s, -j {args.j}, -O{args.opt}, {how}{' + interpreter' if args.interp else ''})")

    if args.write_expect:
        with open(args.write_expect, "w") as fh:
            fh.write("# ONNX node tests that must pass (tests/onnx/run_onnx_suite.py --expect): NAME alone must\n"
                     "# pass as fed; NAME max-dim may need --max-dim, NAME bound its shape inputs bound.\n"
                     "# written by run_onnx_suite.py --write-expect%s%s.\n"
                     % (" --interp" if args.interp else "", f" --max-dim {args.max_dim}" if args.max_dim else ""))
            fh.writelines(n + ("" if results[n][0] == "pass" else " " + results[n][0]) + "\n"
                          for n in names if results[n][0] in PASSING)
    rc = 0
    if args.build_only:
        broken = [n for n in names if results[n][0] != "built"]
        print(f"built {len(names) - len(broken)} of {len(names)} tests into {args.work}"
              + (f"; not built: {len(broken)} (the csv says why)" if broken else ""))
    elif args.expect:
        ran = {t.name for t in tests}
        want = [(n, st) for n, st in read_expect(args.expect)
                if n in ran or (not args.filter and args.every <= 1 and not args.f32_only)]
        failed = []
        for n, st in want:
            if n not in results:
                failed.append(f"FAIL {n}: not in the suite")
            elif results[n][0] not in PASSING or RANK[results[n][0]] > RANK.get(st, 0):
                failed.append(f"FAIL {n}: {results[n][0]} (expected {st}): {results[n][1]}")
        for line in failed:
            print(line)
        print(f"{len(want) - len(failed)} passed, {len(failed)} failed")
        rc = 1 if failed else 0
    if temp_work and not args.keep and rc == 0:
        shutil.rmtree(args.work, ignore_errors=True)
    return rc


if __name__ == "__main__":
    sys.exit(main())
