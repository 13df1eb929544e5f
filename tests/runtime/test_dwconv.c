/* test_dwconv.c — the fast depthwise convolution (runtime/cpu/gcrt_dwconv.c)
 * against a direct double-precision reference, and the bundled pthread pool
 * (runtime/cpu/gc_thread_pool.c) through it.
 *
 * A plain C program (no framework): it includes the runtime sources the way
 * generated code does, runs gcrt_dwconv2d_f32 over many random geometries
 * (kernels 1..5 and 7, strides 1..3, dilations 1..2, pads 0..3 on every
 * side, images 1..40 and some wider, every epilogue combination, epi NULL)
 * plus the MobileNet-style shapes the kernel is specialized for (also with
 * many channels on small maps, odd sizes and uneven pads) and a few
 * degenerate ones (1x1 and 2x2 images, windows entirely in padding, pads
 * far wider than the image), and
 * checks each output within 1e-5 (absolute + relative) of the reference,
 * that nothing outside Y is written, and that the pool at 1, 2, 3 and 8
 * threads gives exactly the serial bits. Then the fused depthwise + 1x1
 * conv (gcrt_dwconv_pw_f32) against the two unfused kernels, bit for bit,
 * serial and on every pool, with the two buffers it may write (the depthwise
 * output's, used as its slots, and Y) guarded by canaries and nothing else
 * writable to it; and the fused 1x1 + depthwise conv (gcrt_pw_dwconv_f32) the
 * same way, its two writable buffers the 1x1 output's (its slots) and Y.
 * Exits non-zero on any failure, printing what failed.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

/* every kernel call splits over the pool, however small (gcrt_pool_for) */
#define GCRT_PAR_MIN_WORK 0
#include "gc_thread_pool.c"
#include "gcrt_cpu.c"
#include "gcrt_dwconv.c"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GUARD 40 /* floats of canary on each side of Y */

typedef struct Case {
    int64_t N, C, H, W, KH, KW, sh, sw, dh, dw, pt, pl, pb, pr, OH, OW;
    int epi_mode; /* 0: epi NULL; else 1 + bias(2) * res(2) * act(3) */
} Case;

static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static uint64_t rng_next(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545f4914f6cdd1du;
}

/* Uniform in [lo, hi]. */
static int64_t rng_int(int64_t lo, int64_t hi)
{
    return lo + (int64_t)(rng_next() % (uint64_t)(hi - lo + 1));
}

/* Uniform in [-1, 1). */
static float rng_float(void)
{
    return (float)(rng_next() >> 40) / 8388608.0f - 1.0f;
}

static int n_fail;
static int n_checked;

static void fill(float *p, int64_t n)
{
    int64_t i;
    for (i = 0; i < n; i++) p[i] = rng_float();
}

static void describe(const Case *c)
{
    fprintf(stderr,
            "  case N=%lld C=%lld H=%lld W=%lld K=%lldx%lld s=%lld,%lld d=%lld,%lld pads t%lld l%lld b%lld r%lld"
            " -> OH=%lld OW=%lld epi_mode=%d\n",
            (long long)c->N, (long long)c->C, (long long)c->H, (long long)c->W, (long long)c->KH,
            (long long)c->KW, (long long)c->sh, (long long)c->sw, (long long)c->dh, (long long)c->dw,
            (long long)c->pt, (long long)c->pl, (long long)c->pb, (long long)c->pr, (long long)c->OH,
            (long long)c->OW, c->epi_mode);
}

/* Direct reference in double: act(sum of taps inside the image + bias + res). */
static void reference(const Case *c, const float *X, const float *Wt, const GcrtEpi *epi, double *R)
{
    int64_t n, ch, oh, ow, kh, kw;
    for (n = 0; n < c->N; n++)
        for (ch = 0; ch < c->C; ch++)
            for (oh = 0; oh < c->OH; oh++)
                for (ow = 0; ow < c->OW; ow++) {
                    int64_t q = n * c->C + ch, o = (q * c->OH + oh) * c->OW + ow;
                    double acc = 0.0;
                    for (kh = 0; kh < c->KH; kh++)
                        for (kw = 0; kw < c->KW; kw++) {
                            int64_t ih = oh * c->sh - c->pt + kh * c->dh, iw = ow * c->sw - c->pl + kw * c->dw;
                            if (ih < 0 || ih >= c->H || iw < 0 || iw >= c->W) continue;
                            acc += (double)Wt[(ch * c->KH + kh) * c->KW + kw] * (double)X[(q * c->H + ih) * c->W + iw];
                        }
                    if (epi && epi->bias) acc += (double)epi->bias[ch];
                    if (epi && epi->res) acc += (double)epi->res[o];
                    if (epi && (epi->act == GCRT_ACT_RELU || epi->act == GCRT_ACT_CLIP)) {
                        double lo = epi->act == GCRT_ACT_RELU ? 0.0 : (double)epi->lo;
                        if (acc < lo) acc = lo;
                        if (epi->act == GCRT_ACT_CLIP && acc > (double)epi->hi) acc = (double)epi->hi;
                    }
                    R[o] = acc;
                }
}

