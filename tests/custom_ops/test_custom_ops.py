#!/usr/bin/python3
"""test_custom_ops.py — user operators from annotated C (graphc --ops FILE.c, stage 1).

    /usr/bin/python3 tests/custom_ops/test_custom_ops.py --graphc BUILD/graphc --work DIR

On the model of make_model.py (MatMul → com.example::ScaledTanh(alpha=0.7) → Add)
and the files beside this script:

* Without --ops the custom domain is the importer's one-line error.
* `graphc run --ops scaled_tanh.c` matches numpy's tanh(alpha * (x @ W)) + b.
* `graphc compile --ops ... --emit-main`: the folder holds NAME_ops_0.c (the
  user's file, byte for byte) and graphc/custom_op.h (the public header);
  NAME.c calls scaled_tanh with alpha as a float literal; the folder builds
  with -Wall -Wextra -Werror -pedantic and NAME_main's output matches numpy;
  two compiles give identical folders.
* graphc_add_model(... OPS scaled_tanh.c) in a small CMake project builds
  the model library; its output matches numpy.
* `compile --grad --loss=mse:y`: the compiled gradients (through the
  ScaledTanhGrad node that calls scaled_tanh_grad) match PyTorch autograd of
  the same function written as an autograd.Function.
* `graphc gradcheck --ops` passes with the file above and fails (exit 1, the
  failing parameters named) with scaled_tanh_wrong_grad.c, whose gradient
  leaves alpha out of its formula.
* `dump --ops` prints ScaledTanh in the text IR; that text runs again with
  --ops and gives the same output.
* `graphc check-op FILE.c` passes on scaled_tanh.c (one line) and fails on
  the wrong gradient (exit 1, one line naming ScaledTanh, the input and the
  worst element).
* Reader errors are one line `FILE:LINE: ...` with exit status 1: a gradient
  missing a parameter, a pointer type that does not match the dtype, a const
  output gradient, an attribute the op lacks, a typedef'd type (needs
  libclang); a file whose body does not compile names the file and line of
  the compiler's error and leaves no temporary folder.
* compile, run, dump and gradcheck --help document --ops.
"""
import argparse
import filecmp
import os
import re
import shutil
import sys

import numpy as np

