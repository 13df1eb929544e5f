#!/usr/bin/python3
"""test_dynamic.py — runtime shapes (issue 15, stage 1): bounded symbolic dims.

    /usr/bin/python3 tests/dynamic/test_dynamic.py --graphc BUILD/graphc --work DIR

Models are built with onnx.helper and seeded numpy weights; references are numpy.

* (a) An MLP with a symbolic batch (Gemm + Relu + MatMul + Add + Softmax),
  compiled ONCE with --max-shape x=8,784, runs in the interpreter (graph run)
  and as the compiled NAME_main at batches 1, 3 and 8, matching numpy.
  The same for an MLP exported from PyTorch with dynamic_axes, against PyTorch.
* (b) A transformer-encoder block with a symbolic sequence length T
  (LayerNormalization, MatMul, Add, Reshape with 0 and -1, Transpose,
  attention Softmax over T, Concat on a static axis), compiled once with
  --max-shape, runs at T = 1, 7 and the maximum within 1e-4 of numpy.
* (c) An input beyond its bound is NAME_ERR_SHAPE from NAME_run_shapes (a
  small C driver, which also checks the reported output shapes), and a
  one-line error from NAME_main and from graphc run.
* (d) The text IR prints `f32[batch<=8,784]` and round-trips.
* (e) An op without runtime-shape support meeting a symbolic dim is a
  one-line error naming the node, the op and the value.
* (f) A symbolic ONNX input without --shape/--max-shape is a one-line error
  naming the input and the dim and suggesting both flags.
* --report lists the runtime dims and their bounds.
* (h) torchvision ResNet-18 and MobileNetV2 (BatchNorm statistics
  calibrated as in tests/models) exported with a symbolic batch, compiled
  ONCE with --max-shape x=4,3,32,32 (ResNet-18 at -O2, MobileNetV2 at -O0,
  its BatchNormalization nodes unfolded), run batches 1 to 4 against PyTorch.
* (i) A GPT-style decoder (token embedding, learned positions sliced to
  the runtime length, causal mask sliced by it, 4 layers) exported from
  PyTorch with a symbolic sequence length T: the export computes shapes in
  the graph (Shape -> Gather -> Unsqueeze -> Slice/Concat -> Reshape), which
  shape values carry as T. Compiled ONCE with --max-shape idx=1,64, it
  matches PyTorch at T = 1, 7, 40 and 64, compiled and in the interpreter.
* (g) Data-dependent dims (stage 2): a Reshape whose shape is a runtime
  input, followed by elementwise ops, runs at several shapes (0 and -1
  included) in the interpreter and as NAME_main against numpy; an invalid
  shape is NAME_ERR_SHAPE from NAME_main and a one-line error from graph
  run; the text IR prints such dims as ?NAME<=BOUND and reads them back; a
  Range whose length nothing bounds is a one-line error suggesting
  --max-dim, and compiles with it.

With GRAPHC_SANITIZE=1 the generated programs are built with ASan and UBSan.
"""
import argparse
import os
import shutil
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

FAILS = []
TOL = 1e-4


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILS.append(what)
    return cond


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600, **kw)


def cflags():
    san = os.environ.get("GRAPHC_SANITIZE") == "1"
    s = " -fsanitize=address,undefined -fno-sanitize-recover=all" if san else ""
    return f"-O1 -g -std=c99 -Wall -Wextra -Werror -pedantic -Wdouble-promotion{s}", s


def build_runner(out, name, target="c"):
    """Builds the runner of the folder graphc compiled into out with cflags() (-Werror; ASan/UBSan
    with GRAPHC_SANITIZE=1): NAME_main (C backend, no BLAS), or for --target=cuda NAME_main_emu,
    the generated CUDA built as C99 on graphc's CPU emulation (without -Wdouble-promotion: the
    kernels accumulate in double). Returns (its path or None, make's output)."""
    fl, s = cflags()
    if target == "cuda":  # its kernels accumulate in double on purpose
        fl = fl.replace(" -Wdouble-promotion", "")
        mk = run(["make", "-s", "-C", out, "-B", "emu", f"CFLAGS={fl}"])
        exe = f"{name}_main_emu"
    else:
        mk = run(["make", "-s", "-C", out, f"CFLAGS={fl}", f"LDFLAGS={s}", "BLAS=0", f"{name}_main"])
        exe = f"{name}_main"
    return (os.path.join(out, exe) if mk.returncode == 0 else None), mk.stdout + mk.stderr


def init(name, a):
    return numpy_helper.from_array(np.asarray(a, dtype=np.float32), name)


def softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def layernorm(x, g, b, eps=1e-5):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / np.sqrt(v + eps) * g + b


# ---- models -----------------------------------------------------------------

def mlp_model(rng):
    w1 = rng.standard_normal((64, 784)) * 0.05
    b1 = rng.standard_normal(64) * 0.1
    w2 = rng.standard_normal((64, 10)) * 0.2
    b2 = rng.standard_normal(10) * 0.1
    nodes = [
        helper.make_node("Gemm", ["x", "w1", "b1"], ["h"], name="fc1", transB=1),
        helper.make_node("Relu", ["h"], ["r"], name="relu"),
        helper.make_node("MatMul", ["r", "w2"], ["z"], name="fc2"),
        helper.make_node("Add", ["z", "b2"], ["logits"], name="bias2"),
        helper.make_node("Softmax", ["logits"], ["y"], name="softmax", axis=-1),
    ]
    g = helper.make_graph(nodes, "mlp",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 784])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 10])],
                          [init("w1", w1), init("b1", b1), init("w2", w2), init("b2", b2)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    f32 = lambda a: np.asarray(a, np.float32)
    ref = lambda x: softmax(np.maximum(x @ f32(w1).T + f32(b1), 0) @ f32(w2) + f32(b2))
    return m, ref


D, H, DH, FF = 32, 4, 8, 64


def encoder_model(rng):
    p = {}
    for n, s in [("wq", (D, D)), ("wk", (D, D)), ("wv", (D, D)), ("wo", (D, D)), ("w1", (D, FF)), ("w2", (FF, D))]:
        p[n] = (rng.standard_normal(s) / np.sqrt(s[0])).astype(np.float32)
    for n, s in [("bq", D), ("bk", D), ("bv", D), ("bo", D), ("b1", FF), ("b2", D)]:
        p[n] = (rng.standard_normal(s) * 0.1).astype(np.float32)
    for n in ["g1", "g2"]:
        p[n] = (1 + rng.standard_normal(D) * 0.1).astype(np.float32)
    for n in ["be1", "be2"]:
        p[n] = (rng.standard_normal(D) * 0.1).astype(np.float32)
    inits = [init(k, v) for k, v in p.items()]
    inits += [numpy_helper.from_array(np.array([0, 0, H, DH], np.int64), "heads_copy"),
              numpy_helper.from_array(np.array([0, -1, H, DH], np.int64), "heads_infer"),
              numpy_helper.from_array(np.array([0, 0, D], np.int64), "merge"),
              init("scale", 1.0 / np.sqrt(DH))]
    N = helper.make_node
    nodes = [
        N("LayerNormalization", ["x", "g1", "be1"], ["h"], name="ln1", axis=-1, epsilon=1e-5),
        N("MatMul", ["h", "wq"], ["q0"], name="q_proj"), N("Add", ["q0", "bq"], ["q1"], name="q_bias"),
        N("MatMul", ["h", "wk"], ["k0"], name="k_proj"), N("Add", ["k0", "bk"], ["k1"], name="k_bias"),
        N("MatMul", ["h", "wv"], ["v0"], name="v_proj"), N("Add", ["v0", "bv"], ["v1"], name="v_bias"),
        N("Reshape", ["q1", "heads_copy"], ["q2"], name="q_heads"),
        N("Reshape", ["k1", "heads_infer"], ["k2"], name="k_heads"),
        N("Reshape", ["v1", "heads_copy"], ["v2"], name="v_heads"),
        N("Transpose", ["q2"], ["q"], name="q_t", perm=[0, 2, 1, 3]),
        N("Transpose", ["k2"], ["kt"], name="k_t", perm=[0, 2, 3, 1]),
        N("Transpose", ["v2"], ["v"], name="v_t", perm=[0, 2, 1, 3]),
        N("MatMul", ["q", "kt"], ["s0"], name="scores"),
        N("Mul", ["s0", "scale"], ["s1"], name="scaled"),
        N("Softmax", ["s1"], ["pr"], name="attn", axis=-1),
        N("MatMul", ["pr", "v"], ["c0"], name="context"),
        N("Transpose", ["c0"], ["c1"], name="c_t", perm=[0, 2, 1, 3]),
        N("Reshape", ["c1", "merge"], ["c2"], name="c_merge"),
        N("MatMul", ["c2", "wo"], ["o0"], name="o_proj"), N("Add", ["o0", "bo"], ["o1"], name="o_bias"),
        N("Add", ["x", "o1"], ["x2"], name="residual1"),
        N("LayerNormalization", ["x2", "g2", "be2"], ["h2"], name="ln2", axis=-1, epsilon=1e-5),
        N("MatMul", ["h2", "w1"], ["f0"], name="ff1"), N("Add", ["f0", "b1"], ["f1"], name="ff1_bias"),
        N("Relu", ["f1"], ["f2"], name="ff_relu"),
        N("MatMul", ["f2", "w2"], ["f3"], name="ff2"), N("Add", ["f3", "b2"], ["f4"], name="ff2_bias"),
        N("Add", ["x2", "f4"], ["y"], name="residual2"),
        N("Concat", ["y", "x"], ["both"], name="concat", axis=-1),
    ]
    g = helper.make_graph(nodes, "encoder",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, "T", D])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, "T", D]),
                           helper.make_tensor_value_info("both", TensorProto.FLOAT, [1, "T", 2 * D])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])

    def ref(x):
        t = x.shape[1]
        h = layernorm(x, p["g1"], p["be1"])
        q = (h @ p["wq"] + p["bq"]).reshape(1, t, H, DH).transpose(0, 2, 1, 3)
        k = (h @ p["wk"] + p["bk"]).reshape(1, t, H, DH).transpose(0, 2, 3, 1)
        v = (h @ p["wv"] + p["bv"]).reshape(1, t, H, DH).transpose(0, 2, 1, 3)
        pr = softmax((q @ k) * np.float32(1.0 / np.sqrt(DH)))
        c = (pr @ v).transpose(0, 2, 1, 3).reshape(1, t, D)
        x2 = x + (c @ p["wo"] + p["bo"])
        h2 = layernorm(x2, p["g2"], p["be2"])
        y = x2 + (np.maximum(h2 @ p["w1"] + p["b1"], 0) @ p["w2"] + p["b2"])
        return [y, np.concatenate([y, x], axis=-1)]
    return m, ref


