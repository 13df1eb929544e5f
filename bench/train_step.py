#!/usr/bin/python3
"""train_step.py — one training step (forward, backward, SGD-momentum update) of graphc's
generated code against PyTorch, side by side in one run.

Models, batch 8: the MLP and the LeNet-style CNN of tests/models/torch_models.py (without their
final Softmax / LogSoftmax: the loss takes logits) and torchvision ResNet-18 (weights=None,
1000 classes, 3x224x224 unless --resnet-size). Each is built with seeded weights, put in
train() mode and exported once (opset 17, TrainingMode.TRAINING: BatchNorm normalizes with the
batch statistics and updates its running statistics, do_constant_folding=False), output the
logits. Then, per model:

  graphc   `graphc compile model.onnx -o DIR --train --loss=cross-entropy:logits
           --optimizer=sgd:lr=0.01,momentum=0.9 --name m`, `make -C DIR libm.a` with
           CFLAGS="-O3 -march=native -std=c99" and the Makefile's BLAS=auto (OpenBLAS when its
           headers are found), linked with bench/train_step.c, which runs --warmup steps and
           then --steps timed steps of m_train_step on one batch (single-threaded code;
           OPENBLAS_NUM_THREADS=1);
  PyTorch  the same module and batch, torch.set_num_threads(1), nn.CrossEntropyLoss,
           torch.optim.SGD(lr=0.01, momentum=0.9): zero_grad, forward, loss.backward(),
           step(); the same warm-up and timed steps (PyTorch runs first: without --steps its
           last warm-up step sets the count, about 2 s worth, 5 to 500).

Prints the median ms/step of each and the ratio graphc / PyTorch, and the first step's loss of
both (same weights, same batch: they must agree). OPENBLAS_CORETYPE is taken from the
environment for both sides (PyTorch here, graphc's program as a child) and printed.
"""
import argparse
import copy
import os
import shutil
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "models"))
import torch_models  # noqa: E402

B = 8


def models(resnet_size):
    import torch.nn as nn
    import torchvision.models as tvm

    def strip(make):
        def f():
            net, shape = make()
            return nn.Sequential(*list(net)[:-1]), (B,) + shape[1:], 10
        return f

    return {
        "mlp": strip(torch_models.mlp),
        "lenet": strip(torch_models.lenet),
        "resnet18": lambda: (tvm.resnet18(weights=None), (B, 3, resnet_size, resnet_size), 1000),
    }


def run(cmd, **kw):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)
    if p.returncode:
        sys.exit(f"{' '.join(map(str, cmd))}: exit {p.returncode}\n{p.stderr[-2000:]}")
    return p.stdout


