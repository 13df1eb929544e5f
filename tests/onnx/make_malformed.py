#!/usr/bin/python3
"""Writes the malformed ONNX files of tests/onnx/malformed/ (one per class of
defect the importer must refuse). Run with Debian's python3 + python3-onnx:

    /usr/bin/python3 tests/onnx/make_malformed.py [OUTDIR]

The files are committed; test_malformed.py holds the message each one must
produce. Every file is a tiny Relu/Softmax model with one defect."""
import os
import struct
import sys

import onnx
from onnx import TensorProto, helper

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "malformed")


def model(nodes, inputs, outputs, inits=(), opset=17):
    g = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def vi(name, shape, t=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, t, shape)


def relu_model(inits=(), node_in="x"):
    n = [helper.make_node("Relu", [node_in], ["y"], name="relu")]
    return model(n, [vi("x", [2, 3])], [vi("y", [2, 3])], inits)


def save(name, data):
    if isinstance(data, onnx.ModelProto):
        data = data.SerializeToString()
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)


def varint(v):
    out = b""
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def raw_tensor(name, dims, raw):
    t = TensorProto()
    t.name = name
    t.data_type = TensorProto.FLOAT
    t.dims.extend(dims)
    t.raw_data = raw
    return t


def external_tensor(name, location, offset=None, length=None):
    t = TensorProto()
    t.name = name
    t.data_type = TensorProto.FLOAT
    t.dims.extend([2, 3])
    t.data_location = TensorProto.EXTERNAL
    e = t.external_data.add()
    e.key, e.value = "location", location
    for k, v in (("offset", offset), ("length", length)):
        if v is not None:
            e = t.external_data.add()
            e.key, e.value = k, str(v)
    return t


def ext_model(location, **kw):
    n = [helper.make_node("Add", ["x", "w"], ["y"], name="add")]
    return model(n, [vi("x", [2, 3])], [vi("y", [2, 3])], [external_tensor("w", location, **kw)])


def main():
    os.makedirs(OUT, exist_ok=True)
    good = relu_model().SerializeToString()
    save("truncated.onnx", good[: len(good) - 9])
    # ir_version (field 1, a varint) written as a length-delimited field
    save("wrong_wire_type.onnx", bytes([0x0A, 0x01, 0x78]) + good)
    # graph (field 7) declaring 1000 bytes with 3 left
    save("length_past_end.onnx", varint(8 << 3) + varint(8) + varint(7 << 3 | 2) + varint(1000) + b"abc")
    save("huge_tensor.onnx", relu_model([raw_tensor("w", [1 << 20, 1024], b"\0" * 16)]))
    save("negative_dim.onnx", relu_model([raw_tensor("w", [-3], b"")]))
    save("overflow_dims.onnx", relu_model([raw_tensor("w", [1 << 62, 1 << 62], b"")]))
    sm = helper.make_node("Softmax", ["x"], ["y"], name="sm", axis=5)
    save("bad_axis.onnx", model([sm], [vi("x", [2, 3])], [vi("y", [2, 3])]))
    save("undefined_input.onnx", relu_model(node_in="nowhere"))
    cyc = [helper.make_node("Add", ["x", "b"], ["a"], name="first"),
           helper.make_node("Relu", ["a"], ["b"], name="second")]
    save("cycle.onnx", model(cyc, [vi("x", [2, 3])], [vi("b", [2, 3])]))
    foo = helper.make_node("Foo", ["x"], ["y"], name="mystery")
    save("unknown_op.onnx", model([foo], [vi("x", [2, 3])], [vi("y", [2, 3])]))
    save("ext_dotdot.onnx", ext_model("../make_malformed.py"))
    save("ext_absolute.onnx", ext_model("/etc/passwd"))
    link = os.path.join(OUT, "ext_link.bin")
    if os.path.lexists(link):
        os.remove(link)
    os.symlink("../make_malformed.py", link)
    save("ext_symlink.onnx", ext_model("ext_link.bin"))
    save("ext_data.bin", struct.pack("<6f", 1, 2, 3, 4, 5, 6))
    save("ext_range.onnx", ext_model("ext_data.bin", offset=8, length=24))
    n = [helper.make_node("Relu", ["x"], ["y"], name="relu")]
    save("symbolic_dim.onnx", model(n, [vi("x", ["batch", 3])], [vi("y", ["batch", 3])]))


if __name__ == "__main__":
    main()