def unsupported_model():
    nodes = [helper.make_node("Unique", ["x"], ["y"], name="uniq", axis=0)]
    g = helper.make_graph(nodes, "unsup", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["m", 4])])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


# ---- checks -----------------------------------------------------------------

DRIVER = r"""
#include <stdio.h>
#include <stdlib.h>
#include "@N@.h"

/* NAME_run_shapes on a buffer of ones sized for the maximum: the return code
 * and output 0's reported shape, printed as "rc d0 d1 ..." */
static void try_shape(const int64_t *dims)
{
    static float in[@N@_INPUT_0_NUMEL], out0[@N@_OUTPUT_0_NUMEL];
    static unsigned char arena[@N@_ARENA_BYTES + 64];
    void *a = (void *)(((uintptr_t)arena + 63) & ~(uintptr_t)63);
    const void *ins[1];
    void *outs[@N@_NUM_OUTPUTS];
    static float spare[@N@_NUM_OUTPUTS][@N@_OUTPUT_0_NUMEL * 2];
    const int64_t *in_dims[1];
    int64_t od[@N@_NUM_OUTPUTS][8] = {{0}};
    int64_t *out_dims[@N@_NUM_OUTPUTS];
    int i, rc;
    for (i = 0; i < @N@_INPUT_0_NUMEL; i++) in[i] = 1.0f;
    ins[0] = in;
    in_dims[0] = dims;
    outs[0] = out0;
    out_dims[0] = od[0];
    for (i = 1; i < @N@_NUM_OUTPUTS; i++) {
        outs[i] = spare[i];
        out_dims[i] = od[i];
    }
    rc = @N@_run_shapes(NULL, a, ins, in_dims, outs, out_dims);
    printf("%d", rc);
    for (i = 0; i < @N@_OUTPUT_0_RANK; i++) printf(" %lld", (long long)od[0][i]);
    printf("\n");
}

int main(int argc, char **argv)
{
    int64_t dims[8];
    int i;
    for (i = 1; i < argc && i <= 8; i++) dims[i - 1] = atoll(argv[i]);
    try_shape(dims);
    return 0;
}
"""


def compile_model(graphc, model, out, name, extra):
    p = run([graphc, "compile", model, "-o", out, "--emit-main", "--name", name, "--report"] + extra)
    if not check(p.returncode == 0, f"{name}: graphc compile {' '.join(extra)}"):
        print(p.stderr)
        return None
    fl, s = cflags()
    mk = run(["make", "-s", "-C", out, f"CFLAGS={fl}", f"LDFLAGS={s}", "BLAS=0", f"{name}_main", f"lib{name}.a"])
    if not check(mk.returncode == 0, f"{name}: the folder builds with -Werror -pedantic"):
        print(mk.stdout + mk.stderr)
        return None
    return p


