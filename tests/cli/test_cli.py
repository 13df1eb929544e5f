#!/usr/bin/python3
"""test_cli.py — the driver's optimization levels, reports and pictures.

    /usr/bin/python3 tests/cli/test_cli.py --graphc BUILD/graphc [-v]

Checks, on the small graphs beside this file:

* -O0 / -O2 on compile, run and dump; anything else is a one-line error.
* `compile --report`: one line per pass that ran (the -O0 passes at -O0, all
  of them at -O2, in pipeline order), then `kernels: N` and
  `arena: A bytes, lower bound: L bytes, no-reuse: S bytes`, with the
  hand-computed -O0 plan of chain.gir (see its comment).
* `--print-before` / `--print-after` on dump and compile.
* `run -O2` computes what `run` (the graph as loaded) computes.
* `dump --format=dot` renders with Graphviz's `dot -Tsvg` (scripts/setup.sh
  installs graphviz; the test fails without it): one box per node, edges
  labelled dtype[shape], labels escaped, and at -O2 one `cluster_N` per fused
  node of the -O2 text IR, holding one box per op named in its `expr` /
  `epilogue` expression (parsed here independently).
* `dump --memory-plan=svg` parses as XML: one rectangle per buffer, placed as
  the hand-computed plan of chain.gir says, and no two rectangles of buffers
  live at the same step overlap; the 10 largest buffers carry their legend
  number inside their rectangle and a legend row (name, size, steps,
  offset), and node workspaces a legend row of their own.
* `dump` elides constants over 64 elements by default; `--full` prints them
  and round-trips through the parser.
* Every unsupported op of an ONNX model is reported at once, one line each
  (node, op, domain), by compile, dump and run.
* `graphc --version` / `graphc version` print CMakeLists.txt's version and whether --ops files are read
  with libclang.
* `compile` into a graphc output folder keeps the files graphc did not write
  there (and the old model's files and build products go); it refuses to
  overwrite a user's file that the new output would take, and a folder that
  is no graphc output.
* Every output is deterministic (two runs, same bytes).
* Training flags: `--grad` outputs (loss, then grad_<param> in model
  order, or in --wrt order) from compile --emit-main and run agree; a
  --print-after=autodiff dump holds state lines and the backward nodes;
  `--train --report` reports the state bytes and writes the training API;
  every misuse (a loss that is not a float scalar, an unknown --wrt name,
  --optimizer without --train, a bad optimizer key, --emit-main with
  --train, --loss naming no output) is a one-line error with exit status 1
  and leaves no folder.
* Targets: `--target=c` is the default and the only backend so far; an
  unknown target is a one-line error that lists the known ones and leaves no
  folder; the C output folder of examples/mlp.gir holds exactly the runtime
  files its ops call (Gemm: linalg; Softmax: nn, which needs linalg), and
  NAME.c includes their sources.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
CHAIN = os.path.join(HERE, "chain.gir")
FUSABLE = os.path.join(HERE, "fusable.gir")
GRAPHC = None
SVG = "{http://www.w3.org/2000/svg}"

REPORT_PASS_RE = re.compile(r"^pass (\S+): (\d+) nodes, (\d+\.\d) ms$")
KERNELS_RE = re.compile(r"^kernels: (\d+)$")
ARENA_RE = re.compile(r"^arena: (\d+) bytes, lower bound: (\d+) bytes, no-reuse: (\d+) bytes$")


def graphc(*args, check=True):
    p = subprocess.run([GRAPHC] + [str(a) for a in args], capture_output=True, text=True, timeout=120)
    if check and p.returncode != 0:
        raise AssertionError(f"graphc {' '.join(map(str, args))} failed ({p.returncode}): {p.stderr.strip()}")
    return p


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def pipeline_passes():
    """(name, o2_only) pairs from `graphc compile --help`, less the passes that run only when an option asks
    (marked +: lower-precision)."""
    text = graphc("compile", "--help").stdout
    line = [l for l in text.splitlines() if l.startswith("passes, in pipeline order")][0]
    names = line.split("):", 1)[1].split()
    return [(n.rstrip("*"), n.endswith("*")) for n in names if not n.endswith("+")]


def parse_report(text):
    lines = text.splitlines()
    passes = []
    for l in lines[:-2]:
        m = REPORT_PASS_RE.match(l)
        assert m, f"not a pass report line: {l!r}"
        passes.append(m.group(1))
    k = KERNELS_RE.match(lines[-2])
    a = ARENA_RE.match(lines[-1])
    assert k and a, f"report does not end with kernels/arena lines: {lines[-2:]!r}"
    return passes, int(k.group(1)), tuple(int(x) for x in a.groups())


# ---- the text IR, read just enough: node lines and their fused expressions ----

NODE_RE = re.compile(r'^\s*(?:("(?:[^"\\]|\\.)*"|[A-Za-z0-9_.$/\-]+):\s*)?%.*?=\s*([A-Za-z_][A-Za-z0-9_]*)\(')
EXPR_ATTR_RE = re.compile(r'\b(expr|epilogue)\s*=\s*"((?:[^"\\]|\\.)*)"')


def text_nodes(ir):
    """[(op, fused expression or None, is_epilogue)] in node order."""
    out = []
    for line in ir.splitlines():
        s = line.strip()
        if not s or s.startswith(("#", "const ", "input ", "output ", "graph ", "}")):
            continue
        m = NODE_RE.match(line)
        if not m:
            continue
        e = EXPR_ATTR_RE.search(line)
        expr = bytes(e.group(2), "utf-8").decode("unicode_escape") if e else None
        out.append((m.group(2), expr, bool(e and e.group(1) == "epilogue")))
    return out


def expr_ops(expr):
    """The op names called in a fused expression: NAME before '(' (after an
    optional [attribute] block)."""
    s = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)
    while True:  # drop [..] blocks, innermost first
        t = re.sub(r"\[[^\[\]]*\]", "", s)
        if t == s:
            break
        s = t
    return sorted(re.findall(r"([A-Za-z_][A-Za-z0-9_.]*)\s*\(", s))


# ---- SVG helpers ----

def svg_texts(g):
    return [t.text or "" for t in g.iter(SVG + "text")]


def dot_svg(dot_text):
    p = subprocess.run(["dot", "-Tsvg"], input=dot_text, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, f"dot -Tsvg failed: {p.stderr}"
    return ET.fromstring(p.stdout)


def groups(root, cls):
    return [g for g in root.iter(SVG + "g") if g.get("class") == cls]


class OptLevels(unittest.TestCase):
    def test_bad_level_is_one_line_error(self):
        for cmd in (["compile", CHAIN, "-o", "x"], ["dump", CHAIN], ["run", CHAIN, "x"]):
            p = graphc(*cmd, "-O3", check=False)
            self.assertEqual(p.returncode, 1)
            self.assertEqual(p.stderr, f"graphc: error: {cmd[0]}: unknown optimization level '-O3' "
                                       "(expected -O0 or -O2)\n")

    def test_help_documents_options(self):
        for cmd, opts in (("compile", ["-O0, -O2", "--print-after", "--print-before", "--report"]),
                          ("dump", ["-O0, -O2", "--print-after", "--print-before", "--format=FORMAT",
                                    "--memory-plan=FORMAT"]),
                          ("run", ["-O0, -O2"])):
            text = graphc(cmd, "--help").stdout
            for o in opts:
                self.assertIn(o, text, f"graphc {cmd} --help does not mention {o}")

    def test_report_levels(self):
        passes = pipeline_passes()
        self.assertEqual(passes[0][0], "infer-shapes")
        with tempfile.TemporaryDirectory() as t:
            r0 = parse_report(graphc("compile", CHAIN, "-o", f"{t}/o0", "-O0", "--report").stdout)
            r2 = parse_report(graphc("compile", CHAIN, "-o", f"{t}/o2", "--report").stdout)
            r2b = parse_report(graphc("compile", CHAIN, "-o", f"{t}/o2b", "-O2", "--report").stdout)
        self.assertEqual(r0[0], [n for n, o2 in passes if not o2])
        self.assertEqual(r2[0], [n for n, _ in passes])
        self.assertEqual(r2b[0], r2[0], "-O2 is the default")
        # -O0: every node is a kernel; the plan is the hand-computed one
        self.assertEqual(r0[1], 4)
        self.assertEqual(r0[2], (2048, 2048, 3072))
        # -O2 never does worse, and its figures are consistent
        self.assertLessEqual(r2[1], r0[1])
        arena, lower, no_reuse = r2[2]
        self.assertLessEqual(arena, r0[2][0])
        self.assertLessEqual(lower, arena)
        self.assertLessEqual(arena, no_reuse)

    def test_compile_levels_build_the_same_function(self):
        # both levels compile; the generated sources differ only if a pass changed the graph
        with tempfile.TemporaryDirectory() as t:
            graphc("compile", FUSABLE, "-o", f"{t}/o0", "-O0")
            graphc("compile", FUSABLE, "-o", f"{t}/o2", "-O2")
            self.assertTrue(os.path.exists(f"{t}/o0/fusable.c"))
            self.assertTrue(os.path.exists(f"{t}/o2/fusable.c"))

    def test_run_levels_agree(self):
        rng = np.random.default_rng(5)
        with tempfile.TemporaryDirectory() as t:
            np.save(f"{t}/x.npy", rng.uniform(-2, 2, (1, 2, 6, 6)).astype(np.float32))
            np.save(f"{t}/r.npy", rng.uniform(-2, 2, (1, 4, 6, 6)).astype(np.float32))
            outs = {}
            for lvl in ([], ["-O0"], ["-O2"]):
                d = f"{t}/out{''.join(lvl)}"
                graphc("run", FUSABLE, d, f"{t}/x.npy", f"{t}/r.npy", *lvl)
                outs[tuple(lvl)] = np.load(f"{d}/output_0.npy")
            ref = outs[()]
            self.assertEqual(ref.shape, (1, 4, 6, 6))
            for k, v in outs.items():
                np.testing.assert_allclose(v, ref, rtol=1e-5, atol=1e-5, err_msg=f"run {k}")

    def test_print_before_and_after(self):
        p = graphc("dump", CHAIN, "-O0", "--print-before=plan-memory", "--print-after=infer-shapes")
        heads = [l for l in p.stdout.splitlines() if l.startswith("# ")]
        self.assertEqual(heads, ["# after infer-shapes", "# before plan-memory"])
        # a pass the level skips prints nothing
        p = graphc("dump", CHAIN, "-O0", "--print-before=simplify")
        self.assertEqual(p.stdout, "")
        p = graphc("dump", CHAIN, "--print-before=simplify")
        self.assertTrue(p.stdout.startswith("# before simplify\ngraph chain {"), p.stdout[:80])
        p = graphc("dump", CHAIN, "-O0", "--print-before=all")
        heads = [l for l in p.stdout.splitlines() if l.startswith("# before")]
        self.assertEqual(heads, ["# before infer-shapes", "# before fold-constants", "# before autodiff", "# before plan-memory"])
        # compile writes the dumps to stderr
        with tempfile.TemporaryDirectory() as t:
            p = graphc("compile", CHAIN, "-o", f"{t}/o", "--print-before=fold-constants")
            self.assertTrue(p.stderr.startswith("# before fold-constants\n"), p.stderr[:80])
        p = graphc("dump", CHAIN, "--print-before=nosuch", check=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn("unknown pass 'nosuch' for --print-before", p.stderr)


class Dot(unittest.TestCase):
    def test_dot_is_installed(self):
        self.assertIsNotNone(shutil.which("dot"), "Graphviz 'dot' is missing: run scripts/setup.sh")

    def test_dot_o0_boxes_edges_escapes(self):
        text = graphc("dump", FUSABLE, "--format=dot", "-O0").stdout
        self.assertEqual(text, graphc("dump", FUSABLE, "--format=dot", "-O0").stdout, "deterministic")
        root = dot_svg(text)
        nodes = {g.find(SVG + "title").text: svg_texts(g) for g in groups(root, "node")}
        # 6 ops, inputs x r, constants w b, one output
        ops = sorted(t[0] for k, t in nodes.items() if re.fullmatch(r"n\d+", k))
        self.assertEqual(ops, sorted(["Conv", "Add", "Relu", "Sigmoid", "Mul", "Add"]))
        self.assertEqual(sorted(t[0] for k, t in nodes.items() if k.startswith("v")), ["b", "r", "w", "x"])
        self.assertEqual([t for k, t in nodes.items() if k.startswith("out")], [["output", "y"]])
        self.assertIn(["Relu", 're"lu\\1'], nodes.values(), "the quoted node name survives escaping")
        self.assertEqual(groups(root, "cluster"), [], "nothing is fused at -O0")
        edges = groups(root, "edge")
        # every node input and the graph output: Conv 3, Add 2, Relu 1, Sigmoid 1, Mul 2, Add 2, output 1
        self.assertEqual(len(edges), 12)
        labels = sorted(svg_texts(e)[0] for e in edges)
        self.assertEqual(labels.count("f32[1,4,6,6]"), 9)
        self.assertIn("f32[4,2,3,3]", labels)
        self.assertIn("f32[1,2,6,6]", labels)

    def test_dot_o2_clusters(self):
        ir = graphc("dump", FUSABLE, "--print-after=plan-memory").stdout
        fused = [(i, op, e, epi) for i, (op, e, epi) in enumerate(text_nodes(ir)) if e]
        self.assertTrue(fused, "-O2 fused nothing in fusable.gir (the Conv+Add+Relu epilogue and the "
                               "Mul/Sigmoid/Add tree are what fuse-epilogue and fuse-elementwise exist for)")
        text = graphc("dump", FUSABLE, "--format=dot").stdout
        self.assertEqual(text, graphc("dump", FUSABLE, "--format=dot").stdout, "deterministic")
        root = dot_svg(text)
        clusters = groups(root, "cluster")
        self.assertEqual(sorted(c.find(SVG + "title").text for c in clusters),
                         sorted(f"cluster_{k}" for k in range(len(fused))))
        nodes = {g.find(SVG + "title").text: svg_texts(g) for g in groups(root, "node")}
        for k, (i, op, expr, epi) in enumerate(fused):
            members = sorted(t[0] for name, t in nodes.items() if re.fullmatch(rf"n{i}_\d+", name))
            self.assertEqual(members, expr_ops(expr), f"cluster of node {i} ({op}, {expr!r})")
            self.assertEqual(f"n{i}" in nodes, epi, f"node {i}: the op's own box is drawn for epilogues only")
            ctext = [svg_texts(c) for c in clusters if c.find(SVG + "title").text == f"cluster_{k}"][0]
            self.assertIn(f"{op} + epilogue" if epi else op, ctext)

    def test_dot_format_errors(self):
        p = graphc("dump", CHAIN, "--format=png", check=False)
        self.assertEqual((p.returncode, p.stderr),
                         (1, "graphc: error: dump: unknown --format 'png' (expected text or dot)\n"))
        p = graphc("dump", CHAIN, "--format=dot", "--print-after=all", check=False)
        self.assertEqual(p.returncode, 1)


class MemoryPlan(unittest.TestCase):
    def rects(self, model, *opts):
        text = graphc("dump", model, "--memory-plan=svg", *opts).stdout
        self.assertEqual(text, graphc("dump", model, "--memory-plan=svg", *opts).stdout, "deterministic")
        root = ET.fromstring(text)
        out = []
        for r in root.iter(SVG + "rect"):
            if r.get("class") not in ("buffer", "workspace"):
                continue
            title = r.find(SVG + "title").text
            m = re.fullmatch(r"(.*): bytes \[(\d+), (\d+)\) \((\d+) bytes\), steps (\d+)\.\.(\d+)", title)
            self.assertTrue(m, title)
            x, y, w, h = (float(r.get(k)) for k in ("x", "y", "width", "height"))
            out.append(dict(name=m.group(1), first=int(m.group(5)), last=int(m.group(6)),
                            x=x, y=y, w=w, h=h))
        return root, out

    def test_chain_plan_o0(self):
        root, rs = self.rects(CHAIN, "-O0")
        by = {r["name"]: r for r in rs}
        self.assertEqual(sorted(by), ["a", "b", "c"])
        self.assertEqual([(by[n]["first"], by[n]["last"]) for n in "abc"], [(0, 1), (1, 2), (2, 3)])
        a, b, c = by["a"], by["b"], by["c"]
        # two steps each; b starts one step after a; c where a ends
        self.assertAlmostEqual(a["w"], b["w"])
        self.assertAlmostEqual(a["w"], c["w"])
        self.assertAlmostEqual(b["x"], a["x"] + a["w"] / 2)
        self.assertAlmostEqual(c["x"], a["x"] + a["w"])
        # 1024 bytes each; c reuses a's bytes, b sits on top of a; together the arena (2048)
        self.assertAlmostEqual(a["h"], b["h"])
        self.assertAlmostEqual((a["y"], a["h"]), (c["y"], c["h"]))
        self.assertAlmostEqual(b["y"] + b["h"], a["y"])
        arena = [l for l in root.iter(SVG + "line") if l.get("class") == "arena"]
        self.assertEqual(len(arena), 1)
        self.assertAlmostEqual(float(arena[0].get("y1")), b["y"])
        texts = [t.text for t in root.iter(SVG + "text")]
        self.assertIn("schedule step", texts)
        self.assertIn("arena 2048 bytes", texts)
        self.assertTrue(any(t and t.startswith("bytes") for t in texts))

    def test_no_overlap(self):
        for model, opts in ((FUSABLE, ["-O0"]), (FUSABLE, []), (CHAIN, [])):
            _, rs = self.rects(model, *opts)
            plan = graphc("dump", model, "--memory-plan=text", *opts).stdout.splitlines()
            self.assertEqual(len(rs), len([l for l in plan if not l.startswith("#")]))
            for i, p in enumerate(rs):
                for q in rs[i + 1:]:
                    if p["last"] < q["first"] or q["last"] < p["first"]:
                        continue
                    eps = 1e-6
                    apart = p["y"] + p["h"] <= q["y"] + eps or q["y"] + q["h"] <= p["y"] + eps
                    self.assertTrue(apart, f"{model} {opts}: {p['name']} and {q['name']} overlap")

    def test_workspace_drawn(self):
        _, rs = self.rects(FUSABLE, "-O0")
        ws = [r for r in rs if r["name"].endswith("(workspace)")]
        self.assertEqual([r["name"] for r in ws], ["conv1 (workspace)"])
        self.assertEqual((ws[0]["first"], ws[0]["last"]), (0, 0))

    def test_largest_buffers_labelled(self):
        # 13 buffers of growing size (b1 16+16 floats ... b13 14*16), planned at -O0
        with tempfile.TemporaryDirectory() as t:
            gir = os.path.join(t, "grow.gir")
            with open(gir, "w") as f:
                f.write(GROW)
            root, rs = self.rects(gir, "-O0")
            plan = [l.split() for l in graphc("dump", gir, "-O0", "--memory-plan=text").stdout.splitlines()
                    if not l.startswith("#")]
        self.assertEqual(len(plan), 13)
        want = sorted(plan, key=lambda p: -int(p[1]))[:10]  # by size; no ties here
        self.assertEqual([p[4] for p in want], [f"b{k}" for k in range(13, 3, -1)])
        legend = [t.text for t in root.iter(SVG + "text") if t.get("class") == "legend-entry"]
        self.assertEqual(legend, [f"{k + 1}. {p[4]}: {int(p[1]) / 1024:.2f} KiB ({p[1]} bytes), steps {p[2]}..{p[3]}, "
                                  f"offset {p[0]}" if int(p[1]) >= 1024 else
                                  f"{k + 1}. {p[4]}: {p[1]} B ({p[1]} bytes), steps {p[2]}..{p[3]}, offset {p[0]}"
                                  for k, p in enumerate(want)])
        self.assertIn("the 10 largest buffers:", svg_texts(root))
        # each key number sits inside its buffer's rectangle; no other rectangle has one
        by = {r["name"]: r for r in rs}
        keys = [(int(t.text), float(t.get("x")), float(t.get("y"))) for t in root.iter(SVG + "text")
                if t.get("class") == "key"]
        self.assertEqual(sorted(k for k, _, _ in keys), list(range(1, 11)))
        for k, x, y in keys:
            r = by[want[k - 1][4]]
            self.assertTrue(r["x"] <= x <= r["x"] + r["w"] and r["y"] <= y - 4 <= r["y"] + r["h"], (k, x, y, r))

    def test_workspaces_in_legend(self):
        root, _ = self.rects(FUSABLE, "-O0")
        ws = [t.text for t in root.iter(SVG + "text") if t.get("class") == "legend-workspaces"]
        self.assertEqual(len(ws), 1)
        self.assertRegex(ws[0], r"^1 node workspace \(dashed grey\), the largest conv1 \(workspace\): .* \(\d+ bytes\)$")

    def test_memory_plan_errors(self):
        p = graphc("dump", CHAIN, "--memory-plan=png", check=False)
        self.assertEqual((p.returncode, p.stderr),
                         (1, "graphc: error: dump: unknown --memory-plan 'png' (expected svg or text)\n"))


GROW = "graph grow {\n  input %x: f32[16]\n" + "".join(
    f"  %b{k} = Concat({'%x' if k == 1 else f'%b{k - 1}'}, %x) {{axis=0}}\n" for k in range(1, 14)) + \
    "  %y = ReduceSum(%b13) {keepdims=0}\n  output %y\n}\n"


class Dump(unittest.TestCase):
    def test_large_constants_elided_by_default(self):
        with tempfile.TemporaryDirectory() as t:
            gir = os.path.join(t, "big.gir")
            with open(gir, "w") as f:
                f.write("graph big {\n  input %x: f32[100]\n  const %w: f32[100] = random(seed=1)\n"
                        "  const %s: f32[3] = [1, 2, 3]\n  %y = Mul(%x, %w)\n  output %y\n}\n")
            short = graphc("dump", gir).stdout
            self.assertIn("const %w: f32[100] = <elided 400 bytes>\n", short)
            self.assertIn("const %s: f32[3] = [1, 2, 3]\n", short, "small constants are printed")
            self.assertEqual(graphc("dump", gir, "--elide").stdout, short)
            full = graphc("dump", gir, "--full").stdout
            self.assertIn('const %w: f32[100] = hex"', full)
            # --full round-trips through the parser; the default dump does not parse
            back = os.path.join(t, "back.gir")
            with open(back, "w") as f:
                f.write(full)
            self.assertEqual(graphc("dump", back, "--full").stdout, full)
            with open(back, "w") as f:
                f.write(short)
            p = graphc("dump", back, check=False)
            self.assertEqual(p.returncode, 1)
            self.assertIn("constant data was elided from this dump", p.stderr)
            p = graphc("dump", gir, "--full", "--format=dot", check=False)
            self.assertEqual((p.returncode, p.stderr),
                             (1, "graphc: error: dump: --full applies to the text IR as loaded only\n"))

    def test_help(self):
        text = graphc("dump", "--help").stdout
        self.assertIn("--full", text)
        self.assertIn("<elided N bytes>", text)


class UnsupportedOps(unittest.TestCase):
    def test_every_unsupported_op_at_once(self):
        import onnx
        from onnx import TensorProto as T, helper
        nodes = [helper.make_node("Relu", ["x"], ["a"], name="relu"),
                 helper.make_node("FancyOp", ["a"], ["b"], name="fancy"),
                 helper.make_node("Abs", ["b"], ["c"], name="abs"),
                 helper.make_node("FusedConv", ["c"], ["d"], name="fused", domain="com.microsoft"),
                 helper.make_node("Sigmoid", ["d"], ["y"])]
        g = helper.make_graph(nodes, "two_bad", [helper.make_tensor_value_info("x", T.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", T.FLOAT, [2])])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])
        with tempfile.TemporaryDirectory() as t:
            path = os.path.join(t, "two_bad.onnx")
            onnx.save(m, path)
            want = [f"graphc: error: {path}: node 'fancy' (FancyOp): unsupported op 'FancyOp' (domain ai.onnx, opset 17)",
                    f"graphc: error: {path}: node 'fused' (FusedConv): unsupported op 'FusedConv' (domain "
                    "'com.microsoft' is not supported: only the default ONNX domain; user operators need --ops FILE.c)"]
            for args in (["compile", path, "-o", os.path.join(t, "out")], ["dump", path], ["run", path, t]):
                p = graphc(*args, check=False)
                self.assertEqual(p.returncode, 1, args)
                self.assertEqual(p.stderr.splitlines(), want, args)
            self.assertFalse(os.path.exists(os.path.join(t, "out")))


class Version(unittest.TestCase):
    def test_version(self):
        with open(os.path.join(HERE, "..", "..", "CMakeLists.txt")) as f:
            v = re.search(r"^project\(graphc VERSION (\d+\.\d+\.\d+)", f.read(), re.M).group(1)
        for arg in ("--version", "version"):
            p = graphc(arg)
            self.assertRegex(p.stdout, rf"\Agraphc {re.escape(v)}\nlibclang: (yes \(reads any C in --ops files\)|"
                                       r"no \(--ops files in the plain form only\))\n\Z")
        self.assertIn("version", graphc("--help").stdout)
        p = graphc("version", "x", check=False)
        self.assertEqual(p.returncode, 1)


class OutputFolder(unittest.TestCase):
    MLP = os.path.join(HERE, "..", "..", "examples", "mlp.gir")

    def listing(self, d):
        return sorted(os.listdir(d))

    def test_recompile_keeps_the_users_files(self):
        with tempfile.TemporaryDirectory() as t:
            out = os.path.join(t, "out")
            graphc("compile", self.MLP, "-o", out, "--emit-main")
            p = subprocess.run(["make", "-s", "-C", out], capture_output=True, text=True)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertIn("mlp_main", os.listdir(out))
            mine = {"app.c": "int main(void) { return 0; }\n", ".gitignore": "*.o\n", "mlp_notes.txt": "mine\n",
                    "results/r.txt": "0.5\n"}
            os.mkdir(os.path.join(out, "results"))
            for name, text in mine.items():
                with open(os.path.join(out, name), "w") as f:
                    f.write(text)
            # recompile under another name and weights mode: mlp's files and build products go
            graphc("compile", self.MLP, "-o", out, "--name", "net", "--weights=c-array")
            fresh = os.path.join(t, "fresh")
            graphc("compile", self.MLP, "-o", fresh, "--name", "net", "--weights=c-array")
            self.assertEqual(self.listing(out), sorted(self.listing(fresh) + [".gitignore", "app.c", "mlp_notes.txt",
                                                                               "results"]))
            for name, text in mine.items():
                with open(os.path.join(out, name)) as f:
                    self.assertEqual(f.read(), text, name)
            for f in self.listing(fresh):
                with open(os.path.join(out, f), "rb") as a, open(os.path.join(fresh, f), "rb") as b:
                    self.assertEqual(a.read(), b.read(), f)
            self.assertEqual([e for e in os.listdir(t) if e not in ("out", "fresh")], [], "no temporary folders left")

    def test_refuses_to_overwrite_a_users_file(self):
        with tempfile.TemporaryDirectory() as t:
            out = os.path.join(t, "out")
            graphc("compile", self.MLP, "-o", out)
            with open(os.path.join(out, "net.h"), "w") as f:
                f.write("/* mine */\n")
            before = {f: read_bytes(os.path.join(out, f)) for f in os.listdir(out)}
            p = graphc("compile", self.MLP, "-o", out, "--name", "net", check=False)
            self.assertEqual(p.returncode, 1)
            self.assertEqual(p.stderr, f"graphc: error: {self.MLP}: output folder '{out}' holds 'net.h', which graphc "
                                       "did not write and would now overwrite; move it away (or choose another --name)\n")
            self.assertEqual({f: read_bytes(os.path.join(out, f)) for f in os.listdir(out)}, before)
            self.assertEqual(os.listdir(t), ["out"], "no temporary folders left")

    def test_refuses_a_folder_graphc_did_not_write(self):
        with tempfile.TemporaryDirectory() as t:
            with open(os.path.join(t, "keep.txt"), "w") as f:
                f.write("x")
            p = graphc("compile", self.MLP, "-o", t, check=False)
            self.assertEqual(p.returncode, 1)
            self.assertIn("exists and is not a graphc output folder; refusing to replace it", p.stderr)
            self.assertEqual(os.listdir(t), ["keep.txt"])


class LayerProfile(unittest.TestCase):
    """bench/layer_profile.py: per-node times at 1 and 2 threads of a small conv net; the tool checks the
    2-thread outputs against the 1-thread ones bit for bit, and its totals line splits the 2-thread time."""

    NET = """graph profiled {
  input %x: f32[1,16,32,32]
  const %w1: f32[32,16,3,3] = random(seed=1, lo=-0.1, hi=0.1)
  const %w2: f32[32,1,3,3] = random(seed=2, lo=-0.3, hi=0.3)
  const %w3: f32[16,32,1,1] = random(seed=3, lo=-0.2, hi=0.2)
  expand: %a = Conv(%x, %w1) {pads=[1,1,1,1]}
  act: %b = Relu(%a)
  depthwise: %c = Conv(%b, %w2) {group=32, pads=[1,1,1,1]}
  project: %y = Conv(%c, %w3)
  output %y
}
"""

    def test_profile_table(self):
        with tempfile.TemporaryDirectory() as t:
            model = os.path.join(t, "net.gir")
            with open(model, "w") as f:
                f.write(self.NET)
            p = subprocess.run([sys.executable, os.path.join(HERE, "..", "..", "bench", "layer_profile.py"), model,
                                "--graphc", GRAPHC, "--rounds", "2", "--runs", "3", "--work", os.path.join(t, "w")],
                               capture_output=True, text=True, timeout=300)
            self.assertEqual(p.returncode, 0, p.stderr)
            lines = p.stdout.splitlines()
            rows = {l.split()[1]: l.split() for l in lines if l.startswith("Conv ")}
            # Relu is fused into the first Conv's epilogue: three nodes, named as in the graph
            self.assertEqual(sorted(rows), ["depthwise", "expand", "project"], p.stdout)
            for r in rows.values():
                self.assertGreater(float(r[2]), 0.0)  # 1-thread ms
                self.assertGreater(float(r[3]), 0.0)  # 2-thread ms
            total = [l.split() for l in lines if l.startswith("total ")][0]
            self.assertAlmostEqual(sum(float(r[3]) for r in rows.values()), float(total[2]), delta=2e-4)
            m = re.search(r"2-thread time (\S+) ms = ideal 1T/2 (\S+) \+ slower threads (\S+) \+ imbalance (\S+) "
                          r"\+ wait (\S+) \(the outputs at 1 and 2 threads are equal bit for bit\)", p.stdout)
            self.assertIsNotNone(m, p.stdout)
            parts = [float(v) for v in m.groups()]
            self.assertAlmostEqual(parts[0], sum(parts[1:]), delta=3e-3)
            self.assertAlmostEqual(parts[1], float(total[1]) / 2, delta=1e-3)


class FusedPair(unittest.TestCase):
    """Helpers of the fused conv-pair tests: compile GIR (or another file) with notes, run m_main
    on x.npy and r.npy at a thread count."""

    GIR = None

    def compile(self, t, name, *extra, gir=None):
        out = os.path.join(t, name)
        p = graphc("compile", gir or self.GIR, "-o", out, "--name", "m", "--emit-main", "--print-after=plan-memory",
                   *extra)
        with open(os.path.join(out, "m.c")) as f:
            return out, f.read(), p.stderr

    def run_main(self, out, threads, t):
        res = os.path.join(t, f"res_{os.path.basename(out)}_{threads}")
        os.mkdir(res)
        p = subprocess.run([os.path.join(out, "m_main"), "--threads", str(threads), res,
                            os.path.join(t, "x.npy"), os.path.join(t, "r.npy")], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        return read_bytes(os.path.join(res, os.listdir(res)[0]))

    @staticmethod
    def arena(src):
        return int(re.search(r"arena (\d+) bytes", src).group(1))

    def assert_same_bits(self, t, o2, o0):
        """Builds both folders; o2's outputs at 1, 2 and 3 threads equal o0's at 1, bit for bit."""
        for d in (o2, o0):
            p = subprocess.run(["make", "-s", "-C", d], capture_output=True, text=True)
            self.assertEqual(p.returncode, 0, p.stderr)
        want = self.run_main(o0, 1, t)
        for threads in (1, 2, 3):
            self.assertEqual(self.run_main(o2, threads, t), want, f"{threads} threads")

    def compile_second_reader(self, t, value):
        """GIR with `value` a graph output too (a second reader of it): (source, notes)."""
        with open(self.GIR) as f:
            text = f.read().replace("  output %z\n", f"  output %z\n  output %{value}\n")
        gir2 = os.path.join(t, "two_readers.gir")
        with open(gir2, "w") as f:
            f.write(text)
        _, src, notes = self.compile(t, "two", gir=gir2)
        return src, notes


class DepthwisePointwise(FusedPair):
    """At -O2 the C backend computes a depthwise conv inside the 1x1 conv that alone reads it
    (gcrt_dwconv_pw_f32): the notes say so, the depthwise node emits no code, the arena does not
    grow, the outputs are the same bits at 1, 2 and 3 threads and the same as -O0's (which does
    not fuse); a second reader of the depthwise output keeps the two apart."""

    GIR = os.path.join(HERE, "..", "ops", "nn", "conv_dw_pw_fused.gir")

    def test_fused_at_o2_only(self):
        with tempfile.TemporaryDirectory() as t:
            rng = np.random.default_rng(5)
            np.save(os.path.join(t, "x.npy"), rng.standard_normal((1, 1000, 10, 26)).astype(np.float32))
            np.save(os.path.join(t, "r.npy"), rng.standard_normal((1, 32, 10, 26)).astype(np.float32))
            o2, src2, notes = self.compile(t, "o2")
            self.assertEqual(src2.count("gcrt_dwconv_pw_f32("), 1)
            self.assertNotIn("gcrt_dwconv2d_f32(", src2)
            self.assertIn("/* computed band by band inside Conv 'pw' below (gcrt_dwconv_pw_f32), never stored */",
                          src2)
            self.assertIn("# kernel: depthwise direct, computed band by band inside the 1x1 conv pw below", notes)
            self.assertIn("# kernel: depthwise + conv-gemm by row bands (the depthwise conv dw's rows", notes)
            o0, src0, _ = self.compile(t, "o0", "-O0")
            self.assertNotIn("gcrt_dwconv_pw_f32(", src0)
            self.assertIn("gcrt_dwconv2d_f32(", src0)
            # the arena: the Relu's output (kept up to the 1x1 conv), the depthwise output's buffer (the
            # bands' slots) and the 1x1 output, nothing more
            self.assertEqual(self.arena(src2), 4 * (1000 + 1000 + 32) * 260)
            self.assert_same_bits(t, o2, o0)
            # a second reader of the depthwise output: not fused
            src3, notes3 = self.compile_second_reader(t, "dc")
            self.assertNotIn("gcrt_dwconv_pw_f32(", src3)
            self.assertIn("gcrt_dwconv2d_f32(", src3)
            self.assertNotIn("band by band", notes3)


class PointwiseDepthwise(FusedPair):
    """At -O2 the C backend computes a 1x1 conv inside the depthwise conv that alone reads it, on a
    map of at least 32 rows (gcrt_pw_dwconv_f32): the notes say so, the 1x1 node emits no code, its
    output's buffer holds only the bands' slots, the outputs are the same bits at 1, 2 and 3
    threads and the same as -O0's (which does not fuse); a second reader of the 1x1 output keeps
    the two apart."""

    GIR = os.path.join(HERE, "..", "ops", "nn", "conv_pw_dw_fused.gir")

    def test_fused_at_o2_only(self):
        with tempfile.TemporaryDirectory() as t:
            rng = np.random.default_rng(9)
            np.save(os.path.join(t, "x.npy"), rng.standard_normal((1, 16, 34, 34)).astype(np.float32))
            np.save(os.path.join(t, "r.npy"), rng.standard_normal((1, 40, 17, 17)).astype(np.float32))
            o2, src2, notes = self.compile(t, "o2")
            self.assertEqual(src2.count("gcrt_pw_dwconv_f32("), 1)
            self.assertNotIn("gcrt_dwconv2d_f32(", src2)
            self.assertNotIn("gcrt_conv_gemm_f32(", src2)
            self.assertIn("/* computed band by band inside Conv 'dw' below (gcrt_pw_dwconv_f32), never stored */",
                          src2)
            self.assertIn("# kernel: conv-gemm (W packed in 8-row panels), computed band by band inside the "
                          "depthwise conv dw below", notes)
            self.assertIn("# kernel: conv-gemm + depthwise by row bands (the 1x1 conv pw's rows", notes)
            o0, src0, _ = self.compile(t, "o0", "-O0")
            self.assertNotIn("gcrt_pw_dwconv_f32(", src0)
            self.assertIn("gcrt_dwconv2d_f32(", src0)
            # the arena at the depthwise step: the Relu's output (kept up to it), the 1x1 output's two
            # slots of 17 rows (its buffer, not its 40 x 34 x 34 floats) and the depthwise output
            self.assertEqual(self.arena(src2) // 64, 4 * (16 * 34 * 34 + 2 * 40 * 17 * 34 + 40 * 17 * 17) // 64 + 1)
            self.assertIn(".max_slots = 2,", src2)
            self.assert_same_bits(t, o2, o0)
            # a second reader of the 1x1 output: not fused
            src3, notes3 = self.compile_second_reader(t, "ec")
            self.assertNotIn("gcrt_pw_dwconv_f32(", src3)
            self.assertIn("gcrt_dwconv2d_f32(", src3)
            self.assertNotIn("band by band", notes3)


class ChannelSplit(unittest.TestCase):
    """A 1x1 conv whose only reader is a depthwise conv that the runtime splits by channels (a map
    of fewer than 32 rows) splits its own output channels over the threads (GcrtConv.by_channels):
    the source and the notes say so, and the outputs are the same bits at 1, 2 and 3 threads and
    the same as -O0's (where the Clip, not the depthwise conv, reads the 1x1 conv). A second
    reader keeps the split by positions; on a 32-row map the depthwise conv computes the 1x1 conv
    (gcrt_pw_dwconv_f32)."""

    GIR = os.path.join(HERE, "..", "ops", "nn", "conv_pw_dw_by_channels.gir")

    def compile(self, t, name, text=None, *extra):
        gir = self.GIR
        if text is not None:
            gir = os.path.join(t, name + ".gir")
            with open(gir, "w") as f:
                f.write(text)
        out = os.path.join(t, name)
        p = graphc("compile", gir, "-o", out, "--name", "m", "--emit-main", "--print-after=plan-memory", *extra)
        with open(os.path.join(out, "m.c")) as f:
            return out, f.read(), p.stderr

    def test_split_by_channels(self):
        with tempfile.TemporaryDirectory() as t:
            np.save(os.path.join(t, "x.npy"), np.random.default_rng(7).standard_normal((1, 24, 14, 14)).astype(np.float32))
            o2, src2, notes = self.compile(t, "o2")
            self.assertEqual(src2.count(".by_channels = 1"), 1)
            self.assertIn("# kernel: conv-gemm (W packed in 8-row panels, X read in place, the threads split the channels)",
                          notes)
            o0, src0, _ = self.compile(t, "o0", None, "-O0")
            self.assertNotIn(".by_channels", src0)
            outs = {}
            for d in (o2, o0):
                p = subprocess.run(["make", "-s", "-C", d], capture_output=True, text=True)
                self.assertEqual(p.returncode, 0, p.stderr)
            for d, threads in ((o0, 1), (o2, 1), (o2, 2), (o2, 3)):
                res = os.path.join(t, f"res_{os.path.basename(d)}_{threads}")
                os.mkdir(res)
                p = subprocess.run([os.path.join(d, "m_main"), "--threads", str(threads), res, os.path.join(t, "x.npy")],
                                   capture_output=True, text=True)
                self.assertEqual(p.returncode, 0, p.stderr)
                outs[(d, threads)] = read_bytes(os.path.join(res, os.listdir(res)[0]))
            for threads in (1, 2, 3):
                self.assertEqual(outs[(o2, threads)], outs[(o0, 1)], f"{threads} threads")
            with open(self.GIR) as f:
                text = f.read()
            # a second reader of the 1x1 conv's output, or a map of 32 rows: the split stays by positions
            _, src3, notes3 = self.compile(t, "two", text.replace("  output %z\n", "  output %z\n  output %ec\n"))
            self.assertNotIn(".by_channels", src3)
            self.assertNotIn("the threads split the channels", notes3)
            # (on 32 rows the depthwise conv computes the 1x1 conv band by band instead: gcrt_pw_dwconv_f32)
            _, src4, _ = self.compile(t, "rows32", text.replace("14,14]", "32,32]"))
            self.assertIn("gcrt_pw_dwconv_f32(&cv, 32, 32,", src4)
            self.assertNotIn(".by_channels", src4)


class Targets(unittest.TestCase):
    MLP = os.path.join(HERE, "..", "..", "examples", "mlp.gir")

    def test_unknown_target(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "out")
            p = graphc("compile", self.MLP, "-o", out, "--target=tpu", check=False)
            self.assertEqual((p.returncode, p.stderr),
                             (1, "graphc: error: compile: unknown --target 'tpu' (expected c or cuda)\n"))
            self.assertFalse(os.path.exists(out))

    def test_cuda_folder(self):
        """--target=cuda writes the CUDA folder, byte-identical for two compiles."""
        with tempfile.TemporaryDirectory() as tmp:
            a, b = os.path.join(tmp, "a"), os.path.join(tmp, "b")
            graphc("compile", self.MLP, "-o", a, "--target=cuda", "--emit-main")
            graphc("compile", self.MLP, "-o", b, "--target=cuda", "--emit-main")
            self.assertEqual(sorted(os.listdir(a)),
                             ["Makefile", "gc_cuda.h", "gc_cuda_emu.h", "gc_cuda_kernel.h", "mlp.cu", "mlp.h", "mlp_main.c",
                              "mlp_weights.S", "mlp_weights.bin"])
            for f in os.listdir(a):
                with open(os.path.join(a, f), "rb") as fa, open(os.path.join(b, f), "rb") as fb:
                    self.assertEqual(fa.read(), fb.read(), f)
            with open(os.path.join(a, "mlp.cu")) as f:
                cu = f.read()
            self.assertIn("cublasSgemmStridedBatched(blas, CUBLAS_OP_T, CUBLAS_OP_N, 64, 1, 784", cu)
            self.assertIn("/* Softmax 'softmax': f32[1,10] <- f32[1,10] */", cu)

    def test_cuda_folds_attention_chains(self):
        """At -O2 the CUDA backend reads attention's head split (Slice, Reshape, Transpose, Div) through the
        GEMMs' strides: the chain's nodes emit no code, the Div is the GEMM's alpha, and a batch of 3
        sequences of 2 heads (not one stride) is a pointer-array batched call; -O0 folds nothing. The
        results are checked by tests/ops/linalg/matmul_heads_view*.gir (ops_cuda_emu)."""
        gir = os.path.join(HERE, "..", "ops", "linalg", "matmul_heads_view.gir")
        with tempfile.TemporaryDirectory() as tmp:
            a, b, o0 = os.path.join(tmp, "a"), os.path.join(tmp, "b"), os.path.join(tmp, "o0")
            graphc("compile", gir, "-o", a, "--target=cuda")
            graphc("compile", gir, "-o", b, "--target=cuda")
            graphc("compile", gir, "-o", o0, "--target=cuda", "-O0")
            cu = read_bytes(os.path.join(a, "matmul_heads_view.cu")).decode()
            self.assertEqual(cu, read_bytes(os.path.join(b, "matmul_heads_view.cu")).decode())
            # q: Slice, Reshape, Transpose, Div; k and v: Slice, Reshape, Transpose
            self.assertEqual(cu.count("read in place by a MatMul below (its GEMM's strides): no code"), 10)
            self.assertEqual(cu.count("cublasSgemmBatched(blas"), 2)
            self.assertIn("const float alpha = 0.57735028f, beta = 0.0f;", cu)  # 1 / 1.7320508
            self.assertIn("cudaMalloc((void **)&m->gemm_ptrs, sizeof(void *) * 36)", cu)  # 2 calls, 3 arrays of 6
            cu0 = read_bytes(os.path.join(o0, "matmul_heads_view.cu")).decode()
            self.assertNotIn("read in place", cu0)
            self.assertNotIn("gemm_ptrs", cu0)

    def test_cuda_cudnn_find_emulated(self):
        """-DGC_CUDNN_FIND (the cuDNN algorithm measured at init, on scratch tensors the init allocates)
        builds and runs on the emulation, whose search checks the scratch tensors and workspace are device
        memory of the right sizes; the output matches the default build's and the interpreter's."""
        gir = os.path.join(HERE, "..", "ops", "nn", "conv_basic.gir")
        with tempfile.TemporaryDirectory() as tmp:
            x = np.random.default_rng(3).uniform(-2, 2, (2, 3, 7, 6)).astype(np.float32)
            np.save(os.path.join(tmp, "x.npy"), x)
            graphc("run", gir, os.path.join(tmp, "ref"), os.path.join(tmp, "x.npy"))
            ref = np.load(os.path.join(tmp, "ref", "output_0.npy"))
            outs = []
            for tag, extra in (("heur", ""), ("find", " -DGC_CUDNN_FIND")):
                d = os.path.join(tmp, tag)
                graphc("compile", gir, "-o", d, "--target=cuda", "--emit-main", "--name", "cf")
                with open(os.path.join(d, "cf.cu")) as f:
                    self.assertIn("#ifdef GC_CUDNN_FIND", f.read())
                p = subprocess.run(["make", "-s", "-C", d, "CFLAGS=-O1 -std=c99 -Wall -Wextra -Werror" + extra, "emu"],
                                   capture_output=True, text=True)
                self.assertEqual(p.returncode, 0, p.stderr)
                p = subprocess.run([os.path.join(d, "cf_main_emu"), os.path.join(d, "out"), os.path.join(tmp, "x.npy")],
                                   capture_output=True, text=True)
                self.assertEqual(p.returncode, 0, p.stderr)
                outs.append(np.load(os.path.join(d, "out", "output_0.npy")))
            np.testing.assert_array_equal(outs[0], outs[1])
            np.testing.assert_allclose(outs[1], ref, rtol=1e-5, atol=1e-5)

    def test_cuda_cudnn_fused_emulated(self):
        """-DGC_CUDNN_FUSED: the Convs whose epilogue is Relu(y) or Relu(Add(y, Z)) with a bias run as one
        cudnnConvolutionBiasActivationForward (fp32 NCHW: 2 of conv_residual_block's 3 Convs, the projection
        keeps its bias kernel; f16 NHWC: 3 of conv_f16_nhwc_residual's 4, the one whose residual is an NCHW
        graph input keeps its kernel). On the emulation the fused build matches the interpreter (fp32 to
        float rounding; f16 with one rounding fewer than the kernels'), it really calls cuDNN's fused form
        (refused there, without the warm-up's probe, the run fails), and where cuDNN refuses it in the
        warm-up (GC_EMU_CUDNN_FUSED_FAIL, -DGC_EMU_WARMUP) the separate calls compute bit for bit what the
        default build computes."""
        cases = (("conv_residual_block", os.path.join(HERE, "..", "ops", "nn"), {"x": ((2, 4, 6, 6), np.float32)},
                  2, "(bias, ReLU)", 1e-5),
                 ("conv_f16_nhwc_residual", os.path.join(HERE, "..", "ops_cuda_half"),
                  {"x": ((2, 3, 8, 8), np.float16), "x2": ((2, 8, 4, 4), np.float16)}, 3, "(bias, residual, ReLU)", 4e-3))
        rng = np.random.default_rng(11)
        for name, folder, ins, n_fused, note, tol in cases:
            gir = os.path.join(folder, name + ".gir")
            with tempfile.TemporaryDirectory() as tmp:
                paths = []
                for k, (shape, dt) in ins.items():
                    paths.append(os.path.join(tmp, k + ".npy"))
                    np.save(paths[-1], rng.uniform(-1, 1, shape).astype(dt))
                graphc("run", gir, os.path.join(tmp, "ref"), *paths)
                ref = np.load(os.path.join(tmp, "ref", "output_0.npy")).astype(np.float64)
                d = os.path.join(tmp, "cf")
                notes = graphc("compile", gir, "-o", d, "--target=cuda", "--emit-main", "--name", "cf",
                               "--print-after", "plan-memory").stderr
                self.assertEqual(notes.count("built with -DGC_CUDNN_FUSED, one cudnnConvolutionBiasActivationForward"),
                                 n_fused, name)
                self.assertIn(note, notes)
                with open(os.path.join(d, "cf.cu")) as f:
                    self.assertEqual(f.read().count("cudnnConvolutionBiasActivationForward(m->dnn"), n_fused, name)
                with open(os.path.join(d, "Makefile")) as f:
                    self.assertIn(f"#   -DGC_CUDNN_FUSED   bias, residual and ReLU in one cuDNN call ({n_fused} of the Convs)",
                                  f.read())
                outs = {}
                for tag, extra, env in (("plain", "", {}), ("fused", " -DGC_CUDNN_FUSED", {}),
                                        ("refused", " -DGC_CUDNN_FUSED", {"GC_EMU_CUDNN_FUSED_FAIL": "1"}),
                                        ("probed", " -DGC_CUDNN_FUSED -DGC_EMU_WARMUP", {"GC_EMU_CUDNN_FUSED_FAIL": "1"})):
                    p = subprocess.run(["make", "-s", "-B", "-C", d, "CFLAGS=-O1 -std=c99 -Wall -Wextra -Werror" + extra,
                                        "emu"], capture_output=True, text=True)
                    self.assertEqual(p.returncode, 0, p.stderr)
                    out = os.path.join(tmp, "out_" + tag)
                    p = subprocess.run([os.path.join(d, "cf_main_emu"), out, *paths], capture_output=True, text=True,
                                       env={**os.environ, **env})
                    if tag == "refused":
                        self.assertNotEqual(p.returncode, 0, name)  # the fused call ran, and failed
                        continue
                    self.assertEqual(p.returncode, 0, p.stderr)
                    outs[tag] = np.load(os.path.join(out, "output_0.npy")).astype(np.float64)
                np.testing.assert_array_equal(outs["probed"], outs["plain"], name)
                for tag in ("plain", "fused"):
                    np.testing.assert_allclose(outs[tag], ref, rtol=tol, atol=tol, err_msg=name + " " + tag)
                self.assertGreater(np.abs(ref).max(), 0.1, name)

    def test_cuda_cudnn_time_emulated(self):
        """-DGC_CUDNN_TIME: NAME_init's warm-up run times each Conv's candidate algorithms where the Conv
        stands and keeps the fastest. The emulation lists implicit GEMM, then the precomputed implicit GEMM
        (both without workspace) and its events read a virtual clock on which the second costs half: so
        every Conv of conv_residual_block ends on the second with the flag and the warm-up, on the first
        without either; the results are the same bits, and the interpreter's."""
        gir = os.path.join(HERE, "..", "ops", "nn", "conv_residual_block.gir")
        drv = r'''
#include CT_SOURCE
#include <stdio.h>
int main(void)
{
    ct_Model *m;
    if (ct_init(&m, NULL)) return 1;
    for (int i = 0; i < 3; i++) printf("%d %d %d %d\n", m->ncand[i], (int)m->cand[i][0], (int)m->cand[i][1], (int)m->algo[i]);
    ct_free(m);
    return 0;
}
'''
        with tempfile.TemporaryDirectory() as tmp:
            x = os.path.join(tmp, "x.npy")
            np.save(x, np.random.default_rng(2).uniform(-1, 1, (2, 4, 6, 6)).astype(np.float32))
            graphc("run", gir, os.path.join(tmp, "ref"), x)
            ref = np.load(os.path.join(tmp, "ref", "output_0.npy"))
            d = os.path.join(tmp, "ct")
            graphc("compile", gir, "-o", d, "--target=cuda", "--emit-main", "--name", "ct")
            with open(os.path.join(d, "drv.c"), "w") as f:
                f.write(drv)
            outs = {}
            for tag, extra, algo in (("plain", [], 0), ("time", ["-DGC_CUDNN_TIME"], 0),
                                     ("timed", ["-DGC_CUDNN_TIME", "-DGC_EMU_WARMUP"], 1)):
                p = subprocess.run(["cc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-DGC_CUDA_EMULATE", *extra,
                                    '-DCT_SOURCE="ct.cu"', "-I", d, "-o", os.path.join(d, "drv"),
                                    os.path.join(d, "drv.c"), os.path.join(d, "ct_weights.S"), "-lm"],
                                   capture_output=True, text=True, cwd=d)
                self.assertEqual(p.returncode, 0, p.stderr)
                p = subprocess.run([os.path.join(d, "drv")], capture_output=True, text=True)
                self.assertEqual((p.returncode, p.stdout), (0, f"2 0 1 {algo}\n" * 3), tag + " " + p.stderr)
                p = subprocess.run(["make", "-s", "-B", "-C", d, "CFLAGS=-O1 -std=c99 -Wall -Wextra -Werror " + " ".join(extra),
                                    "emu"], capture_output=True, text=True)
                self.assertEqual(p.returncode, 0, p.stderr)
                p = subprocess.run([os.path.join(d, "ct_main_emu"), os.path.join(tmp, tag), x], capture_output=True,
                                   text=True)
                self.assertEqual(p.returncode, 0, p.stderr)
                outs[tag] = np.load(os.path.join(tmp, tag, "output_0.npy"))
            np.testing.assert_array_equal(outs["timed"], outs["plain"])
            np.testing.assert_allclose(outs["plain"], ref, rtol=1e-5, atol=1e-5)

    def test_cuda_jit_folder(self):
        """--cuda-jit: host code NAME.c with the kernels embedded, NAME_kernels.cu beside it, byte-identical for
        two compiles; built on the emulation it computes what the nvcc-style folder computes."""
        with tempfile.TemporaryDirectory() as tmp:
            a, b, s = os.path.join(tmp, "a"), os.path.join(tmp, "b"), os.path.join(tmp, "s")
            graphc("compile", self.MLP, "-o", a, "--target=cuda", "--cuda-jit", "--emit-main")
            graphc("compile", self.MLP, "-o", b, "--target=cuda", "--cuda-jit", "--emit-main")
            graphc("compile", self.MLP, "-o", s, "--target=cuda", "--emit-main")
            self.assertEqual(sorted(os.listdir(a)),
                             ["Makefile", "gc_cuda.h", "gc_cuda_emu.h", "gc_cuda_jit.h", "gc_cuda_kernel.h", "mlp.c",
                              "mlp.h", "mlp_kernels.cu", "mlp_main.c", "mlp_weights.S", "mlp_weights.bin"])
            for f in os.listdir(a):
                self.assertEqual(read_bytes(os.path.join(a, f)), read_bytes(os.path.join(b, f)), f)
            with open(os.path.join(a, "mlp.c")) as f:
                host = f.read()
            self.assertNotIn("GC_KERNEL k0(", host.split("mlp_kernels_src[]")[0])  # no kernel compiled in the host
            self.assertIn('static const char *const mlp_kernel_names[', host)
            self.assertIn('gc_jit_load("mlp_kernels.cu", src, hdr,', host)
            with open(os.path.join(a, "mlp_kernels.cu")) as f:
                kern = f.read()
            self.assertIn('#include "gc_cuda_kernel.h"', kern)
            with open(os.path.join(a, "Makefile")) as f:
                mk = f.read()
            self.assertNotIn("nvcc", mk.lower().replace("no nvcc", ""))
            self.assertIn("-lnvrtc", mk)
            flags = "CFLAGS=-O1 -std=c99 -Wall -Wextra -Werror -pedantic"
            x = np.random.default_rng(7).uniform(-1, 1, (1, 784)).astype(np.float32)
            np.save(os.path.join(tmp, "x.npy"), x)
            outs = []
            for d in (a, s):
                p = subprocess.run(["make", "-s", "-C", d, flags, "emu"], capture_output=True, text=True)
                self.assertEqual(p.returncode, 0, p.stderr)
                p = subprocess.run([os.path.join(d, "mlp_main_emu"), os.path.join(d, "out"), os.path.join(tmp, "x.npy")],
                                   capture_output=True, text=True)
                self.assertEqual(p.returncode, 0, p.stderr)
                outs.append(np.load(os.path.join(d, "out", "output_0.npy")))
            np.testing.assert_array_equal(outs[0], outs[1])

    def test_cuda_jit_reports_nvrtc_errors(self):
        """A compile NVRTC rejects at NAME_init (the emulated NVRTC fails under GC_EMU_NVRTC_FAIL): its log on
        stderr, NAME_init returns -1."""
        with tempfile.TemporaryDirectory() as tmp:
            a = os.path.join(tmp, "a")
            graphc("compile", self.MLP, "-o", a, "--target=cuda", "--cuda-jit", "--emit-main")
            p = subprocess.run(["make", "-s", "-C", a, "emu"], capture_output=True, text=True)
            self.assertEqual(p.returncode, 0, p.stderr)
            np.save(os.path.join(tmp, "x.npy"), np.zeros((1, 784), np.float32))
            p = subprocess.run([os.path.join(a, "mlp_main_emu"), os.path.join(tmp, "out"), os.path.join(tmp, "x.npy")],
                               capture_output=True, text=True, env=dict(os.environ, GC_EMU_NVRTC_FAIL="1"))
            self.assertEqual(p.returncode, 1)
            self.assertEqual(p.stderr, "mlp_kernels.cu: NVRTC cannot compile the kernels (sm_90, NVRTC_ERROR_COMPILATION):\n"
                                       "mlp_kernels.cu(1): error: GC_EMU_NVRTC_FAIL is set\n"
                                       "mlp_main: mlp_init: cannot set up the model on the GPU\n")

    def test_cuda_jit_needs_the_cuda_target(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "out")
            p = graphc("compile", self.MLP, "-o", out, "--cuda-jit", check=False)
            self.assertEqual((p.returncode, p.stderr),
                             (1, "graphc: error: compile: --cuda-jit needs --target=cuda (the target is 'c')\n"))
            self.assertFalse(os.path.exists(out))

    def test_cuda_layout_needs_the_cuda_target_and_a_known_value(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "out")
            p = graphc("compile", self.MLP, "-o", out, "--cuda-layout=nhwc", check=False)
            self.assertEqual((p.returncode, p.stderr),
                             (1, "graphc: error: compile: --cuda-layout needs --target=cuda (the target is 'c')\n"))
            p = graphc("compile", self.MLP, "-o", out, "--target=cuda", "--cuda-layout=chwn", check=False)
            self.assertEqual((p.returncode, p.stderr),
                             (1, "graphc: error: compile: --cuda-layout needs auto, nchw or nhwc, got 'chwn'\n"))
            self.assertFalse(os.path.exists(out))

    def test_cuda_layout_nhwc(self):
        """--cuda-layout: at f16, auto puts the three Convs of conv_f16_nhwc_chain.gir on NHWC descriptors
        with their filters permuted to KRSC in the weights, and copies only the NCHW graph input in and the
        NCHW graph output back (two copy kernels); nchw and -O0 keep every Conv NCHW; the folder is
        byte-identical between compiles, and the emulated NHWC build matches the NCHW one within an f16
        rounding or two (ops_cuda_half_emu compares both with the interpreter)."""
        gir = os.path.join(HERE, "..", "ops_cuda_half", "conv_f16_nhwc_chain.gir")
        with tempfile.TemporaryDirectory() as tmp:
            x = np.random.default_rng(5).uniform(-1, 1, (2, 3, 9, 8)).astype(np.float16)
            np.save(os.path.join(tmp, "x.npy"), x)
            outs, texts, blobs = {}, {}, {}
            for tag, flags in (("auto", []), ("auto2", ["--cuda-layout=auto"]), ("nchw", ["--cuda-layout=nchw"]),
                               ("O0", ["-O0"])):
                d = os.path.join(tmp, tag)
                graphc("compile", gir, "-o", d, "--target=cuda", "--emit-main", "--name", "nh", "--no-fold", *flags)
                with open(os.path.join(d, "nh.cu")) as f:
                    texts[tag] = f.read()
                blobs[tag] = read_bytes(os.path.join(d, "nh_weights.bin"))
                if tag in ("auto", "nchw"):
                    p = subprocess.run(["make", "-s", "-C", d, "emu"], capture_output=True, text=True)
                    self.assertEqual(p.returncode, 0, p.stderr)
                    p = subprocess.run([os.path.join(d, "nh_main_emu"), os.path.join(d, "out"),
                                        os.path.join(tmp, "x.npy")], capture_output=True, text=True)
                    self.assertEqual(p.returncode, 0, p.stderr)
                    outs[tag] = [np.load(os.path.join(d, "out", f"output_{k}.npy")).astype(np.float32) for k in (0, 1)]
            for f in os.listdir(os.path.join(tmp, "auto2")):  # the folder as written (auto's was built since)
                self.assertEqual(read_bytes(os.path.join(tmp, "auto", f)), read_bytes(os.path.join(tmp, "auto2", f)), f)
            self.assertEqual(len(re.findall(r"Descriptor\(m->c[xy]\[\d+\], CUDNN_TENSOR_NHWC, CUDNN_DATA_HALF", texts["auto"])),
                             6)  # x and y of 3 Convs
            self.assertEqual(texts["auto"].count("CUDNN_DATA_HALF, CUDNN_TENSOR_NHWC"), 3)  # the filters
            self.assertEqual(texts["auto"].count("NCHW into NHWC */"), 1)
            self.assertEqual(texts["auto"].count("NHWC into NCHW */"), 1)
            notes = graphc("compile", gir, "-o", os.path.join(tmp, "notes"), "--target=cuda", "--no-fold",
                           "--print-after", "all").stderr
            self.assertEqual(notes.count("# kernel: cuDNN convolution forward on NHWC tensors"), 3)
            self.assertIn("(x NCHW, copied to NHWC in the workspace, y stored NHWC)", notes)  # c1, from the graph input
            self.assertIn("(x stored NHWC, y NCHW, copied back from the workspace)", notes)  # c3, into the graph output
            for tag in ("nchw", "O0"):
                self.assertNotIn("NHWC", texts[tag])
            # the same constants, the filters' elements permuted
            self.assertEqual(len(blobs["auto"]), len(blobs["nchw"]))
            self.assertNotEqual(blobs["auto"], blobs["nchw"])
            self.assertEqual(sorted(blobs["auto"]), sorted(blobs["nchw"]))
            for a, b in zip(outs["auto"], outs["nchw"]):
                np.testing.assert_allclose(a, b, rtol=4e-3, atol=4e-3)

    def test_cuda_graph_replays_and_recaptures(self):
        """NAME_run replays the graph captured at NAME_init; other device buffers are captured anew (the graph
        updated) and each run computes from its own inputs: checked on the emulation, whose capture records
        and runs nothing, with and without --cuda-jit."""
        # one translation unit: the emulation's device memory is the state of the gc_cuda_emu.h included
        drv = r'''
#include MLP_SOURCE
#include <stdio.h>
#include <string.h>
int main(void)
{
    static float x[3][784], y[3][10], z[10];
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < 784; i++) x[k][i] = (float)((i * (k + 3)) % 17) / 17.0f - 0.5f;
    mlp_Model *m;
    if (mlp_init(&m, NULL)) return 1;
    for (int k = 0; k < 3; k++) {
        const void *in[1] = {x[k]};
        void *out[1] = {y[k]};
        if (mlp_run_host(m, in, out)) return 2;
    }
    if (!memcmp(y[0], y[1], sizeof y[0])) return 3; /* a replay that computed nothing new */
    void *dx[2], *dy[2];
    for (int b = 0; b < 2; b++)
        if (cudaMalloc(&dx[b], sizeof x[0]) || cudaMalloc(&dy[b], sizeof y[0])) return 4;
    for (int r = 0; r < 4; r++) { /* alternate buffers: a capture and a graph update each time */
        const int b = r & 1, k = r % 3;
        if (cudaMemcpy(dx[b], x[k], sizeof x[k], cudaMemcpyHostToDevice)) return 5;
        const void *in[1] = {dx[b]};
        void *out[1] = {dy[b]};
        if (mlp_run(m, in, out) || cudaStreamSynchronize(NULL)) return 6;
        if (cudaMemcpy(z, dy[b], sizeof z, cudaMemcpyDeviceToHost) || memcmp(z, y[k], sizeof z)) return 7;
    }
    mlp_free(m);
    puts("ok");
    return 0;
}
'''
        with tempfile.TemporaryDirectory() as tmp:
            for jit in ([], ["--cuda-jit"]):
                d = os.path.join(tmp, "jit" if jit else "static")
                graphc("compile", self.MLP, "-o", d, "--target=cuda", "--weights=c-array", *jit)
                with open(os.path.join(d, "drv.c"), "w") as f:
                    f.write(drv)
                src = '-DMLP_SOURCE="mlp.c"' if jit else '-DMLP_SOURCE="mlp.cu"'
                p = subprocess.run(["cc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-DGC_CUDA_EMULATE", src, "-I", d,
                                    "-o", os.path.join(d, "drv"), os.path.join(d, "drv.c"),
                                    os.path.join(d, "mlp_weights.c"), "-lm"],
                                   capture_output=True, text=True)
                self.assertEqual(p.returncode, 0, p.stderr)
                p = subprocess.run([os.path.join(d, "drv")], capture_output=True, text=True)
                self.assertEqual((p.returncode, p.stdout), (0, "ok\n"), p.stderr)

    def test_cuda_refuses_an_op_it_lacks(self):
        """A node the CUDA backend has no kernel for (an op's dtype or attributes): one line naming node, op
        and backend; no folder."""
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "out")
            gemm = os.path.join(tmp, "gemm_i32.gir")
            with open(gemm, "w") as f:
                f.write("graph gemm_i32 {\n  input %a: i32[2,3]\n  input %b: i32[3,4]\n  %y = Gemm(%a, %b)\n  output %y\n}\n")
            p = graphc("compile", gemm, "-o", out, "--target=cuda", "--no-fold", check=False)
            self.assertEqual(p.returncode, 1)
            self.assertRegex(p.stderr, r"^graphc: error: .*gemm_i32.gir: node 'y' \(Gemm\): "
                                       r"the CUDA backend computes op 'Gemm' in f32, f64, f16 and bf16 \(one dtype\), got i32\n$")
            self.assertFalse(os.path.exists(out))
            det = os.path.join(tmp, "det16.gir")
            with open(det, "w") as f:
                f.write("graph det16 {\n  input %x: f16[2,3,3]\n  %y = Det(%x)\n  output %y\n}\n")
            p = graphc("compile", det, "-o", out, "--target=cuda", "--no-fold", check=False)
            self.assertEqual(p.returncode, 1)
            self.assertRegex(p.stderr, r"^graphc: error: .*det16.gir: node 'y' \(Det\): "
                                       r"the CUDA backend has no f16 kernels yet \(op 'Det'\)\n$")
            self.assertFalse(os.path.exists(out))

    def test_precision_lowers_from_the_weights(self):
        """--precision=bf16: the half region starts at the layers with weights (Conv, MatMul, their constants
        converted) and follows their results (Relu, GlobalAveragePool, the Flatten view); a node that reads
        only f32 tensors and no weights (Sigmoid of the input) stays f32; the input is cast once; each graph
        output keeps its name and f32 type, computed back from its twin; the compiled folder builds and runs
        on the emulation within bfloat16 rounding of the interpreter."""
        src = ("graph p16 {\n  input %x: f32[1,2,6,6]\n"
               "  const %w: f32[4,2,3,3] = random(seed=1, lo=-0.5, hi=0.5)\n"
               "  const %fcw: f32[4,3] = random(seed=2, lo=-0.5, hi=0.5)\n"
               "  %c = Conv(%x, %w) {pads=[1,1,1,1]}\n  %r = Relu(%c)\n  %p = GlobalAveragePool(%r)\n"
               "  %f = Flatten(%p)\n  %g = MatMul(%f, %fcw)\n  %s = Sigmoid(%x)\n"
               "  output %g\n  output %r\n  output %s\n}\n")
        with tempfile.TemporaryDirectory() as tmp:
            gir, out = os.path.join(tmp, "p16.gir"), os.path.join(tmp, "out")
            with open(gir, "w") as f:
                f.write(src)
            p = graphc("compile", gir, "-o", out, "--target=cuda", "--precision=bf16", "--emit-main",
                       "--print-after=lower-precision")
            body = [l.strip() for l in p.stderr.splitlines()[2:-1] if "const %" not in l]
            self.assertEqual(sorted(body), sorted([
                "input %x: f32[1,2,6,6]",
                "x.to_bf16: %x.bf16: bf16[1,2,6,6] = Cast(%x) {to=16}",
                "c: %c.bf16: bf16[1,4,6,6] = Conv(%x.bf16, %w.bf16) {pads=[1,1,1,1]}",
                "r: %r.bf16: bf16[1,4,6,6] = Relu(%c.bf16)",
                "p: %p.bf16: bf16[1,4,1,1] = GlobalAveragePool(%r.bf16)",
                "f: %f.bf16: bf16[1,4] = Flatten(%p.bf16)",
                "g: %g.bf16: bf16[1,3] = MatMul(%f.bf16, %fcw.bf16)",
                "g.bf16.to_f32: %g: f32[1,3] = Cast(%g.bf16) {to=1}",
                "r.bf16.to_f32: %r: f32[1,4,6,6] = Cast(%r.bf16) {to=1}",
                "%s: f32[1,2,6,6] = Sigmoid(%x)",
                "output %g", "output %r", "output %s"]), p.stderr)
            consts = [l.strip().split(" = ")[0] for l in p.stderr.splitlines() if "const %" in l]
            self.assertEqual(sorted(consts), ["const %fcw.bf16: bf16[4,3]", "const %w.bf16: bf16[4,2,3,3]"])
            p = subprocess.run(["make", "-s", "emu"], cwd=out, capture_output=True, text=True)
            self.assertEqual(p.returncode, 0, p.stderr)
            x = np.random.default_rng(0).uniform(-1, 1, (1, 2, 6, 6)).astype(np.float32)
            np.save(os.path.join(tmp, "x.npy"), x)
            subprocess.run([os.path.join(out, "p16_main_emu"), os.path.join(tmp, "got"), os.path.join(tmp, "x.npy")],
                           check=True, capture_output=True)
            graphc("run", gir, os.path.join(tmp, "ref"), os.path.join(tmp, "x.npy"))
            for k in range(3):
                got = np.load(os.path.join(tmp, "got", f"output_{k}.npy"))
                ref = np.load(os.path.join(tmp, "ref", f"output_{k}.npy"))
                self.assertEqual(got.dtype, np.float32)
                # bfloat16: 8 significant bits, a few roundings on the way (Sigmoid stays f32: 1e-6)
                tol = 1e-6 if k == 2 else 3e-2
                np.testing.assert_allclose(got, ref, rtol=tol, atol=tol, err_msg=f"output {k}")

    def test_precision_errors(self):
        """--precision: one of fp32/fp16/bf16, CUDA only, not for training; one-line errors, no folder."""
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "out")
            for args, msg in (
                    (["--target=cuda", "--precision=fp8"], "compile: --precision needs fp32, fp16 or bf16, got 'fp8'"),
                    (["--precision=fp16"],
                     "compile: --precision=fp16 needs --target=cuda (the c target computes in the model's own types)"),
                    (["--target=cuda", "--precision=bf16", "--grad", "--loss=mse:probs"],
                     "compile: --precision=bf16 does not apply to --grad or --train (training computes in f32)")):
                p = graphc("compile", self.MLP, "-o", out, *args, check=False)
                self.assertEqual((p.returncode, p.stderr), (1, f"graphc: error: {msg}\n"), args)
                self.assertFalse(os.path.exists(out))

    def test_help_lists_targets(self):
        text = graphc("compile", "--help").stdout
        self.assertIn("--target=TARGET", text)
        self.assertRegex(text, r"\ntargets:\n  c +standalone C99")

    def test_only_the_runtime_the_model_uses(self):
        with tempfile.TemporaryDirectory() as tmp:
            a, b = os.path.join(tmp, "a"), os.path.join(tmp, "b")
            graphc("compile", self.MLP, "-o", a)
            graphc("compile", self.MLP, "-o", b, "--target=c")
            self.assertEqual(sorted(os.listdir(a)), sorted(os.listdir(b)))
            for f in os.listdir(a):
                with open(os.path.join(a, f), "rb") as fa, open(os.path.join(b, f), "rb") as fb:
                    self.assertEqual(fa.read(), fb.read(), f)
            rt = sorted(f for f in os.listdir(a) if f.startswith("gcrt_"))
            # Gemm runs on the fast CPU kernels (cpu), Softmax on nn, which needs linalg
            self.assertEqual(rt, ["gcrt_base.h", "gcrt_cpu.c", "gcrt_cpu.h", "gcrt_linalg.c", "gcrt_linalg.h",
                                  "gcrt_nn.c", "gcrt_nn.h"])
            with open(os.path.join(a, "mlp.c")) as f:
                includes = re.findall(r'^#include "(gcrt_[a-z_]+\.[ch])"', f.read(), re.M)
            self.assertEqual(includes, ["gcrt_base.h", "gcrt_cpu.c", "gcrt_linalg.c", "gcrt_nn.c"])