def blas_libs():
    p = subprocess.run(["pkg-config", "--libs", "openblas"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                       text=True)
    return p.stdout.split() or ["-lopenblas"]


def graphc_side(args, folder, x, label):
    """(median ms/step, first loss) of graphc's training step."""
    cdir = folder / "c"
    shutil.rmtree(cdir, ignore_errors=True)
    run([args.graphc, "compile", str(folder / "model.onnx"), "-o", str(cdir), "--train",
         "--loss=cross-entropy:logits", "--optimizer=sgd:lr=0.01,momentum=0.9", "--name", "m"])
    run(["make", "-C", str(cdir), "-s", "libm.a", f"BLAS={args.blas}", "CFLAGS=-O3 -march=native -std=c99"])
    blas_on = "GCRT_USE_BLAS" in run(["make", "-C", str(cdir), "-s", "-n", "m.o", "-B", f"BLAS={args.blas}"])
    exe = folder / "train_step"
    run([os.environ.get("CC", "cc"), "-O3", "-march=native", "-std=c99", "-DMODEL=m", f"-I{cdir}",
         str(ROOT / "bench" / "train_step.c"), str(cdir / "libm.a"), "-o", str(exe)]
        + (blas_libs() if blas_on else []) + ["-lm"])
    with open(folder / "batch.bin", "wb") as f:
        f.write(np.ascontiguousarray(x).tobytes())
        f.write(np.ascontiguousarray(label).tobytes())
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    out = run([str(exe), str(folder / "batch.bin"), str(args.warmup), str(args.timed)], env=env)
    vals = dict(line.split(": ", 1) for line in out.splitlines() if ": " in line)
    return float(vals["ms/step"]), float(vals["loss0"]), blas_on


def torch_side(args, torch, module, x, label):
    """(median ms/step, first loss) of PyTorch's training step; sets args.timed, the number of
    timed steps (--steps, or about 2 s worth measured on the warm-up)."""
    module.train()
    opt = torch.optim.SGD(module.parameters(), lr=0.01, momentum=0.9)
    lossf = torch.nn.CrossEntropyLoss()
    xt, yt = torch.from_numpy(x), torch.from_numpy(label)
    times, loss0 = [], None

    def step():
        t = time.perf_counter()
        opt.zero_grad()
        loss = lossf(module(xt), yt)
        loss.backward()
        opt.step()
        return loss.item(), (time.perf_counter() - t) * 1e3

    loss0, last = step()
    for _ in range(args.warmup - 1):
        last = step()[1]
    args.timed = args.steps or int(min(500, max(5, 2000 / last)))
    times = [step()[1] for _ in range(args.timed)]
    return float(np.median(times)), loss0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--graphc", default=str(ROOT / "build" / "graphc"), help="path of the graphc binary")
    ap.add_argument("--work", default="/tmp/graphc-bench-train", help="scratch folder (default %(default)s)")
    ap.add_argument("--models", default="mlp,lenet,resnet18", help="comma-separated subset")
    ap.add_argument("--warmup", type=int, default=3, help="untimed steps first (default %(default)s, >= 1)")
    ap.add_argument("--steps", type=int, default=0,
                    help="timed steps (default: about 2 s of PyTorch steps, 5 to 500)")
    ap.add_argument("--resnet-size", type=int, default=224, help="ResNet-18 input height and width")
    ap.add_argument("--blas", choices=("auto", "0", "1"), default="auto", help="the generated Makefile's BLAS=")
    args = ap.parse_args()
    args.graphc = os.path.abspath(args.graphc)
    args.warmup = max(1, args.warmup)
    if not os.access(args.graphc, os.X_OK):
        sys.exit(f"graphc binary not found: {args.graphc} (pass --graphc PATH)")
    import torch
    torch.set_num_threads(1)
    work = Path(args.work).resolve()
    table = models(args.resnet_size)
    names = args.models.split(",")
    for n in names:
        if n not in table:
            sys.exit(f"unknown model {n!r} (known: {', '.join(table)})")
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")),
               "?")
    print(f"# batch {B}, 1 thread each (torch.set_num_threads(1); graphc single-threaded, OPENBLAS_NUM_THREADS=1), "
          f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(unset)')}, "
          f"{args.warmup} warm-up + {args.steps or 'about 2 s of'} timed steps, median; torch {torch.__version__}; {cpu}")
    print(f"{'model':10s} {'graphc ms/step':>15s} {'PyTorch ms/step':>16s} {'graphc/PyTorch':>15s}   "
          f"step-0 loss graphc / PyTorch")
    for name in names:
        torch.manual_seed(0)
        module, shape, classes = table[name]()
        module.train()
        rng = np.random.default_rng(0)
        x = rng.standard_normal(shape).astype(np.float32)
        label = rng.integers(0, classes, size=B).astype(np.int64)
        folder = work / name
        folder.mkdir(parents=True, exist_ok=True)
        fresh = copy.deepcopy(module)  # the export's tracing run updates the BatchNorm statistics
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(module, torch.from_numpy(x), str(folder / "model.onnx"), opset_version=17,
                              input_names=["x"], output_names=["logits"], do_constant_folding=False,
                              training=torch.onnx.TrainingMode.TRAINING)
        t_ms, t_loss = torch_side(args, torch, fresh, x, label)
        g_ms, g_loss, blas_on = graphc_side(args, folder, x, label)
        flag = "" if abs(g_loss - t_loss) <= 1e-3 * abs(t_loss) else "  MISMATCH"
        print(f"{name:10s} {g_ms:15.2f} {t_ms:16.2f} {g_ms / t_ms:15.2f}   {g_loss:.6f} / {t_loss:.6f}"
              f"{'' if blas_on else '  (graphc without BLAS)'}{flag}", flush=True)


if __name__ == "__main__":
    main()
