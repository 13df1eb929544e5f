"""Randomized gradient-check cases of the math family (collected by gen_cases.py):
variadic Sum/Mean over broadcasting inputs, PRelu with slope shapes that
broadcast to X, the activations with random attributes, inverse and
hyperbolic trigonometry inside their domains, float Mod with broadcasting,
CastLike; Hardmax and MeanVarianceNormalization (vision) and Det (linalg)
with random axes and batch shapes."""
from gen_cases import broadcast_pair, shape_str

# op: (grad-range or None); inputs stay inside the domain and off the poles
TRIG = {"Acos": (-0.9, 0.9), "Asin": (-0.9, 0.9), "Atanh": (-0.9, 0.9), "Acosh": (1.2, 3), "Tan": (-1.2, 1.2),
        "Asinh": None, "Atan": None, "Cosh": None, "Sinh": None}
PLAIN = ["Sign", "Round", "Softsign"]


def rand_dims(rng, lo=1, hi=4):
    return [int(rng.integers(1, 5)) for _ in range(int(rng.integers(lo, hi + 1)))]


def variadic_shapes(rng, n):
    """n shapes that broadcast together: each drops some leading dims and sets some dims to 1."""
    full = rand_dims(rng, 1, 4)
    out = []
    for _ in range(n):
        s = [1 if rng.random() < 0.3 else d for d in full]
        if len(s) > 1 and rng.random() < 0.3:
            s = s[int(rng.integers(1, len(s))):]
        out.append(s)
    return out


def slope_shape(rng, x):
    """A shape that broadcasts (unidirectionally) to x: a suffix of x with some dims 1, or [1]."""
    u = rng.random()
    if u < 0.2:
        return [1]
    s = x[int(rng.integers(0, len(x))):]
    return [1 if rng.random() < 0.4 else d for d in s]


def graph(inputs, body, ranges=()):
    head = "".join(f"#! grad-range %{n} {lo:g} {hi:g}\n" for n, lo, hi in ranges)
    ins = "".join(f"  input %{n}: {t}{shape_str(s)}\n" for n, t, s in inputs)
    return f"{head}graph g {{\n{ins}{body}  output %y\n}}\n"


def cases(rng):
    for op in ("Sum", "Mean"):
        for k, n in enumerate((1, 2, 3, 4)):
            shapes = variadic_shapes(rng, n)
            names = [f"x{i}" for i in range(n)]
            yield f"{op.lower()}_{n}in_{k}", graph([(nm, "f32", s) for nm, s in zip(names, shapes)],
                                                   f"  %y = {op}({', '.join('%' + nm for nm in names)})\n")
    for k in range(4):
        x = rand_dims(rng, 1, 4)
        yield f"prelu_{k}", graph([("x", "f32", x), ("slope", "f32", slope_shape(rng, x))],
                                  "  %y = PRelu(%x, %slope)\n", [("slope", -1, 1)])
    for op in PLAIN:
        yield op.lower(), graph([("x", "f32", rand_dims(rng))], f"  %y = {op}(%x)\n")
    for k in range(2):
        alpha = round(float(rng.uniform(-1, 1)), 3)
        yield f"thresholdedrelu_{k}", graph([("x", "f32", rand_dims(rng))],
                                            f"  %y = ThresholdedRelu(%x) {{alpha={alpha}}}\n")
        alpha = round(float(rng.uniform(0.3, 2)), 3)
        yield f"celu_{k}", graph([("x", "f32", rand_dims(rng))], f"  %y = Celu(%x) {{alpha={alpha}}}\n")
        bias, lambd = round(float(rng.uniform(-1, 1)), 3), round(float(rng.uniform(0, 1.5)), 3)
        yield f"shrink_{k}", graph([("x", "f32", rand_dims(rng))],
                                   f"  %y = Shrink(%x) {{bias={bias}, lambd={lambd}}}\n")
    for op, r in TRIG.items():
        yield op.lower(), graph([("x", "f32", rand_dims(rng))], f"  %y = {op}(%x)\n", [("x", *r)] if r else ())
    # float Mod (fmod=1, the only float form): broadcasting, divisors of either sign away from 0
    for k in range(3):
        a, b = broadcast_pair(rng)
        blo, bhi = (0.5, 2) if k % 2 == 0 else (-2, -0.5)
        yield f"mod_fmod_{k}", graph([("a", "f32", a), ("b", "f32", b)], "  %y = Mod(%a, %b) {fmod=1}\n",
                                     [("a", -5, 5), ("b", blo, bhi)])
    # CastLike to f64 (a cast to a narrower float rounds the loss below the finite-difference step),
    # and to its own dtype; the target_type operand (any shape) gets no gradient
    x = rand_dims(rng)
    yield "castlike_f64", graph([("x", "f32", x), ("like", "f64", rand_dims(rng))],
                                "  %c = CastLike(%x, %like)\n  %y = Mul(%c, %c)\n")
    yield "castlike_same", graph([("x", "f64", x), ("like", "f64", [1])], "  %y = CastLike(%x, %like)\n")
    # Hardmax over a random axis (continuous random inputs: no ties)
    for k in range(2):
        x = rand_dims(rng, 1, 3)
        axis = int(rng.integers(-len(x), len(x)))
        yield f"hardmax_{k}", graph([("x", "f32", x)], f"  %h = Hardmax(%x) {{axis={axis}}}\n  %y = Mul(%h, %x)\n")
    # MeanVarianceNormalization over a random non-empty set of axes (some negative), each slice >= 2 elements
    for k in range(3):
        x = [int(rng.integers(2, 4)) for _ in range(int(rng.integers(2, 5)))]
        r = len(x)
        axes = sorted(set(int(a) for a in rng.choice(r, size=int(rng.integers(1, r + 1)), replace=False)))
        axes = [a - r if rng.random() < 0.3 else a for a in axes]
        yield f"mvn_{k}", graph([("x", ("f32", "f64")[k % 2], x)],
                                f"  %y = MeanVarianceNormalization(%x) {{axes=[{','.join(map(str, axes))}]}}\n")
    # Det of square matrices 1x1 .. 4x4 with random batch dims
    for m in (1, 2, 3, 4):
        x = rand_dims(rng, 0, 2) + [m, m]
        yield f"det_{m}", graph([("x", "f32", x)], "  %y = Det(%x)\n")
