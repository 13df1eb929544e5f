/* gcrt_maxpool.c — 2-D max pooling, f32, NCHW (see gcrt_maxpool.h).
 *
 * Tiles: whole planes, or blocks of output rows when there are fewer than
 * GCRT_MP_MIN_TILES planes, or, on a pool of T threads and planes of at
 * least GCRT_MP_SPLIT_ROWS output rows, at least T blocks of rows per plane,
 * taken block by block across the planes (as the depthwise convolution
 * does, so that thread i gets the rows the kernels around it give it); an
 * output never depends on the split. Each
 * output row is computed in two passes over a stack buffer v that stands
 * for a stretch of the padded input row, column i of v at input column
 * c0 + i:
 *   1. v[i] = the maximum over the window's rows that lie inside the image
 *      of X[row][c0 + i], or -inf where c0 + i is outside the row (the
 *      padding) or no window row is inside the image;
 *   2. y[ow] = the maximum over kw of v[(ow - ow0) * sw + kw * dw].
 * Pass 1 reads contiguous rows, pass 2 contiguous (stride 1) or
 * evenly strided buffer values, and neither tests a bound. A row wider
 * than the buffer is done in stretches of output columns.
 *
 * The maximum ignores NaN as the generic kernel's `x > best` does: the
 * SIMD max instructions return their second operand, the running
 * maximum, when either is NaN, and the running maximum starts at -inf and
 * never becomes NaN. Pass 1 takes the window's rows first, so where a
 * window holds both +0 and -0 the sign of the zero it returns may differ
 * from a row-major scan's; every other value is the same.
 *
 * Plain C99 plus intrinsics under the ISA macros (AVX-512F, AVX2; the
 * portable path is plain loops); no allocation, no I/O, no global state.
 * Include after gcrt_cpu.c (gcrt_parallel).
 */
#include "gcrt_maxpool.h"

#include <math.h>

#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
#include <immintrin.h>
#endif

/* Floats of the row buffer (plus GCRT_MP_SLACK readable -inf past its end for
 * the last vector); small for targets without SIMD (firmware stacks). */
#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
#define GCRT_MP_BUF 1024
#else
#define GCRT_MP_BUF 256
#endif
#define GCRT_MP_SLACK 32
#define GCRT_MP_MIN_TILES 64
/* Smaller planes are not cut for a pool's threads: they would write the two
 * ends of every plane's boundary cache lines (as gcrt_dwconv.c measured). */
#define GCRT_MP_SPLIT_ROWS 32

typedef struct GcrtMpArgs {
    int64_t H, W, OH, OW, KH, KW, sh, sw, dh, dw, pt, pl;
    int64_t NC;           /* planes */
    int64_t rows, blocks; /* output rows per tile, tiles per plane; tile t: block t / NC of plane t % NC */
    const float *X;
    float *Y;
} GcrtMpArgs;

/* max(a, b) ignoring a NaN a (b, the running maximum, is never NaN). */
static inline float gcrt_mp_max(float a, float b) { return a > b ? a : b; }

/* Pass 1: v[0, n) = column-wise maximum of the nr rows at x, x + rs, ... over input columns
 * [c, c + n) of a row of W columns; -inf outside the row. */
static void gcrt_mp_rows(float *v, const float *x, int64_t rs, int64_t nr, int64_t W, int64_t c, int64_t n)
{
    const float ninf = -INFINITY;
    int64_t lo = c < 0 ? -c : 0, hi = W - c < n ? W - c : n, i, r;
    if (lo > n) lo = n;
    if (hi < lo) hi = lo;
    for (i = 0; i < lo; i++) v[i] = ninf;
    for (i = hi; i < n; i++) v[i] = ninf;
    if (nr <= 0) {
        for (i = lo; i < hi; i++) v[i] = ninf;
        return;
    }
    i = lo; /* x[c + i] lies in the row for i in [lo, hi) */
#if defined(__AVX512F__)
    for (; i + 16 <= hi; i += 16) {
        __m512 m = _mm512_max_ps(_mm512_loadu_ps(x + c + i), _mm512_set1_ps(ninf)); /* a NaN tap gives -inf */
        for (r = 1; r < nr; r++) m = _mm512_max_ps(_mm512_loadu_ps(x + r * rs + c + i), m);
        _mm512_storeu_ps(v + i, m);
    }
#elif defined(__AVX2__) && defined(__FMA__)
    for (; i + 8 <= hi; i += 8) {
        __m256 m = _mm256_max_ps(_mm256_loadu_ps(x + c + i), _mm256_set1_ps(ninf));
        for (r = 1; r < nr; r++) m = _mm256_max_ps(_mm256_loadu_ps(x + r * rs + c + i), m);
        _mm256_storeu_ps(v + i, m);
    }
#endif
    for (; i < hi; i++) {
        float m = ninf;
        for (r = 0; r < nr; r++) m = gcrt_mp_max(x[r * rs + c + i], m);
        v[i] = m;
    }
}

