#!/usr/bin/python3
"""test_dynamic_cuda.py — runtime shapes through the CUDA backend (--target cuda
--max-shape), on graphc's CPU emulation of CUDA, cuBLAS and cuDNN (no GPU).

    /usr/bin/python3 tests/dynamic/test_dynamic_cuda.py --graphc BUILD/graphc --work DIR
    /usr/bin/python3 tests/dynamic/test_dynamic_cuda.py --graphc BUILD/graphc --work DIR --toolkit [--nvrtc NVRTC_CHECK]
    python3 tests/dynamic/test_dynamic_cuda.py --graphc BUILD/graphc --work DIR --gpu      # on a GPU

Each model is compiled ONCE with --max-shape, its folder built with `make emu`
(-Wall -Wextra -Werror; ASan/UBSan with GRAPHC_SANITIZE=1), and NAME_main_emu
runs it at several shapes against numpy or PyTorch:

* an MLP with a symbolic batch (Gemm + Relu + MatMul + Add + Softmax) at
  batches 1, 3 and 8, in fp32, at --precision fp16 (cublasGemmEx on the
  batch's rows, 1e-2 of scale) and with --cuda-jit (the launchers); beyond
  the bound NAME_main fails with one line and writes nothing;
* a C driver built into the model's own translation unit (so that it shares
  the emulated device) calls NAME_run_shapes on device buffers and
  NAME_run_shapes_host at batches 3, 5, 3, 8 and 1 (the first two and the
  middle two on the same buffers), so that each change of shape captures the
  graph anew over the new dims, and
  checks the outputs and the reported shapes, then that a batch of 9 or 0
  and a wrong fixed dim return NAME_ERR_SHAPE;
* a transformer encoder block with a symbolic length T (LayerNormalization,
  MatMul, Reshape, Transpose, Softmax over T, Concat) at -O2 and -O0;
* torchvision ResNet-18 (-O2, also built with -DGC_CUDNN_FUSED and the
  warm-up run) and MobileNetV2 (-O0: BatchNormalization unfolded) with a
  runtime batch 1 to 4 against PyTorch: cuDNN convolutions whose batch is
  set per run;
* a 4-layer GPT decoder exported with a symbolic length T (Shape, Gather,
  Slice to T, the causal mask, Split, Reshape to runtime shape values) at
  T = 1, 7 and 64 against PyTorch;
* data-dependent dims (Range from runtime bounds, OneHot's runtime depth,
  Resize's runtime scales, a Reshape to a runtime shape then a Transpose,
  and a chain of Reshape, Slice, NonZero, Concat,
  ReduceSum, TopK, Tile and NonMaxSuppression from runtime operands;
  --max-dim): no CUDA graph, each run against the interpreter, an extent
  beyond the bound a one-line failure (test_dynamic_operands.py,
  test_dynfill.py, test_dyn_h1.py, test_dyn_h2.py and test_dyn_if.py run
  each op's cases through the CUDA emulation too, with --target cuda);
* one-line refusals: an f64 MatMul with a runtime dim (the generated GEMM
  takes static shapes), a Conv with a runtime batch that cuDNN cannot say
  (unequal pads).

With --gpu, the same checks on a GPU: the folders built by nvcc (`make`,
the C driver by nvcc too) and NAME_main run on the device (scripts/gpu_check.sh
dyn). With --toolkit, instead: five of those models' folders (the fp16 MLP,
ResNet-18, the GPT decoder, the data-dependent Resize and chain) compiled for a GPU
without one, NAME.cu by nvcc (--Werror all-warnings, sm_90) and, with
--cuda-jit, NAME_kernels.cu by NVRTC (--nvrtc: tools/nvrtc_check) and NAME.c
by the C compiler against the CUDA headers; exits 77 (ctest's "skipped")
when the toolkit is absent.
"""
import argparse
import os
import shutil
import subprocess
import sys
import warnings

