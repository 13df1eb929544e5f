#!/usr/bin/python3
"""test_dynfill.py — ops whose output extents come from input values that
nothing in the model bounds (data-dependent dims bounded by --max-dim).

    /usr/bin/python3 tests/dynamic/test_dynfill.py --graphc BUILD/graphc --work DIR

Each model (text IR) has its shape operand as a runtime input: HannWindow's
size, Range's bounds, ConstantOfShape's shape, Tile's repeats, Expand's
shape, Pad's pads, OneHot's depth, Resize's scales and sizes. It is compiled
ONCE with --max-dim (its folder built with -Werror -pedantic) and run with
several operand values, as the compiled NAME_main and in the interpreter
(graphc run), both against numpy (or, for Resize, the interpreter, which the
ONNX node suite checks). A value giving an extent beyond --max-dim (the dims of
one output that nothing bounds multiply to at most --max-dim; Tile's
repeats do), or an invalid one, is a one-line error from NAME_main. Without --max-dim the
compile is a one-line error suggesting it. A Resize whose
tf_crop_and_resize roi alone is a runtime input has a static shape and
computes its taps at run time.

With GRAPHC_SANITIZE=1 the generated programs are built with ASan and UBSan.
With --target cuda the models compile for the CUDA backend (the host reads
the operands back in mid-run) and run as NAME_main_emu, the generated CUDA
on graphc's CPU emulation, against the same references.
"""
import argparse
import os
import shutil
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_dynamic import FAILS, build_runner, check, one_line_error, run  # noqa: E402

MAX_DIM = 40


def hann(n):
    i = np.arange(n)
    return (0.5 - 0.5 * np.cos(2 * np.pi * i / n)).astype(np.float32) if n > 0 else np.zeros(0, np.float32)


def onehot(ind, depth, vals):
    y = np.full(ind.shape + (depth,), vals[0], np.float32)
    for e, k in np.ndenumerate(ind):
        k = int(k) + depth if k < 0 else int(k)
        if 0 <= k < depth:
            y[e + (k,)] = vals[1]
    return np.moveaxis(y, -1, 1)


X34 = np.arange(12, dtype=np.float32).reshape(3, 4) - 5
X1 = np.arange(1, 4, dtype=np.float32).reshape(3, 1)
XR = np.arange(12, dtype=np.float32).reshape(1, 1, 3, 4) / 3
IND = np.array([[0, 2, -1], [5, 1, -4]], np.int64)

