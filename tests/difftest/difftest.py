#!/usr/bin/python3
"""difftest.py — random-graph differential testing of graphc.

Two generators, one driver:

* `gir`: random text-IR graphs over graphc's op registry (gen_gir.py). Each
  graph is compiled at -O0 and at -O2 to C, built, run on seeded random
  inputs, and both results are compared with graphc's reference interpreter
  (`graphc run` without -O: the graph as loaded), as tests/run_op_tests.py
  does for the op tests (its input maker and comparison are reused).
* `torch`: random PyTorch graphs (gen_torch.py) exported to ONNX (opsets 13
  and 17), compiled by graphc at -O0 and -O2 and compared with PyTorch's own
  output (as tests/models/torch_models.py does).

A graph is named by its seed. Building a C program costs most of the time,
so --pack P puts P graphs with consecutive seeds side by side in one model
(disjoint components, each with its own inputs and outputs) compiled once;
the figures count graphs, not models. Outputs are mapped back to their
component, so a failure names the graph's seed; a compile error or a crash of
a packed model is narrowed down by running each of its graphs alone.
`--repro SEED` writes that one graph (.gir or .onnx with its input and
expected output) into --work for a bug report or a regression test.

Modes:
  difftest.py gir --ci        the fixed seeds ctest runs (difftest_gir), plus
                              every tests/difftest/regressions/*.gir replayed
  difftest.py gir --count N --seed S -j 2 [--pack P]   the long mode
  difftest.py gir --repro SEED [--work DIR]
and the same with `torch`.

Tolerances: floats within atol*max(1, max|expected|) + rtol*|expected| per
output (f32: 2e-4 and 2e-3, f64: 1e-9 and 1e-8 for gir graphs; 1e-4 and 1e-3
for torch), integers and bools exactly. One line per failure, then a summary
(graphs, models, failures, ops covered, wall time); exit status 1 on any
failure.
"""
import argparse
import concurrent.futures
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
import run_op_tests as optests  # noqa: E402  (input maker, comparison, subprocess helper)
from models.torch_models import blas_setup  # noqa: E402
import gen_gir  # noqa: E402

CC = os.environ.get("CC", "cc")
CFLAGS = optests.STRICT_CFLAGS.split()
SAN = os.environ.get("GRAPHC_SANITIZE") == "1"
SAN_FLAGS = optests.SAN_FLAGS.split() if SAN else []
# The CI seeds: about 40 s and 20 s on 2 cores in the Release build; the sanitizer build
# (GRAPHC_SANITIZE=1, generated programs built with ASan/UBSan, about 4x slower) runs the first quarter.
CI_GIR = dict(seed=1, count=100 if SAN else 200, pack=20)
CI_TORCH = dict(seed=1, count=32 if SAN else 96, pack=8)
LOCK = threading.Lock()


def say(msg):
    with LOCK:
        print(msg, flush=True)


def build(cdir, blas):
    """Builds cdir/m_main from the sources graphc wrote (no make: one cc call)."""
    cflags, libs = blas
    return optests.run([CC] + CFLAGS + SAN_FLAGS + cflags + ["-I.", "-o", "m_main", "m.c", "m_main.c",
                                                              "m_weights.S"] + libs + SAN_FLAGS + ["-lm"], cwd=cdir)


def compile_and_run(args, model, work, in_files, level, blas, extra):
    """Compiles model at -O<level>, builds and runs it; returns (outputs dict, None) or (None, why)."""
    cdir, out = work / f"c{level}", work / f"out{level}"
    shutil.rmtree(cdir, ignore_errors=True)
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    p = optests.run([args.graphc, "compile", str(model), "-o", str(cdir), "--emit-main", "--name", "m",
                     f"-O{level}"] + extra)
    if p.returncode != 0:
        return None, f"graphc compile -O{level} failed, {optests.describe(p)}"
    p = build(cdir, blas)
    if p.returncode != 0:
        return None, f"cc (-O{level} model) failed, {optests.describe(p)}"
    p = optests.run([str(cdir / "m_main"), str(out)] + in_files)
    if p.returncode != 0:
        return None, f"m_main (-O{level}) failed, {optests.describe(p)}"
    return optests.read_outputs(out), None


