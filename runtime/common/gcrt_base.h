/* gcrt_base.h — the base of graphc's runtime: scalar conversions between
 * f32 and the 16-bit float formats, a copy helper, compensated sums, and
 * the float exp and log that generated code calls.
 *
 * Generated code stores f16 and bf16 tensors as uint16_t bit patterns and
 * computes in float; it converts on every load and store with the functions
 * below. Both narrowing conversions round to nearest, ties to even, keep
 * the sign of zero, map overflow to infinity, produce subnormals where the
 * format has them (f16) and keep NaN a (quiet) NaN. Bit patterns move
 * through memcpy, so nothing here breaks strict aliasing.
 *
 * Float kernels compute in float, not in double: on the single-precision
 * FPUs of microcontrollers (Cortex-M4F, M7 SP, M33) every double operation
 * is a libgcc software routine. Where a float sum would lose accuracy over
 * many terms (means, variances, softmax denominators) the kernels use the
 * compensated sums below, whose error stays within a few ulps of the result
 * up to millions of terms. Not yet converted, still computing f32 through
 * double: the training kernels (gradients, losses, optimizers, training-mode
 * batch norm), the quantization ops, TopK's sort keys, Det, LRN, RoiAlign,
 * GridSample, the window functions, and a few integer ops (Pow, Shrink,
 * reductions).
 *
 * gcrt_expf, gcrt_logf, gcrt_tanhf and gcrt_erff are what generated code
 * and the kernels call for float exp, log, tanh and erf. On hosted systems
 * they are libm's expf, logf, tanhf and erff. With GCRT_FREESTANDING (the
 * generated Makefile defines it when CC builds for bare metal) they are
 * graphc's own: newlib's expf and logf set errno, its tanhf calls expm1f
 * and (in some multilibs) its erff calls expf, which do too; errno lives in
 * libc's reentrancy structure, so they would pull libc state into an image
 * that needs nothing else of libc. Of the other float functions, fabsf sets
 * no errno and -fno-math-errno turns sqrtf into an FPU instruction; others
 * (powf, log1pf, expm1f, sinf, ...) still need libc's __errno on bare
 * metal.
 *
 * Plain C99: header-only static inline functions, no allocation, no I/O,
 * no global state.
 *
 * Every runtime kernel is private to the model that uses it: the model's
 * NAME.c includes the kernel sources it needs (runtime/c/gcrt_<unit>.c)
 * after this header, and each kernel is declared and defined GCRT_FN, i.e.
 * `static` (marked unused so that a unit whose model calls only some of its
 * kernels builds without warnings). Two generated models therefore link into
 * one program, and a model's shared library exports only its own API.
 */
#ifndef GCRT_BASE_H
#define GCRT_BASE_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__GNUC__) || defined(__clang__)
#define GCRT_FN static __attribute__((unused))
#else
#define GCRT_FN static
#endif

static inline uint32_t gcrt_f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static inline float gcrt_bits_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* IEEE binary16 bits -> float (exact: every half is a float). */
static inline float gcrt_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t man = h & 0x3ffu;
    if (exp == 0x1fu) /* infinity or NaN (payload kept) */
        return gcrt_bits_f32(sign | 0x7f800000u | (man << 13));
    if (exp == 0) {
        if (man == 0) return gcrt_bits_f32(sign); /* signed zero */
        /* subnormal: value = man * 2^-24; renormalize */
        int e = -14;
        while (!(man & 0x400u)) {
            man <<= 1;
            e--;
        }
        man &= 0x3ffu;
        return gcrt_bits_f32(sign | ((uint32_t)(e + 127) << 23) | (man << 13));
    }
    return gcrt_bits_f32(sign | ((exp + 112u) << 23) | (man << 13));
}

/* float -> IEEE binary16 bits, round to nearest even. */
static inline uint16_t gcrt_f32_to_f16(float f)
{
    uint32_t x = gcrt_f32_bits(f);
    uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t ax = x & 0x7fffffffu;
    if (ax > 0x7f800000u) /* NaN: keep the top payload bits, force quiet */
        return (uint16_t)(sign | 0x7e00u | ((ax >> 13) & 0x3ffu));
    if (ax >= 0x477ff000u) /* >= 65520 rounds to infinity (and inf itself) */
        return (uint16_t)(sign | 0x7c00u);
    if (ax < 0x38800000u) { /* below the smallest normal half, 2^-14 */
        if (ax < 0x33000000u) return (uint16_t)sign; /* <= 2^-25 rounds to 0 */
        uint32_t e = ax >> 23;                  /* 102 .. 112 */
        uint32_t m = (ax & 0x7fffffu) | 0x800000u;
        uint32_t shift = 126u - e;              /* 14 .. 24 */
        uint32_t q = m >> shift;
        uint32_t rem = m & ((1u << shift) - 1u);
        uint32_t half = 1u << (shift - 1u);
        if (rem > half || (rem == half && (q & 1u))) q++;
        return (uint16_t)(sign | q); /* q == 0x400 is the smallest normal */
    }
    uint32_t q = ((((ax >> 23) - 112u) << 10) | ((ax >> 13) & 0x3ffu));
    uint32_t rem = ax & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (q & 1u))) q++; /* carry may bump the exponent */
    return (uint16_t)(sign | q);
}

