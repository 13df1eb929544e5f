#!/usr/bin/python3
"""cpu_vs_torch.py — inference time of graphc's generated C against PyTorch on the CPU, batch 1,
side by side in one run, at 1 thread and at 2 threads.

Models, batch 1, float32, seeded random weights (torch.manual_seed(0); torchvision constructors
with weights=None, nothing is downloaded), every BatchNorm's statistics measured on a seeded
random batch (tests/models/torch_models.py calibrate(), so activations stay O(1)), eval():
  mlp           nn.Sequential(Flatten, Linear(784,512), ReLU, Linear(512,256), ReLU,
                Linear(256,10)), input 1x1x28x28
  lenet         tests/models/torch_models.py lenet(), input 1x1x28x28
  resnet18, mobilenet_v2, resnet50
                torchvision, input 1x3x224x224
  transformer   nn.TransformerEncoder of 2 nn.TransformerEncoderLayer(d_model 256, nhead 8,
                dim_feedforward 1024, batch_first), input 1x128x256
Each is exported once (torch.onnx.export, --opset, default 17, do_constant_folding=True,
TrainingMode.EVAL) into WORK/<model>/model.onnx; later runs with the same --work reuse the
export when its key (model, opset, seed) matches. Then, per model:

  graphc   `graphc compile model.onnx -o WORK/<model>/c --name m`, `make -C WORK/<model>/c
           libm.a BLAS=<--blas, default 0>` with the generated Makefile's default CFLAGS
           (read from its `CFLAGS ?=` line and printed; CFLAGS is removed from make's
           environment) or --cflags, and bench/cpu_bench.c compiled with the same CFLAGS,
           -DMODEL=m -I WORK/<model>/c, linked with libm.a (and gc_thread_pool.c from that folder
           when the header defines m_HAS_RUN_PARALLEL). At 1 thread the driver calls m_run_v;
           at T > 1 m_run_v_parallel with the bundled pthread pool of T threads. Until the
           generated header defines m_HAS_RUN_PARALLEL, graphc's T > 1 times print as n/a.
  PyTorch  torch.jit.freeze(torch.jit.trace(module, x)) of the same eval module, run under
           torch.no_grad(), torch.set_num_threads(T), and openblas_set_num_threads(T) on the
           OpenBLAS library PyTorch loaded (Debian's torch calls OpenBLAS for Linear/MatMul;
           its pthread build otherwise uses every core), 3 untimed runs after freezing.

Correctness guard, before timing, at every thread count graphc runs at: the driver runs once on
the input PyTorch gets (seeded standard normal, written raw to WORK/<model>/in.bin) and writes
its outputs; they are compared with the eager module's output: the max abs diff must be
<= 1e-5 + 1e-3 * max|PyTorch output|, else the row is marked FAILED (it is still timed).

Timing: the number of runs per block, REPS (--reps, or chosen so one block of the slower side
takes about 0.75 s, 0.25 s with --quick; at least 3, 2 with --quick), is set per model and
thread count from a short measurement of both sides. Then --blocks rounds (default 5, 2 with
--quick), each taking every thread count in turn (so a slow spell of the shared machine weighs
on 1 and 2 threads alike, and the speedups compare neighbouring blocks), alternating: a graphc block (a fresh cpu_bench process: one untimed warm-up run, then
REPS runs timed inside the process with clock_gettime(CLOCK_MONOTONIC)) and a PyTorch block
(one untimed run, then REPS runs, each timed with time.perf_counter()). Each side's figure is
the median over all its timed runs. The child gets OMP_NUM_THREADS, MKL_NUM_THREADS and
OPENBLAS_NUM_THREADS = T; OPENBLAS_CORETYPE is taken from the environment for both sides
(PyTorch in this process, graphc's driver as a child) and printed ("unset" when unset).

Prints, per thread count, a table: model, graphc median ms, PyTorch median ms, graphc / PyTorch,
and for T > 1 the speedup of graphc (and of PyTorch) over its own 1-thread median, plus the
correctness guard's max abs diff. Then for resnet18, mobilenet_v2 and resnet50 the compute rate: 2 x MACs of
every Conv, Gemm and MatMul of the ONNX graph (shapes from onnx.shape_inference, counted here in
Python) divided by each side's median, and the fraction of the peak, T x the single-thread peak
measured by bench/fma_peak.c (compiled here with -O2 -march=native: 12 independent AVX-512 or
AVX2 FMA chains, about 1 s; read at the start and again after each model's timed blocks, and the
highest reading is used, so that a reading taken while the shared machine is slow cannot flatter
the fraction; all readings are printed) or given by --peak-gflops. Last, per model, the lower bound of a
1-thread inference on this core: the larger of its FLOPs at the peak and the time to read its
weights (the ONNX initializers) once at the rate bench/read_bw.c measures for a buffer of that
size read again and again (from L2, L3 or memory, whichever holds it), and that bound divided by
PyTorch's 1-thread median: no implementation with these weights can reach a lower ratio. The exit
status is 1 when any row failed (the guard, or a compile/build/run error).
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "models"))
import torch_models  # noqa: E402

SEED = 0
ATOL, RTOL = 1e-5, 1e-3  # max abs diff <= ATOL + RTOL * max|PyTorch output|
FLOP_MODELS = ("resnet18", "mobilenet_v2", "resnet50")
EXPORT_VERSION = 1  # part of the export cache key: bump when a model definition changes


# ---- the models ---------------------------------------------------------------------------------

def mlp():
    import torch.nn as nn
    return nn.Sequential(nn.Flatten(), nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 256), nn.ReLU(),
                         nn.Linear(256, 10)), (1, 1, 28, 28)


def transformer():
    import torch.nn as nn
    layer = nn.TransformerEncoderLayer(d_model=256, nhead=8, dim_feedforward=1024, dropout=0.1, batch_first=True)
    return nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False), (1, 128, 256)


MODELS = {
    "mlp": mlp,
    "lenet": torch_models.lenet,
    "resnet18": torch_models.tv("resnet18"),
    "mobilenet_v2": torch_models.tv("mobilenet_v2"),
    "resnet50": torch_models.tv("resnet50"),
    "transformer": transformer,
}


class Failed(Exception):
    pass


def run(cmd, env=None, cwd=None, ok=(0,)):
    p = subprocess.run([str(c) for c in cmd], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       errors="replace", env=env, cwd=cwd)
    if p.returncode not in ok:
        raise Failed(f"{' '.join(map(str, cmd))}: exit {p.returncode}: {' '.join(p.stderr.split())[-600:]}")
    return p


def child_env(threads):
    env = dict(os.environ)
    for k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        env[k] = str(threads)
    return env


# ---- export and FLOPs ---------------------------------------------------------------------------

def build_module(name, batch=1):
    """(eval module, input ndarray of the given batch) — seeded, the same on every call."""
    import torch
    torch.manual_seed(SEED)
    module, shape = MODELS[name]()
    shape = (batch,) + tuple(shape[1:])
    torch_models.calibrate(module, shape, SEED)
    module.eval()
    x = np.random.default_rng(SEED).standard_normal(shape).astype(np.float32)
    return module, x


def export(name, module, x, folder, opset):
    """Writes folder/model.onnx unless a cached one has the same key."""
    import torch
    key = {"model": name, "opset": opset, "seed": SEED, "shape": list(x.shape), "version": EXPORT_VERSION,
           "torch": torch.__version__}
    meta = folder / "export.json"
    if (folder / "model.onnx").exists() and meta.exists():
        try:
            if json.loads(meta.read_text()) == key:
                return False
        except ValueError:
            pass
    folder.mkdir(parents=True, exist_ok=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(module, (torch.from_numpy(x),), str(folder / "model.onnx"), opset_version=opset,
                          do_constant_folding=True, input_names=["x"], output_names=["y"],
                          training=torch.onnx.TrainingMode.EVAL, **torch_models.legacy_exporter(torch))
    meta.write_text(json.dumps(key))
    return True


def count_flops(path):
    """2 x MACs of every Conv, Gemm and MatMul (shapes from onnx.shape_inference); None when a
    shape is not static."""
    import onnx
    m = onnx.shape_inference.infer_shapes(onnx.load(str(path)))
    g = m.graph
    shapes = {}
    for vi in list(g.input) + list(g.value_info) + list(g.output):
        t = vi.type.tensor_type
        if t.HasField("shape"):
            dims = [d.dim_value if d.HasField("dim_value") else None for d in t.shape.dim]
            shapes[vi.name] = dims
    for init in g.initializer:
        shapes[init.name] = list(init.dims)

    def numel(s):
        if s is None or any(d is None for d in s):
            raise KeyError
        return int(np.prod(s, dtype=np.int64)) if s else 1

    macs = 0
    try:
        for n in g.node:
            if n.op_type == "Conv":
                w = shapes[n.input[1]]
                macs += numel(shapes[n.output[0]]) * numel(w[1:])
            elif n.op_type == "Gemm":
                trans_a = next((a.i for a in n.attribute if a.name == "transA"), 0)
                a = shapes[n.input[0]]
                macs += numel(shapes[n.output[0]]) * a[0 if trans_a else 1]
            elif n.op_type == "MatMul":
                a = shapes[n.input[0]]
                macs += numel(shapes[n.output[0]]) * a[-1]
    except (KeyError, TypeError):
        return None
    return 2 * macs


def weight_bytes(path):
    """Bytes of the model's initializers (its weights as exported)."""
    import onnx
    from onnx import numpy_helper
    return int(sum(numpy_helper.to_array(i).nbytes for i in onnx.load(str(path)).graph.initializer))