def compare_outputs(ref, got, tol, owner, who):
    """{component: reason} for the outputs of got that differ from ref."""
    bad = {}
    if sorted(ref) != sorted(got):
        return {None: f"{who}: output files {sorted(got)} != reference {sorted(ref)}"}
    for name in ref:
        k = int(re.search(r"(\d+)", name).group(1))
        e = ref[name]
        t_abs, t_rel = tol[owner[k]] if isinstance(tol, dict) else tol
        if e.dtype.kind == "f" and e.size:
            with np.errstate(invalid="ignore"):
                fin = np.abs(e[np.isfinite(e)])
            t_abs *= max(1.0, float(fin.max()) if fin.size else 1.0)
        why = optests.compare(got[name], e, t_abs, t_rel, False)
        if why and owner[k] not in bad:
            bad[owner[k]] = f"{who} output {k}: {why}"
    return bad


# ---- gir graphs -------------------------------------------------------------------------------

def gir_check(args, seeds, work):
    """Runs the graphs `seeds` packed in one model. Returns (failures {seed: reason}, ops used)."""
    comps = [gen_gir.gen_component(s) for s in seeds]
    text = gen_gir.pack(comps, f"difftest_{seeds[0]}")
    return gir_check_text(args, text, work, seeds, comps), set().union(*(c.ops for c in comps))


def gir_check_text(args, text, work, seeds=None, comps=None):
    work.mkdir(parents=True, exist_ok=True)
    model = work / "model.gir"
    model.write_text(text)
    gname, inputs, ranges, tol = optests.parse_test(text)
    # output k -> owning seed (a component's outputs are contiguous, in pack order)
    if comps is not None:
        owner = [c.seed for c in comps for _ in c.outputs]
        tol = {c.seed: c.tol() for c in comps}
    else:
        owner = [seeds[0] if seeds else None] * len(re.findall(r"^\s*output\s", text, re.M))
    key = int.from_bytes(hashlib.sha256(gname.encode()).digest()[:8], "little")
    rng = np.random.default_rng(key)
    in_files = []
    for k, (name, dtype, dims) in enumerate(inputs):
        lo, hi = ranges.get(name, (-2.0, 2.0))
        path = work / f"in{k}.npy"
        np.save(path, optests.make_input(rng, dtype, dims, lo, hi), allow_pickle=False)
        in_files.append(str(path))
    fold = [] if key % 3 else ["--no-fold"]  # a third of the models keep constant subgraphs unfolded
    blas = args.blas_on if key & 4 else args.blas_off
    ref_dir = work / "ref"
    shutil.rmtree(ref_dir, ignore_errors=True)
    ref_dir.mkdir()
    p = optests.run([args.graphc, "run", str(model), str(ref_dir)] + fold + in_files)
    if p.returncode != 0:
        return {None: f"graphc run (reference) failed, {optests.describe(p)}"}
    ref = optests.read_outputs(ref_dir)
    bad = {}
    for level in args.levels:
        got, why = compile_and_run(args, model, work, in_files, level, blas, fold)
        if why:
            bad.setdefault(None, why)
            continue
        for k, v in compare_outputs(ref, got, tol, owner, f"-O{level}").items():
            bad.setdefault(k, v)
    return bad


def gir_repro_text(seed):
    return gen_gir.component_text(seed)


# ---- torch graphs -----------------------------------------------------------------------------

def torch_check(args, seeds, work):
    import gen_torch
    work.mkdir(parents=True, exist_ok=True)
    opset = 17 if seeds[0] % 2 else 13
    with LOCK:  # torch export is not thread-safe
        try:
            ins, expected, owner, ops = gen_torch.export_pack(seeds, work / "model.onnx", opset)
        except Exception as e:
            return {None: f"torch export: {type(e).__name__}: {' '.join(str(e).split())[:300]}"}, set()
    in_files = []
    for k, x in enumerate(ins):
        path = work / f"in{k}.npy"
        np.save(path, x, allow_pickle=False)
        in_files.append(str(path))
    ref = {f"output_{k}.npy": e for k, e in enumerate(expected)}
    blas = args.blas_on if seeds[0] & 2 else args.blas_off
    bad = {}
    for level in args.levels:
        got, why = compile_and_run(args, work / "model.onnx", work, in_files, level, blas, [])
        if why:
            bad.setdefault(None, why)
            continue
        for k, v in compare_outputs(ref, got, (1e-4, 1e-3), owner, f"-O{level} (opset {opset})").items():
            bad.setdefault(k, v)
    return bad, ops


