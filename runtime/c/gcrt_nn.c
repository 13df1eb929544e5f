/* gcrt_nn.c — conv, pooling, normalization and softmax kernels.
 *
 * The kernels are written once over an element type T and a name suffix S:
 * the file includes itself twice with GCRT_NN_TEMPLATE defined, once for
 * float (_f32) and once for double (_f64), so the two variants cannot drift.
 *
 * Conv: for each image and group, im2col copies the receptive fields of a
 * tile of `cols` output positions into the caller's workspace as a
 * [C/group*prod(k), cols] matrix and one GEMM per tile multiplies the
 * group's filters with it (the tile bounds the workspace); a 1x1 stride-1 unpadded conv
 * multiplies X directly; when C/group == 1 (depthwise) or no workspace is
 * given, direct loops compute each output (no scratch). Spatial geometry is
 * 3-D; lower ranks are passed with unit leading dims.
 *
 * Reductions (pool means, softmax sums, layer-norm statistics) accumulate
 * in T with a compensated sum (gcrt_ksum_add_*, gcrt_base.h), which keeps
 * f32 results within a few ulps of the double reference without double
 * arithmetic (software-emulated on single-precision FPUs); training batch
 * norm keeps double statistics (see there). Softmax subtracts the row
 * maximum before exponentiating (no overflow).
 *
 * Softmax, log-softmax and layer norm over the last (contiguous) axis in f32,
 * the common case of attention and transformer blocks, also have fast kernels
 * (gcrt_*_last_f32, after the templates): SIMD (AVX-512F or AVX2+FMA when the
 * build targets them, else portable C) with float accumulation in a fixed
 * order and a vector exp; their own essay is there.
 */
#ifndef GCRT_NN_TEMPLATE

#include "gcrt_nn.h"
#include "gcrt_linalg.h"

#include <math.h>

/* See gcrt_nn.h. */
GCRT_FN void gcrt_conv_row_span(int64_t i0, int64_t step, int64_t n, int64_t run, int64_t *lo, int64_t *hi)
{
    int64_t a = i0 >= 0 ? 0 : (-i0 + step - 1) / step;
    int64_t b = i0 >= n ? 0 : (n - 1 - i0) / step + 1;
    if (b > run) b = run;
    if (a > b) a = b;
    *lo = a;
    *hi = b;
}

#define GCRT_NN_TEMPLATE
#define T float
#define S(name) name##_f32
#define GCRT_GEMM gcrt_sgemm
#define GCRT_EXP gcrt_expf
#define GCRT_LOG gcrt_logf
#define GCRT_SQRT sqrtf
#include "gcrt_nn.c"
#undef T
#undef S
#undef GCRT_GEMM
#undef GCRT_EXP
#undef GCRT_LOG
#undef GCRT_SQRT

#define T double
#define S(name) name##_f64
#define GCRT_GEMM gcrt_dgemm
#define GCRT_EXP exp
#define GCRT_LOG log
#define GCRT_SQRT sqrt
#include "gcrt_nn.c"
#undef T
#undef S
#undef GCRT_GEMM
#undef GCRT_EXP
#undef GCRT_LOG
#undef GCRT_SQRT

/* ---- Fast f32 softmax, log-softmax and layer norm over the last axis -----
 *
 * The row kernels below are written once over a small vector vocabulary
 * (gcrt_nnv_*: W lanes of float) that has three definitions: AVX-512F
 * (W = 16), AVX2+FMA (W = 8) and portable C (W = 1, a plain float; exp is
 * gcrt_expf). A row of n elements is walked in full vectors and one masked
 * tail vector; the tail's lanes past n are filled on load and cleared before
 * they reach a sum. Sums run in float, one accumulator of W lanes added in
 * element order, then a fixed-order horizontal tree, so a build gives the
 * same bits on every run (a build for another instruction set may differ in
 * the last bits).
 *
 * Vector exp (AVX paths): x is clamped to [-104, 89] (outside, e^x is 0 or
 * +inf in float; NaN passes through the clamp); k = round(x / ln2) and
 * r = x - k*ln2 with ln2 split in two constants (Cody-Waite: LN2_HI has 12
 * significant bits, so k*LN2_HI is exact for |k| <= 150), |r| <= ln2/2;
 * e^r = 1 + r*(1 + r*(c2 + ... + r*c6)) by Horner, the coefficients a
 * minimax fit of the relative error on [-0.35, 0.35] (Lawson's iteration,
 * each coefficient rounded to float in turn and the rest refitted; fit
 * error 3.4e-9); then 2^k multiplies in as two powers of two built by
 * integer exponent adds, 2^(k>>1) and 2^(k - (k>>1)), both normal floats,
 * so results in the subnormal range are rounded once and overflow gives
 * +inf. tests/runtime/test_fast_nn.c sweeps it against double exp
 * (0.89 ulp at most on [-87, 88]).
 *
 * Softmax: the row maximum (NaN ignored, as gcrt_softmax_f32 does), then
 * e = exp(x - max) stored in Y while summing, then Y *= 1/sum. Log-softmax:
 * the same sum without storing, then y = (x - max) - log(sum). A row with
 * NaN, +inf or only -inf gives NaNs like the template kernel
 * (gcrt_softmax_f32).
 * Layer norm: two passes in float (mean, then the sum of squared deviations
 * from it, which stays accurate when the mean is large against the spread),
 * then y = (x - mean) * (1/sqrtf(var + eps)) * scale + B. A row whose variance
 * comes out inf or NaN (an inf or NaN input, or deviations past ~1e19 whose
 * squares overflow float) is redone by gcrt_layernorm_f32, which rescales
 * such deviations, so the fast kernel gives what it gives there too.
 */