import numpy as np
import onnx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_dynamic import (D, FAILS, check, encoder_model, export_classifier, export_gpt, mlp_model,  # noqa: E402
                          one_line_error, run)

SAN = os.environ.get("GRAPHC_SANITIZE") == "1"
GPU = False  # --gpu: nvcc builds, runs on the device
CFLAGS = "-O1 -std=c99 -Wall -Wextra -Werror" + (" -g -fsanitize=address,undefined -fno-sanitize-recover=undefined" if SAN else "")


def compile_folder(graphc, model, out, name, extra):
    p = run([graphc, "compile", model, "-o", out, "--target=cuda", "--emit-main", "--name", name] + extra)
    if not check(p.returncode == 0, f"{name}: graphc compile --target=cuda {' '.join(extra)} {p.stderr.strip()}"):
        return False
    return True


def build_folder(out, name, defines=""):
    if GPU:  # nvcc: NAME_main (GC_EMU_WARMUP is the emulation's; the GPU always runs the warm-up)
        d = " ".join(x for x in defines.split() if x != "-DGC_EMU_WARMUP")
        mk = run(["make", "-s", "-C", out, "-B", "all", f"NVCCFLAGS=-O2 {d}"])
        return check(mk.returncode == 0, f"{name}: make {d} builds with nvcc" + ("" if mk.returncode == 0 else
                                                                               "\n" + mk.stdout + mk.stderr))
    mk = run(["make", "-s", "-C", out, "-B", "emu", f"CFLAGS={CFLAGS} {defines}"])
    return check(mk.returncode == 0, f"{name}: make emu {defines} builds with -Werror" + ("" if mk.returncode == 0 else
                                                                                         "\n" + mk.stdout + mk.stderr))


def save_inputs(work, tag, arrays):
    """The arrays as WORK/TAG_in<j>.npy; their paths."""
    files = []
    for j, a in enumerate(arrays):
        files.append(os.path.join(work, f"{tag}_in{j}.npy"))
        np.save(files[-1], a)
    return files


def main_exe(out, name):
    return os.path.join(out, f"{name}_main" if GPU else f"{name}_main_emu")


def run_main(work, out, name, inputs, tag):
    """Runs NAME_main_emu (NAME_main with --gpu) on the arrays; returns its outputs, or None (stderr printed)."""
    files = save_inputs(work, f"{name}_{tag}", inputs)
    res = os.path.join(work, f"{name}_{tag}_out")
    shutil.rmtree(res, ignore_errors=True)
    q = run([main_exe(out, name), res] + files)
    if q.returncode != 0:
        print(q.stderr)
        return None
    outs, i = [], 0
    while os.path.exists(os.path.join(res, f"output_{i}.npy")):
        outs.append(np.load(os.path.join(res, f"output_{i}.npy")))
        i += 1
    return outs


def close(a, b, rel=None, tol=1e-4):
    if a is None or a.shape != b.shape:
        return False, "shape " + ("none" if a is None else str(a.shape))
    if rel:
        err = float(np.abs(a - b).max() / max(np.abs(b).max(), 1e-30))
        return err <= rel, f"relative error {err:.3g}"
    err = float(np.abs(a - b).max()) if a.size else 0.0
    return bool(np.allclose(a, b, rtol=tol, atol=tol)), f"max diff {err:.3g}"


def compare(outs, refs, what, **kw):
    if not check(outs is not None and len(outs) == len(refs), f"{what}: NAME_main runs"):
        return
    for i, (a, r) in enumerate(zip(outs, refs)):
        ok, how = close(a, np.asarray(r), **kw)
        check(ok, f"{what}: output {i} {a.shape} matches the reference ({how})")


# ---- the C driver: NAME_run_shapes and NAME_run_shapes_host in the model's translation unit ----

