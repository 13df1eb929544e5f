#!/usr/bin/python3
"""torch_grads.py — real-model gradient test: graphc's reverse mode against PyTorch autograd.

For each model of the set, at ONNX opsets 13 and 17, the test

  1. builds the model with seeded random weights (torchvision constructors with weights=None,
     nothing is downloaded; every BatchNorm gets random affine parameters) and wraps it with its
     loss, so that the module's forward(x, label) returns a scalar: the cross-entropy of the
     logits against int64 labels (F.cross_entropy, exported as SoftmaxCrossEntropyLoss), or for
     the transformer the mean squared error against a float target. Every nn.Dropout becomes an
     identity (dropout draws random masks, which cannot be compared; it is not the subject here);
  2. exports the wrapper in training form (torch.onnx.TrainingMode.TRAINING: BatchNormalization
     with training_mode=1, normalizing with the batch statistics; do_constant_folding=False, so
     every parameter stays an initializer under its PyTorch name, e.g. "net.fc1.weight");
  3. computes the reference: a float64 copy of the model in train() mode on the same inputs,
     loss.backward(), every parameter's .grad (float64, so the reference carries no float32
     rounding of its own);
  4. compiles `graphc compile model.onnx -o DIR --grad --emit-main --name m` (outputs: the loss,
     then grad_<name> per float initializer of rank >= 1, in initializer order, named in m.h),
     builds m.c, m_main.c and m_weights.S the fast way as tests/models/torch_models.py does
     (-O2; opset 13 with the portable kernels, opset 17 with OpenBLAS when found; ASan and UBSan
     when GRAPHC_SANITIZE=1), and runs m_main on x.npy and label.npy;
  5. compares the loss and every parameter that has a PyTorch .grad with graphc's grad_<name>:
       small models (mlp, lenet): elementwise |got - exp| <= 1e-4 + 1e-3 * |exp|;
       deep models (resnet_small, mobilenet_v2, transformer): per tensor the relative L2 error
         ||got - exp|| <= 1e-4 * ||exp||; a gradient that is zero in float64 (rms <= 1e-12: a
         BatchNorm bias whose per-channel shift the next training-mode BatchNorm removes, after
         a 1x1 conv, as in MobileNetV2's projections) must come out with rms <= 1e-5
         (PyTorch's own float32 gives ~6e-7 there);
       the loss: |got - exp| <= 1e-5 + 1e-4 * |exp|.
     graphc's other outputs, if any (gradients of float initializers that PyTorch has no
     parameter for; BatchNorm running statistics are not parameters for graphc either), are not
     compared, only checked to be finite.

The models: the MLP and LeNet of torch_models.py without their final Softmax / LogSoftmax (the
loss takes logits), a ResNet-style CNN of torchvision BasicBlocks (residual adds, BatchNorm,
strided 1x1 downsampling; 3x32x32 input), torchvision MobileNetV2 (96x96 input, 10 classes) and
the 2-layer TransformerEncoder of torch_models.py with dropout=0, all at batch 2 to 4.

One line per model: PASS/FAIL, the loss difference and the worst tensor (its error against its
own tolerance: 1.0 is the limit), or the failure reason (e.g. "op 'X' has no gradient"); then
"N passed, M failed"; the exit status is non-zero when any model fails.
Needs Debian's python3-torch and python3-torchvision (scripts/setup.sh).
"""
import argparse
import concurrent.futures
import copy
import os
import re
import shutil
import sys
import tempfile
import threading
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from torch_models import CC, CFLAGS, ROOT, SAN_FLAGS, blas_setup, one_line, run  # noqa: E402
import torch_models  # noqa: E402

OPSETS = (13, 17)
LOSS_ATOL, LOSS_RTOL = 1e-5, 1e-4
ELEM_ATOL, ELEM_RTOL = 1e-4, 1e-3
L2_RTOL, ZERO_RMS = 1e-4, 1e-5


# ---- the models ------------------------------------------------------------------------------

def mlp():
    import torch.nn as nn
    net, shape = torch_models.mlp()
    return nn.Sequential(*list(net)[:-1]), (4,) + shape[1:], "ce"


