#!/usr/bin/env python3
"""test_package.py — graphc used from outside its own build, as its users do.

  1. `cmake --install BUILD --prefix WORK/prefix` installs the outer build's
     graphc: the executable, graphc/graphc.h, libgraphc.a, graphc.pc and the
     CMake package (graphcConfig.cmake, its version file, the exported targets,
     graphcModel.cmake).
  2. find_package: tests/package (an outside CMake project) finds that prefix
     through CMAKE_PREFIX_PATH, compiles a copy of examples/mlp.gir with
     graphc_add_model() and links it into mlp_app (main.c), and links api_app
     (api_main.c) to graphc::graphc. mlp_app's output on examples/mlp_input.npy
     must match `graphc run` (the reference interpreter); api_app must print the
     hand-computed values and compile a folder. A second build must not rerun
     graphc; after the model changes the build must rerun it and mlp_app must
     match the interpreter on the new model; after `clean` it builds again.
  3. add_subdirectory: the same project with graphc's source folder as a
     subdirectory (graphc's tests are not built there), same checks.
  4. pkg-config: api_main.c built with `pkg-config --cflags --libs graphc` from
     the prefix, run.
  5. The generated folder on its own: `graphc compile` then `make`, main.c built
     with `pkg-config --cflags --libs mlp` (the folder's mlp.pc), and the
     project in its `snippet` mode (include() of the folder's mlp.cmake); both
     must match the interpreter.

Exits 1 with a message at the first failure.
"""
import argparse
import glob
import os
import shlex
import shutil
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(os.path.dirname(HERE))


def fail(msg):
    print(f"FAIL: {msg}")
    sys.exit(1)


def run(cmd, env=None, cwd=None):
    """Runs cmd; its combined output, or fail() with it."""
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, cwd=cwd)
    if p.returncode != 0:
        fail(f"{' '.join(map(str, cmd))} exited {p.returncode}:\n{p.stdout[-6000:]}")
    return p.stdout


