/* wino_bench.c — the Winograd 3x3 convolution (runtime/cpu/gcrt_winograd.c)
 * against the direct implicit-im2col GEMM conv (gcrt_conv_gemm_f32, packed
 * weights), for ResNet and VGG-sized 3x3 stride-1 pad-1 layers:
 *
 *   gcc -O2 -march=native -std=c99 -I runtime/common bench/wino_bench.c -lm -lpthread -o wino_bench
 *   ./wino_bench [REPS [THREADS]]
 *
 * THREADS (default 1) > 1 runs both kernels on the bundled pthread pool
 * (runtime/cpu/gc_thread_pool.c), each with THREADS slots of workspace.
 * Each kernel runs once untimed and then REPS times (default 7); the table
 * gives the best time in ms and the effective GFLOP/s, 2*M*C*9*OH*OW / time
 * (the direct conv's flop count for both, so the Winograd column shows the
 * speed it is worth), and the largest difference between the two outputs
 * relative to their RMS. The machine may be shared: the best of REPS is the
 * number to quote. */
#define _POSIX_C_SOURCE 200809L
#include "../runtime/cpu/gc_thread_pool.c"
#include "../runtime/cpu/gcrt_cpu.c"
#include "../runtime/cpu/gcrt_winograd.c"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

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

static const GcThreadPool *pool; /* NULL: serial */
static int slots = 1;

static void layer(const char *name, int64_t N, int64_t C, int64_t M, int64_t HW, int reps)
{
    const int64_t K = 9 * C, nx = N * C * HW * HW, ny = N * M * HW * HW;
    float *X = malloc(sizeof(float) * (size_t)nx), *W = malloc(sizeof(float) * (size_t)(M * K));
    float *bias = malloc(sizeof(float) * (size_t)M);
    const float sc = (float)(1.0 / sqrt((double)K));
    for (int64_t i = 0; i < nx; i++) X[i] = frand();
    for (int64_t i = 0; i < M * K; i++) W[i] = frand() * sc;
    for (int64_t i = 0; i < M; i++) bias[i] = frand();
    /* direct: A panels of [M, K] */
    const int64_t mp = (M + GCRT_PACK_MR - 1) / GCRT_PACK_MR * GCRT_PACK_MR;
    float *Wp = calloc((size_t)(mp * K), sizeof *Wp);
    for (int64_t m = 0; m < M; m++)
        for (int64_t k = 0; k < K; k++)
            Wp[m / GCRT_PACK_MR * GCRT_PACK_MR * K + k * GCRT_PACK_MR + m % GCRT_PACK_MR] = W[m * K + k];
    float *cws = malloc(sizeof(float) * (size_t)(slots * GCRT_CONV_SLOT_FLOATS(C, 3, 3)));
    float *Yd = malloc(sizeof(float) * (size_t)ny), *Yw = malloc(sizeof(float) * (size_t)ny);
    GcrtConv cv;
    memset(&cv, 0, sizeof cv);
    cv.N = N, cv.C = C, cv.H = cv.W = cv.OH = cv.OW = HW, cv.M = M, cv.G = 1, cv.KH = cv.KW = 3;
    cv.sh = cv.sw = cv.dh = cv.dw = 1, cv.pt = cv.pl = 1;
    cv.X = X, cv.Wt = Wp, cv.w_packed = 1, cv.bias = bias, cv.act = GCRT_ACT_RELU, cv.Y = Yd, cv.ws = cws;
    cv.max_slots = slots;
    /* winograd */
    float *U = malloc(sizeof(float) * (size_t)GCRT_WINO_WEIGHT_FLOATS(M, C));
    gcrt_wino_transform_weights(M, C, W, U);
    float *wws = malloc(sizeof(float) * (size_t)(slots * GCRT_WINO_SLOT_FLOATS(M, C)));
    GcrtWino w;
    memset(&w, 0, sizeof w);
    w.N = N, w.C = C, w.H = w.W = w.OH = w.OW = HW, w.M = M, w.pt = w.pl = 1;
    w.X = X, w.U = U, w.bias = bias, w.act = GCRT_ACT_RELU, w.Y = Yw, w.ws = wws, w.max_slots = slots;
    double bd = 1e30, bw = 1e30;
    for (int r = 0; r <= reps; r++) {
        double t0 = now_ms();
        gcrt_conv_gemm_f32(&cv, pool);
        double t1 = now_ms();
        gcrt_wino_conv_f32(&w, pool);
        double t2 = now_ms();
        if (r) {
            bd = t1 - t0 < bd ? t1 - t0 : bd;
            bw = t2 - t1 < bw ? t2 - t1 : bw;
        }
    }
    double ss = 0, md = 0;
    for (int64_t i = 0; i < ny; i++) {
        const double d = fabs((double)Yw[i] - (double)Yd[i]);
        ss += (double)Yd[i] * (double)Yd[i];
        md = d > md ? d : md;
    }
    const double gf = 2.0 * (double)(M * K) * (double)(N * HW * HW) * 1e-6;
    printf("| %-12s | %lld | %4lld | %4lld | %3lldx%-3lld | %8.3f | %6.1f | %8.3f | %6.1f | %5.2fx | %.1e |\n", name,
           (long long)N, (long long)C, (long long)M, (long long)HW, (long long)HW, bd, gf / bd, bw, gf / bw, bd / bw,
           md / sqrt(ss / (double)ny));
    fflush(stdout);
    free(X), free(W), free(bias), free(Wp), free(cws), free(Yd), free(Yw), free(U), free(wws);
}

int main(int argc, char **argv)
{
    const int reps = argc > 1 ? atoi(argv[1]) : 7, threads = argc > 2 ? atoi(argv[2]) : 1;
    GcPthreadPool *pp = threads > 1 ? gc_pthread_pool_start(threads) : NULL;
    GcThreadPool gp;
    if (pp) gp = gc_pthread_pool_get(pp), pool = &gp, slots = threads;
    printf("%d thread(s)\n", pp ? threads : 1);
    printf("| layer        | N |    C |    M | HxW     | direct ms | GFLOP/s | wino ms | GFLOP/s | speedup "
           "| max diff/rms |\n");
    printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
    layer("resnet conv2", 1, 64, 64, 56, reps);
    layer("resnet conv3", 1, 128, 128, 28, reps);
    layer("resnet conv4", 1, 256, 256, 14, reps);
    layer("resnet conv5", 1, 512, 512, 7, reps);
    layer("resnet conv5", 8, 512, 512, 7, reps);
    layer("vgg conv1_2", 1, 64, 64, 224, reps > 3 ? 3 : reps);
    layer("vgg conv2_2", 1, 128, 128, 112, reps > 3 ? 3 : reps);
    layer("vgg conv3_2", 1, 256, 256, 56, reps > 3 ? 3 : reps);
    layer("vgg conv4_2", 1, 512, 512, 28, reps > 3 ? 3 : reps);
    layer("vgg conv5_2", 1, 512, 512, 14, reps);
    gc_pthread_pool_stop(pp);
    return 0;
}
