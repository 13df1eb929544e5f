#!/usr/bin/python3
"""test_dyn_h2.py — runtime dims through the reductions, NonZero,
NonMaxSuppression and RoiAlign (what the torchvision detectors run on a
runtime count of boxes).

    /usr/bin/python3 tests/dynamic/test_dyn_h2.py --graphc BUILD/graphc --work DIR

Each model (text IR) has inputs with runtime dims (`N<=50`, from 1 to the
bound) or data-dependent ones (rows picked by NonZero of a mask, from 0 to
the bound). It is compiled ONCE with no flags, its folder built with
-Werror -pedantic (ASan/UBSan with GRAPHC_SANITIZE=1), and run at several
extents, the bound and 0 included, as the compiled NAME_main and in the
interpreter (graphc run), both against numpy (RoiAlign: torchvision's
roi_align). Every Reduce* op reduces and keeps runtime dims with and
without keepdims; a sum, mean, product or log-sum over 0 rows gives 0,
NaN, 1, -inf, a float max or min -inf or +inf (ONNX's rule from opset 18); a
NonMaxSuppression whose boxes and scores have different runtime
counts stops both with a one-line error. NonMaxSuppression's max_output_boxes_per_class is INT64_MAX as in
torchvision's batched_nms export. ReduceMin and ReduceProd of shape values (min(300, N), numel) are
derived symbols that a Reshape keeps. Slice with constant operands along
a runtime dim: x[:e] is min(N, e), other ranges data-dependent dims.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gir_cases  # noqa: E402



# ---- models ----------------------------------------------------------------------

RED = """graph dred {
  input %b: f32[N<=50,4]
  input %t: f32[2,T<=6,3]
  %m = ReduceMax(%b) {keepdims=0}
  %mn = ReduceMin(%b) {axes=[0], keepdims=1}
  %me = ReduceMean(%b) {axes=[1], keepdims=0}
  %p = ReduceProd(%b) {axes=[0], keepdims=0}
  %l1 = ReduceL1(%b) {axes=[-1], keepdims=1}
  %l2 = ReduceL2(%b) {axes=[0], keepdims=0}
  %ls = ReduceLogSum(%b) {axes=[0], keepdims=0}
  %lse = ReduceLogSumExp(%b) {keepdims=1}
  %sq = ReduceSumSquare(%b) {axes=[1], keepdims=1}
  const %ax0: i64[1] = [0]
  %s = ReduceSum(%b, %ax0) {keepdims=0}
  %rmax = ReduceMax(%b) {axes=[1], keepdims=1}
  %c = Sub(%b, %rmax)
  %tm = ReduceMean(%t) {axes=[1], keepdims=0}
  %tk = ReduceMax(%t) {axes=[0,2], keepdims=1}
  %ts = ReduceSumSquare(%t) {axes=[0,2], keepdims=0}
  output %m
  output %mn
  output %me
  output %p
  output %l1
  output %l2
  output %ls
  output %lse
  output %sq
  output %s
  output %c
  output %tm
  output %tk
  output %ts
}
"""


def red_ref(b, t):
    return [b.max(), b.min(axis=0, keepdims=True), b.mean(axis=1), b.prod(axis=0), np.abs(b).sum(axis=-1, keepdims=True),
            np.sqrt((b * b).sum(axis=0)), np.log(b.sum(axis=0)), np.log(np.exp(b).sum(keepdims=True)),
            (b * b).sum(axis=1, keepdims=True), b.sum(axis=0), b - b.max(axis=1, keepdims=True), t.mean(axis=1),
            t.max(axis=(0, 2), keepdims=True), (t * t).sum(axis=(0, 2))]


# the rows of b where keep is set: a data-dependent count, 0 included
PICK = """  const %ax: i64[1] = [0]
  %nz = NonZero(%keep)
  %i = Squeeze(%nz, %ax)
  %r = Gather(%b, %i) {axis=0}
