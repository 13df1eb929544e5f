#!/usr/bin/python3
"""large_graphs.py — compile time on very large graphs (linear, not quadratic).

    /usr/bin/python3 bench/large_graphs.py [--graphc build/graphc] [--baseline OLD/graphc]
                                           [--work DIR] [--repeat N] [--timeout S] [--make]

Builds, once into --work (default /tmp/graphc-large), then times
`graphc compile MODEL -o OUT --name m` (best of --repeat, default 3) on:

| model          | what                                                               |
| -------------- | ------------------------------------------------------------------ |
| chain-1k/10k/100k | alternating Relu/Sigmoid elementwise chains in text IR (issue 14's case) |
| onnx-chain-100k | the 100k chain as an ONNX file                                    |
| mixed-100k     | MatMul/Neg/Softmax/Add repeated: 75,000 kernels that do not fuse   |
| rnn-1000       | a PyTorch RNNCell traced over 1,000 time steps, exported to ONNX   |
| encoder-48     | a 48-layer PyTorch TransformerEncoder (d 256, 4 heads, seq 128),   |
|                | each layer's weights drawn separately, exported to ONNX            |

With --baseline, the same models are timed with a second graphc binary in the
same run (ratio = baseline / graphc); a run over --timeout seconds (default
120) prints as ">S". With --make, the generated C of the models up to 10,000
nodes is also built (`make -C OUT`, one run) to show the C compiler's share.
Needs Debian's python3-onnx and python3-torch (scripts/setup.sh installs them).
"""
import argparse
import os
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def chain_gir(n, path):
    with open(path, "w") as f:
        f.write("graph chain {\n  input %x: f32[64]\n")
        prev = "%x"
        for i in range(n):
            f.write(f"  %v{i} = {'Relu' if i % 2 == 0 else 'Sigmoid'}({prev})\n")
            prev = f"%v{i}"
        f.write(f"  output {prev}\n}}\n")


def mixed_gir(n, path):
    with open(path, "w") as f:
        f.write("graph mixed {\n  input %x: f32[4,8]\n  input %w: f32[8,8]\n")
        prev = "%x"
        for i in range(n):
            k = i % 4
            rhs = [f"MatMul({prev}, %w)", f"Neg({prev})", f"Softmax({prev})", f"Add({prev}, %x)"][k]
            f.write(f"  %v{i} = {rhs}\n")
            prev = f"%v{i}"
        f.write(f"  output {prev}\n}}\n")


def chain_onnx(n, path):
    import onnx
    from onnx import TensorProto, helper
    nodes, prev = [], "x"
    for i in range(n):
        nodes.append(helper.make_node("Relu" if i % 2 == 0 else "Sigmoid", [prev], [f"v{i}"]))
        prev = f"v{i}"
    g = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [64])],
                          [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [64])])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)


