#!/usr/bin/python3
"""test_weights.py — the weights file and the C-array weights.

    /usr/bin/python3 tests/cli/test_weights.py --graphc BUILD/graphc [-v]

`--weights=file` (NAME.weights: a 64-byte header — magic, format version,
header bytes, blob bytes, model hash, model name — then the blob):

* the header holds what NAME.h says (NAME_WEIGHTS_HASH, _BYTES, _FILE_BYTES)
  and two compiles write the same bytes;
* examples/mlp.gir (model A) and a copy with other random weights (model B,
  the same shapes and sizes) are compiled with --emit-main and built; A's
  program with A's weights matches `graphc run`; with B's weights, a
  truncated file, one byte more, one blob byte flipped, another format
  version, a file that is no weights file or an empty one it exits 1 with
  one line naming the file and the reason, and writes no output folder;
* NAME_check_weights (called through ctypes on libNAME.so) returns the
  documented code for each of those, NAME_run_v refuses another model's
  file and runs on its own.

`--weights=c-array` (NAME_weights.c including NAME_weights_<k>.inc, string
literals of 16 MiB of the blob each):

* the literals, decoded here as C does, are byte for byte the blob that
  --weights=incbin writes, for a model whose constant holds every byte
  value next to octal digits, quotes, backslashes and '??' trigraph starts;
  no line is over 4095 characters;
* that model and one with an 18 MB constant (two part files) build with
  `-std=c99 -Wall -Wextra -Werror -pedantic` (with gcc, and with clang
  when present) and compute what the interpreter computes.
"""
import argparse
import ctypes
import glob
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
STRICT = "-O1 -std=c99 -Wall -Wextra -Werror -pedantic"


def run(args, timeout=600, **kw):
    return subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=timeout, **kw)


def graphc(*args):
    p = run([GRAPHC] + list(args))
    if p.returncode != 0:
        raise AssertionError(f"graphc {' '.join(map(str, args))} failed: {p.stderr}")
    return p


def make(folder, *targets, cc=None, sanitize=True):
    san = sanitize and os.environ.get("GRAPHC_SANITIZE") == "1"
    sflags = " -fsanitize=address,undefined -fno-sanitize-recover=all" if san else ""
    args = ["make", "-s", "-C", folder, f"CFLAGS={STRICT}{sflags}", f"LDFLAGS={sflags}", "BLAS=0"]
    if cc:
        args.append(f"CC={cc}")
    p = run(args + list(targets))
    if p.returncode != 0:
        raise AssertionError(f"make -C {folder} failed:\n{p.stdout}{p.stderr}")


def header_defines(path):
    with open(path) as f:
        text = f.read()
    return {m.group(1): m.group(2).strip() for m in re.finditer(r"^#define (\w+) ([^/\n]*)", text, re.M)}


def c_literal_bytes(text):
    """The bytes of the adjacent C string literals in text (each line one
    literal, as graphc writes them): escapes decoded as a C compiler does."""
    out = bytearray()
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        assert line[0] == '"' and line[-1] == '"' and len(line) >= 2, line[:80]
        body, i = line[1:-1], 0
        while i < len(body):
            c = body[i]
            if c == '"':
                raise AssertionError(f"unescaped quote in {line[:80]}")
            if c != "\\":
                assert 32 <= ord(c) < 127, f"non-ASCII character {c!r}"
                assert not (c == "?" and i + 1 < len(body) and body[i + 1] == "?"), "a trigraph start"
                out.append(ord(c))
                i += 1
                continue
            j = i + 1
            if body[j] in "01234567":
                k = j
                while k < len(body) and k < j + 3 and body[k] in "01234567":
                    k += 1
                out.append(int(body[j:k], 8))
                i = k
            elif body[j] in "\\\"?'":
                out.append(ord(body[j]))
                i = j + 1
            else:
                raise AssertionError(f"unexpected escape \\{body[j]}")
    return bytes(out)


def aligned_buffer(data, offset=0):
    """A numpy uint8 array holding data at a 64-byte-aligned address + offset."""
    raw = np.zeros(len(data) + 128, np.uint8)
    start = (-raw.ctypes.data) % 64 + offset
    buf = raw[start:start + len(data)]
    buf[:] = np.frombuffer(data, np.uint8) if data else buf[:0]
    return raw, buf


class Base(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="graphc_weights_")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def path(self, *parts):
        return os.path.join(self.tmp, *parts)


