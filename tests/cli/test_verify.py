#!/usr/bin/python3
"""test_verify.py — `graphc verify`: compile, build, run, compare with the
f64 interpreter.

    /usr/bin/python3 tests/cli/test_verify.py --graphc BUILD/graphc [-v]

* examples/mlp.gir (random inputs, and its bundled input file; -O0 and
  -O2; incbin, c-array and file weights) and an ONNX Conv/Relu/Gemm network
  written here with onnx.helper (with a symbolic batch dim bound by
  --shape) PASS with exit status 0, one line per output with its name,
  dtype, shape, errors and the tolerance;
* random inputs are deterministic (seeded), floats in [-1, 1), integers in
  {0..3} (a Gather's indices stay in range), bools 0/1; integer outputs are
  compared exactly;
* --atol=0 --rtol=0 on a model whose f32 output differs from the f64
  reference FAILs with exit status 1 and names the worst element; so does
  a build that cannot succeed (CC=false) and a wrong input file;
* the temporary folder is removed, or kept with --keep (inputs, outputs,
  the sources and build.log);
* --help states the default tolerances and the options.

GRAPHC_SANITIZE=1 builds the programs with the sanitizers (through CFLAGS
and LDFLAGS), GRAPHC_CPU_FLAGS sets CPU_FLAGS, as in the other tests.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
MLP = os.path.join(ROOT, "examples", "mlp.gir")
MLP_INPUT = os.path.join(ROOT, "examples", "mlp_input.npy")
GRAPHC = None
LINE_RE = re.compile(r"^output (\d+) '([^']*)' (\w+)(\[[\d,]*\]): max abs err (\S+), max rel err (\S+) "
                     r"\(atol (\S+), rtol (\S+)\): (PASS|FAIL)(.*)$")

INDEXED = """graph indexed {
  input %x: f32[4,3]
  input %idx: i64[5]
  input %keep: bool[5,3]
  const %zero: f32[] = [0]
  %g = Gather(%x, %idx) {axis=0}
  %y = Where(%keep, %g, %zero)
  %twice = Add(%idx, %idx)
  output %y
  output %twice
}
"""


def env(tmpdir=None):
    e = dict(os.environ)
    if os.environ.get("GRAPHC_SANITIZE") == "1":
        san = "-fsanitize=address,undefined -fno-sanitize-recover=all"
        e["CFLAGS"] = f"-O1 -g -std=c99 {san}"
        e["LDFLAGS"] = san
    if "GRAPHC_CPU_FLAGS" in os.environ:
        e["CPU_FLAGS"] = os.environ["GRAPHC_CPU_FLAGS"]
    if tmpdir:
        e["TMPDIR"] = tmpdir
    return e


def verify(*args, tmpdir=None, extra_env=None):
    e = env(tmpdir)
    e.update(extra_env or {})
    return subprocess.run([GRAPHC, "verify"] + [str(a) for a in args], capture_output=True, text=True, timeout=900,
                          env=e)


def parse(stdout):
    """(header line, [(index, name, dtype, shape, abs, rel, atol, rtol, verdict, rest)])"""
    lines = stdout.splitlines()
    outs = []
    for l in lines[1:]:
        m = LINE_RE.match(l)
        if m:
            g = m.groups()
            outs.append((int(g[0]), g[1], g[2], g[3], float(g[4]), float(g[5]), float(g[6]), float(g[7]), g[8], g[9]))
    return lines[0], outs


def onnx_net(path, batch="N"):
    import onnx
    from onnx import TensorProto as T, helper, numpy_helper
    rng = np.random.default_rng(3)
    inits = [numpy_helper.from_array(rng.uniform(-0.5, 0.5, (4, 3, 3, 3)).astype(np.float32), "conv_w"),
             numpy_helper.from_array(rng.uniform(-0.1, 0.1, (4,)).astype(np.float32), "conv_b"),
             numpy_helper.from_array(rng.uniform(-0.2, 0.2, (10, 4 * 8 * 8)).astype(np.float32), "fc_w"),
             numpy_helper.from_array(rng.uniform(-0.1, 0.1, (10,)).astype(np.float32), "fc_b"),
             numpy_helper.from_array(np.array([0, -1], np.int64), "flat")]
    nodes = [helper.make_node("Conv", ["x", "conv_w", "conv_b"], ["c"], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"], name="relu"),
             helper.make_node("Reshape", ["r", "flat"], ["f"], name="flatten"),
             helper.make_node("Gemm", ["f", "fc_w", "fc_b"], ["logits"], name="fc", transB=1)]
    g = helper.make_graph(nodes, "net", [helper.make_tensor_value_info("x", T.FLOAT, [batch, 3, 8, 8])],
                          [helper.make_tensor_value_info("logits", T.FLOAT, [batch, 10])], initializer=inits)
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)


class Verify(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="graphc_verify_test_")
        self.scratch = os.path.join(self.tmp, "scratch")  # TMPDIR of the runs: must end up empty
        os.mkdir(self.scratch)

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def passes(self, *args, outputs=1):
        p = verify(*args, tmpdir=self.scratch)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual(p.stderr, "")
        head, outs = parse(p.stdout)
        self.assertEqual(len(outs), outputs, p.stdout)
        self.assertEqual(len(p.stdout.splitlines()), 1 + outputs, p.stdout)
        self.assertTrue(all(o[8] == "PASS" for o in outs), p.stdout)
        self.assertEqual(os.listdir(self.scratch), [], "the temporary folder is removed")
        return head, outs

    def test_mlp(self):
        head, outs = self.passes(MLP)
        self.assertEqual(head, f"verify {MLP}: -O2, target c, incbin weights, random inputs (seed 0)")
        (i, name, dt, shape, abs_err, rel_err, atol, rtol, verdict, rest) = outs[0]
        self.assertEqual((i, name, dt, shape, atol, rtol, rest), (0, "probs", "f32", "[1,10]", 1e-4, 1e-3, ""))
        self.assertLess(abs_err, 1e-6)
        self.assertGreater(abs_err, 0, "f32 code differs from the f64 reference in the last bits")
        head, _ = self.passes(MLP, MLP_INPUT, "-O0", "--weights=file")
        self.assertEqual(head, f"verify {MLP}: -O0, target c, file weights, inputs from 1 .npy file")
        self.passes(MLP, "--weights=c-array", "--target=c", "--seed=7")
        head, outs = self.passes(MLP, "--target=cuda")
        self.assertEqual(head, f"verify {MLP}: -O2, target cuda (run on the CPU emulation), incbin weights, "
                               "random inputs (seed 0)")
        self.assertLess(outs[0][4], 1e-6)

    def test_onnx_model_with_symbolic_batch(self):
        path = os.path.join(self.tmp, "net.onnx")
        onnx_net(path)
        _, outs = self.passes(path, "--shape", "x=2,3,8,8")
        self.assertEqual(outs[0][1:4], ("logits", "f32", "[2,10]"))
        self.assertLess(outs[0][4], 1e-5)
        p = verify(path, tmpdir=self.scratch)  # the batch dim must be bound
        self.assertEqual(p.returncode, 1)
        self.assertTrue(p.stderr.startswith("graphc: error: "), p.stderr)
        self.assertEqual(os.listdir(self.scratch), [])

    def test_random_inputs_and_exact_integers(self):
        gir = os.path.join(self.tmp, "indexed.gir")
        with open(gir, "w") as f:
            f.write(INDEXED)
        _, outs = self.passes(gir, outputs=2)
        self.assertEqual([o[1:4] for o in outs], [("y", "f32", "[5,3]"), ("twice", "i64", "[5]")])
        self.assertEqual((outs[1][6], outs[1][7]), (0.0, 0.0), "integers are compared exactly")
        # the inputs, kept: seeded, in range, the same for the same seed
        runs = []
        for k in range(2):
            p = verify(gir, "--keep", "--seed=11", tmpdir=self.scratch)
            self.assertEqual(p.returncode, 0, p.stderr)
            kept = re.search(r"^kept (\S+)$", p.stdout, re.M).group(1)
            self.assertTrue(kept.startswith(self.scratch + "/graphc-verify-"), kept)
            for want in ("inputs/input_0.npy", "outputs/output_1.npy", "build.log", "indexed/indexed_main",
                         "indexed/Makefile"):
                self.assertTrue(os.path.exists(os.path.join(kept, want)), want)
            runs.append([np.load(os.path.join(kept, "inputs", f"input_{i}.npy")) for i in range(3)])
            shutil.rmtree(kept)
        x, idx, keep = runs[0]
        for a, b in zip(runs[0], runs[1]):
            self.assertTrue(np.array_equal(a, b))
        self.assertEqual((x.dtype, idx.dtype, keep.dtype), (np.float32, np.int64, np.bool_))
        self.assertTrue(((x >= -1) & (x < 1)).all() and x.std() > 0.3)
        self.assertTrue(set(idx.tolist()) <= {0, 1, 2, 3})
        self.assertTrue(keep.any() and not keep.all())
        p = verify(gir, "--keep", tmpdir=self.scratch)  # seed 0: other inputs
        kept = re.search(r"^kept (\S+)$", p.stdout, re.M).group(1)
        self.assertFalse(np.array_equal(np.load(os.path.join(kept, "inputs", "input_0.npy")), x))

    def test_zero_tolerance_fails(self):
        p = verify(MLP, "--atol=0", "--rtol=0", tmpdir=self.scratch)
        self.assertEqual(p.returncode, 1, p.stdout)
        _, outs = parse(p.stdout)
        self.assertEqual(outs[0][8], "FAIL")
        self.assertEqual((outs[0][6], outs[0][7]), (0.0, 0.0))
        self.assertRegex(outs[0][9], r"^ \(\d+ of 10 elements over the tolerance; worst at \[0,\d\]: \S+, reference \S+\)$")
        self.assertEqual(p.stderr, f"graphc: error: verify: {MLP}: 1 of 1 output FAIL\n")
        self.assertEqual(os.listdir(self.scratch), [])
        # one part given alone keeps the other's default
        _, outs = parse(verify(MLP, "--rtol=0", tmpdir=self.scratch).stdout)
        self.assertEqual((outs[0][6], outs[0][7], outs[0][8]), (1e-4, 0.0, "PASS"))

    def test_errors(self):
        p = verify(MLP, tmpdir=self.scratch, extra_env={"CC": "false"})
        self.assertEqual(p.returncode, 1)
        self.assertIn("graphc: error: verify: building the generated code failed", p.stderr)
        self.assertEqual(os.listdir(self.scratch), [])
        bad = os.path.join(self.tmp, "bad.npy")
        np.save(bad, np.zeros((1, 783), np.float32))
        p = verify(MLP, bad, tmpdir=self.scratch)
        self.assertEqual(p.returncode, 1)
        self.assertEqual(p.stderr, f"graphc: error: {bad}: graph input 0 'x' is f32[1,784], but the file holds f32[1,783]\n")
        for args, msg in (([MLP, "--atol=-1"], "verify: --atol: expected a number >= 0"),
                          ([MLP, "--target=tpu"], "verify: unknown --target 'tpu' (expected c or cuda)"),
                          ([MLP, "--weights=zip"], "verify: unknown --weights mode 'zip'"),
                          ([MLP, "--seed=x"], "verify: --seed needs a whole number"),
                          ([], "verify: missing MODEL")):
            p = verify(*args, tmpdir=self.scratch)
            self.assertEqual(p.returncode, 1, args)
            self.assertIn(msg, p.stderr, args)
        self.assertEqual(os.listdir(self.scratch), [])

    def test_help(self):
        p = subprocess.run([GRAPHC, "verify", "--help"], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0)
        for s in ("usage: graphc verify MODEL [IN0.npy ...]", "f32: atol 1e-4, rtol 1e-3", "--atol=A, --rtol=R",
                  "--keep", "--seed=N", "--shape NAME=D0,D1", "-O0, -O2", "make -C DIR NAME_main", "|got - ref| <= atol + rtol*|ref|"):
            self.assertIn(s, p.stdout)
        self.assertIn("verify", subprocess.run([GRAPHC, "--help"], capture_output=True, text=True).stdout)


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