static const uint32_t canary_bits = 0x7fc0beefu;

static void set_canary(float *buf, int64_t n)
{
    int64_t i;
    float v;
    memcpy(&v, &canary_bits, sizeof v);
    for (i = 0; i < GUARD; i++) buf[i] = buf[GUARD + n + i] = v;
}

static int canary_ok(const float *buf, int64_t n)
{
    int64_t i;
    for (i = 0; i < GUARD; i++) {
        uint32_t a, b;
        memcpy(&a, &buf[i], sizeof a);
        memcpy(&b, &buf[GUARD + n + i], sizeof b);
        if (a != canary_bits || b != canary_bits) return 0;
    }
    return 1;
}

static GcPthreadPool *pools[4];
static const int pool_threads[4] = {1, 2, 3, 8};

/* Runs one case; check_threads: also compare the pools' results bit for bit. */
static void run_case(const Case *c, int check_threads)
{
    int64_t nx = c->N * c->C * c->H * c->W, nw = c->C * c->KH * c->KW, ny = c->N * c->C * c->OH * c->OW, i;
    float *X = (float *)malloc((size_t)(nx > 0 ? nx : 1) * sizeof(float));
    float *Wt = (float *)malloc((size_t)nw * sizeof(float));
    float *B = (float *)malloc((size_t)c->C * sizeof(float));
    float *Res = (float *)malloc((size_t)ny * sizeof(float));
    float *Y = (float *)malloc((size_t)(ny + 2 * GUARD) * sizeof(float));
    float *Y2 = (float *)malloc((size_t)(ny + 2 * GUARD) * sizeof(float));
    double *R = (double *)malloc((size_t)ny * sizeof(double));
    GcrtEpi epi;
    const GcrtEpi *ep = NULL;
    int p, reported = 0;
    if (!X || !Wt || !B || !Res || !Y || !Y2 || !R) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    fill(X, nx);
    fill(Wt, nw);
    fill(B, c->C);
    fill(Res, ny);
    if (c->epi_mode > 0) {
        int m = c->epi_mode - 1;
        epi.bias = (m & 1) ? B : NULL;
        epi.res = (m & 2) ? Res : NULL;
        epi.act = m / 4 == 0 ? GCRT_ACT_NONE : m / 4 == 1 ? GCRT_ACT_RELU : GCRT_ACT_CLIP;
        epi.lo = -0.5f;
        epi.hi = 0.75f;
        if (epi.act == GCRT_ACT_RELU) epi.lo = epi.hi = 123.0f; /* relu ignores them */
        ep = &epi;
    }
    reference(c, X, Wt, ep, R);
    set_canary(Y, ny);
    gcrt_dwconv2d_f32(c->N, c->C, c->H, c->W, c->OH, c->OW, c->KH, c->KW, c->sh, c->sw, c->dh, c->dw, c->pt,
                      c->pl, X, Wt, ep, Y + GUARD, NULL);
    n_checked++;
    if (!canary_ok(Y, ny)) {
        fprintf(stderr, "FAIL: wrote outside Y\n");
        describe(c);
        n_fail++;
        reported = 1;
    }
    for (i = 0; i < ny && !reported; i++) {
        double got = (double)Y[GUARD + i], want = R[i];
        if (!(fabs(got - want) <= 1e-5 + 1e-5 * fabs(want))) {
            int64_t ow = i % c->OW, oh = i / c->OW % c->OH, q = i / (c->OW * c->OH);
            fprintf(stderr, "FAIL: Y[plane %lld, row %lld, col %lld] = %.9g, reference %.9g\n", (long long)q,
                    (long long)oh, (long long)ow, got, want);
            describe(c);
            n_fail++;
            reported = 1;
        }
    }
    for (p = 0; p < 4 && check_threads && !reported; p++) {
        GcThreadPool tp = gc_pthread_pool_get(pools[p]);
        set_canary(Y2, ny);
        gcrt_dwconv2d_f32(c->N, c->C, c->H, c->W, c->OH, c->OW, c->KH, c->KW, c->sh, c->sw, c->dh, c->dw,
                          c->pt, c->pl, X, Wt, ep, Y2 + GUARD, &tp);
        if (!canary_ok(Y2, ny) || memcmp(Y + GUARD, Y2 + GUARD, (size_t)ny * sizeof(float)) != 0) {
            fprintf(stderr, "FAIL: %d threads differ from the serial result (or wrote outside Y)\n",
                    pool_threads[p]);
            describe(c);
            n_fail++;
            reported = 1;
        }
    }
    free(X);
    free(Wt);
    free(B);
    free(Res);
    free(Y);
    free(Y2);
    free(R);
}