#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
#include <immintrin.h>

/* The vector exp's constants (see the essay above). */
#define GCRT_NNV_EXP_LO -104.0f
#define GCRT_NNV_EXP_HI 89.0f
#define GCRT_NNV_LOG2E 0x1.715476p+0f
#define GCRT_NNV_LN2_HI 0x1.62ep-1f
#define GCRT_NNV_LN2_LO 0x1.0bfbe8p-15f
#define GCRT_NNV_C2 0x1.fffffcp-2f
#define GCRT_NNV_C3 0x1.55548cp-3f
#define GCRT_NNV_C4 0x1.5558bap-5f
#define GCRT_NNV_C5 0x1.123e5ep-7f
#define GCRT_NNV_C6 0x1.6a4b96p-10f
#endif

#if defined(__AVX512F__)

#define GCRT_NNV_W 16
typedef __m512 gcrt_nnv;

static inline gcrt_nnv gcrt_nnv_set1(float a) { return _mm512_set1_ps(a); }
static inline gcrt_nnv gcrt_nnv_load(const float *p) { return _mm512_loadu_ps(p); }
static inline void gcrt_nnv_store(float *p, gcrt_nnv v) { _mm512_storeu_ps(p, v); }
static inline __mmask16 gcrt_nnv_mask(int64_t m) { return (__mmask16)((1u << (unsigned)m) - 1u); }
/* Lanes [0, m) from p (0 < m <= W), the others `fill`; nothing past p[m-1] is read. */
static inline gcrt_nnv gcrt_nnv_loadn(const float *p, int64_t m, float fill)
{
    return _mm512_mask_loadu_ps(_mm512_set1_ps(fill), gcrt_nnv_mask(m), p);
}
/* Stores lanes [0, m) to p. */
static inline void gcrt_nnv_storen(float *p, int64_t m, gcrt_nnv v) { _mm512_mask_storeu_ps(p, gcrt_nnv_mask(m), v); }
/* v with lanes [m, W) set to 0. */
static inline gcrt_nnv gcrt_nnv_keepn(gcrt_nnv v, int64_t m) { return _mm512_maskz_mov_ps(gcrt_nnv_mask(m), v); }
static inline gcrt_nnv gcrt_nnv_add(gcrt_nnv a, gcrt_nnv b) { return _mm512_add_ps(a, b); }
static inline gcrt_nnv gcrt_nnv_sub(gcrt_nnv a, gcrt_nnv b) { return _mm512_sub_ps(a, b); }
static inline gcrt_nnv gcrt_nnv_mul(gcrt_nnv a, gcrt_nnv b) { return _mm512_mul_ps(a, b); }
/* a*b + c, fused. */
static inline gcrt_nnv gcrt_nnv_fma(gcrt_nnv a, gcrt_nnv b, gcrt_nnv c) { return _mm512_fmadd_ps(a, b, c); }
/* c - a*b, fused. */
static inline gcrt_nnv gcrt_nnv_fnma(gcrt_nnv a, gcrt_nnv b, gcrt_nnv c) { return _mm512_fnmadd_ps(a, b, c); }
/* The larger of a and b; b when either is NaN (vmaxps). */
static inline gcrt_nnv gcrt_nnv_max(gcrt_nnv a, gcrt_nnv b) { return _mm512_max_ps(a, b); }
/* The smaller of a and b; b when either is NaN (vminps). */
static inline gcrt_nnv gcrt_nnv_min(gcrt_nnv a, gcrt_nnv b) { return _mm512_min_ps(a, b); }
/* Round to the nearest integer, ties to even. */
static inline gcrt_nnv gcrt_nnv_round(gcrt_nnv a)
{
    return _mm512_roundscale_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}
/* p * 2^kf for integer-valued kf in [-150, 128]: 2^(k>>1) and 2^(k - (k>>1)),
 * normal floats built by integer exponent adds, multiplied in in that order
 * (a subnormal result is rounded once; one past the range is +inf). */
