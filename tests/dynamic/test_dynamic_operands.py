#!/usr/bin/python3
"""test_dynamic_operands.py — data-dependent dims from shape operands given at
run time: Slice (starts, ends, axes, steps), Split (split), TopK (K) and
ReduceSum (axes) with those operands as graph inputs.

    /usr/bin/python3 tests/dynamic/test_dynamic_operands.py --graphc BUILD/graphc --work DIR

Each model (text IR) is compiled ONCE with no flags; its output extents are
bounded by the input's. The compiled NAME_main (built with -Werror
-pedantic; ASan/UBSan with GRAPHC_SANITIZE=1) and the interpreter (graphc
run) then run it with several operand values, int32 and int64 operands,
negative indices and steps, empty results, each output also feeding an
elementwise op on its runtime extents, against numpy. Invalid operands
(a repeated axis, sizes that do not sum to the axis, K beyond the axis) make
NAME_main fail with NAME_ERR_SHAPE and graphc run with a one-line error
naming the node.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gir_cases  # noqa: E402



# ---- models: text IR, the reference in numpy, the operand values to try --------

def onnx_slice(x, starts, ends, axes=None, steps=None):
    """ONNX Slice is numpy basic slicing per listed axis."""
    sl = [slice(None)] * x.ndim
    axes = range(len(starts)) if axes is None else axes
    steps = [1] * len(starts) if steps is None else steps
    for s, e, a, t in zip(starts, ends, axes, steps):
        sl[a] = slice(int(s), int(e), int(t))
    return x[tuple(sl)]


SLICE = """graph dslice {
  input %x: f32[6,5,4]
  input %starts: i32[2]
  input %ends: i32[2]
  input %axes: i64[2]
  input %steps: i64[2]
  %y = Slice(%x, %starts, %ends, %axes, %steps)
  %z = Neg(%y)
  output %y
  output %z
}
"""

SLICE_DEFAULT = """graph dslice2 {
  input %x: f32[6,5,4]
  input %starts: i64[3]
  input %ends: i64[3]
  %y = Slice(%x, %starts, %ends)
  output %y
}
"""

SPLIT = """graph dsplit {
  input %x: f32[2,6,3]
  input %split: i32[3]
  %a, %b, %c = Split(%x, %split) {axis=1}
  %d = Relu(%b)
  output %a
  output %d
  output %c
}
"""

TOPK = """graph dtopk {
  input %x: f32[3,5]
  input %k: i64[1]
  %v, %i = TopK(%x, %k) {axis=-1, largest=0}
  output %v
  output %i
}
"""

RSUM_KEEP = """graph drsum_keep {
  input %x: f32[2,3,4]
  input %axes: i64[2]
  %y = ReduceSum(%x, %axes) {keepdims=1}
  output %y
}
"""

RSUM_DROP = """graph drsum_drop {
  input %x: f32[2,3,4]
  input %axes: i64[1]
  %y = ReduceSum(%x, %axes) {keepdims=0}
  %z = Exp(%y)
  output %z
}
"""


def topk_ref(x, k):
    order = np.argsort(x, axis=-1, kind="stable")[:, :k]
    return np.take_along_axis(x, order, axis=-1), order.astype(np.int64)


def cases(rng):
    """(name, text, [(what, inputs, refs or None for an invalid operand, error words)])"""
    x = rng.standard_normal((6, 5, 4)).astype(np.float32)
    i32, i64 = (lambda v: np.array(v, np.int32)), (lambda v: np.array(v, np.int64))
    sl = []
    for st, en, ax, sp in [([1, -1], [5, -9], [0, 2], [2, -1]), ([0, 0], [100, 100], [-1, 1], [1, 3]),
                           ([-100, 4], [100, -100], [0, 1], [-2, -1]), ([3, 0], [3, 5], [0, 1], [1, 1]),
                           ([5, 2], [0, 2], [2, 0], [-9, 1])]:
        y = onnx_slice(x, st, en, ax, sp)
        sl.append((f"starts={st} ends={en} axes={ax} steps={sp}", [x, i32(st), i32(en), i64(ax), i64(sp)], [y, -y], None))
    sl.append(("axes [1, -2] (repeated)", [x, i32([0, 0]), i32([1, 1]), i64([1, -2]), i64([1, 1])], None, "twice"))
    sl.append(("step 0", [x, i32([0, 0]), i32([1, 1]), i64([0, 1]), i64([1, 0])], None, "is 0"))
    sl2 = [(f"starts={st} ends={en}", [x, i64(st), i64(en)], [onnx_slice(x, st, en)], None)
           for st, en in [([1, 2, -3], [-1, 9, -1]), ([0, 0, 0], [6, 5, 4]), ([-2**63, 7, 2], [2**63 - 1, -7, 1])]]
    xs = rng.standard_normal((2, 6, 3)).astype(np.float32)
    sp = []
    for parts in [[1, 2, 3], [0, 6, 0], [6, 0, 0], [2, 2, 2]]:
        a, b, c = np.split(xs, np.cumsum(parts)[:-1], axis=1)
        sp.append((f"split={parts}", [xs, i32(parts)], [a, np.maximum(b, 0), c], None))
    sp.append(("split [1, 1, 1] (sums to 3)", [xs, i32([1, 1, 1])], None, "sums to 3"))
    sp.append(("split [-1, 4, 3]", [xs, i32([-1, 4, 3])], None, "negative"))
    xt = rng.standard_normal((3, 5)).astype(np.float32)
    xt[1, 2] = xt[1, 4]  # a tie: the lower index first
    tk = [(f"k={k}", [xt, i64([k])], list(topk_ref(xt, k)), None) for k in (0, 2, 5)]
    tk.append(("k=6", [xt, i64([6])], None, "out of range"))
    xr = rng.standard_normal((2, 3, 4)).astype(np.float32)
    rk = [(f"axes={ax}", [xr, i64(ax)], [xr.sum(axis=tuple(ax), keepdims=True)], None)
          for ax in ([0, 2], [-1, 1], [2, 0])]
    rk.append(("axes [1, -2] (repeated)", [xr, i64([1, -2])], None, "twice"))
    rd = [(f"axes={ax}", [xr, i64(ax)], [np.exp(xr.sum(axis=tuple(ax)))], None) for ax in ([0], [1], [-1])]
    rd.append(("axes [3]", [xr, i64([3])], None, "out of range"))
    return [("dslice", SLICE, sl), ("dslice2", SLICE_DEFAULT, sl2), ("dsplit", SPLIT, sp), ("dtopk", TOPK, tk),
            ("drsum_keep", RSUM_KEEP, rk), ("drsum_drop", RSUM_DROP, rd)]



if __name__ == "__main__":
    gir_cases.main(cases, 16)