static void test_count_task(void *arg, int64_t t)
{
    ((int64_t *)arg)[t]++;
}

/* A task of the nested-call check: runs a job of 8 tasks on the same pool. */
typedef struct Nested {
    GcThreadPool tp;
    int64_t hits[8][8];
} Nested;

static void test_nested_task(void *arg, int64_t t)
{
    Nested *n = (Nested *)arg;
    n->tp.parallel_for(n->tp.ctx, 8, test_count_task, n->hits[t]);
}

/* Sets OH/OW from the pads; 0 when the output would be empty. */
static int finish_case(Case *c)
{
    int64_t eh = c->H + c->pt + c->pb - c->dh * (c->KH - 1) - 1, ew = c->W + c->pl + c->pr - c->dw * (c->KW - 1) - 1;
    if (eh < 0 || ew < 0) return 0;
    c->OH = eh / c->sh + 1;
    c->OW = ew / c->sw + 1;
    return 1;
}

static int64_t rng_kernel(void)
{
    static const int64_t ks[6] = {1, 2, 3, 4, 5, 7};
    return ks[rng_int(0, 5)];
}

static void random_case(Case *c, int64_t max_hw, int64_t max_c)
{
    do {
        c->N = rng_int(1, 2);
        c->C = rng_int(1, max_c);
        c->H = rng_int(1, max_hw);
        c->W = rng_int(1, max_hw);
        c->KH = rng_kernel();
        c->KW = rng_int(0, 2) ? c->KH : rng_kernel();
        c->sh = rng_int(1, 3);
        c->sw = rng_int(0, 2) ? c->sh : rng_int(1, 3);
        c->dh = rng_int(1, 2);
        c->dw = rng_int(0, 2) ? c->dh : rng_int(1, 2);
        c->pt = rng_int(0, 3);
        c->pl = rng_int(0, 3);
        c->pb = rng_int(0, 3);
        c->pr = rng_int(0, 3);
        c->epi_mode = (int)rng_int(0, 12);
    } while (!finish_case(c));
}

/* A square "same"-style case: K x K, pad p on every side. */
static void square_case(Case *c, int64_t N, int64_t C, int64_t HW, int64_t K, int64_t s, int64_t d, int64_t p, int epi)
{
    c->N = N;
    c->C = C;
    c->H = c->W = HW;
    c->KH = c->KW = K;
    c->sh = c->sw = s;
    c->dh = c->dw = d;
    c->pt = c->pl = c->pb = c->pr = p;
    c->epi_mode = epi;
    if (!finish_case(c)) {
        fprintf(stderr, "bad fixed case\n");
        exit(2);
    }
}

/* ---- the fused depthwise + 1x1 conv ---- */

/* W [M, K] as gcrt_cpu.h's W^T panels: 32 output channels a panel, k-major, zero-padded. */
static float *pack_wt(const float *W, int64_t M, int64_t K)
{
    const int64_t mp = (M + GCRT_PACK_NR - 1) / GCRT_PACK_NR * GCRT_PACK_NR;
    float *p = (float *)calloc((size_t)(mp * K), sizeof(float));
    int64_t m, k;
    if (!p) exit(2);
    for (m = 0; m < M; m++)
        for (k = 0; k < K; k++) p[m / GCRT_PACK_NR * GCRT_PACK_NR * K + k * GCRT_PACK_NR + m % GCRT_PACK_NR] = W[m * K + k];
    return p;
}

