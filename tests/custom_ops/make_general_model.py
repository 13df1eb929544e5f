"""Builds the ONNX model of the general custom-operator tests:
    n = com.example::RowNorm(x @ W, eps=1e-3);  y = n * gamma;  idx = com.example::RowArgMax(n)
(opset 17 plus the custom domain's opset import).

    make_general_model.py OUT.onnx [--seed 0]

Writes OUT.onnx and, beside it, W.npy, gamma.npy and x.npy (the input the tests run)."""
import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

EPS = 1e-3


def build(seed):
    rng = np.random.default_rng(seed)
    W = rng.standard_normal((8, 6)).astype(np.float32)
    gamma = rng.standard_normal((6,)).astype(np.float32)
    x = rng.standard_normal((3, 8)).astype(np.float32)
    nodes = [
        helper.make_node("MatMul", ["x", "W"], ["h"], name="mm"),
        helper.make_node("RowNorm", ["h"], ["n"], name="norm", domain="com.example", eps=EPS),
        helper.make_node("Mul", ["n", "gamma"], ["y"], name="scale"),
        helper.make_node("RowArgMax", ["n"], ["idx"], name="argmax", domain="com.example"),
    ]
    graph = helper.make_graph(
        nodes, "custom_general",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 6]),
         helper.make_tensor_value_info("idx", TensorProto.INT64, [3])],
        initializer=[numpy_helper.from_array(W, "W"), numpy_helper.from_array(gamma, "gamma")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.example", 1)],
                              producer_name="graphc-tests")
    return model, W, gamma, x


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    model, W, gamma, x = build(a.seed)
    onnx.save(model, a.out)
    d = os.path.dirname(os.path.abspath(a.out))
    np.save(os.path.join(d, "W.npy"), W)
    np.save(os.path.join(d, "gamma.npy"), gamma)
    np.save(os.path.join(d, "x.npy"), x)


if __name__ == "__main__":
    main()