"""

RED0 = """graph dred0 {
  input %b: f32[12,4]
  input %keep: bool[12]
""" + PICK + """  %s = ReduceSum(%r, %ax) {keepdims=0}
  %me = ReduceMean(%r) {axes=[0], keepdims=1}
  %p = ReduceProd(%r) {axes=[0], keepdims=0}
  %ls = ReduceLogSum(%r) {axes=[0], keepdims=0}
  %l1 = ReduceL1(%r) {axes=[1], keepdims=0}
  %e = Exp(%l1)
  output %s
  output %me
  output %p
  output %ls
  output %e
}
"""


def red0_ref(b, keep):
    r = b[keep]
    with np.errstate(divide="ignore", invalid="ignore"):
        return [r.sum(axis=0), r.mean(axis=0, keepdims=True), r.prod(axis=0), np.log(r.sum(axis=0)),
                np.exp(np.abs(r).sum(axis=1))]


MAX0 = """graph dmax0 {
  input %b: f32[12,4]
  input %keep: bool[12]
""" + PICK + """  %m = ReduceMax(%r) {keepdims=0}
  %n = ReduceMin(%r) {axes=[0], keepdims=0}
  output %m
  output %n
}
"""

SHAPEVAL = """graph dshv {
  input %x: f32[N<=500,4]
  const %k: i64[1] = [300]
  const %ax: i64[1] = [0]
  %sh = Shape(%x)
  %n = Gather(%sh, %ax)
  %cat = Concat(%k, %n) {axis=0}
  %kmin = ReduceMin(%cat) {keepdims=0}
  %numel = ReduceProd(%sh) {keepdims=1}
  %flat = Reshape(%x, %numel)
  %y = Relu(%flat)
  output %kmin
  output %y
}
"""

SLICE = """graph dsl {
  input %x: f32[N<=50,4]
  const %z: i64[1] = [0]
  const %one: i64[1] = [1]
  const %e5: i64[1] = [5]
  const %big: i64[1] = [100]
  const %two: i64[1] = [2]
  const %m3: i64[1] = [-3]
  const %m1: i64[1] = [-1]
  const %lo: i64[1] = [-9223372036854775807]
  %a = Slice(%x, %z, %e5, %z, %one)
  %b = Slice(%x, %z, %big)
  %c = Slice(%x, %two, %big, %z)
  %d = Slice(%x, %m1, %lo, %z, %m1)
  %e = Slice(%x, %m3, %big, %z, %one)
  %f = Slice(%x, %one, %m1, %one)
  %g = Slice(%x, %z, %big, %z, %two)
  %h = Relu(%a)
  output %h
  output %b
  output %c
  output %d
  output %e
  output %f
  output %g
}
"""


def slice_ref(x):
    return [np.maximum(x[:5], 0), x[:100], x[2:], x[::-1], x[-3:], x[:, 1:-1], x[::2]]


NONZERO = """graph dnz {
  input %x: f32[2,T<=6,3]
  %y = NonZero(%x)
  output %y
}
"""

NMS = """graph dnms {
  input %b: f32[1,N<=60,4]
  input %s: f32[1,1,N<=60]
  const %mo: i64[1] = [9223372036854775807]
  const %iou: f32[1] = [0.5]
  const %th: f32[1] = [0.1]
  %y = NonMaxSuppression(%b, %s, %mo, %iou, %th)
  output %y
}
"""

NMS_MC = """graph dnmsc {
  input %b: f32[1,N<=40,4]
  input %s: f32[1,3,N<=40]
  const %mo: i64[1] = [5]
  const %iou: f32[1] = [0.3]
  %y = NonMaxSuppression(%b, %s, %mo, %iou) {center_point_box=1}
  output %y
}
"""

NMS_TWO = """graph dnms2 {
  input %b: f32[1,N<=20,4]
  input %s: f32[1,1,M<=20]
  const %mo: i64[1] = [20]
  %y = NonMaxSuppression(%b, %s, %mo)
  output %y
}
"""

ROI = """graph droi {
  input %x: f32[2,3,10,12]
  input %b: f32[16,4]
  input %bi: i64[16]
  input %keep: bool[16]
""" + PICK + """  %j = Gather(%bi, %i) {axis=0}
  %y = RoiAlign(%x, %r, %j) {output_height=3, output_width=2, sampling_ratio=2, spatial_scale=0.5, coordinate_transformation_mode="output_half_pixel"}
  %z = RoiAlign(%x, %r, %j) {output_height=2, output_width=2, spatial_scale=0.5}
  output %y
  output %z
}
"""

ROI_RT = """graph droi2 {
  input %x: f32[B<=2,4,H<=9,W<=9]
  input %r: f32[R<=8,4]
  input %bi: i64[R<=8]
  %y = RoiAlign(%x, %r, %bi) {output_height=2, output_width=3, sampling_ratio=0, spatial_scale=1.0}
  output %y
}
"""


# ---- references --------------------------------------------------------------------

def nms_ref(boxes, scores, max_out, iou, sth=None, center=False):
    """ONNX NonMaxSuppression: per batch and class, by descending score."""
    def corners(p):
        if center:
            return p[1] - p[3] / 2, p[0] - p[2] / 2, p[1] + p[3] / 2, p[0] + p[2] / 2
        return min(p[0], p[2]), min(p[1], p[3]), max(p[0], p[2]), max(p[1], p[3])

    def over(a, b):
        ya0, xa0, ya1, xa1 = corners(a)
        yb0, xb0, yb1, xb1 = corners(b)
        ih, iw = min(ya1, yb1) - max(ya0, yb0), min(xa1, xb1) - max(xa0, xb0)
        if ih <= 0 or iw <= 0:
            return False
        inter = ih * iw
        aa, ab = (ya1 - ya0) * (xa1 - xa0), (yb1 - yb0) * (xb1 - xb0)
        return inter / (aa + ab - inter) > iou

    out = []
    bx = boxes.astype(np.float64)
    for b in range(scores.shape[0]):
        for c in range(scores.shape[1]):
            sc = scores[b, c].astype(np.float64)
            cand = [i for i in np.argsort(-sc, kind="stable") if sth is None or sc[i] > sth]
            sel = []
            for i in cand:
                if len(sel) >= max_out:
                    break
                if not any(over(bx[b, i], bx[b, j]) for j in sel):
                    sel.append(i)
                    out.append([b, c, i])
    return np.array(out, np.int64).reshape(-1, 3)


def random_boxes(rng, n, center=False):
    xy, wh = rng.random((n, 2)) * 10, rng.random((n, 2)) * 4 + 0.1
    b = np.concatenate([xy + wh / 2, wh], 1) if center else np.concatenate([xy, xy + wh], 1)
    return b[None].astype(np.float32)


def roi_ref(x, rois, bi, oh, ow, scale, sr, aligned):
    """torchvision's roi_align: ONNX RoiAlign (avg) with half_pixel = aligned."""
    import torch
    from torchvision.ops import roi_align
    r = np.concatenate([bi[:, None].astype(np.float32), rois], 1)
    return roi_align(torch.from_numpy(x), torch.from_numpy(r), (oh, ow), scale, sr, aligned).numpy()


