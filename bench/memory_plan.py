#!/usr/bin/python3
"""memory_plan.py — graphc's arena and kernel count against the greedy baseline.

For ResNet-18, MobileNetV2 and two TransformerEncoders (the real-model test's:
2 layers, d_model 256, feed-forward 512, sequence 16; and one with PyTorch's
default feed-forward 2048 at sequence 256) — PyTorch exports, batch 1, float32,
seeded random weights, export code from tests/models/torch_models.py —
this script

  1. computes the baseline the issue measures against, independently of graphc:
     the ONNX graph as exported (unfused, export order), every intermediate
     tensor (not graph inputs, initializers or outputs) a buffer alive from the
     node that produces it to the last node that reads it, sizes from ONNX shape
     inference rounded up to 64 bytes, placed by greedy-by-size (largest first,
     lowest 64-aligned offset that does not overlap a placed buffer with an
     intersecting lifetime);
  2. runs `graphc compile --report` at -O0 and -O2 and reads the two report lines
     `kernels: N` and `arena: A bytes, lower bound: L bytes, no-reuse: S bytes`;
  3. prints one table row per model and level, the ratios arena/lower bound and
     arena/baseline, and the issue's limits (arena <= 1.02 x lower bound and
     <= 0.65 x baseline; ResNet-18 <= 25 kernels, MobileNetV2 <= 56).

Usage: bench/memory_plan.py [--graphc build/graphc] [--work DIR] [--opset 13]
The exit status is 0 even when a limit is missed (this is a measurement); the
table says which rows meet the limits.
"""
import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "models"))
import torch_models as tm  # noqa: E402


def transformer_256():
    """The transformer of the memory figures: 2 layers, d_model 256, 8 heads, PyTorch's
    default feed-forward width 2048, batch 1, sequence 256."""
    import torch.nn as nn
    layer = nn.TransformerEncoderLayer(d_model=256, nhead=8, dropout=0.1, batch_first=True)
    return nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False), (1, 256, 256)


MODELS = [("resnet18", tm.DEFAULT["resnet18"], 25),
          ("mobilenet_v2", tm.DEFAULT["mobilenet_v2"], 56),
          ("transformer", tm.DEFAULT["transformer"], None),
          ("transformer256", transformer_256, None)]
ALIGN = 64


def align(n):
    return (n + ALIGN - 1) // ALIGN * ALIGN


DT_BYTES = {"f32": 4, "f64": 8, "f16": 2, "bf16": 2, "i8": 1, "u8": 1, "i16": 2, "u16": 2, "i32": 4,
            "u32": 4, "i64": 8, "u64": 8, "bool": 1}


