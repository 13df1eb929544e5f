#!/usr/bin/python3
"""test_hostile.py — the size policy and hostile .npy inputs.

    /usr/bin/python3 tests/cli/test_hostile.py --graphc BUILD/graphc [-v]

Size policy (--max-tensor-bytes, 16 GiB by default), on small ONNX files
written here with onnx.helper:

* a ConstantOfShape of [1000000, 1000000], an Expand to 1e12 elements and a
  OneHot of depth 1e13 are refused by compile, run and dump with one line
  naming the node, the output, its bytes, dtype and shape, and the limit;
  compile leaves no folder behind and run allocates nothing;
* a 64 MiB tensor is refused with --max-tensor-bytes=1M and accepted by
  default; the memory arena is held to the same limit; malformed values of
  the option are one-line errors;
* a Range whose constant inputs give 1e15 elements names its size, both
  under the default limit and, with the limit raised, where the C backend
  declines to evaluate it at compile time (it used to blame its inputs).

Hostile .npy files, given both to `graphc run` and to the program that
`graphc compile --emit-main` generates for tests/cli/pair.gir (built with the
sanitizers when GRAPHC_SANITIZE=1): wrong shape, wrong dtype, truncated or
extra data, bad magic, bad version, a header length beyond the file, a
garbage dict, unknown keys, fortran_order True, huge shapes, a missing or
empty file, and too few or too many inputs. Each must exit 1 with exactly
one line on stderr that names the file (or, for the argument count, the
rule) and the rule broken, and write no output folder.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
PAIR = os.path.join(HERE, "pair.gir")
GRAPHC = None
LIMIT = "over the 17179869184-byte limit (--max-tensor-bytes)"


def run(args, timeout=300):
    return subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=timeout)


def graphc(*args):
    return run([GRAPHC] + list(args))


def onnx_model(path, nodes, inits, outs, ins=()):
    import onnx
    from onnx import helper

    g = helper.make_graph(nodes, os.path.splitext(os.path.basename(path))[0], list(ins), outs, initializer=inits)
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)


def npy_bytes(arr):
    """The .npy image numpy writes for arr."""
    import io

    b = io.BytesIO()
    np.save(b, arr)
    return b.getvalue()


def npy_v1(header, data=b"", version=b"\x01\x00"):
    """A v1.0-style preamble with the given raw header text (padded like numpy) and data."""
    h = header.encode() if isinstance(header, str) else header
    h += b" " * ((64 - (10 + len(h) + 1) % 64) % 64) + b"\n"
    return b"\x93NUMPY" + version + len(h).to_bytes(2, "little") + h + data


class Common(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="graphc_hostile_")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def path(self, name):
        return os.path.join(self.tmp, name)

    def assert_one_line_error(self, p, prefix, *parts):
        """Exit 1, exactly one stderr line starting with prefix and holding every part."""
        lines = p.stderr.splitlines()
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertEqual(len(lines), 1, p.stderr)
        self.assertTrue(lines[0].startswith(prefix), lines[0])
        for part in parts:
            self.assertIn(part, lines[0])
        return lines[0]


class SizePolicy(Common):
    def models(self):
        from onnx import TensorProto as T, helper, numpy_helper as nh

        i64 = lambda name, v: nh.from_array(np.array(v, np.int64), name)
        y = [helper.make_tensor_value_info("y", T.FLOAT, None)]
        m = {}
        m["cos"] = self.path("cos.onnx")
        onnx_model(m["cos"], [helper.make_node("ConstantOfShape", ["s"], ["y"], name="cos")],
                   [i64("s", [1000000, 1000000])], y)
        m["expand"] = self.path("expand.onnx")
        onnx_model(m["expand"], [helper.make_node("Expand", ["x", "s"], ["y"], name="expand")],
                   [i64("s", [1000000, 1000000])], y, [helper.make_tensor_value_info("x", T.FLOAT, [1, 1])])
        m["onehot"] = self.path("onehot.onnx")
        onnx_model(m["onehot"], [helper.make_node("OneHot", ["i", "depth", "vals"], ["y"], name="onehot")],
                   [i64("depth", 10**13), nh.from_array(np.array([0, 1], np.float32), "vals")], y,
                   [helper.make_tensor_value_info("i", T.INT64, [3])])
        m["range"] = self.path("range.onnx")
        onnx_model(m["range"], [helper.make_node("Range", ["a", "b", "c"], ["y"], name="range")],
                   [i64("a", 0), i64("b", 10**15), i64("c", 1)], [helper.make_tensor_value_info("y", T.INT64, None)])
        m["big64"] = self.path("big64.onnx")
        onnx_model(m["big64"], [helper.make_node("ConstantOfShape", ["s"], ["y"], name="fill")],
                   [i64("s", [4096, 4096])], y)
        # Two 4 MiB values live at once: each fits 6M, the arena (8 MiB) does not.
        m["arena"] = self.path("arena.onnx")
        onnx_model(m["arena"], [helper.make_node("Relu", ["x"], ["a"], name="relu"),
                                helper.make_node("Neg", ["x"], ["b"], name="neg"),
                                helper.make_node("Add", ["a", "b"], ["y"], name="add")],
                   [], y, [helper.make_tensor_value_info("x", T.FLOAT, [1024, 1024])])
        return m

    def setUp(self):
        super().setUp()
        self.m = self.models()

    def refused_everywhere(self, model, expect, extra=()):
        out = self.path("out")
        p = graphc("compile", model, "-o", out, *extra)
        self.assertEqual(self.assert_one_line_error(p, "graphc: error: "), "graphc: error: " + expect)
        self.assertFalse(os.path.exists(out), "compile left its folder behind")
        # run refuses the model after shape inference, before it reads inputs or allocates
        p = graphc("run", model, out, *extra)
        self.assertEqual(self.assert_one_line_error(p, "graphc: error: "), "graphc: error: " + expect)
        self.assertFalse(os.path.exists(out), "run left its folder behind")
        p = graphc("dump", model, "--print-after=infer-shapes", *extra)
        self.assertEqual(self.assert_one_line_error(p, "graphc: error: "), "graphc: error: " + expect)
        self.assertEqual(p.stdout, "")

    def test_constant_of_shape(self):
        self.refused_everywhere(self.m["cos"], f"{self.m['cos']}: node 'cos' (ConstantOfShape): output 'y' would be "
                                f"4000000000000 bytes (f32 [1000000,1000000]), {LIMIT}")

    def test_expand(self):
        self.refused_everywhere(self.m["expand"], f"{self.m['expand']}: node 'expand' (Expand): output 'y' would be "
                                f"4000000000000 bytes (f32 [1000000,1000000]), {LIMIT}")

    def test_onehot(self):
        self.refused_everywhere(self.m["onehot"], f"{self.m['onehot']}: node 'onehot' (OneHot): output 'y' would be "
                                f"120000000000000 bytes (f32 [3,10000000000000]), {LIMIT}")

    def test_range_names_its_size(self):
        self.refused_everywhere(self.m["range"], f"{self.m['range']}: node 'range' (Range): output 'y' would be "
                                f"8000000000000000 bytes (i64 [1000000000000000]), {LIMIT}")
        # With the limit raised the inputs are still constant: the backend refuses for the size.
        out = self.path("out")
        p = graphc("compile", self.m["range"], "-o", out, "--max-tensor-bytes=9000000000000000")
        line = self.assert_one_line_error(p, "graphc: error: ", "node 'range' (Range)", "8000000000000000 bytes",
                                          "at compile time")
        self.assertNotIn("constant inputs", line)
        self.assertFalse(os.path.exists(out))

    def test_limit_option(self):
        big = self.m["big64"]
        self.refused_everywhere(big, f"{big}: node 'fill' (ConstantOfShape): output 'y' would be 67108864 bytes "
                                "(f32 [4096,4096]), over the 1048576-byte limit (--max-tensor-bytes)",
                                ["--max-tensor-bytes=1M"])
        p = graphc("compile", big, "-o", self.path("ok"))
        self.assertEqual(p.returncode, 0, p.stderr)
        p = graphc("compile", big, "-o", self.path("ok2"), "--max-tensor-bytes", "67108864")
        self.assertEqual(p.returncode, 0, p.stderr)
        p = graphc("run", big, self.path("ok_run"), "--max-tensor-bytes=64M")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(np.load(self.path("ok_run/output_0.npy")).shape, (4096, 4096))
        p = graphc("compile", big, "-o", self.path("no"), "--max-tensor-bytes=67108863")
        self.assert_one_line_error(p, "graphc: error: ", "67108864 bytes", "over the 67108863-byte limit")

    def test_arena(self):
        a = self.m["arena"]
        p = graphc("compile", a, "-o", self.path("out"), "-O0", "--max-tensor-bytes=6M")
        self.assertEqual(self.assert_one_line_error(p, "graphc: error: "),
                         f"graphc: error: {a}: the memory arena would be 8388608 bytes, over the 6291456-byte limit "
                         "(--max-tensor-bytes)")
        self.assertFalse(os.path.exists(self.path("out")))
        p = graphc("compile", a, "-o", self.path("out"), "-O0", "--max-tensor-bytes=8M")
        self.assertEqual(p.returncode, 0, p.stderr)

    def test_bad_option_values(self):
        for v, why in [("0", "must be positive"), ("1X", "suffixes"), ("-5", "byte count"), ("", "byte count"),
                       ("99999999999999999999", "too large"), ("2048P", "suffixes"), ("1048577T", "too large")]:
            for cmd in (["compile", self.m["big64"], "-o", self.path("o")], ["run", self.m["big64"], self.path("o")],
                        ["dump", self.m["big64"]]):
                p = graphc(*cmd, "--max-tensor-bytes=" + v)
                self.assert_one_line_error(p, f"graphc: error: {cmd[0]}: bad --max-tensor-bytes", why)
                self.assertFalse(os.path.exists(self.path("o")))

    def test_help(self):
        for cmd in ("compile", "run", "dump"):
            self.assertIn("--max-tensor-bytes=N", graphc(cmd, "--help").stdout)


# Hostile files: name -> (bytes, the rule's words in graphc run's message, in NAME_main's message).
GOOD = np.arange(6, dtype=np.float32).reshape(2, 3)
GOOD_HDR = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"


def hostile_files():
    good = npy_bytes(GOOD)
    long_hdr = bytearray(good[:10])
    long_hdr[8:10] = (60000).to_bytes(2, "little")
    v2_beyond = b"\x93NUMPY\x02\x00" + (1 << 31).to_bytes(4, "little") + b"{"
    return {
        "wrong_shape": (npy_bytes(GOOD.reshape(3, 2)), "is f32[2,3], but the file holds f32[3,2]",
                        "shape (3, 2), but the model expects (2, 3)"),
        "wrong_dtype": (npy_bytes(GOOD.astype(np.float64)), "but the file holds f64[2,3]", "dtype '<f8'"),
        "wrong_dtype_int": (npy_bytes(GOOD.astype(np.int32)), "but the file holds i32[2,3]", "dtype '<i4'"),
        "truncated_data": (good[:-4], "truncated data", "truncated data"),
        "extra_data": (good + b"\0\0\0\0", "size mismatch", "size mismatch"),
        "bad_magic": (b"\x93NUMPX" + good[6:], "bad magic", "bad magic"),
        "not_npy": (b"hello, world\n", "bad magic", "bad magic"),
        "tiny": (b"\x93NUM", "truncated file", "truncated file"),
        "empty": (b"", "truncated file", "truncated file"),
        "preamble_only": (good[:9], "truncated file", "truncated file"),
        "bad_version": (good[:6] + b"\x09\x00" + good[8:], "unsupported .npy format version 9.0",
                        "unsupported .npy format version 9.0"),
        "bad_minor": (good[:6] + b"\x01\x05" + good[8:], "version 1.5", "version 1.5"),
        "header_beyond_file": (bytes(long_hdr) + good[10:], "truncated header", "truncated header"),
        "header_beyond_file_v2": (v2_beyond, "truncated header", "truncated header"),
        "garbage_dict": (npy_v1("garbage!", GOOD.tobytes()), "bad header", "bad header"),
        "garbage_after_dict": (npy_v1(GOOD_HDR + " x", GOOD.tobytes()), "bad header", "bad header"),
        "unknown_key": (npy_v1("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), 'evil': 1}",
                               GOOD.tobytes()), "unknown key", "unknown key"),
        "missing_key": (npy_v1("{'descr': '<f4', 'shape': (2, 3)}", GOOD.tobytes()), "missing key",
                        "needs the keys"),
        "repeated_key": (npy_v1("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)}",
                                GOOD.tobytes()), "twice", "twice"),
        "unterminated_descr": (npy_v1("{'descr': '<f4, 'fortran_order': False, 'shape': (2, 3)}", GOOD.tobytes()),
                               "bad header", "bad header"),
        "bad_shape_text": (npy_v1("{'descr': '<f4', 'fortran_order': False, 'shape': (2, x)}", GOOD.tobytes()),
                           "bad header", "bad header"),
        "negative_dim": (npy_v1("{'descr': '<f4', 'fortran_order': False, 'shape': (-2, 3)}", GOOD.tobytes()),
                         "bad header", "bad header"),
        "nul_in_header": (npy_v1("{'descr': '<f4',\0 'fortran_order': False, 'shape': (2, 3)}", GOOD.tobytes()),
                          "bad header", "bad header"),
        "fortran_order": (npy_bytes(np.asfortranarray(GOOD)), "fortran_order", "fortran_order"),
        "huge_shape": (npy_v1("{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776, 1099511627776)}",
                              GOOD.tobytes()), "too large", "shape (1099511627776, 1099511627776), but the model"),
        "overflowing_dim": (npy_v1("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999999,)}",
                                   GOOD.tobytes()), "too large", "too large"),
        "structured_dtype": (npy_v1("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2, 3)}",
                                    GOOD.tobytes()), "dtype", "'descr' must be"),
        "scalar": (npy_bytes(np.float32(1)), "but the file holds f32[]", "shape (), but the model expects (2, 3)"),
    }


class HostileNpy(Common):
    main_dir = None

    @classmethod
    def setUpClass(cls):
        cls.build = tempfile.mkdtemp(prefix="graphc_hostile_main_")
        cls.main_dir = os.path.join(cls.build, "pair")
        p = graphc("compile", PAIR, "-o", cls.main_dir, "--emit-main")
        if p.returncode != 0:
            raise AssertionError(p.stderr)
        san = os.environ.get("GRAPHC_SANITIZE") == "1"
        sflags = " -fsanitize=address,undefined -fno-sanitize-recover=all" if san else ""
        p = run(["make", "-s", "-C", cls.main_dir, f"CFLAGS=-O1 -g -std=c99 -Wall -Wextra -Werror -pedantic{sflags}",
                 f"LDFLAGS={sflags}", "BLAS=0", "pair_main"])
        if p.returncode != 0:
            raise AssertionError(p.stdout + p.stderr)
        cls.main = os.path.join(cls.main_dir, "pair_main")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.build, ignore_errors=True)

    def write(self, name, data):
        path = self.path(name + ".npy")
        with open(path, "wb") as f:
            f.write(data)
        return path

    def both(self, args):
        """(graphc run, pair_main) on OUTDIR + args; both must leave OUTDIR absent."""
        out = self.path("out")
        r = graphc("run", PAIR, out, *args)
        self.assertFalse(os.path.exists(out), f"graphc run wrote {out}")
        m = run([self.main, out] + list(args))
        self.assertFalse(os.path.exists(out), f"pair_main wrote {out}")
        return r, m

    def test_good_inputs_work(self):
        a, b = self.write("a", npy_bytes(GOOD)), self.write("b", npy_bytes(GOOD * 2))
        out1, out2 = self.path("o1"), self.path("o2")
        p = graphc("run", PAIR, out1, a, b)
        self.assertEqual(p.returncode, 0, p.stderr)
        p = run([self.main, out2, a, b])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stderr, "")
        for o in (out1, out2):
            self.assertEqual(sorted(os.listdir(o)), ["output_0.npy"])
            np.testing.assert_array_equal(np.load(os.path.join(o, "output_0.npy")), GOOD * 3)
        # 1-byte and version 2.0 / 3.0 spellings numpy may write are accepted too
        v2 = bytearray(npy_bytes(GOOD))
        hdr = bytes(v2[10:])
        v2 = b"\x93NUMPY\x02\x00" + (len(hdr) - 24).to_bytes(4, "little") + hdr
        c = self.write("c", bytes(v2))
        p = run([self.main, self.path("o3"), c, a])
        self.assertEqual(p.returncode, 0, p.stderr)
        p = graphc("run", PAIR, self.path("o4"), c, a)
        self.assertEqual(p.returncode, 0, p.stderr)

    def test_hostile_files(self):
        good = self.write("good", npy_bytes(GOOD))
        for name, (data, run_rule, main_rule) in hostile_files().items():
            for slot in (0, 1):
                with self.subTest(file=name, input=slot):
                    bad = self.write(name, data)
                    args = [bad, good] if slot == 0 else [good, bad]
                    r, m = self.both(args)
                    self.assert_one_line_error(r, f"graphc: error: {bad}: ", run_rule)
                    self.assert_one_line_error(m, f"pair_main: {bad}: input {slot} ('{'xy'[slot]}'): ", main_rule)

    def test_missing_file(self):
        good = self.write("good", npy_bytes(GOOD))
        missing = self.path("nope.npy")
        r, m = self.both([good, missing])
        self.assert_one_line_error(r, f"graphc: error: {missing}: cannot open", "No such file")
        self.assert_one_line_error(m, f"pair_main: {missing}: input 1 ('y'): cannot open", "No such file")
        # a folder is not a file either
        r, m = self.both([self.tmp, good])
        self.assert_one_line_error(r, f"graphc: error: {self.tmp}: ")
        self.assert_one_line_error(m, f"pair_main: {self.tmp}: input 0 ('x'): ")

    def test_input_count(self):
        good = self.write("good", npy_bytes(GOOD))
        for args in ([], [good], [good, good, good]):
            with self.subTest(n=len(args)):
                r, m = self.both(args)
                self.assert_one_line_error(r, f"graphc: error: {PAIR}: graph has 2 inputs (x, y), got {len(args)}")
                self.assert_one_line_error(m, "pair_main: expected OUTDIR and 2 input .npy file(s), "
                                           f"got {len(args) + 1} argument(s)", "usage: pair_main")
        p = run([self.main])
        self.assert_one_line_error(p, "pair_main: expected OUTDIR and 2 input .npy file(s), got 0 argument(s)")
        p = run([self.main, "--bogus", self.path("out"), good, good])
        self.assert_one_line_error(p, "pair_main: unknown option '--bogus'")
        self.assertFalse(os.path.exists(self.path("out")))


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