/* A depthwise conv (c: N == 1, dilation 1, no residual; epi_mode 1 + bias * act as in run_case)
 * and a 1x1 conv of its C channels to M (pw_mode: bit 0 bias, bit 1 residual, act = pw_mode / 4):
 * gcrt_dwconv_pw_f32 equals gcrt_dwconv2d_f32 then gcrt_conv_gemm_f32 bit for bit, at every
 * thread count, and writes only into Y and the depthwise output's buffer. */
static void run_dwpw_case(const Case *c, int64_t M, int pw_mode)
{
    const int64_t C = c->C, P = c->OH * c->OW, nx = C * c->H * c->W, nd = C * P, ny = M * P;
    float *X = (float *)malloc((size_t)nx * sizeof(float)), *Wd = (float *)malloc((size_t)(C * c->KH * c->KW) * sizeof(float));
    float *Bd = (float *)malloc((size_t)C * sizeof(float)), *Wp = (float *)malloc((size_t)(M * C) * sizeof(float));
    float *Bp = (float *)malloc((size_t)M * sizeof(float)), *Res = (float *)malloc((size_t)ny * sizeof(float));
    float *D = (float *)malloc((size_t)nd * sizeof(float)), *Y = (float *)malloc((size_t)ny * sizeof(float));
    float *Dws = (float *)malloc((size_t)(nd + 2 * GUARD) * sizeof(float));
    float *Y2 = (float *)malloc((size_t)(ny + 2 * GUARD) * sizeof(float));
    float *Wt;
    GcrtEpi de;
    GcrtConv pw;
    int p, m = c->epi_mode - 1;
    if (!X || !Wd || !Bd || !Wp || !Bp || !Res || !D || !Y || !Dws || !Y2) exit(2);
    fill(X, nx);
    fill(Wd, C * c->KH * c->KW);
    fill(Bd, C);
    fill(Wp, M * C);
    fill(Bp, M);
    fill(Res, ny);
    Wt = pack_wt(Wp, M, C);
    de.bias = (m & 1) ? Bd : NULL;
    de.res = NULL;
    de.act = m / 4 == 0 ? GCRT_ACT_NONE : m / 4 == 1 ? GCRT_ACT_RELU : GCRT_ACT_CLIP;
    de.lo = -0.5f;
    de.hi = 0.75f;
    memset(&pw, 0, sizeof pw);
    pw.N = 1;
    pw.C = C;
    pw.H = pw.OH = c->OH;
    pw.W = pw.OW = c->OW;
    pw.M = M;
    pw.G = pw.KH = pw.KW = pw.sh = pw.sw = pw.dh = pw.dw = 1;
    pw.Wt = Wt;
    pw.w_packed = pw.w_trans = 1;
    pw.bias = (pw_mode & 1) ? Bp : NULL;
    pw.res = (pw_mode & 2) ? Res : NULL;
    pw.act = pw_mode / 4 == 0 ? GCRT_ACT_NONE : pw_mode / 4 == 1 ? GCRT_ACT_RELU : GCRT_ACT_CLIP;
    pw.lo = -0.25f;
    pw.hi = 0.5f;
    pw.max_slots = 1;
    /* unfused, serially */
    gcrt_dwconv2d_f32(1, C, c->H, c->W, c->OH, c->OW, c->KH, c->KW, c->sh, c->sw, 1, 1, c->pt, c->pl, X, Wd, &de, D,
                      NULL);
    pw.X = D;
    pw.Y = Y;
    gcrt_conv_gemm_f32(&pw, NULL);
    /* fused: serially (max_slots 1), then on every pool with as many slots as its threads */
    for (p = -1; p < 4; p++) {
        GcThreadPool tp;
        if (p >= 0) tp = gc_pthread_pool_get(pools[p]);
        set_canary(Dws, nd);
        set_canary(Y2, ny);
        pw.X = Dws + GUARD; /* not read */
        pw.ws = Dws + GUARD;
        pw.Y = Y2 + GUARD;
        pw.max_slots = p < 0 ? 1 : pool_threads[p];
        gcrt_dwconv_pw_f32(C, c->H, c->W, c->OH, c->OW, c->KH, c->KW, c->sh, c->sw, c->pt, c->pl, X, Wd, &de, &pw,
                           p < 0 ? NULL : &tp);
        n_checked++;
        if (!canary_ok(Dws, nd) || !canary_ok(Y2, ny) || memcmp(Y, Y2 + GUARD, (size_t)ny * sizeof(float)) != 0) {
            fprintf(stderr, "FAIL: gcrt_dwconv_pw_f32 at %d threads (M %lld, pw mode %d) differs from the unfused "
                    "kernels (or wrote outside its buffers)\n", p < 0 ? 1 : pool_threads[p], (long long)M, pw_mode);
            describe(c);
            n_fail++;
            break;
        }
    }
    free(X);
    free(Wd);
    free(Bd);
    free(Wp);
    free(Bp);
    free(Res);
    free(D);
    free(Y);
    free(Dws);
    free(Y2);
    free(Wt);
}

