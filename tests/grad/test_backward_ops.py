#!/usr/bin/python3
"""test_backward_ops.py — the grad op family against PyTorch autograd.

Each case is one backward node (ConvGradData, ConvGradFilter, MaxPoolGrad,
AveragePoolGrad, SoftmaxGrad, LogSoftmaxGrad, LayerNormalizationGrad,
BatchNormalizationGrad) with ONNX-style attributes, and the gradients that
torch.autograd.grad gives for the forward op (conv1d/2d/3d, max_pool*d,
avg_pool*d, softmax, log_softmax, layer_norm, batch_norm(training=True)) in
float64 on seeded random data. All cases go into one .gir graph, which runs
once in the reference interpreter (`graphc run`) and once compiled to C
(`graphc compile --emit-main`, built with make under strict C99 warnings, and
the sanitizers when GRAPHC_SANITIZE=1); every output of both must match
PyTorch within rtol 1e-6 (atol 1e-9).

Forward padding PyTorch cannot express (asymmetric pads, auto_pad SAME_*) is
applied with F.pad before the forward op (-inf for max pooling; average
pooling then divides a sum pool by a pooled count mask), so the reference
never reads graphc's geometry code.
"""
import argparse
import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

RTOL, ATOL = 1e-6, 1e-9
STRICT_CFLAGS = "-O1 -std=c99 -Wall -Wextra -Werror -pedantic -Wdouble-promotion"
SAN_FLAGS = "-fsanitize=address,undefined -fno-sanitize-recover=all"


def ints(v):
    return "[" + ",".join(str(int(a)) for a in v) + "]"


def same_pads(ins, k, s, dl, upper):
    """ONNX auto_pad SAME_*: (begin pads, end pads) per spatial dim."""
    pb, pe = [], []
    for i, kk, ss, dd in zip(ins, k, s, dl):
        out = -(-i // ss)
        total = max(0, (out - 1) * ss + (kk - 1) * dd + 1 - i)
        b = total // 2 if upper else total - total // 2
        pb.append(b)
        pe.append(total - b)
    return pb, pe


def torch_pad(x, pb, pe, value=0.0):
    """F.pad with ONNX-ordered begin/end pads over the spatial dims."""
    spec = []
    for b, e in zip(reversed(pb), reversed(pe)):
        spec += [b, e]
    return F.pad(x, spec, value=value)


class Case:
    """One backward node: gir text, its named inputs and the expected outputs."""

    def __init__(self, name, op, ins, outs, attrs, expected):
        self.name, self.op, self.ins, self.outs, self.attrs, self.expected = name, op, ins, outs, attrs, expected


def t64(a):
    return torch.tensor(a, dtype=torch.float64, requires_grad=True)


CONV_FNS = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}
MAXPOOL_FNS = {1: F.max_pool1d, 2: F.max_pool2d, 3: F.max_pool3d}
AVGPOOL_FNS = {1: F.avg_pool1d, 2: F.avg_pool2d, 3: F.avg_pool3d}


def conv_cases(rng, tag, xs, ws, group=1, strides=None, dilations=None, pads=None, auto_pad=None):
    sr = len(xs) - 2
    s = strides or [1] * sr
    dl = dilations or [1] * sr
    k = ws[2:]
    if auto_pad:
        pb, pe = same_pads(xs[2:], k, s, dl, auto_pad == "SAME_UPPER")
    else:
        p = pads or [0] * (2 * sr)
        pb, pe = p[:sr], p[sr:]
    x, w = t64(rng.uniform(-1, 1, xs)), t64(rng.uniform(-1, 1, ws))
    y = CONV_FNS[sr](torch_pad(x, pb, pe), w, stride=s, dilation=dl, groups=group)
    dy = rng.uniform(-1, 1, tuple(y.shape))
    gx, gw = torch.autograd.grad(y, (x, w), torch.tensor(dy))
    attrs = [f"group={group}", f"strides={ints(s)}", f"dilations={ints(dl)}", f"kernel_shape={ints(k)}"]
    attrs += [f'auto_pad="{auto_pad}"'] if auto_pad else [f"pads={ints(pb + pe)}"]
    return [
        Case(f"{tag}_data", "ConvGradData", [("dy", dy), ("w", w.detach().numpy())], ["dx"],
             attrs + [f"x_shape={ints(xs)}"], [gx.numpy()]),
        Case(f"{tag}_filter", "ConvGradFilter", [("x", x.detach().numpy()), ("dy", dy)], ["dw"],
             attrs + [f"w_shape={ints(ws)}"], [gw.numpy()]),
    ]