static inline gcrt_nnv gcrt_nnv_scale2(gcrt_nnv p, gcrt_nnv kf)
{
    __m512i k = _mm512_cvtps_epi32(kf), k1 = _mm512_srai_epi32(k, 1), k2 = _mm512_sub_epi32(k, k1);
    __m512i bias = _mm512_set1_epi32(127);
    __m512 s1 = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(k1, bias), 23));
    __m512 s2 = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(k2, bias), 23));
    return _mm512_mul_ps(_mm512_mul_ps(p, s1), s2);
}
/* The 8-lane halves combined lane by lane, then the AVX2 tree below. */
static inline __m256 gcrt_nnv_fold_add(gcrt_nnv v)
{
    return _mm256_add_ps(_mm512_castps512_ps256(v), _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
}
static inline __m256 gcrt_nnv_fold_max(gcrt_nnv v)
{
    return _mm256_max_ps(_mm512_castps512_ps256(v), _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
}

#elif defined(__AVX2__) && defined(__FMA__)

#define GCRT_NNV_W 8
typedef __m256 gcrt_nnv;

static inline gcrt_nnv gcrt_nnv_set1(float a) { return _mm256_set1_ps(a); }
static inline gcrt_nnv gcrt_nnv_load(const float *p) { return _mm256_loadu_ps(p); }
static inline void gcrt_nnv_store(float *p, gcrt_nnv v) { _mm256_storeu_ps(p, v); }
/* All ones in lanes [0, m), zero elsewhere. */
static inline __m256i gcrt_nnv_mask(int64_t m)
{
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)m), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
static inline gcrt_nnv gcrt_nnv_loadn(const float *p, int64_t m, float fill)
{
    __m256i k = gcrt_nnv_mask(m);
    return _mm256_blendv_ps(_mm256_set1_ps(fill), _mm256_maskload_ps(p, k), _mm256_castsi256_ps(k));
}
static inline void gcrt_nnv_storen(float *p, int64_t m, gcrt_nnv v) { _mm256_maskstore_ps(p, gcrt_nnv_mask(m), v); }
static inline gcrt_nnv gcrt_nnv_keepn(gcrt_nnv v, int64_t m)
{
    return _mm256_and_ps(v, _mm256_castsi256_ps(gcrt_nnv_mask(m)));
}
static inline gcrt_nnv gcrt_nnv_add(gcrt_nnv a, gcrt_nnv b) { return _mm256_add_ps(a, b); }
static inline gcrt_nnv gcrt_nnv_sub(gcrt_nnv a, gcrt_nnv b) { return _mm256_sub_ps(a, b); }
static inline gcrt_nnv gcrt_nnv_mul(gcrt_nnv a, gcrt_nnv b) { return _mm256_mul_ps(a, b); }
static inline gcrt_nnv gcrt_nnv_fma(gcrt_nnv a, gcrt_nnv b, gcrt_nnv c) { return _mm256_fmadd_ps(a, b, c); }
static inline gcrt_nnv gcrt_nnv_fnma(gcrt_nnv a, gcrt_nnv b, gcrt_nnv c) { return _mm256_fnmadd_ps(a, b, c); }
static inline gcrt_nnv gcrt_nnv_max(gcrt_nnv a, gcrt_nnv b) { return _mm256_max_ps(a, b); }
static inline gcrt_nnv gcrt_nnv_min(gcrt_nnv a, gcrt_nnv b) { return _mm256_min_ps(a, b); }
static inline gcrt_nnv gcrt_nnv_round(gcrt_nnv a)
{
    return _mm256_round_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}
static inline gcrt_nnv gcrt_nnv_scale2(gcrt_nnv p, gcrt_nnv kf)
{
    __m256i k = _mm256_cvtps_epi32(kf), k1 = _mm256_srai_epi32(k, 1), k2 = _mm256_sub_epi32(k, k1);
    __m256i bias = _mm256_set1_epi32(127);
    __m256 s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(k1, bias), 23));
    __m256 s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(k2, bias), 23));
    return _mm256_mul_ps(_mm256_mul_ps(p, s1), s2);
}
static inline __m256 gcrt_nnv_fold_add(gcrt_nnv v) { return v; }
static inline __m256 gcrt_nnv_fold_max(gcrt_nnv v) { return v; }

#else /* portable C: one lane */

#define GCRT_NNV_W 1
typedef float gcrt_nnv;

static inline gcrt_nnv gcrt_nnv_set1(float a) { return a; }
static inline gcrt_nnv gcrt_nnv_load(const float *p) { return *p; }
static inline void gcrt_nnv_store(float *p, gcrt_nnv v) { *p = v; }
static inline gcrt_nnv gcrt_nnv_loadn(const float *p, int64_t m, float fill) { return m > 0 ? *p : fill; }
static inline void gcrt_nnv_storen(float *p, int64_t m, gcrt_nnv v)
{
    if (m > 0) *p = v;
}
static inline gcrt_nnv gcrt_nnv_keepn(gcrt_nnv v, int64_t m) { return m > 0 ? v : 0.0f; }
static inline gcrt_nnv gcrt_nnv_add(gcrt_nnv a, gcrt_nnv b) { return a + b; }
static inline gcrt_nnv gcrt_nnv_sub(gcrt_nnv a, gcrt_nnv b) { return a - b; }
static inline gcrt_nnv gcrt_nnv_mul(gcrt_nnv a, gcrt_nnv b) { return a * b; }
static inline gcrt_nnv gcrt_nnv_fma(gcrt_nnv a, gcrt_nnv b, gcrt_nnv c) { return a * b + c; }
/* The larger of a and b; b when either is NaN. */
static inline gcrt_nnv gcrt_nnv_max(gcrt_nnv a, gcrt_nnv b) { return a > b ? a : b; }
static inline gcrt_nnv gcrt_nnv_exp(gcrt_nnv a) { return gcrt_expf(a); }
static inline float gcrt_nnv_hsum(gcrt_nnv v) { return v; }
static inline float gcrt_nnv_hmax(gcrt_nnv v) { return v; }