def build_driver(out, name):
    src = os.path.join(out, "driver.c")
    with open(src, "w") as f:
        f.write(DRIVER.replace("@N@", name))
    _, s = cflags()
    fl, _ = cflags()
    exe = os.path.join(out, "driver")
    p = run(["cc"] + fl.split() + ["-I", out, src, os.path.join(out, f"lib{name}.a"), "-lm", "-pthread", "-o", exe]
            + s.split())
    if not check(p.returncode == 0, f"{name}: a C driver of {name}_run_shapes builds"):
        print(p.stdout + p.stderr)
        return None
    return exe


def close(a, b):
    return a.shape == b.shape and np.allclose(a, b, rtol=TOL, atol=TOL)


def run_both(graphc, work, model, mdir, name, x, refs, what):
    xin = os.path.join(work, f"{name}_in_{x.shape}.npy".replace(" ", ""))
    np.save(xin, x)
    r_int = os.path.join(work, f"{name}_interp")
    r_c = os.path.join(work, f"{name}_c")
    shutil.rmtree(r_int, ignore_errors=True)
    shutil.rmtree(r_c, ignore_errors=True)
    p = run([graphc, "run", model, r_int, xin, "--max-shape", max_shape_arg(name)])
    q = run([os.path.join(mdir, f"{name}_main"), r_c, xin])
    if not check(p.returncode == 0 and q.returncode == 0, f"{what}: graph run and {name}_main succeed"):
        print(p.stderr + q.stderr)
        return
    for i, ref in enumerate(refs):
        a = np.load(os.path.join(r_int, f"output_{i}.npy"))
        b = np.load(os.path.join(r_c, f"output_{i}.npy"))
        check(close(a, ref), f"{what}: interpreter output {i} {a.shape} matches the reference")
        check(close(b, ref), f"{what}: compiled output {i} {b.shape} matches the reference (max diff "
              f"{np.abs(b - ref).max() if b.shape == ref.shape else 'shape'})")


MAXES = {"mlp": "x=8,784", "tmlp": "x=8,20", "enc": "x=1,16,%d" % D}


def max_shape_arg(name):
    return MAXES[name]


def one_line_error(p, *parts):
    lines = p.stderr.strip().splitlines()
    return p.returncode == 1 and len(lines) == 1 and all(s in lines[0] for s in parts)


RESHAPE_GIR = """graph rr {
  input %x: f32[2,3,4]
  input %shape: i64[2]
  %y = Reshape(%x, %shape)
  %z = Mul(%y, %y)
  %w = Relu(%z)
  output %w
}
"""

RANGE_GIR = """graph rg {
  input %n: i64[]
  const %zero: i64[] = [0]
  const %one: i64[] = [1]
  %r = Range(%zero, %n, %one)
  %y = Mul(%r, %r)
  output %y
}
"""


