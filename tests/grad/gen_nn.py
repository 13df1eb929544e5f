"""Randomized gradient-check cases of the neural-network layers and losses (nn, vision and loss families;
collected by gen_cases.py): convolutions and pools with random strides (1-3), dilations (1-2), groups
(1, 2, depthwise), asymmetric pads, auto_pad, ceil_mode and count_include_pad; softmax axes; batch, layer and
instance normalization; the two losses with every reduction, ignore_index and class weights."""
from gen_cases import shape_str

AUTO_PADS = ["NOTSET", "NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"]


def ints(v):
    return "[" + ",".join(str(int(x)) for x in v) + "]"


def window(rng, sr, dil=True):
    """Kernel, strides, dilations and the spatial input dims of one random window (output >= 1)."""
    k = [int(rng.integers(1, 4)) for _ in range(sr)]
    s = [int(rng.integers(1, 4)) for _ in range(sr)]
    d = [int(rng.integers(1, 3)) if dil else 1 for _ in range(sr)]
    budget = {1: 9, 2: 6, 3: 4}[sr]
    spatial = [max((k[i] - 1) * d[i] + 1, int(rng.integers(2, budget + 1))) for i in range(sr)]
    return k, s, d, spatial


def pad_attrs(rng, sr, k, d):
    """auto_pad or asymmetric pads (each below the effective kernel)."""
    ap = AUTO_PADS[int(rng.integers(0, len(AUTO_PADS)))]
    if ap != "NOTSET":
        return f'auto_pad="{ap}"'
    pads = [int(rng.integers(0, (k[i % sr] - 1) * d[i % sr] + 1)) for i in range(2 * sr)]
    return f"pads={ints(pads)}"


def conv_cases(rng):
    for t in range(9):
        sr = 1 + t % 3
        k, s, d, spatial = window(rng, sr)
        kind = ["1", "2", "dw"][int(rng.integers(0, 3))]
        N = int(rng.integers(1, 3))
        if kind == "1":
            g, C, M = 1, int(rng.integers(1, 4)), int(rng.integers(1, 4))
        elif kind == "2":
            g, C, M = 2, 2 * int(rng.integers(1, 3)), 2 * int(rng.integers(1, 3))
        else:
            C = int(rng.integers(2, 4))
            g, M = C, C * int(rng.integers(1, 3))
        attrs = f"kernel_shape={ints(k)}, strides={ints(s)}, dilations={ints(d)}, group={g}, {pad_attrs(rng, sr, k, d)}"
        yield f"conv{sr}d_g{kind}_{t}", (
            f"graph g {{\n  input %x: f32{shape_str([N, C] + spatial)}\n  input %w: f32{shape_str([M, C // g] + k)}\n"
            f"  input %b: f32[{M}]\n  %y = Conv(%x, %w, %b) {{{attrs}}}\n  output %y\n}}\n")


def convtranspose_cases(rng):
    for t in range(6):
        sr = 1 + t % 3
        k, s, d, _ = window(rng, sr)
        spatial = [int(rng.integers(2, {1: 5, 2: 4, 3: 3}[sr])) for _ in range(sr)]
        g = [1, 2][int(rng.integers(0, 2))]
        C, Mg = g * int(rng.integers(1, 3)), int(rng.integers(1, 3))
        attrs = f"strides={ints(s)}, dilations={ints(d)}, group={g}"
        mode = int(rng.integers(0, 3))
        if mode == 0:
            pads = [int(rng.integers(0, (k[i % sr] - 1) * d[i % sr] + 1)) for i in range(2 * sr)]
            opad = [int(rng.integers(0, s[i])) for i in range(sr)]
            attrs += f", pads={ints(pads)}, output_padding={ints(opad)}"
        elif mode == 1:
            attrs += f', auto_pad="{["SAME_UPPER", "SAME_LOWER"][t % 2]}"'
        else:  # output_shape from full - ek + 1 to full + 2 (past the full output: negative pads)
            full = [s[i] * (spatial[i] - 1) + (k[i] - 1) * d[i] + 1 for i in range(sr)]
            out = [int(rng.integers(max(1, full[i] - (k[i] - 1) * d[i]), full[i] + 3)) for i in range(sr)]
            attrs += f", output_shape={ints(out)}"
        yield f"convtranspose{sr}d_g{g}_{t}", (
            f"graph g {{\n  input %x: f32{shape_str([1, C] + spatial)}\n  input %w: f32{shape_str([C, Mg] + k)}\n"
            f"  input %b: f32[{Mg * g}]\n  %y = ConvTranspose(%x, %w, %b) {{{attrs}}}\n  output %y\n}}\n")


def pool_cases(rng):
    for t in range(8):
        sr = 1 + t % 3
        op = "MaxPool" if t % 2 == 0 else "AveragePool"
        k, s, d, spatial = window(rng, sr, dil=op == "MaxPool")
        N, C = int(rng.integers(1, 3)), int(rng.integers(1, 3))
        attrs = f"kernel_shape={ints(k)}, strides={ints(s)}"
        if op == "MaxPool":
            attrs += f", dilations={ints(d)}"
        pa = pad_attrs(rng, sr, k, d)
        # pads must stay below the kernel for the pools
        if pa.startswith("pads"):
            pads = [int(rng.integers(0, k[i % sr])) for i in range(2 * sr)]
            pa = f"pads={ints(pads)}"
            if rng.random() < 0.6:
                pa += ", ceil_mode=1"
        attrs += ", " + pa
        if op == "AveragePool" and rng.random() < 0.5:
            attrs += ", count_include_pad=1"
        outs = "%y, %i" if op == "MaxPool" and t % 4 == 0 else "%y"
        yield f"{op.lower()}{sr}d_{t}", (
            f"graph g {{\n  input %x: f32{shape_str([N, C] + spatial)}\n  {outs} = {op}(%x) {{{attrs}}}\n"
            f"  output %y\n}}\n")
    for op in ("GlobalAveragePool", "GlobalMaxPool"):
        for sr in (1, 2):
            dims = [int(rng.integers(1, 3)), int(rng.integers(1, 4))] + [int(rng.integers(2, 5)) for _ in range(sr)]
            yield f"{op.lower()}{sr}d", (f"graph g {{\n  input %x: f32{shape_str(dims)}\n  %y = {op}(%x)\n"
                                         f"  output %y\n}}\n")


