#!/usr/bin/python3
"""gpu_vs_torch.py — inference latency of graphc's generated CUDA against PyTorch on one GPU,
side by side in one run, batch 1 and 32, fp32 and fp16.

Models: resnet18, mobilenet_v2 and transformer, the definitions of bench/cpu_vs_torch.py (seeded
random weights, BatchNorm statistics calibrated by tests/models/torch_models.py calibrate(), eval();
the transformer is 2 nn.TransformerEncoderLayer, d_model 256, 8 heads, feed-forward 1024, sequence
128), at each batch of --batches (default 1,32; inputs B x 3 x 224 x 224 and B x 128 x 256). Each
(model, batch) is exported once with that static batch (cpu_vs_torch.py's export: opset --opset,
default 17, do_constant_folding, TrainingMode.EVAL) into WORK/<model>_b<B>/model.onnx; later runs
with the same --work reuse the export when its key matches. Then, per precision of --precisions
(default fp32,fp16):

  graphc   `graphc compile model.onnx -o WORK/<model>_b<B>/<precision>/cuda --target=cuda --name m
           [--precision=fp16] [--cuda-layout=L]`, `make -C that/cuda libm.a NVCCFLAGS=...` (the generated Makefile's
           default NVCCFLAGS plus -arch=sm_XY for the device found, sm_90 without one; or
           --nvccflags; CUDA_HOME from the environment, default /usr/local/cuda), and
           bench/gpu_bench.c compiled and linked by nvcc with the same flags against libm.a
           -lcublas -lcudnn. The driver runs as one process per row: m_init on a stream of its
           own (weights copied to the device once, the schedule captured into a CUDA graph),
           the input copied to device buffers once, one run whose output it writes for the
           guard, --warmup untimed runs; each timed run is one m_run (a cudaGraphLaunch) between
           two cudaEvents, waited for before the next. With --variants, several graphc builds of the
           same export (another --cuda-layout, -DGC_CUDNN_FUSED, -DGC_CUDNN_FIND, -DGC_CUDNN_TIME)
           each get a driver and are timed in the same row, alternating with the others and with
           PyTorch: an A/B of graphc's options with PyTorch measured once.
  PyTorch  in this process, the same eval module and input on the GPU under torch.no_grad()
           (module and input .half() for fp16), in three configurations: eager,
           torch.compile(mode="max-autotune") and torch.compile(mode="reduce-overhead") (CUDA
           graphs), each a copy of the module, warmed up with --warmup runs (the first compiles);
           torch.backends.cudnn.benchmark on, TF32 off (graphc's fp32 uses FMA math).
           A configuration that cannot run (torch without CUDA, no torch.compile as in Debian's
           torch 1.13, a compile or run error) prints as "n/a (reason)" and is left out of the
           best; Dynamo's caches are reset after each row.

Correctness guard, before timing: graphc's output on PyTorch's input (seeded standard normal,
written raw to WORK/<model>_b<B>/in.bin) against PyTorch's eager float32 output on the CPU. fp32:
max abs diff <= 1e-5 + 1e-3 * max|PyTorch output| (cpu_vs_torch.py's); fp16: relative L2 error
<= max(1e-2, 1.5 x PyTorch's own error holding the tensors in fp16), tests/models/torch_models.py's
half_guard and half_storage_error. A failed guard marks the row FAILED (it is still timed).

Timing: the same per-run measurement on both sides: event start, one inference, event stop,
synchronize on stop (torch.cuda.Event on PyTorch's current stream), so a run's time is the latency
of one request on an idle GPU, launch costs included. REPS (--reps, or chosen so a block of the
slowest side takes about 0.75 s, 0.25 s with --quick) is set per row from a 2-run probe of every
side. Then --blocks times (default 5, 2 with --quick), alternating: a graphc block (one untimed run,
REPS timed runs in the driver) and a block of each PyTorch configuration (the same). Each figure is
the median over all its timed runs.

Prints the device (cudaGetDeviceProperties, CUDA runtime and driver, cuDNN and cuBLAS versions,
from the driver), torch's version, CUDA and cuDNN, then a markdown table: model, batch, precision,
graphc ms, the three PyTorch configurations' ms, the best PyTorch configuration, graphc / best, the
issue's target (<= 0.8 at batch 1, <= 1.0 at batch 32) and the guard. Exit status 0; 1 when a row
failed (the guard, or a compile, build or run error); 77 (skipped) when there is no CUDA device.

Without a GPU: --build-only does everything up to the built libraries and drivers (nvcc: the
build path works) and stops, exit 0 when every build succeeded; --emu runs the graphc side on
graphc's CPU emulation instead (the generated m.cu compiled as C99 with -DGC_CUDA_EMULATE and the
driver, m_run_host on host buffers) and PyTorch eager on the CPU, so the whole flow (driver,
files, guard, table) runs anywhere; its times are the emulator's, meaningless as speed (defaults:
1 block of 1 run, no warm-up). The script runs under whichever Python has torch, numpy and onnx.
"""
import argparse
import concurrent.futures
import copy
import ctypes
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import cpu_vs_torch as cvt
from cpu_vs_torch import ROOT, Failed, fmt, run
import torch_models  # noqa: E402  (on the path through cpu_vs_torch)