def data_dependent(graphc, work, rng):
    """(g) shapes computed from input values while the model runs."""
    gir = os.path.join(work, "rr.gir")
    with open(gir, "w") as f:
        f.write(RESHAPE_GIR)
    rdir = os.path.join(work, "rr_out")
    fl, s = cflags()
    p = run([graphc, "compile", gir, "-o", rdir, "--emit-main", "--name", "rr"])
    if not check(p.returncode == 0, "reshape with a runtime shape compiles with no flags"):
        print(p.stderr)
        return
    mk = run(["make", "-s", "-C", rdir, f"CFLAGS={fl}", f"LDFLAGS={s}", "BLAS=0", "rr_main"])
    if not check(mk.returncode == 0, "rr: the folder builds with -Werror -pedantic"):
        print(mk.stdout + mk.stderr)
        return
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    xin = os.path.join(work, "rr_x.npy")
    np.save(xin, x)
    for shape, want in (([4, 6], (4, 6)), ([-1, 2], (12, 2)), ([0, 12], (2, 12)), ([24, 1], (24, 1))):
        sin = os.path.join(work, "rr_s.npy")
        np.save(sin, np.array(shape, np.int64))
        ref = np.maximum(x.reshape(want) ** 2, 0)
        for kind, cmd in (("interpreter", [graphc, "run", gir, os.path.join(work, "rr_i"), xin, sin]),
                          ("compiled", [os.path.join(rdir, "rr_main"), os.path.join(work, "rr_c"), xin, sin])):
            out = os.path.join(work, "rr_i" if kind == "interpreter" else "rr_c")
            shutil.rmtree(out, ignore_errors=True)
            q = run(cmd)
            ok = q.returncode == 0
            got = np.load(os.path.join(out, "output_0.npy")) if ok else None
            check(ok and close(got, ref), f"reshape to {shape}: {kind} output {None if got is None else got.shape} "
                  f"matches numpy {want} {q.stderr.strip()}")
    sin = os.path.join(work, "rr_bad.npy")
    np.save(sin, np.array([5, 5], np.int64))
    q = run([os.path.join(rdir, "rr_main"), os.path.join(work, "rr_bad_c"), xin, sin])
    check(one_line_error(q, "a shape computed from input values is invalid"),
          f"rr_main with an invalid runtime shape: one line ({q.stderr.strip()})")
    q = run([graphc, "run", gir, os.path.join(work, "rr_bad_i"), xin, sin])
    check(one_line_error(q, "node 'y' (Reshape)", "cannot reshape"), f"graph run with an invalid shape: one line ({q.stderr.strip()})")
    d1 = run([graphc, "dump", gir, "--print-after=infer-shapes"])
    check(d1.returncode == 0 and "%y: f32[?y:0<=24,?y:1<=24] = Reshape(%x, %shape)" in d1.stdout,
          "the text IR prints data-dependent dims as ?NAME<=BOUND")
    gir2 = os.path.join(work, "rr2.gir")
    with open(gir2, "w") as f:
        f.write("\n".join(l for l in d1.stdout.splitlines() if not l.startswith("#")) + "\n")
    d2 = run([graphc, "dump", gir2, "--print-after=infer-shapes"])
    check(d2.returncode == 0 and d2.stdout == d1.stdout, "data-dependent dims read back (dump, parse, dump identical)")
    # a length nothing bounds
    rg = os.path.join(work, "rg.gir")
    with open(rg, "w") as f:
        f.write(RANGE_GIR)
    q = run([graphc, "compile", rg, "-o", os.path.join(work, "rg_out")])
    check(one_line_error(q, "node 'r' (Range)", "nothing in the model bounds it", "--max-dim=N"),
          f"an unbounded data-dependent dim is a one-line error suggesting --max-dim: {q.stderr.strip()}")
    check(not os.path.exists(os.path.join(work, "rg_out")), "and writes nothing")
    gdir = os.path.join(work, "rg_out2")
    q = run([graphc, "compile", rg, "-o", gdir, "--emit-main", "--name", "rg", "--max-dim=100", "--report"])
    if check(q.returncode == 0, f"Range compiles with --max-dim=100 {q.stderr.strip()}"):
        mk = run(["make", "-s", "-C", gdir, f"CFLAGS={fl}", f"LDFLAGS={s}", "BLAS=0", "rg_main"])
        nin = os.path.join(work, "rg_n.npy")
        for n in (0, 7, 100):
            np.save(nin, np.array(n, np.int64))
            shutil.rmtree(os.path.join(work, "rg_c"), ignore_errors=True)
            r = run([os.path.join(gdir, "rg_main"), os.path.join(work, "rg_c"), nin])
            ok = mk.returncode == 0 and r.returncode == 0
            got = np.load(os.path.join(work, "rg_c", "output_0.npy")) if ok else None
            check(ok and np.array_equal(got, np.arange(n, dtype=np.int64) ** 2), f"Range to {n}: rg_main matches numpy")
        np.save(nin, np.array(101, np.int64))
        r = run([os.path.join(gdir, "rg_main"), os.path.join(work, "rg_c101"), nin])
        check(one_line_error(r, "beyond its bound"), f"Range beyond --max-dim: rg_main fails with one line ({r.stderr.strip()})")