DRIVER = r"""
#include "@N@.cu"
#include <stdio.h>
#include <stdlib.h>

/* argv: batches; stdin: for each batch, batch * 784 floats. Prints per run
 * "rc d0 d1 v0 v1 ..." (the output's values), device buffers on runs 3 and
 * 4, host buffers on the others; then the ERR_SHAPE cases. */
int main(int argc, char **argv)
{
    @N@_Model *m;
    static float hin[@N@_INPUT_0_NUMEL], hout[@N@_OUTPUT_0_NUMEL];
    void *din, *dout;
    if (@N@_init(&m, NULL) || cudaMalloc(&din, sizeof hin) != cudaSuccess || cudaMalloc(&dout, sizeof hout) != cudaSuccess)
        return 1;
    for (int a = 1; a < argc; a++) {
        int64_t b = atoll(argv[a]), xd[2] = {b, 784}, yd[2] = {-1, -1};
        const int64_t *ind[1] = {xd};
        int64_t *outd[1] = {yd};
        for (int64_t i = 0; i < b * 784; i++)
            if (scanf("%f", &hin[i]) != 1) return 1;
        int rc;
        if (a == 3 || a == 4) {
            const void *ins[1] = {din};
            void *outs[1] = {dout};
            if (cudaMemcpy(din, hin, sizeof(float) * (size_t)(b * 784), cudaMemcpyHostToDevice) != cudaSuccess) return 1;
            rc = @N@_run_shapes(m, ins, ind, outs, outd);
            if (cudaMemcpy(hout, dout, sizeof(float) * (size_t)(b * 10), cudaMemcpyDeviceToHost) != cudaSuccess) return 1;
        } else {
            const void *ins[1] = {hin};
            void *outs[1] = {hout};
            rc = @N@_run_shapes_host(m, ins, ind, outs, outd);
        }
        printf("%d %lld %lld", rc, (long long)yd[0], (long long)yd[1]);
        for (int64_t i = 0; i < b * 10; i++) printf(" %.9g", hout[i]);
        printf("\n");
    }
    {
        int64_t bad[3][2] = {{9, 784}, {0, 784}, {3, 783}};
        for (int k = 0; k < 3; k++) {
            const int64_t *ind[1] = {bad[k]};
            const void *ins[1] = {hin};
            void *outs[1] = {hout};
            printf("%d\n", @N@_run_shapes_host(m, ins, ind, outs, NULL));
        }
    }
    @N@_free(m);
    cudaFree(din);
    cudaFree(dout);
    return 0;
}
"""


def driver_check(out, name, ref, rng):
    src = os.path.join(out, "driver.c")
    with open(src, "w") as f:
        f.write(DRIVER.replace("@N@", name))
    exe = os.path.join(out, "driver")
    if GPU:
        p = run([os.environ.get("CUDA_HOME", "/usr/local/cuda") + "/bin/nvcc", "-O2", "-I", out, "-x", "cu", src, "-x", "none",
                 os.path.join(out, f"{name}_weights.o"), "-lcublas", "-o", exe])
    else:
        p = run(["cc"] + CFLAGS.split() + ["-DGC_CUDA_EMULATE", "-I", out, "-x", "c", src, "-x", "none",
                                           os.path.join(out, f"{name}_weights.S"), "-lm", "-o", exe])
    if not check(p.returncode == 0, f"{name}: a C driver of {name}_run_shapes builds"):
        print(p.stdout + p.stderr)
        return
    batches = [3, 5, 3, 8, 1]
    xs = [rng.standard_normal((b, 784)).astype(np.float32) for b in batches]
    q = subprocess.run([exe] + [str(b) for b in batches], input=" ".join(" ".join("%.9g" % v for v in x.ravel()) for x in xs),
                       capture_output=True, text=True)
    lines = q.stdout.strip().splitlines()
    if not check(q.returncode == 0 and len(lines) == len(batches) + 3, f"{name}: the driver runs ({q.stderr.strip()})"):
        return
    for k, (b, x) in enumerate(zip(batches, xs)):
        f = lines[k].split()
        got = np.array([float(v) for v in f[3:]], np.float32).reshape(-1, 10) if len(f) > 3 else None
        how = "device buffers, NAME_run_shapes" if k in (2, 3) else "host buffers, NAME_run_shapes_host"
        ok, err = close(got, ref(x))
        check(f[:3] == ["0", str(b), "10"] and ok,
              f"{name}: run {k + 1} at batch {b} ({how}) returns 0, reports ({b}, 10) and matches numpy ({err})")
    check(lines[-3:] == ["-2", "-2", "-2"],
          f"{name}: batch 9, batch 0 and a wrong fixed dim return {name}_ERR_SHAPE ({' '.join(lines[-3:])})")