# ---- graphc -------------------------------------------------------------------------------------

def makefile_var(cdir, var="CFLAGS"):
    """The default (`VAR ?= ...`) the generated Makefile gives a variable; "" when it has none."""
    text = (cdir / "Makefile").read_text()
    m = re.search(r"^" + var + r"\s*\?=\s*(.*)$", text, re.M)
    return m.group(1).strip() if m else ""


def blas_libs():
    p = subprocess.run(["pkg-config", "--libs", "openblas"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                       text=True)
    return p.stdout.split() or ["-lopenblas"]


def graphc_build(args, folder):
    """Compiles and builds the model and the driver; returns (driver path, CFLAGS, BLAS on,
    has the parallel entry)."""
    cdir = folder / "c"
    shutil.rmtree(cdir, ignore_errors=True)
    run([args.graphc, "compile", folder / "model.onnx", "-o", cdir, "--name", "m"])
    cflags = args.cflags if args.cflags is not None else makefile_var(cdir)
    env = dict(os.environ)
    env.pop("CFLAGS", None)
    make = ["make", "-C", cdir, "-s", f"BLAS={args.blas}"] + ([f"CFLAGS={args.cflags}"] if args.cflags is not None
                                                             else [])
    run(make + ["libm.a"], env=env)
    blas_on = "GCRT_USE_BLAS" in run(make + ["-n", "-B", "m.o"], env=env).stdout
    header = (cdir / "m.h").read_text()
    parallel = re.search(r"#define\s+m_HAS_RUN_PARALLEL\s+1", header) is not None
    srcs = [ROOT / "bench" / "cpu_bench.c"]
    if parallel:
        if not (cdir / "gc_thread_pool.c").exists():
            raise Failed("m.h defines m_HAS_RUN_PARALLEL but gc_thread_pool.c is not in the output folder")
        srcs.append(cdir / "gc_thread_pool.c")
    exe = folder / "cpu_bench"
    run([os.environ.get("CC", "cc")] + cflags.split() + ["-DMODEL=m", f"-I{cdir}"] + srcs
        + [cdir / "libm.a", "-o", exe, "-pthread"] + (blas_libs() if blas_on else []) + ["-lm"])
    return exe, cflags, blas_on, parallel


def graphc_times(exe, threads, reps, folder):
    p = run([exe, threads, reps, folder / "in.bin"], env=child_env(threads))
    return [float(v) for v in p.stdout.split()]


def compare(got, expected):
    """(max abs diff, ok)."""
    diff = float(np.max(np.abs(got.astype(np.float64) - expected.astype(np.float64)))) if got.size else 0.0
    scale = float(np.max(np.abs(expected))) if expected.size else 0.0
    return diff, diff <= ATOL + RTOL * scale


def graphc_check(exe, threads, folder, expected):
    out = folder / f"out{threads}.bin"
    run([exe, threads, 0, folder / "in.bin", out], env=child_env(threads))
    raw = np.fromfile(out, dtype=np.float32)
    if raw.size != expected.size:
        raise Failed(f"graphc wrote {raw.size} floats, PyTorch's output has {expected.size}")
    return compare(raw.reshape(expected.shape), expected)


# ---- PyTorch ------------------------------------------------------------------------------------

class TorchThreads:
    """torch.set_num_threads plus openblas_set_num_threads on the OpenBLAS PyTorch loaded."""

    def __init__(self, torch):
        import ctypes
        self.torch, self.blas, self.blas_path = torch, None, None
        try:
            with open("/proc/self/maps") as f:
                paths = {line.split()[-1] for line in f if "openblas" in line.split()[-1] and ".so" in line}
            for p in sorted(paths, key=lambda p: ("libopenblas" not in p, p)):  # the library, not a wrapper
                if os.path.exists(p):
                    lib = ctypes.CDLL(p)
                    if hasattr(lib, "openblas_set_num_threads"):
                        self.blas, self.blas_path = lib, p
                        break
        except OSError:
            pass

    def set(self, threads):
        self.torch.set_num_threads(threads)
        if self.blas is not None:
            self.blas.openblas_set_num_threads(threads)


def torch_block(fn, reps):
    fn()
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1e3)
    return times