# ---- driver -----------------------------------------------------------------------------------

def run_pack(args, check, seeds, stats):
    work = args.work / f"p{seeds[0]}"
    shutil.rmtree(work, ignore_errors=True)
    try:
        bad, ops = check(args, seeds, work)
    except Exception as e:  # a generator or driver bug fails the pack, not the run
        bad, ops = {None: f"driver error: {type(e).__name__}: {e}"}, set()
    if None in bad and len(seeds) > 1:
        # a model-wide failure: find the graphs that fail alone
        whole = bad.pop(None)
        alone = {}
        for s in seeds:
            try:
                b, _ = check(args, [s], args.work / f"p{seeds[0]}_alone{s}")
            except Exception as e:
                b = {s: f"driver error: {type(e).__name__}: {e}"}
            if b:
                alone[s] = next(iter(b.values()))
            else:
                shutil.rmtree(args.work / f"p{seeds[0]}_alone{s}", ignore_errors=True)
        if not alone:
            alone[f"pack {seeds[0]}..{seeds[-1]}"] = "fails only packed: " + whole
        bad.update(alone)
    with LOCK:
        stats["graphs"] += len(seeds)
        stats["models"] += 1
        stats["ops"] |= ops
        for s, why in bad.items():
            if why.startswith("torch export:") and isinstance(s, int):
                # the exporter's own limits (e.g. InstanceNorm after a reflect Pad in torch 1.13):
                # not a graphc failure, counted apart
                stats["skipped"].append(s)
                print(f"SKIP {args.kind} seed {s}: {why[:300]}", flush=True)
                continue
            stats["failed"].append(s)
            how = f"--repro {s}" if isinstance(s, int) else \
                f"--seed {seeds[0]} --count {len(seeds)} --pack {len(seeds)} --keep (model.gir in the work folder)"
            print(f"FAIL {args.kind} seed {s} (pack {seeds[0]}..{seeds[-1]}): {why}\n"
                  f"     reproduce: tests/difftest/difftest.py {args.kind} {how}", flush=True)
        if stats["models"] % args.progress == 0:
            print(f"... {stats['graphs']} graphs, {len(stats['failed'])} failures, "
                  f"{time.time() - stats['t0']:.0f}s", flush=True)
    if not bad and not args.keep:
        shutil.rmtree(work, ignore_errors=True)


def replay_regressions(args, stats):
    files = sorted((HERE / "regressions").glob("*.gir"))
    for f in files:
        work = args.work / f"reg_{f.stem}"
        shutil.rmtree(work, ignore_errors=True)
        bad = gir_check_text(args, f.read_text(), work, [f.name])
        stats["regressions"] += 1
        for why in bad.values():
            stats["failed"].append(f.name)
            say(f"FAIL regression {f.name}: {why}")
        if not bad and not args.keep:
            shutil.rmtree(work, ignore_errors=True)