MODELS = ("resnet18", "mobilenet_v2", "transformer")
CONFIGS = ("eager", "max-autotune", "reduce-overhead")
TARGET = {1: 0.8, 32: 1.0}  # issue 11: graphc / best PyTorch at most this, per batch
DEFAULT_ARCH = "90"  # the H100 of issue 11, when no device says otherwise


class NoDevice(Exception):
    pass


# ---- the device ---------------------------------------------------------------------------------

def probe_device():
    """(compute capability "XY", name) of CUDA device 0 through the driver API (libcuda.so.1,
    which PyTorch shares); raises NoDevice with the reason."""
    try:
        cu = ctypes.CDLL("libcuda.so.1")
    except OSError as e:
        raise NoDevice(f"no CUDA driver ({e})")
    n, major, minor = ctypes.c_int(0), ctypes.c_int(0), ctypes.c_int(0)
    r = cu.cuInit(0)
    if r != 0:
        why = ctypes.c_char_p()
        cu.cuGetErrorString(r, ctypes.byref(why))
        raise NoDevice(f"cuInit: {why.value.decode(errors='replace') if why.value else f'CUresult {r}'}")
    if cu.cuDeviceGetCount(ctypes.byref(n)) != 0 or n.value < 1:
        raise NoDevice("the driver reports no device")
    dev = ctypes.c_int(0)
    name = ctypes.create_string_buffer(256)
    if cu.cuDeviceGet(ctypes.byref(dev), 0) != 0 or cu.cuDeviceGetName(name, 256, dev) != 0 \
            or cu.cuDeviceGetAttribute(ctypes.byref(major), 75, dev) != 0 \
            or cu.cuDeviceGetAttribute(ctypes.byref(minor), 76, dev) != 0:  # COMPUTE_CAPABILITY_MAJOR/MINOR
        raise NoDevice("cannot query device 0")
    return f"{major.value}{minor.value}", name.value.decode(errors="replace")


# ---- graphc -------------------------------------------------------------------------------------

# --variants: graphc builds timed side by side in one row; a variant is "default" or tokens joined by
# "+", each a build define or a --cuda-layout value (on top of --cuda-layout/--cudnn-find/--cudnn-fused)
VARIANT_DEFINES = {"fused": "GC_CUDNN_FUSED", "find": "GC_CUDNN_FIND", "time": "GC_CUDNN_TIME"}
VARIANT_LAYOUTS = ("auto", "nchw", "nhwc")


def parse_variants(text):
    """[(name, layout or None, [define, ...])] from --variants; exits with the reason when one is unknown."""
    out = []
    for name in text.split(","):
        layout, defines = None, []
        for tok in ([] if name == "default" else name.split("+")):
            if tok in VARIANT_DEFINES:
                defines.append(VARIANT_DEFINES[tok])
            elif tok in VARIANT_LAYOUTS and layout is None:
                layout = tok
            else:
                sys.exit(f"--variants: {name!r}: unknown or repeated {tok!r} (known: default, or tokens joined by "
                         f"'+' of {', '.join(list(VARIANT_DEFINES) + list(VARIANT_LAYOUTS))}, one layout)")
        if name in (v[0] for v in out):
            sys.exit(f"--variants: {name!r} twice")
        out.append((name, layout, defines))
    return out