def gpt_model():
    """A GPT-style decoder: 4 pre-norm blocks of causal self-attention and a GELU MLP."""
    import math
    import torch
    import torch.nn as nn

    class Block(nn.Module):
        def __init__(self, d, h):
            super().__init__()
            self.h = h
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
            self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

        def forward(self, x, mask):
            B, T, C = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(C, dim=2)
            q, k, v = (t.view(B, T, self.h, C // self.h).transpose(1, 2) for t in (q, k, v))
            a = (q @ k.transpose(-2, -1)) / math.sqrt(C // self.h)
            a = a.masked_fill(mask[:T, :T] == 0, float("-inf")).softmax(-1)
            x = x + self.proj((a @ v).transpose(1, 2).reshape(B, T, C))
            return x + self.mlp(self.ln2(x))

    class GPT(nn.Module):
        def __init__(self, vocab=100, d=64, h=4, layers=4, max_t=64):
            super().__init__()
            self.tok = nn.Embedding(vocab, d)
            self.pos = nn.Parameter(torch.randn(1, max_t, d) * 0.1)
            self.blocks = nn.ModuleList([Block(d, h) for _ in range(layers)])
            self.ln, self.head = nn.LayerNorm(d), nn.Linear(d, vocab)
            self.register_buffer("mask", torch.tril(torch.ones(max_t, max_t)))

        def forward(self, idx):
            x = self.tok(idx) + self.pos[:, :idx.shape[1]]
            for b in self.blocks:
                x = b(x, self.mask)
            return self.head(self.ln(x))

    torch.manual_seed(15)
    return GPT().eval()


def export_gpt(path):
    """gpt_model() exported to path with a symbolic length T (input idx, output logits); the module."""
    import warnings
    import torch
    m = gpt_model()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(m, torch.zeros(1, 8, dtype=torch.long), path, input_names=["idx"], output_names=["logits"],
                          dynamic_axes={"idx": {1: "T"}, "logits": {1: "T"}}, opset_version=17)
    return m


def export_classifier(make, path):
    """A torchvision classifier (make: its constructor), seeded, its BatchNorm statistics calibrated as
    in tests/models, exported to path for 32x32 images with a symbolic batch (input x, output y); the module."""
    import torch
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models"))
    from torch_models import calibrate
    torch.manual_seed(15)
    m = make(weights=None)
    calibrate(m, (1, 3, 32, 32), 15)
    torch.onnx.export(m, torch.zeros(1, 3, 32, 32), path, input_names=["x"], output_names=["y"],
                      dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}}, opset_version=17)
    return m


def gpt_decoder(graphc, work):
    """(i) a decoder with a runtime sequence length, shapes computed in the graph."""
    import torch
    path = os.path.join(work, "gpt.onnx")
    m = export_gpt(path)
    out = os.path.join(work, "gpt_out")
    fl, s = cflags()
    p = run([graphc, "compile", path, "-o", out, "--emit-main", "--name", "gpt", "--max-shape", "idx=1,64"])
    if not check(p.returncode == 0, f"gpt: compiles once with --max-shape idx=1,64 {p.stderr.strip()}"):
        return
    mk = run(["make", "-s", "-C", out, f"CFLAGS={fl}", f"LDFLAGS={s}", "BLAS=0", "gpt_main"])
    if not check(mk.returncode == 0, "gpt: the folder builds with -Werror -pedantic"):
        print(mk.stdout + mk.stderr)
        return
    for t in (1, 7, 40, 64):
        idx = np.random.default_rng(t).integers(0, 100, (1, t)).astype(np.int64)
        xin = os.path.join(work, "gpt_idx.npy")
        np.save(xin, idx)
        with torch.no_grad():
            want = m(torch.from_numpy(idx)).numpy()
        for kind, cmd, res in (("compiled", [os.path.join(out, "gpt_main")], "gpt_c"),
                               ("interpreter", [graphc, "run", path], "gpt_i")):
            res = os.path.join(work, res)
            shutil.rmtree(res, ignore_errors=True)
            q = run(cmd + [res, xin] + (["--max-shape", "idx=1,64"] if kind == "interpreter" else []))
            got = np.load(os.path.join(res, "output_0.npy")) if q.returncode == 0 else None
            check(got is not None and close(got, want), f"gpt T={t}: {kind} logits {None if got is None else got.shape} "
                  f"match PyTorch {q.stderr.strip()}")


def torchvision_batch(graphc, work):
    """(h) a classifier with a runtime batch: Conv, pools, BatchNormalization."""
    import torch
    import torchvision
    fl, s = cflags()
    for name, make, level in (("r18", torchvision.models.resnet18, "-O2"), ("mbv2", torchvision.models.mobilenet_v2, "-O0")):
        path = os.path.join(work, f"{name}.onnx")
        m = export_classifier(make, path)
        out = os.path.join(work, f"{name}_out")
        p = run([graphc, "compile", path, "-o", out, "--emit-main", "--name", name, "--max-shape", "x=4,3,32,32", level])
        if not check(p.returncode == 0, f"{name}: compiles once with a runtime batch ({level}) {p.stderr.strip()}"):
            continue
        mk = run(["make", "-s", "-C", out, f"CFLAGS={fl}", f"LDFLAGS={s}", "BLAS=0", f"{name}_main"])
        if not check(mk.returncode == 0, f"{name}: the folder builds with -Werror -pedantic"):
            print(mk.stdout + mk.stderr)
            continue
        for b in (1, 2, 3, 4):
            x = np.random.default_rng(b).standard_normal((b, 3, 32, 32)).astype(np.float32)
            xin = os.path.join(work, f"{name}_x.npy")
            np.save(xin, x)
            res = os.path.join(work, f"{name}_c")
            shutil.rmtree(res, ignore_errors=True)
            q = run([os.path.join(out, f"{name}_main"), res, xin])
            with torch.no_grad():
                want = m(torch.from_numpy(x)).numpy()
            got = np.load(os.path.join(res, "output_0.npy")) if q.returncode == 0 else None
            err = float(np.abs(got - want).max() / np.abs(want).max()) if got is not None and got.shape == want.shape else None
            check(err is not None and err < 1e-4, f"{name} batch {b}: {name}_main matches PyTorch (max error "
                  f"{err} of the largest |y| {float(np.abs(want).max()):.3g}) {q.stderr.strip()}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--graphc", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    graphc = os.path.abspath(a.graphc)
    work = os.path.abspath(a.work)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    rng = np.random.default_rng(15)

    # (a) MLP, symbolic batch
    mlp, mlp_ref = mlp_model(rng)
    mlp_path = os.path.join(work, "mlp.onnx")
    onnx.save(mlp, mlp_path)
    mdir = os.path.join(work, "mlp_out")
    p = compile_model(graphc, mlp_path, mdir, "mlp", ["--max-shape", MAXES["mlp"]])
    if p:
        check("runtime dims: batch in [1, 8]" in p.stdout, "mlp: --report lists the runtime dim and its bound")
        hdr = open(os.path.join(mdir, "mlp.h")).read()
        check('#define mlp_DIM_0_NAME "batch"' in hdr and "#define mlp_DIM_0_MAX 8" in hdr and
              "#define mlp_INPUT_0_MAX_DIMS" in hdr and "mlp_run_shapes" in hdr, "mlp: mlp.h documents the bounds")
        for b in (1, 3, 8):
            x = rng.standard_normal((b, 784)).astype(np.float32)
            run_both(graphc, work, mlp_path, mdir, "mlp", x, [mlp_ref(x)], f"mlp batch {b}")
        drv = build_driver(mdir, "mlp")
        if drv:
            r = run([drv, "3", "784"])
            check(r.stdout.split() == ["0", "3", "10"], f"mlp_run_shapes at batch 3 returns 0 and reports (3, 10): {r.stdout.strip()}")
            r = run([drv, "9", "784"])
            check(r.stdout.split()[:1] == ["-2"], f"mlp_run_shapes beyond the bound (9) returns mlp_ERR_SHAPE: {r.stdout.strip()}")
            r = run([drv, "0", "784"])
            check(r.stdout.split()[:1] == ["-2"], "mlp_run_shapes below the lower bound (0) returns mlp_ERR_SHAPE")
            r = run([drv, "3", "783"])
            check(r.stdout.split()[:1] == ["-2"], "mlp_run_shapes with a wrong fixed dim returns mlp_ERR_SHAPE")
        # (c) beyond the bound: one line from graphc run and from mlp_main
        big = os.path.join(work, "mlp_big.npy")
        np.save(big, np.zeros((9, 784), np.float32))
        q = run([graphc, "run", mlp_path, os.path.join(work, "big_i"), big, "--max-shape", MAXES["mlp"]])
        check(one_line_error(q, "input 'x' dim 0 is 9", "batch"), f"graph run beyond the bound: one line ({q.stderr.strip()})")
        q = run([os.path.join(mdir, "mlp_main"), os.path.join(work, "big_c"), big])
        check(one_line_error(q, "beyond the model's bounds"), f"mlp_main beyond the bound: one line ({q.stderr.strip()})")
        check(not os.path.exists(os.path.join(work, "big_c")), "mlp_main beyond the bound writes nothing")

    # (a') the same kind of MLP exported from PyTorch with dynamic_axes, against PyTorch
    import torch
    torch.manual_seed(15)
    tm = torch.nn.Sequential(torch.nn.Linear(20, 16), torch.nn.ReLU(), torch.nn.Linear(16, 5), torch.nn.Softmax(dim=-1))
    tm.eval()
    tpath = os.path.join(work, "tmlp.onnx")
    torch.onnx.export(tm, torch.zeros(2, 20), tpath, input_names=["x"], output_names=["y"],
                      dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}}, opset_version=17)
    tdir = os.path.join(work, "tmlp_out")
    if compile_model(graphc, tpath, tdir, "tmlp", ["--max-shape", MAXES["tmlp"]]):
        for b in (1, 3, 8):
            x = rng.standard_normal((b, 20)).astype(np.float32)
            with torch.no_grad():
                want = tm(torch.from_numpy(x)).numpy()
            run_both(graphc, work, tpath, tdir, "tmlp", x, [want], f"PyTorch MLP batch {b}")

    # (b) transformer encoder block, symbolic T
    enc, enc_ref = encoder_model(rng)
    enc_path = os.path.join(work, "enc.onnx")
    onnx.save(enc, enc_path)
    edir = os.path.join(work, "enc_out")
    if compile_model(graphc, enc_path, edir, "enc", ["--max-shape", MAXES["enc"]]):
        for t in (1, 7, 16):
            x = rng.standard_normal((1, t, D)).astype(np.float32)
            run_both(graphc, work, enc_path, edir, "enc", x, enc_ref(x), f"encoder T={t}")
        big = os.path.join(work, "enc_big.npy")
        np.save(big, np.zeros((1, 17, D), np.float32))
        q = run([os.path.join(edir, "enc_main"), os.path.join(work, "enc_big_c"), big])
        check(one_line_error(q, "beyond the model's bounds"), f"enc_main at T=17: one line ({q.stderr.strip()})")
    # the same at -O0 (no fusion: every elementwise op its own kernel)
    odir = os.path.join(work, "enc_O0")
    if compile_model(graphc, enc_path, odir, "enc", ["--max-shape", MAXES["enc"], "-O0"]):
        x = rng.standard_normal((1, 5, D)).astype(np.float32)
        run_both(graphc, work, enc_path, odir, "enc", x, enc_ref(x), "encoder -O0 T=5")

    # (d) text IR round trip
    d1 = run([graphc, "dump", mlp_path, "--max-shape", MAXES["mlp"], "--full"])
    check(d1.returncode == 0 and "input %x: f32[batch<=8,784]" in d1.stdout, "dump prints f32[batch<=8,784]")
    gir = os.path.join(work, "mlp.gir")
    with open(gir, "w") as f:
        f.write(d1.stdout)
    d2 = run([graphc, "dump", gir, "--full"])
    check(d2.returncode == 0 and d2.stdout == d1.stdout, "text IR round trip (dump, parse, dump) is identical")
    d3 = run([graphc, "dump", enc_path, "--max-shape", MAXES["enc"], "--print-after=infer-shapes"])
    check(d3.returncode == 0 and "%s1: f32[1,4,T<=16,T<=16] = Mul(%s0, %scale)" in d3.stdout,
          "inferred shapes carry T through MatMul and Transpose")
    bad = os.path.join(work, "bad.gir")
    with open(bad, "w") as f:
        f.write("graph g {\n  input %x: f32[T<=4,2]\n  input %y: f32[T<=5,2]\n  %z = Add(%x, %y)\n  output %z\n}\n")
    q = run([graphc, "dump", bad])
    check(q.returncode == 1 and "symbolic dim 'T' is bounded" in q.stderr, "one symbol with two bounds is an error")

    # (e) an op without runtime-shape support
    un = os.path.join(work, "unsup.onnx")
    onnx.save(unsupported_model(), un)
    q = run([graphc, "compile", un, "-o", os.path.join(work, "unsup_out"), "--max-shape", "x=4,4"])
    check(one_line_error(q, "node 'uniq' (Unique)", "op 'Unique' does not support runtime shapes yet", "'x'"),
          f"an unsupported op is a one-line error: {q.stderr.strip()}")
    mism = os.path.join(work, "mism.gir")
    with open(mism, "w") as f:
        f.write("graph g {\n  input %x: f32[T<=4,2]\n  input %y: f32[4,2]\n  %z = Add(%x, %y)\n  output %z\n}\n")
    q = run([graphc, "compile", mism, "-o", os.path.join(work, "mism_out")])
    check(one_line_error(q, "node 'z' (Add)", "does not broadcast against runtime dim T"),
          f"a constant dim against a runtime dim is a one-line error: {q.stderr.strip()}")

    # (f) a symbolic input without flags
    q = run([graphc, "compile", mlp_path, "-o", os.path.join(work, "noflag")])
    check(one_line_error(q, "input 'x' dim 0 is symbolic ('batch')", "--max-shape x=MAX,784", "--shape x=1,784"),
          f"a symbolic input without flags is a one-line error: {q.stderr.strip()}")
    q = run([graphc, "compile", mlp_path, "-o", os.path.join(work, "badmax"), "--max-shape", "x=8,783"])
    check(one_line_error(q, "--max-shape x=[8,783]: dim 1 is 784 in the model"), "--max-shape with a wrong fixed dim")

    data_dependent(graphc, work, rng)
    torchvision_batch(graphc, work)
    gpt_decoder(graphc, work)

    if FAILS:
        print(f"{len(FAILS)} check(s) failed")
        return 1
    print("all runtime-shape checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
