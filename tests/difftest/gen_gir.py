#!/usr/bin/python3
"""gen_gir.py — random valid graphs in graphc's text IR, one per seed.

gen_component(seed) builds one small graph (a *component*): a few inputs of
random shapes and dtypes, then 3 to 14 nodes drawn from a weighted table of
ops covering elementwise, broadcasting, reductions, shape and data movement,
normalizations, pooling, convolutions and matrix products, and its leaves (plus
now and then an interior value, so a value can be both read by nodes and
returned) as outputs. Operands are mostly the newest value (chains that
fuse-elementwise and fuse-epilogue merge) and sometimes an older one
(residual branches, values read by several nodes). Every name carries the
prefix `s<seed>_`, so components can be packed side by side in one graph
(pack()) and a component reads the same alone and packed.

Numerical safety. Each value carries a conservative interval [lo, hi] of
what it may hold. An op with a domain (Log, Sqrt, Div's divisor, Pow's base,
Acos, ...) first reshapes its operand into that domain (Add(Abs(x), c),
Mul(Tanh(x), 0.9), a scale, ...), and values whose bound grows past a limit
are scaled back, so the reference interpreter (double precision, rounded
per op) and the generated C (in the value's dtype) differ only by rounding.
Ops that are not continuous (Floor, Round, Sign, comparisons, ArgMax,
Hardmax, Mod, casts to integers, ...) only read *exact* values: inputs,
constants, integers and what data movement or exactly rounded ops (Neg, Abs,
Relu, Max, Min, MaxPool, ...) make of them, which both sides compute bit for
bit.

The generator draws from random.Random(seed) only, so a seed always gives
byte-identical text. The text carries `#! range` lines (input ranges) and a
`#! tol` line, so a component saved as a .gir file is also a test that
tests/run_op_tests.py runs as it is.
"""
import math
import random

FLOATS = ("f32", "f64")
INTS = ("i32", "i64")
LIMIT = 30.0  # values whose bound passes this are scaled back
ONNX_CODE = {"f32": 1, "i32": 6, "i64": 7, "bool": 9, "f64": 11}
TOL = {"f32": (2e-4, 2e-3), "f64": (1e-9, 1e-8)}


class Val:
    __slots__ = ("name", "dt", "shape", "lo", "hi", "exact", "uses")

    def __init__(self, name, dt, shape, lo, hi, exact):
        self.name, self.dt, self.shape = name, dt, tuple(shape)
        self.lo, self.hi, self.exact, self.uses = float(lo), float(hi), exact, 0

    @property
    def bound(self):
        return max(abs(self.lo), abs(self.hi))


def numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def fmt(x):
    s = f"{x:.4g}"
    return s if any(c in s for c in ".en") else s + ".0"


def bcast(a, b):
    r = max(len(a), len(b))
    a, b = (1,) * (r - len(a)) + tuple(a), (1,) * (r - len(b)) + tuple(b)
    out = []
    for x, y in zip(a, b):
        if x != y and x != 1 and y != 1:
            return None
        out.append(max(x, y))
    return tuple(out)


def interval_mul(a, b):
    p = [a[0] * b[0], a[0] * b[1], a[1] * b[0], a[1] * b[1]]
    return min(p), max(p)