class WeightsFile(Base):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        with open(MLP) as f:
            text = f.read()
        # model B: the same graph, shapes and byte sizes, other random weights
        other = re.sub(r"seed=(\d+)", lambda m: f"seed={int(m.group(1)) + 10}", text).replace("graph mlp", "graph mlp_b")
        cls.mlp_b = os.path.join(cls.tmp, "mlp_b.gir")
        with open(cls.mlp_b, "w") as f:
            f.write(other)
        cls.a = os.path.join(cls.tmp, "a")
        cls.b = os.path.join(cls.tmp, "b")
        graphc("compile", MLP, "-o", cls.a, "--weights=file", "--emit-main")
        graphc("compile", cls.mlp_b, "-o", cls.b, "--weights=file", "--emit-main")
        make(cls.a)
        make(cls.b)
        with open(os.path.join(cls.a, "mlp.weights"), "rb") as f:
            cls.wa = f.read()
        with open(os.path.join(cls.b, "mlp_b.weights"), "rb") as f:
            cls.wb = f.read()
        cls.defs = header_defines(os.path.join(cls.a, "mlp.h"))

    def main(self, weights_file, name):
        out = self.path("out_" + name)
        args = [os.path.join(self.a, "mlp_main")]
        if weights_file:
            args += ["--weights", weights_file]
        return run(args + [out, MLP_INPUT]), out

    def write(self, name, data):
        p = self.path(name)
        with open(p, "wb") as f:
            f.write(data)
        return p

    def test_header(self):
        w, d = self.wa, self.defs
        self.assertEqual(w[:8], b"GCWEIGHT")
        self.assertEqual(int.from_bytes(w[8:12], "little"), 1)
        self.assertEqual(int(d["mlp_WEIGHTS_FORMAT_VERSION"]), 1)
        self.assertEqual(int.from_bytes(w[12:16], "little"), 64)
        blob = int(d["mlp_WEIGHTS_BYTES"])
        self.assertGreater(blob, 4 * 64 * 784)
        self.assertEqual(int.from_bytes(w[16:24], "little"), blob)
        self.assertEqual(int(d["mlp_WEIGHTS_FILE_BYTES"]), 64 + blob)
        self.assertEqual(len(w), 64 + blob)
        hash_text = re.fullmatch(r"UINT64_C\(0x([0-9a-f]{16})\)", d["mlp_WEIGHTS_HASH"])
        self.assertIsNotNone(hash_text, d["mlp_WEIGHTS_HASH"])
        self.assertEqual(int.from_bytes(w[24:32], "little"), int(hash_text.group(1), 16))
        self.assertEqual(w[32:64], b"mlp".ljust(32, b"\0"))
        # the blob after the header is the one the other weights modes link in
        inc = self.path("a_incbin")
        graphc("compile", MLP, "-o", inc, "--weights=incbin")
        with open(os.path.join(inc, "mlp_weights.bin"), "rb") as f:
            self.assertEqual(w[64:], f.read())
        # model B: same sizes, another hash; a recompile of A: the same bytes
        self.assertEqual(len(self.wb), len(w))
        self.assertNotEqual(self.wb[24:32], w[24:32])
        again = self.path("a_again")
        graphc("compile", MLP, "-o", again, "--weights=file", "--emit-main")
        for f in ("mlp.weights", "mlp.h", "mlp.c", "mlp_main.c"):
            with open(os.path.join(again, f), "rb") as x, open(os.path.join(self.a, f), "rb") as y:
                self.assertEqual(x.read(), y.read(), f)

    def test_right_file_runs(self):
        p, out = self.main(None, "right")  # NAME.weights next to the program
        self.assertEqual(p.returncode, 0, p.stderr)
        ref = self.path("ref")
        graphc("run", MLP, ref, MLP_INPUT)
        np.testing.assert_allclose(np.load(os.path.join(out, "output_0.npy")), np.load(os.path.join(ref, "output_0.npy")),
                                   rtol=1e-5, atol=1e-6)

    def refused(self, name, data, message):
        p, out = self.main(self.write(name + ".weights", data), name)
        self.assertEqual(p.returncode, 1, f"{name}: {p.stderr}")
        lines = p.stderr.splitlines()
        self.assertEqual(len(lines), 1, p.stderr)
        self.assertTrue(lines[0].startswith(f"mlp_main: the weights '{self.path(name + '.weights')}' "), lines[0])
        self.assertIn(message, lines[0])
        self.assertTrue(lines[0].endswith("; refusing to run"), lines[0])
        self.assertFalse(os.path.exists(out), f"{name}: the program ran and wrote {out}")

    def test_other_models_weights_refused(self):
        hb = int.from_bytes(self.wb[24:32], "little")
        ha = int.from_bytes(self.wa[24:32], "little")
        self.refused("other", self.wb, f"are another model's (model 'mlp_b', hash {hb:016x}, {len(self.wb) - 64} bytes of "
                                       f"weights); this program is model 'mlp' (hash {ha:016x}")

    def test_damaged_files_refused(self):
        w = self.wa
        n = len(w)
        flipped = bytearray(w)
        flipped[64 + 1000] ^= 0x10
        version = bytearray(w)
        version[8] = 2
        self.refused("truncated", w[:n // 2], f"have {n // 2} bytes; model 'mlp' needs {n} (truncated)")
        self.refused("header_only", w[:40], f"have 40 bytes; model 'mlp' needs {n} (truncated)")
        self.refused("empty", b"", f"have 0 bytes; model 'mlp' needs {n} (truncated)")
        self.refused("longer", w + b"\0", f"have {n + 1} bytes; model 'mlp' needs {n} (bytes after the blob)")
        self.refused("flipped", bytes(flipped), "are corrupt: their header names model 'mlp', but the data does not hash to")
        self.refused("version", bytes(version), "have format version 2; this program reads version 1")
        self.refused("junk", b"\x93NUMPY" + bytes(n), "are not a graphc weights file (bad magic)")
        self.refused("raw_blob", w[64:], "are not a graphc weights file (bad magic)")

    def test_check_weights_and_run_v_through_ctypes(self):
        # a plain (unsanitized) build: ctypes cannot load an ASan library
        folder = self.path("ctypes_a")
        shutil.copytree(self.a, folder)
        make(folder, "clean", sanitize=False)
        make(folder, "libmlp.so", sanitize=False)
        lib = ctypes.CDLL(os.path.join(folder, "libmlp.so"))
        lib.mlp_check_weights.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
        lib.mlp_check_weights.restype = ctypes.c_int
        d = self.defs
        code = {k: int(d[f"mlp_WEIGHTS_{k}"]) for k in ("OK", "ERR_POINTER", "ERR_MAGIC", "ERR_SIZE", "ERR_VERSION",
                                                          "ERR_MODEL", "ERR_CORRUPT")}
        self.assertEqual(code["OK"], 0)
        self.assertEqual(len(set(code.values())), 7, "the codes are distinct")

        def check(data, offset=0, size=None):
            keep, buf = aligned_buffer(data, offset)
            return lib.mlp_check_weights(buf.ctypes.data, len(data) if size is None else size)

        w = self.wa
        flipped = bytearray(w)
        flipped[len(w) - 1] ^= 1
        version = bytearray(w)
        version[12] = 32  # the header's own size
        self.assertEqual(check(w), code["OK"])
        self.assertEqual(check(w, offset=8), code["OK"], "8-byte alignment is enough")
        self.assertEqual(check(w, offset=4), code["ERR_POINTER"])
        self.assertEqual(lib.mlp_check_weights(None, len(w)), code["ERR_POINTER"])
        self.assertEqual(check(b"GCWEIGHX" + w[8:]), code["ERR_MAGIC"])
        self.assertEqual(check(w[:5]), code["ERR_SIZE"], "a prefix of the magic: truncated")
        self.assertEqual(check(w[:-1]), code["ERR_SIZE"])
        self.assertEqual(check(w + b"x"), code["ERR_SIZE"])
        self.assertEqual(check(bytes(version)), code["ERR_VERSION"])
        self.assertEqual(check(self.wb), code["ERR_MODEL"])
        self.assertEqual(check(bytes(flipped)), code["ERR_CORRUPT"])

        # run_v checks the header (not the whole blob) and runs on its own file only
        x = np.load(MLP_INPUT).astype(np.float32)
        arena = np.zeros(int(d["mlp_ARENA_BYTES"]) + 64, np.uint8)
        arena_p = arena.ctypes.data + (-arena.ctypes.data) % 64
        y = np.zeros((1, 10), np.float32)
        ins = (ctypes.c_void_p * 1)(x.ctypes.data)
        outs = (ctypes.c_void_p * 1)(y.ctypes.data)
        lib.mlp_run_v.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
        keep_b, buf_b = aligned_buffer(self.wb)
        self.assertEqual(lib.mlp_run_v(buf_b.ctypes.data, arena_p, ins, outs), -1)
        self.assertEqual(lib.mlp_run_v(None, arena_p, ins, outs), -1)
        self.assertFalse(y.any(), "a refused run wrote its output")
        keep_a, buf_a = aligned_buffer(w)
        self.assertEqual(lib.mlp_run_v(buf_a.ctypes.data, arena_p, ins, outs), 0)
        self.assertAlmostEqual(float(y.sum()), 1.0, places=5)  # softmax


# A constant whose bytes stress the literal encoding: every byte value, each
# followed by an octal digit and by a letter; quotes, backslashes, '?' runs.
def tricky_bytes():
    out = bytearray()
    for b in range(256):
        out += bytes([b, ord("0"), b, ord("7"), b, ord("8"), b, ord("a")])
    out += b'??=??/??(??)??!??<??>??-??\'"\\"\\\\?\0\0\0' + bytes(range(8)) * 4
    return bytes(out)


class CArray(Base):
    def compile_both(self, gir, name):
        inc, arr = self.path(name + "_incbin"), self.path(name + "_carray")
        graphc("compile", gir, "-o", inc, "--weights=incbin", "--emit-main")
        graphc("compile", gir, "-o", arr, "--weights=c-array", "--emit-main")
        return inc, arr

    def literal_blob(self, folder, name):
        parts = sorted(glob.glob(os.path.join(folder, f"{name}_weights_*.inc")),
                       key=lambda p: int(re.search(r"_(\d+)\.inc$", p).group(1)))
        with open(os.path.join(folder, f"{name}_weights.c")) as f:
            main = f.read()
        self.assertEqual(re.findall(r'^#include "([^"]+\.inc)"$', main, re.M), [os.path.basename(p) for p in parts])
        self.assertIn('#pragma GCC diagnostic ignored "-Woverlength-strings"', main)
        blob = b""
        for p in parts:
            with open(p) as f:
                text = f.read()
            self.assertLessEqual(max(len(l) for l in text.splitlines()), 4095, p)
            blob += c_literal_bytes(text)
        return blob, parts

    def run_against_interpreter(self, gir, folder, name, inputs):
        out, ref = self.path(name + "_out"), self.path(name + "_ref")
        p = run([os.path.join(folder, name + "_main"), out] + inputs)
        self.assertEqual(p.returncode, 0, p.stderr)
        graphc("run", gir, ref, *inputs)
        got, want = np.load(os.path.join(out, "output_0.npy")), np.load(os.path.join(ref, "output_0.npy"))
        self.assertEqual(got.dtype, want.dtype)
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
        return got

    def test_tricky_bytes(self):
        data = tricky_bytes()
        gir = self.path("tricky.gir")
        with open(gir, "w") as f:
            f.write(f"graph tricky {{\n  input %x: u8[{len(data)}]\n"
                    f"  const %c: u8[{len(data)}] = [{', '.join(map(str, data))}]\n"
                    "  %y = Add(%x, %c)\n  output %y\n}\n")
        inc, arr = self.compile_both(gir, "tricky")
        blob, parts = self.literal_blob(arr, "tricky")
        with open(os.path.join(inc, "tricky_weights.bin"), "rb") as f:
            self.assertEqual(blob, f.read(), "the literal decodes to the incbin blob")
        self.assertEqual(len(parts), 1)
        self.assertEqual(blob[:len(data)], data)
        make(arr)
        x = np.arange(len(data), dtype=np.uint8) * np.uint8(7)
        np.save(self.path("x.npy"), x)
        got = self.run_against_interpreter(gir, arr, "tricky", [self.path("x.npy")])
        self.assertTrue(np.array_equal(got, x + np.frombuffer(data, np.uint8)))  # u8 wraps
        if shutil.which("clang"):
            shutil.copytree(arr, self.path("tricky_clang"))
            make(self.path("tricky_clang"), "clean")
            make(self.path("tricky_clang"), cc="clang")

    def test_two_parts(self):
        n = 4_500_000  # 18 MB: more than one 16 MiB part
        gir = self.path("big.gir")
        with open(gir, "w") as f:
            f.write(f"graph big {{\n  input %x: f32[{n}]\n  const %w: f32[{n}] = random(seed=7, lo=-3, hi=3)\n"
                    "  %y = Mul(%x, %w)\n  output %y\n}\n")
        inc, arr = self.compile_both(gir, "big")
        blob, parts = self.literal_blob(arr, "big")
        self.assertEqual(len(parts), 2)
        with open(os.path.join(inc, "big_weights.bin"), "rb") as f:
            self.assertEqual(blob, f.read())
        make(arr)
        np.save(self.path("bx.npy"), np.linspace(-1, 1, n, dtype=np.float32))
        self.run_against_interpreter(gir, arr, "big", [self.path("bx.npy")])


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