#endif

#if GCRT_NNV_W > 1
/* e^x lane by lane, under 1 ulp on [-87, 88] (see the essay above). */
static inline gcrt_nnv gcrt_nnv_exp(gcrt_nnv x)
{
    gcrt_nnv kf, r, p;
    x = gcrt_nnv_min(gcrt_nnv_set1(GCRT_NNV_EXP_HI), gcrt_nnv_max(gcrt_nnv_set1(GCRT_NNV_EXP_LO), x));
    kf = gcrt_nnv_round(gcrt_nnv_mul(x, gcrt_nnv_set1(GCRT_NNV_LOG2E)));
    r = gcrt_nnv_fnma(kf, gcrt_nnv_set1(GCRT_NNV_LN2_HI), x);
    r = gcrt_nnv_fnma(kf, gcrt_nnv_set1(GCRT_NNV_LN2_LO), r);
    p = gcrt_nnv_fma(gcrt_nnv_set1(GCRT_NNV_C6), r, gcrt_nnv_set1(GCRT_NNV_C5));
    p = gcrt_nnv_fma(p, r, gcrt_nnv_set1(GCRT_NNV_C4));
    p = gcrt_nnv_fma(p, r, gcrt_nnv_set1(GCRT_NNV_C3));
    p = gcrt_nnv_fma(p, r, gcrt_nnv_set1(GCRT_NNV_C2));
    p = gcrt_nnv_fma(p, r, gcrt_nnv_set1(1.0f));
    p = gcrt_nnv_fma(p, r, gcrt_nnv_set1(1.0f));
    return gcrt_nnv_scale2(p, kf);
}

/* The lanes' sum: halves added lane by lane down to one (fixed order). */
static inline float gcrt_nnv_hsum(gcrt_nnv v)
{
    __m256 a = gcrt_nnv_fold_add(v);
    __m128 b = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
    b = _mm_add_ps(b, _mm_movehl_ps(b, b));
    b = _mm_add_ss(b, _mm_shuffle_ps(b, b, 1));
    return _mm_cvtss_f32(b);
}

/* The lanes' maximum (the lanes hold no NaN). */
static inline float gcrt_nnv_hmax(gcrt_nnv v)
{
    __m256 a = gcrt_nnv_fold_max(v);
    __m128 b = _mm_max_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
    b = _mm_max_ps(b, _mm_movehl_ps(b, b));
    b = _mm_max_ss(b, _mm_shuffle_ps(b, b, 1));
    return _mm_cvtss_f32(b);
}
#endif

/* Softmax (log_out == 0) or log-softmax of each row of X[outer, n]. */
static void gcrt_softmax_last_any(int64_t outer, int64_t n, const float *X, float *Y, int log_out)
{
    const int64_t full = n - n % GCRT_NNV_W;
    int64_t o, j;
    for (o = 0; o < outer && n > 0; o++) {
        const float *x = X + o * n;
        float *y = Y + o * n;
        gcrt_nnv acc = gcrt_nnv_set1(-INFINITY), vmx, e;
        float sum;
        /* the maximum: a NaN never replaces the accumulator */
        for (j = 0; j < full; j += GCRT_NNV_W) acc = gcrt_nnv_max(gcrt_nnv_load(x + j), acc);
        if (j < n) acc = gcrt_nnv_max(gcrt_nnv_loadn(x + j, n - j, -INFINITY), acc);
        vmx = gcrt_nnv_set1(gcrt_nnv_hmax(acc));
        /* the exponentials and their sum */
        acc = gcrt_nnv_set1(0.0f);
        for (j = 0; j < full; j += GCRT_NNV_W) {
            e = gcrt_nnv_exp(gcrt_nnv_sub(gcrt_nnv_load(x + j), vmx));
            if (!log_out) gcrt_nnv_store(y + j, e);
            acc = gcrt_nnv_add(acc, e);
        }
        if (j < n) {
            e = gcrt_nnv_keepn(gcrt_nnv_exp(gcrt_nnv_sub(gcrt_nnv_loadn(x + j, n - j, 0.0f), vmx)), n - j);
            if (!log_out) gcrt_nnv_storen(y + j, n - j, e);
            acc = gcrt_nnv_add(acc, e);
        }
        sum = gcrt_nnv_hsum(acc);
        if (log_out) {
            gcrt_nnv lse = gcrt_nnv_set1(gcrt_logf(sum));
            for (j = 0; j < full; j += GCRT_NNV_W)
                gcrt_nnv_store(y + j, gcrt_nnv_sub(gcrt_nnv_sub(gcrt_nnv_load(x + j), vmx), lse));
            if (j < n)
                gcrt_nnv_storen(y + j, n - j, gcrt_nnv_sub(gcrt_nnv_sub(gcrt_nnv_loadn(x + j, n - j, 0.0f), vmx), lse));
        } else {
            gcrt_nnv inv = gcrt_nnv_set1(1.0f / sum);
            for (j = 0; j < full; j += GCRT_NNV_W) gcrt_nnv_store(y + j, gcrt_nnv_mul(gcrt_nnv_load(y + j), inv));
            if (j < n) gcrt_nnv_storen(y + j, n - j, gcrt_nnv_mul(gcrt_nnv_loadn(y + j, n - j, 0.0f), inv));
        }
    }
}