# ---- the models ------------------------------------------------------------------------------------

def mlp_checks(graphc, work, rng):
    mlp, ref = mlp_model(rng)
    path = os.path.join(work, "mlp.onnx")
    onnx.save(mlp, path)
    out = os.path.join(work, "mlp_out")
    if not compile_folder(graphc, path, out, "mlp", ["--max-shape", "x=8,784"]):
        return
    hdr = open(os.path.join(out, "mlp.h")).read()
    check('#define mlp_DIM_0_NAME "batch"' in hdr and "#define mlp_DIM_0_MAX 8" in hdr and "mlp_run_shapes_host" in hdr
          and "#define mlp_INPUT_0_DIM_SYMS {0, -1}" in hdr, "mlp: mlp.h documents the runtime dim and NAME_run_shapes")
    if build_folder(out, "mlp"):
        for b in (1, 3, 8):
            x = rng.standard_normal((b, 784)).astype(np.float32)
            compare(run_main(work, out, "mlp", [x], f"b{b}"), [ref(x)], f"mlp batch {b}")
        big = os.path.join(work, "mlp_big.npy")
        np.save(big, np.zeros((9, 784), np.float32))
        res = os.path.join(work, "mlp_big_out")
        q = run([main_exe(out, "mlp"), res, big])
        check(one_line_error(q, "beyond the model's bounds") and not os.path.exists(res),
              f"mlp_main at batch 9: one line, nothing written ({q.stderr.strip()})")
        driver_check(out, "mlp", ref, rng)
    # fp16: the batch's rows through cublasGemmEx
    out16 = os.path.join(work, "mlp16_out")
    if compile_folder(graphc, path, out16, "mlp16", ["--max-shape", "x=8,784", "--precision=fp16"]) and build_folder(out16, "mlp16"):
        for b in (2, 7):
            x = rng.standard_normal((b, 784)).astype(np.float32)
            compare(run_main(work, out16, "mlp16", [x], f"b{b}"), [ref(x)], f"mlp fp16 batch {b}", rel=1e-2)
    # --cuda-jit: the launchers pass the shape table like any pointer
    outj = os.path.join(work, "mlpj_out")
    if compile_folder(graphc, path, outj, "mlpj", ["--max-shape", "x=8,784", "--cuda-jit"]) and build_folder(outj, "mlpj"):
        x = rng.standard_normal((5, 784)).astype(np.float32)
        compare(run_main(work, outj, "mlpj", [x], "b5"), [ref(x)], "mlp --cuda-jit batch 5")


def encoder_checks(graphc, work, rng):
    enc, ref = encoder_model(rng)
    path = os.path.join(work, "enc.onnx")
    onnx.save(enc, path)
    for level, ts in (("-O2", (1, 7, 16)), ("-O0", (5,))):
        out = os.path.join(work, f"enc{level}")
        if not (compile_folder(graphc, path, out, "enc", ["--max-shape", "x=1,16,%d" % D, level]) and build_folder(out, "enc")):
            continue
        for t in ts:
            x = rng.standard_normal((1, t, D)).astype(np.float32)
            compare(run_main(work, out, "enc", [x], f"t{t}"), ref(x), f"encoder {level} T={t}")


