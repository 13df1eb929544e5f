#!/usr/bin/python3
"""run_firmware.py — the firmware test: graphc's generated C built for Cortex-M
microcontrollers and run under qemu, against the host build of the same code.

For each model (PyTorch modules exported to ONNX with seeded weights, from
tests/models/torch_models.py where they are shared: the MLP with its
Softmax, the LeNet-style CNN with its LogSoftmax, a one-layer transformer
encoder whose attention runs a Softmax, and MobileNetV2 at width 0.35 on
96x96 images with 2 classes, the size of a visual-wake-words detector), the
test

  1. compiles it with `graphc compile model.onnx -o DIR --name NAME` (the
     default options: the weights linked in by .incbin);
  2. builds the generated folder with its own Makefile for every board,
     `make CC=arm-none-eabi-gcc CFLAGS="<cpu flags> -O2 -std=c99 -Wall -Wextra
     -Werror -pedantic -Wdouble-promotion"` (the Makefile sees a bare-metal
     compiler and builds only libNAME.a), and for the host with the host's cc
     and CPU_FLAGS= (the portable C kernels the boards run, not the host's
     AVX ones, whose other summation order differs by more than 1e-5 on deep
     models);
  3. checks that NAME.o calls nothing but libgcc's helpers and memcpy,
     memset, memmove, memcmp; that the board library defines no global
     symbol but NAME_* (the runtime kernels are static, so models link
     together); and that
     it does no double-precision arithmetic: on the Cortex-M4F (single-
     precision FPU) NAME.o calls no libgcc double-precision helper
     (__aeabi_dadd, __aeabi_f2d, ...); on the Cortex-M55 (whose FPU has
     double precision) NAME.o has no .f64 instruction.

Then for each image (each model alone, and the MLP and the LeNet together in
one program, `--name` keeping their symbols apart) it writes a main
(IMAGE_main.c) that embeds the models' inputs as C arrays, runs each model
once in one static arena (the largest model's) and prints every output as
the hex bits of its floats through fw.h, and

  4. links it for every board with fw_print.c, startup.c (vector table,
     reset handler, semihosting, memcpy and friends) and the board's linker
     script, with -nostdlib and only libm and libgcc after the model
     libraries: a model that needed anything of libc (errno, stdio, malloc)
     would not link;
  5. runs it under `qemu-system-arm -machine BOARD -semihosting-config
     enable=on,target=native -nographic -monitor none -serial none -kernel
     IMAGE.elf` (with a timeout; qemu writes the semihosting output on its
     stderr), and the same main linked with host_io.c on the host;
  6. compares the board's outputs with the host's: |board - host| <= 1e-5 *
     |host| + 1e-6 * max|host| for every element (printing both for the
     worst element), and the host's outputs with PyTorch's (1e-4 + 1e-3 *
     |torch|, the real-model test's tolerance);
  7. prints the sizes: per model and board the weights (flash; NAME.h's
     NAME_WEIGHTS_BYTES, checked against the symbol in the image), the code
     (flash: .text and .rodata of NAME.o, as arm-none-eabi-size measures
     them) and the arena (RAM; NAME_ARENA_BYTES); per image its flash
     (vectors, code, constants, .data's load image) and RAM (.data, .bss
     with the arena, the stack, and how much of the stack the run used).

Boards: the Cortex-M4F of the MPS2 AN386 (qemu mps2-an386; mps2_an386.ld)
and the Cortex-M55 of the MPS3 AN547 (qemu mps3-an547; mps3_an547.ld).
`--all-models` instead builds every model of tests/models/torch_models.py's
default list (ResNet-18/50, MobileNetV2, DenseNet-121, ..., opsets 13 and 17)
for both boards with the checks of steps 1-3, without running them (most do
not fit the boards' memory); it takes several minutes and is not part of
the ctest.

Needs arm-none-eabi-gcc with newlib's libm (gcc-arm-none-eabi,
libnewlib-arm-none-eabi), qemu-system-arm and Debian's python3-torch and
python3-torchvision: all installed by scripts/setup.sh; a missing tool
fails the test. Exit status 0 when every check passes.
"""
import argparse
import concurrent.futures
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
sys.path.insert(0, str(ROOT / "tests" / "models"))
import torch_models  # noqa: E402  (the shared model definitions and export)