def rnn_onnx(steps, path):
    import torch

    class Rec(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.cell = torch.nn.RNNCell(16, 32)

        def forward(self, x):
            h = torch.zeros(1, 32)
            for t in range(x.shape[0]):
                h = self.cell(x[t:t + 1], h)
            return h

    torch.manual_seed(0)
    torch.onnx.export(Rec().eval(), torch.randn(steps, 16), path, opset_version=13)


def encoder_onnx(layers, path):
    import torch
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(256, 4, 512, dropout=0.0, batch_first=True)
    enc = torch.nn.TransformerEncoder(layer, layers, enable_nested_tensor=False).eval()
    with torch.no_grad():  # the copies start equal; give each layer its own weights
        for p in enc.parameters():
            p.copy_(torch.randn_like(p) * 0.05)
    torch.onnx.export(enc, torch.randn(1, 128, 256), path, opset_version=13)


MODELS = [
    ("chain-1k", "chain1k.gir", 1000, lambda p: chain_gir(1000, p)),
    ("chain-10k", "chain10k.gir", 10000, lambda p: chain_gir(10000, p)),
    ("chain-100k", "chain100k.gir", 100000, lambda p: chain_gir(100000, p)),
    ("onnx-chain-100k", "chain100k.onnx", 100000, lambda p: chain_onnx(100000, p)),
    ("mixed-100k", "mixed100k.gir", 100000, lambda p: mixed_gir(100000, p)),
    ("rnn-1000", "rnn1000.onnx", None, lambda p: rnn_onnx(1000, p)),
    ("encoder-48", "encoder48.onnx", None, lambda p: encoder_onnx(48, p)),
]


def time_compile(graphc, model, out, repeat, timeout):
    best = None
    for _ in range(repeat):
        shutil.rmtree(out, ignore_errors=True)
        t0 = time.perf_counter()
        try:
            p = subprocess.run([graphc, "compile", model, "-o", out, "--name", "m"], capture_output=True, text=True,
                               timeout=timeout)
        except subprocess.TimeoutExpired:
            return None, "timeout"
        dt = time.perf_counter() - t0
        if p.returncode < 0:
            import signal
            return None, f"crashed ({signal.Signals(-p.returncode).name})"
        if p.returncode != 0:
            return None, (p.stderr.strip().splitlines() or ["failed"])[-1][:80]
        best = dt if best is None else min(best, dt)
    return best, ""


def node_count(path):
    if path.endswith(".onnx"):
        import onnx
        return len(onnx.load(path, load_external_data=False).graph.node)
    with open(path) as f:
        return sum(1 for line in f if " = " in line)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--graphc", default=os.path.join(ROOT, "build", "graphc"))
    ap.add_argument("--baseline", help="a second graphc binary timed on the same models")
    ap.add_argument("--work", default="/tmp/graphc-large")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--make", action="store_true", help="also build the generated C (models up to 10k nodes)")
    ap.add_argument("--models", help="comma-separated subset of: " + ",".join(m[0] for m in MODELS))
    args = ap.parse_args()
    graphc = os.path.abspath(args.graphc)
    if not os.access(graphc, os.X_OK):
        sys.exit(f"graphc binary not found: {graphc} (build it, or pass --graphc)")
    os.makedirs(args.work, exist_ok=True)
    pick = set(args.models.split(",")) if args.models else None
    head = f"| model | nodes | graphc compile s |"
    sep = "| --- | ---: | ---: |"
    if args.baseline:
        head += " baseline s | baseline / graphc |"
        sep += " ---: | ---: |"
    if args.make:
        head += " make s |"
        sep += " ---: |"
    print(head)
    print(sep)
    for name, fname, n, make in MODELS:
        if pick and name not in pick:
            continue
        path = os.path.join(args.work, fname)
        if not os.path.exists(path):
            print(f"(building {fname})", file=sys.stderr)
            make(path)
        nodes = node_count(path)
        out = os.path.join(args.work, "out_" + name)
        t, err = time_compile(graphc, path, out, args.repeat, args.timeout)
        row = f"| {name} | {nodes} | {f'{t:.2f}' if t is not None else err} |"
        if args.baseline:
            tb, errb = time_compile(os.path.abspath(args.baseline), path, out + "_base", 1, args.timeout)
            shown = f"{tb:.2f}" if tb is not None else (f">{args.timeout:.0f}" if errb == "timeout" else errb)
            ratio = f"{tb / t:.1f}" if tb is not None and t else "-"
            row += f" {shown} | {ratio} |"
        if args.make:
            ms = "-"
            if t is not None and nodes <= 10000:
                subprocess.run([graphc, "compile", path, "-o", out, "--name", "m"], capture_output=True)
                t0 = time.perf_counter()
                p = subprocess.run(["make", "-s", "-C", out], capture_output=True, text=True)
                ms = f"{time.perf_counter() - t0:.1f}" if p.returncode == 0 else "failed"
            row += f" {ms} |"
        print(row, flush=True)


if __name__ == "__main__":
    main()
