/* test_winograd.c — the Winograd F(4x4, 3x3) convolution
 * (runtime/cpu/gcrt_winograd.c) and its compile-time half
 * (backend/c/cpu_wino_pack.c).
 *
 * A plain C program (no framework): it includes the runtime sources the way
 * generated code does (gcrt_cpu.c first), and checks
 *   - the compiler's filter packer against the runtime's transform, bit for
 *     bit (weights over many binades, zeros, subnormals), and its slot and
 *     workspace sizes against the runtime's;
 *   - random convolutions against a naive double-precision reference:
 *     1-2 images, 1-70 input and output channels (and some over
 *     GCRT_WINO_MB outputs: several channel blocks of MB or MB/2), 1-30 rows
 *     and columns (sizes that are no multiple of 4), pads 0-2 on each side
 *     (bottom and right through OH and OW), every epilogue (bias, residual,
 *     none / Relu / Clip / Tanh / Sigmoid); nothing written outside Y;
 *   - the same bits for 2..8 tasks (pools that run the tasks in reverse
 *     order on the calling thread) and through the bundled pthread pool,
 *     with the workspace the compiler would allocate (canaries after it);
 *   - a NaN reaching the output through Relu and Clip, as in gcrt_cpu.c;
 *   - the accuracy on ResNet-sized layers (K = 9C up to 4608, inputs and
 *     weights ~U(-1,1)/sqrt(K)): the largest error below 1e-4 of the
 *     output's RMS (printed, beside the direct GEMM conv's).
 *
 * Tolerance: every input of a tile's 6x6 patch enters the transformed
 * products of all 16 outputs of the tile (and cancels in exact arithmetic),
 * so an output's rounding error scales with the patch, not with its own
 * 3x3 window: the check allows 2e-5 * (sum over c of sum |w| * max |x| over
 * the patch, + |bias| + |res|) per element (reference()), about 170 eps;
 * the largest error seen is about a tenth of that (printed).
 *
 *   gcc -O2 -march=native -std=c99 -I runtime/common tests/runtime/test_winograd.c -lm -lpthread
 *
 * Exit status 0 when all pass. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

/* every kernel call splits over the pool, however small (gcrt_pool_for) */
#define GCRT_PAR_MIN_WORK 0
#include "../../runtime/cpu/gc_thread_pool.c"
#include "../../runtime/cpu/gcrt_cpu.c"
#include "../../runtime/cpu/gcrt_winograd.c"
#include "../../backend/c/cpu_wino_pack.c"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static uint64_t rng = 88172645463325252ull;
static float frand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (float)((double)(rng >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}
static int64_t irand(int64_t lo, int64_t hi)
{
    return lo + (int64_t)((frand() + 1.0f) * 0.5f * (float)(hi - lo + 1)) % (hi - lo + 1);
}

/* A pool that runs the tasks in reverse order on the calling thread. */
static void rev_for(void *ctx, int64_t n, GcTaskFn fn, void *arg)
{
    (void)ctx;
    for (int64_t t = n - 1; t >= 0; t--) fn(arg, t);
}

static int failures;
static double worst_ratio; /* largest |err| / tolerance seen */
static GcPthreadPool *threads3;

#define GUARD 64          /* floats of canary on each side of Y, after the workspace */
#define CANARY 0x7fc0dead /* a NaN pattern no result has */

static void fill_canary(float *p, int64_t n)
{
    const uint32_t c = CANARY;
    for (int64_t i = 0; i < n; i++) memcpy(p + i, &c, sizeof c);
}
static int canary_ok(const float *p, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, p + i, sizeof u);
        if (u != CANARY) return 0;
    }
    return 1;
}

static double epi(double v, int act, float flo, float fhi)
{
    const double lo = (double)flo, hi = (double)fhi;
    switch (act) {
    case GCRT_ACT_RELU: return v > 0 ? v : 0;
    case GCRT_ACT_CLIP: return v < lo ? lo : v > hi ? hi : v;
    case GCRT_ACT_TANH: return tanh(v);
    case GCRT_ACT_SIGMOID: return 1.0 / (1.0 + exp(-v));
    default: return v;
    }
}