/* W [M, K] row-major packed in 8-row panels (GCRT_PACK_MR, gcrt_cpu.h's w_packed layout): panel i holds rows
 * 8i..8i+7, element (m, k) at panel start + k * 8 + m % 8, rows past M zero. */
static float *pack_a8(const float *W, int64_t M, int64_t K)
{
    const int64_t mpad = (M + GCRT_PACK_MR - 1) / GCRT_PACK_MR * GCRT_PACK_MR;
    float *A = (float *)calloc((size_t)(mpad * K), sizeof(float));
    int64_t m, k;
    if (!A) exit(2);
    for (m = 0; m < M; m++)
        for (k = 0; k < K; k++) A[m / GCRT_PACK_MR * GCRT_PACK_MR * K + k * GCRT_PACK_MR + m % GCRT_PACK_MR] = W[m * K + k];
    return A;
}

/* A 1x1 conv of Cin channels to c->C (pw_mode: bit 0 bias, act = pw_mode / 2; W in 8-row panels) and the
 * depthwise conv c (N == 1, dilation 1; epi_mode as in run_case, the residual too): gcrt_pw_dwconv_f32
 * equals gcrt_conv_gemm_f32 then gcrt_dwconv2d_f32 bit for bit, serially and on every pool with as
 * many slots as its threads and the 1x1 output's buffer holds (at most), and writes only into Y and
 * that buffer. */