# ---- main ---------------------------------------------------------------------------------------

def fmt(v, spec):
    return "n/a" if v is None else format(v, spec)


def measure_peak(work):
    exe = work / "fma_peak"
    if not hasattr(measure_peak, "built"):  # built once per run, read several times
        run([os.environ.get("CC", "cc"), "-O2", "-march=native", ROOT / "bench" / "fma_peak.c", "-o", exe])
        measure_peak.built = True
    vals = dict(line.split(": ", 1) for line in run([exe]).stdout.splitlines() if ": " in line)
    return float(vals["gflops"]), vals["isa"]


def measure_read_bw(work, sizes):
    """{bytes: GB/s} for reading a buffer of each size again and again (bench/read_bw.c)."""
    exe = work / "read_bw"
    run([os.environ.get("CC", "cc"), "-O2", "-march=native", ROOT / "bench" / "read_bw.c", "-o", exe])
    out = run([exe] + [str(b) for b in sizes]).stdout.splitlines()
    return {b: float(line.split("gbps:")[1]) for b, line in zip(sizes, out)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--graphc", default=str(ROOT / "build" / "graphc"), help="path of the graphc binary")
    ap.add_argument("--work", help="export cache and scratch folder (default: a temporary one, removed afterwards)")
    ap.add_argument("--models", default=",".join(MODELS), help="comma-separated subset of %(default)s")
    ap.add_argument("--threads", default="1,2", help="comma-separated thread counts (default %(default)s)")
    ap.add_argument("--blas", choices=("0", "1", "auto"), default="0",
                    help="the generated Makefile's BLAS= (default 0: graphc's portable kernels)")
    ap.add_argument("--cflags", help="CFLAGS for libm.a and the driver (default: the generated Makefile's)")
    ap.add_argument("--opset", type=int, choices=(13, 17), default=17, help="ONNX opset (default %(default)s)")
    ap.add_argument("--blocks", type=int, help="alternating block pairs per model and thread count (default 5)")
    ap.add_argument("--reps", type=int, help="timed runs per block (default: about 0.75 s of the slower side)")
    ap.add_argument("--peak-gflops", type=float, help="single-thread peak GFLOP/s instead of measuring it")
    ap.add_argument("--quick", action="store_true", help="smoke test: 2 blocks of about 0.25 s")
    args = ap.parse_args()
    args.graphc = os.path.abspath(args.graphc)
    if not os.access(args.graphc, os.X_OK):
        sys.exit(f"graphc binary not found: {args.graphc} (pass --graphc PATH)")
    names = args.models.split(",")
    for n in names:
        if n not in MODELS:
            sys.exit(f"unknown model {n!r} (known: {', '.join(MODELS)})")
    threads_list = [int(t) for t in args.threads.split(",")]
    if any(t < 1 for t in threads_list):
        sys.exit("--threads: counts must be >= 1")
    blocks = args.blocks or (2 if args.quick else 5)
    block_s = 0.25 if args.quick else 0.75
    min_reps = 2 if args.quick else 3

    import torch
    tt = TorchThreads(torch)
    temp_work = not args.work
    work = Path(args.work or tempfile.mkdtemp(prefix="graphc-cpubench-")).resolve()
    work.mkdir(parents=True, exist_ok=True)

    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")),
               "?")
    # the peak is read again after each model's timed blocks and the highest reading is the one used:
    # a reading taken while the shared machine runs slow would flatter the fraction of it reached
    peaks = []
    if args.peak_gflops:
        peak, peak_src = args.peak_gflops, "--peak-gflops"
    else:
        peak, isa = measure_peak(work)
        peaks.append(peak)
        peak_src = f"bench/fma_peak.c, {isa}, -O2 -march=native; the highest of this and a reading after each model"
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True).stdout.strip() or "?"
    print(f"# graphc {commit} ({args.graphc}) vs PyTorch {torch.__version__} (torch.jit.trace + freeze), CPU, "
          f"batch 1, float32; {cpu}, {os.cpu_count()} cores")
    print(f"# OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', 'unset')} (both sides); child "
          f"OMP/MKL/OPENBLAS_NUM_THREADS = T; PyTorch: torch.set_num_threads(T), openblas_set_num_threads(T) "
          f"{'on ' + tt.blas_path if tt.blas else '(no OpenBLAS found in the process)'}")
    print(f"# ONNX opset {args.opset}; graphc make BLAS={args.blas}; {blocks} alternating blocks per model and "
          f"thread count, medians over all timed runs; peak {peak:.1f} GFLOP/s per thread ({peak_src})", flush=True)

    res = {}   # (name, T) -> dict
    info = {}  # name -> dict
    failed = False
    for name in names:
        folder = work / name
        folder.mkdir(parents=True, exist_ok=True)
        module, x = build_module(name)
        with torch.no_grad():
            expected = module(torch.from_numpy(x))
        expected = np.ascontiguousarray(expected.numpy(), dtype=np.float32)
        x.tofile(folder / "in.bin")
        exported = export(name, module, x, folder, args.opset)
        flops = count_flops(folder / "model.onnx")
        inf = info[name] = {"flops": flops, "rate": name in FLOP_MODELS, "wbytes": weight_bytes(folder / "model.onnx"),
                            "error": None}
        t0 = time.time()
        try:
            exe, cflags, blas_on, parallel = graphc_build(args, folder)
            inf.update(cflags=cflags, blas_on=blas_on, parallel=parallel)
            print(f"# {name}: {'exported, ' if exported else 'cached export, '}graphc compile + make + driver "
                  f"{time.time() - t0:.1f} s; CFLAGS=\"{cflags}\"; OpenBLAS {'on' if blas_on else 'off'}; "
                  f"parallel entry {'yes' if parallel else 'no (T > 1: n/a)'}", flush=True)
        except Failed as e:
            inf["error"] = str(e)
            failed = True
            print(f"# {name}: graphc FAILED: {e}", flush=True)
            exe = None
        with torch.no_grad():
            traced = torch.jit.freeze(torch.jit.trace(module, (torch.from_numpy(x),)))
        xt = torch.from_numpy(x)

        def torch_run():
            with torch.no_grad():
                traced(xt)

        # per thread count: the correctness guard and REPS from a probe; then the timed blocks, every
        # thread count's graphc and PyTorch blocks in turn within each round, so a slow spell of the
        # shared machine weighs on all of them alike (the 1T/2T speedups compare blocks minutes apart
        # otherwise)
        g_oks, reps_of, times_of = {}, {}, {}
        for T in threads_list:
            r = res[(name, T)] = {"g": None, "t": None, "diff": None, "ok": None, "reps": None}
            tt.set(T)
            for _ in range(3):
                torch_run()
            g_ok = exe is not None and (T == 1 or parallel)
            if g_ok:
                try:
                    r["diff"], r["ok"] = graphc_check(exe, T, folder, expected)
                    if not r["ok"]:
                        failed = True
                    probe = graphc_times(exe, T, 2, folder)
                except Failed as e:
                    inf["error"] = str(e)
                    r["ok"], failed, g_ok = False, True, False
                    print(f"# {name} T={T}: graphc FAILED: {e}", flush=True)
            t_probe = torch_block(torch_run, 2)
            slow = max(np.median(t_probe), np.median(probe) if g_ok else 0.0)
            reps_of[T] = r["reps"] = args.reps or int(min(100000, max(min_reps, round(block_s * 1e3 / max(slow, 1e-3)))))
            g_oks[T], times_of[T] = g_ok, ([], [])
        for _ in range(blocks):
            for T in threads_list:
                r, (gt, tts) = res[(name, T)], times_of[T]
                if g_oks[T]:
                    try:
                        gt += graphc_times(exe, T, reps_of[T], folder)
                    except Failed as e:
                        print(f"# {name} T={T}: graphc FAILED: {e}", flush=True)
                        r["ok"], failed, g_oks[T] = False, True, False
                        gt.clear()
                tt.set(T)
                tts += torch_block(torch_run, reps_of[T])
        if peaks:
            peaks.append(measure_peak(work)[0])
        for T in threads_list:
            r, (gt, tts), reps = res[(name, T)], times_of[T], reps_of[T]
            r["g"] = float(np.median(gt)) if gt else None
            r["t"] = float(np.median(tts))
            guard = "" if r["diff"] is None else \
                f", check max abs diff {r['diff']:.3g} (scale {np.max(np.abs(expected)):.3g}) " \
                f"{'ok' if r['ok'] else 'FAILED'}"
            print(f"# {name} T={T}: {reps} runs x {blocks} blocks; graphc {fmt(r['g'], '.3f')} ms, "
                  f"PyTorch {r['t']:.3f} ms{guard}", flush=True)

    for T in threads_list:
        print()
        print(f"## {T} thread{'s' if T > 1 else ''}")
        head = f"{'model':14s} {'graphc ms':>10s} {'PyTorch ms':>11s} {'graphc/PyTorch':>15s}"
        if T > 1:
            head += f" {'graphc 1T/' + str(T) + 'T':>13s} {'PyTorch 1T/' + str(T) + 'T':>14s}"
        print(head + "  check (max abs diff)")
        for name in names:
            r = res[(name, T)]
            ratio = r["g"] / r["t"] if r["g"] is not None else None
            line = f"{name:14s} {fmt(r['g'], '10.3f'):>10s} {r['t']:11.3f} {fmt(ratio, '15.3f'):>15s}"
            if T > 1:
                r1 = res.get((name, 1))
                gs = r1["g"] / r["g"] if r1 and r1["g"] is not None and r["g"] is not None else None
                ts = r1["t"] / r["t"] if r1 else None
                line += f" {fmt(gs, '13.2f'):>13s} {fmt(ts, '14.2f'):>14s}"
            if r["ok"] is None:
                check = "n/a" if info[name]["error"] is None else "FAILED (graphc error)"
            else:
                check = f"{'ok' if r['ok'] else 'FAILED'} ({r['diff']:.3g})"
            print(line + "  " + check)

    if peaks:
        peak = max(peaks)
        print()
        print(f"# peak readings (GFLOP/s per thread, at start then after each model): "
              f"{', '.join(f'{p:.1f}' for p in peaks)}; used: {peak:.1f}")
    rate = [n for n in names if info[n]["flops"] and info[n]["rate"]]
    if rate:
        print()
        print(f"## compute rate (2 x MACs of Conv/Gemm/MatMul; peak = T x {peak:.1f} GFLOP/s)")
        print(f"{'model':14s} {'T':>2s} {'GFLOP':>7s} {'graphc GFLOP/s':>15s} {'of peak':>8s} "
              f"{'PyTorch GFLOP/s':>16s} {'of peak':>8s}")
        for name in rate:
            gf = info[name]["flops"] / 1e9
            for T in threads_list:
                r = res[(name, T)]
                g = gf / (r["g"] / 1e3) if r["g"] else None
                t = gf / (r["t"] / 1e3)
                print(f"{name:14s} {T:2d} {gf:7.3f} {fmt(g, '15.2f'):>15s} "
                      f"{fmt(g / (T * peak) if g else None, '8.3f'):>8s} {t:16.2f} {t / (T * peak):8.3f}")
    if 1 in threads_list:
        bw = measure_read_bw(work, sorted({info[n]["wbytes"] for n in names}))
        print()
        print(f"## lower bound of a 1-thread inference (FLOPs at {peak:.1f} GFLOP/s; weights read once at the rate "
              f"bench/read_bw.c measures for their size)")
        print(f"{'model':14s} {'GFLOP':>7s} {'weights MB':>10s} {'read GB/s':>9s} {'compute ms':>10s} {'read ms':>8s} "
              f"{'bound ms':>8s} {'bound/PyTorch':>13s} {'graphc/bound':>12s}")
        for name in names:
            inf, r = info[name], res[(name, 1)]
            gf = inf["flops"] / 1e9 if inf["flops"] else None
            tc = gf / peak * 1e3 if gf else 0.0
            rate_bw = bw[inf["wbytes"]]
            tr = inf["wbytes"] / (rate_bw * 1e9) * 1e3
            bound = max(tc, tr)
            print(f"{name:14s} {fmt(gf, '7.3f'):>7s} {inf['wbytes'] / 1e6:10.2f} {rate_bw:9.1f} {tc:10.3f} {tr:8.3f} "
                  f"{bound:8.3f} {bound / r['t']:13.3f} {fmt(r['g'] / bound if r['g'] else None, '12.2f'):>12s}")
    for name in names:
        if info[name]["error"]:
            print(f"# {name}: {info[name]['error']}")
    if temp_work:
        shutil.rmtree(work, ignore_errors=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
