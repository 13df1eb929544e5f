#!/usr/bin/python3
"""Checks the import-time unrolling of ONNX control flow (frontend/onnx_control.c):
small Scan / Loop / If models built with onnx.helper run through the
reference interpreter (`graphc run`, as loaded and after -O2) and compiled C
is not needed: the unrolled graph is plain ops. Expected values come from
numpy loops written from the ONNX operator spec; refusals are checked for
their one-line message.

    /usr/bin/python3 tests/onnx/test_control.py --graphc BUILD/graphc
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT
I64 = TensorProto.INT64
B = TensorProto.BOOL


def vi(name, t, shape):
    return helper.make_tensor_value_info(name, t, shape)


def init(name, a):
    return numpy_helper.from_array(np.asarray(a), name)


def model(graph, opset):
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 7
    return m


def scan_rev():
    """opset 11 Scan: two scan inputs on different axes, one reversed, an
    outer-scope initializer and a body initializer, outputs stacked on axes
    1 and -1, the second reversed."""
    body = helper.make_graph(
        [helper.make_node("Mul", ["a", "b"], ["ab"]),
         helper.make_node("Add", ["s", "ab"], ["s2"]),
         helper.make_node("Sub", ["a", "b"], ["d"]),
         helper.make_node("Add", ["d", "W"], ["dw"]),  # W: outer scope
         helper.make_node("Mul", ["dw", "C"], ["o2"]),  # C: body initializer
         helper.make_node("Identity", ["s2"], ["o1"])],
        "body", [vi("s", F, [2]), vi("a", F, [2]), vi("b", F, [2])],
        [vi("s2", F, [2]), vi("o1", F, [2]), vi("o2", F, [2])],
        initializer=[init("C", np.array([2.0, -1.0], np.float32))])
    W = np.array([0.5, 1.5], np.float32)
    node = helper.make_node("Scan", ["s0", "x1", "x2"], ["sf", "y1", "y2"], name="scan", body=body,
                            num_scan_inputs=2, scan_input_axes=[1, 0], scan_input_directions=[0, 1],
                            scan_output_axes=[1, -1], scan_output_directions=[0, 1])
    g = helper.make_graph([node], "scan_rev", [vi("s0", F, [2]), vi("x1", F, [2, 3]), vi("x2", F, [3, 2])],
                          [vi("sf", F, [2]), vi("y1", F, [2, 3]), vi("y2", F, [2, 3])], initializer=[init("W", W)])
    rng = np.random.default_rng(1)
    s0, x1, x2 = (rng.standard_normal(s).astype(np.float32) for s in ([2], [2, 3], [3, 2]))
    s, y1, y2 = s0.copy(), [], []
    for t in range(3):
        a, b = x1[:, t], x2[2 - t]
        s = s + a * b
        y1.append(s)
        y2.append((a - b + W) * np.array([2.0, -1.0], np.float32))
    y1 = np.stack(y1, axis=1)
    y2 = np.stack(y2[::-1], axis=-1)
    return model(g, 11), [s0, x1, x2], [s, y1, y2]


def scan8_batch():
    """opset 8 Scan with a batch of 2 (batch axis 0, scan axis 1)."""
    body = helper.make_graph(
        [helper.make_node("Add", ["s", "x"], ["s2"]), helper.make_node("Mul", ["s2", "x"], ["o"])],
        "body", [vi("s", F, [2]), vi("x", F, [2])], [vi("s2", F, [2]), vi("o", F, [2])])
    node = helper.make_node("Scan", ["", "s0", "x"], ["sf", "y"], body=body, num_scan_inputs=1)
    g = helper.make_graph([node], "scan8", [vi("s0", F, [2, 2]), vi("x", F, [2, 4, 2])],
                          [vi("sf", F, [2, 2]), vi("y", F, [2, 4, 2])])
    rng = np.random.default_rng(2)
    s0, x = rng.standard_normal([2, 2]).astype(np.float32), rng.standard_normal([2, 4, 2]).astype(np.float32)
    sf, y = np.zeros_like(s0), np.zeros_like(x)
    for b in range(2):
        s = s0[b]
        for t in range(4):
            s = s + x[b, t]
            y[b, t] = s * x[b, t]
        sf[b] = s
    return model(g, 8), [s0, x], [sf, y]


def loop_const():
    """opset 13 Loop: trip count an initializer, no cond, a Constant and the
    iteration number in the body, a scan output; the body holds an If on a
    constant and a Scan over an outer graph input (nested unrolling)."""
    then_g = helper.make_graph([helper.make_node("Neg", ["v3"], ["vn"])], "then", [], [vi("vn", F, [3])])
    else_g = helper.make_graph([helper.make_node("Identity", ["v3"], ["vi"])], "else", [], [vi("vi", F, [3])])
    sbody = helper.make_graph([helper.make_node("Add", ["acc", "e"], ["acc2"])], "sbody",
                              [vi("acc", F, [3]), vi("e", F, [3])], [vi("acc2", F, [3])])
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Constant", [], ["two"], value=numpy_helper.from_array(np.array(2.0, np.float32))),
         helper.make_node("Cast", ["i"], ["fi"], to=F),
         helper.make_node("Mul", ["v", "two"], ["v2"]),
         helper.make_node("Add", ["v2", "fi"], ["v3"]),
         helper.make_node("If", ["yes"], ["v4"], then_branch=then_g, else_branch=else_g),
         helper.make_node("Scan", ["v4", "X"], ["v5"], body=sbody, num_scan_inputs=1),
         helper.make_node("Identity", ["v5"], ["sc"])],
        "body", [vi("i", I64, []), vi("cond_in", B, []), vi("v", F, [3])],
        [vi("cond_out", B, []), vi("v5", F, [3]), vi("sc", F, [3])])
    node = helper.make_node("Loop", ["M", "", "v0"], ["vf", "scan"], name="loop", body=body)
    g = helper.make_graph([node], "loop_const", [vi("v0", F, [3]), vi("X", F, [2, 3])],
                          [vi("vf", F, [3]), vi("scan", F, [4, 3])],
                          initializer=[init("M", np.array(4, np.int64)), init("yes", np.array(True))])
    rng = np.random.default_rng(3)
    v0, X = rng.standard_normal([3]).astype(np.float32), rng.standard_normal([2, 3]).astype(np.float32)
    v, sc = v0, []
    for i in range(4):
        v = -(v * 2 + np.float32(i)) + X[0] + X[1]
        sc.append(v)
    return model(g, 13), [v0, X], [v, np.stack(sc)]


def loop_body(cond_node):
    body = helper.make_graph(
        [cond_node, helper.make_node("Add", ["v", "v"], ["v2"])],
        "body", [vi("i", I64, []), vi("c", B, []), vi("v", F, [1])], [vi("c2", B, []), vi("v2", F, [1])])
    return body


def loop_input_m():
    """Loop whose trip count is a graph input: refused, then fine bound."""
    node = helper.make_node("Loop", ["M", "", "v0"], ["vf"], name="loop",
                            body=loop_body(helper.make_node("Identity", ["c"], ["c2"])))
    g = helper.make_graph([node], "loop_m", [vi("M", I64, []), vi("v0", F, [1])], [vi("vf", F, [1])])
    return model(g, 13)


def loop_data_cond():
    """Loop whose body computes its condition: refused."""
    body = loop_body(helper.make_node("Less", ["i", "i"], ["c2"]))
    node = helper.make_node("Loop", ["M", "", "v0"], ["vf"], name="loop", body=body)
    g = helper.make_graph([node], "loop_cond", [vi("v0", F, [1])], [vi("vf", F, [1])],
                          initializer=[init("M", np.array(3, np.int64))])
    return model(g, 13)


def run(args):
    return subprocess.run(args, capture_output=True, text=True, timeout=120)


def check_run(graphc, tmp, name, m, ins, want, extra=()):
    path = os.path.join(tmp, name + ".onnx")
    onnx.save(m, path)
    files = []
    for k, a in enumerate(ins):
        files.append(os.path.join(tmp, f"{name}_in{k}.npy"))
        np.save(files[-1], a)
    problems = []
    for opt in ([], ["-O2"]):
        out = os.path.join(tmp, name + "_out" + "".join(opt))
        p = run([graphc, "run", path, out] + files + opt + list(extra))
        if p.returncode != 0:
            problems.append(f"graphc run {' '.join(opt)} failed: {p.stderr.strip()}")
            continue
        for k, w in enumerate(want):
            got = np.load(os.path.join(out, f"output_{k}.npy"))
            if got.shape != w.shape or not np.allclose(got, w, rtol=1e-5, atol=1e-5):
                problems.append(f"{' '.join(opt) or 'as loaded'} output {k}: got {got.tolist()} expected {w.tolist()}")
    return problems


def check_refusal(graphc, tmp, name, m, want):
    path = os.path.join(tmp, name + ".onnx")
    onnx.save(m, path)
    p = run([graphc, "compile", path, "-o", os.path.join(tmp, name + "_c")])
    err = p.stderr.strip()
    if p.returncode != 1 or len(err.splitlines()) != 1 or want not in err:
        return [f"expected exit 1 and one line containing {want!r}; got {p.returncode}: {err}"]
    return []


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--graphc", required=True)
    a = ap.parse_args()
    fails = 0
    with tempfile.TemporaryDirectory() as tmp:
        cases = []
        for name, make in (("scan_rev", scan_rev), ("scan8_batch", scan8_batch), ("loop_const", loop_const)):
            m, ins, want = make()
            cases.append((name, check_run(a.graphc, tmp, name, m, ins, want)))
        v0 = np.array([1.5], np.float32)
        cases.append(("loop_input_m refused",
                      check_refusal(a.graphc, tmp, "loop_m", loop_input_m(),
                                    "node 'loop' (Loop): Loop: trip count must be a constant (bind it with --bind M=FILE.npy)")))
        mfile = os.path.join(tmp, "m3.npy")
        np.save(mfile, np.array(3, np.int64))
        cases.append(("loop_input_m bound",
                      check_run(a.graphc, tmp, "loop_m", loop_input_m(), [v0], [v0 * 8], ["--bind", "M=" + mfile])))
        cases.append(("loop_data_cond refused",
                      check_refusal(a.graphc, tmp, "loop_cond", loop_data_cond(),
                                    "node 'loop' (Loop): Loop: a data-dependent condition is not supported")))
        for name, problems in cases:
            print(("FAIL " if problems else "ok   ") + name + "".join("\n     " + p for p in problems))
            fails += bool(problems)
    print(f"{fails} failure(s)")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
