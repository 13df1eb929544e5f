#!/usr/bin/env bash
# compile_speed.sh — how long graphc takes to compile real models, and how long the C compiler
# takes to build what it writes.
#
# Exports torchvision ResNet-18 (~45 MB of weights) and AlexNet (~245 MB) with seeded random
# weights to ONNX opset 17 once (into $WORK, reused by later runs), then for each model times
#   graphc compile MODEL.onnx -o OUT --emit-main --name m --weights=$WEIGHTS  (best of $REPEAT runs)
#   make -C OUT                                               (one run, from clean)
#   OUT/m_main (one inference on a random input)
# and prints the figures, with the peak memory of the largest process make ran (/usr/bin/time).
# Targets: ResNet-18 compile < 2 s, make < 30 s and < 1 GB, with every weights form.
#
# Usage: bench/compile_speed.sh [GRAPHC]      (default build/graphc)
# Environment: WORK (default /tmp/graphc-bench), REPEAT (default 3), MODELS (default
# "resnet18 alexnet"), WEIGHTS (incbin, c-array or file; default incbin), MAKEFLAGS / CFLAGS /
# BLAS as make takes them.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
GRAPHC=$(realpath "${1:-$ROOT/build/graphc}")
WORK=${WORK:-/tmp/graphc-bench}
REPEAT=${REPEAT:-3}
MODELS=${MODELS:-"resnet18 alexnet"}
WEIGHTS=${WEIGHTS:-incbin}
PY=/usr/bin/python3

[ -x "$GRAPHC" ] || { echo "graphc binary not found: $GRAPHC (build it, or pass its path)" >&2; exit 1; }
mkdir -p "$WORK"

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

for m in $MODELS; do
  if [ ! -f "$WORK/$m/model.onnx" ]; then
    echo "exporting $m to $WORK/$m/model.onnx ..."
    # The same export as the real-model test (seeded weights, eval mode, batch 1, fp32).
    "$PY" - "$ROOT" "$m" "$WORK/$m" <<'PYEOF'
import sys, warnings
from pathlib import Path
warnings.simplefilter("ignore")
sys.path.insert(0, str(Path(sys.argv[1]) / "tests" / "models"))
import torch_models as tm
name, folder = sys.argv[2], Path(sys.argv[3])
make = dict(tm.DEFAULT, **tm.EXTRA)[name]
tm.export(name, make, 17, folder, 0)
PYEOF
  fi
done

printf '\n%-10s %10s %10s %12s %14s %10s %10s\n' model "onnx MB" "compile s" "make s" "make peak MB" "run s" "C lines"
for m in $MODELS; do
  d="$WORK/$m"
  best=""
  for _ in $(seq "$REPEAT"); do
    rm -rf "$d/out"
    t0=$(now); "$GRAPHC" compile "$d/model.onnx" -o "$d/out" --emit-main --name m --weights="$WEIGHTS"; t1=$(now)
    t=$(elapsed "$t0" "$t1")
    if [ -z "$best" ] || awk -v a="$t" -v b="$best" 'BEGIN { exit !(a < b) }'; then best=$t; fi
  done
  peak=n/a
  if [ -x /usr/bin/time ]; then
    t0=$(now); /usr/bin/time -f %M -o "$d/make.rss" make -s -C "$d/out" >/dev/null; t1=$(now)
    peak=$(awk '{ printf "%.0f", $1 / 1024 }' "$d/make.rss")  # KiB of the largest child
  else
    t0=$(now); make -s -C "$d/out" >/dev/null; t1=$(now)
  fi
  mk=$(elapsed "$t0" "$t1")
  rm -rf "$d/run"
  t0=$(now); "$d/out/m_main" "$d/run" "$d/in0.npy" >/dev/null; t1=$(now)
  rn=$(elapsed "$t0" "$t1")
  mb=$(awk -v s="$(stat -c %s "$d/model.onnx")" 'BEGIN { printf "%.1f", s / 1e6 }')
  printf '%-10s %10s %10s %12s %14s %10s %10s\n' "$m" "$mb" "$best" "$mk" "$peak" "$rn" "$(wc -l < "$d/out/m.c")"
done
echo
echo "compile: best of $REPEAT runs of 'graphc compile --emit-main --weights=$WEIGHTS'; make: one 'make -C OUT'" \
     "from clean (MAKEFLAGS='${MAKEFLAGS:-}'), peak: the largest resident set of a process it ran;" \
     "run: one inference of m_main; $(nproc) CPUs"