def lenet():
    import torch.nn as nn
    net, shape = torch_models.lenet()
    return nn.Sequential(*list(net)[:-1]), (4,) + shape[1:], "ce"


def resnet_small():
    """Three stages of torchvision BasicBlocks (16, 32, 64 channels; the later two strided, with
    a 1x1 conv + BatchNorm shortcut), global average pooling and a linear classifier."""
    import torch.nn as nn
    from torchvision.models.resnet import BasicBlock

    def down(cin, cout):
        return nn.Sequential(nn.Conv2d(cin, cout, 1, stride=2, bias=False), nn.BatchNorm2d(cout))

    net = nn.Sequential(
        nn.Conv2d(3, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU(inplace=True),
        BasicBlock(16, 16), BasicBlock(16, 16),
        BasicBlock(16, 32, stride=2, downsample=down(16, 32)),
        BasicBlock(32, 64, stride=2, downsample=down(32, 64)),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 10))
    return net, (4, 3, 32, 32), "ce"


def mobilenet_v2():
    import torchvision.models as models
    return models.mobilenet_v2(weights=None, num_classes=10), (2, 3, 96, 96), "ce"


def transformer():
    """torch_models.py's TransformerEncoder (d_model 256, 8 heads, feed-forward 512, 2 layers,
    sequence 16) with dropout=0."""
    import torch.nn as nn
    layer = nn.TransformerEncoderLayer(d_model=256, nhead=8, dim_feedforward=512, dropout=0.0, batch_first=True)
    return nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False), (2, 16, 256), "mse"


# name -> (constructor returning (module, input shape, loss kind), deep: compared by relative L2)
MODELS = {
    "mlp": (mlp, False),
    "lenet": (lenet, False),
    "resnet_small": (resnet_small, True),
    "mobilenet_v2": (mobilenet_v2, True),
    "transformer": (transformer, True),
}