from common import check, compare_grads, compiled_grads, finish, one_line_error, run

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
ALPHA = np.float32(0.7)
HAVE_LIBCLANG = False


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--graphc", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    g = os.path.abspath(a.graphc)
    global HAVE_LIBCLANG
    HAVE_LIBCLANG = "libclang: yes" in run([g, "--version"]).stdout
    work = os.path.abspath(a.work)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    tmpdir = os.path.join(work, "tmp")
    os.makedirs(tmpdir)
    env = dict(os.environ, TMPDIR=tmpdir)
    ops = os.path.join(HERE, "scaled_tanh.c")
    model = os.path.join(work, "custom_mlp.onnx")
    p = run([sys.executable, os.path.join(HERE, "make_model.py"), model])
    check(p.returncode == 0, "make_model.py builds the ONNX model " + p.stderr)
    x, W, b = (np.load(os.path.join(work, n + ".npy")) for n in ("x", "W", "b"))
    xin = os.path.join(work, "x.npy")
    ref = np.tanh(ALPHA * (x @ W)) + b

    # without --ops: the importer's error for an unknown domain
    p = run([g, "run", model, os.path.join(work, "o0"), xin], env)
    check(one_line_error(p) and "domain 'com.example' is not supported" in p.stderr,
          "without --ops the custom domain is a one-line error: " + p.stderr.strip())

    # the interpreter
    p = run([g, "run", model, os.path.join(work, "o1"), xin, "--ops", ops], env)
    check(p.returncode == 0, "run --ops " + p.stderr)
    if p.returncode == 0:
        y = np.load(os.path.join(work, "o1", "output_0.npy"))
        err = float(np.abs(y - ref).max())
        check(err < 1e-5, "run --ops matches numpy (max error %.3g)" % err)
    check(os.listdir(tmpdir) == [], "run --ops leaves no temporary folder")

    # compiled C
    gen = os.path.join(work, "gen")
    p = run([g, "compile", model, "-o", gen, "--ops", ops, "--emit-main", "--name", "cmlp"], env)
    check(p.returncode == 0, "compile --ops " + p.stderr)
    if p.returncode == 0:
        check(filecmp.cmp(os.path.join(gen, "cmlp_ops_0.c"), ops, shallow=False),
              "the output folder holds the user's file as cmlp_ops_0.c")
        check(filecmp.cmp(os.path.join(gen, "graphc", "custom_op.h"),
                          os.path.join(ROOT, "include", "graphc", "custom_op.h"), shallow=False),
              "the output folder holds graphc/custom_op.h")
        src = open(os.path.join(gen, "cmlp.c")).read()
        check('#include "cmlp_ops_0.c"' in src, "cmlp.c includes the user's file")
        check(re.search(r"scaled_tanh\(\(int64_t\)6, \w+, \w+, 6\.99999988\d*e-01f\);", src) is not None,
              "cmlp.c calls scaled_tanh(6, h, t, alpha as a float literal)")
        gen2 = os.path.join(work, "gen2")
        run([g, "compile", model, "-o", gen2, "--ops", ops, "--emit-main", "--name", "cmlp"], env)
        same = all(filecmp.cmp(os.path.join(gen, f), os.path.join(gen2, f), shallow=False)
                   for f in os.listdir(gen) if os.path.isfile(os.path.join(gen, f)))
        check(same, "two compiles write identical files")
        p = run(["make", "-s", "CFLAGS=-O2 -std=c99 -Wall -Wextra -Werror -pedantic"], cwd=gen)
        check(p.returncode == 0, "the folder builds with -Wall -Wextra -Werror -pedantic " + p.stderr[-2000:])
        if p.returncode == 0:
            p = run([os.path.join(gen, "cmlp_main"), os.path.join(work, "o2"), xin])
            check(p.returncode == 0, "cmlp_main runs " + p.stderr)
            if p.returncode == 0:
                y = np.load(os.path.join(work, "o2", "output_0.npy"))
                err = float(np.abs(y - ref).max())
                check(err < 1e-5, "the compiled model matches numpy (max error %.3g)" % err)

    # graphc_add_model(... OPS ...) in a CMake project
    cm = os.path.join(work, "cmake_build")
    p = run(["cmake", "-S", os.path.join(HERE, "cmake"), "-B", cm, "-DGRAPHC_EXE=" + g, "-DGRAPHC_SOURCE=" + ROOT,
             "-DMODEL=" + model, "-DOPS_FILE=" + ops], env)
    if p.returncode == 0:
        p = run(["cmake", "--build", cm], env)
    check(p.returncode == 0, "graphc_add_model(... OPS scaled_tanh.c) configures and builds " + p.stdout[-2000:] + p.stderr[-2000:])
    if p.returncode == 0:
        x.tofile(os.path.join(work, "x.raw"))
        p = run([os.path.join(cm, "run_custom"), os.path.join(work, "x.raw"), os.path.join(work, "y.raw")])
        y = np.fromfile(os.path.join(work, "y.raw"), np.float32).reshape(2, 3) if p.returncode == 0 else None
        check(y is not None and float(np.abs(y - ref).max()) < 1e-5,
              "the CMake-built model matches numpy (rc %d)" % p.returncode)

    # compiled gradients against PyTorch
    check_grad_vs_torch(g, env, work, model, ops, x, W, b)

    # gradcheck
    gc = [g, "gradcheck", model, xin, "--eps", "1e-3", "--atol", "1e-3", "--rtol", "1e-2"]
    p = run(gc + ["--ops", ops], env)
    check(p.returncode == 0 and p.stdout.count(" ok ") == 3,
          "gradcheck --ops passes on x, W and b:\n" + p.stdout + p.stderr)
    p = run(gc + ["--ops", os.path.join(HERE, "scaled_tanh_wrong_grad.c")], env)
    check(p.returncode == 1 and re.search(r"^x f32\[2,4\]: \d+ of \d+ checked elements FAIL", p.stdout, re.M)
          and "2 parameters failed the gradient check" in p.stderr,
          "gradcheck fails when the gradient leaves alpha out:\n" + p.stdout + p.stderr)

    # check-op
    p = run([g, "check-op", ops], env)
    check(p.returncode == 0 and re.fullmatch(r"ScaledTanh: gradient ok on \[7\] and \[3,5\] \(.*\)\n", p.stdout) is not None,
          "check-op passes with one line for ScaledTanh: " + p.stdout + p.stderr)
    p = run([g, "check-op", os.path.join(HERE, "scaled_tanh_wrong_grad.c")], env)
    check(one_line_error(p) and re.match(r"graphc: error: check-op: ScaledTanh: the gradient of input x f32\[7\]: "
                                         r"\d+ of \d+ checked elements FAIL; worst at element \d+: analytic [-\d.e]+, "
                                         r"numeric [-\d.e]+$", p.stderr.strip()) is not None,
          "check-op fails on the wrong gradient, naming ScaledTanh, the input and the worst error: " + p.stderr.strip())

    # text IR round trip
    p = run([g, "dump", model, "--ops", ops], env)
    check(p.returncode == 0 and re.search(r"%t = ScaledTanh\(%h\) \{alpha=0\.69999998", p.stdout) is not None,
          "dump --ops prints the ScaledTanh node " + p.stderr)
    gir = os.path.join(work, "custom_mlp.gir")
    open(gir, "w").write(p.stdout)
    p = run([g, "run", gir, os.path.join(work, "o3"), xin, "--ops", ops], env)
    check(p.returncode == 0 and filecmp.cmp(os.path.join(work, "o3", "output_0.npy"),
                                            os.path.join(work, "o1", "output_0.npy"), shallow=False),
          "the dumped text IR runs with --ops and gives the same output " + p.stderr)
    p = run([g, "run", gir, os.path.join(work, "o4"), xin], env)
    check(one_line_error(p) and "unknown op 'ScaledTanh'" in p.stderr,
          "the text IR without --ops: unknown op " + p.stderr.strip())

    # reader errors
    cases = [
        ("bad_grad_missing.c", 10, r"gradient 'scaled_tanh_grad' of 'ScaledTanh' lacks a parameter: it has 3 pointer "
                                   r"parameters, expected 4"),
        ("bad_grad_type.c", 11, r"parameter 'dx' is 'double \*' but the op's dtype is float"),
        ("bad_grad_const.c", 10, r"parameter 'dx' \(the gradient of input 'x'\) must be 'float \*', not 'const float \*'"),
        ("bad_grad_attr.c", 10, r"parameter 'beta' is not an attribute of op 'ScaledTanh'"),
        ("needs_libclang.c", 8, r"cannot read parameter 'const real \*x' of 'twice' .*libclang"),
    ]
    plain = dict(env, GRAPHC_OPS_READER="plain")  # graphc's own reader, also in a build with libclang
    for f, line, pat in cases:
        path = os.path.join(HERE, f)
        p = run([g, "compile", model, "-o", os.path.join(work, "bad"), "--ops", path], plain)
        want = "graphc: error: %s:%d: " % (path, line)
        check(one_line_error(p) and p.stderr.startswith(want) and re.search(pat, p.stderr) is not None,
              "%s: one-line error at line %d: %s" % (f, line, p.stderr.strip()))
        check(not os.path.exists(os.path.join(work, "bad")), "%s: no output folder" % f)
    if HAVE_LIBCLANG:  # the same mistakes read by libclang: the same errors
        for f, line, pat in cases[:-1]:
            path = os.path.join(HERE, f)
            p = run([g, "compile", model, "-o", os.path.join(work, "bad"), "--ops", path], env)
            want = "graphc: error: %s:%d: " % (path, line)
            check(one_line_error(p) and p.stderr.startswith(want) and re.search(pat, p.stderr) is not None,
                  "libclang reader, %s: the same one-line error: %s" % (f, p.stderr.strip()))
        # the typedef'd file the own reader refuses: libclang reads it, and it runs
        tw = os.path.join(work, "twice.gir")
        open(tw, "w").write("graph twice {\n  input %x: f32[3]\n  %y = Twice(%x)\n  output %y\n}\n")
        np.save(os.path.join(work, "x3t.npy"), np.array([1, -2, 3.5], np.float32))
        p = run([g, "run", tw, os.path.join(work, "o6"), os.path.join(work, "x3t.npy"), "--ops",
                 os.path.join(HERE, "needs_libclang.c")], env)
        ok = p.returncode == 0 and np.array_equal(np.load(os.path.join(work, "o6", "output_0.npy")),
                                                  np.array([2, -4, 7], np.float32))
        check(ok, "libclang reads needs_libclang.c (typedef float real) and Twice runs: " + p.stderr.strip())
    else:
        print("note: this graphc has no libclang (graphc --version); the libclang reader's checks are not run here")
    bc = os.path.join(HERE, "bad_compile.c")
    np.save(os.path.join(work, "x3.npy"), np.array([1, 2, 3], np.float32))
    broken = os.path.join(work, "broken.gir")  # written here: tests/unit parses every .gir of the tree
    open(broken, "w").write("graph broken {\n  input %x: f32[3]\n  %y = Broken(%x)\n  output %y\n}\n")
    p = run([g, "run", broken, os.path.join(work, "o5"), os.path.join(work, "x3.npy"),
             "--ops", bc], env)
    check(one_line_error(p) and ("%s:7:" % bc) in p.stderr and "undeclared_name" in p.stderr,
          "a body that does not compile: one-line error naming the file and line: " + p.stderr.strip())
    check(os.listdir(tmpdir) == [], "a failed compile leaves no temporary folder")

    p = run([g, "check-op", "--help"])
    check(p.returncode == 0 and "usage: graphc check-op FILE.c" in p.stdout, "check-op --help")
    for cmd in ("compile", "run", "dump", "gradcheck"):
        p = run([g, cmd, "--help"])
        check(p.returncode == 0 and "--ops FILE.c" in p.stdout, cmd + " --help documents --ops")

    return finish()


