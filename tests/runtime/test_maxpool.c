/* test_maxpool.c — the fast 2-D max pooling (runtime/cpu/gcrt_maxpool.c)
 * against a direct reference written here.
 *
 * A plain C program (no framework): it includes the runtime sources the way
 * generated code does and runs gcrt_maxpool2d_f32 over random geometries
 * (windows 1..7, strides 1..3, dilations 1..2, pads 0..3, images 1..40 and
 * some wider than the kernel's row buffer, ceil-mode outputs that reach
 * past the image, rows wholly in padding), ResNet's stem pool, and inputs
 * with NaN and -inf taps. Each output must equal the reference exactly:
 * the largest tap inside the image, NaN ignored, -inf when there is none
 * (a zero compares equal whatever its sign). Nothing outside Y may be
 * written, and the bundled pool at 2, 3 and 8 threads must give the serial
 * bits. Exits non-zero on any failure, printing what failed.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

/* every kernel call splits over the pool, however small (gcrt_pool_for) */
#define GCRT_PAR_MIN_WORK 0
#include "gc_thread_pool.c"
#include "gcrt_cpu.c"
#include "gcrt_maxpool.c"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GUARD 16

typedef struct Case {
    int64_t NC, H, W, KH, KW, sh, sw, dh, dw, pt, pl, OH, OW;
    int specials; /* 1: sprinkle NaN and -inf into X */
} Case;

static uint64_t rng_state = 0x243f6a8885a308d3u;

static uint64_t rng_next(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545f4914f6cdd1du;
}

static int64_t rng_int(int64_t lo, int64_t hi) { return lo + (int64_t)(rng_next() % (uint64_t)(hi - lo + 1)); }

static int n_fail, n_cases;
static GcPthreadPool *pools[3];
static const int pool_threads[3] = {2, 3, 8};

static void describe(const Case *c)
{
    fprintf(stderr, "  case NC=%lld H=%lld W=%lld K=%lldx%lld s=%lld,%lld d=%lld,%lld pads t%lld l%lld -> %lldx%lld specials=%d\n",
            (long long)c->NC, (long long)c->H, (long long)c->W, (long long)c->KH, (long long)c->KW, (long long)c->sh,
            (long long)c->sw, (long long)c->dh, (long long)c->dw, (long long)c->pt, (long long)c->pl, (long long)c->OH,
            (long long)c->OW, c->specials);
}

static void run_case(const Case *c)
{
    const int64_t nx = c->NC * c->H * c->W, ny = c->NC * c->OH * c->OW;
    float *X = malloc((size_t)(nx > 0 ? nx : 1) * sizeof(float));
    float *Y = malloc((size_t)(ny + 2 * GUARD) * sizeof(float)), *Y2 = malloc((size_t)(ny + 2 * GUARD) * sizeof(float));
    int64_t i, q, oh, ow, kh, kw, bad = 0;
    int p;
    if (!X || !Y || !Y2) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    n_cases++;
    for (i = 0; i < nx; i++) {
        const uint64_t r = rng_next();
        X[i] = (float)(int64_t)(r >> 44) / 1048576.0f - 0.5f; /* [-0.5, 0.5) */
        if (c->specials && r % 7 == 0) X[i] = NAN;
        if (c->specials && r % 11 == 0) X[i] = -INFINITY;
    }
    for (i = 0; i < ny + 2 * GUARD; i++) Y[i] = Y2[i] = 12345.0f;
    gcrt_maxpool2d_f32(c->NC, c->H, c->W, c->OH, c->OW, c->KH, c->KW, c->sh, c->sw, c->dh, c->dw, c->pt, c->pl, X, Y + GUARD, NULL);
    for (i = 0; i < GUARD; i++)
        if (Y[i] != 12345.0f || Y[GUARD + ny + i] != 12345.0f) bad = 1;
    if (bad) {
        fprintf(stderr, "FAIL: wrote outside Y\n");
        describe(c);
        n_fail++;
    }
    for (q = 0; q < c->NC; q++)
        for (oh = 0; oh < c->OH; oh++)
            for (ow = 0; ow < c->OW; ow++) {
                float want = -INFINITY, got = Y[GUARD + (q * c->OH + oh) * c->OW + ow];
                for (kh = 0; kh < c->KH; kh++)
                    for (kw = 0; kw < c->KW; kw++) {
                        const int64_t ih = oh * c->sh - c->pt + kh * c->dh, iw = ow * c->sw - c->pl + kw * c->dw;
                        if (ih >= 0 && ih < c->H && iw >= 0 && iw < c->W && X[(q * c->H + ih) * c->W + iw] > want)
                            want = X[(q * c->H + ih) * c->W + iw];
                    }
                if (!(got == want) && !bad) {
                    fprintf(stderr, "FAIL: plane %lld (%lld, %lld): got %g, want %g\n", (long long)q, (long long)oh,
                            (long long)ow, (double)got, (double)want);
                    describe(c);
                    n_fail++;
                    bad = 1;
                }
            }
    for (p = 0; p < 3 && !bad; p++) {
        GcThreadPool tp = gc_pthread_pool_get(pools[p]);
        gcrt_maxpool2d_f32(c->NC, c->H, c->W, c->OH, c->OW, c->KH, c->KW, c->sh, c->sw, c->dh, c->dw, c->pt, c->pl, X, Y2 + GUARD, &tp);
        if (memcmp(Y + GUARD, Y2 + GUARD, (size_t)ny * sizeof(float)) != 0) {
            fprintf(stderr, "FAIL: %d threads differ from the serial run\n", pool_threads[p]);
            describe(c);
            n_fail++;
            bad = 1;
        }
    }
    free(X);
    free(Y);
    free(Y2);
}