/* See gcrt_nn.h. */
GCRT_FN void gcrt_softmax_last_f32(int64_t outer, int64_t n, const float *X, float *Y)
{
    gcrt_softmax_last_any(outer, n, X, Y, 0);
}

/* See gcrt_nn.h. */
GCRT_FN void gcrt_logsoftmax_last_f32(int64_t outer, int64_t n, const float *X, float *Y)
{
    gcrt_softmax_last_any(outer, n, X, Y, 1);
}

/* See gcrt_nn.h. */
GCRT_FN void gcrt_layernorm_last_f32(int64_t outer, int64_t n, const float *X, const float *scale,
                                     const float *B, float eps, float *Y)
{
    const int64_t full = n - n % GCRT_NNV_W;
    const gcrt_nnv zero = gcrt_nnv_set1(0.0f);
    int64_t o, j;
    for (o = 0; o < outer && n > 0; o++) {
        const float *x = X + o * n;
        float *y = Y + o * n;
        gcrt_nnv acc = zero, vmu, vrs, d;
        float mu, var;
        for (j = 0; j < full; j += GCRT_NNV_W) acc = gcrt_nnv_add(acc, gcrt_nnv_load(x + j));
        if (j < n) acc = gcrt_nnv_add(acc, gcrt_nnv_loadn(x + j, n - j, 0.0f));
        mu = gcrt_nnv_hsum(acc) / (float)n;
        vmu = gcrt_nnv_set1(mu);
        acc = zero;
        for (j = 0; j < full; j += GCRT_NNV_W) {
            d = gcrt_nnv_sub(gcrt_nnv_load(x + j), vmu);
            acc = gcrt_nnv_fma(d, d, acc);
        }
        if (j < n) {
            d = gcrt_nnv_keepn(gcrt_nnv_sub(gcrt_nnv_loadn(x + j, n - j, 0.0f), vmu), n - j);
            acc = gcrt_nnv_fma(d, d, acc);
        }
        var = gcrt_nnv_hsum(acc) / (float)n;
        if (!isfinite(var)) { /* an inf or NaN input, or a float sum overflowed: the template kernel */
            gcrt_layernorm_f32(1, n, x, scale, n, B, n, eps, y, 0, 0);
            continue;
        }
        vrs = gcrt_nnv_set1(1.0f / sqrtf(var + eps));
        for (j = 0; j < full; j += GCRT_NNV_W) {
            d = gcrt_nnv_mul(gcrt_nnv_sub(gcrt_nnv_load(x + j), vmu), vrs);
            gcrt_nnv_store(y + j, gcrt_nnv_fma(d, gcrt_nnv_load(scale + j), B ? gcrt_nnv_load(B + j) : zero));
        }
        if (j < n) {
            int64_t m = n - j;
            d = gcrt_nnv_mul(gcrt_nnv_sub(gcrt_nnv_loadn(x + j, m, 0.0f), vmu), vrs);
            gcrt_nnv_storen(y + j, m,
                            gcrt_nnv_fma(d, gcrt_nnv_loadn(scale + j, m, 0.0f), B ? gcrt_nnv_loadn(B + j, m, 0.0f) : zero));
        }
    }
}

#else /* GCRT_NN_TEMPLATE: the kernels for one element type */

/* See gcrt_nn.h (also the conv gradients' im2col, gcrt_grad.c). The
 * positions are walked in runs along one output row, which share the depth
 * and height taps; within a run the taps inside the input form one span
 * (gcrt_conv_row_span) copied without per-element bounds checks. */
GCRT_FN void S(gcrt_im2col)(int64_t Cg, const int64_t *in, const int64_t *k, const int64_t *out,
                            const int64_t *st, const int64_t *dl, const int64_t *pd, const T *x, int64_t p0,
                            int64_t np, T *col)
{
    int64_t c, kd, kh, kw, j, r;
    for (c = 0; c < Cg; c++)
        for (kd = 0; kd < k[0]; kd++)
            for (kh = 0; kh < k[1]; kh++)
                for (kw = 0; kw < k[2]; kw++) {
                    T *dst = col + (((c * k[0] + kd) * k[1] + kh) * k[2] + kw) * np;
                    const T *xc = x + c * in[0] * in[1] * in[2];
                    int64_t ow = p0 % out[2], oh = p0 / out[2] % out[1], od = p0 / (out[2] * out[1]);
                    for (j = 0; j < np;) {
                        int64_t id = od * st[0] - pd[0] + kd * dl[0];
                        int64_t ih = oh * st[1] - pd[1] + kh * dl[1];
                        int64_t run = out[2] - ow < np - j ? out[2] - ow : np - j, lo = run, hi = run;
                        T *d = dst + j;
                        if (id >= 0 && id < in[0] && ih >= 0 && ih < in[1]) {
                            const T *xr = xc + (id * in[1] + ih) * in[2];
                            int64_t iw = ow * st[2] - pd[2] + kw * dl[2];
                            gcrt_conv_row_span(iw, st[2], in[2], run, &lo, &hi);
                            if (st[2] == 1)
                                for (r = lo; r < hi; r++) d[r] = xr[iw + r];
                            else
                                for (r = lo; r < hi; r++) d[r] = xr[iw + r * st[2]];
                        }
                        for (r = 0; r < lo; r++) d[r] = (T)0;
                        for (r = hi; r < run; r++) d[r] = (T)0;
                        j += run;
                        ow += run;
                        if (ow == out[2]) {
                            ow = 0;
                            if (++oh == out[1]) {
                                oh = 0;
                                od++;
                            }
                        }
                    }
                }
}