def torchvision_checks(graphc, work):
    import torch
    import torchvision
    for name, make, level, defines in (("r18", torchvision.models.resnet18, "-O2", ""),
                                       ("r18f", torchvision.models.resnet18, "-O2", "-DGC_CUDNN_FUSED -DGC_EMU_WARMUP"),
                                       ("mbv2", torchvision.models.mobilenet_v2, "-O0", "")):
        path = os.path.join(work, f"{name}.onnx")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m = export_classifier(make, path)
        out = os.path.join(work, f"{name}_out")
        if not (compile_folder(graphc, path, out, name, ["--max-shape", "x=4,3,32,32", level])
                and build_folder(out, name, defines)):
            continue
        for b in ((1, 2, 3, 4) if not defines else (3,)):
            x = np.random.default_rng(b).standard_normal((b, 3, 32, 32)).astype(np.float32)
            with torch.no_grad():
                want = m(torch.from_numpy(x)).numpy()
            compare(run_main(work, out, name, [x], f"b{b}"), [want], f"{name} {level} {defines} batch {b} against PyTorch",
                    rel=1e-4)


def gpt_checks(graphc, work):
    import torch
    path = os.path.join(work, "gpt.onnx")
    m = export_gpt(path)
    out = os.path.join(work, "gpt_out")
    if not (compile_folder(graphc, path, out, "gpt", ["--max-shape", "idx=1,64"]) and build_folder(out, "gpt")):
        return
    for t in (1, 7, 64):
        idx = np.random.default_rng(t).integers(0, 100, (1, t)).astype(np.int64)
        with torch.no_grad():
            want = m(torch.from_numpy(idx)).numpy()
        compare(run_main(work, out, "gpt", [idx], f"t{t}"), [want], f"gpt T={t} against PyTorch")


# six boxes, two pairs of overlapping ones (NonMaxSuppression in the chain model)
BOXES = np.array([[[0, 0, 1, 1], [0, 0.1, 1, 1.1], [0, 2, 1, 3], [0, 2.1, 1, 3.1], [5, 5, 6, 6], [8, 8, 9, 9]]], np.float32)


