#!/usr/bin/python3
"""gen_cases.py OUTDIR [--seed S] — randomized gradient-check cases.

Writes small text-IR graphs with random shapes (broadcasting between
operands, size-1 dims, ranks 1-4) and random attributes (axes, keepdims,
transposes, ...) into OUTDIR/<family>/*.gir, for tests/grad/run_gradcheck.py.
The same seed gives the same files. Each family's generator lives in
tests/grad/gen_<family>.py and defines `cases(rng)`, yielding (name, text)
pairs; this script collects them all.
"""
import argparse
import importlib.util
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def shape_str(dims):
    return "[" + ",".join(str(d) for d in dims) + "]"


def broadcast_pair(rng, rank=None):
    """Two shapes that broadcast against each other (some dims 1, a shorter rank)."""
    r = int(rng.integers(1, 5)) if rank is None else rank
    full = [int(rng.integers(1, 5)) for _ in range(r)]
    a, b = list(full), list(full)
    for k in range(r):
        u = rng.random()
        if u < 0.25:
            a[k] = 1
        elif u < 0.5:
            b[k] = 1
    if r > 1 and rng.random() < 0.3:
        b = b[int(rng.integers(1, r)):]
    return a, b


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("outdir")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    out = Path(args.outdir)
    n = 0
    for mod_path in sorted(HERE.glob("gen_*.py")):
        if mod_path.name == "gen_cases.py":
            continue
        family = mod_path.stem[4:]
        spec = importlib.util.spec_from_file_location(mod_path.stem, mod_path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[mod_path.stem] = mod
        spec.loader.exec_module(mod)
        rng = np.random.default_rng([args.seed, sum(map(ord, family))])
        (out / family).mkdir(parents=True, exist_ok=True)
        for name, text in mod.cases(rng):
            (out / family / f"{name}.gir").write_text(text)
            n += 1
    print(f"gen_cases: {n} cases in {out}")


if __name__ == "__main__":
    main()
