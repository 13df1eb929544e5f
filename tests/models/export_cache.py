"""export_cache.py — a folder of PyTorch exports shared by the test harnesses and builds.

Exporting a torchvision model with torch.onnx.export takes 1 to 20 s on this project's machines,
and the model tests export the same models more than once in a run of scripts/test.sh:
models_torch and models_torch_O0 share the opset-17 exports, the sanitizer build's twins repeat
both, and the CUDA emulation runs repeat them again. With a cache folder (--export-cache DIR,
which tests/CMakeLists.txt points at build-exports/ beside the build folders) a harness keeps
each export there and later runs copy it instead of exporting again.

An entry is keyed by everything the export depends on: the harness's name and case, its
parameters (opset, seed, precision, ...), the SHA-256 of the harness's own source (where the
models, their seeded weights and the input are made) and the versions of torch and torchvision.
A change to any of them makes a new key; nothing is ever reused across them. Entries are written
into a temporary folder and renamed into place when complete, under an exclusive lock per key,
so two harnesses running at once (ctest -j) export a model once and never read half an entry.
Without a cache folder the harness exports every time, as before.
"""
import fcntl
import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path


def source_hash(path):
    """SHA-256 (hex) of a file's bytes: a harness passes its own __file__."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def versions():
    """The versions an export depends on besides the harness's code."""
    import torch
    try:
        import torchvision
        tv = torchvision.__version__
    except ImportError:
        tv = None
    return {"torch": torch.__version__, "torchvision": tv}


def fetch(cache, key, names, folder, make):
    """Fills folder with the files `names` of the export keyed by key (a JSON-able dict) and
    returns (value, hit). make(dir) must write those files into dir and return a JSON-able value;
    it runs when the cache is None or has no entry for key (then the entry is stored)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    if not cache:
        return make(folder), False
    cache = Path(cache)
    cache.mkdir(parents=True, exist_ok=True)
    text = json.dumps(key, sort_keys=True)
    entry = cache / hashlib.sha256(text.encode()).hexdigest()[:32]
    hit = True
    with open(str(entry) + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (entry / "value.json").exists():
            hit = False
            tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=cache))
            try:
                value = make(tmp)
                (tmp / "key.json").write_text(text + "\n")
                (tmp / "value.json").write_text(json.dumps(value) + "\n")
                shutil.rmtree(entry, ignore_errors=True)  # an entry without value.json is incomplete
                os.rename(tmp, entry)
            except BaseException:
                shutil.rmtree(tmp, ignore_errors=True)
                raise
        value = json.loads((entry / "value.json").read_text())
        for n in names:
            shutil.copyfile(entry / n, folder / n)
    return value, hit