def graphc_sizes(graphc, model_path):
    """Byte sizes of every value graphc's shape inference types (-O0, the dump after
    infer-shapes), for the tensors ONNX's own shape inference leaves without a static
    shape (the transformer's Shape->Slice->Reshape chains)."""
    p = subprocess.run([graphc, "dump", str(model_path), "-O0", "--print-after=infer-shapes"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        raise SystemExit(f"graphc dump {model_path} failed: {p.stderr.strip()}")
    sizes = {}
    for m in re.finditer(r'%("(?:[^"\\]|\\.)*"|[A-Za-z0-9_.$/-]+): ([a-z0-9]+)\[([0-9,]*)\]', p.stdout):
        name = m.group(1)
        if name.startswith('"'):
            name = bytes(name[1:-1], "utf-8").decode("unicode_escape")
        n = 1
        for d in filter(None, m.group(3).split(",")):
            n *= int(d)
        sizes[name] = n * DT_BYTES[m.group(2)]
    return sizes


def baseline(model_path, graphc):
    """(greedy arena, live-set lower bound, node count) of the unfused ONNX graph."""
    import onnx
    from onnx import shape_inference
    m = shape_inference.infer_shapes(onnx.load(str(model_path)))
    g = m.graph
    sizes = {}
    for vi in list(g.value_info) + list(g.output) + list(g.input):
        tt = vi.type.tensor_type
        if not tt.HasField("shape"):
            continue
        n = 1
        for d in tt.shape.dim:
            if not d.HasField("dim_value"):
                n = None
                break
            n *= d.dim_value
        if n is not None:
            esize = onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[tt.elem_type].itemsize
            sizes[vi.name] = n * esize
    outside = {i.name for i in g.initializer} | {i.name for i in g.input} | {o.name for o in g.output}
    first, last = {}, {}
    for s, node in enumerate(g.node):
        for v in node.input:
            if v in first:
                last[v] = s
        for v in node.output:
            if v and v not in outside and node.op_type != "Constant":
                first[v] = s
                last[v] = s
    bufs = []
    if any(v not in sizes for v in first):
        sizes = {**graphc_sizes(graphc, model_path), **sizes}
    for v, f in first.items():
        if v not in sizes:
            raise SystemExit(f"{model_path}: no static shape for '{v}' after ONNX shape inference")
        if sizes[v]:
            bufs.append((align(sizes[v]), f, last[v]))
    placed = []
    arena = 0
    for size, f, l in sorted(bufs, key=lambda b: (-b[0], b[1])):
        busy = sorted((o, o + sz) for sz, o, pf, pl in placed if not (pl < f or l < pf))
        off = 0
        for lo, hi in busy:
            if off + size <= lo:
                break
            off = max(off, align(hi))
        placed.append((size, off, f, l))
        arena = max(arena, off + size)
    steps = len(g.node)
    lb = max((sum(sz for sz, o, f, l in placed if f <= s <= l) for s in range(steps)), default=0)
    return arena, lb, steps


def report(graphc, model, level, work):
    out = work / f"c_O{level}"
    p = subprocess.run([graphc, "compile", str(model), "-o", str(out), "--name", "m", f"-O{level}", "--report"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        raise SystemExit(f"graphc compile -O{level} {model} failed: {p.stderr.strip()}")
    k = re.search(r"^kernels: (\d+)$", p.stdout, re.M)
    a = re.search(r"^arena: (\d+) bytes, lower bound: (\d+) bytes, no-reuse: (\d+) bytes$", p.stdout, re.M)
    if not k or not a:
        raise SystemExit(f"graphc compile --report printed no kernels/arena lines:\n{p.stdout}")
    return int(k.group(1)), int(a.group(1)), int(a.group(2)), int(a.group(3))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--graphc", default=str(ROOT / "build" / "graphc"))
    ap.add_argument("--work", help="scratch folder (default: a temporary one)")
    ap.add_argument("--opset", type=int, default=13)
    args = ap.parse_args()
    work = Path(args.work or tempfile.mkdtemp(prefix="graphc-mem-"))
    mb = lambda b: f"{b / 1e6:.2f}"
    print(f"opset {args.opset}; MB = 10^6 bytes; baseline = greedy-by-size on the unfused ONNX graph")
    print(f"{'model':14} {'nodes':>5} {'base MB':>8} {'lvl':>3} {'kernels':>7} {'arena MB':>8} {'LB MB':>7} "
          f"{'no-reuse':>8} {'A/LB':>5} {'A/base':>6}  limits")
    for name, make, kmax in MODELS:
        folder = work / f"{name}_op{args.opset}"
        if not (folder / "model.onnx").exists():
            tm.export(name, make, args.opset, folder, 0)
        base, base_lb, nodes = baseline(folder / "model.onnx", args.graphc)
        for level in (0, 2):
            k, a, lb, nr = report(args.graphc, folder / "model.onnx", level, folder)
            ok = a <= 1.02 * lb and a <= 0.65 * base and (kmax is None or k <= kmax)
            lim = ("met" if ok else "missed") if level == 2 else "-"
            print(f"{name:14} {nodes:5d} {mb(base):>8} {'-O' + str(level):>3} {k:7d} {mb(a):>8} {mb(lb):>7} "
                  f"{mb(nr):>8} {a / lb if lb else 0:5.3f} {a / base:6.3f}  {lim}")


if __name__ == "__main__":
    main()