def softmax_cases(rng):
    for op in ("Softmax", "LogSoftmax"):
        for t in range(2):
            r = int(rng.integers(1, 4))
            dims = [int(rng.integers(1, 5)) for _ in range(r)]
            axis = int(rng.integers(-r, r))
            yield f"{op.lower()}_{t}", (f"graph g {{\n  input %x: f32{shape_str(dims)}\n"
                                        f"  %y = {op}(%x) {{axis={axis}}}\n  output %y\n}}\n")


def norm_cases(rng):
    for t in range(4):
        r = int(rng.integers(2, 5))
        dims = [int(rng.integers(2, 4)) for _ in range(r)]
        C = dims[1]
        eps = [1e-5, 1e-3, 0.1][int(rng.integers(0, 3))]
        train = t % 2
        head = "#! grad-range %v 0.5 2\n"
        io = "".join(f"  input %{n}: f32[{C}]\n" for n in "sbmv")
        if train:
            body = (f"  %y, %rm, %rv = BatchNormalization(%x, %s, %b, %m, %v) {{training_mode=1, epsilon={eps}, "
                    f"momentum=0.7}}\n  output %y\n  output %rm\n  output %rv\n")
        else:
            body = f"  %y = BatchNormalization(%x, %s, %b, %m, %v) {{epsilon={eps}}}\n  output %y\n"
        yield f"batchnorm_{'train' if train else 'infer'}{t}", (
            f"{head}graph g {{\n  input %x: f32{shape_str(dims)}\n{io}{body}}}\n")
    for t in range(5):
        r = int(rng.integers(1, 4))
        dims = [int(rng.integers(2, 4)) for _ in range(r)]
        axis = int(rng.integers(-r, r))
        a = axis % r
        norm = dims[a:]
        # Scale exactly the normalized shape, or a broadcast suffix of it
        sshape = norm if t % 2 == 0 else [1 if rng.random() < 0.5 else x for x in norm[int(rng.integers(0, len(norm))):]]
        bshape = norm if t % 3 == 0 else norm[len(norm) - 1:]
        stats = t % 2 == 1
        outs = "%y, %mu, %rs" if stats else "%y"
        extra = "  output %mu\n  output %rs\n" if stats else ""
        yield f"layernorm_{t}", (
            f"graph g {{\n  input %x: f32{shape_str(dims)}\n  input %s: f32{shape_str(sshape)}\n"
            f"  input %b: f32{shape_str(bshape)}\n  {outs} = LayerNormalization(%x, %s, %b) {{axis={axis}, "
            f"epsilon=0.01}}\n  output %y\n{extra}}}\n")
    for t in range(2):
        dims = [int(rng.integers(1, 3)), int(rng.integers(1, 4))] + [int(rng.integers(2, 4)) for _ in range(1 + t)]
        C = dims[1]
        yield f"instancenorm_{t}", (
            f"graph g {{\n  input %x: f32{shape_str(dims)}\n  input %s: f32[{C}]\n  input %b: f32[{C}]\n"
            f"  %y = InstanceNormalization(%x, %s, %b) {{epsilon=0.01}}\n  output %y\n}}\n")
    yield "dropout_inference", ("graph g {\n  input %x: f32[2,3]\n  const %r: f32[] = [0.3]\n"
                                "  %y, %mask = Dropout(%x, %r)\n  output %y\n}\n")


def loss_cases(rng):
    t = 0
    for op in ("SoftmaxCrossEntropyLoss", "NegativeLogLikelihoodLoss"):
        for red in ("mean", "sum", "none"):
            for variant in range(2):
                N, C = int(rng.integers(2, 4)), int(rng.integers(2, 5))
                ks = [int(rng.integers(1, 4)) for _ in range(int(rng.integers(0, 3)))]
                weighted, ignore = variant == 0 or rng.random() < 0.3, variant == 1 or rng.random() < 0.3
                lo = 0
                attrs = f'reduction="{red}"'
                if ignore:
                    ii = int(rng.integers(0, C)) if rng.random() < 0.5 else -1
                    lo = min(lo, ii)
                    attrs += f", ignore_index={ii}"
                head = f"#! range %t {lo} {C - 1}\n"
                ins = f"  input %x: f32{shape_str([N, C] + ks)}\n  input %t: i64{shape_str([N] + ks)}\n"
                args = "%x, %t"
                if weighted:
                    head += "#! grad-range %w 0.2 2\n"
                    ins += f"  input %w: f32[{C}]\n"
                    args += ", %w"
                outs, extra = "%y", ""
                if op == "SoftmaxCrossEntropyLoss" and variant == 1:
                    outs, extra = "%y, %lp", "  output %lp\n"
                yield f"{op.lower()}_{red}_{t}", (f"{head}graph g {{\n{ins}  {outs} = {op}({args}) {{{attrs}}}\n"
                                                 f"  output %y\n{extra}}}\n")
                t += 1


def cases(rng):
    yield from conv_cases(rng)
    yield from convtranspose_cases(rng)
    yield from pool_cases(rng)
    yield from softmax_cases(rng)
    yield from norm_cases(rng)
    yield from loss_cases(rng)