# name: (text IR, [(inputs, numpy reference or None: the interpreter's)], bad inputs or None: the
# model needs no --max-dim)
CASES = {
    "win": ("""graph win {
  input %n: i64[]
  %y = HannWindow(%n)
  output %y
}
""", [([np.array(k, np.int64)], hann(k)) for k in (0, 1, 5, MAX_DIM)], [np.array(MAX_DIM + 1, np.int64)]),
    "rng": ("""graph rng {
  input %a: f32[]
  input %b: f32[]
  input %d: f32[]
  %y = Range(%a, %b, %d)
  output %y
}
""", [([np.float32(a), np.float32(b), np.float32(d)], np.arange(a, b, d, dtype=np.float32))
      for a, b, d in ((0, 5, 1), (1, 2, 0.25), (3, -4, -0.5), (2, 2, 1), (0, 40, 1))],
        [np.float32(0), np.float32(41), np.float32(1)]),
    "cos": ("""graph cos {
  input %s: i64[2]
  %y = ConstantOfShape(%s) {value=f32[1] [2.5]}
  output %y
}
""", [([np.array(s, np.int64)], np.full(s, 2.5, np.float32)) for s in ((2, 3), (0, 4), (40, 1))],
        [np.array([-1, 2], np.int64)]),
    "tile": ("""graph tile {
  input %x: f32[3,4]
  input %r: i64[2]
  %y = Tile(%x, %r)
  output %y
}
""", [([X34, np.array(r, np.int64)], np.tile(X34, r)) for r in ((1, 1), (2, 3), (0, 2), (13, 3))],
        [X34, np.array([14, 3], np.int64)]),
    "expand": ("""graph expand {
  input %x: f32[3,1]
  input %s: i64[3]
  %y = Expand(%x, %s)
  output %y
}
""", [([X1, np.array(s, np.int64)], np.broadcast_to(X1, np.broadcast_shapes((3, 1), s)).astype(np.float32))
      for s in ((2, 1, 6), (1, 3, 1), (1, 1, 0), (1, 3, 40))],
        [X1, np.array([1, 2, 1], np.int64)]),
    "pad": ("""graph pad {
  input %x: f32[3,4]
  input %p: i64[4]
  %y = Pad(%x, %p) {mode="reflect"}
  %z = Pad(%x, %p) {mode="edge"}
  output %y
  output %z
}
""", [([X34, np.array(p, np.int64)], None) for p in ((0, 0, 0, 0), (1, 0, 1, 0), (0, -1, 2, -2), (1, 1, 1, 2))],
        [X34, np.array([0, 0, -4, 0], np.int64)]),
    "onehot": ("""graph onehot {
  input %i: i64[2,3]
  input %d: i64[]
  input %v: f32[2]
  %y = OneHot(%i, %d, %v) {axis=1}
  output %y
}
""", [([IND, np.array(d, np.int64), np.array([-1, 3], np.float32)], onehot(IND, d, [-1, 3])) for d in (1, 4, 6, 40)],
        [IND, np.array(41, np.int64), np.array([0, 1], np.float32)]),
    "rsc": ("""graph rsc {
  input %x: f32[1,1,3,4]
  input %s: f32[4]
  %y = Resize(%x, _, %s) {mode="linear"}
  %z = Resize(%x, _, %s) {mode="cubic", coordinate_transformation_mode="align_corners"}
  %w = Resize(%x, _, %s) {mode="nearest", nearest_mode="ceil"}
  output %y
  output %z
  output %w
}
""", [([XR, np.array(s, np.float32)], None) for s in ((1, 1, 1, 1), (1, 1, 2, 1.5), (1, 1, 0.5, 0.7), (1, 1, 3, 0.75))],
        [XR, np.array([1, 1, 14, 1], np.float32)]),
    "rsz": ("""graph rsz {
  input %x: f32[1,1,3,4]
  input %s: i64[4]
  %y = Resize(%x, _, _, %s) {mode="linear", coordinate_transformation_mode="pytorch_half_pixel"}
  output %y
}
""", [([XR, np.array(s, np.int64)], None) for s in ((1, 1, 3, 4), (1, 1, 1, 7), (1, 1, 6, 2))],
        [XR, np.array([1, 1, 41, 4], np.int64)]),
    # a tf_crop_and_resize roi read at run time with constant sizes: a static
    # shape (no --max-dim needed), tap tables computed at run time
    "roi": ("""graph roi {
  input %x: f32[1,1,3,4]
  input %roi: f32[8]
  const %sz: i64[4] = [1, 1, 3, 7]
  %y = Resize(%x, %roi, _, %sz) {mode="linear", coordinate_transformation_mode="tf_crop_and_resize", extrapolation_value=-1}
  %z = Resize(%x, %roi, _, %sz) {mode="cubic", coordinate_transformation_mode="tf_crop_and_resize"}
  output %y
  output %z
}
""", [([XR, np.array(r, np.float32)], None) for r in ((0, 0, 0, 0, 1, 1, 1, 1), (0, 0, 0.2, -0.3, 1, 1, 0.7, 1.4))], None),
}


# The cases the CUDA backend refuses: a runtime roi with static extents would need the host to read
# it back inside the captured graph of a static model.
CUDA_REFUSED = {"roi": "does not support a Resize roi read at run time yet"}


def save_inputs(work, tag, arrs):
    paths = []
    for k, a in enumerate(arrs):
        p = os.path.join(work, f"{tag}_in{k}.npy")
        np.save(p, np.asarray(a))
        paths.append(p)
    return paths


def outputs(d):
    k, out = 0, []
    while os.path.exists(os.path.join(d, f"output_{k}.npy")):
        out.append(np.load(os.path.join(d, f"output_{k}.npy")))
        k += 1
    return out


