#!/usr/bin/python3
"""gen_torch.py — random PyTorch graphs, exported to ONNX for difftest.py.

A component (one seed) is a small program over PyTorch ops: one input of a
random shape (an image batch N,C,H,W most of the time, else a sequence
N,L,D), then 3 to 12 steps, each drawn from a table of layers and functions
(Conv2d with random stride/dilation/groups/padding modes, ConvTranspose2d,
BatchNorm2d in eval with random statistics, Max/AvgPool2d with ceil_mode and
padding, adaptive pools, activations, residual adds and gating products,
concatenation, interpolate (nearest, bilinear), softmax, Linear, matmul,
reductions, reshape/permute/slicing, LayerNorm, GroupNorm, InstanceNorm2d,
pixel shuffle, padding). Steps read the newest value mostly and an older one
sometimes (residual branches, shared values).

The program is built by running it: each candidate step is applied to the
actual tensors of the component's seeded input, a step that PyTorch rejects
is dropped, and a value whose magnitude passes a limit is scaled back, so the
shapes are right by construction and the values stay O(1). The same seed
always gives the same program, weights (torch.manual_seed(seed)) and input.

export_pack(seeds, path, opset) puts the components side by side in one
module (inputs x0.., outputs y0..), exports it with torch.onnx.export and
returns the inputs, PyTorch's outputs and the seed that owns each output.
"""
import random
import warnings

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

LIMIT = 20.0


class Program(nn.Module):
    """A straight-line program: step k reads earlier values and appends one."""

    def __init__(self):
        super().__init__()
        self.mods = nn.ModuleList()
        self.steps = []   # (name, fn(mod, *xs), input ids, module index or None)
        self.outs = []

    def forward(self, x):
        vals = [x]
        for name, fn, ids, mi in self.steps:
            vals.append(fn(self.mods[mi] if mi is not None else None, *[vals[i] for i in ids]))
        return tuple(vals[i] for i in self.outs)