def compare(got_text, ref, what):
    got = np.array([float(t) for t in got_text.split()], dtype=np.float64)
    ref = ref.astype(np.float64).ravel()
    if got.shape != ref.shape:
        fail(f"{what}: {got.size} values, the interpreter gives {ref.size}")
    if not np.allclose(got, ref, rtol=1e-5, atol=1e-7):
        fail(f"{what}: max |difference| {np.abs(got - ref).max():.3g} from the interpreter\n got {got}\n ref {ref}")
    print(f"ok   {what}: {got.size} values match `graphc run` (max |difference| {np.abs(got - ref).max():.2g})")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--graphc", required=True, help="the outer build's graphc")
    ap.add_argument("--build-dir", required=True, help="the outer build folder, installed from")
    ap.add_argument("--work", required=True)
    ap.add_argument("--cmake", default="cmake")
    ap.add_argument("--cc", default="cc")
    ap.add_argument("--cflags", default="", help="compile and link flags for everything built here (sanitizers)")
    a = ap.parse_args()

    work = os.path.abspath(a.work)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    cflags = shlex.split(a.cflags)
    cmake_common = [f"-DCMAKE_C_COMPILER={a.cc}", "-DCMAKE_BUILD_TYPE=Release"]
    if cflags:
        cmake_common += [f"-DCMAKE_C_FLAGS={a.cflags}", f"-DCMAKE_EXE_LINKER_FLAGS={a.cflags}"]
    project = HERE
    model_src = os.path.join(SOURCE, "examples", "mlp.gir")
    x = np.load(os.path.join(SOURCE, "examples", "mlp_input.npy"))
    x_npy = os.path.join(work, "input.npy")
    np.save(x_npy, x)
    x_raw = os.path.join(work, "input.f32")
    x.astype("<f4").tofile(x_raw)

    def reference(model, tag):
        out = os.path.join(work, "ref_" + tag)
        run([a.graphc, "run", model, out, x_npy])
        return np.load(os.path.join(out, "output_0.npy"))

    def configure_build(bdir, *defs):
        run([a.cmake, "-S", project, "-B", bdir, *cmake_common, *defs])
        return run([a.cmake, "--build", bdir, "-j2"])

    def check_api(bdir, what):
        exe = os.path.join(bdir, "api_app")
        out_dir = os.path.join(bdir, "api_out")
        out = run([exe, out_dir])
        if out != "2 0 1 0\ncompiled\n":
            fail(f"{what}: api_app printed {out!r}, expected '2 0 1 0' and 'compiled'")
        for f in ("affine_relu.c", "affine_relu.h", "affine_relu.pc", "affine_relu.cmake"):
            if not os.path.isfile(os.path.join(out_dir, f)):
                fail(f"{what}: api_app's gc_compile wrote no {f}")
        print(f"ok   {what}: the C API interprets (2 0 1 0) and compiles")

    ref = reference(model_src, "mlp")

    # 1. install
    prefix = os.path.join(work, "prefix")
    run([a.cmake, "--install", a.build_dir, "--prefix", prefix])
    want = ["bin/graphc", "include/graphc/graphc.h", "lib*/libgraphc.a", "lib*/pkgconfig/graphc.pc",
            "lib*/cmake/graphc/graphcConfig.cmake", "lib*/cmake/graphc/graphcConfigVersion.cmake",
            "lib*/cmake/graphc/graphcTargets.cmake", "lib*/cmake/graphc/graphcModel.cmake"]
    for pat in want:
        if not glob.glob(os.path.join(prefix, pat)):
            fail(f"cmake --install left no {pat} under the prefix")
    pc_dir = os.path.dirname(glob.glob(os.path.join(prefix, "lib*/pkgconfig/graphc.pc"))[0])
    print(f"ok   installed: {', '.join(want)}")

    # 2. find_package, with a model that will change
    mdir = os.path.join(work, "model")
    os.makedirs(mdir)
    model = os.path.join(mdir, "mlp.gir")
    shutil.copy(model_src, model)
    bdir = os.path.join(work, "find_package")
    log = configure_build(bdir, f"-DCMAKE_PREFIX_PATH={prefix}", "-DGRAPHC_USE=find_package",
                          f"-DGRAPHC_TEST_MODEL={model}")
    if "graphc: compiling" not in log:
        fail("find_package: the build did not run graphc")
    app = os.path.join(bdir, "mlp_app")
    first = run([app, x_raw])
    compare(first, ref, "find_package + graphc_add_model: mlp_app")
    check_api(bdir, "find_package: graphc::graphc")
    log = run([a.cmake, "--build", bdir, "-j2"])
    if "graphc: compiling" in log:
        fail("find_package: a second build with nothing changed ran graphc again")
    text = open(model).read()
    if "seed=4" not in text:
        fail("examples/mlp.gir no longer has the 'seed=4' this test edits")
    with open(model, "w") as f:
        f.write(text.replace("seed=4", "seed=5"))
    log = run([a.cmake, "--build", bdir, "-j2"])
    if "graphc: compiling" not in log:
        fail("find_package: the build did not rerun graphc after the model changed")
    second = run([app, x_raw])
    if second == first:
        fail("find_package: mlp_app's output did not change with the model")
    compare(second, reference(model, "changed"), "find_package: mlp_app after the model changed")
    run([a.cmake, "--build", bdir, "--target", "clean"])
    run([a.cmake, "--build", bdir, "-j2"])
    if run([app, x_raw]) != second:
        fail("find_package: mlp_app differs after clean and rebuild")
    print("ok   find_package: no rerun when nothing changed, a rerun when the model did, a rebuild after clean")

    # 3. add_subdirectory
    bdir = os.path.join(work, "subdirectory")
    configure_build(bdir, "-DGRAPHC_USE=subdirectory", f"-DGRAPHC_SOURCE_DIR={SOURCE}")
    compare(run([os.path.join(bdir, "mlp_app"), x_raw]), ref, "add_subdirectory + graphc_add_model: mlp_app")
    check_api(bdir, "add_subdirectory: graphc::graphc")
    cache = open(os.path.join(bdir, "CMakeCache.txt")).read()
    if "GRAPHC_BUILD_TESTS:BOOL=OFF" not in cache or os.path.exists(os.path.join(bdir, "graphc", "tests")):
        fail("add_subdirectory: graphc's tests are configured in a parent project")
    print("ok   add_subdirectory: graphc's tests are off")

    # 4. pkg-config for the C API
    env = dict(os.environ, PKG_CONFIG_PATH=pc_dir)
    flags = shlex.split(run(["pkg-config", "--cflags", "--libs", "graphc"], env=env))
    exe = os.path.join(work, "api_pkgconfig")
    run([a.cc, "-std=c99", "-Wall", "-Wextra", "-Werror", *cflags, os.path.join(project, "api_main.c"),
         "-o", exe, *flags])
    out = run([exe, os.path.join(work, "api_pkgconfig_out")])
    if out != "2 0 1 0\ncompiled\n":
        fail(f"pkg-config: api_main printed {out!r}")
    print(f"ok   pkg-config --cflags --libs graphc ({' '.join(flags)}): api_main builds and runs")

    # 5. the generated folder's own mlp.pc and mlp.cmake
    gdir = os.path.join(work, "generated")
    run([a.graphc, "compile", model_src, "-o", gdir, "--name", "mlp"])
    make_env = dict(os.environ, CC=a.cc)
    if cflags:
        make_env["CFLAGS"] = "-O2 -std=c99 -Wall -Wextra -pedantic " + a.cflags
        make_env["LDFLAGS"] = a.cflags
    run(["make", "-s", "-C", gdir], env=make_env)
    env = dict(os.environ, PKG_CONFIG_PATH=gdir)
    flags = shlex.split(run(["pkg-config", "--cflags", "--libs", "mlp"], env=env))
    exe = os.path.join(work, "mlp_pkgconfig")
    run([a.cc, "-std=c99", "-Wall", "-Wextra", "-Werror", "-pthread", *cflags, os.path.join(project, "main.c"),
         os.path.join(gdir, "gc_thread_pool.c"), "-o", exe, *flags])
    compare(run([exe, x_raw]), ref, f"generated mlp.pc ({' '.join(flags)}): main.c")
    bdir = os.path.join(work, "snippet")
    configure_build(bdir, "-DGRAPHC_USE=snippet", f"-DMODEL_DIR={gdir}")
    compare(run([os.path.join(bdir, "mlp_app"), x_raw]), ref, "generated mlp.cmake (include()): mlp_app")
    print("package: all checks passed")


if __name__ == "__main__":
    main()