# Data-dependent dims: models whose extents come from input values, compiled once with
# --max-dim (no CUDA graph: the host reads the operands back in mid-run), each run against
# the interpreter (graphc run); runs whose extents exceed the bound fail with one line, in both.
DATA = [
    ("range", 16, "graph rg {\n  input %n: i64[]\n  const %zero: i64[] = [0]\n  const %one: i64[] = [1]\n"
              "  r: %r = Range(%zero, %n, %one)\n  %y = Mul(%r, %r)\n  output %y\n}\n",
     [[np.array(5, np.int64)], [np.array(0, np.int64)], [np.array(16, np.int64)]], [[np.array(17, np.int64)]]),
    ("range_f32", 16, "graph rf {\n  input %s: f32[]\n  input %l: f32[]\n  input %d: f32[]\n"
                  "  r: %r = Range(%s, %l, %d)\n  %y = Add(%r, %r)\n  output %y\n}\n",
     [[np.array(v, np.float32) for v in (1.5, 7.25, 0.5)], [np.array(v, np.float32) for v in (3.0, -2.0, -0.75)]], []),
    ("onehot", 16, "graph oh {\n  input %i: i64[2,3]\n  input %depth: i64[]\n  const %vals: f32[2] = [0.5, 2]\n"
               "  o: %y = OneHot(%i, %depth, %vals) {axis=1}\n  %z = Relu(%y)\n  output %z\n}\n",
     [[np.array([[0, 2, -1], [3, 5, 1]], np.int64), np.array(4, np.int64)],
      [np.array([[0, 2, -1], [3, 5, 1]], np.int64), np.array(7, np.int64)]], []),
    ("resize", 256, "graph rs {\n  input %x: f32[1,2,3,4]\n  input %scales: f32[4]\n  const %roi: f32[0] = []\n"
               "  r: %y = Resize(%x, %roi, %scales) {mode=\"cubic\"}\n  %z = Mul(%y, %y)\n  output %z\n}\n",
     [[np.arange(24, dtype=np.float32).reshape(1, 2, 3, 4), np.array([1, 1, 2, 1.5], np.float32)],
      [np.arange(24, dtype=np.float32).reshape(1, 2, 3, 4), np.array([1, 1, 0.6, 2.25], np.float32)]],
     [[np.arange(24, dtype=np.float32).reshape(1, 2, 3, 4), np.array([1, 2, 4, 4], np.float32)]]),
    # a Reshape to a runtime shape, then a kernel that reads both of its extents from the device's table
    ("reshape", 64, "graph rh {\n  input %x: f32[4,6]\n  input %shape: i64[2]\n  r: %y = Reshape(%x, %shape)\n"
                "  %z = Transpose(%y) {perm=[1, 0]}\n  output %z\n}\n",
     [[np.arange(24, dtype=np.float32).reshape(4, 6), np.array(s, np.int64)] for s in ((6, 4), (3, 8), (-1, 2), (24, 1))], []),
    # one model through several host paths: a Reshape to a runtime shape (then transposed, a kernel
    # that reads both of its extents from the device's table), a Slice of runtime starts and ends (the
    # host resolves the ranges, the kernel takes them as arguments), a NonZero and a
    # NonMaxSuppression on the host, a ReduceSum over runtime axes, a TopK of runtime K, a Tile of
    # runtime repeats and a Concat along the data-dependent axis
    ("chain", 64, "graph ch {\n  input %x: f32[4,6]\n  input %shape: i64[2]\n  input %starts: i64[1]\n"
              "  input %ends: i64[1]\n  input %axes: i64[1]\n  input %k: i64[1]\n  input %rep: i64[2]\n"
              "  input %boxes: f32[1,6,4]\n  input %scores: f32[1,1,6]\n"
              "  const %zero: f32[] = [0]\n  const %mo: i64[1] = [4]\n  const %iou: f32[1] = [0.3]\n"
              "  s: %z = Slice(%x, %starts, %ends)\n  r: %y = Reshape(%z, %shape)\n  %pos = Greater(%y, %zero)\n"
              "  nz: %nzi = NonZero(%pos)\n  %cat = Concat(%nzi, %nzi) {axis=1}\n"
              "  rs: %red = ReduceSum(%x, %axes) {keepdims=0}\n"
              "  t: %v, %i = TopK(%x, %k) {axis=1}\n  tl: %tt = Tile(%x, %rep)\n"
              "  n: %sel = NonMaxSuppression(%boxes, %scores, %mo, %iou)\n  %yt = Transpose(%y) {perm=[1, 0]}\n"
              "  output %cat\n  output %red\n  output %v\n  output %i\n  output %tt\n  output %sel\n  output %yt\n}\n",
     [[np.linspace(-1, 1, 24, dtype=np.float32).reshape(4, 6), np.array(s, np.int64), np.array([st], np.int64),
       np.array([en], np.int64), np.array([ax], np.int64), np.array([k], np.int64), np.array(rp, np.int64),
       BOXES, np.array(sc, np.float32).reshape(1, 1, 6)]
      for s, st, en, ax, k, rp, sc in (((6, 3), 1, 4, 0, 3, (1, 2), (.9, .8, .7, .6, .5, .4)),
                                       ((3, 2), -2, 3, 1, 6, (2, 1), (.1, .9, .3, .8, .5, .7)),
                                       ((-1, 2), 0, 100, -1, 0, (1, 1), (.5, .5, .5, .5, .5, .5)))],
     [[np.zeros((4, 6), np.float32), np.array((2, 3), np.int64), np.array([0], np.int64), np.array([1], np.int64),
       np.array([0], np.int64), np.array([1], np.int64), np.array((9, 9), np.int64), BOXES,
       np.zeros((1, 1, 6), np.float32)]]),
]