def maxpool_case(rng, tag, xs, k, strides=None, dilations=None, pads=None, auto_pad=None, ceil_mode=0,
                 ties=False):
    """Symmetric pads go to PyTorch's `padding` (ceil_mode then follows the
    same rule as ONNX); others are applied with F.pad(-inf), without ceil_mode."""
    sr = len(xs) - 2
    s = strides or [1] * sr
    dl = dilations or [1] * sr
    if auto_pad:
        pb, pe = same_pads(xs[2:], k, s, dl, auto_pad == "SAME_UPPER")
    else:
        p = pads or [0] * (2 * sr)
        pb, pe = p[:sr], p[sr:]
    xv = rng.integers(0, 3, xs).astype(np.float64) if ties else rng.uniform(-2, 2, xs)
    x = t64(xv)
    if pb == pe:
        y = MAXPOOL_FNS[sr](x, k, stride=s, padding=pb, dilation=dl, ceil_mode=bool(ceil_mode))
    else:
        assert not ceil_mode
        y = MAXPOOL_FNS[sr](torch_pad(x, pb, pe, -math.inf), k, stride=s, dilation=dl)
    dy = rng.uniform(-1, 1, tuple(y.shape))
    (gx,) = torch.autograd.grad(y, (x,), torch.tensor(dy))
    attrs = [f"kernel_shape={ints(k)}", f"strides={ints(s)}", f"dilations={ints(dl)}", f"ceil_mode={ceil_mode}"]
    attrs += [f'auto_pad="{auto_pad}"'] if auto_pad else [f"pads={ints(pb + pe)}"]
    return Case(tag, "MaxPoolGrad", [("x", xv), ("dy", dy)], ["dx"], attrs, [gx.numpy()])


def avgpool_case(rng, tag, xs, k, strides=None, pads=None, auto_pad=None, ceil_mode=0, count_include_pad=0):
    """Symmetric pads: PyTorch's avg_pool with the same ceil_mode and
    count_include_pad. Others (no ceil_mode): a sum pool of the zero-padded
    input divided by the sum pool of a mask of the counted positions (the
    input, or with count_include_pad the padded input)."""
    sr = len(xs) - 2
    s = strides or [1] * sr
    if auto_pad:
        pb, pe = same_pads(xs[2:], k, s, [1] * sr, auto_pad == "SAME_UPPER")
    else:
        p = pads or [0] * (2 * sr)
        pb, pe = p[:sr], p[sr:]
    x = t64(rng.uniform(-2, 2, xs))
    fn = AVGPOOL_FNS[sr]
    if pb == pe:
        y = fn(x, k, stride=s, padding=pb, ceil_mode=bool(ceil_mode), count_include_pad=bool(count_include_pad))
    else:
        assert not ceil_mode
        ones = torch.ones(xs, dtype=torch.float64)
        mask = torch_pad(ones, pb, pe, 1.0 if count_include_pad else 0.0)
        kw = {"divisor_override": 1} if sr > 1 else {}
        num = fn(torch_pad(x, pb, pe), k, stride=s, **kw)
        den = fn(mask, k, stride=s, **kw)
        if sr == 1:  # avg_pool1d has no divisor_override: undo its division by k
            num, den = num * k[0], den * k[0]
        y = num / den
    dy = rng.uniform(-1, 1, tuple(y.shape))
    (gx,) = torch.autograd.grad(y, (x,), torch.tensor(dy))
    attrs = [f"kernel_shape={ints(k)}", f"strides={ints(s)}", f"ceil_mode={ceil_mode}",
             f"count_include_pad={count_include_pad}", f"x_shape={ints(xs)}"]
    attrs += [f'auto_pad="{auto_pad}"'] if auto_pad else [f"pads={ints(pb + pe)}"]
    return Case(tag, "AveragePoolGrad", [("dy", dy)], ["dx"], attrs, [gx.numpy()])