static void run_pwdw_case(const Case *c, int64_t Cin, int pw_mode)
{
    const int64_t C = c->C, HW = c->H * c->W, nx = Cin * HW, ne = C * HW, ny = C * c->OH * c->OW;
    const int64_t srows = GCRT_PWDW_SLOT_ROWS(c->KH, c->sh) < c->H ? GCRT_PWDW_SLOT_ROWS(c->KH, c->sh) : c->H;
    float *X = (float *)malloc((size_t)nx * sizeof(float)), *Wp = (float *)malloc((size_t)(C * Cin) * sizeof(float));
    float *Bp = (float *)malloc((size_t)C * sizeof(float)), *Wd = (float *)malloc((size_t)(C * c->KH * c->KW) * sizeof(float));
    float *Bd = (float *)malloc((size_t)C * sizeof(float)), *Res = (float *)malloc((size_t)ny * sizeof(float));
    float *E = (float *)malloc((size_t)ne * sizeof(float)), *D = (float *)malloc((size_t)ny * sizeof(float));
    float *Ews = (float *)malloc((size_t)(ne + 2 * GUARD) * sizeof(float));
    float *Y2 = (float *)malloc((size_t)(ny + 2 * GUARD) * sizeof(float));
    float *Wa;
    GcrtEpi de;
    GcrtConv pw;
    int p, m = c->epi_mode - 1;
    if (!X || !Wp || !Bp || !Wd || !Bd || !Res || !E || !D || !Ews || !Y2) exit(2);
    fill(X, nx);
    fill(Wp, C * Cin);
    fill(Bp, C);
    fill(Wd, C * c->KH * c->KW);
    fill(Bd, C);
    fill(Res, ny);
    Wa = pack_a8(Wp, C, Cin);
    de.bias = (m & 1) ? Bd : NULL;
    de.res = (m & 2) ? Res : NULL;
    de.act = m / 4 == 0 ? GCRT_ACT_NONE : m / 4 == 1 ? GCRT_ACT_RELU : GCRT_ACT_CLIP;
    de.lo = -0.5f;
    de.hi = 0.75f;
    memset(&pw, 0, sizeof pw);
    pw.N = 1;
    pw.C = Cin;
    pw.H = pw.OH = c->H;
    pw.W = pw.OW = c->W;
    pw.M = C;
    pw.G = pw.KH = pw.KW = pw.sh = pw.sw = pw.dh = pw.dw = 1;
    pw.X = X;
    pw.Wt = Wa;
    pw.w_packed = 1;
    pw.bias = (pw_mode & 1) ? Bp : NULL;
    pw.act = pw_mode / 2 == 0 ? GCRT_ACT_NONE : pw_mode / 2 == 1 ? GCRT_ACT_RELU : GCRT_ACT_CLIP;
    pw.lo = -0.25f;
    pw.hi = 0.5f;
    pw.max_slots = 1;
    /* unfused, serially */
    pw.Y = E;
    gcrt_conv_gemm_f32(&pw, NULL);
    gcrt_dwconv2d_f32(1, C, c->H, c->W, c->OH, c->OW, c->KH, c->KW, c->sh, c->sw, 1, 1, c->pt, c->pl, E, Wd, &de, D,
                      NULL);
    /* fused: serially (one slot), then on every pool */
    for (p = -1; p < 4; p++) {
        GcThreadPool tp;
        int slots = p < 0 ? 1 : pool_threads[p];
        if (slots > c->H / srows) slots = (int)(c->H / srows);
        if (p >= 0) tp = gc_pthread_pool_get(pools[p]);
        set_canary(Ews, ne);
        set_canary(Y2, ny);
        pw.ws = Ews + GUARD;
        pw.Y = Ews + GUARD; /* not written */
        pw.max_slots = slots;
        if (slots < 1 || slots * srows > c->H) {
            fprintf(stderr, "FAIL: the test gave %d slots of %lld rows to a map of %lld\n", slots, (long long)srows,
                    (long long)c->H);
            n_fail++;
        }
        gcrt_pw_dwconv_f32(&pw, c->OH, c->OW, c->KH, c->KW, c->sh, c->sw, c->pt, c->pl, Wd, &de, Y2 + GUARD,
                           p < 0 ? NULL : &tp);
        n_checked++;
        if (!canary_ok(Ews, ne) || !canary_ok(Y2, ny) || memcmp(D, Y2 + GUARD, (size_t)ny * sizeof(float)) != 0) {
            fprintf(stderr, "FAIL: gcrt_pw_dwconv_f32 at %d threads, %d slots (Cin %lld, pw mode %d) differs from "
                    "the unfused kernels (or wrote outside its buffers)\n", p < 0 ? 1 : pool_threads[p], slots,
                    (long long)Cin, pw_mode);
            describe(c);
            n_fail++;
            break;
        }
    }
    free(X);
    free(Wp);
    free(Bp);
    free(Wd);
    free(Bd);
    free(Res);
    free(E);
    free(D);
    free(Ews);
    free(Y2);
    free(Wa);
}