/* The output size for pads (pt, pb) and ceil mode as ONNX defines it (at least 1). */
static int64_t out_size(int64_t in, int64_t k, int64_t s, int64_t d, int64_t pa, int64_t pb, int ceil_mode)
{
    const int64_t span = in + pa + pb - ((k - 1) * d + 1);
    int64_t o = span < 0 ? 0 : (ceil_mode ? (span + s - 1) / s : span / s) + 1;
    if (ceil_mode && o > 0 && (o - 1) * s >= in + pa) o--; /* the last window must start inside the image or the top pad */
    return o;
}

int main(void)
{
    int p, t;
    for (p = 0; p < 3; p++) {
        pools[p] = gc_pthread_pool_start(pool_threads[p]);
        if (!pools[p]) {
            fprintf(stderr, "cannot start a pool of %d threads\n", pool_threads[p]);
            return 2;
        }
    }
    { /* ResNet's stem pool, and the same with NaN and -inf taps */
        Case c = {64, 112, 112, 3, 3, 2, 2, 1, 1, 1, 1, 56, 56, 0};
        run_case(&c);
        c.specials = 1;
        run_case(&c);
    }
    { /* rows wider than the row buffer, stride 1 and 2 */
        Case c = {3, 5, 2500, 3, 3, 1, 1, 1, 1, 1, 1, 5, 2500, 1};
        run_case(&c);
        Case d = {2, 4, 3001, 5, 4, 2, 2, 1, 1, 2, 1, 2, 1500, 0};
        run_case(&d);
    }
    { /* a window wider than the row buffer */
        Case c = {2, 3, 1200, 1, 1100, 1, 3, 1, 1, 0, 0, 3, 34, 0};
        run_case(&c);
    }
    for (t = 0; t < 1500; t++) {
        Case c;
        c.NC = rng_int(1, 70);
        c.H = rng_int(1, 40);
        c.W = t % 50 == 0 ? rng_int(100, 700) : rng_int(1, 40);
        c.KH = rng_int(1, 7);
        c.KW = rng_int(1, 7);
        c.sh = rng_int(1, 3);
        c.sw = rng_int(1, 3);
        c.dh = rng_int(1, 4) == 4 ? 2 : 1;
        c.dw = rng_int(1, 4) == 4 ? 2 : 1;
        c.pt = rng_int(0, 3);
        c.pl = rng_int(0, 3);
        if (c.pt >= c.KH) c.pt = c.KH - 1;
        if (c.pl >= c.KW) c.pl = c.KW - 1;
        c.OH = out_size(c.H, c.KH, c.sh, c.dh, c.pt, rng_int(0, 3), (int)(t & 1));
        c.OW = out_size(c.W, c.KW, c.sw, c.dw, c.pl, rng_int(0, 3), (int)(t & 1));
        c.specials = t % 3 == 0;
        if (c.OH <= 0 || c.OW <= 0) continue;
        run_case(&c);
    }
    for (p = 0; p < 3; p++) gc_pthread_pool_stop(pools[p]);
    if (n_fail) {
        fprintf(stderr, "%d of %d cases failed\n", n_fail, n_cases);
        return 1;
    }
    printf("maxpool: %d cases, every output exact, nothing outside Y written, 2/3/8 threads bit-identical\n", n_cases);
    return 0;
}
