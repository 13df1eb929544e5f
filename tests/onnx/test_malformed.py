#!/usr/bin/python3
"""Checks that graphc refuses every file of tests/onnx/malformed/ cleanly:
exit status 1, exactly one line on stderr that names the file, the node
(where one is involved) and the rule broken, and no output folder left
behind. Also checks --shape handling on the symbolic-dim model.

    /usr/bin/python3 tests/onnx/test_malformed.py --graphc BUILD/graphc

The files are written by make_malformed.py (committed, so the test needs no
onnx package)."""
import argparse
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
DIR = os.path.join(HERE, "malformed")

# file -> text stderr must contain after "FILE: "
EXPECTED = {
    "truncated.onnx": "malformed ONNX protobuf at byte 2: field 7: length 65 runs past the end of its message",
    "wrong_wire_type.onnx": "ModelProto.ir_version (field 1) has wire type length-delimited, expected varint",
    "length_past_end.onnx": "field 7: length 1000 runs past the end of its message (3 bytes left)",
    "huge_tensor.onnx": "tensor 'w' declares f32 [1048576,1024] (4294967296 bytes) but raw_data holds 16 bytes",
    "negative_dim.onnx": "tensor 'w' dim 0 is negative (-3)",
    "overflow_dims.onnx": "tensor 'w' element count overflows",
    "bad_axis.onnx": "node 'sm' (Softmax): attribute 'axis' = 5 is out of range",
    "undefined_input.onnx": "node 'relu' (Relu): input 'nowhere' is not defined",
    "cycle.onnx": "(Relu): graph has a cycle through value",
    "unknown_op.onnx": "node 'mystery' (Foo): unsupported op 'Foo'",
    "ext_dotdot.onnx": "tensor 'w': external data location '../make_malformed.py' contains '..'",
    "ext_absolute.onnx": "tensor 'w': external data location '/etc/passwd' is an absolute path",
    "ext_symlink.onnx": "tensor 'w': external data location 'ext_link.bin' resolves outside the model's folder",
    "ext_range.onnx": "tensor 'w': external data range [8, +24) runs past the end of 'ext_data.bin' (24 bytes)",
    "symbolic_dim.onnx": "input 'x' dim 0 is symbolic ('batch'); pass --max-shape x=MAX,3 to compile once for sizes up to MAX, or --shape x=1,3 for one size",
}

# (extra arguments, expected text or None for success) on symbolic_dim.onnx
SHAPE_CASES = [
    (["--shape", "x=4,3"], None),
    (["--shape=x=4,3", "--shape", "y=1"], "--shape names 'y', which is not a graph input (inputs: x)"),
    (["--shape", "x=4,5"], "--shape x=[4,5]: dim 1 is 3 in the model"),
    (["--shape", "x=4"], "has rank 1, but the model declares input 'x' with rank 2"),
]


def run(graphc, args):
    p = subprocess.run([graphc] + args, capture_output=True, text=True, timeout=60)
    return p.returncode, p.stderr


def check_error(graphc, path, args, want, outdir):
    rc, err = run(graphc, ["compile", path, "-o", outdir] + args)
    lines = err.splitlines()
    problems = []
    if rc != 1:
        problems.append(f"exit status {rc}, expected 1")
    if len(lines) != 1:
        problems.append(f"{len(lines)} stderr lines, expected 1")
    if f"{path}: " not in err or want not in err:
        problems.append(f"stderr lacks '{path}: ...{want}'")
    if os.path.exists(outdir):
        problems.append(f"output folder {outdir} was left behind")
    return problems, err.strip()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--graphc", required=True)
    a = ap.parse_args()
    fails = 0
    with tempfile.TemporaryDirectory() as tmp:
        missing = sorted(set(f for f in os.listdir(DIR) if f.endswith(".onnx")) ^ set(EXPECTED))
        if missing:
            print(f"FAIL files and EXPECTED table differ: {missing}")
            fails += 1
        for name, want in sorted(EXPECTED.items()):
            path = os.path.join(DIR, name)
            problems, err = check_error(a.graphc, path, [], want, os.path.join(tmp, name + ".out"))
            print(("FAIL " if problems else "ok   ") + name + ("" if not problems else ": " + "; ".join(problems) + f"\n     stderr: {err}"))
            fails += bool(problems)
        sym = os.path.join(DIR, "symbolic_dim.onnx")
        for i, (args, want) in enumerate(SHAPE_CASES):
            out = os.path.join(tmp, f"shape{i}.out")
            if want is None:
                rc, err = run(a.graphc, ["dump", sym] + args)
                ok = rc == 0 and not err
                print(("ok   " if ok else "FAIL ") + f"dump {' '.join(args)}" + ("" if ok else f": rc {rc}, {err.strip()}"))
            else:
                problems, err = check_error(a.graphc, sym, args, want, out)
                ok = not problems
                print(("ok   " if ok else "FAIL ") + f"compile {' '.join(args)}" + ("" if ok else ": " + "; ".join(problems) + f"\n     stderr: {err}"))
            fails += not ok
    print(f"{fails} failure(s)")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
