/* conv_ab.c — one conv layer timed with two versions of the CPU runtime's
 * conv kernels in one process, for bench/conv_ab.sh: conv_old and conv_new
 * (conv_ab_old.c / conv_ab_new.c, each including its own gcrt_cpu.c and
 * gcrt_winograd.c; wino_old and wino_new for KIND 3) run
 * alternately on the same data, so a noisy machine slows both alike.
 *
 * usage: conv_ab C M HW K STRIDE KIND THREADS REPS
 *   a G=1 conv of C input and M output channels on an HW x HW map, K x K
 *   kernel, pad K/2, packed weights, bias and ReLU on the tile; KIND 0:
 *   conv-gemm with W in 8-row A panels, 1: W^T panels (positions as the
 *   tile's rows), 2: the sliding-window kernel, 3: Winograd F(4x4,3x3)
 *   (K 3, STRIDE 1; U random in its layout); THREADS 1 runs serially,
 *   more on the bundled pthread pool. Prints the minimum and median ms of each version, the
 *   GFLOP/s of the minimum (direct-conv flops) and new/old of the medians.
 * With CONV_AB_COLD=1 in the environment, the weights (and the input) are
 * flushed from every cache level (clflush, x86) before each timed call, as
 * in a whole model whose weights do not stay in the caches from one run to
 * the next (ResNet-18's 46 MB).
 * Both versions must share GcrtConv's and GcrtWino's layouts (the structs
 * of this tree's headers). The weights are random numbers in the packed layouts, so
 * the outputs mean nothing: tests/runtime/test_cpu_gemm.c checks them. */
#define _POSIX_C_SOURCE 200809L
#include "gc_thread_pool.h"
#include "gcrt_cpu.h"
#include "gcrt_winograd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

void conv_old(const GcrtConv *cv, const GcThreadPool *pool);
void conv_new(const GcrtConv *cv, const GcThreadPool *pool);
void wino_old(const GcrtWino *w, const GcThreadPool *pool);
void wino_new(const GcrtWino *w, const GcThreadPool *pool);

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Evicts n floats at p from every cache level. */
static void flush_floats(const float *p, size_t n)
{
#if defined(__x86_64__) || defined(__i386__)
    for (size_t i = 0; i < n; i += 16) _mm_clflush(p + i);
    _mm_mfence();
#else
    (void)p;
    (void)n;
#endif
}

static float *random_floats(size_t n)
{
    float *p = malloc(n * sizeof *p);
    if (!p) {
        fprintf(stderr, "conv_ab: out of memory\n");
        exit(1);
    }
    for (size_t i = 0; i < n; i++) p[i] = (float)(rand() % 2001) / 1000.0f - 1.0f;
    return p;
}