/* want[i] = the exact epilogue'd conv; mag[i] = the scale of its rounding
 * error: sum over c of sum |w[m][c]| times the largest |x| of channel c in
 * the 6x6 patch of the output's tile, plus |bias| and |res|. */
static void reference(const GcrtWino *w, const float *W, double *want, double *mag)
{
    const int64_t TH = (w->OH + 3) / 4, TW = (w->OW + 3) / 4;
    double *pmax = calloc((size_t)(w->N * w->C * TH * TW), sizeof *pmax);
    for (int64_t n = 0; n < w->N; n++)
        for (int64_t c = 0; c < w->C; c++)
            for (int64_t t = 0; t < TH * TW; t++)
                for (int64_t r = 0; r < 6; r++)
                    for (int64_t s = 0; s < 6; s++) {
                        const int64_t ih = t / TW * 4 - w->pt + r, iw = t % TW * 4 - w->pl + s;
                        if (ih < 0 || ih >= w->H || iw < 0 || iw >= w->W) continue;
                        const double v = fabs((double)w->X[((n * w->C + c) * w->H + ih) * w->W + iw]);
                        double *p = &pmax[(n * w->C + c) * TH * TW + t];
                        if (v > *p) *p = v;
                    }
    for (int64_t n = 0; n < w->N; n++)
        for (int64_t m = 0; m < w->M; m++)
            for (int64_t oh = 0; oh < w->OH; oh++)
                for (int64_t ow = 0; ow < w->OW; ow++) {
                    double s = 0, a = 0;
                    for (int64_t c = 0; c < w->C; c++) {
                        double wa = 0;
                        for (int64_t kh = 0; kh < 3; kh++)
                            for (int64_t kw = 0; kw < 3; kw++) {
                                const double wv = (double)W[((m * w->C + c) * 3 + kh) * 3 + kw];
                                const int64_t ih = oh - w->pt + kh, iw = ow - w->pl + kw;
                                wa += fabs(wv);
                                if (ih < 0 || ih >= w->H || iw < 0 || iw >= w->W) continue;
                                s += (double)w->X[((n * w->C + c) * w->H + ih) * w->W + iw] * wv;
                            }
                        a += wa * pmax[(n * w->C + c) * TH * TW + oh / 4 * TW + ow / 4];
                    }
                    const int64_t yi = ((n * w->M + m) * w->OH + oh) * w->OW + ow;
                    if (w->bias) s += (double)w->bias[m], a += fabs((double)w->bias[m]);
                    if (w->res) s += (double)w->res[yi], a += fabs((double)w->res[yi]);
                    want[yi] = epi(s, w->act, w->lo, w->hi);
                    mag[yi] = a;
                }
    free(pmax);
}

static float *transformed(int64_t M, int64_t C, const float *W)
{
    float *U = malloc(sizeof(float) * (size_t)(GCRT_WINO_WEIGHT_FLOATS(M, C) + 1));
    gcrt_wino_transform_weights(M, C, W, U);
    return U;
}

/* The runtime's filter transform and the compiler's packer give the same
 * bits; the compiler's sizes are the runtime's. */
