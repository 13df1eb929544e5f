#!/usr/bin/python3
"""torch_models.py — real-model test: PyTorch models exported to ONNX, compiled by graphc.

For every model of the set, at ONNX opsets 13 and 17, the test

  1. builds the model with seeded random weights (torch.manual_seed; torchvision
     constructors with weights=None, so nothing is downloaded), in eval mode,
     with every BatchNorm's statistics measured on a seeded random batch (so the
     activations stay O(1)), and exports it with torch.onnx.export (batch 1, float32,
     do_constant_folding=True) into WORK/<model>_op<N>/model.onnx (with --export-cache DIR,
     an export of the same model, parameters, script source and torch versions kept in DIR
     from an earlier run is copied instead: tests/models/export_cache.py);
  2. runs PyTorch on a seeded random input and keeps the output;
  3. compiles the model: `graphc compile model.onnx -o DIR --emit-main --name m`;
  4. builds it the fast way (as tests/onnx/run_onnx_suite.py does), without make:
     m.c (which includes the runtime kernels it calls), m_main.c and m_weights.S
     (-O2); the opset-13
     exports use the portable kernels and the opset-17 ones OpenBLAS when its headers
     are found (--blas), so both runtime paths run; with GRAPHC_SANITIZE=1 in the
     environment the programs are built with ASan and UBSan;
  5. runs m_main on the input saved as .npy and compares output_0.npy with
     PyTorch's: shape equal and |got - exp| <= 1e-4 + 1e-3 * |exp| everywhere
     (atol 1e-3 for Inception-v3, see ATOL_FOR); then (C target) runs it again with
     --threads 3, the parallel entry on the bundled pthread pool, whose output must be
     byte-identical to the 1-thread run's (not in the sanitizer build: CI's time budget).

One line per model (PASS/FAIL, the max abs diff or the failure reason, the
time of each step), then "N passed, M failed"; the exit status is non-zero
when any model fails. --target cuda compiles with --target=cuda and runs the generated CUDA on graphc's CPU emulation
(make emu); a model whose graph the CUDA backend refuses prints REFUSED and counts apart
(--max-refused N fails the run when more are refused). --cuda-jit compiles with --cuda-jit, and --nvrtc TOOL then
also compiles each model's kernels with NVRTC (tools/nvrtc_check) and builds its host code against the CUDA headers
and libraries. --precision fp16|bf16 (with --target cuda) compiles with that --precision and accepts each output
when its relative error against PyTorch's float32 output (2-norms) is at most max(REL_TOL, 1.5 x the error PyTorch
itself makes holding the same tensors in half: half_storage_error), REL_TOL 1e-2 for fp16 and 8e-2 for bf16.

The default set (MLP, LeNet, ResNet-18, MobileNetV2, a
2-layer TransformerEncoder, a Conv/ConvTranspose/Linear + BatchNorm stack exported with its
BatchNormalization nodes (KEEP_BN), SqueezeNet 1.0, ShuffleNetV2 x0.5, MNASNet 0.5,
plus SqueezeNet 1.1, MobileNetV3-Small, EfficientNet-B0, RegNetX-400MF,
GoogLeNet, ResNet-50, DenseNet-121) takes about 3 minutes on 2 cores; --extra adds
the slow ones (AlexNet, VGG-11, ResNeXt-50, Inception-v3, ConvNeXt-T, Swin-T,
ViT-B/16, ...). Models are generated at test time, never committed.
Needs Debian's python3-torch and python3-torchvision (scripts/setup.sh).

--opt LEVEL (0 or 2, default 2) compiles at -O0 or -O2. --export-only stops
after step 2 (WORK/<model>_op<N>/model.onnx and in0.npy stay; bench/ uses it).
"""
import argparse
import concurrent.futures
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent.parent
CC = os.environ.get("CC", "cc")
# CPU_FLAGS: the instruction set the generated C is built for (tests/run_op_tests.py says how).
sys.path.insert(0, str(ROOT / "tests"))
from run_op_tests import CPU_FLAGS, cuda_device  # noqa: E402
sys.path.insert(0, str(Path(__file__).resolve().parent))  # export_cache, also when imported as models.torch_models
import export_cache  # noqa: E402
CFLAGS = ["-O2", "-std=c99", "-w"] + CPU_FLAGS
# With GRAPHC_SANITIZE=1 (scripts/test.sh's sanitizer build) the model programs get the sanitizers too.
SAN_FLAGS = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all"] \
    if os.environ.get("GRAPHC_SANITIZE") == "1" else []