def data_checks(graphc, work):
    for name, cap, text, good, bad in DATA:
        model = os.path.join(work, f"{name}.gir")
        with open(model, "w") as f:
            f.write(text)
        out = os.path.join(work, f"{name}_out")
        if not (compile_folder(graphc, model, out, name, [f"--max-dim={cap}"]) and build_folder(out, name)):
            continue
        check("cudaStreamBeginCapture" not in open(os.path.join(out, f"{name}.cu")).read(),
              f"{name}: data-dependent dims: the schedule runs without a CUDA graph")
        for k, ins in enumerate(good):
            files = save_inputs(work, f"{name}_{k}", ins)
            ref_dir = os.path.join(work, f"{name}_{k}_interp")
            p = run([graphc, "run", model, ref_dir] + files + [f"--max-dim={cap}"])
            if not check(p.returncode == 0, f"{name} run {k}: graphc run {p.stderr.strip()}"):
                continue
            refs, i = [], 0
            while os.path.exists(os.path.join(ref_dir, f"output_{i}.npy")):
                refs.append(np.load(os.path.join(ref_dir, f"output_{i}.npy")))
                i += 1
            compare(run_main(work, out, name, ins, f"r{k}"), refs, f"{name} run {k} against the interpreter", tol=1e-5)
        for k, ins in enumerate(bad):
            files = save_inputs(work, f"{name}_bad{k}", ins)
            res = os.path.join(work, f"{name}_bad{k}_out")
            q = run([main_exe(out, name), res] + files)
            check(one_line_error(q, "a shape computed from input values is invalid or beyond its bound") and not os.path.exists(res),
                  f"{name}: an extent beyond --max-dim fails with one line, nothing written ({q.stderr.strip()})")
            p = run([graphc, "run", model, res + "_interp"] + files + [f"--max-dim={cap}"])
            check(one_line_error(p, "node ", "beyond its bound"), f"{name}: graphc run fails with one line ({p.stderr.strip()})")


REFUSED = [
    ("matmul_f64", "graph mm {\n  input %a: f64[n<=4,3]\n  const %b: f64[3,2] = random(seed=1, lo=-1, hi=1)\n"
                   "  g: %y = MatMul(%a, %b)\n  output %y\n}\n", [],
     ["node 'g' (MatMul)", "runtime shapes through op 'MatMul' on cuBLAS only"]),
    ("conv_pads", "graph cv {\n  input %x: f32[n<=2,1,8,8]\n  const %w: f32[1,1,3,3] = random(seed=1, lo=-1, hi=1)\n"
                  "  c: %y = Conv(%x, %w) {pads=[0,0,1,1]}\n  output %y\n}\n", [],
     ["node 'c' (Conv)", "runtime shapes through Conv on cuDNN only", "equal pads"]),
]


def refusal_checks(graphc, work):
    for name, text, extra, words in REFUSED:
        model = os.path.join(work, f"{name}.gir")
        with open(model, "w") as f:
            f.write(text)
        out = os.path.join(work, f"{name}_out")
        q = run([graphc, "compile", model, "-o", out, "--target=cuda"] + extra)
        check(one_line_error(q, *words) and not os.path.exists(out), f"{name}: a one-line refusal ({q.stderr.strip()})")


# ---- --toolkit: nvcc and NVRTC on the folders ---------------------------------------------------------

