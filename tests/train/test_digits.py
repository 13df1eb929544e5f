#!/usr/bin/python3
"""test_digits.py — training end to end: graphc's generated training step
against PyTorch on scikit-learn's bundled digits (8x8 images, 10 classes).

For an MLP (64-32-10) and a small CNN (conv 3x3 -> ReLU -> max-pool ->
linear), each with SGD-momentum and with Adam, and the CNN with a
BatchNorm after the conv (SGD; exported in training form: the training step
normalizes with batch statistics and updates the running ones in the state
region, and NAME_infer_v normalizes with those, as PyTorch's eval() does),
the test

  1. builds the model in PyTorch with seeded weights and exports it to ONNX
     (opset 13, batch 32, the logits as output);
  2. compiles it with `graphc compile --train --loss=cross-entropy:logits
     --optimizer=...` and builds tests/train/train_driver.c against it
     (with ASan/UBSan when GRAPHC_SANITIZE=1);
  3. feeds both the same batches (a seeded shuffle per epoch) for STEPS
     steps: the driver calls NAME_train_step, PyTorch runs the same model
     with torch.optim.SGD / Adam and CrossEntropyLoss;
  4. checks that the losses agree step by step over the first 50 steps
     (|graphc - torch| <= 1e-3 |torch|), and that NAME_infer_v on the
     trained state classifies the held-out 360 digits with accuracy >= 95%.

One line per case, then "N passed, M failed"; exit status 1 on any failure.
"""
import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent.parent
B = 32
STEPS = 300
COMPARE = 50
RTOL = 1e-3
MIN_ACC = 0.95
SAN = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all"] if os.environ.get("GRAPHC_SANITIZE") == "1" else []
OPTIMIZERS = {
    "sgd": ("sgd:lr=0.05,momentum=0.9", lambda p, torch: torch.optim.SGD(p, lr=0.05, momentum=0.9)),
    "adam": ("adam:lr=0.01", lambda p, torch: torch.optim.Adam(p, lr=0.01)),
}


def data():
    from sklearn.datasets import load_digits
    d = load_digits()
    x = (d.data / 16.0).astype(np.float32)
    y = d.target.astype(np.int64)
    rng = np.random.default_rng(0)
    order = rng.permutation(len(x))
    x, y = x[order], y[order]
    return (x[360:], y[360:]), (x[:360], y[:360])


def models(torch):
    nn = torch.nn

    def mlp():
        return nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 10)), (64,)

    def cnn():
        return nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                             nn.Linear(8 * 4 * 4, 10)), (1, 8, 8)

    def cnnbn():
        return nn.Sequential(nn.Conv2d(1, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
                             nn.Flatten(), nn.Linear(8 * 4 * 4, 10)), (1, 8, 8)

    return {"mlp": mlp, "cnn": cnn, "cnnbn": cnnbn}


def batches(train, shape):
    x, y = train
    rng = np.random.default_rng(1)
    out, order = [], []
    while len(out) < STEPS:
        if len(order) < B:
            order = list(rng.permutation(len(x)))
        idx, order = order[:B], order[B:]
        out.append((x[idx].reshape((B,) + shape), y[idx]))
    return out


def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=600, **kw)