/* One output plane of output channel m of one image by direct loops. */
static void S(conv_direct_plane)(int64_t Cg, int64_t c0, const int64_t *in, const int64_t *k,
                                 const int64_t *out, const int64_t *st, const int64_t *dl,
                                 const int64_t *pd, const T *x, const T *w, T bias, T *y)
{
    int64_t plane = in[0] * in[1] * in[2];
    int64_t od, oh, ow, c, kd, kh, kw;
    for (od = 0; od < out[0]; od++)
        for (oh = 0; oh < out[1]; oh++)
            for (ow = 0; ow < out[2]; ow++) {
                T acc = bias;
                for (c = 0; c < Cg; c++) {
                    const T *xc = x + (c0 + c) * plane;
                    const T *wc = w + c * k[0] * k[1] * k[2];
                    for (kd = 0; kd < k[0]; kd++) {
                        int64_t id = od * st[0] - pd[0] + kd * dl[0];
                        if (id < 0 || id >= in[0]) continue;
                        for (kh = 0; kh < k[1]; kh++) {
                            int64_t ih = oh * st[1] - pd[1] + kh * dl[1];
                            if (ih < 0 || ih >= in[1]) continue;
                            const T *xr = xc + (id * in[1] + ih) * in[2];
                            const T *wr = wc + (kd * k[1] + kh) * k[2];
                            for (kw = 0; kw < k[2]; kw++) {
                                int64_t iw = ow * st[2] - pd[2] + kw * dl[2];
                                if (iw >= 0 && iw < in[2]) acc += xr[iw] * wr[kw];
                            }
                        }
                    }
                }
                y[(od * out[1] + oh) * out[2] + ow] = acc;
            }
}

GCRT_FN void S(gcrt_conv)(int64_t N, int64_t C, int64_t M, int64_t group, const int64_t *in,
                  const int64_t *k, const int64_t *out, const int64_t *stride, const int64_t *dil,
                  const int64_t *pad, const T *X, const T *W, const T *B, T *Y, T *ws,
                  int64_t cols)
{
    int64_t Cg = C / group, Mg = M / group;
    int64_t plane = in[0] * in[1] * in[2], P = out[0] * out[1] * out[2];
    int64_t KK = Cg * k[0] * k[1] * k[2];
    int pointwise = k[0] == 1 && k[1] == 1 && k[2] == 1 && stride[0] == 1 && stride[1] == 1 &&
                    stride[2] == 1 && pad[0] == 0 && pad[1] == 0 && pad[2] == 0 &&
                    out[0] == in[0] && out[1] == in[1] && out[2] == in[2];
    int64_t n, g, m, p;
    for (n = 0; n < N; n++)
        for (g = 0; g < group; g++) {
            const T *x = X + (n * C + g * Cg) * plane;
            const T *w = W + g * Mg * KK;
            T *y = Y + (n * M + g * Mg) * P;
            if (!pointwise && (Cg == 1 || !ws)) {
                for (m = 0; m < Mg; m++)
                    S(conv_direct_plane)(Cg, 0, in, k, out, stride, dil, pad, x, w + m * KK,
                                         B ? B[g * Mg + m] : (T)0, y + m * P);
                continue;
            }
            if (B)
                for (m = 0; m < Mg; m++)
                    for (p = 0; p < P; p++) y[m * P + p] = B[g * Mg + m];
            if (pointwise) {
                GCRT_GEMM(0, 0, Mg, P, KK, (T)1, w, KK, x, P, B ? (T)1 : (T)0, y, P);
                continue;
            }
            for (p = 0; p < P; p += cols) {
                int64_t np = P - p < cols ? P - p : cols;
                S(gcrt_im2col)(Cg, in, k, out, stride, dil, pad, x, p, np, ws);
                GCRT_GEMM(0, 0, Mg, np, KK, (T)1, w, KK, ws, np, B ? (T)1 : (T)0, y + p, P);
            }
        }
}

