/* dw_bench.c — the depthwise convolution (runtime/cpu/gcrt_dwconv.c) on the
 * 17 depthwise layers of MobileNetV2 (3x3, pad 1, bias + Clip(0, 6), N = 1),
 * one thread:
 *
 *   gcc -O2 -march=native -std=c99 -I runtime/common -I runtime/cpu bench/dw_bench.c -lm -lpthread -o dw_bench
 *   ./dw_bench [REPS]
 *
 * Each layer runs once untimed and then REPS times (default 300); the table
 * gives the best time in ms and GFLOP/s (2*9*C*OH*OW flops), and the last
 * line the total over the 17 layers (each distinct layer times its repeat
 * count in the network). The machine may be shared: the best of REPS is
 * the number to quote.
 *
 * Against another version of the kernel, in the same run (the two
 * alternate rep by rep; the table gains its columns and the largest
 * difference between the two outputs):
 *
 *   git show REV:runtime/cpu/gcrt_dwconv.c > /tmp/dw_old.c
 *   gcc -O2 -march=native -std=c99 -I runtime/common -I runtime/cpu -c bench/dw_bench.c \
 *       -DDW_BENCH_OLD_SRC='"/tmp/dw_old.c"' -o /tmp/dw_old.o
 *   gcc -O2 -march=native -std=c99 -I runtime/common -I runtime/cpu -DDW_BENCH_COMPARE bench/dw_bench.c \
 *       /tmp/dw_old.o -lm -lpthread -o dw_bench
 */
#define _POSIX_C_SOURCE 200809L

#ifdef DW_BENCH_OLD_SRC
/* The translation unit of the version compared against: its kernel behind one external name. */
#include "../runtime/cpu/gcrt_cpu.c"
#include DW_BENCH_OLD_SRC
void dw_bench_old(int64_t C, int64_t H, int64_t OH, int64_t s, const float *X, const float *Wt, const GcrtEpi *epi,
                  float *Y);
void dw_bench_old(int64_t C, int64_t H, int64_t OH, int64_t s, const float *X, const float *Wt, const GcrtEpi *epi,
                  float *Y)
{
    gcrt_dwconv2d_f32(1, C, H, H, OH, OH, 3, 3, s, s, 1, 1, 1, 1, X, Wt, epi, Y, NULL);
}
#else

#include "../runtime/cpu/gcrt_cpu.c"
#include "../runtime/cpu/gcrt_dwconv.c"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#ifdef DW_BENCH_COMPARE
void dw_bench_old(int64_t C, int64_t H, int64_t OH, int64_t s, const float *X, const float *Wt, const GcrtEpi *epi,
                  float *Y);
#endif

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static uint64_t rng = 1234567;
static float frand(void)
{
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (float)((double)(rng >> 40) / 16777216.0 * 2.0 - 1.0);
}

static double total_new;
#ifdef DW_BENCH_COMPARE
static double total_old;
#endif

/* One layer: C channels, HxH input, stride s, pad 1; count: how often it occurs in the network. */
static void layer(int64_t C, int64_t H, int64_t s, int count, int reps)
{
    const int64_t OH = (H + 2 - 3) / s + 1, nx = C * H * H, ny = C * OH * OH;
    float *X = malloc(sizeof(float) * (size_t)nx), *Wt = malloc(sizeof(float) * (size_t)(C * 9));
    float *bias = malloc(sizeof(float) * (size_t)C), *Y = malloc(sizeof(float) * (size_t)ny);
    GcrtEpi epi;
    double bn = 1e30, bo = 1e30;
    const double gf = 2.0 * 9.0 * (double)ny * 1e-6;
    int r;
#ifdef DW_BENCH_COMPARE
    float *Y0 = malloc(sizeof(float) * (size_t)ny);
    double md = 0;
    int64_t i;
#endif
    for (int64_t i = 0; i < nx; i++) X[i] = frand() * 3.0f + 1.0f;
    for (int64_t i = 0; i < C * 9; i++) Wt[i] = frand();
    for (int64_t i = 0; i < C; i++) bias[i] = frand();
    epi.bias = bias, epi.res = NULL, epi.act = GCRT_ACT_CLIP, epi.lo = 0.0f, epi.hi = 6.0f;
    for (r = 0; r <= reps; r++) {
        double t0 = now_ms(), t1;
        gcrt_dwconv2d_f32(1, C, H, H, OH, OH, 3, 3, s, s, 1, 1, 1, 1, X, Wt, &epi, Y, NULL);
        t1 = now_ms();
        if (r && t1 - t0 < bn) bn = t1 - t0;
#ifdef DW_BENCH_COMPARE
        t0 = now_ms();
        dw_bench_old(C, H, OH, s, X, Wt, &epi, Y0);
        t1 = now_ms();
        if (r && t1 - t0 < bo) bo = t1 - t0;
#endif
    }
    total_new += count * bn;
#ifdef DW_BENCH_COMPARE
    total_old += count * bo;
    for (i = 0; i < ny; i++) {
        const double d = fabs((double)Y[i] - (double)Y0[i]);
        md = d > md ? d : md;
    }
    printf("| %4lld@%3lldx%-3lld s%lld | x%d | %7.4f | %6.1f | %7.4f | %6.1f | %5.2fx | %.1e |\n", (long long)C,
           (long long)H, (long long)H, (long long)s, count, bo, gf / bo, bn, gf / bn, bo / bn, md);
    free(Y0);
#else
    (void)bo;
    printf("| %4lld@%3lldx%-3lld s%lld | x%d | %7.4f | %6.1f |\n", (long long)C, (long long)H, (long long)H,
           (long long)s, count, bn, gf / bn);
#endif
    fflush(stdout);
    free(X), free(Wt), free(bias), free(Y);
}

int main(int argc, char **argv)
{
    const int reps = argc > 1 ? atoi(argv[1]) : 300;
#ifdef DW_BENCH_COMPARE
    printf("| layer            | n  | old ms  | GFLOP/s | new ms | GFLOP/s | speedup | max diff |\n");
    printf("|---|---|---|---|---|---|---|---|\n");
#else
    printf("| layer            | n  | ms      | GFLOP/s |\n");
    printf("|---|---|---|---|\n");
#endif
    layer(32, 112, 1, 1, reps);
    layer(96, 112, 2, 1, reps);
    layer(144, 56, 1, 1, reps);
    layer(144, 56, 2, 1, reps);
    layer(192, 28, 1, 2, reps);
    layer(192, 28, 2, 1, reps);
    layer(384, 14, 1, 4, reps);
    layer(576, 14, 1, 2, reps);
    layer(576, 14, 2, 1, reps);
    layer(960, 7, 1, 3, reps);
#ifdef DW_BENCH_COMPARE
    printf("total (17 layers): old %.4f ms, new %.4f ms, speedup %.2fx\n", total_old, total_new, total_old / total_new);
#else
    printf("total (17 layers): %.4f ms\n", total_new);
#endif
    return 0;
}
#endif