/* bfloat16 bits -> float (exact). */
static inline float gcrt_bf16_to_f32(uint16_t b)
{
    return gcrt_bits_f32((uint32_t)b << 16);
}

/* float -> bfloat16 bits, round to nearest even; NaN stays a quiet NaN. */
static inline uint16_t gcrt_f32_to_bf16(float f)
{
    uint32_t x = gcrt_f32_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u);
    x += 0x7fffu + ((x >> 16) & 1u);
    return (uint16_t)(x >> 16);
}

/* memcpy that accepts n == 0 with NULL pointers (zero-size tensors). */
static inline void gcrt_copy(void *dst, const void *src, size_t n)
{
    if (n) memcpy(dst, src, n);
}

/* Neumaier's compensated sum: *s + *c is the sum of the terms added so far
 * within 2u|sum| + O(n u^2) sum|x| (u = 2^-24): a few ulps of the result up
 * to millions of terms, where a plain float sum drifts by up to n/2 ulps
 * (tests/runtime/test_mathf.c). The compensation
 * relies on IEEE rounding of each operation: it is exact under -O2, -O3 and
 * FMA contraction (it multiplies nothing), not under -ffast-math. */
static inline void gcrt_ksum_add_f32(float *s, float *c, float x)
{
    float t = *s + x;
    if (fabsf(*s) >= fabsf(x)) *c += (*s - t) + x;
    else *c += (x - t) + *s;
    *s = t;
}

static inline void gcrt_ksum_add_f64(double *s, double *c, double x)
{
    double t = *s + x;
    if (fabs(*s) >= fabs(x)) *c += (*s - t) + x;
    else *c += (x - t) + *s;
    *s = t;
}

#if defined(GCRT_FREESTANDING)
/* 2^k for -126 <= k <= 127. */
static inline float gcrt_pow2f(int k)
{
    return gcrt_bits_f32((uint32_t)(k + 127) << 23);
}

/* e^x within 2 ulps (tests/runtime/test_mathf.c): x = k ln2 + r, |r| <= ln2/2,
 * with ln2 split in two (k * GCRT_LN2_HI is exact for |k| < 2^11), e^r by its
 * Taylor polynomial to r^7 (truncation < 2^-30), then 2^k in two factors so
 * that results near overflow and in the subnormal range scale correctly. */
static inline float gcrt_expf(float x)
{
    const float ln2_hi = 0.693145751953125f, ln2_lo = 1.428606765330187e-6f;
    float kf, r, p;
    int k;
    if (x != x) return x;
    if (x > 88.7228317260742188f) return INFINITY; /* e^x over FLT_MAX by more than half an ulp */
    if (x < -103.972084045410156f) return 0.0f;     /* under half the smallest subnormal */
    kf = x * 1.44269504088896341f;
    k = (int)(kf < 0.0f ? kf - 0.5f : kf + 0.5f);
    kf = (float)k;
    r = (x - kf * ln2_hi) - kf * ln2_lo;
    p = 1.0f + r * (1.0f + r * (0.5f + r * (1.0f / 6 + r * (1.0f / 24 + r * (1.0f / 120 + r * (1.0f / 720 +
        r * (1.0f / 5040)))))));
    return p * gcrt_pow2f(k / 2) * gcrt_pow2f(k - k / 2);
}

/* log(x) within 2 ulps (tests/runtime/test_mathf.c): x = 2^k m with
 * sqrt(1/2) <= m < sqrt(2), f = m - 1 (exact), s = f / (2 + f), and
 * log(m) = f - (f^2/2 - s (f^2/2 + R(s^2))) as in fdlibm, R by its series
 * 2/3 z + 2/5 z^2 + ... to z^4 (z = s^2 <= 0.0295: truncation < 2^-29). */