# ---- cases ---------------------------------------------------------------------------

def cases(rng):
    """(name, text, [(what, inputs, refs or None for a run that must fail, error words)])"""
    red = []
    for n, t in ((1, 1), (7, 4), (50, 6)):
        b = (rng.random((n, 4)) + 0.5).astype(np.float32)
        tt = rng.standard_normal((2, t, 3)).astype(np.float32)
        red.append((f"N={n} T={t}", [b, tt], red_ref(b, tt), None))
    b12 = rng.standard_normal((12, 4)).astype(np.float32) + 1
    masks = [np.zeros(12, bool), np.ones(12, bool), np.arange(12) % 5 == 1]
    red0 = [(f"{int(k.sum())} rows", [b12, k], red0_ref(b12, k), None) for k in masks]
    max0 = [(f"{int(k.sum())} rows", [b12, k], [b12[k].max(), b12[k].min(axis=0)], None) for k in masks[1:]]
    max0.append(("0 rows", [b12, masks[0]], [np.float32(-np.inf), np.full(4, np.inf, np.float32)], None))
    shv = []
    for n in (1, 299, 300, 500):
        x = rng.standard_normal((n, 4)).astype(np.float32)
        shv.append((f"N={n}", [x], [np.array(min(300, n), np.int64), np.maximum(x.reshape(-1), 0)], None))
    sl = []
    for n in (1, 2, 3, 5, 6, 50):
        x = rng.standard_normal((n, 4)).astype(np.float32)
        sl.append((f"N={n}", [x], slice_ref(x), None))
    nz = []
    for t in (1, 4, 6):
        x = rng.standard_normal((2, t, 3)).astype(np.float32) * (rng.random((2, t, 3)) > 0.5)
        nz.append((f"T={t}", [x], [np.array(np.nonzero(x), np.int64)], None))
    nz.append(("all zero", [np.zeros((2, 5, 3), np.float32)], [np.zeros((3, 0), np.int64)], None))
    nms = []
    for n in (1, 17, 60):
        b, s = random_boxes(rng, n), rng.random((1, 1, n)).astype(np.float32)
        nms.append((f"N={n}", [b, s], [nms_ref(b, s, 2**63 - 1, 0.5, 0.1)], None))
    b = random_boxes(rng, 9)
    nms.append(("scores under the threshold", [b, np.full((1, 1, 9), 0.05, np.float32)], [np.zeros((0, 3), np.int64)], None))
    nmc = []
    for n in (2, 23, 40):
        b, s = random_boxes(rng, n, center=True), rng.random((1, 3, n)).astype(np.float32)
        nmc.append((f"N={n}", [b, s], [nms_ref(b, s, 5, 0.3, None, center=True)], None))
    b, s = random_boxes(rng, 6), rng.random((1, 1, 6)).astype(np.float32)
    nm2 = [("N=M=6", [b, s], [nms_ref(b, s, 20, 0.0)], None),
           ("N=6, M=5", [b, s[:, :, :5]], None, "disagree")]
    x = rng.standard_normal((2, 3, 10, 12)).astype(np.float32)
    xy = rng.random((16, 2)) * 18
    rois = np.concatenate([xy, xy + rng.random((16, 2)) * 10 + 0.5], 1).astype(np.float32)
    rois[3] = [4, 4, 4.5, 4.2]  # smaller than a pixel at the scale
    bi = rng.integers(0, 2, 16).astype(np.int64)
    roi = []
    for k in (np.zeros(16, bool), np.arange(16) % 3 == 0, np.ones(16, bool)):
        r, j = rois[k], bi[k]
        roi.append((f"{int(k.sum())} rois", [x, rois, bi, k],
                    [roi_ref(x, r, j, 3, 2, 0.5, 2, False), roi_ref(x, r, j, 2, 2, 0.5, 0, True)], None))
    roi2 = []
    for bb, h, w, r in ((1, 1, 1, 1), (2, 7, 5, 3), (2, 9, 9, 8)):
        xx = rng.standard_normal((bb, 4, h, w)).astype(np.float32)
        xy = rng.random((r, 2)) * np.array([w, h])
        rr = np.concatenate([xy, xy + rng.random((r, 2)) * 4], 1).astype(np.float32)
        j = rng.integers(0, bb, r).astype(np.int64)
        roi2.append((f"B={bb} H={h} W={w} R={r}", [xx, rr, j], [roi_ref(xx, rr, j, 2, 3, 1.0, 0, True)], None))
    return [("dred", RED, red), ("dred0", RED0, red0), ("dmax0", MAX0, max0), ("dshv", SHAPEVAL, shv), ("dsl", SLICE, sl),
            ("dnz", NONZERO, nz), ("dnms", NMS, nms), ("dnmsc", NMS_MC, nmc), ("dnms2", NMS_TWO, nm2),
            ("droi", ROI, roi), ("droi2", ROI_RT, roi2)]



if __name__ == "__main__":
    gir_cases.main(cases, 15, rtol=1e-4)
