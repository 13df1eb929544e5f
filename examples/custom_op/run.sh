#!/usr/bin/env bash
# run.sh — a user operator in C (graphc --ops): builds an ONNX model
# MatMul → com.example::ScaledTanh(alpha=0.7) → Add, whose ScaledTanh is the
# annotated function in scaled_tanh.c; checks the op and its gradient
# (graphc check-op), compiles the model with --ops, builds the folder and
# compares its output with numpy and with graphc run.
#   bash examples/custom_op/run.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j2 --target graphc >/dev/null
out=build/custom_op_example
rm -rf "$out"
mkdir -p "$out"
ops=examples/custom_op/scaled_tanh.c
/usr/bin/python3 tests/custom_ops/make_model.py "$out/custom_mlp.onnx"     # also writes x.npy, W.npy, b.npy
build/graphc check-op "$ops"
build/graphc compile "$out/custom_mlp.onnx" -o "$out/model" --ops "$ops" --emit-main
make -s -C "$out/model"
"$out/model/custom_mlp_main" "$out/c" "$out/x.npy"
build/graphc run "$out/custom_mlp.onnx" "$out/ref" "$out/x.npy" --ops "$ops"
/usr/bin/python3 - "$out" <<'PY'
import sys
import numpy as np
d = sys.argv[1]
x, W, b = (np.load(f"{d}/{n}.npy") for n in "xWb")
want = np.tanh(np.float32(0.7) * (x @ W)) + b
for name in ("c", "ref"):
    got = np.load(f"{d}/{name}/output_0.npy")
    print(f"{'compiled C' if name == 'c' else 'graphc run'}: max |output - numpy| = {np.abs(got - want).max():.3g}")
    assert np.allclose(got, want, atol=1e-5)
PY
