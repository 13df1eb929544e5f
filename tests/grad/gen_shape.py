"""Randomized gradient-check cases of the shape (data movement), index, vision
(DepthToSpace, SpaceToDepth, Resize) and signal (Einsum) families (collected by
gen_cases.py): negative axes, Slice steps of either sign with clamped bounds,
repeated and negative Gather indices, negative pads, uneven split sizes,
random permutations."""
from gen_cases import shape_str


def ints(v):
    return ", ".join(str(int(x)) for x in v)


def const(name, vals, dt="i64"):
    return f"  const %{name}: {dt}[{len(vals)}] = [{ints(vals)}]\n"


def graph(inputs, body, outputs, pre=""):
    ins = "".join(f"  input %{n}: {dt}{shape_str(s)}\n" for n, dt, s in inputs)
    outs = "".join(f"  output %{o}\n" for o in outputs)
    return f"{pre}graph g {{\n{ins}{body}{outs}}}\n"


def rdims(rng, lo=1, hi=5, rank=None):
    r = int(rng.integers(1, 5)) if rank is None else rank
    return [int(rng.integers(lo, hi)) for _ in range(r)]


def neg(rng, a, r):
    """Axis a, written negative about half the time."""
    return a - r if rng.random() < 0.5 else a


def shape_cases(rng):
    for k in range(2):  # Reshape with 0 and -1, Flatten, Squeeze, Unsqueeze
        d = rdims(rng, rank=3)
        yield f"reshape_{k}", graph([("x", "f32", d)], const("s", [0, -1]) + "  %y = Reshape(%x, %s)\n", ["y"])
        ax = neg(rng, int(rng.integers(0, 4)), 3)
        yield f"flatten_{k}", graph([("x", "f32", d)], f"  %y = Flatten(%x) {{axis={ax}}}\n", ["y"])
        d1 = list(d)
        d1.insert(int(rng.integers(0, 4)), 1)
        sq = [i for i, v in enumerate(d1) if v == 1][:1]
        yield f"squeeze_{k}", graph([("x", "f32", d1)], const("a", [neg(rng, sq[0], 4)]) + "  %y = Squeeze(%x, %a)\n", ["y"])
        yield f"unsqueeze_{k}", graph([("x", "f32", d)], const("a", [neg(rng, 1, 5), 4]) + "  %y = Unsqueeze(%x, %a)\n", ["y"])
    for k in range(3):  # Transpose with a random permutation (and the default)
        r = int(rng.integers(2, 5))
        d = rdims(rng, rank=r)
        perm = rng.permutation(r)
        attr = f" {{perm=[{','.join(map(str, perm))}]}}" if k < 2 else ""
        yield f"transpose_{k}", graph([("x", "f32", d)], f"  %y = Transpose(%x){attr}\n", ["y"])
    for k in range(2):  # Expand: size-1 dims broadcast, extra leading dims
        d = rdims(rng, rank=3)
        x = [1 if rng.random() < 0.5 else v for v in d]
        x = x[int(rng.integers(0, 2)):]
        tgt = [2] + d
        yield f"expand_{k}", graph([("x", "f32", x)], const("s", tgt) + "  %y = Expand(%x, %s)\n", ["y"])
    for k in range(3):  # Concat of 2-3 inputs with different extents along a (negative) axis
        r = int(rng.integers(1, 4))
        d = rdims(rng, rank=r)
        ax = int(rng.integers(0, r))
        ins = []
        for i in range(int(rng.integers(2, 4))):
            s = list(d)
            s[ax] = int(rng.integers(1, 4))
            ins.append((f"x{i}", "f32", s))
        args = ", ".join(f"%{n}" for n, _, _ in ins)
        yield f"concat_{k}", graph(ins, f"  %y = Concat({args}) {{axis={neg(rng, ax, r)}}}\n", ["y"])
    for k in range(3):  # Split: uneven sizes (input), equal; an unused output gets zeros
        r = int(rng.integers(1, 4))
        d = rdims(rng, rank=r)
        ax = int(rng.integers(0, r))
        sizes = [int(v) for v in rng.integers(0 if k == 2 else 1, 4, size=3)]
        if sum(sizes) == 0:
            sizes[0] = 1
        d[ax] = sum(sizes)
        body = const("sp", sizes) + f"  %a, %b, %c = Split(%x, %sp) {{axis={neg(rng, ax, r)}}}\n"
        yield f"split_{k}", graph([("x", "f32", d)], body, ["a", "c"] if k else ["a", "b", "c"])
    d = rdims(rng, rank=2)
    d[1] = 6
    yield "split_equal", graph([("x", "f32", d)], "  %a, %b = Split(%x) {axis=-1}\n  %y = Mul(%a, %b)\n", ["y"])
    for k in range(6):  # Slice: steps of either sign, clamped and negative bounds, axes in any order
        r = int(rng.integers(1, 4))
        d = rdims(rng, 2, 7, rank=r)
        axes = list(rng.permutation(r)[:int(rng.integers(1, r + 1))])
        st, en, sp = [], [], []
        for a in axes:
            n = d[a]
            step = int(rng.choice([1, 2, 3, -1, -2, -3]))
            s0 = int(rng.integers(-n - 2, n + 2))
            e0 = int(rng.integers(-n - 2, n + 2))
            if rng.random() < 0.2:
                e0 = 1000 if step > 0 else -1000
            st.append(s0), en.append(e0), sp.append(step)
        body = (const("st", st) + const("en", en) + const("ax", [neg(rng, a, r) for a in axes]) + const("sp", sp) +
                "  %y = Slice(%x, %st, %en, %ax, %sp)\n")
        yield f"slice_{k}", graph([("x", "f32", d)], body, ["y"])
    yield "slice_nosteps", graph([("x", "f32", [4, 5])], const("st", [1, -4]) + const("en", [3, 100]) +
                                 "  %y = Slice(%x, %st, %en)\n", ["y"])
    for k in range(4):  # Gather: repeated and negative indices, index ranks 0-2
        r = int(rng.integers(1, 4))
        d = rdims(rng, 2, 5, rank=r)
        ax = int(rng.integers(0, r))
        n = d[ax]
        q = k % 3
        ishape = [int(rng.integers(1, 4)) for _ in range(q)]
        cnt = 1
        for v in ishape:
            cnt *= v
        idx = [int(rng.integers(-n, n)) for _ in range(cnt)]
        if cnt > 1:
            idx[-1] = idx[0]  # a repeat: its rows must add up
        dt = "i32" if k == 3 else "i64"
        body = f"  const %i: {dt}{shape_str(ishape)} = [{ints(idx)}]\n  %y = Gather(%x, %i) {{axis={neg(rng, ax, r)}}}\n"
        yield f"gather_{k}", graph([("x", "f32", d)], body, ["y"])
    for k, mode in enumerate(["constant", "constant", "reflect", "edge", "reflect"]):
        r = int(rng.integers(1, 4))
        d = rdims(rng, 2, 5, rank=r)
        lo = -1 if mode == "constant" else 0
        pads = [int(rng.integers(lo, (min(d) if mode == "reflect" else 3))) for _ in range(2 * r)]
        if k == 1:
            body = (const("p", pads) + "  %y = Pad(%x, %p, %c)\n")
            yield f"pad_{mode}_{k}", graph([("x", "f32", d), ("c", "f32", [1])], body, ["y"])
        else:
            body = const("p", pads) + f"  %y = Pad(%x, %p) {{mode=\"{mode}\"}}\n"
            yield f"pad_{mode}_{k}", graph([("x", "f32", d)], body, ["y"])