int main(int argc, char **argv)
{
    if (argc != 9) {
        fprintf(stderr, "usage: %s C M HW K STRIDE KIND THREADS REPS\n", argv[0]);
        return 2;
    }
    const int C = atoi(argv[1]), M = atoi(argv[2]), HW = atoi(argv[3]), K = atoi(argv[4]), S = atoi(argv[5]);
    const int kind = atoi(argv[6]), T = atoi(argv[7]), reps = atoi(argv[8]);
    if (C < 1 || M < 1 || HW < 1 || K < 1 || S < 1 || kind < 0 || kind > 3 || T < 1 || reps < 1 ||
        HW + 2 * (K / 2) < K || (kind == 3 && (K != 3 || S != 1))) {
        fprintf(stderr, "conv_ab: bad shape\n");
        return 2;
    }
    GcrtConv cv;
    memset(&cv, 0, sizeof cv);
    cv.N = 1, cv.C = C, cv.H = HW, cv.W = HW, cv.M = M, cv.G = 1, cv.KH = K, cv.KW = K;
    cv.sh = S, cv.sw = S, cv.dh = 1, cv.dw = 1, cv.pt = K / 2, cv.pl = K / 2;
    cv.OH = (HW + 2 * (K / 2) - K) / S + 1, cv.OW = cv.OH;
    const int64_t k_rows = (int64_t)C * K * K, m_pad = (M + GCRT_PACK_NR - 1) / GCRT_PACK_NR * GCRT_PACK_NR;
    const size_t ny = (size_t)M * (size_t)(cv.OH * cv.OW);
    cv.X = random_floats((size_t)C * HW * HW);
    cv.Wt = random_floats((size_t)(k_rows * m_pad));
    cv.w_packed = 1, cv.w_trans = kind == 1, cv.slide = kind == 2;
    cv.bias = random_floats((size_t)M);
    cv.act = 1;
    /* more than any version's workspace for these shapes: every task's slot */
    const size_t ws_floats = (size_t)(T + 1) * (size_t)(k_rows * (cv.OH * cv.OW + 64) + (int64_t)C * (HW + K) * (HW + K));
    cv.ws = random_floats(ws_floats);
    cv.max_slots = T;
    float *y_old = random_floats(ny), *y_new = random_floats(ny);
    GcrtWino w; /* KIND 3: the same layer through the Winograd kernel */
    memset(&w, 0, sizeof w);
    w.N = 1, w.C = C, w.H = HW, w.W = HW, w.OH = cv.OH, w.OW = cv.OW, w.M = M, w.pt = 1, w.pl = 1;
    w.X = cv.X, w.bias = cv.bias, w.act = cv.act, w.max_slots = T;
    if (kind == 3) {
        w.U = random_floats((size_t)GCRT_WINO_WEIGHT_FLOATS(M, C));
        w.ws = random_floats((size_t)T * (size_t)GCRT_WINO_SLOT_FLOATS(M, C));
    }
    GcPthreadPool *pp = T > 1 ? gc_pthread_pool_start(T) : NULL;
    if (T > 1 && !pp) {
        fprintf(stderr, "conv_ab: cannot start %d threads\n", T);
        return 1;
    }
    GcThreadPool pool = gc_pthread_pool_get(pp);
    double *t_old = malloc(sizeof(double) * (size_t)reps), *t_new = malloc(sizeof(double) * (size_t)reps);
    const int cold = getenv("CONV_AB_COLD") && atoi(getenv("CONV_AB_COLD")) != 0;
    const size_t n_w = kind == 3 ? (size_t)GCRT_WINO_WEIGHT_FLOATS(M, C) : (size_t)(k_rows * m_pad);
    const float *w_used = kind == 3 ? w.U : cv.Wt;
    for (int r = -3; r < reps; r++) { /* three untimed rounds first */
        if (cold) flush_floats(w_used, n_w), flush_floats(cv.X, (size_t)C * HW * HW);
        const double t0 = now_ms();
        cv.Y = w.Y = y_old;
        if (kind == 3) wino_old(&w, pp ? &pool : NULL);
        else conv_old(&cv, pp ? &pool : NULL);
        const double t1 = now_ms();
        if (cold) flush_floats(w_used, n_w), flush_floats(cv.X, (size_t)C * HW * HW);
        const double t1a = now_ms();
        cv.Y = w.Y = y_new;
        if (kind == 3) wino_new(&w, pp ? &pool : NULL);
        else conv_new(&cv, pp ? &pool : NULL);
        const double t2 = now_ms();
        if (r >= 0) t_old[r] = t1 - t0, t_new[r] = t2 - t1a;
    }
    qsort(t_old, (size_t)reps, sizeof(double), cmp_double);
    qsort(t_new, (size_t)reps, sizeof(double), cmp_double);
    const double mflop = 2.0 * (double)k_rows * M * cv.OH * cv.OW / 1e6;
    printf("C%d M%d %dx%d k%d s%d %s T%d: old min %.3f med %.3f ms (%.0f GFLOP/s) | new min %.3f med %.3f ms "
           "(%.0f GFLOP/s) | new/old med %.3f\n",
           C, M, HW, HW, K, S, (const char *const[]){"gemm", "wtrans", "slide", "wino"}[kind], T, t_old[0], t_old[reps / 2], mflop / t_old[0], t_new[0], t_new[reps / 2],
           mflop / t_new[0], t_new[reps / 2] / t_old[reps / 2]);
    gc_pthread_pool_stop(pp);
    return 0;
}
