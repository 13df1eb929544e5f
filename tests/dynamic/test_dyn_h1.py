#!/usr/bin/python3
"""test_dyn_h1.py — the index ops of the torchvision detectors on runtime
extents: GatherND of a NonZero's selection, TopK with K = min(k, count),
Gather along a runtime axis, Concat along a runtime axis, ConstantOfShape
and Expand from shape values (PyTorch's expand(-1, ...) through Equal and
Where), ScatterElements and GatherElements with runtime dims, TopK
with a constant K on a runtime axis (also with nothing data-dependent in
the model, K beyond the axis at some extents), and SSD's Concat of 30
NonZero selections along their data-dependent axis.

    /usr/bin/python3 tests/dynamic/test_dyn_h1.py --graphc BUILD/graphc --work DIR

Each model (text IR) is compiled ONCE with no flags. The compiled NAME_main
(built with -Werror -pedantic; ASan/UBSan with GRAPHC_SANITIZE=1) and the
interpreter (graphc run) then run it at several runtime extents, 0 and the
bound included, against numpy. An invalid extent (K beyond the actual axis)
makes NAME_main fail with NAME_ERR_SHAPE and graphc run with one line
naming the node. With --target cuda (gir_cases.py) the same cases run as
the generated CUDA on graphc's CPU emulation.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gir_cases  # noqa: E402


# SSD's postprocess per class: the scores over a threshold and their boxes
# (GatherND by Transpose(NonZero)), the top min(5, count) of them (K from
# ReduceMin(Concat(5, Shape))), their boxes gathered by the TopK indices
# (Gather along a runtime axis), labels as ConstantOfShape(Shape(scores)),
# and two classes' selections concatenated along the runtime axis.
DETECT = """graph det {
  input %s: f32[2,12]
  input %b: f32[12,4]
  const %th: f32[] = [0.5]
  const %k0: i64[1] = [5]
  const %ax0: i64[1] = [0]
  const %c0: i64[] = [0]
  const %c1: i64[] = [1]
  const %sh1: i64[1] = [1]
  const %k0f: f32[1] = [9]
  %s0 = Gather(%s, %c0) {axis=0}
  %s1 = Gather(%s, %c1) {axis=0}
  %m0 = Greater(%s0, %th)
  %nz = NonZero(%m0)
  %idx = Transpose(%nz) {perm=[1,0]}
  %sc = GatherND(%s0, %idx)
  %bx = GatherND(%b, %idx)
  %shp = Shape(%sc)
  %n0 = Gather(%shp, %c0) {axis=0}
  %n1 = Unsqueeze(%n0, %ax0)
  %cc = Concat(%k0, %n1) {axis=0}
  %kk = ReduceMin(%cc) {keepdims=0}
  %k = Reshape(%kk, %sh1)
  %v, %i = TopK(%sc, %k) {axis=-1, largest=1, sorted=1}
  %gb = Gather(%bx, %i) {axis=0}
  %e = Exp(%v)
  %vs = Shape(%v)
  %lab = ConstantOfShape(%vs) {value=i64[1] [7]}
  %m1 = Greater(%s1, %th)
  %nz1 = NonZero(%m1)
  %idx1 = Transpose(%nz1) {perm=[1,0]}
  %sc1 = GatherND(%s1, %idx1)
  %all = Concat(%v, %sc1, %k0f) {axis=0}
  output %e
  output %gb
  output %i
  output %lab
  output %all
}
"""

# GatherND into data with a runtime dim (its first 4 rows addressed): the
# index pairs of a mask [4, 5] (scalars) and the rows of its first column
# (slices [3, 2]) into [N, 3, 2].
GATHER_ND = """graph gnd {
  input %x: f32[N<=6,5]
  input %y: f32[N<=6,3,2]
  input %m: bool[4,5]
  const %c0: i64[] = [0]
  %nz = NonZero(%m)
  %p = Transpose(%nz) {perm=[1,0]}
  %a = GatherND(%x, %p)
  %col = Gather(%m, %c0) {axis=1}
  %nr = NonZero(%col)
  %q = Transpose(%nr) {perm=[1,0]}
  %r = GatherND(%y, %q)
  %z = Neg(%r)
  output %a
  output %z
}
"""

# Faster R-CNN's box level mapping: the rows of one level (NonZero of
# levels == 1, among the first 4 of N), their features gathered and transformed, scattered back
# into zeros of the features' shape along axis 0 with the row indices
# expanded by expand(-1, C) (Where(Equal(shape, -1), 1, shape)).
SCATTER = """graph scat {
  input %feat: f32[N<=6,4]
  input %lev: i64[4]
  const %one: i64[] = [1]
  const %m1: i64[1] = [-1]
  const %rs: i64[2] = [-1, 1]
  const %neg: i64[2] = [-1, -1]
  const %ones: i64[2] = [1, 1]
  %eq = Equal(%lev, %one)
  %nz = NonZero(%eq)
  %rows = Reshape(%nz, %m1)
  %sel = Gather(%feat, %rows) {axis=0}
  %upd = Sigmoid(%sel)
  %fs = Shape(%feat)
  %zero = ConstantOfShape(%fs) {value=f32[1] [0]}
  %col = Reshape(%rows, %rs)
  %us = Shape(%upd)
  %isneg = Equal(%us, %neg)
  %ext = Where(%isneg, %ones, %us)
  %ind = Expand(%col, %ext)
  %out = ScatterElements(%zero, %ind, %upd) {axis=0}
  %acc = ScatterElements(%feat, %ind, %upd) {axis=0, reduction="add"}
  %ge = GatherElements(%feat, %ind) {axis=0}
  output %out
  output %acc
  output %ge
}
"""

# TopK with a constant K and with K given at run time along a runtime axis:
# K must not exceed the actual extent; GatherElements with runtime dims
# along and off the axis; Gather of the last element of a runtime axis.
TOPK_CONST = """graph tkc {
  input %x: f32[2,N<=8]
  input %j: i64[2,M<=4]
  input %kr: i64[1]
  const %k: i64[1] = [3]
  const %m1: i64[] = [-1]
  %v, %i = TopK(%x, %k) {axis=1, largest=0}
  %g = GatherElements(%x, %j) {axis=1}
  %last = Gather(%x, %m1) {axis=1}
  %w, %wi = TopK(%x, %kr) {axis=1}
  output %v
  output %i
  output %g
  output %last
  output %w
  output %wi
}
"""


def topk_ref(x, k, largest, axis=-1):
    order = np.argsort(-x if largest else x, axis=axis, kind="stable")
    order = np.take(order, np.arange(k), axis=axis)
    return np.take_along_axis(x, order, axis=axis), order.astype(np.int64)


def det_case(rng, n0, n1):
    """scores with exactly n0 (class 0) and n1 (class 1) over 0.5"""
    s = np.zeros((2, 12), np.float32)
    for c, cnt in ((0, n0), (1, n1)):
        v = np.where(np.arange(12) < cnt, 0.55 + 0.4 * rng.random(12), 0.45 * rng.random(12))
        s[c] = rng.permutation(v).astype(np.float32)
    s[0, s[0] > 0.5] = np.round(s[0, s[0] > 0.5], 2)  # ties: the lower index first
    b = rng.standard_normal((12, 4)).astype(np.float32)
    sel = np.nonzero(s[0] > 0.5)[0]
    v, i = topk_ref(s[0][sel], min(5, len(sel)), True)
    all_ = np.concatenate([v, s[1][s[1] > 0.5], np.array([9], np.float32)])
    return [s, b], [np.exp(v), b[sel][i], i, np.full(v.shape, 7, np.int64), all_]


def gnd_case(rng, n):
    x = rng.standard_normal((n, 5)).astype(np.float32)
    y = rng.standard_normal((n, 3, 2)).astype(np.float32)
    m = rng.random((4, 5)) < 0.5
    return [x, y, m], [x[:4][m], -y[:4][m[:, 0]]]


def scatter_case(rng, n, levels):
    feat = rng.standard_normal((n, 4)).astype(np.float32)
    lev = np.array(levels, np.int64)
    rows = np.nonzero(lev == 1)[0]
    upd = 1 / (1 + np.exp(-feat[rows]))
    out = np.zeros_like(feat)
    out[rows] = upd
    acc = feat.copy()
    acc[rows] += upd
    return [feat, lev], [out, acc, feat[rows]]


# TopK of a constant K along a runtime axis, nothing data-dependent: the
# CUDA backend checks K against the axis on the host when it captures the
# graph (once per set of dims), and a capture that fails returns
# NAME_ERR_SHAPE.
TOPK_AXIS = """graph tka {
  input %x: f32[3,N<=8]
  const %k: i64[1] = [3]
  %v, %i = TopK(%x, %k) {axis=1}
  output %v
  output %i
}
"""


# SSD's per-class gathering: a Concat of 30 NonZero selections along their
# data-dependent axis (the CUDA backend writes it with one kernel per group
# of inputs).
CAT_ROWS = 30
CAT30 = ("graph cat30 {\n  input %x: f32[30,5]\n  const %zero: f32[] = [0]\n" +
         "".join(f"  const %r{j}: i64[] = [{j}]\n  %s{j} = Gather(%x, %r{j}) {{axis=0}}\n  %p{j} = Greater(%s{j}, %zero)\n"
                 f"  %n{j} = NonZero(%p{j})\n" for j in range(CAT_ROWS)) +
         "  %y = Concat(" + ", ".join(f"%n{j}" for j in range(CAT_ROWS)) + ") {axis=1}\n  output %y\n}\n")


def cat30_ref(x):
    return [np.concatenate([np.nonzero(r > 0)[0] for r in x]).astype(np.int64)[None]]


def cases(rng):
    """(name, text, [(what, inputs, refs or None for an invalid extent, error words)])"""
    det = [(f"counts {a},{b}", *det_case(rng, a, b), None) for a, b in ((0, 0), (3, 12), (7, 1), (12, 5))]
    gnd = [(f"N={n}", *gnd_case(rng, n), None) for n in (4, 5, 6)]
    sc = [(f"N={n} levels {lv}", *scatter_case(rng, n, lv), None)
          for n, lv in ((4, [0, 0, 0, 0]), (6, [1, 0, 1, 2]), (5, [2, 1, 0, 0]), (6, [1, 1, 1, 1]))]
    tk = []
    for n, m, kr in ((3, 1, 0), (8, 4, 8), (5, 2, 2)):
        x = rng.standard_normal((2, n)).astype(np.float32)
        j = rng.integers(-n, n, (2, m)).astype(np.int64)
        v, i = topk_ref(x, 3, False, axis=1)
        w, wi = topk_ref(x, kr, True, axis=1)
        tk.append((f"N={n} M={m} K={kr}", [x, j, np.array([kr], np.int64)],
                   [v, i, np.take_along_axis(x, j % n, axis=1), x[:, -1], w, wi], None))
    x = rng.standard_normal((2, 2)).astype(np.float32)
    tk.append(("N=2 (K=3 beyond the axis)", [x, np.zeros((2, 1), np.int64), np.array([1], np.int64)], None, "out of range"))
    x = rng.standard_normal((2, 4)).astype(np.float32)
    tk.append(("N=4 K=5 (beyond the axis)", [x, np.zeros((2, 1), np.int64), np.array([5], np.int64)], None, "out of range"))
    cat = []
    for what, x in (("random", rng.standard_normal((CAT_ROWS, 5))), ("none kept", -np.ones((CAT_ROWS, 5))),
                    ("all kept", np.ones((CAT_ROWS, 5)))):
        x = x.astype(np.float32)
        cat.append((what, [x], cat30_ref(x), None))
    tka = []
    for n in (8, 3, 5, 2):
        x = rng.standard_normal((3, n)).astype(np.float32)
        tka.append((f"N={n}", [x], list(topk_ref(x, 3, True, axis=1)), None) if n >= 3 else
                   (f"N={n} (K=3 beyond the axis)", [x], None, "out of range"))
    return [("det", DETECT, det), ("gnd", GATHER_ND, gnd), ("scat", SCATTER, sc), ("tkc", TOPK_CONST, tk), ("tka", TOPK_AXIS, tka),
            ("cat30", CAT30, cat)]



if __name__ == "__main__":
    gir_cases.main(cases, 15)