static void test_pack_identity(int iter)
{
    const int64_t M = iter % 5 == 0 ? 1 : irand(1, 300), C = iter % 7 == 0 ? 1 : irand(1, 150);
    const int64_t n = GCRT_WINO_WEIGHT_FLOATS(M, C);
    float *W = malloc(sizeof(float) * (size_t)(M * C * 9));
    for (int64_t i = 0; i < M * C * 9; i++) /* magnitudes over many binades, some zeros and subnormals */
        W[i] = i % 11 == 0 ? 0.0f : frand() * ldexpf(1.0f, (int)irand(-140, 40));
    float *U = malloc(sizeof(float) * (size_t)n), *Uc = malloc(sizeof(float) * (size_t)n);
    memset(U, 0xa5, sizeof(float) * (size_t)n);
    memset(Uc, 0x5a, sizeof(float) * (size_t)n);
    gcrt_wino_transform_weights(M, C, W, U);
    cgen_wino_pack(M, C, W, Uc);
    if (cgen_wino_packed_floats(M, C) != n || memcmp(U, Uc, sizeof(float) * (size_t)n)) {
        printf("FAIL pack identity M%lld C%lld\n", (long long)M, (long long)C);
        failures++;
    }
    if (cgen_wino_slot_floats(M, C) != GCRT_WINO_SLOT_FLOATS(M, C)) {
        printf("FAIL slot floats M%lld C%lld: %lld, runtime %lld\n", (long long)M, (long long)C,
               (long long)cgen_wino_slot_floats(M, C), (long long)GCRT_WINO_SLOT_FLOATS(M, C));
        failures++;
    }
    free(W), free(U), free(Uc);
}

static void test_conv(int iter)
{
    GcrtWino w;
    memset(&w, 0, sizeof w);
    w.N = irand(1, 2), w.C = irand(1, 70), w.M = irand(1, 70);
    w.H = irand(1, 30), w.W = irand(1, 30);
    if (iter % 4 == 0) w.C = irand(1, 8), w.M = irand(1, 12);
    if (iter % 9 == 0) w.H = irand(1, 3);
    if (iter % 10 == 7) /* several output-channel blocks, of MB or MB/2 (GCRT_WINO_ITEM_M) */
        w.M = irand(GCRT_WINO_MB + 1, GCRT_WINO_MB + 40), w.C = irand(1, 8), w.H = irand(1, 26), w.W = irand(1, 26);
    w.pt = irand(0, 2), w.pl = irand(0, 2);
    int64_t pb = irand(0, 2), pr = irand(0, 2);
    if (iter % 3 == 0) pb = w.pt, pr = w.pl;
    w.OH = w.H + w.pt + pb - 2, w.OW = w.W + w.pl + pr - 2;
    if (w.OH <= 0 || w.OW <= 0) return;
    const int64_t nx = w.N * w.C * w.H * w.W, ny = w.N * w.M * w.OH * w.OW;
    float *X = malloc(sizeof(float) * (size_t)nx), *W = malloc(sizeof(float) * (size_t)(w.M * w.C * 9));
    float *bias = malloc(sizeof(float) * (size_t)w.M), *R = malloc(sizeof(float) * (size_t)ny);
    for (int64_t i = 0; i < nx; i++) X[i] = frand();
    for (int64_t i = 0; i < w.M * w.C * 9; i++) W[i] = frand();
    for (int64_t i = 0; i < w.M; i++) bias[i] = frand();
    for (int64_t i = 0; i < ny; i++) R[i] = frand();
    const int hb = (int)irand(0, 1), hr = (int)irand(0, 1), act = (int)(iter % 5);
    float *U = transformed(w.M, w.C, W);
    /* the workspace the compiler allocates for 8 threads, canaries after it */
    const size_t wsb = cgen_cpu_wino_workspace(w.N, w.C, w.M, w.OH, w.OW, 8);
    float *ws = malloc(wsb + sizeof(float) * GUARD);
    fill_canary(ws + wsb / sizeof(float), GUARD);
    w.X = X, w.U = U, w.bias = hb ? bias : 0, w.res = hr ? R : 0;
    w.act = act, w.lo = -0.5f, w.hi = 0.75f, w.ws = ws, w.max_slots = 8;
    double *want = malloc(sizeof(double) * (size_t)ny), *mag = malloc(sizeof(double) * (size_t)ny);
    reference(&w, W, want, mag);
    char what[200];
    snprintf(what, sizeof what, "wino N%lld C%lld M%lld %lldx%lld -> %lldx%lld pt%lld pl%lld b%d r%d act%d",
             (long long)w.N, (long long)w.C, (long long)w.M, (long long)w.H, (long long)w.W, (long long)w.OH,
             (long long)w.OW, (long long)w.pt, (long long)w.pl, hb, hr, act);
    float *Y0 = malloc(sizeof(float) * (size_t)(ny + 2 * GUARD));
    float *Y1 = malloc(sizeof(float) * (size_t)(ny + 2 * GUARD));
    fill_canary(Y0, ny + 2 * GUARD);
    w.Y = Y0 + GUARD;
    gcrt_wino_conv_f32(&w, NULL);
    if (!canary_ok(Y0, GUARD) || !canary_ok(Y0 + GUARD + ny, GUARD)) {
        printf("FAIL %s: wrote outside Y\n", what);
        failures++;
    }
    for (int64_t i = 0; i < ny; i++) {
        const double got = (double)Y0[GUARD + i], err = fabs(got - want[i]);
        const double tol = 2e-5 * mag[i] + 1e-6 * fabs(want[i]) + 1e-30;
        if (err / tol > worst_ratio) worst_ratio = err / tol;
        if (!(err <= tol)) {
            printf("FAIL %s: element %lld got %.9g want %.9g (tol %.3g)\n", what, (long long)i, got, want[i], tol);
            failures++;
            break;
        }
    }
    for (int k = 2; k <= 9; k += iter % 2 ? 2 : 3) {
        GcThreadPool fake = {k, rev_for, 0}, real = gc_pthread_pool_get(threads3);
        fill_canary(Y1, ny + 2 * GUARD);
        w.Y = Y1 + GUARD;
        gcrt_wino_conv_f32(&w, k == 9 ? &real : &fake);
        if (memcmp(Y0, Y1, sizeof(float) * (size_t)(ny + 2 * GUARD))) {
            printf("FAIL %s: %d tasks differ from one\n", what, k == 9 ? 3 : k);
            failures++;
            break;
        }
    }
    if (!canary_ok(ws + wsb / sizeof(float), GUARD)) {
        printf("FAIL %s: a task used a slot past the workspace of %zu bytes\n", what, wsb);
        failures++;
    }
    free(X), free(W), free(bias), free(R), free(U), free(ws), free(want), free(mag), free(Y0), free(Y1);
}