def fibers(shape, ax):
    """Number of 1-D fibers of `shape` along axis ax, and its length."""
    cnt = 1
    for k, v in enumerate(shape):
        if k != ax:
            cnt *= v
    return cnt, shape[ax]


def index_cases(rng):
    for k in range(3):  # GatherElements: smaller indices, repeats, negative values
        r = int(rng.integers(1, 4))
        d = rdims(rng, 2, 5, rank=r)
        ax = int(rng.integers(0, r))
        ish = [int(rng.integers(1, v + 1)) for v in d]
        ish[ax] = int(rng.integers(1, 5))
        cnt = 1
        for v in ish:
            cnt *= v
        idx = [int(rng.integers(-d[ax], d[ax])) for _ in range(cnt)]
        body = f"  const %i: i64{shape_str(ish)} = [{ints(idx)}]\n  %y = GatherElements(%x, %i) {{axis={neg(rng, ax, r)}}}\n"
        yield f"gatherelements_{k}", graph([("x", "f32", d)], body, ["y"])
    for k, red in enumerate(["none", "add", "none", "add"]):  # ScatterElements: distinct targets for none
        r = int(rng.integers(1, 4))
        d = rdims(rng, 2, 5, rank=r)
        ax = int(rng.integers(0, r))
        ish = [int(rng.integers(1, v + 1)) for v in d]
        m = int(rng.integers(1, d[ax] + 1)) if red == "none" else int(rng.integers(1, 5))
        ish[ax] = m
        nf, _ = fibers(ish, ax)
        vals = {}  # per fiber (coords off the axis): its m indices
        arr = __import__("numpy").zeros(ish, dtype=int)
        for pos in __import__("numpy").ndindex(*[v for i, v in enumerate(ish) if i != ax]):
            v = rng.permutation(d[ax])[:m] if red == "none" else rng.integers(0, d[ax], size=m)
            v = [int(t) - d[ax] if rng.random() < 0.3 else int(t) for t in v]
            for j in range(m):
                c = list(pos)
                c.insert(ax, j)
                arr[tuple(c)] = v[j]
        body = (f"  const %i: i64{shape_str(ish)} = [{ints(arr.ravel())}]\n"
                f"  %y = ScatterElements(%x, %i, %u) {{axis={neg(rng, ax, r)}, reduction=\"{red}\"}}\n")
        yield f"scatterelements_{red}_{k}", graph([("x", "f32", d), ("u", "f32", ish)], body, ["y"])
    for k in range(3):  # GatherND (repeated tuples) and ScatterND (none: distinct tuples; add: repeats)
        r = int(rng.integers(2, 4))
        d = rdims(rng, 2, 4, rank=r)
        m = int(rng.integers(1, r + 1))
        nt = int(rng.integers(2, 5))
        import itertools
        allt = list(itertools.product(*[range(v) for v in d[:m]]))
        pick = [allt[int(t)] for t in rng.permutation(len(allt))[:nt]]
        nt = len(pick)
        tup = [list(t) for t in pick]
        tup[-1] = list(tup[0]) if k != 1 else tup[-1]
        flat = [v for t in tup for v in t]
        body = f"  const %i: i64[{nt},{m}] = [{ints(flat)}]\n  %y = GatherND(%x, %i)\n"
        yield f"gathernd_{k}", graph([("x", "f32", d)], body, ["y"])
        red = "none" if k == 1 else "add"
        ush = [nt] + d[m:]
        body = f"  const %i: i64[{nt},{m}] = [{ints(flat)}]\n  %y = ScatterND(%x, %i, %u) {{reduction=\"{red}\"}}\n"
        yield f"scatternd_{red}_{k}", graph([("x", "f32", d), ("u", "f32", ush)], body, ["y"])
    for k in range(3):  # Tile: repeats 1 and > 1, size-1 dims
        r = int(rng.integers(1, 4))
        d = rdims(rng, 1, 4, rank=r)
        rep = [int(rng.integers(1, 4)) for _ in range(r)]
        yield f"tile_{k}", graph([("x", "f32", d)], const("r", rep) + "  %y = Tile(%x, %r)\n", ["y"])
    for k in range(4):  # CumSum: every exclusive/reverse pair, negative axes
        r = int(rng.integers(1, 4))
        d = rdims(rng, 2, 5, rank=r)
        ax = neg(rng, int(rng.integers(0, r)), r)
        body = f"  const %a: i64[] = [{ax}]\n  %y = CumSum(%x, %a) {{exclusive={k % 2}, reverse={k // 2}}}\n"
        yield f"cumsum_{k}", graph([("x", "f32", d)], body, ["y"])
    for k in range(3):  # Trilu: upper/lower, k of either sign, a batch dim
        d = rdims(rng, 2, 5, rank=2 + k % 2)
        kk = int(rng.integers(-2, 3))
        body = (f"  const %k: i64[] = [{kk}]\n  %y = Trilu(%x, %k) {{upper={k % 2}}}\n" if k < 2 else
                "  %y = Trilu(%x) {upper=0}\n")
        yield f"trilu_{k}", graph([("x", "f32", d)], body, ["y"])
    for ba in (0, 1):  # ReverseSequence: both layouts, lengths 0..T
        b, t = int(rng.integers(2, 4)), int(rng.integers(2, 5))
        d = [b, t, 2] if ba == 0 else [t, b, 2]
        lens = [int(rng.integers(0, t + 1)) for _ in range(b)]
        body = const("l", lens) + f"  %y = ReverseSequence(%x, %l) {{batch_axis={ba}, time_axis={1 - ba}}}\n"
        yield f"reversesequence_{ba}", graph([("x", "f32", d)], body, ["y"])