def variant_folder(folder, vi, variant):
    """Where variant vi of a row builds: the row's precision folder for the first, a sub-folder for the others."""
    return folder if vi == 0 else folder / ("v_" + variant[0].replace("+", "_"))


def graphc_build(args, model, folder, precision, variant):
    """Compiles model (an ONNX file) for the CUDA target into folder/cuda and builds libm.a and the
    driver with nvcc, or with --emu the driver on the CPU emulation, as variant (parse_variants) asks;
    returns (driver path, the flags it was built with)."""
    cdir = folder / "cuda"
    shutil.rmtree(cdir, ignore_errors=True)
    folder.mkdir(parents=True, exist_ok=True)
    layout = variant[1] or args.cuda_layout
    defines = [d for d, on in (("GC_CUDNN_FIND", args.cudnn_find), ("GC_CUDNN_FUSED", args.cudnn_fused)) if on]
    defines += [d for d in variant[2] if d not in defines]
    dflags = "".join(f" -D{d}" for d in defines)
    run([args.graphc, "compile", model, "-o", cdir, "--target=cuda", "--name", "m"]
        + ([f"--precision={precision}"] if precision != "fp32" else [])
        + ([f"--cuda-layout={layout}"] if layout else []))
    driver = ROOT / "bench" / "gpu_bench.c"
    if args.emu:  # the generated Makefile's emu rule, with gpu_bench.c for m_main.c
        exe = folder / "gpu_bench_emu"
        flags = cvt.makefile_var(cdir, "CFLAGS") + dflags
        run([os.environ.get("CC", "cc")] + flags.split() + ["-DGC_CUDA_EMULATE", "-DMODEL=m", f"-I{cdir}", "-o", exe,
                                                            "-x", "c", cdir / "m.cu", "-x", "none", driver,
                                                            cdir / "m_weights.S", "-lm"])
        return exe, flags
    flags = (args.nvccflags if args.nvccflags is not None
             else f"{cvt.makefile_var(cdir, 'NVCCFLAGS')} -arch=sm_{args.arch}".strip()) + dflags
    env = dict(os.environ)
    for k in ("CFLAGS", "NVCCFLAGS", "NVCC"):
        env.pop(k, None)
    run(["make", "-C", cdir, "-s", "libm.a", f"CUDA_HOME={args.cuda_home}", f"NVCCFLAGS={flags}"], env=env)
    exe = folder / "gpu_bench"
    lib = Path(args.cuda_home) / "lib64"
    run([Path(args.cuda_home) / "bin" / "nvcc"] + flags.split()
        + ["-DMODEL=m", f"-I{cdir}", driver, cdir / "libm.a", "-lcublas", "-lcudnn",
           "-Xlinker", "-rpath", "-Xlinker", lib, "-o", exe])
    return exe, flags


class Driver:
    """A running gpu_bench (one per row): started with the row's input, then one block per call."""

    def __init__(self, exe, inp, folder, warmup):
        self.cmd = f"{exe} {inp} {folder / 'out.bin'} {warmup}"
        self.p = subprocess.Popen([str(exe), str(inp), str(folder / "out.bin"), str(warmup)],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                  errors="replace")
        self.device = self.line()
        if self.line() != "ready":
            raise Failed(f"{self.cmd}: did not say ready")

    def line(self):
        text = self.p.stdout.readline()
        if not text:
            rc = self.p.wait()
            err = " ".join(self.p.stderr.read().split())[-600:]
            raise (NoDevice if rc == 77 else Failed)(f"{self.cmd}: exit {rc}: {err}")
        return text.strip()

    def block(self, reps):
        try:
            self.p.stdin.write(f"{reps}\n")
            self.p.stdin.flush()
        except OSError:  # the driver has exited: line() says how
            pass
        return [float(v) for v in self.line().split()]

    def close(self):
        if self.p.poll() is None:
            try:
                self.p.stdin.close()
                self.p.wait(timeout=120)
            except (OSError, subprocess.TimeoutExpired):
                self.p.kill()
                self.p.wait()


