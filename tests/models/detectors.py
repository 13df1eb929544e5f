#!/usr/bin/python3
"""detectors.py — torchvision detectors, exported at opset 17 with random
weights, compiled by graphc with no flags, boxes against PyTorch's.

    /usr/bin/python3 tests/models/detectors.py --graphc BUILD/graphc --work DIR [--only ssd,retina,frcnn] [--cuda LIST] [-j N]

Models (torchvision constructors with weights=None and weights_backbone=None,
so nothing is downloaded; the head layers re-drawn so that scores are
distinct, see randomize):

  ssd     SSDlite320-MobileNetV3-Large, input 3x320x320
  retina  RetinaNet-ResNet50-FPN, min_size = max_size = 256, input 3x256x256
  frcnn   Faster R-CNN-MobileNetV3-Large-320-FPN, box_score_thresh = 0 (so that
          boxes survive with random weights), input 3x320x320

For each: export with torch.onnx.export (opset 17, the exporter's data-
dependent NonZero / TopK / NonMaxSuppression / If chains intact), run
PyTorch on a seeded random image, `graphc compile model.onnx -o DIR
--emit-main --name m` with no other flag, build m_main with make (-O1;
ASan/UBSan with GRAPHC_SANITIZE=1) and run it on the image. The detections
must match PyTorch's as sets: the same count, and a one-to-one pairing of
graphc's and PyTorch's detections with the same label, every box
coordinate within 1e-2 + 1e-3 |x| pixels and the score within 1e-4 + 1e-3
|s|. Nothing large is committed; the models are generated here.

With --cuda ssd,frcnn those models are also compiled for the CUDA backend
(--target=cuda) and m_main_emu (the generated CUDA built as C99 on graphc's
CPU emulation) runs them, the host reading NonZero's, TopK's and
NonMaxSuppression's counts back in mid-run; the same matching.
"""
import argparse
import concurrent.futures
import os
import shutil
import subprocess
import sys
import time
import warnings

import numpy as np

BOX_ATOL, BOX_RTOL = 1e-2, 1e-3
SCORE_ATOL, SCORE_RTOL = 1e-4, 1e-3


def build_model(name):
    import torch
    import torchvision.models.detection as det
    torch.manual_seed(0)
    if name == "ssd":
        m = det.ssdlite320_mobilenet_v3_large(weights=None, weights_backbone=None)
        shape = (3, 320, 320)
    elif name == "retina":
        m = det.retinanet_resnet50_fpn(weights=None, weights_backbone=None, min_size=256, max_size=256)
        shape = (3, 256, 256)
    elif name == "frcnn":
        m = det.fasterrcnn_mobilenet_v3_large_320_fpn(weights=None, weights_backbone=None, box_score_thresh=0.0)
        shape = (3, 320, 320)
    else:
        raise ValueError(name)
    randomize(m, shape)
    return m, torch.rand(shape, generator=torch.Generator().manual_seed(1))


# The layers that produce class logits and box offsets: drawn small, so that
# scores stay off saturation (distinct) and boxes stay near their anchors.
HEAD_LAYERS = ("cls_logits", "bbox_reg", "bbox_pred", "cls_score")


def is_head(name):
    return name.endswith(HEAD_LAYERS) or (name.startswith(("head.classification_head.module_list",
                                                         "head.regression_head.module_list")) and name.endswith(".1"))


def randomize(m, shape):
    """torchvision's own random initialization (under torch.manual_seed),
    except the head layers, re-drawn small with random biases (torchvision
    starts some at zero or at one constant prior, which gives many boxes
    one score and leaves their order to tie-breaking), and BatchNorm
    statistics measured on a random batch through the backbone, so that
    activations stay O(1)."""
    import torch
    g = torch.Generator().manual_seed(2)
    with torch.no_grad():
        for mod in m.modules():
            if isinstance(mod, torch.nn.BatchNorm2d):
                mod.reset_running_stats()
                mod.momentum = None
        m.backbone.train()
        m.backbone(torch.rand((2,) + shape, generator=g))
        m.eval()
        heads = [(name, mod) for name, mod in m.named_modules()
                 if isinstance(mod, (torch.nn.Conv2d, torch.nn.Linear)) and is_head(name)]
        rms = {}
        hooks = [mod.register_forward_hook(lambda mod, inp, out, name=name: rms.__setitem__(name, max(rms.get(name, 0.0), float(inp[0].pow(2).mean().sqrt()))))
                 for name, mod in heads]
        x = torch.rand(shape, generator=g)
        # logits of std about 0.5, box offsets of about 0.2 whatever the features' scale (twice: the
        # second-stage heads see the proposals of the first)
        for _ in range(2):
            rms.clear()
            m([x])
            for name, mod in heads:
                fan_in = mod.weight[0].numel()
                target = 0.2 if name.endswith(("bbox_reg", "bbox_pred")) or "regression" in name else 0.5
                std = target / (fan_in ** 0.5 * max(rms.get(name, 1.0), 1e-6))
                mod.weight.copy_(torch.randn(mod.weight.shape, generator=g) * std)
                if mod.bias is not None:
                    mod.bias.copy_(torch.randn(mod.bias.shape, generator=g) * 0.1 * target)
        for h in hooks:
            h.remove()


def export(name, work):
    """Exports NAME into WORK/NAME/model.onnx; saves the image and PyTorch's detections."""
    import torch
    d = os.path.join(work, name)
    os.makedirs(d, exist_ok=True)
    m, x = build_model(name)
    with torch.no_grad():
        out = m([x])[0]
    keys = list(out.keys())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(m, ([x],), os.path.join(d, "model.onnx"), opset_version=17, input_names=["image"],
                          output_names=keys)
    fix_roi_align(os.path.join(d, "model.onnx"))
    np.save(os.path.join(d, "image.npy"), x.numpy())
    for k in keys:
        np.save(os.path.join(d, f"ref_{k}.npy"), out[k].numpy())
    return keys


