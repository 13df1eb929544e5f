#!/usr/bin/python3
"""test_dyn_if.py — the data-dependent patterns of torchvision's detectors
that are not one op's: an ONNX If whose condition is known only at run
time and whose branches give differently shaped outputs (IfSelect), and
Concat along a data-dependent dim.

    /usr/bin/python3 tests/dynamic/test_dyn_if.py --graphc BUILD/graphc --work DIR

(a) The detectors' batched NMS pattern: `if boxes.numel() == 0: empty else:
    indices`, the condition a runtime input here. The output's extent is
    data-dependent (0 or the count of positives) and a downstream Add runs
    on it. Compiled once with no flags; NAME_main (built with -Werror
    -pedantic; ASan/UBSan with GRAPHC_SANITIZE=1) and the interpreter
    (graphc run) are compared with numpy for both conditions and several
    inputs, an empty selection included.
(b) Faster R-CNN's MultiScaleRoIAlign pattern: `if idx.shape[1] == 1:
    idx.squeeze(1) else: idx`, branches of different ranks, whose condition
    shape inference folds (dim 1 is static although dim 0 is data-dependent).
(c) Branches of different ranks under a runtime condition: a one-line
    compile error naming the node, and nothing written.
(d) Concat along data-dependent dims (per-class selections gathered into
    one list): NonZero counts and a static part, the offsets added at run
    time, empty parts included.
With --target cuda the models compile for the CUDA backend (runner
NAME_main_emu: the generated CUDA on graphc's CPU emulation), the same
checks.
"""
import argparse
import os
import shutil
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_dynamic import FAILS, build_runner, check, one_line_error, run  # noqa: E402


def const(name, arr):
    return helper.make_node("Constant", [], [name], value=onnx.numpy_helper.from_array(np.asarray(arr), name + "_v"))


def positives_branch(out, rank_cut=True):
    """Indices of x > 0 as [n] (NonZero -> Squeeze), the body of an else branch."""
    nodes = [const("zero_f", np.float32(0)),
             helper.make_node("Greater", ["x", "zero_f"], ["pos"]),
             helper.make_node("NonZero", ["pos"], ["nz"]),
             const("ax0", np.array([0], np.int64)),
             helper.make_node("Squeeze", ["nz", "ax0"], [out])]
    return nodes


def model_select():
    then_g = helper.make_graph([const("empty", np.zeros((0,), np.int64))], "then_g", [],
                               [helper.make_tensor_value_info("empty", TensorProto.INT64, [0])])
    else_g = helper.make_graph(positives_branch("keep"), "else_g", [],
                               [helper.make_tensor_value_info("keep", TensorProto.INT64, ["k"])])
    nodes = [helper.make_node("If", ["c"], ["sel"], then_branch=then_g, else_branch=else_g),
             const("one", np.int64(1)),
             helper.make_node("Add", ["sel", "one"], ["y"])]
    g = helper.make_graph(nodes, "ifsel",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [7]),
                           helper.make_tensor_value_info("c", TensorProto.BOOL, [])],
                          [helper.make_tensor_value_info("sel", TensorProto.INT64, None),
                           helper.make_tensor_value_info("y", TensorProto.INT64, None)])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def model_rank(runtime_cond):
    """Transpose(NonZero(x > 0)) is [n, 1]; squeezed when dim 1 is 1 (or when c)."""
    nodes = [const("zero_f", np.float32(0)),
             helper.make_node("Greater", ["x", "zero_f"], ["pos"]),
             helper.make_node("NonZero", ["pos"], ["nz"]),
             helper.make_node("Transpose", ["nz"], ["t"], perm=[1, 0])]
    if not runtime_cond:
        nodes += [helper.make_node("Shape", ["t"], ["s"]),
                  const("i1", np.int64(1)),
                  helper.make_node("Gather", ["s", "i1"], ["d1"], axis=0),
                  helper.make_node("Equal", ["d1", "i1"], ["c"])]
    then_g = helper.make_graph([const("ax1", np.array([1], np.int64)), helper.make_node("Squeeze", ["t", "ax1"], ["sq"])],
                               "then_g", [], [helper.make_tensor_value_info("sq", TensorProto.INT64, ["n"])])
    else_g = helper.make_graph([helper.make_node("Identity", ["t"], ["id"])], "else_g", [],
                               [helper.make_tensor_value_info("id", TensorProto.INT64, ["n", 1])])
    nodes += [helper.make_node("If", ["c"], ["sel"], then_branch=then_g, else_branch=else_g, name="pick"),
              const("two", np.int64(2)),
              helper.make_node("Mul", ["sel", "two"], ["y"])]
    ins = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [7])]
    if runtime_cond:
        ins.append(helper.make_tensor_value_info("c", TensorProto.BOOL, []))
    g = helper.make_graph(nodes, "ifrank", ins, [helper.make_tensor_value_info("y", TensorProto.INT64, None)])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def model_concat():
    """[positives of x, 2 static, negatives of x] along the counted dim of NonZero outputs."""
    nodes = [const("zero_f", np.float32(0)),
             helper.make_node("Greater", ["x", "zero_f"], ["pos"]),
             helper.make_node("Less", ["x", "zero_f"], ["neg"]),
             helper.make_node("NonZero", ["pos"], ["p"]),
             helper.make_node("NonZero", ["neg"], ["q"]),
             const("mid", np.array([[100, 200]], np.int64)),
             helper.make_node("Concat", ["p", "mid", "q"], ["cat"], axis=1),
             const("one", np.int64(1)),
             helper.make_node("Add", ["cat", "one"], ["y"])]
    g = helper.make_graph(nodes, "ifcat", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [7])],
                          [helper.make_tensor_value_info("y", TensorProto.INT64, None)])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def build(graphc, work, model, name, target):
    """Compiles the model (no flags, --target) and builds its runner: (model path, runner), or (None, None)."""
    path = os.path.join(work, name + ".onnx")
    onnx.save(model, path)
    out = os.path.join(work, name + "_out")
    p = run([graphc, "compile", path, "-o", out, "--emit-main", "--name", name, f"--target={target}"])
    if not check(p.returncode == 0, f"{name}: compiles with no flags (--target={target}) {p.stderr.strip()}"):
        return None, None
    exe, log = build_runner(out, name, target)
    if not check(exe is not None, f"{name}: the folder builds with -Werror -pedantic"):
        print(log)
        return None, None
    return path, exe