GCRT_FN void S(gcrt_maxpool)(int64_t NC, const int64_t *in, const int64_t *k, const int64_t *out,
                     const int64_t *stride, const int64_t *dil, const int64_t *pad, const T *X,
                     T *Y)
{
    int64_t plane = in[0] * in[1] * in[2], P = out[0] * out[1] * out[2];
    int64_t q, od, oh, ow, kd, kh, kw;
    for (q = 0; q < NC; q++) {
        const T *x = X + q * plane;
        T *y = Y + q * P;
        for (od = 0; od < out[0]; od++)
            for (oh = 0; oh < out[1]; oh++)
                for (ow = 0; ow < out[2]; ow++) {
                    T best = -(T)INFINITY;
                    for (kd = 0; kd < k[0]; kd++) {
                        int64_t id = od * stride[0] - pad[0] + kd * dil[0];
                        if (id < 0 || id >= in[0]) continue;
                        for (kh = 0; kh < k[1]; kh++) {
                            int64_t ih = oh * stride[1] - pad[1] + kh * dil[1];
                            if (ih < 0 || ih >= in[1]) continue;
                            const T *xr = x + (id * in[1] + ih) * in[2];
                            for (kw = 0; kw < k[2]; kw++) {
                                int64_t iw = ow * stride[2] - pad[2] + kw * dil[2];
                                if (iw >= 0 && iw < in[2] && xr[iw] > best) best = xr[iw];
                            }
                        }
                    }
                    y[(od * out[1] + oh) * out[2] + ow] = best;
                }
    }
}

GCRT_FN void S(gcrt_avgpool)(int64_t NC, const int64_t *in, const int64_t *k, const int64_t *out,
                     const int64_t *stride, const int64_t *pad, const int64_t *pad_end,
                     int count_include_pad, const T *X, T *Y)
{
    int64_t plane = in[0] * in[1] * in[2], P = out[0] * out[1] * out[2];
    int64_t q, o[3], lo[3], hi[3], cnt[3], i, d, h, w;
    for (q = 0; q < NC; q++) {
        const T *x = X + q * plane;
        T *y = Y + q * P;
        for (o[0] = 0; o[0] < out[0]; o[0]++)
            for (o[1] = 0; o[1] < out[1]; o[1]++)
                for (o[2] = 0; o[2] < out[2]; o[2]++) {
                    T acc = 0, acc_c = 0;
                    for (i = 0; i < 3; i++) {
                        int64_t s = o[i] * stride[i] - pad[i], e = s + k[i];
                        int64_t ep = e < in[i] + pad_end[i] ? e : in[i] + pad_end[i];
                        lo[i] = s < 0 ? 0 : s;
                        hi[i] = e < in[i] ? e : in[i];
                        cnt[i] = count_include_pad ? ep - s : hi[i] - lo[i];
                    }
                    for (d = lo[0]; d < hi[0]; d++)
                        for (h = lo[1]; h < hi[1]; h++)
                            for (w = lo[2]; w < hi[2]; w++)
                                S(gcrt_ksum_add)(&acc, &acc_c, x[(d * in[1] + h) * in[2] + w]);
                    y[(o[0] * out[1] + o[1]) * out[2] + o[2]] = (acc + acc_c) / (T)(cnt[0] * cnt[1] * cnt[2]);
                }
    }
}

/* Eight channels at a time: a channel's compensated sum is one chain of
 * dependent adds (about 4 cycles each, so MobileNetV2's 1280 x 49 took 0.09
 * ms); eight independent chains overlap. Each channel's own operations and
 * their order are unchanged. A full group of eight takes a loop of its own
 * with a constant count, which compilers unroll into registers: called
 * through a pointer, with NC and Sz unknown (runtime/cpu/gcrt_gap.c's
 * tiles), the one loop for both kept the sums in memory, 3.3 times as
 * slow on MobileNetV2's pool. */
GCRT_FN void S(gcrt_global_avgpool)(int64_t NC, int64_t Sz, const T *X, T *Y)
{
    int64_t q, i;
    int l;
    for (q = 0; q < NC; q += 8) {
        const int nl = NC - q < 8 ? (int)(NC - q) : 8;
        const T *x = X + q * Sz;
        T acc[8], acc_c[8];
        for (l = 0; l < 8; l++) acc[l] = acc_c[l] = 0;
        if (nl == 8)
            for (i = 0; i < Sz; i++)
                for (l = 0; l < 8; l++) S(gcrt_ksum_add)(&acc[l], &acc_c[l], x[l * Sz + i]);
        else
            for (i = 0; i < Sz; i++)
                for (l = 0; l < nl; l++) S(gcrt_ksum_add)(&acc[l], &acc_c[l], x[l * Sz + i]);
        for (l = 0; l < nl; l++) Y[q + l] = (acc[l] + acc_c[l]) / (T)Sz;
    }
}

GCRT_FN void S(gcrt_batchnorm)(int64_t N, int64_t C, int64_t Sz, const T *X, const T *scale, const T *B,
                       const T *mean, const T *var, T eps, T *Y)
{
    int64_t n, c, i;
    for (c = 0; c < C; c++) {
        T a = scale[c] / GCRT_SQRT(var[c] + eps), mu = mean[c], b = B[c];
        for (n = 0; n < N; n++) {
            const T *x = X + (n * C + c) * Sz;
            T *y = Y + (n * C + c) * Sz;
            for (i = 0; i < Sz; i++) y[i] = (x[i] - mu) * a + b;
        }
    }
}

/* Training batch norm: per channel, the batch mean and (population)
 * variance in double over N and Sz, then Y; each channel's statistics are
 * complete before its Y is written, so Y may be X. A training kernel, so it
 * keeps double statistics (with explicit conversions): at small batches
 * and spatial sizes a float mean moves the outputs by an ulp, which flips
 * ReLU masks downstream and moves MobileNetV2's gradients by ~1%
 * (models_torch_grads). */