def vision_cases(rng):
    for k, mode in enumerate(["DCR", "CRD"]):
        b = int(rng.integers(2, 4))
        d = [int(rng.integers(1, 3)), b * b * int(rng.integers(1, 3)), int(rng.integers(1, 4)), int(rng.integers(1, 4))]
        yield f"depthtospace_{mode.lower()}", graph([("x", "f32", d)],
                                                     f"  %y = DepthToSpace(%x) {{blocksize={b}, mode=\"{mode}\"}}\n", ["y"])
    b = int(rng.integers(2, 4))
    d = [int(rng.integers(1, 3)), int(rng.integers(1, 3)), b * int(rng.integers(1, 3)), b * int(rng.integers(1, 3))]
    yield "spacetodepth", graph([("x", "f32", d)], f"  %y = SpaceToDepth(%x) {{blocksize={b}}}\n", ["y"])
    # Resize (sizes: scales and roi are float constants, which gradcheck would make parameters)
    ctms = ["half_pixel", "asymmetric", "pytorch_half_pixel", "align_corners"]
    nms = ["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"]
    for k, mode in enumerate(["nearest", "nearest", "linear", "linear", "cubic", "cubic"]):
        d = [1, int(rng.integers(1, 3)), int(rng.integers(2, 5)), int(rng.integers(2, 5))]
        sz = [d[0], d[1], int(rng.integers(1, 8)), int(rng.integers(1, 8))]
        attrs = [f"mode=\"{mode}\"", f"coordinate_transformation_mode=\"{ctms[int(rng.integers(0, 4))]}\""]
        if mode == "nearest":
            attrs.append(f"nearest_mode=\"{nms[int(rng.integers(0, 4))]}\"")
        if mode == "cubic":
            attrs.append(f"exclude_outside={k % 2}, cubic_coeff_a=-0.5")
        body = const("sz", sz) + f"  %y = Resize(%x, _, _, %sz) {{{', '.join(attrs)}}}\n"
        yield f"resize_{mode}_{k}", graph([("x", "f32", d)], body, ["y"])


def einsum_cases(rng):
    size = {c: int(rng.integers(1, 5)) for c in "abcdijkl"}
    for k, eq in enumerate(["ij,jk->ik", "bij,bjk->bik", "ij,j", "ijk->ki", "ij->", "ij,jk->k", "ij,jk,kl->il",
                            "ai,bj->ijba"]):
        terms = eq.split("->")[0].split(",")
        ins = [(f"x{i}", "f32", [size[c] for c in t]) for i, t in enumerate(terms)]
        args = ", ".join(f"%{n}" for n, _, _ in ins)
        yield f"einsum_{k}", graph(ins, f"  %y = Einsum({args}) {{equation=\"{eq}\"}}\n", ["y"])


def cases(rng):
    yield from shape_cases(rng)
    yield from index_cases(rng)
    yield from vision_cases(rng)
    yield from einsum_cases(rng)