def run_both(graphc, work, path, out, name, feeds, refs, what):
    files = []
    for i, a in enumerate(feeds):
        f = os.path.join(work, f"{name}_in{i}.npy")
        np.save(f, a)
        files.append(f)
    for kind, cmd, dst in (("interpreter", [graphc, "run", path], os.path.join(work, name + "_ri")),
                           ("compiled", [out], os.path.join(work, name + "_rc"))):
        shutil.rmtree(dst, ignore_errors=True)
        q = run(cmd + [dst] + files)
        if not check(q.returncode == 0, f"{what}: {kind} runs {q.stderr.strip()}"):
            continue
        for i, ref in enumerate(refs):
            got = np.load(os.path.join(dst, f"output_{i}.npy"))
            check(got.shape == ref.shape and np.array_equal(got, ref),
                  f"{what}: {kind} output {i} {got.shape} equals numpy {ref.shape}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--graphc", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--target", choices=["c", "cuda"], default="c",
                    help="the backend (cuda: the generated CUDA on graphc's CPU emulation)")
    a = ap.parse_args()
    graphc = os.path.abspath(a.graphc)
    work = os.path.abspath(a.work)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    rng = np.random.default_rng(26)
    xs = [rng.standard_normal(7).astype(np.float32), -np.ones(7, np.float32), np.ones(7, np.float32)]

    # (a) runtime condition, outputs of different extents
    path, out = build(graphc, work, model_select(), "ifsel", a.target)
    if path:
        d = run([graphc, "dump", path, "--print-after=infer-shapes"])
        check(d.returncode == 0 and "IfSelect(%c" in d.stdout and "?" in d.stdout.split("IfSelect(%c")[0].splitlines()[-1],
              "ifsel: the If becomes IfSelect with a data-dependent dim")
        for x in xs:
            for c in (True, False):
                sel = np.zeros(0, np.int64) if c else np.nonzero(x > 0)[0].astype(np.int64)
                run_both(graphc, work, path, out, "ifsel", [x, np.array(c)], [sel, sel + 1],
                         f"ifsel cond={c} positives={int((x > 0).sum())}")

    # (b) different ranks, the condition folded at compile time
    path, out = build(graphc, work, model_rank(False), "ifrank", a.target)
    if path:
        d = run([graphc, "dump", path, "--print-after=infer-shapes"])
        check(d.returncode == 0 and "Equal" not in d.stdout, "ifrank: Equal(Shape(t)[1], 1) folds to a constant")
        for x in xs:
            ref = np.nonzero(x > 0)[0].astype(np.int64) * 2
            run_both(graphc, work, path, out, "ifrank", [x], [ref], f"ifrank positives={int((x > 0).sum())}")

    # (c) different ranks under a runtime condition
    path = os.path.join(work, "ifbad.onnx")
    onnx.save(model_rank(True), path)
    dst = os.path.join(work, "ifbad_out")
    q = run([graphc, "compile", path, "-o", dst, f"--target={a.target}"])
    check(one_line_error(q, "ifbad.onnx", "IfSelect", "ranks 1", "and 2"),
          f"ifbad: branches of different ranks under a runtime condition: one line ({q.stderr.strip()})")
    check(not os.path.exists(dst), "ifbad: nothing written")

    # (d) Concat along data-dependent dims
    path, out = build(graphc, work, model_concat(), "ifcat", a.target)
    if path:
        for x in xs:
            ref = np.concatenate([np.nonzero(x > 0)[0], [100, 200], np.nonzero(x < 0)[0]]).astype(np.int64)[None] + 1
            run_both(graphc, work, path, out, "ifcat", [x], [ref], f"ifcat positives={int((x > 0).sum())}")

    print(f"{len(FAILS)} failed" if FAILS else "all passed")
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
