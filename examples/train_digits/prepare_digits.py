#!/usr/bin/python3
"""prepare_digits.py OUT.bin — scikit-learn's bundled digits (no download) as
raw data for train_digits.c: int32 count, then count x 64 float32 pixels
scaled to [0, 1], then count int64 labels, in a fixed shuffled order."""
import sys

import numpy as np
from sklearn.datasets import load_digits

d = load_digits()
order = np.random.default_rng(0).permutation(len(d.target))
x = (d.data[order] / 16.0).astype(np.float32)
y = d.target[order].astype(np.int64)
with open(sys.argv[1], "wb") as f:
    f.write(np.int32(len(y)).tobytes())
    f.write(x.tobytes())
    f.write(y.tobytes())
print(f"prepare_digits: {len(y)} digits written to {sys.argv[1]}")