def softmax_case(rng, tag, xs, axis, log):
    x = t64(rng.uniform(-3, 3, xs))
    y = (F.log_softmax if log else F.softmax)(x, dim=axis)
    dy = rng.uniform(-1, 1, xs)
    (gx,) = torch.autograd.grad(y, (x,), torch.tensor(dy))
    op = "LogSoftmaxGrad" if log else "SoftmaxGrad"
    return Case(tag, op, [("dy", dy), ("y", y.detach().numpy())], ["dx"], [f"axis={axis}"], [gx.numpy()])


def layernorm_case(rng, tag, xs, axis, eps, n_out=3):
    a = axis % len(xs)
    x = t64(rng.uniform(-2, 2, xs))
    sc, b = t64(rng.uniform(0.5, 1.5, xs[a:])), t64(rng.uniform(-1, 1, xs[a:]))
    y = F.layer_norm(x, xs[a:], sc, b, eps)
    dy = rng.uniform(-1, 1, xs)
    grads = [g.numpy() for g in torch.autograd.grad(y, (x, sc, b), torch.tensor(dy))]
    return Case(tag, "LayerNormalizationGrad", [("dy", dy), ("x", x.detach().numpy()), ("s", sc.detach().numpy())],
                ["dx", "ds", "db"][:n_out], [f"axis={axis}", f"epsilon={eps!r}"], grads[:n_out])


def batchnorm_case(rng, tag, xs, eps, n_out=3):
    x = t64(rng.uniform(-2, 2, xs))
    sc, b = t64(rng.uniform(0.5, 1.5, xs[1:2])), t64(rng.uniform(-1, 1, xs[1:2]))
    y = F.batch_norm(x, None, None, sc, b, training=True, eps=eps)
    dy = rng.uniform(-1, 1, xs)
    grads = [g.numpy() for g in torch.autograd.grad(y, (x, sc, b), torch.tensor(dy))]
    return Case(tag, "BatchNormalizationGrad", [("dy", dy), ("x", x.detach().numpy()), ("s", sc.detach().numpy())],
                ["dx", "ds", "db"][:n_out], [f"epsilon={eps!r}", "momentum=0.9", "training_mode=1"],
                grads[:n_out])