def guard(out_path, expected, precision, half_err):
    """(ok, text) comparing the driver's output file with PyTorch's float32 output."""
    got = np.fromfile(out_path, dtype=np.float32)
    if got.size != expected.size:
        raise Failed(f"graphc wrote {got.size} floats, PyTorch's output has {expected.size}")
    got = got.reshape(expected.shape)
    if precision == "fp32":
        diff, ok = cvt.compare(got, expected)
        return ok, f"max abs diff {diff:.3g}"
    rel, tol = torch_models.half_guard(got, expected, precision, half_err)
    return rel <= tol, f"rel L2 {rel:.3g} {'<=' if rel <= tol else '>'} {tol:.3g}"


# ---- PyTorch ------------------------------------------------------------------------------------

def short(e):
    """One short line for an exception: its type and the start of its first line."""
    first = (str(e).strip().splitlines() or [""])[0]
    return f"{type(e).__name__}: {first[:60]}" if first else type(e).__name__


def torch_configs(torch, module, x, precision, device, warmup, label, chosen=CONFIGS):
    """{config: (callable, None) or (None, reason)}: each configuration built on its own copy of the
    module and warmed up (the compiling run included); one that fails is reported, not run."""
    if device is None:
        return {c: (None, f"torch {torch.__version__} has no CUDA") for c in CONFIGS}
    dtype = torch.float16 if precision == "fp16" else torch.float32
    xin = torch.from_numpy(x).to(device=device, dtype=dtype)
    base = copy.deepcopy(module).to(device=device, dtype=dtype).eval()
    out = {}
    for c in CONFIGS:
        if c not in chosen:
            out[c] = (None, "not run: --configs")
            continue
        if c != "eager" and device == "cpu":
            out[c] = (None, "--emu: CPU, eager only")
            continue
        if c != "eager" and not hasattr(torch, "compile"):
            out[c] = (None, f"torch {torch.__version__} has no torch.compile")
            continue
        t = time.time()
        try:
            mod = base if c == "eager" else torch.compile(copy.deepcopy(base), mode=c)

            def fn(mod=mod):
                with torch.no_grad():
                    return mod(xin)
            for _ in range(max(1, warmup)):
                fn()
            if device == "cuda":
                torch.cuda.synchronize()
            out[c] = (fn, None)
            print(f"# {label} PyTorch {c}: ready in {time.time() - t:.1f} s", flush=True)
        except Exception as e:  # a configuration that cannot run is reported, never counted
            out[c] = (None, short(e))
            print(f"# {label} PyTorch {c}: n/a: {type(e).__name__}: {' '.join(str(e).split())[:400]}", flush=True)
    return out


def torch_block(torch, fn, reps, cuda):
    """One untimed run, then reps runs, each timed alone (ms)."""
    fn()
    times = []
    if cuda:
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda.synchronize()
    for _ in range(reps):
        if cuda:
            start.record()
            fn()
            stop.record()
            stop.synchronize()
            times.append(start.elapsed_time(stop))
        else:
            t = time.perf_counter()
            fn()
            times.append((time.perf_counter() - t) * 1e3)
    return times


def dynamo():
    """torch._dynamo, or None (torch before 2.0, as Debian's 1.13)."""
    try:
        import torch._dynamo
        return torch._dynamo
    except ImportError:
        return None


def reset_compiled(torch):
    """Drops what torch.compile cached (Dynamo's code caches, CUDA graph pools) between rows."""
    if dynamo():
        dynamo().reset()
    if torch.cuda.is_available():
        torch.cuda.synchronize()
        torch.cuda.empty_cache()


# ---- main ---------------------------------------------------------------------------------------