GCRT_FN void S(gcrt_batchnorm_train)(int64_t N, int64_t C, int64_t Sz, const T *X, const T *scale, const T *B,
                             const T *mean, const T *var, T eps, T momentum, T *Y, T *running_mean,
                             T *running_var)
{
    int64_t n, c, i;
    double cnt = (double)(N * Sz);
    for (c = 0; c < C; c++) {
        double mu = 0.0, v = 0.0, d;
        T a, b;
        for (n = 0; n < N; n++)
            for (i = 0; i < Sz; i++) mu += (double)X[(n * C + c) * Sz + i];
        mu /= cnt;
        for (n = 0; n < N; n++)
            for (i = 0; i < Sz; i++) {
                d = (double)X[(n * C + c) * Sz + i] - mu;
                v += d * d;
            }
        v /= cnt;
        if (running_mean) running_mean[c] = (T)((double)mean[c] * (double)momentum + mu * (1.0 - (double)momentum));
        if (running_var) running_var[c] = (T)((double)var[c] * (double)momentum + v * (1.0 - (double)momentum));
        a = (T)((double)scale[c] / sqrt(v + (double)eps));
        b = B[c];
        for (n = 0; n < N; n++) {
            const T *x = X + (n * C + c) * Sz;
            T *y = Y + (n * C + c) * Sz;
            for (i = 0; i < Sz; i++) y[i] = (T)((x[i] - (T)mu) * a + b);
        }
    }
}

/* Softmax (log_out == 0) or log-softmax (log_out != 0) along the middle axis. */
static void S(softmax_any)(int64_t outer, int64_t n, int64_t inner, const T *X, T *Y, int log_out)
{
    int64_t o, i, j;
    for (o = 0; o < outer; o++)
        for (i = 0; i < inner; i++) {
            const T *x = X + o * n * inner + i;
            T *y = Y + o * n * inner + i;
            T mx = -(T)INFINITY, sum = 0, sum_c = 0;
            if (n == 0) continue;
            for (j = 0; j < n; j++)
                if (x[j * inner] > mx) mx = x[j * inner];
            if (log_out) {
                T lse;
                for (j = 0; j < n; j++) S(gcrt_ksum_add)(&sum, &sum_c, GCRT_EXP(x[j * inner] - mx));
                lse = GCRT_LOG(sum + sum_c);
                for (j = 0; j < n; j++) y[j * inner] = x[j * inner] - mx - lse;
            } else {
                for (j = 0; j < n; j++) {
                    T e = GCRT_EXP(x[j * inner] - mx);
                    y[j * inner] = e;
                    S(gcrt_ksum_add)(&sum, &sum_c, e);
                }
                sum += sum_c;
                for (j = 0; j < n; j++) y[j * inner] = y[j * inner] / sum;
            }
        }
}

GCRT_FN void S(gcrt_softmax)(int64_t outer, int64_t n, int64_t inner, const T *X, T *Y)
{
    S(softmax_any)(outer, n, inner, X, Y, 0);
}

GCRT_FN void S(gcrt_logsoftmax)(int64_t outer, int64_t n, int64_t inner, const T *X, T *Y)
{
    S(softmax_any)(outer, n, inner, X, Y, 1);
}

GCRT_FN void S(gcrt_layernorm)(int64_t outer, int64_t inner, const T *X, const T *scale,
                       int64_t scale_n, const T *B, int64_t b_n, T eps, T *Y, T *mean,
                       T *invstd)
{
    int64_t o, j, js, jb;
    for (o = 0; o < outer; o++) {
        const T *x = X + o * inner;
        T *y = Y + o * inner;
        T s = 0, s_c = 0, v = 0, v_c = 0, mu, rs;
        for (j = 0; j < inner; j++) S(gcrt_ksum_add)(&s, &s_c, x[j]);
        mu = (s + s_c) / (T)inner;
        for (j = 0; j < inner; j++) {
            T dv = x[j] - mu;
            S(gcrt_ksum_add)(&v, &v_c, dv * dv);
        }
        if (v + v_c == (T)INFINITY && mu - mu == 0) {
            /* finite deviations whose squares overflow T: sum the squares of
             * the deviations divided by the largest one, m */
            T m = 0;
            for (j = 0; j < inner; j++) {
                T dv = x[j] > mu ? x[j] - mu : mu - x[j];
                if (dv > m) m = dv;
            }
            v = v_c = 0;
            for (j = 0; j < inner; j++) {
                T dv = (x[j] - mu) / m;
                S(gcrt_ksum_add)(&v, &v_c, dv * dv);
            }
            rs = 1 / (m * GCRT_SQRT((v + v_c) / (T)inner + eps / m / m));
        } else {
            rs = 1 / GCRT_SQRT((v + v_c) / (T)inner + eps);
        }
        for (j = js = jb = 0; j < inner; j++) {
            T t = (x[j] - mu) * rs * scale[js];
            y[j] = B ? t + B[jb] : t;
            if (++js == scale_n) js = 0;
            if (++jb == b_n) jb = 0;
        }
        if (mean) mean[o] = mu;
        if (invstd) invstd[o] = rs;
    }
}

#endif /* GCRT_NN_TEMPLATE */