def fix_roi_align(path):
    """torchvision 0.14 exports roi_align(aligned=False) as an opset-10 style
    RoiAlign node with no coordinate_transformation_mode, which at opset 16
    and later means half_pixel; PyTorch computed output_half_pixel (no
    half-pixel shift). The attribute is written out, so that the ONNX file
    means what PyTorch ran; unfixed, graphc follows the ONNX spec and the
    second-stage features differ from PyTorch's."""
    import onnx
    from onnx import helper
    m = onnx.load(path)
    fixed = 0
    for node in m.graph.node:
        if node.op_type == "RoiAlign" and not any(a.name == "coordinate_transformation_mode" for a in node.attribute):
            node.attribute.append(helper.make_attribute("coordinate_transformation_mode", "output_half_pixel"))
            fixed += 1
    if fixed:
        onnx.save(m, path)


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def match(got, ref):
    """'' when the detections match as sets, else why not."""
    n = len(ref["boxes"])
    if len(got["boxes"]) != n or len(got["scores"]) != n or len(got["labels"]) != n:
        return f"count {len(got['boxes'])} vs PyTorch's {n}"
    used = np.zeros(n, bool)
    worst = 0.0
    for i in range(n):
        b, s, l = got["boxes"][i], got["scores"][i], got["labels"][i]
        ok = (~used) & (ref["labels"] == l)
        ok &= np.all(np.abs(ref["boxes"] - b) <= BOX_ATOL + BOX_RTOL * np.abs(ref["boxes"]), axis=1)
        ok &= np.abs(ref["scores"] - s) <= SCORE_ATOL + SCORE_RTOL * np.abs(ref["scores"])
        if not ok.any():
            return f"detection {i} (label {l}, score {s:.6g}, box {np.round(b, 4).tolist()}) has no match in PyTorch's"
        j = int(np.flatnonzero(ok)[0])
        used[j] = True
        worst = max(worst, float(np.abs(ref["boxes"][j] - b).max()))
    return "", worst


def one(graphc, work, name, keys, t_export, target="c"):
    t0 = time.time() - t_export
    d = os.path.join(work, name)
    t1 = time.time()
    out = os.path.join(d, "out" if target == "c" else "out_cuda")
    p = run([graphc, "compile", os.path.join(d, "model.onnx"), "-o", out, "--emit-main", "--name", "m", f"--target={target}"])
    if p.returncode != 0:
        return False, f"graphc compile: {p.stderr.strip()}"
    t2 = time.time()
    san = os.environ.get("GRAPHC_SANITIZE") == "1"
    s = " -fsanitize=address,undefined -fno-sanitize-recover=all" if san else ""
    if target == "cuda":  # the generated CUDA on graphc's CPU emulation
        mk = run(["make", "-s", "-C", out, f"CFLAGS=-O2 -std=c99 -w{s}", "emu"])
        exe = "m_main_emu"
    else:
        mk = run(["make", "-s", "-C", out, f"CFLAGS=-O1 -std=c99 -w{s}", f"LDFLAGS={s}", "BLAS=0", "m_main"])
        exe = "m_main"
    if mk.returncode != 0:
        return False, f"make: {(mk.stdout + mk.stderr).strip()[-2000:]}"
    t3 = time.time()
    res = os.path.join(d, "result" if target == "c" else "result_cuda")
    shutil.rmtree(res, ignore_errors=True)
    q = run([os.path.join(out, exe), res, os.path.join(d, "image.npy")])
    if q.returncode != 0:
        return False, f"{exe}: {q.stderr.strip()}"
    t4 = time.time()
    got = {k: np.load(os.path.join(res, f"output_{i}.npy")) for i, k in enumerate(keys)}
    ref = {k: np.load(os.path.join(d, f"ref_{k}.npy")) for k in keys}
    r = match(got, ref)
    if isinstance(r, str):
        return False, r
    return True, (f"{len(ref['boxes'])} detections match, max box diff {r[1]:.2e} px "
                  f"(export {t1 - t0:.0f} s, compile {t2 - t1:.0f} s, build {t3 - t2:.0f} s, run {t4 - t3:.1f} s)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--graphc", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--only", default="ssd,retina,frcnn")
    ap.add_argument("-j", type=int, default=1)
    ap.add_argument("--cuda", default="", help="models also compiled for the CUDA backend and run as the generated CUDA "
                                                "on graphc's CPU emulation (built with -O2), e.g. ssd,frcnn")
    a = ap.parse_args()
    graphc = os.path.abspath(a.graphc)
    work = os.path.abspath(a.work)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    names = a.only.split(",")
    exported = {}
    for n in names:  # torch.onnx.export is not thread-safe: one at a time
        t = time.time()
        exported[n] = (export(n, work), time.time() - t)
    runs = [(n, "c") for n in names] + [(n, "cuda") for n in a.cuda.split(",") if n]
    for n, _ in runs:
        if n not in exported:
            sys.exit(f"--cuda {n}: not among --only {a.only}")
    with concurrent.futures.ThreadPoolExecutor(a.j) as ex:
        res = list(ex.map(lambda r: one(graphc, work, r[0], *exported[r[0]], r[1]), runs))
    fails = 0
    for (n, t), (ok, msg) in zip(runs, res):
        print(f"{'PASS' if ok else 'FAIL'} {n}{' (CUDA, emulated)' if t == 'cuda' else ''}: {msg}")
        fails += not ok
    print(f"{len(runs) - fails} passed, {fails} failed")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
