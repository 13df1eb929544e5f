#!/usr/bin/env bash
# opt_levels.sh — what -O2 buys over -O0 on real models: inference time, kernels, arena.
#
# Exports ResNet-18, MobileNetV2 and the 2-layer TransformerEncoder of the real-model test
# (tests/models/torch_models.py --export-only: seeded random weights, batch 1, fp32, ONNX
# opset 17) once into $WORK (later runs reuse them), then for each model and level
#   graphc compile model.onnx -o $WORK/MODEL/O<L> --name m -O<L> --report
#   make -C $WORK/MODEL/O<L> libm.a        (the generated Makefile; OpenBLAS when found)
#   cc bench_main.c libm.a                 (a driver written here: calls m_run_v)
# and runs each driver once per level in this script run: one warm-up inference, then $N
# timed inferences on the same deterministic input (the median is reported). It prints
# per model the median time at -O0 and -O2, the speed ratio (time -O0 / time -O2), the
# kernels and the arena bytes at both levels (from --report), and the largest absolute
# difference between the two levels' outputs (they compute the same function).
#
# Usage: bench/opt_levels.sh [GRAPHC]      (default build/graphc)
# Environment: WORK (default /tmp/graphc-bench-opt), N (default 20), MODELS (default
# "resnet18 mobilenet_v2 transformer"), BLAS (auto|0|1, default auto), CC, CFLAGS (default
# -O2), OPENBLAS_NUM_THREADS (default 1), OPENBLAS_CORETYPE (passed through; printed).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
GRAPHC=$(realpath "${1:-$ROOT/build/graphc}")
WORK=${WORK:-/tmp/graphc-bench-opt}
N=${N:-20}
MODELS=${MODELS:-"resnet18 mobilenet_v2 transformer"}
BLAS=${BLAS:-auto}
CC=${CC:-cc}
CFLAGS=${CFLAGS:-"-O2"}
export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1}
PY=/usr/bin/python3
OPSET=17

[ -x "$GRAPHC" ] || { echo "graphc binary not found: $GRAPHC (build it, or pass its path)" >&2; exit 1; }
mkdir -p "$WORK"

if [ "$BLAS" = auto ]; then
  if [ -f /usr/include/x86_64-linux-gnu/cblas.h ] || pkg-config --exists openblas 2>/dev/null; then BLAS=1; else BLAS=0; fi
fi
BLAS_LIBS=""
if [ "$BLAS" = 1 ]; then BLAS_LIBS=$(echo $(pkg-config --libs openblas 2>/dev/null || echo -lopenblas)); fi

# The timing driver: one input, one output (all three models), filled with a fixed
# pattern; prints "median_ms min_ms" and writes the output's raw bytes to argv[2].
cat > "$WORK/bench_main.c" <<'CEOF'
#include "m.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if m_NUM_INPUTS != 1 || m_NUM_OUTPUTS != 1
#error "bench_main.c expects one input and one output"
#endif
static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}
static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}
int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 10, i;
    float *in = malloc(m_INPUT_0_BYTES), *out = malloc(m_OUTPUT_0_BYTES);
    void *arena = NULL;
    double *t = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    unsigned s = 12345;
    if (!in || !out || !t || n < 1) return 1;
    if (m_ARENA_BYTES > 0 && posix_memalign(&arena, m_ARENA_ALIGN, m_ARENA_BYTES) != 0) return 1;
    for (i = 0; i < (int)(m_INPUT_0_BYTES / sizeof(float)); i++) {
        s = s * 1664525u + 1013904223u;
        in[i] = (float)((s >> 8) & 0xffff) / 32768.0f - 1.0f;
    }
    {
        const void *ins[1];
        void *outs[1];
        ins[0] = in;
        outs[0] = out;
        if (m_run_v(NULL, arena, ins, outs) != 0) return 2; /* warm-up */
        for (i = 0; i < n; i++) {
            double t0 = now_ms();
            m_run_v(NULL, arena, ins, outs);
            t[i] = now_ms() - t0;
        }
    }
    qsort(t, (size_t)n, sizeof *t, cmp);
    printf("%.3f %.3f\n", t[n / 2], t[0]);
    if (argc > 2) {
        FILE *f = fopen(argv[2], "wb");
        if (!f || fwrite(out, 1, m_OUTPUT_0_BYTES, f) != m_OUTPUT_0_BYTES) return 3;
        fclose(f);
    }
    return 0;
}
CEOF