def all_cases(rng):
    cases = []
    cases += conv_cases(rng, "conv2d_group_stride_dil_asym", [2, 4, 7, 6], [6, 2, 3, 3], group=2,
                        strides=[2, 1], dilations=[1, 2], pads=[1, 0, 2, 1])
    cases += conv_cases(rng, "conv2d_same_upper", [1, 3, 7, 8], [4, 3, 3, 2], strides=[2, 2], auto_pad="SAME_UPPER")
    cases += conv_cases(rng, "conv2d_same_lower_dil", [2, 2, 6, 5], [3, 2, 2, 3], strides=[2, 1],
                        dilations=[2, 1], auto_pad="SAME_LOWER")
    cases += conv_cases(rng, "conv1d_depthwise", [2, 3, 9], [6, 1, 3], group=3, strides=[2], dilations=[2],
                        pads=[2, 1])
    cases += conv_cases(rng, "conv3d", [1, 2, 5, 4, 5], [3, 2, 2, 3, 2], strides=[2, 1, 2], dilations=[1, 1, 2],
                        pads=[1, 0, 0, 0, 1, 1])
    cases += conv_cases(rng, "conv2d_stride_gt_kernel", [1, 2, 8, 7], [2, 2, 1, 2], strides=[3, 3])
    # 1x1 unit-stride unpadded: the kernels multiply X / dX directly (no im2col)
    cases += conv_cases(rng, "conv2d_pointwise_group", [2, 6, 5, 4], [4, 3, 1, 1], group=2)
    # more than one im2col tile per image and group in f64 (2-D: tiles of 113 positions, boundaries
    # inside rows; 1-D: 819)
    cases += conv_cases(rng, "conv2d_tiles", [2, 64, 16, 16], [3, 64, 3, 3], pads=[1, 0, 1, 2])
    cases += conv_cases(rng, "conv1d_tiles", [1, 32, 1000], [2, 16, 5], group=2, strides=[1], dilations=[3],
                        pads=[4, 1])
    cases += [
        maxpool_case(rng, "maxpool2d_ceil_pads", [2, 3, 8, 7], [3, 3], strides=[2, 2], pads=[1, 1, 1, 1],
                     ceil_mode=1),
        maxpool_case(rng, "maxpool2d_dil", [1, 2, 7, 9], [2, 3], strides=[1, 2], dilations=[2, 1],
                     pads=[1, 1, 1, 1]),
        maxpool_case(rng, "maxpool2d_asym", [1, 2, 6, 7], [3, 2], strides=[2, 2], pads=[0, 1, 1, 0]),
        maxpool_case(rng, "maxpool2d_same_upper", [1, 2, 7, 6], [3, 3], strides=[2, 2], auto_pad="SAME_UPPER"),
        maxpool_case(rng, "maxpool2d_ties_overlap", [2, 2, 6, 6], [3, 3], strides=[1, 1], pads=[1, 1, 1, 1],
                     ties=True),
        maxpool_case(rng, "maxpool1d_ceil", [2, 3, 10], [3], strides=[2], dilations=[2], ceil_mode=1),
        maxpool_case(rng, "maxpool3d", [1, 2, 4, 5, 4], [2, 2, 2], strides=[2, 1, 2], pads=[1, 0, 1, 1, 0, 1]),
        avgpool_case(rng, "avgpool2d_ceil_include", [1, 2, 8, 7], [3, 3], strides=[2, 2], pads=[1, 1, 1, 1],
                     ceil_mode=1, count_include_pad=1),
        avgpool_case(rng, "avgpool2d_ceil_exclude", [2, 2, 8, 7], [3, 3], strides=[2, 2], pads=[1, 1, 1, 1],
                     ceil_mode=1, count_include_pad=0),
        avgpool_case(rng, "avgpool2d_asym_include", [1, 3, 6, 7], [3, 2], strides=[2, 1], pads=[1, 0, 2, 1],
                     count_include_pad=1),
        avgpool_case(rng, "avgpool2d_asym_exclude", [1, 3, 6, 7], [3, 2], strides=[2, 1], pads=[1, 0, 2, 1],
                     count_include_pad=0),
        avgpool_case(rng, "avgpool2d_same_upper", [1, 2, 7, 6], [3, 3], strides=[2, 2], auto_pad="SAME_UPPER"),
        avgpool_case(rng, "avgpool1d_ceil_include", [2, 2, 10], [4], strides=[3], pads=[1, 1], ceil_mode=1,
                     count_include_pad=1),
        avgpool_case(rng, "avgpool3d", [1, 2, 4, 5, 4], [2, 3, 2], strides=[2, 1, 2], pads=[1, 1, 0, 1, 1, 0],
                     count_include_pad=1),
        softmax_case(rng, "softmax_last", [3, 7], -1, False),
        softmax_case(rng, "softmax_axis1", [2, 5, 3], 1, False),
        softmax_case(rng, "softmax_axis0", [4, 3, 2], 0, False),
        softmax_case(rng, "logsoftmax_last", [3, 7], -1, True),
        softmax_case(rng, "logsoftmax_axis1", [2, 5, 3], 1, True),
        layernorm_case(rng, "layernorm_last", [4, 6], -1, 1e-5),
        layernorm_case(rng, "layernorm_axis1", [3, 4, 5], 1, 1e-3),
        layernorm_case(rng, "layernorm_dx_only", [2, 3, 6], 2, 1e-5, n_out=1),
        batchnorm_case(rng, "batchnorm_2d", [5, 3], 1e-5),
        batchnorm_case(rng, "batchnorm_4d", [3, 4, 2, 3], 1e-2),
        batchnorm_case(rng, "batchnorm_3d_dx_ds", [2, 3, 5], 1e-5, n_out=2),
    ]
    return cases


