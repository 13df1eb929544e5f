"""Builds the ONNX model of the custom-operator tests: y = Add(ScaledTanh(MatMul(x, W), alpha), b),
with ScaledTanh in domain com.example (opset 17 plus the custom domain's opset import).

    make_model.py OUT.onnx [--alpha 0.7] [--seed 0]

Writes OUT.onnx and, beside it, W.npy, b.npy and x.npy (the input the tests run)."""
import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def build(alpha, seed):
    rng = np.random.default_rng(seed)
    W = rng.standard_normal((4, 3)).astype(np.float32)
    b = rng.standard_normal((3,)).astype(np.float32)
    x = rng.standard_normal((2, 4)).astype(np.float32)
    nodes = [
        helper.make_node("MatMul", ["x", "W"], ["h"], name="mm"),
        helper.make_node("ScaledTanh", ["h"], ["t"], name="st", domain="com.example", alpha=alpha),
        helper.make_node("Add", ["t", "b"], ["y"], name="add"),
    ]
    graph = helper.make_graph(
        nodes, "custom_mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
        initializer=[numpy_helper.from_array(W, "W"), numpy_helper.from_array(b, "b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.example", 1)],
                              producer_name="graphc-tests")
    return model, W, b, x


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--alpha", type=float, default=0.7)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    model, W, b, x = build(a.alpha, a.seed)
    onnx.save(model, a.out)
    d = os.path.dirname(os.path.abspath(a.out))
    np.save(os.path.join(d, "W.npy"), W)
    np.save(os.path.join(d, "b.npy"), b)
    np.save(os.path.join(d, "x.npy"), x)


if __name__ == "__main__":
    main()
