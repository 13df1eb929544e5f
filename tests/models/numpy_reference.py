#!/usr/bin/python3
"""numpy_reference.py — expected outputs of the model tests, computed with numpy.

tests/models/test_models.c builds an MLP (784-512-256-10) and a LeNet-style CNN
through graphc's C builder API with weights and inputs from a small integer
LCG. This script reproduces the same numbers exactly and computes the models'
outputs in float64 from the float32 weights, then writes, into
tests/models/data/:

    mlp_input.npy    mlp_expected.npy
    lenet_input.npy  lenet_expected.npy

The generator (shared with the C test; change both together):
    x_{k+1} = (1103515245 * x_k + 12345) mod 2^31,  x_0 = seed
    value_k = ((x_{k+1} >> 8) / 2^23 - 0.5) * scale        (float64, then float32)
Weights use scale = 2*sqrt(6/fan_in) (He-uniform) and biases scale 0.2; inputs scale 2.
Run: /usr/bin/python3 tests/models/numpy_reference.py [--check]
(--check only compares the files with freshly computed data; ctest runs that.)
"""
import math
import os
import sys

import numpy as np

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


def lcg(seed, n, scale):
    out = np.empty(n, dtype=np.float64)
    x = seed
    for k in range(n):
        x = (1103515245 * x + 12345) % (1 << 31)
        out[k] = ((x >> 8) / 8388608.0 - 0.5) * scale
    return out.astype(np.float32)


def weight(seed, shape, fan_in):
    return lcg(seed, int(np.prod(shape)), 2.0 * math.sqrt(6.0 / fan_in)).reshape(shape)


def bias(seed, n):
    return lcg(seed, n, 0.2)


def gemm(x, w, b):  # Gemm with transB=1
    return x @ w.astype(np.float64).T + b.astype(np.float64)


def relu(x):
    return np.maximum(x, 0.0)


def conv2d(x, w, b, pad):
    n, c, h, wd = x.shape
    m, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = h + 2 * pad - kh + 1, wd + 2 * pad - kw + 1
    cols = np.empty((n, c, kh, kw, oh, ow), dtype=np.float64)
    for i in range(kh):
        for j in range(kw):
            cols[:, :, i, j] = xp[:, :, i:i + oh, j:j + ow]
    y = np.einsum("nckloq,mckl->nmoq", cols, w.astype(np.float64))
    return y + b.astype(np.float64)[None, :, None, None]


def maxpool2(x):
    n, c, h, w = x.shape
    return x[:, :, :h // 2 * 2, :w // 2 * 2].reshape(n, c, h // 2, 2, w // 2, 2).max(axis=(3, 5))


def mlp():
    x = lcg(1, 2 * 784, 2.0).reshape(2, 784)
    h = relu(gemm(x.astype(np.float64), weight(11, (512, 784), 784), bias(12, 512)))
    h = relu(gemm(h, weight(13, (256, 512), 512), bias(14, 256)))
    y = gemm(h, weight(15, (10, 256), 256), bias(16, 10))
    return x, y.astype(np.float32)


def lenet():
    x = lcg(2, 28 * 28, 2.0).reshape(1, 1, 28, 28)
    h = maxpool2(relu(conv2d(x.astype(np.float64), weight(21, (6, 1, 5, 5), 25), bias(22, 6), 2)))
    h = maxpool2(relu(conv2d(h, weight(23, (16, 6, 5, 5), 150), bias(24, 16), 0)))
    h = h.reshape(1, 400)
    h = relu(gemm(h, weight(25, (120, 400), 400), bias(26, 120)))
    h = relu(gemm(h, weight(27, (84, 120), 120), bias(28, 84)))
    y = gemm(h, weight(29, (10, 84), 84), bias(30, 10))
    return x, y.astype(np.float32)


def main():
    check = "--check" in sys.argv[1:]
    os.makedirs(DATA, exist_ok=True)
    bad = 0
    for name, fn in (("mlp", mlp), ("lenet", lenet)):
        x, y = fn()
        for kind, arr in (("input", x), ("expected", y)):
            path = os.path.join(DATA, f"{name}_{kind}.npy")
            if not check:
                np.save(path, arr)
            elif not os.path.exists(path) or not np.array_equal(np.load(path), arr):
                print(f"{path} is stale: rerun /usr/bin/python3 tests/models/numpy_reference.py")
                bad += 1
        print(f"{name}: input {x.shape}, output {y.shape}: {np.array2string(y.ravel()[:5], precision=5)} ...")
    if check:
        print(f"{4 - bad} passed, {bad} failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
