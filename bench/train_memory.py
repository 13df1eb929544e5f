#!/usr/bin/python3
"""train_memory.py — the training arena against its bounds.

    /usr/bin/python3 bench/train_memory.py [--graphc build/graphc] [--batch 8]

Builds a ResNet-style CNN in PyTorch (a 3x3 stem, three stages of two
BasicBlocks with residual adds — 16, 32 and 64 channels, the last two
downsampling by a strided conv with a 1x1 projection — global average pool,
a 10-way linear layer; BatchNorm in training form), exports it to ONNX with
its logits as output (training-mode BatchNormalization, opset 17, input
batch x 3 x 32 x 32), and compiles the training step of each optimizer with
`graphc compile --train --loss=cross-entropy:logits --report` twice: as is,
and with --plan-keep-forward (every value the forward part produces lives to
the end of the step, what the arena would be if no backward dependency were
declared and everything the forward pass made were kept). Prints the arena,
the planner's live-set lower bound for the same schedule, and the two
ratios the issue sets: arena / lower bound (target <= 1.02) and arena /
keep-forward arena (target <= 0.7).
"""
import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def resnet_style(torch):
    nn = torch.nn

    class Block(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.c1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.b1 = nn.BatchNorm2d(cout)
            self.c2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.b2 = nn.BatchNorm2d(cout)
            self.proj = None
            if stride != 1 or cin != cout:
                self.proj = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

        def forward(self, x):
            y = torch.relu(self.b1(self.c1(x)))
            y = self.b2(self.c2(y))
            return torch.relu(y + (self.proj(x) if self.proj is not None else x))

    layers = [nn.Conv2d(3, 16, 3, 1, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU()]
    cin = 16
    for cout, stride in ((16, 1), (32, 2), (64, 2)):
        layers += [Block(cin, cout, stride), Block(cout, cout, 1)]
        cin = cout
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 10)]
    return nn.Sequential(*layers)


def report(graphc, onnx_path, out, opt, extra):
    p = subprocess.run([graphc, "compile", str(onnx_path), "-o", str(out), "--name", "m", "--train",
                        "--loss=cross-entropy:logits", f"--optimizer={opt}", "--report", *extra],
                       capture_output=True, text=True)
    if p.returncode:
        sys.exit(f"graphc compile failed: {p.stderr.strip()}")
    m = re.search(r"arena: (\d+) bytes, lower bound: (\d+) bytes", p.stdout)
    st = re.search(r"state: (\d+) bytes", p.stdout)
    return int(m.group(1)), int(m.group(2)), int(st.group(1))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--graphc", default=str(ROOT / "build/graphc"))
    ap.add_argument("--batch", type=int, default=8)
    args = ap.parse_args()
    import torch
    import warnings
    warnings.filterwarnings("ignore")
    torch.manual_seed(0)
    model = resnet_style(torch).train()
    work = Path(tempfile.mkdtemp(prefix="train_memory_"))
    onnx_path = work / "resnet_style.onnx"
    torch.onnx.export(model, torch.zeros(args.batch, 3, 32, 32), str(onnx_path), opset_version=17,
                      input_names=["x"], output_names=["logits"], training=torch.onnx.TrainingMode.TRAINING,
                      do_constant_folding=False)
    print(f"ResNet-style CNN, batch {args.batch}, 3x32x32, BatchNorm in training form (MiB = 2^20 bytes)")
    print(f"{'optimizer':<10} {'arena':>10} {'lower bd':>10} {'keep-fwd':>10} {'state':>9} "
          f"{'arena/LB':>9} {'arena/keep':>11}")
    ok = True
    for opt in ("sgd:lr=0.01,momentum=0.9", "adam:lr=0.001"):
        a, lb, st = report(args.graphc, onnx_path, work / "a", opt, [])
        k, _, _ = report(args.graphc, onnx_path, work / "k", opt, ["--plan-keep-forward"])
        r1, r2 = a / lb, a / k
        ok &= r1 <= 1.02 and r2 <= 0.7
        mib = lambda x: f"{x / 2**20:.2f}M"
        print(f"{opt.split(':')[0]:<10} {mib(a):>10} {mib(lb):>10} {mib(k):>10} {mib(st):>9} {r1:>9.3f} {r2:>11.3f}")
    print("targets: arena/LB <= 1.02, arena/keep <= 0.7:", "met" if ok else "NOT met")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