CFLAGS += SAN_FLAGS
ATOL, RTOL = 1e-4, 1e-3
# --precision fp16/bf16 (with --target cuda): the output's relative error against PyTorch's float32
# output, ||got - exp|| / ||exp|| (2-norms), must be at most max(REL_TOL, HALF_SLACK x the error of
# PyTorch itself holding the same tensors in half): the model run again with its Conv/Linear weights
# and every Conv, Linear, BatchNorm and activation output rounded to the half type (half_storage_error).
# Random-weight networks amplify rounding: with fp16 storage PyTorch's own error is 1.4e-2 (ShuffleNet,
# MNASNet) to 2.8e-2 (ResNet-50), above a flat 1e-2. bfloat16 keeps 8 significant bits to fp16's 11.
REL_TOL = {"fp16": 1e-2, "bf16": 8e-2}
HALF_SLACK = 1.5
OPSETS = (13, 17)
TIMEOUT = 600  # seconds for any one command


def run(cmd, cwd=None):
    try:
        return subprocess.run(cmd, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, timeout=TIMEOUT, text=True, errors="replace")
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(cmd, -999, "", f"timed out after {TIMEOUT}s")


def one_line(s, n=400):
    s = " ".join((s or "").split())
    return s if len(s) <= n else s[:n] + "..."


# ---- the models -------------------------------------------------------------------------------

def mlp():
    import torch.nn as nn
    return nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.GELU(),
                         nn.Linear(128, 10), nn.Softmax(dim=1)), (1, 1, 28, 28)


def lenet():
    import torch.nn as nn
    return nn.Sequential(
        nn.Conv2d(1, 6, 5, padding=2), nn.BatchNorm2d(6), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(6, 16, 5), nn.Tanh(), nn.AvgPool2d(2),
        nn.Flatten(), nn.Linear(16 * 5 * 5, 120), nn.ReLU(), nn.Linear(120, 84), nn.Sigmoid(),
        nn.Linear(84, 10), nn.LogSoftmax(dim=1)), (1, 1, 28, 28)


def transformer():
    import torch.nn as nn
    layer = nn.TransformerEncoderLayer(d_model=256, nhead=8, dim_feedforward=512, dropout=0.1, batch_first=True)
    return nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False), (1, 16, 256)


def convbn():
    """Conv, grouped Conv, ConvTranspose and Linear each followed by a BatchNorm; exported with
    training=PRESERVE (see KEEP_BN) so the BatchNormalization nodes reach graphc, whose
    fold-batchnorm pass folds them."""
    import torch.nn as nn
    return nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
        nn.Conv2d(8, 8, 3, groups=2, bias=False), nn.BatchNorm2d(8),
        nn.ConvTranspose2d(8, 4, 2, stride=2), nn.BatchNorm2d(4),
        nn.Flatten(), nn.Linear(4 * 12 * 12, 10), nn.BatchNorm1d(10)), (1, 3, 8, 8)


def tv(name, size=224, **kw):
    """A torchvision classification model with random weights."""
    def make():
        import torchvision.models as models
        return getattr(models, name)(weights=None, **kw), (1, 3, size, size)
    return make


# name -> constructor returning (module, input shape); the default set, then the --extra set.
DEFAULT = {
    "mlp": mlp,
    "lenet": lenet,
    "resnet18": tv("resnet18"),
    "mobilenet_v2": tv("mobilenet_v2"),
    "transformer": transformer,
    "convbn": convbn,
    "squeezenet1_0": tv("squeezenet1_0"),
    "squeezenet1_1": tv("squeezenet1_1"),
    "shufflenet_v2_x0_5": tv("shufflenet_v2_x0_5"),
    "mnasnet0_5": tv("mnasnet0_5"),
    "mobilenet_v3_small": tv("mobilenet_v3_small"),
    "efficientnet_b0": tv("efficientnet_b0"),
    "regnet_x_400mf": tv("regnet_x_400mf"),
    "googlenet": tv("googlenet", aux_logits=False, init_weights=True),
    "resnet50": tv("resnet50"),
    "densenet121": tv("densenet121"),
}
EXTRA = {
    "alexnet": tv("alexnet"),
    "vgg11": tv("vgg11"),
    "resnet34": tv("resnet34"),
    "resnext50_32x4d": tv("resnext50_32x4d"),
    "mnasnet1_0": tv("mnasnet1_0"),
    "mobilenet_v3_large": tv("mobilenet_v3_large"),
    "regnet_y_400mf": tv("regnet_y_400mf"),
    "efficientnet_v2_s": tv("efficientnet_v2_s"),
    "inception_v3": tv("inception_v3", size=299, aux_logits=False, init_weights=True),
    "convnext_tiny": tv("convnext_tiny"),
    "swin_t": tv("swin_t"),
    "vit_b_16": tv("vit_b_16"),
}
# Models exported with training=PRESERVE (the module is in eval mode, so BatchNorm exports in its
# inference form) instead of EVAL, whose exporter folds each BatchNorm into the Conv before it.
KEEP_BN = {"convbn"}
# Wider absolute tolerances, where float32 rounding alone exceeds 1e-4: Inception-v3's
# truncated-normal(0.1) weights give outputs up to ~8, and PyTorch's own float32 output differs
# from its float64 output by 1.7e-4 (graphc's by 2.4e-4).
ATOL_FOR = {"inception_v3": 1e-3}


