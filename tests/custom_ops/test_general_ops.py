#!/usr/bin/python3
"""test_general_ops.py — general user operators (GRAPHC_GENERAL) from annotated C.

    /usr/bin/python3 tests/custom_ops/test_general_ops.py --graphc BUILD/graphc --work DIR

On the model of make_general_model.py (n = RowNorm(x @ W, eps), y = n * gamma,
idx = RowArgMax(n), both ops in domain com.example) and row_norm.c beside
this script (RowNorm: shape rule, workspace request, in-place option and
gradient; RowArgMax: an int64 output of another shape):

* `graphc run --ops row_norm.c` matches numpy (y within 1e-5, idx equal).
* `graphc compile --ops`: NAME.c passes graphc_tensor descriptions and the
  workspace in the arena; RowNorm's output shares its input's memory (the
  in-place option); the folder builds with -Wall -Wextra -Werror -pedantic
  and NAME_main matches numpy.
* `compile --grad --loss=mse:y` through RowNorm (its gradient function)
  matches PyTorch with the same op written as an autograd.Function.
* `graphc check-op row_norm.c` passes (a line per op) and fails on
  a copy of row_norm.c whose gradient leaves a term out (exit 1, one line
  naming RowNorm).
* A shape rule's refusal is a one-line error naming the node; a function
  that writes past what its shape rule gave is caught by run and check-op;
  the reader's rules for the general form are one-line FILE:LINE errors.
"""
import argparse
import os
import re
import shutil
import sys

import numpy as np

from common import check, compare_grads, compiled_grads, finish, one_line_error, run

HERE = os.path.dirname(os.path.abspath(__file__))
EPS = 1e-3
def row_norm(h):
    return (h - h.mean(-1, keepdims=True)) / np.sqrt(h.var(-1, keepdims=True) + EPS)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--graphc", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    g = os.path.abspath(a.graphc)
    work = os.path.abspath(a.work)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    tmpdir = os.path.join(work, "tmp")
    os.makedirs(tmpdir)
    env = dict(os.environ, TMPDIR=tmpdir)
    ops = os.path.join(HERE, "row_norm.c")
    model = os.path.join(work, "general.onnx")
    p = run([sys.executable, os.path.join(HERE, "make_general_model.py"), model])
    check(p.returncode == 0, "make_general_model.py builds the ONNX model " + p.stderr)
    x, W, gamma = (np.load(os.path.join(work, n + ".npy")) for n in ("x", "W", "gamma"))
    xin = os.path.join(work, "x.npy")
    n_ref = row_norm(x.astype(np.float64) @ W)
    y_ref, idx_ref = n_ref * gamma, n_ref.argmax(-1)

    def matches(outdir, what):
        y = np.load(os.path.join(outdir, "output_0.npy"))
        idx = np.load(os.path.join(outdir, "output_1.npy"))
        err = float(np.abs(y - y_ref).max())
        check(err < 1e-5 and idx.dtype == np.int64 and np.array_equal(idx, idx_ref),
              "%s matches numpy (y max error %.3g, idx %s vs %s)" % (what, err, idx.tolist(), idx_ref.tolist()))

    p = run([g, "run", model, os.path.join(work, "o1"), xin, "--ops", ops], env)
    check(p.returncode == 0, "run --ops " + p.stderr)
    if p.returncode == 0:
        matches(os.path.join(work, "o1"), "run --ops")
    check(os.listdir(tmpdir) == [], "run --ops leaves no temporary folder")

    gen = os.path.join(work, "gen")
    p = run([g, "compile", model, "-o", gen, "--ops", ops, "--emit-main", "--name", "gm"], env)
    check(p.returncode == 0, "compile --ops " + p.stderr)
    if p.returncode == 0:
        src = open(os.path.join(gen, "gm.c")).read()
        check(re.search(r"\{\(void \*\)t_h, GRAPHC_FLOAT, 2, \{3, 6\}\},", src) is not None
              and re.search(r"row_norm\(&t\[0\], &t\[1\], \(void \*\)\(arena \+ \d+\), 1\.0+\d*e-03f\);", src),
              "gm.c passes RowNorm graphc_tensor descriptions, its workspace in the arena and eps")
        check(re.search(r"\{\(void \*\)t_idx, GRAPHC_INT64, 1, \{3\}\},", src) is not None,
              "RowArgMax's output is int64 [3], as its shape rule says")
        decl = dict(re.findall(r"float \*const (t_[hn]) = \(float \*\)\(void \*\)\((arena \+ \d+)\);", src))
        check(len(decl) == 2 and decl["t_h"] == decl["t_n"],
              "RowNorm's output shares its input's arena bytes (GRAPHC_INPLACE): %s" % decl)
        p = run(["make", "-s", "CFLAGS=-O2 -std=c99 -Wall -Wextra -Werror -pedantic -Wdouble-promotion"], cwd=gen)
        check(p.returncode == 0, "the folder builds with -Wall -Wextra -Werror -pedantic " + p.stderr[-2000:])
        if p.returncode == 0:
            p = run([os.path.join(gen, "gm_main"), os.path.join(work, "o2"), xin])
            check(p.returncode == 0, "gm_main runs " + p.stderr)
            if p.returncode == 0:
                matches(os.path.join(work, "o2"), "the compiled model")

    check_grad_vs_torch(g, env, work, model, ops, x, W, gamma)

    p = run([g, "check-op", ops], env)
    check(p.returncode == 0 and re.fullmatch(r"RowNorm: gradient ok on \[7\] and \[3,5\] \(.*\)\n"
                                             r"RowArgMax: runs on \[7\] and \[3,5\]; no gradient function.*\n", p.stdout)
          is not None, "check-op passes with a line per op: " + p.stdout + p.stderr)
    # the same file with the y * mean(dy * y) term left out of the gradient
    text = open(ops).read()
    right = "o[r * d + i] = rstd * (g[r * d + i] - mg - ys[r * d + i] * mgy);"
    check(right in text, "row_norm.c has the gradient formula this test edits")
    wrong = os.path.join(work, "row_norm_wrong_grad.c")
    open(wrong, "w").write(text.replace(right, "o[r * d + i] = rstd * (g[r * d + i] - mg) + 0 * mgy;"))
    p = run([g, "check-op", wrong], env)
    check(one_line_error(p) and re.match(r"graphc: error: check-op: RowNorm: the gradient of input x f32\[7\]: \d+ of \d+ "
                                         r"checked elements FAIL; worst at element \d+", p.stderr) is not None,
          "check-op fails on the wrong gradient, naming RowNorm: " + p.stderr.strip())

    # a shape rule's refusal, and a function writing past its shape rule
    gir = os.path.join(work, "int_input.gir")
    open(gir, "w").write("graph r {\n  input %x: i64[2,3]\n  %y = RowNorm(%x) {eps=0.001}\n  output %y\n}\n")
    p = run([g, "compile", gir, "-o", os.path.join(work, "bad0"), "--ops", ops], env)
    check(one_line_error(p) and "node 'y' (RowNorm): RowNorm takes float tensors (shape rule 'row_norm_shape')" in p.stderr
          and not os.path.exists(os.path.join(work, "bad0")),
          "a shape rule's message is a one-line error naming the node: " + p.stderr.strip())
    over = os.path.join(HERE, "general_overrun.c")
    sgir = os.path.join(work, "short.gir")
    open(sgir, "w").write("graph s {\n  input %x: f32[2,3]\n  %y = Short(%x)\n  output %y\n}\n")
    np.save(os.path.join(work, "x23.npy"), np.ones((2, 3), np.float32))
    p = run([g, "run", sgir, os.path.join(work, "o5"), os.path.join(work, "x23.npy"), "--ops", over], env)
    check(one_line_error(p) and "'short_copy' wrote past the end of output 'y' (f32[5], as its shape rule gave it)" in p.stderr,
          "run catches a write past the shape rule's output: " + p.stderr.strip())
    p = run([g, "check-op", over], env)
    check(one_line_error(p) and "Short on [7]" in p.stderr and "wrote past the end of output 'y'" in p.stderr,
          "check-op catches it too: " + p.stderr.strip())

    cases = [
        ("bad_general_no_shape.c", 5, r"general op 'Copy' has no shape rule: declare one with GRAPHC_SHAPE"),
        ("bad_general_ws.c", 14, r"op 'Copy' has a workspace request, but its function 'copy' takes no 'void \*' workspace"),
        ("bad_general_inplace.c", 14, r"GRAPHC_INPLACE: op 'Copy' has no output 'out'"),
        ("bad_general_shape_const.c", 13, r"shape rule 'copy_shape' of 'Copy': parameter 'y' \(output 'y'\) must be "
                                          r"'graphc_tensor \*'"),
    ]
    for f, line, pat in cases:
        path = os.path.join(HERE, f)
        p = run([g, "compile", model, "-o", os.path.join(work, "bad"), "--ops", path], env)
        want = "graphc: error: %s:%d: " % (path, line)
        check(one_line_error(p) and p.stderr.startswith(want) and re.search(pat, p.stderr) is not None,
              "%s: one-line error at line %d: %s" % (f, line, p.stderr.strip()))
        check(not os.path.exists(os.path.join(work, "bad")), "%s: no output folder" % f)
    check(os.listdir(tmpdir) == [], "no temporary folder is left behind")

    return finish()