class Builder:
    def __init__(self, seed):
        self.seed = seed
        self.r = random.Random(seed)
        torch.manual_seed(seed)
        self.prog = Program()
        self.vals = []
        self.ops = set()
        self.desc = []

    def add(self, name, fn, ids, mod=None, onnx=()):
        """Tries the step on the current values; keeps it when PyTorch accepts it."""
        mi = None
        if mod is not None:
            mod.eval()
        try:
            with torch.no_grad():
                y = fn(mod, *[self.vals[i] for i in ids])
        except (RuntimeError, ValueError, IndexError):
            return None
        if not isinstance(y, torch.Tensor) or y.dtype != torch.float32 or y.numel() == 0 or y.numel() > 60000 \
                or y.dim() == 0 or not torch.isfinite(y).all():
            return None
        if mod is not None:
            self.prog.mods.append(mod)
            mi = len(self.prog.mods) - 1
        self.prog.steps.append((name, fn, list(ids), mi))
        self.vals.append(y)
        self.ops.add(name)
        self.desc.append(f"v{len(self.vals) - 1} = {name}({', '.join(f'v{i}' for i in ids)})"
                         + (f" {mod}" if mod is not None else ""))
        m = float(y.abs().max())
        if m > LIMIT:
            k = self.r.choice((1.0, 4.0)) / m
            self.add("scale", lambda _, a, k=k: a * k, [len(self.vals) - 1])
        return len(self.vals) - 1

    def pick(self, pred=lambda t: True, recent=0.6):
        c = [i for i, t in enumerate(self.vals) if pred(t)]
        if not c:
            return None
        return c[-1] if self.r.random() < recent else self.r.choice(c)

    # ---- steps ---------------------------------------------------------------------------------

    def s_conv(self):
        r = self.r
        i = self.pick(lambda t: t.dim() == 4)
        if i is None:
            return
        c = self.vals[i].shape[1]
        groups = r.choice([g for g in (1, 1, 1, 2, 4, c) if c % g == 0])
        out = groups * r.randint(1, max(1, 8 // groups)) if groups > 1 else r.randint(1, 8)
        k = r.choice((1, 3, 3, 5, (1, 3), (3, 1)))
        if r.random() < 0.2:
            t = nn.ConvTranspose2d(c, out, k, stride=r.choice((1, 2)), padding=r.choice((0, 1)),
                                   output_padding=r.choice((0, 0, 1)), groups=groups, dilation=r.choice((1, 1, 2)),
                                   bias=r.random() < 0.7)
            self.add("ConvTranspose2d", lambda m, a: m(a), [i], t)
            return
        stride = r.choice((1, 1, 2, (2, 1)))
        dil = r.choice((1, 1, 2, (1, 2)))
        pad = r.choice((0, 1, 2, "same")) if stride == 1 else r.choice((0, 1, 2))
        if pad == "same":  # torch 1.13 cannot export padding="same": the explicit equivalent for odd kernels
            kk, dd = (k, k) if isinstance(k, int) else k, (dil, dil) if isinstance(dil, int) else dil
            pad = tuple(d * (q - 1) // 2 for q, d in zip(kk, dd))
        mode = r.choice(("zeros",) * 5 + ("reflect", "replicate"))
        conv = nn.Conv2d(c, out, k, stride=stride, padding=pad, dilation=dil, groups=groups,
                         bias=r.random() < 0.7, padding_mode=mode if pad not in (0, (0, 0)) else "zeros")
        self.add("Conv2d", lambda m, a: m(a), [i], conv)

    def s_bn(self):
        i = self.pick(lambda t: t.dim() == 4)
        if i is None:
            return
        c = self.vals[i].shape[1]
        bn = nn.BatchNorm2d(c)
        with torch.no_grad():
            bn.running_mean.uniform_(-0.5, 0.5)
            bn.running_var.uniform_(0.5, 2.0)
            bn.weight.uniform_(0.5, 1.5)
            bn.bias.uniform_(-0.5, 0.5)
        self.add("BatchNorm2d", lambda m, a: m(a), [i], bn)

    def s_norm(self):
        r = self.r
        i = self.pick(lambda t: t.dim() >= 3)
        if i is None:
            return
        t = self.vals[i]
        kind = r.choice(("layer", "group", "instance"))
        if kind == "layer" or t.dim() == 3:
            self.add("LayerNorm", lambda m, a: m(a), [i], nn.LayerNorm(t.shape[-1]))
        elif kind == "group":
            c = t.shape[1]
            g = r.choice([d for d in (1, 2, 4, c) if c % d == 0])
            self.add("GroupNorm", lambda m, a: m(a), [i], nn.GroupNorm(g, c))
        else:
            self.add("InstanceNorm2d", lambda m, a: m(a), [i], nn.InstanceNorm2d(t.shape[1], affine=r.random() < 0.5))

    def s_pool(self):
        r = self.r
        i = self.pick(lambda t: t.dim() == 4)
        if i is None:
            return
        kind = r.choice(("max", "max", "avg", "avg", "gap", "gmp"))
        if kind == "gap":
            self.add("AdaptiveAvgPool2d", lambda m, a: m(a), [i], nn.AdaptiveAvgPool2d(1))
            return
        if kind == "gmp":
            self.add("AdaptiveMaxPool2d", lambda m, a: m(a), [i], nn.AdaptiveMaxPool2d(1))
            return
        k = r.choice((2, 3, (2, 3), 3))
        kk = (k, k) if isinstance(k, int) else k
        stride = r.choice((None, 1, 2, (2, 1)))
        pad = r.choice((0, 0, 1)) if min(kk) >= 2 else 0
        ceil = r.random() < 0.4
        if kind == "max":
            self.add("MaxPool2d", lambda m, a: m(a), [i],
                     nn.MaxPool2d(k, stride=stride, padding=pad, dilation=r.choice((1, 1, 2)), ceil_mode=ceil))
        else:
            # torch 1.13 exports count_include_pad=True with padding as Pad + AveragePool(ceil_mode=1),
            # whose ONNX output can be one longer than PyTorch's: padding goes with count_include_pad=False.
            self.add("AvgPool2d", lambda m, a: m(a), [i],
                     nn.AvgPool2d(k, stride=stride, padding=pad, ceil_mode=ceil,
                                  count_include_pad=r.random() < 0.5 and pad == 0))

    ACTS = {
        "ReLU": nn.ReLU, "ReLU6": nn.ReLU6, "LeakyReLU": lambda: nn.LeakyReLU(0.1), "ELU": nn.ELU,
        "SELU": nn.SELU, "GELU": nn.GELU, "SiLU": nn.SiLU, "Hardswish": nn.Hardswish,
        "Hardsigmoid": nn.Hardsigmoid, "Sigmoid": nn.Sigmoid, "Tanh": nn.Tanh, "Softplus": nn.Softplus,
        "Mish": nn.Mish, "Hardtanh": lambda: nn.Hardtanh(-0.5, 1.0), "Softsign": nn.Softsign,
        "CELU": lambda: nn.CELU(0.5),
    }

    def s_act(self):
        i = self.pick()
        name = self.r.choice(sorted(self.ACTS) + ["PReLU"])
        if name == "PReLU":
            t = self.vals[i]
            n = t.shape[1] if t.dim() >= 2 and self.r.random() < 0.6 else 1
            m = nn.PReLU(n)
            with torch.no_grad():
                m.weight.uniform_(-0.5, 0.5)
            self.add("PReLU", lambda m, a: m(a), [i], m)
        else:
            self.add(name, lambda m, a: m(a), [i], self.ACTS[name]())

    def s_math(self):
        r = self.r
        i = self.pick()
        f = r.choice(("exp", "sqrt", "log", "abs", "neg", "clamp", "pow2", "rsqrt", "sin", "erf", "recip"))
        fns = {
            "exp": lambda _, a: torch.exp(torch.tanh(a)),
            "sqrt": lambda _, a: torch.sqrt(a.abs() + 0.5),
            "log": lambda _, a: torch.log(a * a + 0.5),
            "abs": lambda _, a: a.abs(),
            "neg": lambda _, a: -a,
            "clamp": lambda _, a: torch.clamp(a, -0.7, 0.8),
            "pow2": lambda _, a: torch.pow(a, 2),
            "rsqrt": lambda _, a: torch.rsqrt(a.abs() + 1.0),
            "sin": lambda _, a: torch.sin(a),
            "erf": lambda _, a: torch.erf(a),
            "recip": lambda _, a: 1.0 / (torch.sigmoid(a) + 0.5),
        }
        self.add(f, fns[f], [i])

    def s_binary(self):
        """Residual add / gating mul / sub / div / max with a value of a broadcastable shape."""
        r = self.r
        i = self.pick()
        t = self.vals[i]
        cands = [j for j, u in enumerate(self.vals) if j != i and _bcast(u.shape, t.shape)]
        op = r.choice(("add", "add", "mul", "sub", "div", "max", "gate"))
        if cands and r.random() < 0.7:
            j = r.choice(cands)
        else:  # a transformed copy of the same value: a residual over a branch
            j = self.add("scale", lambda _, a, k=r.choice((0.5, -0.75, 1.5)): a * k, [i])
            if j is None:
                return
        fns = {
            "add": lambda _, a, b: a + b, "mul": lambda _, a, b: a * b, "sub": lambda _, a, b: a - b,
            "div": lambda _, a, b: a / (b.abs() + 0.5), "max": lambda _, a, b: torch.maximum(a, b),
            "gate": lambda _, a, b: a * torch.sigmoid(b),
        }
        self.add(op, fns[op], [i, j])

    def s_se(self):
        """Squeeze-and-excitation: x * sigmoid(conv(relu(conv(gap(x)))))."""
        i = self.pick(lambda t: t.dim() == 4)
        if i is None:
            return
        c = self.vals[i].shape[1]
        h = max(1, c // 2)
        se = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Conv2d(c, h, 1), nn.ReLU(), nn.Conv2d(h, c, 1), nn.Sigmoid())
        self.add("SE", lambda m, a: a * m(a), [i], se)

    def s_concat(self):
        r = self.r
        i = self.pick(lambda t: t.dim() >= 2)
        if i is None:
            return
        t = self.vals[i]
        d = r.randrange(1, t.dim())
        c = [j for j, u in enumerate(self.vals) if u.dim() == t.dim() and
             all(u.shape[k] == t.shape[k] for k in range(t.dim()) if k != d)]
        j = r.choice(c)
        self.add("cat", lambda _, a, b, d=d: torch.cat([a, b], dim=d), [i, j])

    def s_interp(self):
        r = self.r
        i = self.pick(lambda t: t.dim() == 4)
        if i is None:
            return
        mode = r.choice(("nearest", "bilinear", "bilinear"))
        ac = r.choice((None, False, True)) if mode == "bilinear" else None
        # With align_corners, PyTorch scales by (in-1)/(out-1) of the integer output size while
        # ONNX's Resize with `scales` (and its reference and conformance data, which graphc follows)
        # uses in*scale: they differ when in*scale is not an integer, so align_corners goes with sizes.
        if r.random() < 0.6 and not ac:
            sf = r.choice((2, 2.0, 0.5, (2, 1)))
            self.add(f"interpolate_{mode}",
                     lambda _, a, sf=sf: F.interpolate(a, scale_factor=sf, mode=mode, align_corners=ac), [i])
        else:
            h, w = self.vals[i].shape[2:]
            size = (r.randint(max(1, h // 2), 2 * h), r.randint(max(1, w // 2), 2 * w))
            self.add(f"interpolate_{mode}",
                     lambda _, a, s=size: F.interpolate(a, size=s, mode=mode, align_corners=ac), [i])

    def s_softmax(self):
        i = self.pick()
        d = self.r.randrange(self.vals[i].dim())
        if self.r.random() < 0.7:
            self.add("softmax", lambda _, a, d=d: torch.softmax(a, d), [i])
        else:
            self.add("log_softmax", lambda _, a, d=d: torch.log_softmax(a, d), [i])

    def s_linear(self):
        r = self.r
        i = self.pick()
        t = self.vals[i]
        if r.random() < 0.4 and t.dim() >= 3:
            self.add("flatten_linear", lambda m, a: m(torch.flatten(a, 1)), [i],
                     nn.Linear(int(np.prod(t.shape[1:])), r.randint(2, 16)))
        else:
            self.add("Linear", lambda m, a: m(a), [i], nn.Linear(t.shape[-1], r.randint(1, 12), bias=r.random() < 0.8))

    def s_matmul(self):
        r = self.r
        i = self.pick(lambda t: t.dim() >= 3)
        if i is None:
            return
        t = self.vals[i]
        if t.dim() == 4:  # attention-like: (N, C, HW) x (N, HW, C)
            self.add("matmul_attn", lambda _, a: torch.softmax(
                torch.matmul(a.flatten(2), a.flatten(2).transpose(1, 2)) / float(a.shape[2] * a.shape[3]) ** 0.5, -1)
                @ a.flatten(2), [i])
        else:
            j = self.pick(lambda u: u.dim() == 3 and u.shape[0] == t.shape[0] and u.shape[1] == t.shape[1])
            self.add("bmm", lambda _, a, b: torch.matmul(a, b.transpose(1, 2)) * 0.25, [i, j])

    def s_reduce(self):
        r = self.r
        i = self.pick(lambda t: t.dim() >= 2)
        if i is None:
            return
        t = self.vals[i]
        dims = tuple(sorted(r.sample(range(1, t.dim()), r.randint(1, t.dim() - 1))))
        keep = r.random() < 0.6
        f = r.choice(("mean", "sum", "amax", "amin", "norm"))
        fns = {
            "mean": lambda _, a: a.mean(dims, keepdim=keep), "sum": lambda _, a: a.sum(dims, keepdim=keep),
            "amax": lambda _, a: a.amax(dims, keepdim=keep), "amin": lambda _, a: a.amin(dims, keepdim=keep),
            "norm": lambda _, a: torch.sqrt((a * a).sum(dims, keepdim=keep) + 1e-3),
        }
        self.add(f, fns[f], [i])

    def s_shape(self):
        r = self.r
        i = self.pick()
        t = self.vals[i]
        f = r.choice(("permute", "reshape", "slice", "flatten", "transpose", "unsqueeze_squeeze", "shuffle",
                      "pixel_shuffle", "pad", "chunk", "expand"))
        if f == "permute" and t.dim() >= 2:
            p = [0] + r.sample(range(1, t.dim()), t.dim() - 1)
            self.add("permute", lambda _, a, p=p: a.permute(*p).contiguous(), [i])
        elif f == "transpose" and t.dim() >= 3:
            self.add("transpose", lambda _, a: a.transpose(-1, -2), [i])
        elif f == "reshape" and t.dim() >= 2:
            n = int(np.prod(t.shape[1:]))
            divs = [d for d in range(1, n + 1) if n % d == 0 and d <= 16]
            d = r.choice(divs)
            self.add("reshape", lambda _, a, d=d: a.reshape(a.shape[0], d, -1), [i])
        elif f == "slice" and t.dim() >= 2:
            d = r.randrange(1, t.dim())
            n = t.shape[d]
            s = r.randint(0, max(0, n - 1))
            step = r.choice((1, 1, 2))
            e = r.choice((None, r.randint(s + 1, n)))
            self.add("slice", lambda _, a, d=d, s=s, e=e, st=step: a[(slice(None),) * d + (slice(s, e, st),)], [i])
        elif f == "flatten" and t.dim() >= 3:
            self.add("flatten", lambda _, a: torch.flatten(a, 1), [i])
        elif f == "unsqueeze_squeeze":
            self.add("unsqueeze", lambda _, a: a.unsqueeze(1) * 1.0 if a.dim() < 4 else a.sum(1, keepdim=True)
                     .squeeze(1), [i])
        elif f == "shuffle" and t.dim() == 4 and t.shape[1] % 2 == 0:
            self.add("channel_shuffle", lambda _, a: a.reshape(a.shape[0], 2, a.shape[1] // 2, a.shape[2], a.shape[3])
                     .transpose(1, 2).reshape(a.shape), [i])
        elif f == "pixel_shuffle" and t.dim() == 4:
            if t.shape[1] % 4 == 0:
                self.add("PixelShuffle", lambda m, a: m(a), [i], nn.PixelShuffle(2))
            elif t.shape[2] % 2 == 0 and t.shape[3] % 2 == 0:
                self.add("PixelUnshuffle", lambda m, a: m(a), [i], nn.PixelUnshuffle(2))
        elif f == "pad" and t.dim() == 4:
            mode = r.choice(("constant", "reflect", "replicate"))
            p = [r.randint(0, 1) for _ in range(4)]
            self.add(f"pad_{mode}", lambda _, a, p=p, mode=mode: F.pad(a, p, mode=mode), [i])
        elif f == "chunk" and t.dim() >= 2 and t.shape[1] >= 2:
            self.add("chunk_add", lambda _, a: sum(torch.chunk(a, 2, dim=1)[:1]) + torch.chunk(a, 2, dim=1)[-1]
                     [:, :torch.chunk(a, 2, dim=1)[0].shape[1]], [i])
        elif f == "expand" and t.dim() >= 2:
            j = self.add("mean_keep", lambda _, a: a.mean(1, keepdim=True), [i])
            if j is not None:
                self.add("expand_add", lambda _, a, b: a + b.expand_as(a), [i, j])

    STEPS = [(s_conv, 8), (s_bn, 3), (s_norm, 2), (s_pool, 4), (s_act, 8), (s_math, 3), (s_binary, 6),
             (s_se, 1), (s_concat, 3), (s_interp, 2), (s_softmax, 2), (s_linear, 2), (s_matmul, 1),
             (s_reduce, 2), (s_shape, 6)]

    def build(self):
        r = self.r
        if r.random() < 0.8:
            shape = (r.randint(1, 2), r.randint(1, 8), r.randint(4, 12), r.randint(4, 12))
        else:
            shape = (r.randint(1, 2), r.randint(2, 8), r.randint(2, 16))
        x = np.random.default_rng(self.seed).standard_normal(shape).astype(np.float32)
        self.vals = [torch.from_numpy(x)]
        self.x = x
        fns = [f for f, _ in self.STEPS]
        w = [k for _, k in self.STEPS]
        target = r.randint(3, 12)
        tries = 0
        while len(self.prog.steps) < target and tries < 100:
            tries += 1
            r.choices(fns, w)[0](self)
        if not self.prog.steps:
            self.add("ReLU", lambda m, a: m(a), [0], nn.ReLU())
        used = {i for _, _, ids, _ in self.prog.steps for i in ids}
        leaves = [i for i in range(1, len(self.vals)) if i not in used]
        outs = leaves[-2:] or [len(self.vals) - 1]
        self.prog.outs = outs
        return self


def _bcast(a, b):
    """a broadcasts into b (b's shape wins)."""
    if len(a) > len(b):
        return False
    return all(x == y or x == 1 for x, y in zip(reversed(a), reversed(b)))


class Pack(nn.Module):
    def __init__(self, progs):
        super().__init__()
        self.progs = nn.ModuleList(progs)

    def forward(self, *xs):
        out = []
        for p, x in zip(self.progs, xs):
            out += list(p(x))
        return tuple(out)


def build(seed):
    return Builder(seed).build()


def describe(seed):
    b = build(seed)
    return "\n".join([f"v0 = input {list(b.x.shape)}"] + b.desc + [f"outputs: {', '.join(f'v{i}' for i in b.prog.outs)}"])


def export_pack(seeds, path, opset):
    """Exports the components of `seeds` as one ONNX model; returns (inputs, expected outputs,
    owner seed per output, ops used)."""
    bs = [build(s) for s in seeds]
    model = Pack([b.prog for b in bs]).eval()
    xs = [torch.from_numpy(b.x) for b in bs]
    with torch.no_grad():
        expected = [y.numpy().copy() for y in model(*xs)]
    owner = [b.seed for b in bs for _ in b.prog.outs]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, tuple(xs), str(path), opset_version=opset, do_constant_folding=True,
                          input_names=[f"x{k}" for k in range(len(xs))],
                          output_names=[f"y{k}" for k in range(len(expected))])
    import onnx
    onnx_ops = {f"onnx:{n.op_type}" for n in onnx.load(str(path)).graph.node}
    return [b.x for b in bs], expected, owner, set().union(*(b.ops for b in bs)) | onnx_ops


if __name__ == "__main__":
    import sys
    for s in sys.argv[1:] or ["1"]:
        print(f"# seed {s}\n{describe(int(s))}")