def toolkit_checks(graphc, work, nvrtc):
    cuda_home = os.environ.get("CUDA_HOME", "/usr/local/cuda")
    nvcc = shutil.which("nvcc") or (cuda_home + "/bin/nvcc" if os.access(cuda_home + "/bin/nvcc", os.X_OK) else None)
    if not nvcc:
        print(f"SKIPPED: no nvcc on PATH or in {cuda_home}/bin (the CUDA toolkit is not installed)")
        return 77
    # one folder of each kind (CI's time): cublasGemmEx at fp16; cuDNN with a runtime batch; a runtime
    # length through Shape, Slice, Split and cuBLAS (the GPT decoder); the host's reads and tap tables
    rng = np.random.default_rng(15)
    mlp, _ = mlp_model(rng)
    onnx.save(mlp, os.path.join(work, "mlp.onnx"))
    models = [("mlp16", "mlp.onnx", ["--max-shape", "x=8,784", "--precision=fp16"])]
    try:
        import torchvision
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            export_classifier(torchvision.models.resnet18, os.path.join(work, "r18.onnx"))
        export_gpt(os.path.join(work, "gpt.onnx"))
        models += [("r18", "r18.onnx", ["--max-shape", "x=4,3,32,32"]), ("gpt", "gpt.onnx", ["--max-shape", "idx=1,64"])]
    except ImportError as e:
        check(False, f"PyTorch and torchvision export the models ({e})")
    for name, cap, text, _, _ in DATA:  # data-dependent dims: no CUDA graph, the host's reads (and tap tables)
        if name not in ("resize", "chain"):
            continue
        with open(os.path.join(work, f"{name}.gir"), "w") as f:
            f.write(text)
        models.append((name, f"{name}.gir", [f"--max-dim={cap}"]))
    for name, model, extra in models:
        out = os.path.join(work, f"{name}_nvcc")
        if compile_folder(graphc, os.path.join(work, model), out, name, extra):
            p = run(["make", "-s", "-C", out, f"NVCC={nvcc}", f"{name}.o",
                     "NVCCFLAGS=-O2 -arch=sm_90 --Werror all-warnings -DGC_CUDNN_FUSED -DGC_CUDNN_TIME -Xcompiler -Wall,-Wextra"])
            check(p.returncode == 0, f"{name}: nvcc compiles {name}.cu" + ("" if p.returncode == 0 else "\n" + p.stdout + p.stderr))
        out = os.path.join(work, f"{name}_jit")
        if compile_folder(graphc, os.path.join(work, model), out, name, extra + ["--cuda-jit"]):
            p = run(["make", "-s", "-C", out, f"{name}.o", f"CUDA_HOME={cuda_home}",
                     "CFLAGS=-O2 -std=c99 -Wall -Wextra -Werror -pedantic -DGC_CUDNN_FUSED"])
            check(p.returncode == 0, f"{name}: {name}.c (--cuda-jit) compiles against the CUDA headers" +
                  ("" if p.returncode == 0 else "\n" + p.stdout + p.stderr))
            if nvrtc:
                p = run([nvrtc, os.path.join(out, f"{name}_kernels.cu")])
                check(p.returncode == 0, f"{name}: NVRTC compiles {name}_kernels.cu ({p.stdout.strip().splitlines()[-1:]})")
    if not nvrtc:
        print("note: no --nvrtc checker given (NVRTC not found at configure time): the kernels were not compiled by NVRTC")
    return 1 if FAILS else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--graphc", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--toolkit", action="store_true", help="compile the folders with nvcc and NVRTC instead (77: no toolkit)")
    ap.add_argument("--nvrtc", default="", help="with --toolkit: tools/nvrtc_check, built where NVRTC was found")
    ap.add_argument("--gpu", action="store_true", help="build with nvcc and run on the GPU instead of the emulation")
    ap.add_argument("--no-torchvision", action="store_true",
                    help="leave out ResNet-18 and MobileNetV2 (the sanitizer build: its emulated convolutions are slow)")
    a = ap.parse_args()
    global GPU
    GPU = a.gpu
    graphc = os.path.abspath(a.graphc)
    work = os.path.abspath(a.work)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    if a.toolkit:
        rc = toolkit_checks(graphc, work, a.nvrtc)
        print(f"{len(FAILS)} check(s) failed" if FAILS else "skipped" if rc == 77 else "the folders compile for the GPU")
        return rc
    rng = np.random.default_rng(15)
    mlp_checks(graphc, work, rng)
    encoder_checks(graphc, work, rng)
    refusal_checks(graphc, work)
    data_checks(graphc, work)
    gpt_checks(graphc, work)
    if not a.no_torchvision:
        torchvision_checks(graphc, work)
    if FAILS:
        print(f"{len(FAILS)} check(s) failed")
        return 1
    print("all CUDA runtime-shape checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