def calibrate(module, shape, seed):
    """Gives every BatchNorm random affine parameters and running statistics measured on a
    seeded random batch, so that activations stay O(1) through deep nets (with torchvision's
    initial running stats, mean 0 and var 1, the outputs of MobileNetV2 or MNASNet shrink to
    ~1e-9 and any comparison within 1e-4 would pass); zero-initialised Linear layers get
    random weights."""
    import torch
    import torch.nn as nn
    g = torch.Generator().manual_seed(seed + 1)
    with torch.no_grad():
        for m in module.modules():  # zero-initialised layers (ViT's head) would make the output 0
            if isinstance(m, nn.Linear) and not m.weight.any():
                m.weight.copy_(torch.randn(m.weight.shape, generator=g) * 0.02)
    bns = [m for m in module.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    if not bns:
        return
    with torch.no_grad():
        for m in bns:
            m.reset_running_stats()
            m.momentum = None  # cumulative average: one batch gives its exact statistics
            if m.affine:
                m.weight.copy_(torch.rand(m.weight.shape, generator=g) + 0.5)
                m.bias.copy_(torch.randn(m.bias.shape, generator=g) * 0.1)
        batch = torch.randn((4,) + tuple(shape[1:]), generator=g)
        module.train()
        module(batch)
    module.eval()


def half_storage_error(module, x, expected, precision):
    """||half - expected|| / ||expected|| where half is the module's output with its Conv/Linear weights
    and biases and every Conv, Linear, BatchNorm and activation output rounded to fp16 or bf16 (computed in
    float32 between the roundings): what holding those tensors in half costs PyTorch itself. Changes the
    module's weights (call it last)."""
    import torch
    dt = torch.float16 if precision == "fp16" else torch.bfloat16
    def rnd(t):
        return t.to(dt).float()
    kinds = (torch.nn.Conv1d, torch.nn.Conv2d, torch.nn.ConvTranspose2d, torch.nn.Linear, torch.nn.BatchNorm1d,
             torch.nn.BatchNorm2d, torch.nn.ReLU, torch.nn.ReLU6, torch.nn.Hardswish, torch.nn.Hardsigmoid,
             torch.nn.SiLU, torch.nn.Sigmoid, torch.nn.LayerNorm)
    with torch.no_grad():
        for m in module.modules():
            if isinstance(m, (torch.nn.Conv1d, torch.nn.Conv2d, torch.nn.ConvTranspose2d, torch.nn.Linear)):
                m.weight.copy_(rnd(m.weight))
                if m.bias is not None:
                    m.bias.copy_(rnd(m.bias))
        hooks = [m.register_forward_hook(lambda mod, inp, out: rnd(out) if torch.is_tensor(out) else out)
                 for m in module.modules() if isinstance(m, kinds)]
        try:
            got = module(rnd(x)).double().numpy()
        finally:
            for h in hooks:
                h.remove()
    e = expected.astype(np.float64)
    return float(np.linalg.norm(got - e) / max(np.linalg.norm(e), 1e-30))


def half_guard(got, expected, precision, half_err):
    """(||got - expected|| / ||expected|| (2-norms), its tolerance max(REL_TOL, HALF_SLACK x half_err)) for an
    output computed with tensors held in fp16 or bf16; half_err is half_storage_error's."""
    g, e = got.astype(np.float64), expected.astype(np.float64)
    rel = float(np.linalg.norm(g - e) / max(np.linalg.norm(e), 1e-30))
    return rel, max(REL_TOL[precision], HALF_SLACK * half_err)


def legacy_exporter(torch):
    """torch.onnx.export's keyword arguments for the TorchScript exporter: from PyTorch 2.9 on the
    default is the Dynamo exporter (dynamo=True), whose graphs differ from those this test is written
    for; earlier versions (Debian's 1.13) have no such argument."""
    import inspect
    try:
        return {"dynamo": False} if "dynamo" in inspect.signature(torch.onnx.export).parameters else {}
    except (TypeError, ValueError):
        return {}


def export(name, make, opset, folder, seed, precision="fp32", half=None):
    """Exports the model into folder/model.onnx, saves the input as folder/in0.npy and
    returns PyTorch's output (float32 ndarray); for a half precision, half_storage_error goes
    into half["err"]."""
    import torch
    torch.manual_seed(seed)
    module, shape = make()
    calibrate(module, shape, seed)
    module.eval()
    x = torch.from_numpy(np.random.default_rng(seed).standard_normal(shape).astype(np.float32))
    with torch.no_grad():
        expected = module(x).numpy()
    folder.mkdir(parents=True, exist_ok=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(module, (x,), str(folder / "model.onnx"), opset_version=opset,
                          do_constant_folding=True, input_names=["x"], output_names=["y"],
                          training=torch.onnx.TrainingMode.PRESERVE if name.rsplit("_op", 1)[0] in KEEP_BN
                          else torch.onnx.TrainingMode.EVAL, **legacy_exporter(torch))
    np.save(folder / "in0.npy", x.numpy(), allow_pickle=False)
    if precision != "fp32":
        half["err"] = half_storage_error(module, x, expected, precision)
    return np.ascontiguousarray(expected, dtype=np.float32)


def export_cached(args, case, make, opset, folder):
    """export() through the --export-cache folder: (expected, half_err, whether it came from the cache)."""
    def produce(d):
        half = {}
        expected = export(case, make, opset, d, args.seed, args.precision, half)
        np.save(d / "expected.npy", expected, allow_pickle=False)
        return {"half_err": half.get("err")}
    key = None
    if args.export_cache:
        key = dict(export_cache.versions(), harness="torch_models", source=export_cache.source_hash(__file__),
                   case=case, opset=opset, seed=args.seed, precision=args.precision)
    value, hit = export_cache.fetch(args.export_cache, key, ("model.onnx", "in0.npy", "expected.npy"), folder, produce)
    expected = np.load(folder / "expected.npy")
    os.remove(folder / "expected.npy")
    return expected, value["half_err"], hit


# ---- build and check ---------------------------------------------------------------------------

REFUSED = "refused by the CUDA backend"


def check(args, folder, expected, times, blas, atol):
    """None when the compiled model matches expected, else the failure reason."""
    cdir = folder / "c"
    shutil.rmtree(cdir, ignore_errors=True)
    t = time.time()
    target = [] if args.target == "c" else [f"--target={args.target}"] + (["--cuda-jit"] if args.cuda_jit else [])
    if args.precision != "fp32":
        target.append(f"--precision={args.precision}")
    if args.cuda_layout:
        target.append(f"--cuda-layout={args.cuda_layout}")
    defines = [f"-D{name}" for name in args.cuda_define]
    p = run([args.graphc, "compile", str(folder / "model.onnx"), "-o", str(cdir), "--emit-main", "--name", "m",
             f"-O{args.opt}"] + target)
    times["compile"] = time.time() - t
    if p.returncode == 1 and args.target == "cuda" and "the CUDA backend" in p.stderr and not cdir.exists():
        times["refused"] = one_line(p.stderr)
        return REFUSED
    if p.returncode != 0:
        return f"graphc compile (exit {p.returncode}): {one_line(p.stderr or p.stdout)}"
    t = time.time()
    if args.gpu:  # the generated Makefile's m_main: nvcc for the device's architecture, or cc with --cuda-jit
        exe = "m_main"
        flags = ["-O2", "-std=c99", "-Wall", "-Wextra"] if args.cuda_jit else ["-O2", f"-arch=sm_{args.gpu}"]
        p = run(["make", "-s", "m_main", f"{'CFLAGS' if args.cuda_jit else 'NVCCFLAGS'}=" + " ".join(flags + defines)],
                cwd=cdir)
    elif args.target == "cuda":  # the generated CUDA as C99 on the CPU emulation (make emu)
        exe = "m_main_emu"
        p = run(["make", "-s", "emu", "CFLAGS=" + " ".join(["-O2", "-std=c99", "-Wall", "-Wextra", "-Werror"] + SAN_FLAGS
                                                           + defines)], cwd=cdir)
    else:
        exe = "m_main"
        cflags, libs = blas
        p = run([CC] + CFLAGS + cflags + ["-I.", "-o", "m_main", "m.c", "m_main.c", "m_weights.S"]
                + libs + SAN_FLAGS + ["-lm"], cwd=cdir)
    times["build"] = time.time() - t
    if p.returncode != 0:
        return f"build failed (exit {p.returncode}): {one_line(p.stderr)}"
    if args.nvrtc and not args.gpu:  # the kernels through the real NVRTC, the host code built and linked against CUDA
        p = run([args.nvrtc, "--arch=sm_90", "m_kernels.cu"], cwd=cdir)
        if p.returncode != 0:
            return f"NVRTC failed (exit {p.returncode}): {one_line(p.stderr)}"
        p = run(["make", "-s", "m_main", "CFLAGS=" + " ".join(["-O1", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic"]
                                                             + defines)], cwd=cdir)
        if p.returncode != 0:
            return f"the --cuda-jit host build failed (exit {p.returncode}): {one_line(p.stderr)}"
    out = folder / "out"
    shutil.rmtree(out, ignore_errors=True)
    t = time.time()
    p = run([str(cdir / exe), str(out), str(folder / "in0.npy")])
    times["run"] = time.time() - t
    if p.returncode != 0:
        return f"m_main failed (exit {p.returncode}): {one_line(p.stderr or p.stdout)}"
    try:
        got = np.load(out / "output_0.npy", allow_pickle=False)
    except Exception as e:
        return f"cannot read output_0.npy: {e}"
    if got.dtype != np.float32:
        return f"output dtype {got.dtype} != float32"
    if got.shape != expected.shape:
        return f"output shape {got.shape} != expected {expected.shape}"
    g, e = got.astype(np.float64), expected.astype(np.float64)
    diff = np.abs(g - e)
    times["diff"] = float(diff.max()) if diff.size else 0.0
    if args.precision != "fp32":  # half storage: the relative error against PyTorch's own in half
        rel, tol = half_guard(got, expected, args.precision, times["half_err"])
        times["rel"] = rel
        if rel > tol:
            return (f"relative error {rel:.3g} > {tol:.3g} (PyTorch's own {args.precision} storage: "
                    f"{times['half_err']:.3g}; max abs diff {times['diff']:.3g})")
        return None
    bad = ~(diff <= atol + RTOL * np.abs(e))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        return (f"{int(bad.sum())} of {bad.size} elements out of tolerance (max abs diff {times['diff']:.3g}); "
                f"first at {i}: got {g.flat[i]!r} expected {e.flat[i]!r}")
    if args.target == "c" and not SAN_FLAGS:  # the parallel entry on the bundled pool: the serial run's bytes
        out3 = folder / "out_threads3"
        shutil.rmtree(out3, ignore_errors=True)
        p = run([str(cdir / exe), "--threads", "3", str(out3), str(folder / "in0.npy")])
        if p.returncode != 0:
            return f"m_main --threads 3 failed (exit {p.returncode}): {one_line(p.stderr or p.stdout)}"
        if (out3 / "output_0.npy").read_bytes() != (out / "output_0.npy").read_bytes():
            return "m_main --threads 3 wrote other bytes than the 1-thread run"
    return None


def blas_setup(mode):
    """(cflags, libs): OpenBLAS for mode '1', and for 'auto' when its header is found."""
    if mode == "0":
        return [], []
    have = Path("/usr/include/x86_64-linux-gnu/cblas.h").exists() or Path("/usr/include/cblas.h").exists() \
        or run(["pkg-config", "--exists", "openblas"]).returncode == 0
    if mode != "1" and not have:
        return [], []
    cf = run(["pkg-config", "--cflags", "openblas"]).stdout.split()
    libs = run(["pkg-config", "--libs", "openblas"]).stdout.split() or ["-lopenblas"]
    return ["-DGCRT_USE_BLAS"] + cf, libs


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--graphc", default=str(ROOT / "build" / "graphc"), help="path of the graphc binary")
    ap.add_argument("--work", help="scratch folder (default: a temporary one, removed afterwards)")
    ap.add_argument("--filter", help="only models whose name (e.g. resnet18_op17) contains this substring (or one of "
                                     "these, comma-separated)")
    ap.add_argument("-j", type=int, default=os.cpu_count() or 1, help="models compiled/built/run in parallel")
    ap.add_argument("--extra", action="store_true", help="also the slow models (AlexNet, VGG-11, ResNet-50, ...)")
    ap.add_argument("--blas", choices=("mixed", "auto", "0", "1"), default="mixed",
                    help="OpenBLAS for every model (1; auto: when found), none (0), or (mixed, the default) the "
                         "portable kernels for opset 13 and OpenBLAS when found for opset 17")
    ap.add_argument("--keep", action="store_true", help="keep the work folders of passing models")
    ap.add_argument("--cuda-jit", action="store_true",
                    help="with --target cuda: compile with --cuda-jit (kernels by NVRTC at init; emulated in make emu)")
    ap.add_argument("--nvrtc", metavar="TOOL",
                    help="with --cuda-jit: also compile each model's kernels with TOOL (tools/nvrtc_check, NVRTC "
                         "for sm_90) and build its host code against CUDA; empty: skip the run (exit 77)")
    ap.add_argument("--seed", type=int, default=0, help="seed for weights and inputs")
    ap.add_argument("--opt", choices=("0", "2"), default="2", help="compile at -O0 or -O2 (default 2)")
    ap.add_argument("--target", choices=("c", "cuda"), default="c",
                    help="backend (default c); cuda builds the generated CUDA for graphc's CPU emulation "
                         "(make emu: no GPU needed) and compares it with PyTorch the same way")
    ap.add_argument("--cuda-define", action="append", default=[], metavar="NAME",
                    help="with --target cuda: build the generated folder with -DNAME too (repeatable): "
                         "GC_CUDNN_FUSED, GC_CUDNN_TIME, GC_CUDNN_FIND (runtime/cuda/gc_cuda.h), and on the "
                         "emulation GC_EMU_WARMUP (NAME_init's warm-up run, which GC_CUDNN_TIME times in)")
    ap.add_argument("--cuda-layout", choices=("auto", "nchw", "nhwc"),
                    help="with --target cuda: compile with --cuda-layout (where activations are kept NHWC)")
    ap.add_argument("--precision", choices=("fp32", "fp16", "bf16"), default="fp32",
                    help="with --target cuda: compile with --precision (fp16/bf16: the output's relative error "
                         "against PyTorch's float32 at most max(REL_TOL, 1.5 x PyTorch's own in half))")
    ap.add_argument("--max-refused", type=int, default=-1,
                    help="with --target cuda: fail when more models than this are refused (a model the backend "
                         "refuses is counted apart, not as passed; default: no limit)")
    ap.add_argument("--gpu", action="store_true",
                    help="with --target cuda: build with the generated Makefile (nvcc -arch for device 0, or cc "
                         "and NVRTC with --cuda-jit) and run on the GPU instead of the emulation; exit 77 "
                         "(skipped) without a CUDA device")
    ap.add_argument("--export-cache", metavar="DIR",
                    help="keep each export in DIR and reuse it in later runs (tests/models/export_cache.py: keyed by "
                         "the model, opset, seed, precision, this script's source and the torch/torchvision versions)")
    ap.add_argument("--export-only", action="store_true",
                    help="only export the models (needs --work; prints WORK/<model>_op<N> per model)")
    args = ap.parse_args()
    if args.export_only and not args.work:
        sys.exit("--export-only needs --work")
    if args.precision != "fp32" and args.target != "cuda":
        sys.exit("--precision fp16/bf16 needs --target cuda")
    if args.cuda_layout and args.target != "cuda":
        sys.exit("--cuda-layout needs --target cuda")
    if args.cuda_define and args.target != "cuda":
        sys.exit("--cuda-define needs --target cuda")
    for name in args.cuda_define:
        if not name.isidentifier():
            sys.exit(f"--cuda-define: {name!r} is not a macro name")
    args.graphc = os.path.abspath(args.graphc)
    if args.gpu:
        if args.target != "cuda":
            sys.exit("--gpu needs --target cuda")
        cap, name = cuda_device()
        if cap is None:
            print(f"SKIPPED: no CUDA device ({name})")
            return 77
        args.gpu = cap
        print(f"# on the GPU: {name}, sm_{cap}", flush=True)
    if args.nvrtc is not None:
        if not args.nvrtc or not os.access(args.nvrtc, os.X_OK):
            print("SKIPPED: no nvrtc_check (the CUDA toolkit's NVRTC was not found when graphc was configured); "
                  "the models' kernels were not compiled with NVRTC")
            return 77
        args.nvrtc = os.path.abspath(args.nvrtc)
    if not os.access(args.graphc, os.X_OK):
        sys.exit(f"graphc binary not found: {args.graphc} (pass --graphc PATH)")
    try:
        import torch
        torch.set_num_threads(1)
    except ImportError:
        sys.exit("PyTorch not found: install python3-torch and python3-torchvision (scripts/setup.sh)")
    blas_for = {13: blas_setup("0" if args.blas == "mixed" else args.blas),
                17: blas_setup("auto" if args.blas == "mixed" else args.blas)}
    temp_work = not args.work
    work = Path(args.work or tempfile.mkdtemp(prefix="graphc-torch-")).resolve()
    work.mkdir(parents=True, exist_ok=True)

    models = dict(DEFAULT, **(EXTRA if args.extra else {}))
    cases = [(f"{name}_op{opset}", make, opset, ATOL_FOR.get(name, ATOL))
             for name, make in models.items() for opset in OPSETS]
    if args.filter:
        cases = [c for c in cases if any(f in c[0] for f in args.filter.split(","))]
    if not cases:
        sys.exit("no model matches the filter")
    t0 = time.time()
    results = {}
    print_lock = threading.Lock()

    refused = []

    def report(case, why, times):
        if why == REFUSED:
            refused.append(case)
            with print_lock:
                print(f"REFUSED {case:25s} {times['refused']}", flush=True)
            return
        ok = why is None
        results[case] = ok
        steps = " ".join(f"{k} {times[k]:.1f}s" for k in ("export", "compile", "build", "run") if k in times)
        if times.get("cached"):
            steps = steps.replace("export", "export (cached)", 1)
        detail = f"max abs diff {times['diff']:.3g}" if ok else why
        if ok and "rel" in times:
            detail += f", relative error {times['rel']:.3g} (PyTorch in {args.precision}: {times['half_err']:.3g})"
        with print_lock:
            print(f"{'PASS' if ok else 'FAIL'} {case:28s} {detail}  ({steps})", flush=True)

    def finish(case, folder, expected, times, blas, atol):
        try:
            why = check(args, folder, expected, times, blas, atol)
        except Exception as e:  # a harness bug fails the model, not the run
            why = f"harness: {type(e).__name__}: {one_line(str(e))}"
        report(case, why, times)
        if (why is None or why == REFUSED) and not args.keep:
            shutil.rmtree(folder, ignore_errors=True)

    # Exports run in this thread (torch is not thread-safe here); compile/build/run in the pool.
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.j)) as pool:
        futs = []
        for case, make, opset, atol in cases:
            folder = work / case
            shutil.rmtree(folder, ignore_errors=True)
            times = {}
            t = time.time()
            try:
                expected, times["half_err"], times["cached"] = export_cached(args, case, make, opset, folder)
            except Exception as e:
                times["export"] = time.time() - t
                report(case, f"torch export: {type(e).__name__}: {one_line(str(e))}", times)
                continue
            times["export"] = time.time() - t
            if args.export_only:
                print(f"exported {folder}", flush=True)
                continue
            futs.append(pool.submit(finish, case, folder, expected, times, blas_for[opset], atol))
        for f in futs:
            f.result()

    if args.export_only:
        return 1 if results else 0  # results holds only failed exports here
    passed = sum(1 for ok in results.values() if ok)
    failed = len(results) - passed
    if temp_work and failed == 0:
        shutil.rmtree(work, ignore_errors=True)
    elif failed:
        print(f"work folder (failed models kept): {work}")
    print(f"total {time.time() - t0:.0f}s")
    if args.target == "cuda":
        print(f"{passed} passed, {failed} failed, {len(refused)} refused by the CUDA backend")
        if args.max_refused >= 0 and len(refused) > args.max_refused:
            print(f"FAIL: {len(refused)} models refused, more than --max-refused {args.max_refused}")
            return 1
        return 1 if failed else 0
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