def same(a, b):
    return a.shape == b.shape and a.dtype == b.dtype and np.allclose(a, b, rtol=1e-5, atol=1e-5)


def run_case(graphc, work, name, text, runs, bad, target):
    gir = os.path.join(work, f"{name}.gir")
    with open(gir, "w") as f:
        f.write(text)
    tg = f"--target={target}"
    if bad is not None:
        q = run([graphc, "compile", gir, "-o", os.path.join(work, f"{name}_nomax"), tg])
        check(one_line_error(q, "is known only at run time", "--max-dim=N"),
              f"{name}: without --max-dim, a one-line error suggesting it ({q.stderr.strip()})")
    out = os.path.join(work, f"{name}_out")
    q = run([graphc, "compile", gir, "-o", out, "--emit-main", "--name", name, f"--max-dim={MAX_DIM}", tg])
    if target == "cuda" and name in CUDA_REFUSED:  # what the CUDA backend does not do yet: one line, no folder
        check(one_line_error(q, CUDA_REFUSED[name]) and not os.path.exists(out),
              f"{name}: --target=cuda refuses it with one line ({q.stderr.strip()})")
        return
    if not check(q.returncode == 0, f"{name}: compiles with --max-dim={MAX_DIM} {tg} {q.stderr.strip()}"):
        return
    exe, log = build_runner(out, name, target)
    if not check(exe is not None, f"{name}: the folder builds with -Werror -pedantic"):
        print(log)
        return
    for r, (ins, ref) in enumerate(runs):
        paths = save_inputs(work, f"{name}{r}", ins)
        di, dc = os.path.join(work, f"{name}{r}_i"), os.path.join(work, f"{name}{r}_c")
        shutil.rmtree(di, ignore_errors=True)
        shutil.rmtree(dc, ignore_errors=True)
        p = run([graphc, "run", gir, di] + paths + [f"--max-dim={MAX_DIM}"])
        q = run([exe, dc] + paths)
        what = f"{name} with {', '.join(str(np.asarray(a).tolist()) for a in ins[-2:] if np.asarray(a).size <= 8)}"
        if not check(p.returncode == 0 and q.returncode == 0, f"{what}: graph run and {name}_main succeed"):
            print(p.stderr + q.stderr)
            continue
        gi, gc = outputs(di), outputs(dc)
        refs = [ref] if ref is not None else gi
        check(len(gc) == len(refs) and all(same(a, b) for a, b in zip(gc, refs)),
              f"{what}: compiled outputs {[a.shape for a in gc]} match {'numpy' if ref is not None else 'the interpreter'}")
        if ref is not None:
            check(len(gi) == 1 and same(gi[0], ref), f"{what}: interpreter output {[a.shape for a in gi]} matches numpy")
    if bad is None:
        return
    paths = save_inputs(work, f"{name}_bad", bad)
    q = run([exe, os.path.join(work, f"{name}_bad_c")] + paths)
    check(q.returncode != 0 and len(q.stderr.strip().splitlines()) == 1,
          f"{name}: an extent beyond --max-dim or invalid is a one-line error from {name}_main ({q.stderr.strip()})")
    # the interpreter too: its buffers of graph outputs are allocated at the bounds
    p = run([graphc, "run", gir, os.path.join(work, f"{name}_bad_i")] + paths + [f"--max-dim={MAX_DIM}"])
    check(p.returncode == 1 and len(p.stderr.strip().splitlines()) == 1 and "node '" in p.stderr,
          f"{name}: the same run is a one-line error naming the node from graphc run ({p.stderr.strip()})")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--graphc", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--target", choices=["c", "cuda"], default="c",
                    help="the backend (cuda: the generated CUDA on graphc's CPU emulation)")
    a = ap.parse_args()
    graphc = os.path.abspath(a.graphc)
    work = os.path.abspath(a.work)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    for name, (text, runs, bad) in CASES.items():
        run_case(graphc, work, name, text, runs, bad, a.target)
    print(f"{len(FAILS)} failed" if FAILS else "all passed")
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