/* Pass 2: y[0, n) = max over kw < KW of v[j * sw + kw * dw]. */
static void gcrt_mp_cols(float *y, const float *v, int64_t n, int64_t KW, int64_t sw, int64_t dw)
{
    int64_t j = 0, kw;
#if defined(__AVX512F__)
    if (sw == 1) {
        for (; j + 16 <= n; j += 16) {
            __m512 m = _mm512_loadu_ps(v + j);
            for (kw = 1; kw < KW; kw++) m = _mm512_max_ps(_mm512_loadu_ps(v + j + kw * dw), m);
            _mm512_storeu_ps(y + j, m);
        }
    } else if (sw == 2) {
        const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
        for (; j + 16 <= n; j += 16) {
            const float *p = v + 2 * j;
            __m512 m = _mm512_permutex2var_ps(_mm512_loadu_ps(p), even, _mm512_loadu_ps(p + 16));
            for (kw = 1; kw < KW; kw++)
                m = _mm512_max_ps(_mm512_permutex2var_ps(_mm512_loadu_ps(p + kw * dw), even, _mm512_loadu_ps(p + kw * dw + 16)), m);
            _mm512_storeu_ps(y + j, m);
        }
    }
#elif defined(__AVX2__) && defined(__FMA__)
    if (sw == 1) {
        for (; j + 8 <= n; j += 8) {
            __m256 m = _mm256_loadu_ps(v + j);
            for (kw = 1; kw < KW; kw++) m = _mm256_max_ps(_mm256_loadu_ps(v + j + kw * dw), m);
            _mm256_storeu_ps(y + j, m);
        }
    }
#endif
    for (; j < n; j++) {
        const float *p = v + j * sw;
        float m = p[0];
        for (kw = 1; kw < KW; kw++) m = gcrt_mp_max(p[kw * dw], m);
        y[j] = m;
    }
}

/* Tiles [t0, t1) of the call arg (a GcrtMpArgs). */
static void gcrt_mp_tiles(void *arg, int64_t t0, int64_t t1, int slot)
{
    const GcrtMpArgs *a = (const GcrtMpArgs *)arg;
    float v[GCRT_MP_BUF + GCRT_MP_SLACK];
    const int64_t reach = (a->KW - 1) * a->dw + 1; /* buffer columns one output reads */
    const int64_t chunk = reach <= GCRT_MP_BUF ? (GCRT_MP_BUF - reach) / a->sw + 1 : 0;
    int64_t t, i;
    (void)slot;
    for (i = 0; i < GCRT_MP_SLACK; i++) v[GCRT_MP_BUF + i] = -INFINITY;
    for (t = t0; t < t1; t++) {
        const int64_t q = t % a->NC, oh0 = t / a->NC * a->rows;
        const int64_t oh1 = oh0 + a->rows < a->OH ? oh0 + a->rows : a->OH;
        const float *x = a->X + q * a->H * a->W;
        int64_t oh;
        for (oh = oh0; oh < oh1; oh++) {
            float *y = a->Y + (q * a->OH + oh) * a->OW;
            const int64_t ih0 = oh * a->sh - a->pt;
            /* the window rows inside the image: kh in [k0, k1) */
            int64_t k0 = ih0 >= 0 ? 0 : (-ih0 + a->dh - 1) / a->dh, k1 = ih0 >= a->H ? 0 : (a->H - 1 - ih0) / a->dh + 1, ow;
            if (k1 > a->KH) k1 = a->KH;
            if (k0 > k1) k0 = k1;
            if (chunk == 0) { /* a window wider than the buffer: one output at a time */
                for (ow = 0; ow < a->OW; ow++) {
                    float m = -INFINITY;
                    int64_t kh, kw;
                    for (kh = k0; kh < k1; kh++)
                        for (kw = 0; kw < a->KW; kw++) {
                            const int64_t iw = ow * a->sw - a->pl + kw * a->dw;
                            if (iw >= 0 && iw < a->W) m = gcrt_mp_max(x[(ih0 + kh * a->dh) * a->W + iw], m);
                        }
                    y[ow] = m;
                }
                continue;
            }
            for (ow = 0; ow < a->OW; ow += chunk) {
                const int64_t n = a->OW - ow < chunk ? a->OW - ow : chunk;
                const int64_t c0 = ow * a->sw - a->pl, len = (n - 1) * a->sw + reach;
                gcrt_mp_rows(v, x + (k0 < k1 ? (ih0 + k0 * a->dh) * a->W : 0), a->dh * a->W, k1 - k0, a->W, c0, len);
                for (i = len; i < GCRT_MP_BUF && i < len + GCRT_MP_SLACK; i++) v[i] = -INFINITY;
                gcrt_mp_cols(y + ow, v, n, a->KW, a->sw, a->dw);
            }
        }
    }
}

/* See gcrt_maxpool.h. */
GCRT_FN void gcrt_maxpool2d_f32(int64_t NC, int64_t H, int64_t W, int64_t OH, int64_t OW, int64_t KH, int64_t KW,
                                int64_t sh, int64_t sw, int64_t dh, int64_t dw, int64_t pt, int64_t pl,
                                const float *X, float *Y, const GcThreadPool *pool)
{
    GcrtMpArgs a;
    int64_t threads;
    if (NC <= 0 || OH <= 0 || OW <= 0) return;
    /* a window tap costs about 4 of a GEMM's packed multiply-adds (as gcrt_dwconv2d_f32 counts) */
    pool = gcrt_pool_for(pool, gcrt_work(4, NC, OH * OW, KH * KW));
    threads = gcrt_pool_threads(pool);
    a.NC = NC;
    a.H = W > 0 ? H : 0;
    a.W = W;
    a.OH = OH;
    a.OW = OW;
    a.KH = KH;
    a.KW = KW;
    a.sh = sh;
    a.sw = sw;
    a.dh = dh;
    a.dw = dw;
    a.pt = pt;
    a.pl = pl;
    a.X = X;
    a.Y = Y;
    a.blocks = NC < GCRT_MP_MIN_TILES ? (GCRT_MP_MIN_TILES + NC - 1) / NC : 1;
    if (a.blocks < threads && OH >= GCRT_MP_SPLIT_ROWS) a.blocks = threads;
    if (a.blocks > OH) a.blocks = OH;
    a.rows = (OH + a.blocks - 1) / a.blocks;
    a.blocks = (OH + a.rows - 1) / a.rows;
    gcrt_parallel(pool, NC * a.blocks, GCRT_NO_SCRATCH, gcrt_mp_tiles, &a);
}