TIMEOUT = 300  # seconds for any one command
QEMU_TIMEOUT = 120
WARN = ["-O2", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-Wdouble-promotion"]
# The board programs' own sources: no builtins, and no loop turned into a call of
# the memcpy or memset that startup.c defines with such loops.
FW_CFLAGS = ["-O2", "-std=c99", "-Wall", "-Wextra", "-Werror", "-ffreestanding", "-fno-tree-loop-distribute-patterns"]
BOARDS = {
    "cortex-m4": {"cpu": ["-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16"],
                  "machine": "mps2-an386", "ld": "mps2_an386.ld", "fpu_dp": False},
    "cortex-m55": {"cpu": ["-mcpu=cortex-m55", "-mthumb", "-mfloat-abi=hard"],
                   "machine": "mps3-an547", "ld": "mps3_an547.ld", "fpu_dp": True},
}
REL, ABS_OF_MAX = 1e-5, 1e-6
TORCH_ATOL, TORCH_RTOL = 1e-4, 1e-3


def attention():
    """One transformer encoder layer (d_model 32, 4 heads, feed-forward 64) over 8 tokens:
    Softmax in the attention, LayerNorm, MatMul."""
    import torch.nn as nn
    layer = nn.TransformerEncoderLayer(d_model=32, nhead=4, dim_feedforward=64, dropout=0.0, batch_first=True)
    return nn.TransformerEncoder(layer, num_layers=1, enable_nested_tensor=False), (1, 8, 32)


def mobilenet_v2_vww():
    """MobileNetV2 at width 0.35 on 96x96 images with 2 classes (a visual-wake-words detector's size)."""
    import torchvision.models as models
    return models.mobilenet_v2(weights=None, width_mult=0.35, num_classes=2), (1, 3, 96, 96)


MODELS = {"mlp": torch_models.mlp, "lenet": torch_models.lenet, "attention": attention,
          "mobilenet_v2_vww": mobilenet_v2_vww}
# name -> the models it runs, in order
IMAGES = {"mlp": ["mlp"], "lenet": ["lenet"], "attention": ["attention"],
          "mobilenet_v2_vww": ["mobilenet_v2_vww"], "mlp_lenet": ["mlp", "lenet"]}
DOUBLE_HELPER = re.compile(r"__aeabi_(d\w+|[fil]2d|ul2d|ui2d)\b")


class Failed(Exception):
    pass


EXPORT_LOCK = threading.Lock()  # torch.onnx.export is not reentrant


def run(cmd, cwd=None, timeout=TIMEOUT, check=True):
    try:
        p = subprocess.run([str(c) for c in cmd], cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=timeout, text=True, errors="replace")
    except subprocess.TimeoutExpired:
        raise Failed(f"timed out after {timeout}s: {' '.join(map(str, cmd))}")
    if check and p.returncode != 0:
        raise Failed(f"exit {p.returncode}: {' '.join(map(str, cmd))}\n{(p.stderr or p.stdout)[-3000:]}")
    return p


def need_tools():
    missing = [t for t in ("arm-none-eabi-gcc", "arm-none-eabi-size", "arm-none-eabi-nm", "arm-none-eabi-objdump",
                           "qemu-system-arm", "make", os.environ.get("CC", "cc")) if not shutil.which(t)]
    if shutil.which("arm-none-eabi-gcc"):
        libm = run(["arm-none-eabi-gcc"] + BOARDS["cortex-m4"]["cpu"] + ["-print-file-name=libm.a"]).stdout.strip()
        if not os.path.isabs(libm):  # gcc prints the bare name when it finds no such file
            missing.append("newlib's libm for arm-none-eabi (libnewlib-arm-none-eabi)")
    if missing:
        sys.exit("run_firmware.py: missing " + ", ".join(missing) + " (scripts/setup.sh installs gcc-arm-none-eabi, "
                 "libnewlib-arm-none-eabi and qemu-system-arm)")


def header_facts(h):
    """NAME.h's #defines as a dict of name -> text."""
    return dict(re.findall(r"^#define\s+(\w+)\s+(.*?)\s*$", h.read_text(), re.M))


def section_sizes(size_tool, path):
    """{section: bytes} from `size -A`."""
    out = run([size_tool, "-A", path]).stdout
    sizes = {}
    for line in out.splitlines()[2:]:
        f = line.split()
        if len(f) >= 2 and f[1].isdigit():
            sizes[f[0]] = int(f[1])
    return sizes


def c_floats(a):
    """A C initializer of a float32 array, exactly (hex float literals)."""
    vals = [float(v).hex() + "f" for v in np.asarray(a, dtype=np.float32).ravel()]
    return ",\n".join("    " + ", ".join(vals[i:i + 6]) for i in range(0, len(vals), 6))


def write_main(path, image, models, facts, inputs):
    """IMAGE_main.c: every model of the image run once on its embedded inputs."""
    lines = [f"/* {image}_main.c: written by tests/firmware/run_firmware.py; runs {', '.join(models)} once each",
             " * on their embedded inputs in one arena and prints every output as the hex bits of",
             " * its floats (fw.h: semihosting on the board, stdio on the host). */",
             '#include "fw.h"']
    lines += [f'#include "{m}.h"' for m in models]
    # one arena, the largest of the models' (they run one after the other)
    lines += ["", "#define ARENA_BYTES 1"]
    for m in models:
        lines += [f"#if {m}_ARENA_BYTES > ARENA_BYTES", "#undef ARENA_BYTES",
                  f"#define ARENA_BYTES {m}_ARENA_BYTES", "#endif"]
    lines += ["static unsigned char arena[ARENA_BYTES] __attribute__((aligned(64)));", ""]
    for m in models:
        f = facts[m]
        for i in range(int(f[f"{m}_NUM_INPUTS"])):
            lines += [f"static const float {m}_in{i}[{m}_INPUT_{i}_NUMEL] = {{", c_floats(inputs[m][i]), "};"]
        for i in range(int(f[f"{m}_NUM_OUTPUTS"])):
            lines += [f"static float {m}_out{i}[{m}_OUTPUT_{i}_NUMEL];"]
    lines += ["", "int main(void)", "{"]
    for m in models:
        f = facts[m]
        ni, no = int(f[f"{m}_NUM_INPUTS"]), int(f[f"{m}_NUM_OUTPUTS"])
        lines += ["    {",
                  f"        const void *const in[{ni}] = {{{', '.join(f'{m}_in{i}' for i in range(ni))}}};",
                  f"        void *const out[{no}] = {{{', '.join(f'{m}_out{i}' for i in range(no))}}};",
                  f"        if ({m}_run_v(0, arena, in, out) != 0) {{",
                  f'            fw_puts("{m}_run_v failed\\n");', "            return 1;", "        }"]
        lines += [f'        fw_put_floats("{m}", {i}, {m}_out{i}, {m}_OUTPUT_{i}_NUMEL);' for i in range(no)]
        lines += ["    }"]
    lines += ["    fw_put_end();", "    return 0;", "}", ""]
    path.write_text("\n".join(lines))


def parse_outputs(text):
    """{(model, k): float32 array, "stack": bytes} from a program's output; raises unless it
    ends with 'done'. Lines outside the output blocks (a warning of qemu's) are skipped."""
    outs, cur = {}, None
    for line in text.splitlines():
        if re.fullmatch(r"stack [0-9a-f]{8}", line):
            outs["stack"] = int(line.split()[1], 16)
            cur = None
        elif line.startswith("output "):
            _, model, k = line.split()
            cur = outs.setdefault((model, int(k, 16)), [])
        elif line == "done":
            cur = None
            break
        elif cur is not None and re.fullmatch(r"[0-9a-f]{8}( [0-9a-f]{8})*", line):
            cur.extend(int(w, 16) for w in line.split())
        elif cur is not None:
            raise Failed(f"unexpected output line {line!r}")
    if not text.rstrip().endswith("done"):
        raise Failed(f"the program did not finish: {text[-500:]!r}")
    return {k: np.array(v, dtype=np.uint32).view(np.float32) if isinstance(v, list) else v for k, v in outs.items()}


def compare(what, got, want, rel, abs_of_max, log):
    """Checks |got - want| <= rel * |want| + abs_of_max * max|want|; prints the worst element."""
    if got.shape != want.shape:
        raise Failed(f"{what}: {got.size} values, expected {want.size}")
    g, w = got.astype(np.float64), want.astype(np.float64).ravel()
    if np.isnan(g).any() or np.isnan(w).any():
        raise Failed(f"{what}: NaN in the outputs")
    diff = np.abs(g - w)
    bound = rel * np.abs(w) + abs_of_max * (np.abs(w).max() if w.size else 0)
    i = int(np.argmax(diff - bound)) if w.size else 0
    rel_max = float((diff / np.maximum(np.abs(w), 1e-30)).max()) if w.size else 0.0
    log(f"  {what}: max abs diff {diff.max():.3g}, max rel diff {rel_max:.3g}; worst element {i}: "
        f"{g[i]!r} vs {w[i]!r}")
    if (diff > bound).any():
        raise Failed(f"{what}: {int((diff > bound).sum())} of {w.size} elements out of tolerance "
                     f"(element {i}: {g[i]!r} vs {w[i]!r})")
    return float(diff.max())


def build_model(args, name, make, opset, work, log):
    """Exports, compiles and builds one model for every board, and for the host unless
    --all-models; returns its facts."""
    mdir = work / name
    with EXPORT_LOCK:
        expected = torch_models.export(name, make, opset, mdir, args.seed)
    gen = mdir / "gen"
    run([args.graphc, "compile", mdir / "model.onnx", "-o", gen, "--name", name])
    facts = header_facts(gen / f"{name}.h")
    for i in range(int(facts[f"{name}_NUM_INPUTS"])):
        if facts[f"{name}_INPUT_{i}_DTYPE"] != '"f32"':
            raise Failed(f"{name}: input {i} is not f32")
    for i in range(int(facts[f"{name}_NUM_OUTPUTS"])):
        if facts[f"{name}_OUTPUT_{i}_DTYPE"] != '"f32"':
            raise Failed(f"{name}: output {i} is not f32")
    builds = {}
    for target in ([] if args.all_models else ["host"]) + list(BOARDS):
        d = mdir / target
        shutil.rmtree(d, ignore_errors=True)
        shutil.copytree(gen, d)
        if target == "host":  # the portable kernels, as on the boards (not the host's AVX ones)
            cmd = ["make", "-C", d, "CFLAGS=" + " ".join(WARN), "CPU_FLAGS="]
        else:
            cmd = ["make", "-C", d, "CC=arm-none-eabi-gcc", "CFLAGS=" + " ".join(BOARDS[target]["cpu"] + WARN)]
        run(cmd)
        lib = d / f"lib{name}.a"
        if not lib.exists():
            raise Failed(f"make left no {lib}")
        if target != "host":
            if (d / f"lib{name}.so").exists():
                raise Failed(f"{target}: the Makefile built lib{name}.so for a bare-metal compiler")
            obj = d / f"{name}.o"
            if BOARDS[target]["fpu_dp"]:
                dis = run(["arm-none-eabi-objdump", "-d", obj]).stdout
                f64 = sorted(set(re.findall(r"\bv\w+\.f64(?:\.f32)?\b|\bvcvt\w*\.f32\.f64\b", dis)))
                if f64:
                    raise Failed(f"{name} for {target}: double-precision instructions in {name}.o: {' '.join(f64)}")
            else:
                undef = run(["arm-none-eabi-nm", "-u", obj]).stdout
                dbl = sorted(set(DOUBLE_HELPER.findall(undef)))
                if dbl:
                    raise Failed(f"{name} for {target}: {name}.o calls libgcc's double-precision helpers: "
                                 + " ".join("__aeabi_" + x for x in dbl))
            # what NAME.o needs from outside: its weights, libgcc's helpers and the memory
            # functions of any freestanding program; anything else (a libm function whose
            # newlib version sets errno, a libc function) is reported
            undef = run(["arm-none-eabi-nm", "-u", obj]).stdout.split()
            extern = sorted(u for u in set(undef) if u != "U" and not u.startswith(("__aeabi_", name + "_weights"))
                            and u not in ("memcpy", "memset", "memmove", "memcmp"))
            if extern:
                raise Failed(f"{name} for {target}: {name}.o calls {' '.join(extern)}")
            # the runtime is private to the model: every global the library defines is NAME_*,
            # so that several models link into one program
            glob = run(["arm-none-eabi-nm", "-g", "--defined-only", lib]).stdout
            foreign = sorted({l.split()[-1] for l in glob.splitlines()
                              if len(l.split()) == 3 and not l.split()[-1].startswith(name + "_")})
            if foreign:
                raise Failed(f"{name} for {target}: lib{name}.a defines globals outside {name}_*: {' '.join(foreign)}")
            sz = section_sizes("arm-none-eabi-size", obj)
            builds[target] = {"code": sum(v for k, v in sz.items() if k.startswith((".text", ".rodata")))}
    inputs = [np.load(mdir / "in0.npy")]
    log(f"built {name}: {'' if args.all_models else 'host and '}{', '.join(BOARDS)}")
    return {"facts": facts, "inputs": inputs, "expected": expected, "builds": builds, "dir": mdir}


def run_image(args, image, models, built, work, log):
    """Builds, runs and checks one image on the host and every board; returns its size rows."""
    idir = work / "images" / image
    idir.mkdir(parents=True, exist_ok=True)
    main_c = idir / f"{image}_main.c"
    write_main(main_c, image, models, {m: built[m]["facts"] for m in models},
               {m: built[m]["inputs"] for m in models})
    cc = os.environ.get("CC", "cc")
    incs = [f"-I{HERE}"] + [f"-I{built[m]['dir'] / 'host'}" for m in models]
    host_exe = idir / f"{image}_host"
    run([cc] + WARN + incs + ["-o", host_exe, main_c, HERE / "fw_print.c", HERE / "host_io.c"]
        + [built[m]["dir"] / "host" / f"lib{m}.a" for m in models] + ["-lm"])
    host = parse_outputs(run([host_exe]).stdout)
    for m in models:
        want = built[m]["expected"]
        check_torch(f"{image}: {m} host vs PyTorch", host[(m, 0)], want, log)
    rows = []
    for target, b in BOARDS.items():
        elf = idir / f"{image}_{target}.elf"
        incs = [f"-I{HERE}"] + [f"-I{built[m]['dir'] / target}" for m in models]
        run(["arm-none-eabi-gcc"] + b["cpu"] + FW_CFLAGS + incs
            + ["-nostdlib", f"-L{HERE}", "-T", b["ld"], "-o", elf, main_c, HERE / "fw_print.c", HERE / "startup.c"]
            + [built[m]["dir"] / target / f"lib{m}.a" for m in models] + ["-lm", "-lgcc"])
        qemu = ["qemu-system-arm", "-machine", b["machine"], "-semihosting-config", "enable=on,target=native",
                "-nographic", "-monitor", "none", "-serial", "none", "-kernel", elf]
        t = time.time()
        p = run(qemu, timeout=QEMU_TIMEOUT, check=False)
        secs = time.time() - t
        if p.returncode != 0:
            raise Failed(f"{image} on {target}: qemu exit {p.returncode}: {(p.stdout + p.stderr)[-1000:]}")
        board = parse_outputs(p.stdout + p.stderr)  # qemu writes semihosting output on stderr
        log(f"ran {image} on {target} ({b['machine']}) in {secs:.1f}s")
        for m in models:
            for k in sorted(key[1] for key in host if isinstance(key, tuple) and key[0] == m):
                if (m, k) not in board:
                    raise Failed(f"{image} on {target}: no output {k} of {m}")
                compare(f"{image}: {m} output {k}, {target} vs host", board[(m, k)], host[(m, k)], REL, ABS_OF_MAX, log)
        stack = section_sizes("arm-none-eabi-size", elf).get(".stack", 0)
        if "stack" not in board or not 0 < board["stack"] < stack:
            raise Failed(f"{image} on {target}: stack use {board.get('stack')} not within the {stack}-byte stack")
        nm = run(["arm-none-eabi-nm", "-S", elf]).stdout
        for m in models:
            f = built[m]["facts"]
            mt = re.search(rf"^[0-9a-f]+ ([0-9a-f]+) [A-Za-z] {m}_weights$", nm, re.M)
            wbytes = int(f[f"{m}_WEIGHTS_BYTES"])
            if not mt or int(mt.group(1), 16) != wbytes:
                raise Failed(f"{image} on {target}: symbol {m}_weights is not {wbytes} bytes")
        if not b["fpu_dp"]:
            dbl = sorted(set(DOUBLE_HELPER.findall(nm)))
            if dbl:
                raise Failed(f"{image} on {target}: the image holds double-precision helpers: "
                             + " ".join("__aeabi_" + x for x in dbl))
        sz = section_sizes("arm-none-eabi-size", elf)
        flash = sum(sz.get(s, 0) for s in (".vectors", ".text", ".ARM.exidx", ".data"))
        ram = sum(sz.get(s, 0) for s in (".data", ".bss", ".stack"))
        rows.append((image, target, flash, ram, stack, board["stack"]))
    return rows


def check_torch(what, got, want, log):
    g, w = got.astype(np.float64), np.asarray(want, dtype=np.float64).ravel()
    if g.shape != w.shape:
        raise Failed(f"{what}: {g.size} values, expected {w.size}")
    diff = np.abs(g - w)
    log(f"  {what}: max abs diff {diff.max():.3g}")
    if not (diff <= TORCH_ATOL + TORCH_RTOL * np.abs(w)).all():
        raise Failed(f"{what}: out of tolerance (max abs diff {diff.max():.3g})")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--graphc", default=str(ROOT / "build" / "graphc"), help="path of the graphc binary")
    ap.add_argument("--work", help="scratch folder (default: a temporary one, removed afterwards)")
    ap.add_argument("--filter", help="only the models whose name contains this substring (and their images)")
    ap.add_argument("--all-models", action="store_true",
                    help="instead: build every model of tests/models/torch_models.py's default list (opsets 13 "
                         "and 17) for the boards with the same checks, without running them (slow)")
    ap.add_argument("--seed", type=int, default=0, help="seed for weights and inputs")
    ap.add_argument("-j", type=int, default=2, help="models built in parallel")
    args = ap.parse_args()
    args.graphc = os.path.abspath(args.graphc)
    if not os.access(args.graphc, os.X_OK):
        sys.exit(f"graphc binary not found: {args.graphc} (pass --graphc PATH)")
    need_tools()
    try:
        import torch
        torch.set_num_threads(1)
    except ImportError:
        sys.exit("PyTorch not found: install python3-torch (scripts/setup.sh)")
    work = Path(args.work or tempfile.mkdtemp(prefix="graphc-fw-")).resolve()
    work.mkdir(parents=True, exist_ok=True)
    if args.all_models:
        models = {f"{n}_op{o}": (mk, o) for n, mk in torch_models.DEFAULT.items() for o in torch_models.OPSETS}
    else:
        models = {n: (mk, 17) for n, mk in MODELS.items()}
    models = {n: m for n, m in models.items() if not args.filter or args.filter in n}
    images = {} if args.all_models else {i: ms for i, ms in IMAGES.items() if all(m in models for m in ms)}
    if not models:
        sys.exit("no model matches the filter")
    t0 = time.time()
    failures = []

    def log(s):
        print(s, flush=True)

    built = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.j)) as ex:
        futs = {ex.submit(build_model, args, n, mk, o, work, log): n for n, (mk, o) in models.items()}
        for fut in concurrent.futures.as_completed(futs):
            n = futs[fut]
            try:
                built[n] = fut.result()
            except Exception as e:  # a harness error fails the model, not the run
                failures.append(f"{n}: {e}")
                log(f"FAIL {n}: {type(e).__name__}: {e}")
    rows = []
    for image, ms in images.items():
        if any(m not in built for m in ms):
            continue
        try:
            rows += run_image(args, image, ms, built, work, log)
            log(f"PASS {image}")
        except Failed as e:
            failures.append(f"{image}: {e}")
            log(f"FAIL {image}: {e}")
    log("\nsizes per model (bytes; flash = weights + code, RAM = arena):")
    log(f"  {'model':18s} {'board':11s} {'weights':>9s} {'code':>8s} {'arena':>8s}")
    for n, b in built.items():
        f = b["facts"]
        for target in BOARDS:
            if target in b["builds"]:
                log(f"  {n:18s} {target:11s} {int(f[n + '_WEIGHTS_BYTES']):9d} {b['builds'][target]['code']:8d} "
                    f"{int(f[n + '_ARENA_BYTES']):8d}")
    log("sizes per image (bytes; flash = vectors + code + constants + .data image, "
        "RAM = .data + .bss + stack):")
    for image, target, flash, ram, stack, used in rows:
        log(f"  {image:18s} {target:11s} flash {flash:9d}  RAM {ram:8d} (stack {stack}, {used} used)")
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)
    log(f"\n{len(failures)} failure(s) in {time.time() - t0:.0f}s" if failures else
        f"\nall passed in {time.time() - t0:.0f}s")
    for f in failures:
        log("FAIL " + f)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
