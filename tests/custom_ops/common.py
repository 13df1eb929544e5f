"""What the custom-operator test scripts share: checks, commands, and the
compiled-gradient comparison (compile --grad --loss=mse:y, build, run NAME_main,
compare its outputs with values computed by PyTorch)."""
import os
import re
import subprocess

import numpy as np

FAILS = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILS.append(what)


def run(cmd, env=None, cwd=None):
    return subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=cwd)


def one_line_error(p):
    lines = p.stderr.strip().splitlines()
    return p.returncode == 1 and len(lines) == 1 and lines[0].startswith("graphc: error: ")


def finish():
    if FAILS:
        print("%d check(s) failed" % len(FAILS))
        return 1
    print("all checks passed")
    return 0


def compiled_grads(g, env, work, model, ops, name, grad_func, label):
    """compile MODEL --ops OPS --grad --loss=mse:y into work/gen_grad as NAME, build it
    (-Werror -pedantic), run NAME_main on work/x.npy and `label`; {output name: array},
    or None after a failed check."""
    lpath = os.path.join(work, "label.npy")
    np.save(lpath, label)
    gen = os.path.join(work, "gen_grad")
    p = run([g, "compile", model, "-o", gen, "--ops", ops, "--grad", "--loss=mse:y", "--emit-main", "--name", name],
            env)
    check(p.returncode == 0, "compile --grad --ops " + p.stderr)
    if p.returncode:
        return None
    check(grad_func + "(" in open(os.path.join(gen, name + ".c")).read(), "the gradient calls " + grad_func)
    p = run(["make", "-s", "CFLAGS=-O2 -std=c99 -Wall -Wextra -Werror -pedantic"], cwd=gen)
    check(p.returncode == 0, "the --grad folder builds " + p.stderr[-2000:])
    if p.returncode:
        return None
    out = os.path.join(work, "og")
    # inputs in the order NAME_main takes them: the graph inputs, x then label
    p = run([os.path.join(gen, name + "_main"), out, os.path.join(work, "x.npy"), lpath])
    check(p.returncode == 0, name + "_main runs " + p.stderr)
    if p.returncode:
        return None
    outs = [f for f in os.listdir(out) if f.startswith("output_")]
    got = [np.load(os.path.join(out, f)) for f in sorted(outs, key=lambda s: int(s[7:-4]))]
    names = re.findall(r"/\* output \d+: '([^']+)'", open(os.path.join(gen, name + ".h")).read())
    check(len(names) == len(got), "%s.h names every output of %s_main (%s)" % (name, name, names))
    return dict(zip(names, got))


def compare_grads(got, want):
    """Each of want's arrays (PyTorch, float64) against the compiled output of that name."""
    for key, ref in want.items():
        ok = key in got
        err = float(np.abs(got[key].astype(np.float64) - ref).max()) if ok else float("inf")
        check(err < 1e-5, "--grad %s matches PyTorch (max error %.3g)" % (key, err))