class Component:
    """One random graph; gen() fills inputs, consts, nodes and outputs (text lines)."""

    def __init__(self, seed):
        self.seed = seed
        self.r = random.Random(seed)
        self.p = f"s{seed}_"
        self.inputs, self.consts, self.nodes, self.outputs = [], [], [], []
        self.ranges = []
        self.vals = []
        self.n = 0
        self.ops = set()
        self.dt = None

    # ---- names, inputs, constants, nodes --------------------------------------------------------

    def name(self, kind="v"):
        self.n += 1
        return f"{self.p}{kind}{self.n}"

    def new_input(self, dt, shape, lo=None, hi=None):
        r = self.r
        if lo is None:
            if dt in INTS:
                lo, hi = -r.choice((3, 5, 9)), r.choice((3, 5, 9))
            elif dt == "bool":
                lo, hi = 0, 1
            else:
                lo, hi = -r.choice((1.0, 2.0, 3.0)), r.choice((1.0, 2.0, 3.0))
        v = Val(self.name("x"), dt, shape, lo, hi, True)
        self.inputs.append(f"  input %{v.name}: {dt}[{','.join(map(str, shape))}]")
        if dt != "bool":
            self.ranges.append(f"#! range %{v.name} {lo if dt in INTS else fmt(lo)} {hi if dt in INTS else fmt(hi)}")
        self.vals.append(v)
        return v

    def const(self, dt, shape, data=None, lo=-1.0, hi=1.0, track=False):
        """A constant: explicit data (a list) or random(seed, lo, hi)."""
        nm = self.name("c")
        dims = ",".join(map(str, shape))
        if data is None:
            if dt in INTS:
                data = [self.r.randint(int(lo), int(hi)) for _ in range(numel(shape))]
            else:
                self.consts.append(f"  const %{nm}: {dt}[{dims}] = random(seed={self.r.randint(1, 10**6)}, "
                                   f"lo={fmt(lo)}, hi={fmt(hi)})")
                data = None
        if data is not None:
            body = ", ".join(str(int(x)) if dt in INTS or dt == "bool" else fmt(x) for x in data)
            self.consts.append(f"  const %{nm}: {dt}[{dims}] = [{body}]")
            if data and dt not in ("bool",):
                lo, hi = min(data), max(data)
        v = Val(nm, dt, shape, lo, hi, True)
        if track:
            self.vals.append(v)
        return v

    def scalar(self, dt, x):
        return self.const(dt, (), [x])

    def ints(self, xs, dt="i64"):
        return self.const(dt, (len(xs),), list(xs))

    def node(self, op, args, attrs=None, nout=1):
        self.ops.add(op)
        outs = [self.name() for _ in range(nout)]
        ins = ", ".join("_" if a is None else f"%{a.name}" for a in args)
        for a in args:
            if a is not None:
                a.uses += 1
        at = ""
        if attrs:
            at = " {" + ", ".join(f"{k}={self.attr(v)}" for k, v in attrs.items()) + "}"
        self.nodes.append(f"  {', '.join('%' + o for o in outs)} = {op}({ins}){at}")
        return outs

    @staticmethod
    def attr(v):
        if isinstance(v, str) and v[:3] in ("f32", "f64", "i32", "i64") and "[" in v:
            return v  # a tensor literal (ConstantOfShape, Constant)
        if isinstance(v, str):
            return f'"{v}"'
        if isinstance(v, float):
            return fmt(v)
        if isinstance(v, (list, tuple)):
            return "[" + ",".join(str(x) for x in v) + "]"
        return str(v)

    def emit(self, op, args, dt, shape, lo, hi, exact=False, attrs=None):
        (o,) = self.node(op, args, attrs)
        if dt in FLOATS and not (math.isfinite(lo) and math.isfinite(hi)):
            lo, hi = -1e9, 1e9
        v = Val(o, dt, shape, lo, hi, exact)
        self.vals.append(v)
        return v

    # ---- operand choice and domain helpers ------------------------------------------------------

    def pick(self, pred=lambda v: True, recent=0.6):
        """The newest value satisfying pred with probability `recent`, else a random one."""
        c = [v for v in self.vals if pred(v)]
        if not c:
            return None
        if self.r.random() < recent:
            return c[-1]
        return self.r.choice(c)

    def shrink(self, v, m):
        """v scaled (or squashed; clipped for integers) so that its bound is at most m."""
        if v.bound <= m:
            return v
        if v.dt in INTS:
            m = int(m)
            return self.emit("Clip", [v, self.scalar(v.dt, -m), self.scalar(v.dt, m)], v.dt, v.shape,
                             max(v.lo, -m), min(v.hi, m), True)
        if self.r.random() < 0.5 or v.bound > 1e6:
            t = self.emit("Tanh", [v], v.dt, v.shape, math.tanh(v.lo), math.tanh(v.hi))
            k = m
        else:
            t, k = v, m / v.bound
        s = self.scalar(v.dt, k)
        return self.emit("Mul", [t, s], v.dt, v.shape, *sorted((t.lo * k, t.hi * k)))

    def positive(self, v, lo=0.5, hi=LIMIT):
        """v mapped into [lo, hi] (roughly) by a continuous function."""
        if v.lo >= lo and v.hi <= hi:
            return v
        v = self.shrink(v, min(hi / 2, 5.0))
        c = self.r.choice(("abs", "sq", "sig", "softplus"))
        if c == "abs":
            a = self.emit("Abs", [v], v.dt, v.shape, 0 if v.lo <= 0 <= v.hi else min(abs(v.lo), abs(v.hi)), v.bound)
        elif c == "sq":
            a = self.emit("Mul", [v, v], v.dt, v.shape, 0, v.bound ** 2)
        elif c == "sig":
            a = self.emit("Sigmoid", [v], v.dt, v.shape, 0, 1)
        else:
            a = self.emit("Softplus", [v], v.dt, v.shape, 0, math.log1p(math.exp(v.hi)))
        s = self.scalar(v.dt, lo)
        return self.emit("Add", [a, s], v.dt, v.shape, a.lo + lo, a.hi + lo)

    def fresh_like(self, dt, shape):
        """A new operand of the given shape: a graph input or a random constant."""
        if self.r.random() < 0.6:
            return self.new_input(dt, shape)
        if dt in INTS:
            return self.const(dt, shape, None, -4, 4, track=False)
        return self.const(dt, shape, None, -1.0, 1.0)

    def bshape(self, shape):
        """A shape that broadcasts against `shape` (dims set to 1, leading dims dropped)."""
        r = self.r
        s = list(shape)
        if s and r.random() < 0.4:
            s = s[r.randint(0, len(s)):]
        s = [1 if r.random() < 0.35 else d for d in s]
        if r.random() < 0.15:
            s = [1] + s
        return tuple(s)

    def second(self, a):
        """A second operand for a broadcasting binary op with a."""
        c = [v for v in self.vals if v is not a and v.dt == a.dt and bcast(v.shape, a.shape) is not None
             and len(bcast(v.shape, a.shape)) <= 5 and numel(bcast(v.shape, a.shape)) <= 4096]
        if c and self.r.random() < 0.5:
            return self.r.choice(c)
        if self.r.random() < 0.15:
            return a
        return self.fresh_like(a.dt, self.bshape(a.shape))

    def rand_shape(self, rank=None, lo=1, hi=6):
        r = self.r
        rank = r.choice((1, 2, 2, 3, 3, 4)) if rank is None else rank
        return tuple(r.randint(lo, hi) for _ in range(rank))

    # ---- op families ----------------------------------------------------------------------------

    UNARY = {
        # name: (domain, interval fn, exact-preserving)
        "Abs": (None, lambda l, h: (0 if l <= 0 <= h else min(abs(l), abs(h)), max(abs(l), abs(h))), True),
        "Neg": (None, lambda l, h: (-h, -l), True),
        "Relu": (None, lambda l, h: (max(l, 0), max(h, 0)), True),
        "Exp": ("small", lambda l, h: (math.exp(l), math.exp(h)), False),
        "Log": ("pos", lambda l, h: (math.log(l), math.log(h)), False),
        "Sqrt": ("pos", lambda l, h: (math.sqrt(l), math.sqrt(h)), False),
        "Reciprocal": ("pos", lambda l, h: (1 / h, 1 / l), False),
        "Sigmoid": (None, lambda l, h: (0, 1), False),
        "Tanh": (None, lambda l, h: (math.tanh(l), math.tanh(h)), False),
        "Erf": (None, lambda l, h: (-1, 1), False),
        "Sin": (None, lambda l, h: (-1, 1), False),
        "Cos": (None, lambda l, h: (-1, 1), False),
        "Softplus": ("small", lambda l, h: (0, math.log1p(math.exp(h))), False),
        "Softsign": (None, lambda l, h: (-1, 1), False),
        "Atan": (None, lambda l, h: (-1.6, 1.6), False),
        "Asinh": (None, lambda l, h: (math.asinh(l), math.asinh(h)), False),
        "Sinh": ("small", lambda l, h: (math.sinh(l), math.sinh(h)), False),
        "Cosh": ("small", lambda l, h: (1, math.cosh(max(abs(l), abs(h)))), False),
        "Tan": ("unit", lambda l, h: (math.tan(l), math.tan(h)), False),
        "Asin": ("unit", lambda l, h: (-1.6, 1.6), False),
        "Acos": ("unit", lambda l, h: (0, 3.2), False),
        "Atanh": ("unit", lambda l, h: (math.atanh(l), math.atanh(h)), False),
        "Acosh": ("ge1", lambda l, h: (0, math.acosh(h)), False),
        "HardSwish": (None, lambda l, h: (-0.5, max(h, 0)), False),
        "Identity": (None, lambda l, h: (l, h), True),
        "Selu": (None, lambda l, h: (-1.8, max(h * 1.06, 0)), False),
        "Elu": (None, lambda l, h: (-1, max(h, 0)), False),
        "Celu": (None, lambda l, h: (-1, max(h, 0)), False),
        "LeakyRelu": (None, lambda l, h: (min(l, 0) * 0.5, max(h, 0)), False),
        "HardSigmoid": (None, lambda l, h: (0, 1), False),
    }
    DISCONT = ("Floor", "Ceil", "Round", "Sign")

    def op_unary(self):
        r = self.r
        v = self.pick(lambda v: v.dt in FLOATS)
        if v is None:
            return False
        if v.exact and r.random() < 0.25:
            op = r.choice(self.DISCONT)
            lo, hi = (-1, 1) if op == "Sign" else (math.floor(v.lo), math.ceil(v.hi))
            self.emit(op, [v], v.dt, v.shape, lo, hi, exact=True)
            return True
        op = r.choice(sorted(self.UNARY))
        dom, f, ex = self.UNARY[op]
        if dom == "pos":
            v = self.positive(v)
        elif dom == "small":
            v = self.shrink(v, 3.0)
        elif dom == "unit":
            v = self.shrink(v, 0.9)
        elif dom == "ge1":
            v = self.positive(v, 1.2)
        attrs = None
        if op == "LeakyRelu":
            attrs = {"alpha": r.choice((0.01, 0.1, 0.5))}
        elif op in ("Elu", "Celu"):
            attrs = {"alpha": r.choice((0.5, 1.0, 1.5))}
        elif op == "HardSigmoid" and r.random() < 0.5:
            attrs = {"alpha": 0.25, "beta": 0.4}
        try:
            lo, hi = f(v.lo, v.hi)
        except (ValueError, OverflowError, ZeroDivisionError):
            lo, hi = -1e9, 1e9
        if op in ("Elu", "Celu") and attrs:
            lo = -attrs["alpha"]
        self.emit(op, [v], v.dt, v.shape, lo, hi, exact=ex and v.exact, attrs=attrs)
        return True

    def op_clip(self):
        v = self.pick(lambda v: v.dt in FLOATS + INTS)
        if v is None:
            return False
        r = self.r
        isint = v.dt in INTS
        lo = r.randint(-3, 0) if isint else round(r.uniform(-1.5, 0), 2)
        hi = r.randint(1, 4) if isint else round(r.uniform(0.1, 1.5), 2)
        form = r.choice(("both", "min", "max"))
        a = self.scalar(v.dt, lo) if form != "max" else None
        b = self.scalar(v.dt, hi) if form != "min" else None
        args = [v, a] + ([b] if b is not None else [])
        nlo = max(v.lo, lo) if a is not None else v.lo
        nhi = min(v.hi, hi) if b is not None else v.hi
        self.emit("Clip", args, v.dt, v.shape, min(nlo, nhi), max(nlo, nhi), exact=v.exact)
        return True

    def op_binary(self):
        r = self.r
        a = self.pick(lambda v: v.dt in FLOATS + INTS)
        if a is None:
            return False
        isint = a.dt in INTS
        ops = ["Add", "Sub", "Mul", "Max", "Min", "Div"] + ([] if isint else ["Pow", "PRelu"])
        op = r.choice(ops)
        b = self.second(a)
        if r.random() < 0.3 and op not in ("Pow", "PRelu"):
            a, b = b, a
        if op == "PRelu":  # slope broadcasts unidirectionally to X
            if bcast(b.shape, a.shape) != a.shape:
                b = self.fresh_like(a.dt, self.bshape(a.shape))
                if bcast(b.shape, a.shape) != a.shape:
                    b = self.fresh_like(a.dt, (1,) if a.shape else ())
        shape = bcast(a.shape, b.shape)
        if op in ("Mul", "Pow") or isint:
            a, b = self.shrink(a, 8 if isint else 5.0), self.shrink(b, 8 if isint else 5.0)
        if op == "Div":
            if isint:
                if b.lo < 1:
                    s = self.scalar(b.dt, 1)
                    ab = self.emit("Abs", [b], b.dt, b.shape, 0, b.bound, True)
                    b = self.emit("Add", [ab, s], b.dt, b.shape, 1, b.bound + 1, True)
            else:
                b = self.positive(b)
            lo, hi = interval_mul((a.lo, a.hi), (1 / b.hi, 1 / b.lo))
            if isint:
                lo, hi = -a.bound, a.bound
        elif op == "Pow":
            a = self.positive(a, 0.5, 4.0)
            b = self.shrink(b, 2.0)
            lo, hi = 0, max(a.hi, 1 / a.lo) ** b.bound
        elif op == "PRelu":
            lo, hi = min(a.lo, 0) * b.bound, max(a.hi, 0)
        elif op == "Add":
            lo, hi = a.lo + b.lo, a.hi + b.hi
        elif op == "Sub":
            lo, hi = a.lo - b.hi, a.hi - b.lo
        elif op == "Mul":
            lo, hi = interval_mul((a.lo, a.hi), (b.lo, b.hi))
        else:
            lo, hi = min(a.lo, b.lo), max(a.hi, b.hi)
        exact = (isint and op != "Div") or (op in ("Max", "Min") and a.exact and b.exact) or (isint and a.exact)
        if isint and op == "Div":
            exact = True
        self.emit(op, [a, b], a.dt, shape, lo, hi, exact=exact)
        return True

    def op_nary(self):
        r = self.r
        a = self.pick(lambda v: v.dt in FLOATS)
        if a is None:
            return False
        op = r.choice(("Sum", "Mean", "Max", "Min"))
        args, shape = [a], a.shape
        for _ in range(r.randint(1, 3)):
            b = self.second(a)  # broadcasts with a; keep it when it does with the others too
            if bcast(shape, b.shape) is not None:
                args.append(b)
                shape = bcast(shape, b.shape)
        los, his = [v.lo for v in args], [v.hi for v in args]
        if op == "Sum":
            lo, hi = sum(los), sum(his)
        elif op == "Mean":
            lo, hi = sum(los) / len(args), sum(his) / len(args)
        else:
            lo, hi = min(los), max(his)
        self.emit(op, args, a.dt, shape, lo, hi, exact=op in ("Max", "Min") and all(v.exact for v in args))
        return True

    def op_compare(self):
        """A comparison of exact values feeding Where (or a logic op)."""
        r = self.r
        a = self.pick(lambda v: v.exact and v.dt in FLOATS + INTS)
        if a is None:
            return False
        b = self.second(a)
        if not b.exact:
            b = self.fresh_like(a.dt, self.bshape(a.shape))
        op = r.choice(("Less", "Greater", "LessOrEqual", "GreaterOrEqual") + (("Equal",) if a.dt in INTS else ()))
        shape = bcast(a.shape, b.shape)
        c = self.emit(op, [a, b], "bool", shape, 0, 1, exact=True)
        if r.random() < 0.3:
            o = self.pick(lambda v: v.dt == "bool" and v is not c and bcast(v.shape, c.shape) is not None)
            if o is not None:
                lop = r.choice(("And", "Or", "Xor"))
                c = self.emit(lop, [c, o], "bool", bcast(c.shape, o.shape), 0, 1, exact=True)
            elif r.random() < 0.5:
                c = self.emit("Not", [c], "bool", c.shape, 0, 1, exact=True)
        if r.random() < 0.15:
            return True  # a bool leaf becomes an output
        x = self.pick(lambda v: v.dt in FLOATS + INTS and bcast(v.shape, c.shape) is not None)
        if x is None:
            return True
        y = self.second(x)
        shape = bcast(bcast(c.shape, x.shape), y.shape)
        if shape is None:
            return True
        self.emit("Where", [c, x, y], x.dt, shape, min(x.lo, y.lo), max(x.hi, y.hi), exact=x.exact and y.exact)
        return True

    def op_mod(self):
        a = self.pick(lambda v: v.exact and v.dt in FLOATS + INTS)
        if a is None:
            return False
        isint = a.dt in INTS
        if isint:
            b = self.new_input(a.dt, self.bshape(a.shape), 1, 5)
            fm = self.r.choice((0, 1))
        else:
            b = self.new_input(a.dt, self.bshape(a.shape), 0.5, 2.0)
            fm = 1
        self.emit("Mod", [a, b], a.dt, bcast(a.shape, b.shape), -b.hi, b.hi, exact=isint,
                  attrs={"fmod": fm} if fm or self.r.random() < 0.5 else None)
        return True

    def op_cast(self):
        r = self.r
        v = self.pick(lambda v: v.dt in FLOATS + INTS + ("bool",))
        if v is None:
            return False
        if v.dt in FLOATS:
            if v.exact and r.random() < 0.4:
                to = r.choice(INTS)
                f = self.emit("Floor", [v], v.dt, v.shape, math.floor(v.lo), math.ceil(v.hi), True)
                self.emit("Cast", [f], to, v.shape, f.lo, f.hi, True, {"to": ONNX_CODE[to]})
                return True
            to = "f64" if v.dt == "f32" else "f32"
            self.emit("Cast", [v], to, v.shape, v.lo, v.hi, v.exact, {"to": ONNX_CODE[to]})
        else:
            to = r.choice(FLOATS) if v.dt != "bool" or r.random() < 0.7 else "i32"
            self.emit("Cast", [v], to, v.shape, min(v.lo, 0), max(v.hi, 1), True, {"to": ONNX_CODE[to]})
        return True

    def op_reduce(self):
        r = self.r
        v = self.pick(lambda v: v.dt in FLOATS + INTS and len(v.shape) >= 1)
        if v is None:
            return False
        isint = v.dt in INTS
        ops = ["ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1"] + \
            ([] if isint else ["ReduceMean", "ReduceL2", "ReduceLogSumExp", "ReduceSumSquare", "ReduceLogSum"])
        op = r.choice(ops)
        rank = len(v.shape)
        axes = sorted(r.sample(range(rank), r.randint(1, rank)))
        if r.random() < 0.15:
            axes = []
        axes_w = [a - rank if r.random() < 0.3 else a for a in axes]
        keep = r.choice((0, 1))
        red = axes if axes else list(range(rank))
        n = numel([v.shape[a] for a in red])
        shape = tuple(1 if i in red else d for i, d in enumerate(v.shape)) if keep else \
            tuple(d for i, d in enumerate(v.shape) if i not in red)
        if op == "ReduceProd":
            v = self.shrink(v, 1.0 if not isint else 2)
            if isint and n > 12:
                return False
        if op in ("ReduceLogSumExp",):
            v = self.shrink(v, 3.0)
        if op == "ReduceLogSum":
            v = self.positive(v)
        if op == "ReduceSumSquare":
            v = self.shrink(v, 3.0)
        b = v.bound
        if op == "ReduceProd":
            lo, hi = -(b ** n), b ** n
        elif op == "ReduceLogSum":
            lo, hi = math.log(max(v.lo, 1e-3)), math.log(n * v.hi)
        else:
            lo, hi = {
                "ReduceSum": (n * v.lo, n * v.hi), "ReduceMean": (v.lo, v.hi), "ReduceMax": (v.lo, v.hi),
                "ReduceMin": (v.lo, v.hi), "ReduceL1": (0, n * b), "ReduceL2": (0, math.sqrt(n) * b),
                "ReduceLogSumExp": (v.lo, v.hi + math.log(n)), "ReduceSumSquare": (0, n * b * b),
            }[op]
        attrs = {}
        args = [v]
        if op == "ReduceSum":
            if axes_w:
                args.append(self.ints(axes_w))
        elif axes_w:
            attrs["axes"] = axes_w
        if keep == 0 or r.random() < 0.3:
            attrs["keepdims"] = keep
        exact = isint or (op in ("ReduceMax", "ReduceMin") and v.exact)
        self.emit(op, args, v.dt, shape, lo, hi, exact, attrs)
        return True

    def op_argmax(self):
        r = self.r
        v = self.pick(lambda v: v.exact and v.dt in FLOATS + INTS and len(v.shape) >= 1)
        if v is None:
            return False
        op = r.choice(("ArgMax", "ArgMin", "Hardmax", "TopK"))
        rank = len(v.shape)
        ax = r.randrange(rank)
        axw = ax - rank if r.random() < 0.3 else ax
        if op == "Hardmax":
            if v.dt not in FLOATS:
                return False
            self.emit(op, [v], v.dt, v.shape, 0, 1, True, {"axis": axw})
            return True
        if op == "TopK":
            k = r.randint(1, v.shape[ax])
            attrs = {"axis": axw}
            if r.random() < 0.4:
                attrs["largest"] = 0
            vals, idx = self.node("TopK", [v, self.ints([k])], attrs, nout=2)
            shape = tuple(k if i == ax else d for i, d in enumerate(v.shape))
            self.vals.append(Val(vals, v.dt, shape, v.lo, v.hi, True))
            self.vals.append(Val(idx, "i64", shape, 0, v.shape[ax] - 1, True))
            return True
        keep = r.choice((0, 1))
        attrs = {"axis": axw}
        if keep == 0:
            attrs["keepdims"] = 0
        if r.random() < 0.4:
            attrs["select_last_index"] = 1
        shape = tuple(1 if i == ax else d for i, d in enumerate(v.shape)) if keep else \
            tuple(d for i, d in enumerate(v.shape) if i != ax)
        self.emit(op, [v], "i64", shape, 0, v.shape[ax] - 1, True, attrs)
        return True

    def op_softmax(self):
        r = self.r
        v = self.pick(lambda v: v.dt in FLOATS and len(v.shape) >= 1)
        if v is None:
            return False
        op = r.choice(("Softmax", "LogSoftmax"))
        rank = len(v.shape)
        ax = r.randrange(rank)
        attrs = {"axis": ax - rank if r.random() < 0.5 else ax} if r.random() < 0.8 else None
        if op == "Softmax":
            self.emit(op, [v], v.dt, v.shape, 0, 1, False, attrs)
        else:
            lo = -(v.hi - v.lo) - math.log(max(v.shape) if v.shape else 1) - 1
            self.emit(op, [v], v.dt, v.shape, lo, 0, False, attrs)
        return True

    def op_norm(self):
        r = self.r
        v = self.pick(lambda v: v.dt in FLOATS and len(v.shape) >= 2)
        if v is None:
            return False
        op = r.choice(("LayerNormalization", "MeanVarianceNormalization", "InstanceNormalization",
                       "BatchNormalization", "LRN"))
        rank = len(v.shape)
        if op in ("InstanceNormalization", "BatchNormalization", "LRN") and rank < 3 and op != "BatchNormalization":
            op = "LayerNormalization"
        sh, dt = v.shape, v.dt
        if op == "LayerNormalization":
            ax = r.randrange(rank)
            norm_shape = sh[ax:]
            bound = math.sqrt(numel(norm_shape))
            sc = self.const(dt, norm_shape, None, 0.5, 1.5)
            args = [v, sc]
            if r.random() < 0.6:
                args.append(self.const(dt, norm_shape, None, -1, 1))
            attrs = {"axis": ax - rank if r.random() < 0.3 else ax}
            if r.random() < 0.3:
                attrs["epsilon"] = 1e-3
            self.emit(op, args, dt, sh, -1.5 * bound - 1, 1.5 * bound + 1, False, attrs)
        elif op == "MeanVarianceNormalization":
            axes = sorted(r.sample(range(rank), r.randint(1, rank)))
            bound = math.sqrt(numel([sh[a] for a in axes]))
            self.emit(op, [v], dt, sh, -bound, bound, False, {"axes": axes} if r.random() < 0.8 or rank != 4 else None)
        elif op == "InstanceNormalization":
            c = sh[1]
            bound = math.sqrt(numel(sh[2:]))
            s = self.const(dt, (c,), None, 0.5, 1.5)
            b = self.const(dt, (c,), None, -1, 1)
            self.emit(op, [v, s, b], dt, sh, -1.5 * bound - 1, 1.5 * bound + 1, False,
                      {"epsilon": 1e-3} if r.random() < 0.3 else None)
        elif op == "BatchNormalization":
            c = sh[1]
            s = self.const(dt, (c,), None, 0.5, 1.5)
            b = self.const(dt, (c,), None, -1, 1)
            m = self.const(dt, (c,), None, -1, 1)
            var = self.const(dt, (c,), None, 0.2, 2)
            k = 1.5 / math.sqrt(0.2)
            self.emit(op, [v, s, b, m, var], dt, sh, -(v.bound + 1) * k - 1, (v.bound + 1) * k + 1, False,
                      {"epsilon": 1e-3} if r.random() < 0.3 else None)
        else:
            size = r.choice((1, 2, 3, 5))
            attrs = {"size": size}
            if r.random() < 0.5:
                attrs.update(alpha=0.5, beta=0.6, bias=2.0)
            self.emit(op, [v], dt, sh, -v.bound, v.bound, False, attrs)
        return True

    # ---- shape and data movement ----------------------------------------------------------------

    def data_op(self, op, args, v, shape, attrs=None, lo=None, hi=None):
        return self.emit(op, args, v.dt, shape, v.lo if lo is None else lo, v.hi if hi is None else hi,
                         v.exact, attrs)

    def op_reshape(self):
        r = self.r
        v = self.pick(lambda v: len(v.shape) >= 1)
        if v is None:
            return False
        n = numel(v.shape)
        op = r.choice(("Reshape", "Reshape", "Flatten", "Squeeze", "Unsqueeze"))
        if op == "Flatten":
            rank = len(v.shape)
            ax = r.randint(0, rank)
            shape = (numel(v.shape[:ax]), numel(v.shape[ax:]))
            self.data_op(op, [v], v, shape, {"axis": ax - rank if r.random() < 0.3 and ax < rank else ax})
            return True
        if op == "Unsqueeze":
            if len(v.shape) >= 5:
                return False
            k = r.randint(1, 2)
            out_rank = len(v.shape) + k
            axes = sorted(r.sample(range(out_rank), k))
            shape = list(v.shape)
            for a in axes:
                shape.insert(a, 1)
            self.data_op(op, [v, self.ints([a - out_rank if r.random() < 0.3 else a for a in axes])], v,
                         tuple(shape))
            return True
        if op == "Squeeze":
            ones = [i for i, d in enumerate(v.shape) if d == 1]
            if not ones:
                return False
            if r.random() < 0.3:
                self.data_op(op, [v], v, tuple(d for d in v.shape if d != 1))
                return True
            axes = sorted(r.sample(ones, r.randint(1, len(ones))))
            self.data_op(op, [v, self.ints(axes)], v, tuple(d for i, d in enumerate(v.shape) if i not in axes))
            return True
        # Reshape into a random factorization of n
        dims = []
        m = n
        for _ in range(r.randint(0, 3)):
            divs = [d for d in range(1, m + 1) if m % d == 0 and d <= 8]
            d = r.choice(divs)
            dims.append(d)
            m //= d
        dims.append(m)
        r.shuffle(dims)
        spec = list(dims)
        if len(dims) > 1 and r.random() < 0.4:
            spec[r.randrange(len(dims))] = -1
        for i in range(min(len(dims), len(v.shape))):
            if dims[i] == v.shape[i] and spec[i] != -1 and r.random() < 0.3:
                spec[i] = 0
        self.data_op("Reshape", [v, self.ints(spec)], v, tuple(dims))
        return True

    def op_transpose(self):
        r = self.r
        v = self.pick(lambda v: len(v.shape) >= 2)
        if v is None:
            return False
        perm = list(range(len(v.shape)))
        r.shuffle(perm)
        attrs = {"perm": perm} if r.random() < 0.85 else None
        if attrs is None:  # no perm attribute: ONNX reverses the axes
            perm = list(reversed(range(len(v.shape))))
        self.data_op("Transpose", [v], v, tuple(v.shape[p] for p in perm), attrs)
        return True

    def op_concat(self):
        r = self.r
        v = self.pick(lambda v: len(v.shape) >= 1)
        if v is None:
            return False
        rank = len(v.shape)
        ax = r.randrange(rank)
        parts = [v]
        for _ in range(r.randint(1, 2)):
            c = [u for u in self.vals if u.dt == v.dt and len(u.shape) == rank
                 and all(u.shape[i] == v.shape[i] for i in range(rank) if i != ax)]
            if c and r.random() < 0.6:
                parts.append(r.choice(c))
            else:
                s = list(v.shape)
                s[ax] = r.randint(1, 4)
                parts.append(self.fresh_like(v.dt, tuple(s)))
        shape = list(v.shape)
        shape[ax] = sum(p.shape[ax] for p in parts)
        self.emit("Concat", parts, v.dt, tuple(shape), min(p.lo for p in parts), max(p.hi for p in parts),
                  all(p.exact for p in parts), {"axis": ax - rank if r.random() < 0.3 else ax})
        return True

    def op_split(self):
        r = self.r
        v = self.pick(lambda v: len(v.shape) >= 1 and max(v.shape) >= 2)
        if v is None:
            return False
        rank = len(v.shape)
        ax = r.choice([i for i in range(rank) if v.shape[i] >= 2])
        d = v.shape[ax]
        args = [v]
        if r.random() < 0.5 and d % 2 == 0:
            sizes = [d // 2, d // 2]
        else:
            k = r.randint(2, min(3, d))
            cuts = sorted(r.sample(range(1, d), k - 1))
            sizes = [b - a for a, b in zip([0] + cuts, cuts + [d])]
            args.append(self.ints(sizes))
        outs = self.node("Split", args, {"axis": ax - rank if r.random() < 0.3 else ax} if ax or r.random() < 0.5
                         else None, nout=len(sizes))
        for o, s in zip(outs, sizes):
            shape = list(v.shape)
            shape[ax] = s
            self.vals.append(Val(o, v.dt, shape, v.lo, v.hi, v.exact))
        return True

    def op_slice(self):
        r = self.r
        v = self.pick(lambda v: len(v.shape) >= 1)
        if v is None:
            return False
        rank = len(v.shape)
        axes = sorted(r.sample(range(rank), r.randint(1, rank)))
        starts, ends, steps, shape = [], [], [], list(v.shape)
        for a in axes:
            d = v.shape[a]
            step = r.choice((1, 1, 1, 2, 3, -1, -2))
            if step > 0:
                s = r.randint(0, d - 1)
                e = r.randint(s + 1, d)
                n = (e - s + step - 1) // step
                s_w = s - d if r.random() < 0.3 else s
                e_w = e if r.random() < 0.7 or e < d else 2 ** 31
            else:
                s = r.randint(0, d - 1)
                e = r.randint(-1, s - 1)
                n = (s - e + (-step) - 1) // (-step)
                s_w = s
                e_w = e if e >= 0 else -d - 1 - r.randint(0, 3)
            starts.append(s_w)
            ends.append(e_w)
            steps.append(step)
            shape[a] = n
        args = [v, self.ints(starts), self.ints(ends)]
        full = axes == list(range(rank)) and r.random() < 0.5
        args.append(None if full else self.ints([a - rank if r.random() < 0.3 else a for a in axes]))
        if any(s != 1 for s in steps) or r.random() < 0.3:
            args.append(self.ints(steps))
        elif args[-1] is None:
            args.pop()
        self.data_op("Slice", args, v, tuple(shape))
        return True

    def op_gather(self):
        r = self.r
        v = self.pick(lambda v: len(v.shape) >= 1)
        if v is None:
            return False
        rank = len(v.shape)
        ax = r.randrange(rank)
        d = v.shape[ax]
        if r.random() < 0.3:  # GatherElements with constant indices
            ishape = list(v.shape)
            ishape[ax] = r.randint(1, 4)
            idx = [r.randint(-d, d - 1) for _ in range(numel(ishape))]
            c = self.const(r.choice(("i64", "i32")), tuple(ishape), idx)
            self.data_op("GatherElements", [v, c], v, tuple(ishape), {"axis": ax})
            return True
        ishape = tuple(r.randint(1, 3) for _ in range(r.choice((0, 1, 1, 2))))
        idx = [r.randint(-d, d - 1) for _ in range(numel(ishape))]
        c = self.const(r.choice(("i64", "i32")), ishape, idx)
        shape = v.shape[:ax] + ishape + v.shape[ax + 1:]
        if len(shape) > 6:
            return False
        self.data_op("Gather", [v, c], v, shape, {"axis": ax - rank if r.random() < 0.3 else ax})
        return True

    def op_pad(self):
        r = self.r
        v = self.pick(lambda v: 1 <= len(v.shape) <= 4)
        if v is None:
            return False
        rank = len(v.shape)
        mode = r.choice(("constant", "constant", "reflect", "edge"))
        pads = []
        for side in range(2):
            for a in range(rank):
                d = v.shape[a]
                if mode == "reflect":
                    pads.append(r.randint(0, min(2, d - 1)))
                elif mode == "constant" and r.random() < 0.2 and d > 1:
                    pads.append(-1)
                else:
                    pads.append(r.randint(0, 2))
        shape = tuple(v.shape[a] + pads[a] + pads[a + rank] for a in range(rank))
        if min(shape) < 1:
            return False
        args = [v, self.ints(pads)]
        attrs = {"mode": mode} if mode != "constant" or r.random() < 0.3 else None
        lo, hi = v.lo, v.hi
        if mode == "constant":
            if r.random() < 0.4 and v.dt in FLOATS + INTS:
                cv = r.randint(-2, 2) if v.dt in INTS else 0.5
                args.append(self.scalar(v.dt, cv))
                lo, hi = min(lo, cv), max(hi, cv)
            lo, hi = min(lo, 0), max(hi, 0)
        self.data_op("Pad", args, v, shape, attrs, lo, hi)
        return True

    def op_expand(self):
        r = self.r
        v = self.pick(lambda v: len(v.shape) <= 4 and numel(v.shape) <= 256)
        if v is None:
            return False
        op = r.choice(("Expand", "Tile"))
        if op == "Tile":
            if not v.shape:
                return False
            reps = [r.choice((1, 1, 2, 3)) for _ in v.shape]
            self.data_op("Tile", [v, self.ints(reps)], v, tuple(d * k for d, k in zip(v.shape, reps)))
            return True
        target = [d if d != 1 else r.choice((1, 2, 3)) for d in v.shape]
        spec = [1 if r.random() < 0.3 else d for d in target]
        if r.random() < 0.3:
            target, spec = [2] + target, [2] + spec
        shape = bcast(v.shape, spec)
        self.data_op("Expand", [v, self.ints(spec)], v, shape)
        return True

    def op_index(self):
        r = self.r
        v = self.pick(lambda v: len(v.shape) >= 1 and v.dt in FLOATS + INTS)
        if v is None:
            return False
        op = r.choice(("CumSum", "Trilu", "DepthToSpace", "SpaceToDepth"))
        rank = len(v.shape)
        if op == "CumSum":
            ax = r.randrange(rank)
            attrs = {}
            if r.random() < 0.4:
                attrs["reverse"] = 1
            if r.random() < 0.4:
                attrs["exclusive"] = 1
            v = self.shrink(v, 5.0) if v.dt in FLOATS else v
            n = v.shape[ax]
            self.emit(op, [v, self.const(r.choice(("i64", "i32")), (), [ax - rank if r.random() < 0.3 else ax])],
                      v.dt, v.shape, min(0, n * v.lo), max(0, n * v.hi), v.dt in INTS, attrs or None)
            return True
        if op == "Trilu":
            if rank < 2:
                return False
            args = [v]
            if r.random() < 0.6:
                args.append(self.scalar("i64", r.randint(-3, 3)))
            self.data_op(op, args, v, v.shape, {"upper": 0} if r.random() < 0.5 else None,
                         min(v.lo, 0), max(v.hi, 0))
            return True
        if rank != 4:
            return False
        n, c, h, w = v.shape
        if op == "DepthToSpace":
            bs = [b for b in (2, 3) if c % (b * b) == 0]
            if not bs:
                return False
            b = r.choice(bs)
            attrs = {"blocksize": b}
            if r.random() < 0.5:
                attrs["mode"] = r.choice(("CRD", "DCR"))
            self.data_op(op, [v], v, (n, c // (b * b), h * b, w * b), attrs)
        else:
            bs = [b for b in (2, 3) if h % b == 0 and w % b == 0]
            if not bs:
                return False
            b = r.choice(bs)
            self.data_op(op, [v], v, (n, c * b * b, h // b, w // b), {"blocksize": b})
        return True

    # ---- nn: conv, pool, resize, matmul ---------------------------------------------------------

    def nn_input(self, min_sp=3):
        """A value of rank 3 or 4 (N, C, spatial...) to convolve, or a new input."""
        v = self.pick(lambda v: v.dt in FLOATS and len(v.shape) in (3, 4) and min(v.shape[2:]) >= min_sp
                      and numel(v.shape) <= 3000)
        if v is None or self.r.random() < 0.2:
            r = self.r
            dt = self.dt if self.dt in FLOATS else "f32"
            sp = tuple(r.randint(min_sp, 9) for _ in range(r.choice((1, 2, 2, 2))))
            v = self.new_input(dt, (r.randint(1, 2), r.randint(1, 6)) + sp)
        return v

    def op_conv(self):
        r = self.r
        v = self.nn_input()
        v = self.shrink(v, 4.0)
        n, c = v.shape[:2]
        sp = v.shape[2:]
        nd = len(sp)
        transpose = r.random() < 0.2
        groups = r.choice([g for g in (1, 1, 2, 3, c) if c % g == 0])
        m = groups * r.randint(1, 3) if groups > 1 else r.randint(1, 6)
        if r.random() < 0.2 and groups == c:
            m = c  # depthwise
        ks = [r.choice((1, 2, 3, 3)) for _ in sp]
        strides = [r.choice((1, 1, 2, 3)) for _ in sp]
        dil = [r.choice((1, 1, 1, 2)) for _ in sp]
        eff = [(k - 1) * d + 1 for k, d in zip(ks, dil)]
        pads = [r.randint(0, max(0, e - 1)) for e in eff] + [r.randint(0, max(0, e - 1)) for e in eff]
        auto = r.choice((None,) * 6 + ("SAME_UPPER", "SAME_LOWER", "VALID"))
        dt = v.dt
        if not transpose:
            out = []
            for i in range(nd):
                if auto in ("SAME_UPPER", "SAME_LOWER"):
                    o = -(-sp[i] // strides[i])
                elif auto == "VALID":
                    o = (sp[i] - eff[i]) // strides[i] + 1
                else:
                    o = (sp[i] + pads[i] + pads[i + nd] - eff[i]) // strides[i] + 1
                out.append(o)
            if min(out) < 1:
                return False
            wshape = (m, c // groups) + tuple(ks)
            fan = (c // groups) * numel(ks)
        else:
            if auto == "VALID":
                auto = None
            opad = [r.randint(0, max(0, min(s, d) - 1)) if r.random() < 0.3 else 0 for s, d in zip(strides, dil)]
            out = []
            for i in range(nd):
                if auto:
                    o = sp[i] * strides[i]
                else:
                    o = strides[i] * (sp[i] - 1) + opad[i] + eff[i] - pads[i] - pads[i + nd]
                out.append(o)
            if min(out) < 1:
                return False
            wshape = (c, m // groups if groups > 1 else m) + tuple(ks)
            if groups > 1:
                m = groups * (m // groups)
            fan = (c // groups) * numel(ks)
        a = 1.0 / math.sqrt(fan)
        w = self.const(dt, wshape, None, -a, a) if r.random() < 0.75 else self.new_input(dt, wshape, -a, a)
        args = [v, w]
        bias = r.random() < 0.6
        if bias:
            args.append(self.const(dt, (m,), None, -0.5, 0.5))
        attrs = {}
        if auto:
            attrs["auto_pad"] = auto
        elif any(pads) or r.random() < 0.3:
            attrs["pads"] = pads
        if any(s != 1 for s in strides) or r.random() < 0.2:
            attrs["strides"] = strides
        if any(d != 1 for d in dil):
            attrs["dilations"] = dil
        if groups != 1:
            attrs["group"] = groups
        if r.random() < 0.3:
            attrs["kernel_shape"] = ks
        if transpose and any(opad):
            attrs["output_padding"] = opad
        hi = v.bound * a * fan + (0.5 if bias else 0)
        if transpose:
            hi = v.bound * a * (c // groups) * numel(ks) + 0.5
        self.emit("ConvTranspose" if transpose else "Conv", args, dt, (n, m) + tuple(out), -hi, hi, False, attrs)
        return True

    def op_pool(self):
        r = self.r
        v = self.nn_input(2)
        n, c = v.shape[:2]
        sp = v.shape[2:]
        nd = len(sp)
        op = r.choice(("MaxPool", "MaxPool", "AveragePool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool"))
        if op.startswith("Global"):
            self.emit(op, [v], v.dt, (n, c) + (1,) * nd, v.lo, v.hi, v.exact and op == "GlobalMaxPool")
            return True
        ks = [r.randint(1, min(3, s)) for s in sp]
        strides = [r.choice((1, 2, 2, 3)) for _ in sp]
        dil = [1] * nd
        if op == "MaxPool" and r.random() < 0.2:
            dil = [r.choice((1, 2)) for _ in sp]
        eff = [(k - 1) * d + 1 for k, d in zip(ks, dil)]
        if max(e - s for e, s in zip(eff, sp)) > 0:
            dil = [1] * nd
            eff = ks
        pads = [r.randint(0, k - 1) for k in ks] * 2 if r.random() < 0.5 else [0] * (2 * nd)
        pads = [min(p, k - 1) for p, k in zip(pads, ks + ks)]
        ceil = r.random() < 0.35
        auto = r.choice((None,) * 8 + ("SAME_UPPER", "VALID"))
        out = []
        for i in range(nd):
            if auto == "SAME_UPPER":
                o = -(-sp[i] // strides[i])
            elif auto == "VALID":
                o = (sp[i] - eff[i]) // strides[i] + 1
            else:
                num = sp[i] + pads[i] + pads[i + nd] - eff[i]
                o = (-(-num // strides[i]) if ceil else num // strides[i]) + 1
                # ONNX: the last window must start inside the input or left padding
                if ceil and (o - 1) * strides[i] >= sp[i] + pads[i]:
                    o -= 1
            out.append(o)
        if min(out) < 1:
            return False
        attrs = {"kernel_shape": ks}
        if auto:
            attrs["auto_pad"] = auto
        elif any(pads):
            attrs["pads"] = pads
        if any(s != 1 for s in strides) or r.random() < 0.3:
            attrs["strides"] = strides
        if any(d != 1 for d in dil):
            attrs["dilations"] = dil
        if ceil and not auto:
            attrs["ceil_mode"] = 1
        lo, hi = v.lo, v.hi
        if op == "AveragePool":
            if r.random() < 0.5:
                attrs["count_include_pad"] = 1
            lo, hi = min(lo, 0), max(hi, 0)
        self.emit(op, [v], v.dt, (n, c) + tuple(out), lo, hi, v.exact and op == "MaxPool", attrs)
        return True

    def op_resize(self):
        r = self.r
        v = self.nn_input(2)
        n, c = v.shape[:2]
        sp = v.shape[2:]
        mode = r.choice(("nearest", "linear"))
        attrs = {}
        if mode != "nearest" or r.random() < 0.3:
            attrs["mode"] = mode
        ctm = r.choice((None, "half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric"))
        if ctm:
            attrs["coordinate_transformation_mode"] = ctm
        if mode == "nearest" and r.random() < 0.5:
            attrs["nearest_mode"] = r.choice(("floor", "ceil", "round_prefer_ceil", "round_prefer_floor"))
        if r.random() < 0.5:
            scales = [r.choice((0.5, 1.0, 1.5, 2.0, 3.0)) for _ in sp]
            out = [int(math.floor(s * k)) for s, k in zip(sp, scales)]
            if min(out) < 1:
                return False
            sc = self.const("f32", (len(v.shape),), [1.0, 1.0] + scales)
            args = [v, None, sc]
        else:
            out = [r.randint(1, 2 * s + 1) for s in sp]
            args = [v, None, None, self.ints([n, c] + out)]
        if r.random() < 0.3:
            args[1] = self.const("f32", (0,), [])
        # Nearest modes pick a source by rounding a computed coordinate: the exact
        # half-way ties are the same formula on both sides, so the output is exact.
        self.emit("Resize", args, v.dt, (n, c) + tuple(out), v.lo, v.hi, v.exact and mode == "nearest",
                  attrs or None)
        return True

    def op_matmul(self):
        r = self.r
        op = r.choice(("MatMul", "MatMul", "Gemm", "Einsum"))
        if op == "Gemm":
            a = self.pick(lambda v: v.dt in FLOATS and len(v.shape) == 2)
            if a is None or r.random() < 0.3:
                a = self.new_input(self.dt if self.dt in FLOATS else "f32", self.rand_shape(2, 1, 8))
            a = self.shrink(a, 4.0)
            ta = r.random() < 0.3
            mm, kk = (a.shape[1], a.shape[0]) if ta else a.shape
            nn_ = r.randint(1, 8)
            tb = r.random() < 0.4
            sc = 1 / math.sqrt(kk)
            bshape = (nn_, kk) if tb else (kk, nn_)
            b = self.const(a.dt, bshape, None, -sc, sc) if r.random() < 0.7 else self.new_input(a.dt, bshape, -sc, sc)
            args = [a, b]
            attrs = {}
            if ta:
                attrs["transA"] = 1
            if tb:
                attrs["transB"] = 1
            alpha, beta = 1.0, 1.0
            if r.random() < 0.3:
                alpha = attrs["alpha"] = r.choice((0.5, 2.0))
            if r.random() < 0.7:
                cs = r.choice(((nn_,), (1, nn_), (mm, 1), (mm, nn_), (1,), ()))
                args.append(self.const(a.dt, cs, None, -0.5, 0.5) if r.random() < 0.7 else self.new_input(a.dt, cs))
                if r.random() < 0.3:
                    beta = attrs["beta"] = r.choice((0.5, 2.0))
            hi = alpha * a.bound * kk * sc + beta * 2
            self.emit(op, args, a.dt, (mm, nn_), -hi, hi, False, attrs or None)
            return True
        a = self.pick(lambda v: v.dt in FLOATS and 1 <= len(v.shape) <= 4)
        if a is None:
            return False
        a = self.shrink(a, 4.0)
        kk = a.shape[-1]
        nn_ = r.randint(1, 7)
        sc = 1 / math.sqrt(kk)
        if op == "Einsum":
            if len(a.shape) != 2 and len(a.shape) != 3:
                return False
            if len(a.shape) == 2:
                eq = r.choice(("ij,jk->ik", "ij,jk", "ik,jk->ij"))
            else:
                eq = r.choice(("bij,jk->bik", "bij,jk->bk", "...j,jk->...k"))
            bshape = (nn_, kk) if eq == "ik,jk->ij" else (kk, nn_)
            b = self.const(a.dt, bshape, None, -sc, sc)
            if eq in ("ij,jk->ik", "ij,jk", "ik,jk->ij"):
                shape = (a.shape[0], nn_)
            elif eq == "bij,jk->bk":
                shape = (a.shape[0], nn_)
            else:
                shape = a.shape[:-1] + (nn_,)
            hi = a.bound * kk * sc * (a.shape[1] if eq == "bij,jk->bk" else 1)
            self.emit(op, [a, b], a.dt, shape, -hi, hi, False, {"equation": eq})
            return True
        # MatMul with batch broadcasting; B may be 1-D, a new input or an existing value
        if r.random() < 0.15:
            bshape = (kk,)
            shape = a.shape[:-1]
        else:
            batch = self.bshape(a.shape[:-2]) if len(a.shape) > 2 and r.random() < 0.5 else ()
            bshape = tuple(batch) + (kk, nn_)
            if len(a.shape) == 1:
                shape = tuple(batch) + (nn_,)
            else:
                shape = bcast(a.shape[:-2], batch) + (a.shape[-2], nn_)
        b = self.const(a.dt, bshape, None, -sc, sc) if r.random() < 0.6 else self.new_input(a.dt, bshape, -sc, sc)
        hi = a.bound * b.bound * kk
        self.emit(op, [a, b], a.dt, shape, -hi, hi, False)
        return True

    def op_rnn(self):
        """RNN / GRU / LSTM over a rank-3 value read as [seq, batch, input] (layout 0) or
        [batch, seq, input] (layout 1)."""
        r = self.r
        v = self.pick(lambda v: v.dt in FLOATS and len(v.shape) == 3 and numel(v.shape) <= 400)
        if v is None:
            if r.random() < 0.5:
                return False
            v = self.new_input(self.dt if self.dt in FLOATS else "f32", self.rand_shape(3, 1, 5))
        v = self.shrink(v, 3.0)
        op = r.choice(("RNN", "GRU", "LSTM"))
        gates = {"RNN": 1, "GRU": 3, "LSTM": 4}[op]
        layout = 1 if r.random() < 0.25 else 0
        seq, batch, inp = (v.shape[1], v.shape[0], v.shape[2]) if layout else v.shape
        hid = r.randint(1, 5)
        direction = r.choice(("forward", "forward", "reverse", "bidirectional"))
        nd = 2 if direction == "bidirectional" else 1
        a = 1.0 / math.sqrt(hid + inp)
        args = [v, self.const(v.dt, (nd, gates * hid, inp), None, -a, a),
                self.const(v.dt, (nd, gates * hid, hid), None, -a, a)]
        if r.random() < 0.6:
            args.append(self.const(v.dt, (nd, 2 * gates * hid), None, -0.5, 0.5))
        if r.random() < 0.3:
            while len(args) < 5:
                args.append(None)
            hs = (batch, nd, hid) if layout else (nd, batch, hid)
            args.append(self.new_input(v.dt, hs, -1.0, 1.0))
        attrs = {"hidden_size": hid}
        if direction != "forward":
            attrs["direction"] = direction
        if layout:
            attrs["layout"] = 1
        if op == "GRU" and r.random() < 0.4:
            attrs["linear_before_reset"] = 1
        nout = 3 if op == "LSTM" else 2
        outs = self.node(op, args, attrs, nout=nout)
        yshape = (batch, seq, nd, hid) if layout else (seq, nd, batch, hid)
        hshape = (batch, nd, hid) if layout else (nd, batch, hid)
        self.vals.append(Val(outs[0], v.dt, yshape, -1, 1, False))
        for o in outs[1:]:
            self.vals.append(Val(o, v.dt, hshape, -LIMIT if op == "LSTM" else -1, LIMIT if op == "LSTM" else 1, False))
        return True

    def op_misc(self):
        """Ops with one narrow use each: Dropout (inference), Shape, Size, CastLike, Shrink,
        ThresholdedRelu, IsNaN, IsInf, Upsample, GatherND, ScatterElements, ScatterND,
        Compress, ReverseSequence, OneHot, EyeLike, Range, ConstantOfShape, Constant."""
        r = self.r
        op = r.choice(("Dropout", "Shape", "Size", "CastLike", "Shrink", "ThresholdedRelu", "IsNaN", "IsInf",
                       "Upsample", "GatherND", "ScatterElements", "ScatterND", "Compress", "ReverseSequence",
                       "OneHot", "EyeLike", "Range", "ConstantOfShape", "Constant"))
        v = self.pick(lambda v: v.dt in FLOATS + INTS and len(v.shape) >= 1)
        if v is None:
            return False
        rank = len(v.shape)
        if op == "Dropout":
            self.data_op(op, [v], v, v.shape)
        elif op in ("Shape", "Size"):
            (o,) = self.node(op, [v])  # a leaf: returned as an output
            self.vals.append(Val(o, "i64", (rank,) if op == "Shape" else (), 0, max(v.shape), True))
        elif op == "CastLike":
            other = self.pick(lambda u: u.dt != v.dt and u.dt in FLOATS + INTS)
            if other is None or (v.dt in FLOATS and other.dt in INTS and not v.exact):
                return False
            self.emit(op, [v, other], other.dt, v.shape, v.lo, v.hi, v.exact)
        elif op in ("Shrink", "ThresholdedRelu", "IsNaN", "IsInf"):
            if v.dt not in FLOATS:
                return False
            if op == "Shrink":  # continuous when bias == lambd, else only on exact values
                lam = r.choice((0.25, 0.5))
                attrs = {"lambd": lam, "bias": lam if not v.exact or r.random() < 0.5 else 0.1}
                self.emit(op, [v], v.dt, v.shape, min(v.lo, 0), max(v.hi, 0), v.exact, attrs)
            elif op == "ThresholdedRelu":
                if not v.exact:
                    return False
                self.emit(op, [v], v.dt, v.shape, 0, max(v.hi, 0), True, {"alpha": r.choice((0.2, 1.0))})
            else:
                self.emit(op, [v], "bool", v.shape, 0, 1, True)
        elif op == "Upsample":  # the C backend implements it for f32 and f64 only (a clear compile error)
            if v.dt not in FLOATS:
                return False
            sc = [1.0] * (rank - 2) + [r.choice((1.0, 2.0, 3.0)) for _ in range(min(2, rank))]
            sc = sc[-rank:]
            out = tuple(int(math.floor(d * k)) for d, k in zip(v.shape, sc))
            attrs = {"mode": "linear"} if r.random() < 0.5 and v.dt in FLOATS else None
            self.emit(op, [v, self.const("f32", (rank,), sc)], v.dt, out, v.lo, v.hi,
                      v.exact and attrs is None, attrs)
        elif op == "GatherND":
            k = r.randint(1, rank)
            nidx = r.randint(1, 3)
            idx = [r.randint(-d, d - 1) for _ in range(nidx) for d in v.shape[:k]]
            c = self.const("i64", (nidx, k), idx)
            self.data_op(op, [v, c], v, (nidx,) + v.shape[k:])
        elif op == "ScatterElements":
            ax = r.randrange(rank)
            d = v.shape[ax]
            ishape = list(v.shape)
            ishape[ax] = r.randint(1, d)
            # distinct indices along the axis for every position, so no write order matters
            idx = [0] * numel(ishape)
            strides = [numel(ishape[i + 1:]) for i in range(rank)]
            for flat in range(numel(ishape)):
                pos = [(flat // strides[i]) % ishape[i] for i in range(rank)]
                idx[flat] = pos[ax]
            perm = list(range(d))
            r.shuffle(perm)
            idx = [perm[i] - (d if r.random() < 0.3 else 0) for i in idx]
            red = r.choice((None, None, "add", "mul", "max", "min"))
            u = self.fresh_like(v.dt, tuple(ishape))
            lo, hi = min(v.lo, u.lo), max(v.hi, u.hi)
            if red in ("add",):
                lo, hi = v.lo + min(u.lo, 0), v.hi + max(u.hi, 0)
            if red == "mul":
                lo, hi = -v.bound * u.bound - v.bound, v.bound * u.bound + v.bound
            self.emit(op, [v, self.const("i64", tuple(ishape), idx), u], v.dt, v.shape, lo, hi,
                      v.exact and u.exact and red not in ("mul", "add") or v.dt in INTS,
                      {"axis": ax, **({"reduction": red} if red else {})})
        elif op == "ScatterND":
            k = r.randint(1, rank)
            pts = sorted({tuple(r.randrange(d) for d in v.shape[:k]) for _ in range(r.randint(1, 3))})
            c = self.const("i64", (len(pts), k), [x for p in pts for x in p])
            u = self.fresh_like(v.dt, (len(pts),) + v.shape[k:])
            self.emit(op, [v, c, u], v.dt, v.shape, min(v.lo, u.lo), max(v.hi, u.hi), v.exact and u.exact)
        elif op == "Compress":
            ax = r.randrange(rank)
            n = r.randint(1, v.shape[ax])
            keep = [1 if r.random() < 0.6 else 0 for _ in range(n)]
            if not any(keep):
                keep[0] = 1
            shape = list(v.shape)
            shape[ax] = sum(keep)
            self.data_op(op, [v, self.const("bool", (n,), keep)], v, tuple(shape), {"axis": ax})
        elif op == "ReverseSequence":
            if rank < 2:
                return False
            ta, ba = r.choice(((0, 1), (1, 0)))
            lens = [r.randint(1, v.shape[ta]) for _ in range(v.shape[ba])]
            self.data_op(op, [v, self.ints(lens)], v, v.shape, {"time_axis": ta, "batch_axis": ba})
        elif op == "OneHot":
            if v.dt not in INTS:
                return False
            depth = r.randint(2, 8)
            ax = r.randint(-rank - 1, rank)
            shape = list(v.shape)
            shape.insert(ax if ax >= 0 else rank + 1 + ax, depth)
            dt = r.choice(("f32", "i64"))
            self.emit(op, [v, self.scalar("i64", depth), self.const(dt, (2,), [0, 3])], dt, tuple(shape), 0, 3,
                      True, {"axis": ax} if ax != -1 else None)
        elif op == "EyeLike":
            if rank != 2:
                return False
            self.emit(op, [v], v.dt, v.shape, 0, 1, True, {"k": r.randint(-2, 2)} if r.random() < 0.6 else None)
        elif op == "Range":
            d = v.shape[-1]
            start, delta = r.randint(-3, 3), r.choice((1, 2, -1))
            limit = start + delta * d
            t = self.emit(op, [self.scalar(v.dt, start), self.scalar(v.dt, limit), self.scalar(v.dt, delta)],
                          v.dt, (d,), min(start, limit), max(start, limit), True)
            self.emit("Add", [v, t], v.dt, v.shape, v.lo + t.lo, v.hi + t.hi, v.exact and v.dt in INTS)
        else:  # ConstantOfShape / Constant added to v
            val = r.choice((0.5, -1.0, 2.0)) if v.dt in FLOATS else r.randint(-2, 2)
            lit = fmt(val) if v.dt in FLOATS else str(val)
            if op == "ConstantOfShape":
                t = self.emit(op, [self.ints(list(v.shape))], v.dt, v.shape, val, val, True,
                              {"value": f"{v.dt}[1] [{lit}]"})
            else:
                t = self.emit(op, [], v.dt, (), val, val, True, {"value": f"{v.dt}[] [{lit}]"})
            self.emit("Mul" if r.random() < 0.5 else "Add", [v, t], v.dt, v.shape, -v.bound * 2 - 2, v.bound * 2 + 2,
                      v.dt in INTS)
        return True

    # ---- the driver -----------------------------------------------------------------------------

    OPS = [
        (op_unary, 14), (op_binary, 16), (op_clip, 2), (op_nary, 3), (op_compare, 4), (op_mod, 1),
        (op_cast, 2), (op_reduce, 6), (op_argmax, 2), (op_softmax, 3), (op_norm, 4), (op_reshape, 5),
        (op_transpose, 3), (op_concat, 3), (op_split, 2), (op_slice, 3), (op_gather, 2), (op_pad, 2),
        (op_expand, 2), (op_index, 3), (op_conv, 6), (op_pool, 4), (op_resize, 2), (op_matmul, 6),
        (op_rnn, 2), (op_misc, 4),
    ]

    def gen(self):
        r = self.r
        u = r.random()
        self.dt = "f32" if u < 0.72 else "f64" if u < 0.85 else r.choice(INTS)
        if r.random() < 0.35:
            self.new_input(self.dt if self.dt in FLOATS else "f32",
                           (r.randint(1, 2), r.randint(1, 5)) + tuple(r.randint(3, 8) for _ in range(r.choice((1, 2)))))
        else:
            self.new_input(self.dt, self.rand_shape())
        if r.random() < 0.3:
            self.new_input(self.dt, self.rand_shape())
        fns = [f for f, _ in self.OPS]
        weights = [w for _, w in self.OPS]
        target = r.randint(3, 14)
        tries = 0
        while len(self.nodes) < target and tries < 200:
            tries += 1
            f = r.choices(fns, weights)[0]
            if self.dt in INTS and f in (Component.op_conv, Component.op_pool, Component.op_resize,
                                         Component.op_matmul, Component.op_norm, Component.op_softmax) \
                    and r.random() < 0.8:
                continue
            f(self)
            big = self.vals[-1]
            if big.dt in FLOATS and big.bound > LIMIT:
                self.shrink(big, r.choice((1.0, 4.0, 10.0)))
            if big.dt in INTS and big.bound > 1000:
                return self.gen_restart()
        # outputs: the leaves, plus now and then a value that nodes also read
        produced = [v for v in self.vals if not v.name.startswith(self.p + "x")]
        leaves = [v for v in produced if v.uses == 0]
        outs = leaves[-4:] if leaves else produced[-1:]
        inner = [v for v in produced if v.uses > 0 and v not in outs]
        if inner and r.random() < 0.3:
            outs.append(r.choice(inner))
        if not outs:
            outs = [self.emit("Identity", [self.vals[0]], self.vals[0].dt, self.vals[0].shape, self.vals[0].lo,
                              self.vals[0].hi, True)]
        self.outputs = [f"  output %{v.name}" for v in outs]
        self.out_vals = outs
        return self

    def gen_restart(self):
        self.__init__(self.seed * 7919 + 1)
        self.p = f"s{self.seed}_"
        return self.gen()

    def tol(self):
        # an f64 output computed from f32 values carries f32 rounding
        return TOL["f32"] if any(v.dt == "f32" for v in self.vals) else TOL["f64"]


def gen_component(seed):
    c = Component(seed)
    return c.gen()


def pack(comps, name):
    """Text of one graph holding the components side by side (disjoint, each with its inputs and outputs)."""
    lines = []
    for c in comps:
        lines += c.ranges
    atol = max(c.tol()[0] for c in comps)
    rtol = max(c.tol()[1] for c in comps)
    lines.append(f"#! tol {atol:g} {rtol:g}")
    lines.append(f"graph {name} {{")
    for c in comps:
        lines += c.inputs
    for c in comps:
        lines += c.consts
    for c in comps:
        lines += c.nodes
    for c in comps:
        lines += c.outputs
    lines.append("}")
    return "\n".join(lines) + "\n"


def component_text(seed):
    return pack([gen_component(seed)], f"difftest_{seed}")


if __name__ == "__main__":
    import sys
    for s in sys.argv[1:] or ["1"]:
        sys.stdout.write(component_text(int(s)))