def check_grad_vs_torch(g, env, work, model, ops, x, W, gamma):
    """compile --grad --loss=mse:y; the loss, grad_W and grad_gamma against torch autograd."""
    import torch

    class RowNorm(torch.autograd.Function):
        @staticmethod
        def forward(ctx, h, eps):
            m = h.mean(-1, keepdim=True)
            rstd = 1 / torch.sqrt(((h - m) ** 2).mean(-1, keepdim=True) + eps)
            y = (h - m) * rstd
            ctx.save_for_backward(y, rstd)
            return y

        @staticmethod
        def backward(ctx, dy):
            y, rstd = ctx.saved_tensors
            return rstd * (dy - dy.mean(-1, keepdim=True) - y * (dy * y).mean(-1, keepdim=True)), None

    label = np.random.default_rng(1).standard_normal((3, 6)).astype(np.float32)
    got = compiled_grads(g, env, work, model, ops, "gg", "row_norm_grad", label)
    if got is None:
        return
    Wt = torch.tensor(W, dtype=torch.float64, requires_grad=True)
    gt = torch.tensor(gamma, dtype=torch.float64, requires_grad=True)
    y = RowNorm.apply(torch.tensor(x, dtype=torch.float64) @ Wt, EPS) * gt
    loss = ((y - torch.tensor(label, dtype=torch.float64)) ** 2).mean()
    loss.backward()
    compare_grads(got, {"loss": loss.detach().numpy(), "grad_W": Wt.grad.numpy(), "grad_gamma": gt.grad.numpy()})

if __name__ == "__main__":
    sys.exit(main())