def case(args, torch, name, make, opt, train, test, work):
    torch.manual_seed(0)
    model, shape = make()
    onnx_path = work / "model.onnx"
    bn = any(isinstance(m, torch.nn.BatchNorm2d) for m in model.modules())
    # BatchNorm in training form (the export's own forward pass moves the module's running statistics; the
    # ONNX file keeps the initial ones, and the training loss does not depend on them)
    torch.onnx.export(model, torch.zeros((B,) + shape), str(onnx_path), opset_version=13, input_names=["x"],
                      output_names=["logits"], do_constant_folding=not bn,
                      training=torch.onnx.TrainingMode.TRAINING if bn else torch.onnx.TrainingMode.EVAL)
    spec, make_opt = OPTIMIZERS[opt]
    out = work / "c"
    p = run([args.graphc, "compile", str(onnx_path), "-o", str(out), "--name", "m", "--weights=c-array", "--train",
             "--loss=cross-entropy:logits", f"--optimizer={spec}"])
    if p.returncode:
        return f"graphc compile: {p.stderr.strip()}"
    exe = work / "driver"
    p = run([os.environ.get("CC", "cc"), "-O2", "-std=c99", "-Wall", "-Wextra", "-Werror", *SAN, "-DMODEL=m",
             f"-I{out}", str(ROOT / "tests/train/train_driver.c"), str(out / "m.c"), str(out / "m_weights.c"),
             "-o", str(exe), "-lm"])
    if p.returncode:
        return f"cc: {p.stderr.strip()[-800:]}"
    stream = batches(train, shape)
    with open(work / "batches.bin", "wb") as f:
        for bx, by in stream:
            f.write(np.ascontiguousarray(bx).tobytes())
            f.write(by.tobytes())
    tx, ty = test
    with open(work / "test.bin", "wb") as f:
        for s in range(0, len(tx), B):
            bx = np.zeros((B,) + shape, np.float32)
            by = np.full(B, -1, np.int64)
            n = min(B, len(tx) - s)
            bx[:n] = tx[s:s + n].reshape((n,) + shape)
            by[:n] = ty[s:s + n]
            f.write(bx.tobytes())
            f.write(by.tobytes())
    p = run([str(exe), str(work / "batches.bin"), str(work / "test.bin"), str(work / "losses.txt")])
    if p.returncode:
        return f"train_driver: {p.stderr.strip()}"
    acc = float(p.stdout.split("accuracy:")[1].split()[0])
    got = np.loadtxt(work / "losses.txt")
    # PyTorch from the same initial weights (the model has not been trained: the export read them)
    o = make_opt(model.parameters(), torch)
    lossf = torch.nn.CrossEntropyLoss()
    exp = []
    for bx, by in stream[:COMPARE]:
        o.zero_grad()
        loss = lossf(model(torch.from_numpy(bx)), torch.from_numpy(by))
        loss.backward()
        o.step()
        exp.append(loss.item())
    exp = np.array(exp)
    rel = np.abs(got[:COMPARE] - exp) / np.abs(exp)
    worst = int(np.argmax(rel))
    detail = (f"loss {got[0]:.4f} -> {got[-1]:.4f} over {len(got)} steps, max rel diff vs torch {rel.max():.2e} "
              f"(step {worst}), test accuracy {acc:.4f}")
    if len(got) != STEPS:
        return f"{len(got)} losses for {STEPS} steps"
    if not (rel <= RTOL).all():
        return f"loss curve departs from PyTorch at step {int(np.argmax(rel > RTOL))}: " + detail
    if acc < MIN_ACC:
        return f"accuracy below {MIN_ACC}: " + detail
    return "ok " + detail


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--graphc", required=True)
    ap.add_argument("--work", default=None)
    args = ap.parse_args()
    args.graphc = str(Path(args.graphc).resolve())
    import torch
    import warnings
    warnings.filterwarnings("ignore")
    torch.set_num_threads(1)
    train, test = data()
    work = Path(args.work or tempfile.mkdtemp(prefix="digits_"))
    failed = n_cases = 0
    for name, make in models(torch).items():
        for opt in (("sgd",) if name == "cnnbn" else OPTIMIZERS):
            w = work / f"{name}_{opt}"
            w.mkdir(parents=True, exist_ok=True)
            r = case(args, torch, name, make, opt, train, test, w)
            n_cases += 1
            ok = r.startswith("ok ")
            failed += not ok
            print(f"{'PASS' if ok else 'FAIL'} {name} {opt}: {r[3:] if ok else r}", flush=True)
    print(f"{n_cases - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