def write_gir(cases, path):
    """One graph with every case's inputs, nodes and outputs; returns the input
    arrays and the expected arrays in graph input / output order."""
    lines, outs, ins, expected = ["graph grad_backward_ops {"], [], [], []
    for c in cases:
        for name, arr in c.ins:
            lines.append(f"  input %{c.name}_{name}: f64{ints(arr.shape)}")
            ins.append(arr)
        onames = [f"%{c.name}_{o}" for o in c.outs]
        args = ", ".join(f"%{c.name}_{name}" for name, _ in c.ins)
        lines.append(f"  {', '.join(onames)} = {c.op}({args}) {{{', '.join(c.attrs)}}}")
        outs += onames
        expected += [(f"{c.name} {c.op} {o}", e) for o, e in zip(c.outs, c.expected)]
    lines += [f"  output {o}" for o in outs]
    lines.append("}")
    Path(path).write_text("\n".join(lines) + "\n")
    return ins, expected


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=600)
    if p.returncode != 0:
        sys.exit(f"FAIL: {' '.join(map(str, cmd))}: exit {p.returncode}\n{p.stderr[-3000:]}")
    return p


def compare(label, outdir, expected):
    fails = 0
    for i, (what, e) in enumerate(expected):
        g = np.load(Path(outdir) / f"output_{i}.npy")
        if g.shape != e.shape or g.dtype != np.float64:
            print(f"FAIL {label} {what}: got {g.dtype}{list(g.shape)}, expected f64{list(e.shape)}")
            fails += 1
            continue
        ok = np.abs(g - e) <= ATOL + RTOL * np.abs(e)
        if not ok.all():
            j = np.flatnonzero(~ok)[0]
            print(f"FAIL {label} {what}: {(~ok).sum()} of {ok.size} elements differ; first at flat index {j}: "
                  f"got {g.flat[j]!r} expected {e.flat[j]!r}")
            fails += 1
    return fails


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--graphc", required=True)
    ap.add_argument("--work", help="scratch folder (default: a temporary one)")
    ap.add_argument("--no-c", action="store_true", help="check the interpreter only")
    args = ap.parse_args()
    torch.set_default_dtype(torch.float64)
    work = Path(args.work or tempfile.mkdtemp(prefix="grad_ops_"))
    work.mkdir(parents=True, exist_ok=True)
    cases = all_cases(np.random.default_rng(20240611))
    gir = work / "grad_backward_ops.gir"
    ins, expected = write_gir(cases, gir)
    in_files = []
    for i, a in enumerate(ins):
        p = work / f"in{i}.npy"
        np.save(p, np.ascontiguousarray(a, dtype=np.float64), allow_pickle=False)
        in_files.append(str(p))

    run([args.graphc, "run", str(gir), str(work / "out_interp"), "--no-fold"] + in_files)
    fails = compare("interpreter", work / "out_interp", expected)
    if not args.no_c:
        cdir = work / "c"
        run([args.graphc, "compile", str(gir), "-o", str(cdir), "--emit-main", "--name", "grad_ops", "--no-fold"])
        cflags, ldflags = STRICT_CFLAGS, ""
        if os.environ.get("GRAPHC_SANITIZE") == "1":
            cflags, ldflags = cflags + " " + SAN_FLAGS, SAN_FLAGS
        run(["make", "-s", "-C", str(cdir), f"CFLAGS={cflags}", f"LDFLAGS={ldflags}", "grad_ops_main"])
        run([str(cdir / "grad_ops_main"), str(work / "out_c")] + in_files)
        fails += compare("compiled C", work / "out_c", expected)
    n = len(expected) * (1 if args.no_c else 2)
    print(f"{len(cases)} cases, {n - fails} outputs passed, {fails} failed")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
