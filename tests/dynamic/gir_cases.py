"""gir_cases.py — the driver the runtime-operand tests share
(test_dynamic_operands.py, test_dyn_h1.py, test_dyn_h2.py).

Each test lists cases: (name, text IR, runs), a run being (what, input
arrays, reference outputs or None, error words). Every model is compiled
ONCE with no flags, its folder built with -Werror -pedantic (ASan/UBSan
with GRAPHC_SANITIZE=1), and every run goes through the compiled NAME_main
and the interpreter (graphc run): outputs must match the references (same
shape; integers exactly, floats within the tolerances, NaN equal to NaN),
and a run with no references must fail in both with one line (the
interpreter's naming the node and containing the error words, NAME_main's
saying the inputs do not fit the model: NAME_ERR_SHAPE).

With --target cuda the models compile for the CUDA backend instead and the
runner is NAME_main_emu (the generated CUDA on graphc's CPU emulation): the
same runs, references and one-line failures.
"""
import argparse
import os
import shutil
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_dynamic import FAILS, build_runner, check, run  # noqa: E402


def close(a, b, rtol, atol):
    b = np.asarray(b)
    if a.dtype.kind != "f":
        return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b)
    return a.shape == b.shape and np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True)


def run_model(graphc, work, name, text, runs, rtol, atol, target="c"):
    model = os.path.join(work, f"{name}.gir")
    with open(model, "w") as f:
        f.write(text)
    out = os.path.join(work, f"{name}_out")
    p = run([graphc, "compile", model, "-o", out, "--emit-main", "--name", name, f"--target={target}"])
    if not check(p.returncode == 0, f"{name}: compiles with no flags (--target={target})"):
        print(p.stderr)
        return
    exe, log = build_runner(out, name, target)
    if not check(exe is not None, f"{name}: the folder builds with -Werror -pedantic"):
        print(log)
        return
    for k, (what, ins, refs, err) in enumerate(runs):
        files = []
        for j, v in enumerate(ins):
            files.append(os.path.join(work, f"{name}_{k}_in{j}.npy"))
            np.save(files[-1], v)
        r_i, r_c = os.path.join(work, f"{name}_{k}_interp"), os.path.join(work, f"{name}_{k}_c")
        p = run([graphc, "run", model, r_i] + files)
        q = run([exe, r_c] + files)
        if refs is None:
            lines = p.stderr.strip().splitlines()
            check(p.returncode == 1 and len(lines) == 1 and err in lines[0] and "node" in lines[0],
                  f"{name} {what}: graphc run fails with one line ({p.stderr.strip()})")
            check(q.returncode != 0 and len(q.stderr.strip().splitlines()) == 1 and "do not fit the model" in q.stderr,
                  f"{name} {what}: {name}_main fails with one line, NAME_ERR_SHAPE's ({q.stderr.strip()})")
            continue
        if not check(p.returncode == 0 and q.returncode == 0, f"{name} {what}: graphc run and {name}_main succeed"):
            print(p.stderr + q.stderr)
            continue
        for i, ref in enumerate(refs):
            ref = np.asarray(ref)
            gi = np.load(os.path.join(r_i, f"output_{i}.npy"))
            gc = np.load(os.path.join(r_c, f"output_{i}.npy"))
            check(close(gi, ref, rtol, atol), f"{name} {what}: interpreter output {i} {gi.shape} matches the reference {ref.shape}")
            check(close(gc, ref, rtol, atol), f"{name} {what}: compiled output {i} {gc.shape} matches the reference {ref.shape}")


def main(cases, seed, rtol=1e-5, atol=1e-5):
    """Parses --graphc and --work, runs cases(rng) and exits 1 on any failure."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--graphc", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--target", choices=["c", "cuda"], default="c",
                    help="the backend (cuda: the generated CUDA on graphc's CPU emulation)")
    a = ap.parse_args()
    graphc = os.path.abspath(a.graphc)
    work = os.path.abspath(a.work)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    for name, text, runs in cases(np.random.default_rng(seed)):
        run_model(graphc, work, name, text, runs, rtol, atol, a.target)
    print(f"{len(FAILS)} failed")
    sys.exit(1 if FAILS else 0)