for m in $MODELS; do
  d="$WORK/export/${m}_op$OPSET"
  if [ ! -f "$d/model.onnx" ]; then
    echo "exporting $m (opset $OPSET) ..."
    "$PY" "$ROOT/tests/models/torch_models.py" --graphc "$GRAPHC" --work "$WORK/export" --export-only \
      --filter "${m}_op$OPSET" >/dev/null
  fi
done

# field NAME FILE: the number after "NAME: " in a --report file
field() { sed -n "s/^$1: \([0-9]*\).*/\1/p" "$2"; }

declare -A T K A
for m in $MODELS; do
  for lvl in 0 2; do
    o="$WORK/$m/O$lvl"
    rm -rf "$o"
    mkdir -p "$WORK/$m"
    "$GRAPHC" compile "$WORK/export/${m}_op$OPSET/model.onnx" -o "$o" --name m -O$lvl --report > "$WORK/$m/report_O$lvl.txt"
    make -s -C "$o" BLAS="$BLAS" CFLAGS="$CFLAGS -std=c99" libm.a >/dev/null
    # shellcheck disable=SC2086
    $CC $CFLAGS -std=c99 -D_POSIX_C_SOURCE=200809L -I"$o" -o "$o/bench_main" "$WORK/bench_main.c" "$o/libm.a" $BLAS_LIBS -lm
    K[$m$lvl]=$(field kernels "$WORK/$m/report_O$lvl.txt")
    A[$m$lvl]=$(field arena "$WORK/$m/report_O$lvl.txt")
  done
  for lvl in 0 2; do
    o="$WORK/$m/O$lvl"
    T[$m$lvl]=$("$o/bench_main" "$N" "$WORK/$m/out_O$lvl.bin" | cut -d' ' -f1)
  done
done

echo
echo "graphc -O0 vs -O2: median of $N inferences after one warm-up, batch 1, fp32, ONNX opset $OPSET"
echo "C compiler: $CC $CFLAGS; BLAS: $([ "$BLAS" = 1 ] && echo "OpenBLAS ($BLAS_LIBS)" || echo "portable kernels")"
echo "OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset} OPENBLAS_NUM_THREADS=$OPENBLAS_NUM_THREADS; $(nproc) cores"
printf '\n%-14s %10s %10s %8s %9s %9s %12s %12s %10s\n' model "-O0 ms" "-O2 ms" "ratio" \
  "kern -O0" "kern -O2" "arena -O0" "arena -O2" "max|diff|"
for m in $MODELS; do
  ratio=$(awk -v a="${T[${m}0]}" -v b="${T[${m}2]}" 'BEGIN { printf "%.2fx", a / b }')
  diff=$("$PY" -c "import numpy as np,sys; a=np.fromfile(sys.argv[1],np.float32); b=np.fromfile(sys.argv[2],np.float32); print('%.2e' % float(np.abs(a-b).max()))" \
    "$WORK/$m/out_O0.bin" "$WORK/$m/out_O2.bin")
  printf '%-14s %10s %10s %8s %9s %9s %12s %12s %10s\n' "$m" "${T[${m}0]}" "${T[${m}2]}" "$ratio" \
    "${K[${m}0]}" "${K[${m}2]}" "${A[${m}0]}" "${A[${m}2]}" "$diff"
done
echo
echo "ratio = time at -O0 / time at -O2 (above 1: -O2 is faster); arena in bytes"
