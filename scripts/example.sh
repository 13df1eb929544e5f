#!/usr/bin/env bash
# example.sh — graphc end to end on the bundled example model:
#   installs the dependencies, builds graphc (build/), compiles examples/mlp.gir
#   to standalone C in build/example_out, builds that with make, runs the
#   generated program on examples/mlp_input.npy, and prints its output next to
#   the reference interpreter's (`graphc run`) on the same input.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
echo "== building graphc (build/)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc 2>/dev/null || echo 2)" --target graphc >/dev/null

echo "== build/graphc compile examples/mlp.gir -o build/example_out --emit-main"
rm -rf build/example_out build/example_run
build/graphc compile examples/mlp.gir -o build/example_out --emit-main
echo "   generated: $(cd build/example_out && ls | tr '\n' ' ')"

echo "== make -C build/example_out"
make -s -C build/example_out

mkdir -p build/example_run/compiled build/example_run/interpreter
echo "== build/example_out/mlp_main build/example_run/compiled examples/mlp_input.npy"
build/example_out/mlp_main build/example_run/compiled examples/mlp_input.npy
echo "== build/graphc run examples/mlp.gir build/example_run/interpreter examples/mlp_input.npy"
build/graphc run examples/mlp.gir build/example_run/interpreter examples/mlp_input.npy

/usr/bin/python3 - <<'PY'
import glob, os
import numpy as np
np.set_printoptions(precision=6, suppress=True, linewidth=150)
for out in sorted(glob.glob("build/example_run/compiled/*.npy")):
    name = os.path.basename(out)
    c = np.load(out)
    ref = np.load(os.path.join("build/example_run/interpreter", name))
    print(f"output {name} {c.dtype}{list(c.shape)}")
    print("  compiled C :", c.ravel())
    print("  interpreter:", ref.ravel())
    print(f"  max |difference| = {np.abs(c.astype(np.float64) - ref).max():.3g}; "
          f"argmax = {int(c.ravel().argmax())}")
PY