def cell(v, reason=None):
    return f"{v:.3f}" if v is not None else f"n/a ({reason})" if reason else "n/a"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--graphc", default=str(ROOT / "build" / "graphc"), help="path of the graphc binary")
    ap.add_argument("--work", help="export cache and scratch folder (default: a temporary one, removed afterwards)")
    ap.add_argument("--models", default=",".join(MODELS), help="comma-separated subset of %(default)s")
    ap.add_argument("--batches", default="1,32", help="comma-separated batch sizes (default %(default)s)")
    ap.add_argument("--precisions", default="fp32,fp16", help="comma-separated subset of %(default)s")
    ap.add_argument("--opset", type=int, choices=(13, 17), default=17, help="ONNX opset (default %(default)s)")
    ap.add_argument("--arch", help="nvcc -arch=sm_ARCH (default: the device's compute capability; "
                                   f"sm_{DEFAULT_ARCH} without a device)")
    ap.add_argument("--nvccflags", help="NVCCFLAGS for libm.a and the driver (default: the generated Makefile's "
                                        "plus -arch=sm_ARCH)")
    ap.add_argument("--cuda-layout", choices=("auto", "nchw", "nhwc"),
                    help="graphc compile --cuda-layout: where graphc keeps activations NHWC around its cuDNN "
                         "convolutions (default: graphc's, auto: NHWC at fp16, NCHW at fp32)")
    ap.add_argument("--cudnn-find", action="store_true",
                    help="build graphc's side with -DGC_CUDNN_FIND: each Conv's cuDNN algorithm measured at init "
                         "(cudnnFindConvolutionForwardAlgorithmEx) rather than cuDNN's heuristic order "
                         "(runtime/cuda/gc_cuda.h gc_cudnn_pick)")
    ap.add_argument("--cudnn-fused", action="store_true",
                    help="build graphc's side with -DGC_CUDNN_FUSED: a Conv with a bias and a ReLU epilogue (and a "
                         "residual Add) runs as one cudnnConvolutionBiasActivationForward rather than the "
                         "convolution and a generated epilogue kernel")
    ap.add_argument("--variants", default="default",
                    help="comma-separated graphc builds timed side by side in each row, the first against PyTorch "
                         "in the ratio column: 'default', or tokens joined by '+' of fused (-DGC_CUDNN_FUSED), find "
                         "(-DGC_CUDNN_FIND), time (-DGC_CUDNN_TIME: each Conv's candidate algorithms timed in the "
                         "init's warm-up run), auto, nchw, nhwc (--cuda-layout), on top of the options above; e.g. "
                         "default,fused,nchw,time+fused (default: %(default)s)")
    ap.add_argument("--blocks", type=int, help="alternating blocks per row (default 5; --quick 2; --emu 1)")
    ap.add_argument("--reps", type=int, help="timed runs per block (default: about 0.75 s of the slowest side; "
                                             "--emu 1)")
    ap.add_argument("--warmup", type=int, help="untimed runs after setup on each side (default 10; --emu 0)")
    ap.add_argument("--configs", default=",".join(CONFIGS),
                    help="comma-separated PyTorch configurations to run, of %(default)s (torch.compile's "
                         "max-autotune takes minutes per row; one left out prints as n/a)")
    ap.add_argument("-j", type=int, default=os.cpu_count() or 1,
                    help="rows compiled and built at once before the timing (default: the CPU count)")
    ap.add_argument("--quick", action="store_true", help="smoke test: 2 blocks of about 0.25 s")
    ap.add_argument("--build-only", action="store_true",
                    help="export, compile and build every library and driver, then stop (no GPU needed)")
    ap.add_argument("--emu", action="store_true",
                    help="graphc on its CPU emulation and PyTorch eager on the CPU: the flow without a GPU; the "
                         "times mean nothing")
    args = ap.parse_args()
    args.graphc = os.path.abspath(args.graphc)
    if not os.access(args.graphc, os.X_OK):
        sys.exit(f"graphc binary not found: {args.graphc} (pass --graphc PATH)")
    names = args.models.split(",")
    for n in names:
        if n not in MODELS:
            sys.exit(f"unknown model {n!r} (known: {', '.join(MODELS)})")
    batches = [int(b) for b in args.batches.split(",")]
    if any(b < 1 for b in batches):
        sys.exit("--batches: sizes must be >= 1")
    precisions = args.precisions.split(",")
    for p in precisions:
        if p not in ("fp32", "fp16"):
            sys.exit(f"unknown precision {p!r} (known: fp32, fp16)")
    variants = parse_variants(args.variants)
    args.cuda_home = os.environ.get("CUDA_HOME", "/usr/local/cuda")
    args.configs = args.configs.split(",")
    for c in args.configs:
        if c not in CONFIGS:
            sys.exit(f"unknown configuration {c!r} (known: {', '.join(CONFIGS)})")

    try:
        arch, dev_name = probe_device()
    except NoDevice as e:
        arch, dev_name = None, None
        if not (args.build_only or args.emu):
            print(f"no CUDA device: {e}; nothing timed (--build-only builds without one, --emu runs graphc's "
                  f"CPU emulation)", flush=True)
            sys.exit(77)
        print(f"# no CUDA device: {e}", flush=True)
    args.arch = (args.arch or arch or DEFAULT_ARCH).replace("sm_", "")
    blocks = args.blocks or (1 if args.emu else 2 if args.quick else 5)
    warmup = args.warmup if args.warmup is not None else (0 if args.emu else 10)
    block_s = 0.25 if args.quick else 0.75

    import torch
    cuda = not args.emu and torch.cuda.is_available()
    device = "cuda" if cuda else "cpu" if args.emu else None
    if cuda:
        torch.backends.cudnn.benchmark = True
        torch.backends.cudnn.allow_tf32 = False
        torch.backends.cuda.matmul.allow_tf32 = False
    if dynamo():  # a row's compiled copies share their forward's code: room for all of them until the reset
        for limit in ("cache_size_limit", "recompile_limit"):
            if hasattr(dynamo().config, limit):
                setattr(dynamo().config, limit, max(getattr(dynamo().config, limit), 32))
    temp_work = not args.work
    work = Path(args.work or tempfile.mkdtemp(prefix="graphc-gpubench-")).resolve()
    work.mkdir(parents=True, exist_ok=True)

    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True).stdout.strip() or "?"
    nvcc = Path(args.cuda_home) / "bin" / "nvcc"
    nvcc_ver = "nvcc not found"
    if os.access(nvcc, os.X_OK):
        nvcc_ver = next((line.strip() for line in run([nvcc, "--version"]).stdout.splitlines() if "release" in line),
                        "?")
    torch_cuda = f"CUDA {torch.version.cuda}, cuDNN {torch.backends.cudnn.version()}" if cuda else \
        "no CUDA in this torch" if not torch.cuda.is_available() else "CUDA not used (--emu)"
    print(f"# graphc {commit} ({args.graphc}) vs PyTorch {torch.__version__} ({torch_cuda}); "
          f"device 0: {dev_name or 'none'}")
    if args.emu:
        print("# --emu: graphc runs on its CPU emulation and PyTorch eager on the CPU: the times are NOT GPU times "
              "and mean nothing as speed")
    else:
        print(f"# graphc: --target=cuda, nvcc {nvcc_ver} (CUDA_HOME={args.cuda_home}), -arch=sm_{args.arch}; "
              f"--cuda-layout={args.cuda_layout or 'auto'}{'; -DGC_CUDNN_FIND' if args.cudnn_find else ''}"
              f"{'; -DGC_CUDNN_FUSED' if args.cudnn_fused else ''}; "
              f"driver bench/gpu_bench.c")
    if len(variants) > 1:
        print(f"# graphc variants, each timed in every row: {', '.join(v[0] for v in variants)} (the ratio column: "
              f"{variants[0][0]})")
    side = "eager on the CPU" if args.emu else f"{', '.join(CONFIGS)}; cudnn.benchmark on, TF32 off"
    print(f"# PyTorch: {side}; no_grad, .half() for fp16; ONNX opset {args.opset}; {blocks} alternating "
          f"block{'s' if blocks > 1 else ''} per row, {warmup} warm-up runs, medians over all timed runs "
          f"({'clock' if args.emu else 'event'}, run, {'clock' if args.emu else 'event, synchronize'})", flush=True)

    # Exports first (torch, in this thread), then every row's graphc compile and nvcc build at once
    # (-j), then the timing, row by row.
    exports = {}
    for name in names:
        for batch in batches:
            bfolder = work / f"{name}_b{batch}"
            bfolder.mkdir(parents=True, exist_ok=True)
            module, x = cvt.build_module(name, batch)
            x.tofile(bfolder / "in.bin")
            exports[name, batch] = (bfolder, module, x, cvt.export(name, module, x, bfolder, args.opset))
    built = {}

    def build_row(key):
        name, batch, prec, vi = key
        bfolder = exports[name, batch][0]
        folder = variant_folder(bfolder / prec, vi, variants[vi])
        t0 = time.time()
        try:
            exe, flags = graphc_build(args, bfolder / "model.onnx", folder, prec, variants[vi])
            built[key] = (exe, flags, None, time.time() - t0)
        except Failed as e:
            built[key] = (None, None, str(e), time.time() - t0)
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.j)) as pool:
        list(pool.map(build_row, [(n, b, p, vi) for n in names for b in batches for p in precisions
                                  for vi in range(len(variants))]))

    nv = len(variants)
    rows = []
    failed = False
    device_line = None
    for name in names:
        for batch in batches:
            bfolder, module, x, exported = exports[name, batch]
            expected, half_err = None, None
            if not args.build_only:
                with torch.no_grad():
                    expected = np.ascontiguousarray(module(torch.from_numpy(x)).numpy(), dtype=np.float32)
                if "fp16" in precisions:
                    half_err = torch_models.half_storage_error(copy.deepcopy(module), torch.from_numpy(x), expected,
                                                               "fp16")
            for prec in precisions:
                label = f"{name} b{batch} {prec}"
                # per variant: median ms ("gv"), guard ok and text, error
                r = {"model": name, "batch": batch, "prec": prec, "gv": [None] * nv, "t": {}, "na": {},
                     "okv": [None] * nv, "guardv": [None] * nv, "errv": [None] * nv}
                rows.append(r)
                drvs = [None] * nv
                for vi, variant in enumerate(variants):
                    vlabel = label + (f" [{variant[0]}]" if nv > 1 else "")
                    folder = variant_folder(bfolder / prec, vi, variant)
                    exe, flags, err, secs = built[name, batch, prec, vi]
                    if err:
                        r["errv"][vi], failed = err, True
                        print(f"# {vlabel}: graphc FAILED: {err}", flush=True)
                        continue
                    print(f"# {vlabel}: {'exported, ' if exported else 'cached export, '}graphc compile + build "
                          f"{secs:.1f} s ({'cc' if args.emu else 'nvcc'} {flags})", flush=True)
                    if args.build_only:
                        continue
                    try:
                        drvs[vi] = Driver(exe, bfolder / "in.bin", folder, warmup)
                        if device_line is None:
                            device_line = drvs[vi].device
                            print(f"# {device_line}", flush=True)
                        r["okv"][vi], r["guardv"][vi] = guard(folder / "out.bin", expected, prec, half_err)
                        failed |= not r["okv"][vi]
                    except NoDevice as e:
                        print(f"no CUDA device: {e}", flush=True)
                        sys.exit(77)
                    except Failed as e:
                        r["errv"][vi], failed = str(e), True
                        print(f"# {vlabel}: graphc FAILED: {e}", flush=True)
                        if drvs[vi]:
                            drvs[vi].close()
                        drvs[vi] = None
                if args.build_only:
                    continue
                configs = torch_configs(torch, module, x, prec, device, warmup, label, args.configs)
                fns = {c: fn for c, (fn, why) in configs.items() if fn is not None}
                r["na"] = {c: why for c, (fn, why) in configs.items() if fn is None}
                reps = args.reps or (1 if args.emu else None)
                if reps is None:
                    probe = [np.median(torch_block(torch, fn, 2, cuda)) for fn in fns.values()]
                    probe += [np.median(d.block(2)) for d in drvs if d]
                    slow = max(probe, default=1.0)
                    reps = int(min(100000, max(2 if args.quick else 3, round(block_s * 1e3 / max(slow, 1e-3)))))
                gt, tt = [[] for _ in range(nv)], {c: [] for c in fns}
                for _ in range(blocks):
                    for vi in range(nv):
                        if not drvs[vi]:
                            continue
                        try:
                            gt[vi] += drvs[vi].block(reps)
                        except Failed as e:
                            r["errv"][vi], r["okv"][vi], failed, gt[vi] = str(e), False, True, []
                            print(f"# {label} [{variants[vi][0]}]: graphc FAILED: {e}", flush=True)
                            drvs[vi].close()
                            drvs[vi] = None
                    for c, fn in fns.items():
                        tt[c] += torch_block(torch, fn, reps, cuda)
                for d in drvs:
                    if d:
                        d.close()
                r["gv"] = [float(np.median(v)) if v else None for v in gt]
                r["t"] = {c: float(np.median(v)) for c, v in tt.items()}
                del configs, fns
                reset_compiled(torch)
                torch_line = ", ".join(f"{c} {r['t'][c]:.3f} ms" if c in r["t"] else f"{c} n/a ({r['na'][c]})"
                                       for c in CONFIGS)
                graphc_line = "; ".join(
                    f"graphc{f' [{v[0]}]' if nv > 1 else ''} {fmt(r['gv'][vi], '.3f')} ms, guard "
                    f"{r['guardv'][vi] or 'n/a'}{'' if r['okv'][vi] is None else ' ok' if r['okv'][vi] else ' FAILED'}"
                    for vi, v in enumerate(variants))
                print(f"# {label}: {reps} runs x {blocks} blocks; {graphc_line}; PyTorch {torch_line}", flush=True)

    if args.build_only:
        nb = sum(1 for r in rows for e in r["errv"] if e is None)
        how = "the CPU emulation drivers (cc -DGC_CUDA_EMULATE)" if args.emu else \
            f"libm.a and bench/gpu_bench.c with nvcc -arch=sm_{args.arch}"
        print(f"build only: {nb} of {len(rows) * nv} builds ({len(rows)} rows x {nv} variant{'s' if nv > 1 else ''}) "
              f"built ({how}) in {work}; nothing was run")
        for r in rows:
            for vi, e in enumerate(r["errv"]):
                if e:
                    print(f"# {r['model']} b{r['batch']} {r['prec']} [{variants[vi][0]}]: {e}")
        if temp_work:
            shutil.rmtree(work, ignore_errors=True)
        sys.exit(1 if failed else 0)

    print()
    if args.emu:
        print("## graphc on its CPU EMULATION vs PyTorch eager on the CPU (times mean nothing as speed)")
    else:
        print(f"## {device_line or dev_name}")
    emu = " (emu)" if args.emu else ""
    gnames = [f"graphc ms{emu}"] if nv == 1 else [f"graphc [{v[0]}] ms{emu}" for v in variants]
    rnames = ["graphc/best"] if nv == 1 else [f"[{v[0]}]/best" for v in variants]
    head = ["model", "batch", "precision"] + gnames + [f"{c} ms" for c in CONFIGS] + ["best PyTorch"] + rnames + \
        ["target", "guard"]
    print("| " + " | ".join(head) + " |")
    print("|" + " --- |" * len(head))
    for r in rows:
        best = min(r["t"], key=r["t"].get) if r["t"] else None
        ratios = [g / r["t"][best] if best and g is not None else None for g in r["gv"]]
        goal = TARGET.get(r["batch"])
        target = "-" if goal is None or ratios[0] is None or args.emu else \
            f"<= {goal}: {'met' if ratios[0] <= goal else 'missed'}"
        checks = []
        for vi in range(nv):
            ok, text, err = r["okv"][vi], r["guardv"][vi], r["errv"][vi]
            check = ("FAILED (graphc error)" if err else "n/a") if ok is None else \
                f"{'ok' if ok else 'FAILED'} ({text})"
            checks.append(check if nv == 1 else f"{variants[vi][0]}: {check}")
        cells = [r["model"], str(r["batch"]), r["prec"]] + \
            [cell(g, "error" if e else None) for g, e in zip(r["gv"], r["errv"])] + \
            [cell(r["t"].get(c), r["na"].get(c)) for c in CONFIGS] + \
            [f"{r['t'][best]:.3f} ({best})" if best else "n/a"] + [fmt(q, ".3f") for q in ratios] + \
            [target, "; ".join(checks)]
        print("| " + " | ".join(cells) + " |")
    for r in rows:
        for vi, e in enumerate(r["errv"]):
            if e:
                print(f"# {r['model']} b{r['batch']} {r['prec']}{f' [{variants[vi][0]}]' if nv > 1 else ''}: {e}")
    if temp_work:
        shutil.rmtree(work, ignore_errors=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