/* A NaN in X turns the outputs of its tiles into NaN, and Relu and Clip
 * keep it NaN (gcrt_cpu.c's epilogue semantics). */
static void test_nan(void)
{
    GcrtWino w;
    memset(&w, 0, sizeof w);
    w.N = 1, w.C = 3, w.M = 5, w.H = w.W = w.OH = w.OW = 9, w.pt = w.pl = 1;
    float X[3 * 81], W[5 * 3 * 9], Y[5 * 81];
    for (int i = 0; i < 3 * 81; i++) X[i] = frand();
    for (int i = 0; i < 5 * 27; i++) W[i] = frand();
    X[81 + 4 * 9 + 4] = NAN; /* channel 1, (4, 4) */
    float *U = transformed(w.M, w.C, W), *ws = malloc(sizeof(float) * (size_t)GCRT_WINO_SLOT_FLOATS(5, 3));
    w.X = X, w.U = U, w.ws = ws, w.max_slots = 1, w.Y = Y, w.lo = -0.5f, w.hi = 0.5f;
    for (int act = GCRT_ACT_RELU; act <= GCRT_ACT_CLIP; act++) {
        w.act = act;
        gcrt_wino_conv_f32(&w, NULL);
        for (int m = 0; m < 5; m++)
            if (!isnan(Y[m * 81 + 4 * 9 + 4]) || !isnan(Y[m * 81 + 3 * 9 + 5])) {
                printf("FAIL nan: act %d channel %d lost the NaN\n", act, m);
                failures++;
                break;
            }
    }
    free(U), free(ws);
}

/* ResNet-sized layers, N = 1, pad 1: the largest error against the output's
 * RMS (printed: the numbers the header quotes), beside the direct GEMM's. */