int main(void)
{
    static const int64_t sizes[] = {112, 56, 28, 14, 7};
    Case c;
    int i, p, si, k, s, epi = 0;
    for (p = 0; p < 4; p++) {
        pools[p] = gc_pthread_pool_start(pool_threads[p]);
        if (!pools[p]) {
            fprintf(stderr, "FAIL: gc_pthread_pool_start(%d) returned NULL\n", pool_threads[p]);
            return 1;
        }
    }
    if (gc_pthread_pool_start(0) || gc_pthread_pool_start(GC_PTHREAD_POOL_MAX + 1)) {
        fprintf(stderr, "FAIL: gc_pthread_pool_start accepted an out-of-range thread count\n");
        n_fail++;
    }
    gc_pthread_pool_stop(NULL);

    /* the shapes the kernel is specialized for: 3x3 / 5x5, stride 1 / 2, pad 1 / 2 */
    for (si = 0; si < 5; si++)
        for (k = 3; k <= 5; k += 2)
            for (s = 1; s <= 2; s++) {
                square_case(&c, 1, 3, sizes[si], k, s, 1, k / 2, epi % 13);
                run_case(&c, 1);
                epi += 5;
            }
    /* many channels on small maps (the flat path: stride 1 with W == OW, stride 2 through the
     * phase planes; its tables are shared by all planes of a call and of a thread's range),
     * odd sizes, and 'same' pads split unevenly (all on the bottom/right, as TF pads stride 2) */
    {
        static const int64_t hw[] = {7, 14, 13, 15, 28, 5, 8, 16, 17, 4, 29, 56};
        int hi, pm;
        for (hi = 0; hi < (int)(sizeof hw / sizeof hw[0]); hi++)
            for (k = 3; k <= 5; k += 2)
                for (s = 1; s <= 2; s++)
                    for (pm = 0; pm < 3; pm++) {
                        square_case(&c, 1 + (hi & 1), hw[hi] <= 16 ? 70 : 9, hw[hi], k, s, 1, k / 2, epi % 13);
                        if (pm == 1) { /* all the padding at the bottom/right */
                            c.pt = c.pl = 0;
                            c.pb = c.pr = k - 1;
                        } else if (pm == 2) { /* uneven vertical pads: OH != H with W == OW */
                            c.pt = k / 2 + 1;
                            c.pb = k / 2 - 1;
                            c.pl = 0;
                            c.pr = k - 1;
                        }
                        if (!finish_case(&c)) continue;
                        run_case(&c, 1);
                        epi += 3;
                    }
    }
    /* dilated, and the epilogue combinations on one MobileNet-like shape */
    square_case(&c, 2, 5, 30, 3, 1, 2, 2, 4);
    run_case(&c, 1);
    for (epi = 0; epi < 13; epi++) {
        square_case(&c, 1, 2, 37, 3, 2, 1, 1, epi);
        run_case(&c, 1);
    }
    /* degenerate: 1x1 and 2x2 images, windows all in padding, kernels wider than the image */
    square_case(&c, 2, 3, 1, 3, 1, 1, 1, 3);
    run_case(&c, 1);
    square_case(&c, 1, 4, 2, 3, 2, 1, 1, 12);
    run_case(&c, 1);
    square_case(&c, 1, 2, 2, 7, 1, 1, 3, 7);
    run_case(&c, 1);
    square_case(&c, 1, 2, 3, 1, 1, 1, 3, 11);
    run_case(&c, 1);
    square_case(&c, 1, 70, 1, 3, 3, 2, 3, 2);
    run_case(&c, 1);
    /* pads much wider than the image: many border blocks (their masks precomputed, or not) */
    square_case(&c, 1, 3, 20, 3, 1, 1, 100, 6);
    run_case(&c, 1);
    square_case(&c, 1, 3, 30, 7, 2, 1, 120, 9);
    run_case(&c, 1);
    square_case(&c, 1, 2, 9, 5, 2, 2, 40, 1);
    run_case(&c, 1);

    /* random geometries, images up to 40 */
    for (i = 0; i < 1500; i++) {
        random_case(&c, 40, 40);
        run_case(&c, i % 3 == 0);
    }
    /* wider images with few channels: the interior (unmasked) blocks, both strides */
    for (i = 0; i < 60; i++) {
        random_case(&c, 140, 3);
        run_case(&c, i % 3 == 0);
    }

    /* the fused depthwise + 1x1 conv: MobileNetV2's 14x14 pairs (one at stride 2 from 28x28), channel
     * counts past one 32-channel panel and not a multiple of it, K past one 512-row block, maps whose
     * bands hold 256 positions or fewer rows than threads, wide rows (one row a band), every epilogue */
    {
        static const int64_t dp[][7] = {
            /* C, HW, K, stride, M, dw epi, pw mode */
            {384, 14, 3, 1, 64, 9, 3},  {192, 28, 3, 2, 64, 10, 1}, {576, 14, 3, 1, 96, 11, 2},
            {40, 14, 5, 1, 24, 4, 7},   {96, 17, 3, 2, 40, 2, 9},   {70, 3, 3, 1, 33, 9, 11},
            {8, 2, 3, 1, 5, 1, 0},      {24, 40, 3, 1, 16, 12, 10}, {16, 9, 5, 2, 70, 7, 4},
            {600, 7, 3, 1, 20, 10, 5},
        };
        int di;
        for (di = 0; di < (int)(sizeof dp / sizeof dp[0]); di++) {
            square_case(&c, 1, dp[di][0], dp[di][1], dp[di][2], dp[di][3], 1, dp[di][2] / 2, (int)dp[di][5]);
            run_dwpw_case(&c, dp[di][4], (int)dp[di][6]);
        }
        c.N = 1; /* a wide image: 300 positions a row, more than a band holds */
        c.C = 6;
        c.H = 5;
        c.W = 300;
        c.KH = c.KW = 3;
        c.sh = c.sw = 1;
        c.dh = c.dw = 1;
        c.pt = c.pl = c.pb = c.pr = 1;
        c.epi_mode = 9;
        if (finish_case(&c)) run_dwpw_case(&c, 9, 3);
    }

    /* the fused 1x1 + depthwise conv: MobileNetV2's pairs at 112x112 (stride 2) and 56x56 (strides 1
     * and 2), K past one 512-row block, 5x5 filters, odd maps and uneven pads (rows whose window lies
     * partly or wholly in padding), a map of one slot's rows, wide rows, every epilogue (the
     * depthwise conv's residual too) */
    {
        static const int64_t pd[][7] = {
            /* Cin, C, HW, K, stride, dw epi, pw mode */
            {16, 96, 112, 3, 2, 12, 5}, {24, 144, 56, 3, 1, 11, 4}, {24, 144, 56, 3, 2, 12, 5},
            {600, 20, 33, 3, 1, 4, 1},  {7, 40, 37, 5, 2, 8, 3},    {9, 17, 41, 5, 1, 2, 0},
            {3, 10, 19, 3, 1, 13, 2},   {12, 9, 9, 3, 2, 6, 1},     {5, 33, 64, 3, 1, 0, 4},
        };
        int di;
        for (di = 0; di < (int)(sizeof pd / sizeof pd[0]); di++) {
            square_case(&c, 1, pd[di][1], pd[di][2], pd[di][3], pd[di][4], 1, pd[di][3] / 2, (int)pd[di][5]);
            run_pwdw_case(&c, pd[di][0], (int)pd[di][6]);
            if (di % 3 == 1) { /* all the padding at the bottom/right, and more at the top */
                c.pt = c.pl = 0;
                c.pb = c.pr = c.KH - 1;
                if (finish_case(&c)) run_pwdw_case(&c, pd[di][0], (int)pd[di][6]);
                c.pt = c.pl = c.KH - 1;
                c.pb = c.pr = 0;
                if (finish_case(&c)) run_pwdw_case(&c, pd[di][0], (int)pd[di][6]);
            }
        }
        c.N = 1; /* a wide image */
        c.C = 6;
        c.H = 36;
        c.W = 300;
        c.KH = c.KW = 3;
        c.sh = c.sw = 2;
        c.dh = c.dw = 1;
        c.pt = c.pl = c.pb = c.pr = 1;
        c.epi_mode = 9;
        if (finish_case(&c)) run_pwdw_case(&c, 11, 3);
    }

    /* the pool on its own: many short jobs, and a nested call */
    for (p = 0; p < 4; p++) {
        GcThreadPool tp = gc_pthread_pool_get(pools[p]);
        int64_t hits[64];
        int rep;
        for (rep = 0; rep < 2000; rep++) {
            int64_t n = 1 + rep % 64, t;
            memset(hits, 0, sizeof hits);
            tp.parallel_for(tp.ctx, n, test_count_task, hits);
            for (t = 0; t < 64; t++)
                if (hits[t] != (t < n)) {
                    fprintf(stderr, "FAIL: pool of %d: job %d of %lld tasks ran task %lld %lld times\n",
                            pool_threads[p], rep, (long long)n, (long long)t, (long long)hits[t]);
                    n_fail++;
                    rep = 1 << 30;
                    break;
                }
        }
    }
    for (p = 0; p < 4; p++) {
        Nested nest;
        int a, b;
        memset(&nest, 0, sizeof nest);
        nest.tp = gc_pthread_pool_get(pools[p]);
        nest.tp.parallel_for(nest.tp.ctx, 8, test_nested_task, &nest);
        for (a = 0; a < 8; a++)
            for (b = 0; b < 8; b++)
                if (nest.hits[a][b] != 1) {
                    fprintf(stderr, "FAIL: pool of %d: nested job %d ran task %d %lld times\n", pool_threads[p], a,
                            b, (long long)nest.hits[a][b]);
                    n_fail++;
                    a = b = 8;
                }
    }
    for (p = 0; p < 4; p++) gc_pthread_pool_stop(pools[p]);

    printf("%d passed, %d failed\n", n_checked - n_fail, n_fail);
    return n_fail ? 1 : 0;
}