MLP_GRAD = """graph mlpg {
  input %x: f32[4,3]
  input %label: i64[4]
  const %w1: f32[5,3] = random(seed=1, lo=-1, hi=1)
  const %b1: f32[5] = random(seed=2, lo=-1, hi=1)
  const %w2: f32[2,5] = random(seed=3, lo=-1, hi=1)
  %h = Gemm(%x, %w1, %b1) {transB=1}
  %r = Relu(%h)
  %y = Gemm(%r, %w2) {transB=1}
  %loss = SoftmaxCrossEntropyLoss(%y, %label)
  output %loss
  output %y
}
"""


class Training(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="graphc_cli_train_")
        self.model = os.path.join(self.tmp, "mlpg.gir")
        with open(self.model, "w") as f:
            f.write(MLP_GRAD)
        rng = np.random.default_rng(0)
        self.x = os.path.join(self.tmp, "x.npy")
        self.lab = os.path.join(self.tmp, "lab.npy")
        np.save(self.x, rng.standard_normal((4, 3)).astype(np.float32))
        np.save(self.lab, np.array([0, 1, 1, 0], np.int64))

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def test_grad_outputs_compiled_and_interpreted(self):
        out = os.path.join(self.tmp, "c")
        graphc("compile", self.model, "-o", out, "--grad", "--emit-main")
        with open(os.path.join(out, "mlpg.h")) as f:
            hdr = f.read()
        names = re.findall(r'#define mlpg_OUTPUT_(\d+)_NAME "([^"]*)"', hdr)
        self.assertEqual([n for _, n in names], ["loss", "y", "grad_w1", "grad_b1", "grad_w2"])
        p = subprocess.run(["make", "-s", "-C", out], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        got = os.path.join(self.tmp, "got")
        p = subprocess.run([os.path.join(out, "mlpg_main"), got, self.x, self.lab], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        ref = os.path.join(self.tmp, "ref")
        graphc("run", self.model, ref, self.x, self.lab, "--grad")
        for i in range(5):
            a = np.load(os.path.join(got, f"output_{i}.npy"))
            b = np.load(os.path.join(ref, f"output_{i}.npy"))
            self.assertEqual(a.shape, b.shape)
            self.assertTrue(np.allclose(a, b, atol=1e-5, rtol=1e-4), f"output {i}")
        # --wrt picks and orders the parameters
        ref2 = os.path.join(self.tmp, "ref2")
        graphc("run", self.model, ref2, self.x, self.lab, "--grad", "--wrt=w2,w1")
        self.assertTrue(np.array_equal(np.load(os.path.join(ref2, "output_2.npy")), np.load(os.path.join(ref, "output_4.npy"))))
        self.assertFalse(os.path.exists(os.path.join(ref2, "output_4.npy")))

    def test_dump_after_autodiff(self):
        p = graphc("compile", self.model, "-o", os.path.join(self.tmp, "d"), "--grad", "--print-after=autodiff")
        self.assertIn("# after autodiff", p.stderr)
        self.assertRegex(p.stderr, r"\n  state %w1: f32\[5,3\] = ")
        self.assertIn("= Identity(", p.stderr)
        self.assertRegex(p.stderr, r"%grad_w1: f32\[5,3\] = Identity\(")

    def test_train_report_and_api(self):
        out = os.path.join(self.tmp, "t")
        p = graphc("compile", self.model, "-o", out, "--train", "--optimizer=adam:lr=0.01", "--report")
        st = re.search(r"^state: (\d+) bytes$", p.stdout, re.M)
        self.assertIsNotNone(st, p.stdout)
        with open(os.path.join(out, "mlpg.h")) as f:
            hdr = f.read()
        self.assertIn(f"#define mlpg_STATE_BYTES {st.group(1)}", hdr)
        for fn in ("int mlpg_init_state(void *state);", "int mlpg_train_step(void *state, void *arena",
                   "int mlpg_infer_v(const void *state, void *arena"):
            self.assertIn(fn, hdr)
        self.assertIn('#define mlpg_STATE_4_NAME "w1_adam_m"', hdr)
        self.assertIn('#define mlpg_STATE_5_NAME "w1_adam_v"', hdr)

    def test_errors(self):
        scalar_less = os.path.join(self.tmp, "vec.gir")
        with open(scalar_less, "w") as f:
            f.write("graph v {\n  input %x: f32[3]\n  const %w: f32[3] = [1, 2, 3]\n  %y = Mul(%x, %w)\n  output %y\n}\n")
        cases = [
            ([scalar_less, "--grad"], "the loss (the model's first output 'y') must be a float scalar; it is f32[3]"),
            ([self.model, "--grad", "--wrt=nope"], "--wrt: the model has no value 'nope'"),
            ([self.model, "--grad", "--optimizer=sgd"], "--optimizer needs --train"),
            ([self.model, "--train", "--optimizer=sgd:lr=0.1,beta1=0.9"], "unknown key 'beta1'"),
            ([self.model, "--train", "--optimizer=rmsprop"], "unknown optimizer 'rmsprop'"),
            ([self.model, "--train", "--emit-main"], "--emit-main is not available with --train"),
            ([self.model, "--grad", "--loss=mse:nothere"], "--loss: the model has no output 'nothere'"),
            ([self.model, "--wrt=w1"], "--wrt, --loss and --optimizer need --grad or --train"),
            ([self.model, "--grad", "--train"], "--grad and --train exclude each other"),
        ]
        for args, msg in cases:
            out = os.path.join(self.tmp, "err")
            p = graphc("compile", args[0], "-o", out, *args[1:], check=False)
            self.assertEqual(p.returncode, 1, (args, p.stderr))
            self.assertIn(msg, p.stderr, args)
            self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
            self.assertFalse(os.path.exists(out), args)


def main():
    global GRAPHC
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--graphc", required=True)
    ap.add_argument("-v", action="store_true")
    args, rest = ap.parse_known_args()
    GRAPHC = os.path.abspath(args.graphc)
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2 if args.v else 1)


if __name__ == "__main__":
    main()
