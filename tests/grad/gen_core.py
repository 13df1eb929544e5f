"""Randomized gradient-check cases of the elementwise, reduce and linalg families
(collected by gen_cases.py)."""
from gen_cases import broadcast_pair, shape_str

BINARY = ["Add", "Sub", "Mul", "Div", "Pow", "Max", "Min"]
UNARY = ["Abs", "Neg", "Exp", "Log", "Sqrt", "Reciprocal", "Relu", "Sigmoid", "Tanh", "Erf", "LeakyRelu", "Elu",
         "Selu", "HardSigmoid", "HardSwish", "Softplus", "Floor", "Ceil", "Sin", "Cos", "Identity"]
POSITIVE = {"Log", "Sqrt", "Reciprocal", "Pow"}  # inputs drawn from [0.5, 2]
REDUCE = ["ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceL1", "ReduceL2", "ReduceLogSum",
          "ReduceLogSumExp", "ReduceProd", "ReduceSumSquare"]


def cases(rng):
    for op in BINARY:
        for k in range(2):
            a, b = broadcast_pair(rng)
            rng_line = "#! grad-range %a 0.5 2\n#! grad-range %b 0.5 2\n" if op in POSITIVE | {"Div"} else ""
            yield f"{op.lower()}_bcast{k}", (
                f"{rng_line}graph g {{\n  input %a: f32{shape_str(a)}\n  input %b: f32{shape_str(b)}\n"
                f"  %y = {op}(%a, %b)\n  output %y\n}}\n")
    for op in UNARY:
        dims = [int(rng.integers(1, 5)) for _ in range(int(rng.integers(1, 4)))]
        rng_line = "#! grad-range %x 0.5 2\n" if op in POSITIVE else ""
        yield f"{op.lower()}", (f"{rng_line}graph g {{\n  input %x: f32{shape_str(dims)}\n  %y = {op}(%x)\n  output %y\n}}\n")
    # Where with a broadcast condition, Clip with bounds, Cast f32->f64->f32
    a, b = broadcast_pair(rng, 3)
    yield "where_bcast", (f"graph g {{\n  input %c: bool{shape_str(b)}\n  input %a: f32{shape_str(a)}\n"
                          f"  input %b: f32{shape_str(b)}\n  %y = Where(%c, %a, %b)\n  output %y\n}}\n")
    yield "clip_bounds", ("graph g {\n  input %x: f32[3,4]\n  const %lo: f32[] = [-0.5]\n  const %hi: f32[] = [0.7]\n"
                          "  %y = Clip(%x, %lo, %hi)\n  output %y\n}\n")
    # (a Cast to f32 would round the loss below the finite-difference step: f32 -> f64 only)
    yield "cast_chain", ("graph g {\n  input %x: f32[2,3]\n  %d = Cast(%x) {to=11}\n  %y = Mul(%d, %d)\n"
                         "  output %y\n}\n")
    for op in REDUCE:
        r = int(rng.integers(1, 5))
        dims = [int(rng.integers(1, 5)) for _ in range(r)]
        axes = sorted(set(int(x) % r for x in rng.integers(-r, r, size=int(rng.integers(1, r + 1)))))
        axes = [a - r if rng.random() < 0.3 else a for a in axes]  # some negative, none twice
        keep = int(rng.integers(0, 2))
        pos = "#! grad-range %x 0.5 2\n" if op in ("ReduceLogSum", "ReduceProd", "ReduceL2") else ""
        if op == "ReduceSum":
            body = (f"  const %axes: i64[{len(axes)}] = [{', '.join(map(str, axes))}]\n"
                    f"  %y = ReduceSum(%x, %axes) {{keepdims={keep}}}\n")
        else:
            body = f"  %y = {op}(%x) {{axes=[{','.join(map(str, axes))}], keepdims={keep}}}\n"
        yield f"{op.lower()}", f"{pos}graph g {{\n  input %x: f32{shape_str(dims)}\n{body}  output %y\n}}\n"
    # MatMul: batch broadcasting and 1-D operands; Gemm: every transpose pair, C broadcast
    for k, (sa, sb) in enumerate([([2, 1, 3, 4], [5, 4, 2]), ([4], [2, 4, 3]), ([3, 4], [4]), ([2, 3, 4], [4, 5])]):
        yield f"matmul_{k}", (f"graph g {{\n  input %a: f32{shape_str(sa)}\n  input %b: f32{shape_str(sb)}\n"
                              f"  %y = MatMul(%a, %b)\n  output %y\n}}\n")
    for ta in (0, 1):
        for tb in (0, 1):
            m, kk, n = 3, 4, 5
            sa = [kk, m] if ta else [m, kk]
            sb = [n, kk] if tb else [kk, n]
            sc = [[n], [1, n], [m, 1], []][2 * ta + tb]
            yield f"gemm_t{ta}{tb}", (f"graph g {{\n  input %a: f32{shape_str(sa)}\n  input %b: f32{shape_str(sb)}\n"
                                      f"  input %c: f32{shape_str(sc)}\n"
                                      f"  %y = Gemm(%a, %b, %c) {{alpha=0.7, beta=1.3, transA={ta}, transB={tb}}}\n"
                                      f"  output %y\n}}\n")
