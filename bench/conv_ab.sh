#!/bin/bash
# conv_ab.sh — A/B of the CPU runtime's conv kernels (runtime/cpu/gcrt_cpu.c,
# gcrt_winograd.c)
# between a git revision and the working tree, layer by layer, both versions
# in one process and alternating (bench/conv_ab.c), at 1 and 2 threads.
#
#   bash bench/conv_ab.sh [REV] [REPS]     (default REV HEAD, REPS 200)
#
# CONV_AB_COLD=1 (environment) flushes the weights and the input from the
# caches before each timed call (see conv_ab.c).
# SHAPES (environment, ';'-separated "C M HW K STRIDE KIND", KIND 0 conv-gemm,
# 1 W^T tiles, 2 sliding window, 3 Winograd F(4x4,3x3), K 3 and STRIDE 1
# only) overrides the default layers: ResNet-18's
# 3x3 convs at 7x7 and its stride-2 conv into 7x7, MobileNetV2's 1x1
# projections at 14x14 and an expansion, and its stem. Prints one
# line per layer and thread count (see conv_ab.c). Needs gcc and git.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
rev=${1:-HEAD}
reps=${2:-200}
shapes=${SHAPES:-"512 512 7 3 1 1;256 512 14 3 2 1;576 96 14 1 1 1;384 64 14 1 1 1;96 576 14 1 1 0;3 32 224 3 2 2"}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/old" "$work/new"
for f in gcrt_cpu.c gcrt_cpu.h gcrt_winograd.c gcrt_winograd.h; do
    git -C "$here" show "$rev:runtime/cpu/$f" > "$work/old/$f"
    cp "$here/runtime/cpu/$f" "$work/new/$f"
done
for v in old new; do
    printf '#include "%s/gcrt_cpu.c"\n#include "%s/gcrt_winograd.c"\nvoid conv_%s(const GcrtConv *cv, const GcThreadPool *pool) { gcrt_conv_gemm_f32(cv, pool); }\nvoid wino_%s(const GcrtWino *w, const GcThreadPool *pool) { gcrt_wino_conv_f32(w, pool); }\n' \
        "$v" "$v" "$v" "$v" > "$work/conv_ab_$v.c"
done
flags="-O2 -std=gnu11 -march=native -I$here/runtime/common -I$here/runtime/cpu"
gcc $flags -I"$work" -c "$work/conv_ab_old.c" -o "$work/old.o"
gcc $flags -I"$work" -c "$work/conv_ab_new.c" -o "$work/new.o"
gcc $flags "$here/bench/conv_ab.c" "$work/old.o" "$work/new.o" "$here/runtime/cpu/gc_thread_pool.c" -o "$work/conv_ab" -lpthread -lm
echo "# runtime/cpu/gcrt_cpu.c: old = $rev ($(git -C "$here" rev-parse --short "$rev")), new = working tree; $reps alternating runs each"
IFS=';' read -ra list <<< "$shapes"
for s in "${list[@]}"; do
    for t in 1 2; do
        # shellcheck disable=SC2086
        "$work/conv_ab" $s "$t" "$reps"
    done
done