def with_loss(net, kind):
    """The module forward(x, label) -> scalar loss of net(x)."""
    import torch.nn as nn
    import torch.nn.functional as F

    class Loss(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = net

        def forward(self, x, label):
            y = self.net(x)
            if kind == "ce":
                return F.cross_entropy(y, label)
            return ((y - label) ** 2).mean()  # F.mse_loss has no ONNX export in torch 1.13

    return Loss()


def prepare(net, seed):
    """Dropout -> Identity; random BatchNorm affine parameters (weight in [0.5, 1.5), bias ~0.1 N(0,1))."""
    import torch
    import torch.nn as nn
    for parent in list(net.modules()):
        for name, child in list(parent.named_children()):
            if isinstance(child, nn.Dropout):
                setattr(parent, name, nn.Identity())
    g = torch.Generator().manual_seed(seed + 1)
    with torch.no_grad():
        for m in net.modules():
            if isinstance(m, nn.modules.batchnorm._BatchNorm) and m.affine:
                m.weight.copy_(torch.rand(m.weight.shape, generator=g) + 0.5)
                m.bias.copy_(torch.randn(m.bias.shape, generator=g) * 0.1)


def export(make, opset, folder, seed):
    """Exports the wrapped model into folder/model.onnx, saves folder/x.npy and folder/label.npy
    and returns (loss, {parameter name: gradient}) from PyTorch in float64."""
    import torch
    torch.manual_seed(seed)
    net, shape, kind = make()
    prepare(net, seed)
    model = with_loss(net, kind)
    rng = np.random.default_rng(seed)
    x = torch.from_numpy(rng.standard_normal(shape).astype(np.float32))
    if kind == "ce":
        label = torch.from_numpy(rng.integers(0, 10, size=shape[0]).astype(np.int64))
    else:
        label = torch.from_numpy(rng.standard_normal(shape).astype(np.float32))
    ref = copy.deepcopy(model).double().train()  # before the export: tracing updates running stats
    folder.mkdir(parents=True, exist_ok=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, (x, label), str(folder / "model.onnx"), opset_version=opset,
                          do_constant_folding=False, export_params=True, keep_initializers_as_inputs=False,
                          input_names=["x", "label"], output_names=["loss"],
                          training=torch.onnx.TrainingMode.TRAINING)
    np.save(folder / "x.npy", x.numpy(), allow_pickle=False)
    np.save(folder / "label.npy", label.numpy(), allow_pickle=False)
    loss = ref(x.double(), label if kind == "ce" else label.double())
    loss.backward()
    grads = {n: p.grad.numpy().copy() for n, p in ref.named_parameters() if p.grad is not None}
    return float(loss.item()), grads


# ---- build and check -------------------------------------------------------------------------

def output_names(header):
    """{index: name} from the generated header's NAME_OUTPUT_<i>_NAME macros."""
    return {int(i): n for i, n in re.findall(r'#define m_OUTPUT_(\d+)_NAME "([^"]*)"', header.read_text())}


def tensor_error(got, exp, deep):
    """The error of got against exp as a fraction of the tolerance (<= 1 passes), and its detail."""
    g, e = got.astype(np.float64), exp.astype(np.float64)
    if deep:
        err = float(np.linalg.norm(g - e))
        ref = float(np.linalg.norm(e))
        if ref <= 1e-12 * np.sqrt(e.size):
            rms = float(np.sqrt(np.mean(g * g)))
            return rms / ZERO_RMS, f"zero gradient, rms {rms:.2e}"
        return err / (L2_RTOL * ref), f"rel L2 {err / ref:.2e}"
    diff = np.abs(g - e)
    frac = diff / (ELEM_ATOL + ELEM_RTOL * np.abs(e))
    i = int(np.argmax(frac))
    return float(frac.flat[i]), f"max abs diff {float(diff.max()):.2e} (at {i}: got {g.flat[i]:.6g} exp {e.flat[i]:.6g})"


def check(args, folder, expected, deep, times, blas):
    """(None, detail) when graphc's loss and gradients match PyTorch's, else (reason, detail)."""
    exp_loss, exp_grads = expected
    cdir = folder / "c"
    shutil.rmtree(cdir, ignore_errors=True)
    t = time.time()
    p = run([args.graphc, "compile", str(folder / "model.onnx"), "-o", str(cdir), "--grad", "--emit-main",
             "--name", "m"])
    times["compile"] = time.time() - t
    if p.returncode != 0:
        return f"graphc compile (exit {p.returncode}): {one_line(p.stderr or p.stdout)}", ""
    t = time.time()
    cflags, libs = blas
    p = run([CC] + CFLAGS + cflags + ["-I.", "-o", "m_main", "m.c", "m_main.c", "m_weights.S"]
            + libs + SAN_FLAGS + ["-lm"], cwd=cdir)
    times["build"] = time.time() - t
    if p.returncode != 0:
        return f"cc failed (exit {p.returncode}): {one_line(p.stderr)}", ""
    out = folder / "out"
    shutil.rmtree(out, ignore_errors=True)
    t = time.time()
    p = run([str(cdir / "m_main"), str(out), str(folder / "x.npy"), str(folder / "label.npy")])
    times["run"] = time.time() - t
    if p.returncode != 0:
        return f"m_main failed (exit {p.returncode}): {one_line(p.stderr or p.stdout)}", ""
    names = output_names(cdir / "m.h")
    got = {}
    for i, name in names.items():
        got[name] = np.load(out / f"output_{i}.npy", allow_pickle=False)
    if names.get(0) != "loss" or got["loss"].size != 1:
        return f"output 0 is {names.get(0)!r}, not the scalar 'loss'", ""
    loss = float(got["loss"].reshape(()))
    loss_frac = abs(loss - exp_loss) / (LOSS_ATOL + LOSS_RTOL * abs(exp_loss))
    detail = f"loss {loss:.6g} (diff {abs(loss - exp_loss):.1e})"
    for name, g in got.items():
        if not np.isfinite(g).all():
            return f"output '{name}' is not finite", detail
    missing = [n for n in exp_grads if "grad_" + n not in got]
    if missing:
        return f"no graphc output grad_<name> for parameter(s) {', '.join(missing[:4])}", detail
    worst = (-1.0, "", "")
    for name, e in exp_grads.items():
        g = got["grad_" + name]
        if g.shape != e.shape:
            return f"grad_{name}: shape {g.shape} != expected {e.shape}", detail
        frac, what = tensor_error(g, e, deep)
        if frac > worst[0]:
            worst = (frac, name, what)
    detail += f"; worst {worst[1]} {worst[2]} = {worst[0]:.2f} of tolerance ({len(exp_grads)} tensors)"
    if loss_frac > 1:
        return f"loss {loss:.8g} != expected {exp_loss:.8g}", detail
    if worst[0] > 1:
        return "gradient out of tolerance", detail
    return None, detail


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--graphc", default=str(ROOT / "build" / "graphc"), help="path of the graphc binary")
    ap.add_argument("--work", help="scratch folder (default: a temporary one, removed afterwards)")
    ap.add_argument("--filter", help="only models whose name (e.g. lenet_op17) contains this substring")
    ap.add_argument("-j", type=int, default=os.cpu_count() or 1, help="models compiled/built/run in parallel")
    ap.add_argument("--keep", action="store_true", help="keep the work folders of passing models")
    ap.add_argument("--seed", type=int, default=0, help="seed for weights and inputs")
    args = ap.parse_args()
    args.graphc = os.path.abspath(args.graphc)
    if not os.access(args.graphc, os.X_OK):
        sys.exit(f"graphc binary not found: {args.graphc} (pass --graphc PATH)")
    try:
        import torch
        torch.set_num_threads(1)
    except ImportError:
        sys.exit("PyTorch not found: install python3-torch and python3-torchvision (scripts/setup.sh)")
    blas_for = {13: blas_setup("0"), 17: blas_setup("auto")}
    temp_work = not args.work
    work = Path(args.work or tempfile.mkdtemp(prefix="graphc-grads-")).resolve()
    work.mkdir(parents=True, exist_ok=True)
    cases = [(f"{name}_op{opset}", make, opset, deep) for name, (make, deep) in MODELS.items() for opset in OPSETS]
    if args.filter:
        cases = [c for c in cases if args.filter in c[0]]
    if not cases:
        sys.exit("no model matches the filter")
    t0 = time.time()
    results = {}
    print_lock = threading.Lock()

    def report(case, why, detail, times):
        results[case] = why is None
        steps = " ".join(f"{k} {times[k]:.1f}s" for k in ("export", "compile", "build", "run") if k in times)
        text = detail if why is None else why + (f" [{detail}]" if detail else "")
        with print_lock:
            print(f"{'PASS' if why is None else 'FAIL'} {case:20s} {text}  ({steps})", flush=True)

    def finish(case, folder, expected, deep, times, blas):
        try:
            why, detail = check(args, folder, expected, deep, times, blas)
        except Exception as e:  # a harness bug fails the model, not the run
            why, detail = f"harness: {type(e).__name__}: {one_line(str(e))}", ""
        report(case, why, detail, times)
        if why is None and not args.keep:
            shutil.rmtree(folder, ignore_errors=True)

    # Exports and the PyTorch references run in this thread; compile/build/run in the pool.
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.j)) as pool:
        futs = []
        for case, make, opset, deep in cases:
            folder = work / case
            shutil.rmtree(folder, ignore_errors=True)
            times = {}
            t = time.time()
            try:
                expected = export(make, opset, folder, args.seed)
            except Exception as e:
                times["export"] = time.time() - t
                report(case, f"torch export: {type(e).__name__}: {one_line(str(e))}", "", times)
                continue
            times["export"] = time.time() - t
            futs.append(pool.submit(finish, case, folder, expected, deep, times, blas_for[opset]))
        for f in futs:
            f.result()

    passed = sum(1 for ok in results.values() if ok)
    failed = len(results) - passed
    if temp_work and failed == 0:
        shutil.rmtree(work, ignore_errors=True)
    elif failed:
        print(f"work folder (failed models kept): {work}")
    print(f"total {time.time() - t0:.0f}s")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