def repro(args):
    spec = args.repro
    seed = int(spec.split(":")[0])
    args.work.mkdir(parents=True, exist_ok=True)
    if args.kind == "gir":
        path = args.work / f"difftest_{seed}.gir"
        path.write_text(gir_repro_text(seed))
        print(f"wrote {path}")
        print(f"check it: tests/run_op_tests.py --graphc {args.graphc} --dir {args.work} --no-coverage")
    else:
        import gen_torch
        folder = args.work / f"torch_{seed}"
        folder.mkdir(parents=True, exist_ok=True)
        opset = 17 if seed % 2 else 13
        ins, expected, _, _ = gen_torch.export_pack([seed], folder / "model.onnx", opset)
        for k, x in enumerate(ins):
            np.save(folder / f"in{k}.npy", x, allow_pickle=False)
        for k, e in enumerate(expected):
            np.save(folder / f"expected_{k}.npy", e, allow_pickle=False)
        print(f"wrote {folder}/model.onnx (opset {opset}), in*.npy, expected_*.npy (PyTorch's outputs)")
        print(gen_torch.describe(seed))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("kind", choices=("gir", "torch"))
    ap.add_argument("--graphc", default=str(ROOT / "build" / "graphc"))
    ap.add_argument("--ci", action="store_true", help="the fixed CI seeds (and, for gir, the regressions)")
    ap.add_argument("--seed", type=int, default=1, help="first seed")
    ap.add_argument("--count", type=int, default=100, help="graphs to run")
    ap.add_argument("--pack", type=int, default=None, help="graphs per compiled model (default: gir 20, torch 8)")
    ap.add_argument("-j", type=int, default=2, help="models checked in parallel")
    ap.add_argument("--opt", default="0,2", help="levels compared with the reference (default 0,2)")
    ap.add_argument("--work", help="scratch folder (default: a temporary one; failures are kept there)")
    ap.add_argument("--keep", action="store_true", help="keep the work folders of passing models")
    ap.add_argument("--repro", metavar="SEED", help="write the graph SEED alone into --work and stop")
    ap.add_argument("--no-regressions", action="store_true", help="with --ci: skip regressions/*.gir")
    args = ap.parse_args()
    args.graphc = os.path.abspath(args.graphc)
    if not os.access(args.graphc, os.X_OK):
        sys.exit(f"graphc binary not found: {args.graphc} (pass --graphc PATH)")
    temp = not args.work
    args.work = Path(args.work or tempfile.mkdtemp(prefix=f"graphc-difftest-{args.kind}-")).resolve()
    if args.repro:
        return repro(args)
    if args.ci:
        d = CI_GIR if args.kind == "gir" else CI_TORCH
        args.seed, args.count = d["seed"], d["count"]
        args.pack = args.pack or d["pack"]
    args.pack = args.pack or (20 if args.kind == "gir" else 8)
    args.levels = [int(x) for x in args.opt.split(",")]
    args.blas_off, args.blas_on = blas_setup("0"), blas_setup("auto")
    args.kind_check = gir_check if args.kind == "gir" else torch_check
    if args.kind == "torch":
        import torch
        torch.set_num_threads(1)
    n_models = (args.count + args.pack - 1) // args.pack
    args.progress = max(1, n_models // 10)
    args.work.mkdir(parents=True, exist_ok=True)
    stats = {"graphs": 0, "models": 0, "failed": [], "skipped": [], "ops": set(), "regressions": 0,
             "t0": time.time()}
    packs = [list(range(s, min(s + args.pack, args.seed + args.count)))
             for s in range(args.seed, args.seed + args.count, args.pack)]
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.j)) as pool:
        for f in [pool.submit(run_pack, args, args.kind_check, p, stats) for p in packs]:
            f.result()
    if args.kind == "gir" and args.ci and not args.no_regressions:
        replay_regressions(args, stats)
    dt = time.time() - stats["t0"]
    onnx_ops = sorted(o[5:] for o in stats["ops"] if o.startswith("onnx:"))
    mine = sorted(o for o in stats["ops"] if not o.startswith("onnx:"))
    print(f"{'steps' if args.kind == 'torch' else 'ops'} covered ({len(mine)}): {' '.join(mine)}")
    if onnx_ops:
        print(f"ONNX ops in the exported models ({len(onnx_ops)}): {' '.join(onnx_ops)}")
    reg = f", {stats['regressions']} regression graphs" if stats["regressions"] else ""
    print(f"{args.kind}: {stats['graphs']} graphs (seeds {args.seed}..{args.seed + args.count - 1}) in "
          f"{stats['models']} models{reg}, levels -O{' -O'.join(map(str, args.levels))}, "
          f"{len(stats['failed'])} failed"
          + (f", {len(stats['skipped'])} skipped (PyTorch could not export them)" if stats["skipped"] else "")
          + f", {dt:.0f}s")
    if stats["failed"]:
        print(f"work folder (failures kept): {args.work}")
    elif temp:
        shutil.rmtree(args.work, ignore_errors=True)
    return 1 if stats["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