static void test_accuracy(int64_t C, int64_t HW)
{
    const int64_t K = 9 * C, M = C, n = C * HW * HW;
    const float sc = (float)(1.0 / sqrt((double)K));
    GcrtWino w;
    memset(&w, 0, sizeof w);
    w.N = 1, w.C = C, w.M = M, w.H = w.W = w.OH = w.OW = HW, w.pt = w.pl = 1;
    float *X = malloc(sizeof(float) * (size_t)n), *W = malloc(sizeof(float) * (size_t)(M * K));
    for (int64_t i = 0; i < n; i++) X[i] = frand() * sc;
    for (int64_t i = 0; i < M * K; i++) W[i] = frand() * sc;
    float *U = transformed(M, C, W);
    float *ws = malloc(sizeof(float) * (size_t)GCRT_WINO_SLOT_FLOATS(M, C));
    float *Y = malloc(sizeof(float) * (size_t)n), *Yd = malloc(sizeof(float) * (size_t)n);
    w.X = X, w.U = U, w.Y = Y, w.ws = ws, w.max_slots = 1;
    gcrt_wino_conv_f32(&w, NULL);
    GcrtConv cv;
    memset(&cv, 0, sizeof cv);
    cv.N = 1, cv.C = C, cv.H = cv.W = cv.OH = cv.OW = HW, cv.M = M, cv.G = 1, cv.KH = cv.KW = 3;
    cv.sh = cv.sw = cv.dh = cv.dw = 1, cv.pt = cv.pl = 1;
    float *cws = malloc(sizeof(float) * (size_t)GCRT_CONV_SLOT_FLOATS(C, 3, 3));
    cv.X = X, cv.Wt = W, cv.Y = Yd, cv.ws = cws, cv.max_slots = 1;
    gcrt_conv_gemm_f32(&cv, NULL);
    double *want = malloc(sizeof(double) * (size_t)n), *mag = malloc(sizeof(double) * (size_t)n);
    reference(&w, W, want, mag);
    double ss = 0, ew = 0, ed = 0, ew2 = 0;
    for (int64_t i = 0; i < n; i++) {
        ss += want[i] * want[i];
        const double e = fabs((double)Y[i] - want[i]), d = fabs((double)Yd[i] - want[i]);
        ew = e > ew ? e : ew, ed = d > ed ? d : ed, ew2 += e * e;
    }
    const double rms = sqrt(ss / (double)n);
    printf("accuracy C=M=%lld %lldx%lld (K=%lld): winograd max error %.2e, rms error %.2e; direct max error %.2e "
           "(of the output rms %.3g)\n",
           (long long)C, (long long)HW, (long long)HW, (long long)K, ew / rms, sqrt(ew2 / (double)n) / rms, ed / rms,
           rms);
    if (!(ew <= 1e-4 * rms)) {
        printf("FAIL accuracy C=%lld: max error %.3g of the rms\n", (long long)C, ew / rms);
        failures++;
    }
    free(X), free(W), free(U), free(ws), free(Y), free(Yd), free(cws), free(want), free(mag);
}

int main(void)
{
    threads3 = gc_pthread_pool_start(3);
    if (!threads3) {
        printf("FAIL: no pthread pool\n");
        return 1;
    }
    for (int i = 0; i < 60; i++) test_pack_identity(i);
    for (int i = 0; i < 300; i++) test_conv(i);
    test_nan();
    test_accuracy(64, 20);
    test_accuracy(256, 14);
    test_accuracy(512, 7);
    gc_pthread_pool_stop(threads3);
    printf("%s (%d failures; %d-lane transforms, micro-kernel %d x %d, narrow kernels up to %d tiles; worst error "
           "%.2f of the tolerance)\n",
           failures ? "FAILED" : "ok", failures, GCRT_WINO_WV, GCRT_MR, GCRT_PACK_NR, GCRT_WINO_NARROW, worst_ratio);
    return failures != 0;
}