def check_grad_vs_torch(g, env, work, model, ops, x, W, b):
    """compile --grad --loss=mse:y; the loss and grad_W, grad_b against torch autograd."""
    import torch

    class ScaledTanh(torch.autograd.Function):
        @staticmethod
        def forward(ctx, h, alpha):
            y = torch.tanh(alpha * h)
            ctx.save_for_backward(y)
            ctx.alpha = alpha
            return y

        @staticmethod
        def backward(ctx, dy):
            (y,) = ctx.saved_tensors
            return dy * ctx.alpha * (1 - y * y), None

    label = np.random.default_rng(1).standard_normal((2, 3)).astype(np.float32)
    got = compiled_grads(g, env, work, model, ops, "cg", "scaled_tanh_grad", label)
    if got is None:
        return
    Wt = torch.tensor(W, dtype=torch.float64, requires_grad=True)
    bt = torch.tensor(b, dtype=torch.float64, requires_grad=True)
    y = ScaledTanh.apply(torch.tensor(x, dtype=torch.float64) @ Wt, float(ALPHA)) + bt
    loss = ((y - torch.tensor(label, dtype=torch.float64)) ** 2).mean()
    loss.backward()
    compare_grads(got, {"loss": loss.detach().numpy(), "grad_W": Wt.grad.numpy(), "grad_b": bt.grad.numpy()})

if __name__ == "__main__":
    sys.exit(main())