static inline float gcrt_logf(float x)
{
    const float ln2_hi = 0.693145751953125f, ln2_lo = 1.428606765330187e-6f;
    uint32_t u = gcrt_f32_bits(x);
    int k = 0;
    float f, s, z, R, hfsq, kf;
    if (x != x) return x;
    if (x == 0.0f) return -INFINITY;
    if (u >> 31) return NAN;
    if (x == INFINITY) return x;
    if (u < 0x00800000u) { /* subnormal: scale into the normal range */
        x *= 8388608.0f;
        u = gcrt_f32_bits(x);
        k = -23;
    }
    /* m in [sqrt(1/2), sqrt(2)): take the exponent relative to 0x3f3504f3 */
    u += 0x3f800000u - 0x3f3504f3u;
    k += (int)(u >> 23) - 127;
    u = (u & 0x007fffffu) + 0x3f3504f3u;
    f = gcrt_bits_f32(u) - 1.0f;
    s = f / (2.0f + f);
    z = s * s;
    R = z * (2.0f / 3 + z * (2.0f / 5 + z * (2.0f / 7 + z * (2.0f / 9))));
    hfsq = 0.5f * f * f;
    kf = (float)k;
    return kf * ln2_hi - ((hfsq - (s * (hfsq + R) + kf * ln2_lo)) - f);
}
/* tanh(x) within 2 ulps (tests/runtime/test_mathf.c): x itself below
 * 2^-12; for |x| < 0.55 its Taylor series to x^19 (the terms shrink by
 * (2x/pi)^2 <= 0.123 each: truncation < 2^-27); else 1 - 2 / (e^2|x| + 1),
 * which is 1 in float past |x| = 9.1, with the sign of x. */
static inline float gcrt_tanhf(float x)
{
    float ax = x < 0 ? -x : x, z, r;
    if (x != x || ax < 0x1p-12f) return x; /* tanh x = x (1 - x^2/3 + ...): x in float, -0 kept */
    if (ax < 0.55f) {
        z = x * x;
        return x + x * z * (-0.333333333f + z * (0.133333333f + z * (-0.0539682540f + z * (0.0218694885f +
               z * (-0.00886323553f + z * (0.00359212804f + z * (-0.00145583439f + z * (0.000590027441f +
               z * -0.000239129114f))))))));
    }
    r = ax > 9.1f ? 1.0f : 1.0f - 2.0f / (gcrt_expf(2.0f * ax) + 1.0f);
    return x < 0 ? -r : r;
}
/* erf(x) within 3 ulps (tests/runtime/test_mathf.c): x P(x^2) for |x| < 1;
 * 1 - e^(-x^2) Q(|x|) for 1 <= |x| < 4, Q a polynomial in |x| - 1.5 on
 * [1, 2) and in |x| - 3 on [2, 4) for e^(x^2) erfc(x) (erfc <= 0.16 there,
 * so the error of e^(-x^2) from rounding x^2 stays far below an ulp of
 * erf); 1 past 4 (erfc(4) < 2^-25); with the sign of x. P and Q are
 * least-squares fits of the relative error on Chebyshev nodes (degrees 6, 8
 * and 10), the coefficients rounded to float. */
static inline float gcrt_erff(float x)
{
    float ax = x < 0 ? -x : x, t, r;
    if (x != x) return x;
    if (ax < 1.0f) {
        t = x * x;
        return x * (1.12837923f + t * (-0.376126289f + t * (0.112836123f + t * (-0.0268548075f +
               t * (0.00519005302f + t * (-0.000802435155f + t * 7.89820187e-05f))))));
    }
    if (ax >= 4.0f) {
        r = 1.0f;
    } else if (ax < 2.0f) {
        t = ax - 1.5f;
        r = 1.0f - gcrt_expf(-ax * ax) * (0.321585417f + t * (-0.163622901f + t * (0.0761510506f +
            t * (-0.0329314545f + t * (0.013377252f + t * (-0.0051380056f + t * (0.00188531785f +
            t * (-0.000704117585f + t * 0.000233192433f))))))));
    } else {
        t = ax - 3.0f;
        r = 1.0f - gcrt_expf(-ax * ax) * (0.179001153f + t * (-0.0543722622f + t * (0.0158843715f +
            t * (-0.00447941525f + t * (0.00122304109f + t * (-0.00032421478f + t * (8.35582541e-05f +
            t * (-2.07864286e-05f + t * (5.11911458e-06f + t * (-1.43210991e-06f + t * 3.2659014e-07f))))))))));
    }
    return x < 0 ? -r : r;
}
#else
static inline float gcrt_expf(float x)
{
    return expf(x);
}

static inline float gcrt_erff(float x)
{
    return erff(x);
}

static inline float gcrt_tanhf(float x)
{
    return tanhf(x);
}

static inline float gcrt_logf(float x)
{
    return logf(x);
}
#endif

#endif
