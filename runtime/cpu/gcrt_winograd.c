/* gcrt_winograd.c — Winograd F(4x4, 3x3) convolution (see gcrt_winograd.h).
 *
 * Transforms (Lavin & Gray 2016; points 0, +-1, +-2, infinity):
 *   B^T = | 4  0 -5  0  1  0 |   G = | 1/4     0     0  |   A^T = | 1  1  1  1  1  0 |
 *         | 0 -4 -4  1  1  0 |       | -1/6 -1/6  -1/6 |         | 0  1 -1  2 -2  0 |
 *         | 0  4 -4 -1  1  0 |       | -1/6  1/6  -1/6 |         | 0  1  1  4  4  0 |
 *         | 0 -2 -1  2  1  0 |       | 1/24 1/12   1/6 |         | 0  1 -1  8 -8  1 |
 *         | 0  2 -1 -2  1  0 |       | 1/24 -1/12  1/6 |
 *         | 0  4  0 -5  0  1 |       |  0     0     1  |
 * Each 2-D transform is the 1-D one along the rows, then along the columns
 * (V = B^T d B: every row of d times B, then B^T times the result).
 *
 * Input and output transforms run on 16 tiles at a time (a "group", the
 * lanes of a vector: half a block of 32 tiles). The tiles of a group come
 * in runs of consecutive tile columns of one tile row of one image; within
 * a run the patches of consecutive lanes start 4 floats apart, so one row
 * of 16 patches is the stride-4 deinterleave of a 64-float span. Under
 * AVX-512 every run contributes its part of that span through masked
 * loads (lanes of other runs and columns outside the image masked off, so
 * the padding reads as zeros, and nothing outside the tensor is touched),
 * two levels of permutes split the span into patch columns 0-3, and
 * columns 4-5 are columns 0-1 shifted by one lane, fixed up at the last
 * lane of each run by a one-lane masked load. The output transform
 * interleaves its 4x4 results back into spans and stores each run with
 * masked stores (reading the residual the same way). Without AVX-512 the
 * patches are staged with scalar copies and only the arithmetic runs on
 * GCRT_WINO_WV-lane vectors.
 *
 * The 36 products per channel block: gcrt_ukernel (gcrt_cpu.c, which the
 * generated code includes first) on U's A panels and V's 32-tile B panel,
 * storing raw sums (no epilogue) into P, later channel blocks adding to
 * it; blocks of at most 16 tiles use the narrow kernels of this file. The
 * 36 matrices of V and of P are GCRT_WINO_SKEW floats further apart than
 * their size: at a multiple of 4 KiB, the 36 values of one tile would all
 * map to one L1 set (measured: 10-15% slower in all).
 */
#include "gcrt_winograd.h"

#include <math.h>
#include <string.h>

/* The transforms' helpers must inline for their arrays to stay in registers. */
#if defined(__GNUC__) || defined(__clang__)
#define GCRT_WINO_INLINE static inline __attribute__((always_inline))
#define GCRT_WINO_NOINLINE static __attribute__((noinline))
#else
#define GCRT_WINO_INLINE static inline
#define GCRT_WINO_NOINLINE static
#endif

#ifndef GCRT_MR
#error "gcrt_winograd.c needs gcrt_cpu.c included before it (gcrt_ukernel)"
#endif
#if GCRT_PACK_NR != GCRT_WINO_NB || GCRT_WINO_MB % (2 * GCRT_PACK_MR) != 0 || GCRT_PACK_MR % GCRT_MR != 0
#error "gcrt_winograd: a block of tiles is one B panel; channel blocks are whole A panels"
#endif

/* ---- the filter transform ---------------------------------------------------
 *
 * U = G g G^T is computed as (24G) g (24G)^T / 576 in double. 24G has the
 * integer entries 6, -4, 4, 1, 2, 24; every product that feeds an addition
 * is by a power of two or of a float by 6 or 24, hence exact, so no
 * compiler's contraction into fused multiply-adds can change a bit, and
 * the only roundings (the additions, the products 6t and 24t that are
 * stored, the division, the conversion to float) are IEEE-defined. The
 * compiler's copy (backend/c/cpu_wino_pack.c) repeats this code. */

/* out[k*os] = (24G a)[k] for a = (a0, a1, a2). */
static void gcrt_wino_g24(double a0, double a1, double a2, double *out, int os)
{
    const double s = a0 + a2, u = a0 + 4.0 * a2;
    out[0] = 6.0 * a0;
    out[os] = -4.0 * (s + a1);
    out[2 * os] = -4.0 * (s - a1);
    out[3 * os] = u + 2.0 * a1;
    out[4 * os] = u - 2.0 * a1;
    out[5 * os] = 24.0 * a2;
}

/* See gcrt_winograd.h. */
GCRT_FN void gcrt_wino_transform_weights(int64_t M, int64_t C, const float *W, float *U)
{
    const int64_t Mp = GCRT_WINO_MPAD(M);
    for (int64_t m = 0; m < Mp; m++)
        for (int64_t c = 0; c < C; c++) {
            double t[6][3], u[6][6];
            memset(u, 0, sizeof u);
            if (m < M) {
                const float *g = W + (m * C + c) * 9;
                for (int l = 0; l < 3; l++)
                    gcrt_wino_g24((double)g[l], (double)g[3 + l], (double)g[6 + l], &t[0][l], 3);
                for (int q = 0; q < 6; q++) gcrt_wino_g24(t[q][0], t[q][1], t[q][2], u[q], 1);
            }
            for (int xi = 0; xi < 36; xi++)
                U[(xi * Mp + m / GCRT_PACK_MR * GCRT_PACK_MR) * C + c * GCRT_PACK_MR + m % GCRT_PACK_MR] =
                    (float)(u[xi / 6][xi % 6] / 576.0);
        }
}

/* ---- vectors of tiles -------------------------------------------------------- */

#if defined(__AVX512F__)
#define GCRT_WINO_WV 16
typedef __m512 GcrtWinoVec;
static inline GcrtWinoVec gcrt_wino_vld(const float *p) { return _mm512_loadu_ps(p); }
static inline void gcrt_wino_vst(float *p, GcrtWinoVec v) { _mm512_storeu_ps(p, v); }
static inline GcrtWinoVec gcrt_wino_vadd(GcrtWinoVec a, GcrtWinoVec b) { return _mm512_add_ps(a, b); }
static inline GcrtWinoVec gcrt_wino_vsub(GcrtWinoVec a, GcrtWinoVec b) { return _mm512_sub_ps(a, b); }
static inline GcrtWinoVec gcrt_wino_vset1(float k) { return _mm512_set1_ps(k); }
/* a*k + c */
static inline GcrtWinoVec gcrt_wino_vfma(GcrtWinoVec a, float k, GcrtWinoVec c)
{
    return _mm512_fmadd_ps(a, _mm512_set1_ps(k), c);
}
#elif defined(__AVX2__) && defined(__FMA__)
#define GCRT_WINO_WV 8
typedef __m256 GcrtWinoVec;
static inline GcrtWinoVec gcrt_wino_vld(const float *p) { return _mm256_loadu_ps(p); }
static inline void gcrt_wino_vst(float *p, GcrtWinoVec v) { _mm256_storeu_ps(p, v); }
static inline GcrtWinoVec gcrt_wino_vadd(GcrtWinoVec a, GcrtWinoVec b) { return _mm256_add_ps(a, b); }
static inline GcrtWinoVec gcrt_wino_vsub(GcrtWinoVec a, GcrtWinoVec b) { return _mm256_sub_ps(a, b); }
static inline GcrtWinoVec gcrt_wino_vset1(float k) { return _mm256_set1_ps(k); }
static inline GcrtWinoVec gcrt_wino_vfma(GcrtWinoVec a, float k, GcrtWinoVec c)
{
    return _mm256_fmadd_ps(a, _mm256_set1_ps(k), c);
}
#else
#define GCRT_WINO_WV 4
typedef struct GcrtWinoVec {
    float v[GCRT_WINO_WV];
} GcrtWinoVec;
static inline GcrtWinoVec gcrt_wino_vld(const float *p)
{
    GcrtWinoVec r;
    for (int i = 0; i < GCRT_WINO_WV; i++) r.v[i] = p[i];
    return r;
}
static inline void gcrt_wino_vst(float *p, GcrtWinoVec v)
{
    for (int i = 0; i < GCRT_WINO_WV; i++) p[i] = v.v[i];
}
static inline GcrtWinoVec gcrt_wino_vadd(GcrtWinoVec a, GcrtWinoVec b)
{
    for (int i = 0; i < GCRT_WINO_WV; i++) a.v[i] += b.v[i];
    return a;
}
static inline GcrtWinoVec gcrt_wino_vsub(GcrtWinoVec a, GcrtWinoVec b)
{
    for (int i = 0; i < GCRT_WINO_WV; i++) a.v[i] -= b.v[i];
    return a;
}
static inline GcrtWinoVec gcrt_wino_vset1(float k)
{
    GcrtWinoVec r;
    for (int i = 0; i < GCRT_WINO_WV; i++) r.v[i] = k;
    return r;
}
static inline GcrtWinoVec gcrt_wino_vfma(GcrtWinoVec a, float k, GcrtWinoVec c)
{
    for (int i = 0; i < GCRT_WINO_WV; i++) c.v[i] += a.v[i] * k;
    return c;
}
#endif

/* out[k*os] = (B^T d)[k], d[k] = in[k*is]. */
GCRT_WINO_INLINE void gcrt_wino_bt(const GcrtWinoVec *in, int is, GcrtWinoVec *out, int os)
{
    const GcrtWinoVec d0 = in[0], d1 = in[is], d2 = in[2 * is], d3 = in[3 * is], d4 = in[4 * is], d5 = in[5 * is];
    const GcrtWinoVec s12 = gcrt_wino_vadd(d1, d2), s34 = gcrt_wino_vadd(d3, d4);
    const GcrtWinoVec d12 = gcrt_wino_vsub(d1, d2), d43 = gcrt_wino_vsub(d4, d3);
    const GcrtWinoVec d42 = gcrt_wino_vsub(d4, d2), d31 = gcrt_wino_vsub(d3, d1);
    out[0] = gcrt_wino_vfma(d0, 4.0f, gcrt_wino_vfma(d2, -5.0f, d4));
    out[os] = gcrt_wino_vfma(s12, -4.0f, s34);
    out[2 * os] = gcrt_wino_vfma(d12, 4.0f, d43);
    out[3 * os] = gcrt_wino_vfma(d31, 2.0f, d42);
    out[4 * os] = gcrt_wino_vfma(d31, -2.0f, d42);
    out[5 * os] = gcrt_wino_vfma(d1, 4.0f, gcrt_wino_vfma(d3, -5.0f, d5));
}

/* out[k*os] = (A^T m)[k], k < 4, m[k] = in[k*is]. */
GCRT_WINO_INLINE void gcrt_wino_at(const GcrtWinoVec *in, int is, GcrtWinoVec *out, int os)
{
    const GcrtWinoVec m0 = in[0], m1 = in[is], m2 = in[2 * is], m3 = in[3 * is], m4 = in[4 * is], m5 = in[5 * is];
    const GcrtWinoVec a = gcrt_wino_vadd(m1, m2), b = gcrt_wino_vsub(m1, m2);
    const GcrtWinoVec c = gcrt_wino_vadd(m3, m4), d = gcrt_wino_vsub(m3, m4);
    out[0] = gcrt_wino_vadd(gcrt_wino_vadd(m0, a), c);
    out[os] = gcrt_wino_vfma(d, 2.0f, b);
    out[2 * os] = gcrt_wino_vfma(c, 4.0f, a);
    out[3 * os] = gcrt_wino_vadd(gcrt_wino_vfma(d, 8.0f, b), m5);
}

/* ---- geometry ------------------------------------------------------------------ */

#define GCRT_WINO_GL 16 /* tiles per group */

typedef struct GcrtWinoPlan {
    const GcrtWino *w;
    int64_t TH, TW, T; /* tile rows and columns of an image; tiles of all images */
    int64_t Mp, mb, nmb; /* padded M; rows of P (channels per item); items per tile block */
    int64_t kc, slot;    /* rows of V (channels per block); floats per slot */
    int64_t vxs, pxs;    /* floats from one matrix xi of V, of P, to the next */
} GcrtWinoPlan;

/* The tiles of a group as runs: lanes [a[k], b[k]) hold tile columns
 * tx[k], tx[k]+1, ... of tile row ty[k] of image n[k]; lanes from b[nr-1]
 * on are past the last tile. */
typedef struct GcrtWinoRuns {
    int nr;
    int a[GCRT_WINO_GL], b[GCRT_WINO_GL];
    int64_t n[GCRT_WINO_GL], ty[GCRT_WINO_GL], tx[GCRT_WINO_GL];
} GcrtWinoRuns;

static void gcrt_wino_runs(const GcrtWinoPlan *pl, int64_t g0, GcrtWinoRuns *rs)
{
    const int64_t TI = pl->TH * pl->TW;
    rs->nr = 0;
    for (int l = 0; l < GCRT_WINO_GL && g0 + l < pl->T; l++) {
        const int64_t g = g0 + l, n = g / TI, ty = g % TI / pl->TW, tx = g % pl->TW;
        const int k = rs->nr - 1;
        if (k >= 0 && rs->n[k] == n && rs->ty[k] == ty) {
            rs->b[k] = l + 1;
            continue;
        }
        rs->a[k + 1] = l, rs->b[k + 1] = l + 1;
        rs->n[k + 1] = n, rs->ty[k + 1] = ty, rs->tx[k + 1] = tx;
        rs->nr++;
    }
}

/* The address base + off floats, formed in integers: under AVX-512 a run's
 * span may start before its first patch (its masked-off lanes), which as a
 * C pointer could point outside the tensor; the masked loads and stores
 * never touch those floats. */
static inline uintptr_t gcrt_wino_addr(const float *base, int64_t off)
{
    return (uintptr_t)base + (uintptr_t)off * (uintptr_t)sizeof(float);
}

#if defined(__AVX512F__)

/* Bits [lo, hi) of a 64-bit mask (clipped to [0, 64)). */
static inline uint64_t gcrt_wino_bits(int64_t lo, int64_t hi)
{
    if (lo < 0) lo = 0;
    if (hi > 64) hi = 64;
    if (hi <= lo) return 0;
    return (hi == 64 ? ~(uint64_t)0 : ((uint64_t)1 << hi) - 1) & ~(((uint64_t)1 << lo) - 1);
}

/* The stride-4 deinterleave of 64 floats z0..z3: p_j[l] = z[4l + j]. */
GCRT_WINO_INLINE void gcrt_wino_deint(__m512 z0, __m512 z1, __m512 z2, __m512 z3, __m512 *p)
{
    const __m512i ia = _mm512_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28, 1, 5, 9, 13, 17, 21, 25, 29);
    const __m512i ib = _mm512_setr_epi32(2, 6, 10, 14, 18, 22, 26, 30, 3, 7, 11, 15, 19, 23, 27, 31);
    const __m512 l01a = _mm512_permutex2var_ps(z0, ia, z1), l23a = _mm512_permutex2var_ps(z2, ia, z3);
    const __m512 l01b = _mm512_permutex2var_ps(z0, ib, z1), l23b = _mm512_permutex2var_ps(z2, ib, z3);
    p[0] = _mm512_shuffle_f32x4(l01a, l23a, 0x44);
    p[1] = _mm512_shuffle_f32x4(l01a, l23a, 0xee);
    p[2] = _mm512_shuffle_f32x4(l01b, l23b, 0x44);
    p[3] = _mm512_shuffle_f32x4(l01b, l23b, 0xee);
}

/* The inverse: z[4l + j] = o_j[l], as 4 vectors of 16 floats. */
GCRT_WINO_INLINE void gcrt_wino_inter(__m512 o0, __m512 o1, __m512 o2, __m512 o3, __m512 *z)
{
    const __m512i i0 = _mm512_setr_epi32(0, 8, 16, 24, 1, 9, 17, 25, 2, 10, 18, 26, 3, 11, 19, 27);
    const __m512i i1 = _mm512_setr_epi32(4, 12, 20, 28, 5, 13, 21, 29, 6, 14, 22, 30, 7, 15, 23, 31);
    const __m512 l01a = _mm512_shuffle_f32x4(o0, o1, 0x44), l23a = _mm512_shuffle_f32x4(o0, o1, 0xee);
    const __m512 l01b = _mm512_shuffle_f32x4(o2, o3, 0x44), l23b = _mm512_shuffle_f32x4(o2, o3, 0xee);
    z[0] = _mm512_permutex2var_ps(l01a, i0, l01b);
    z[1] = _mm512_permutex2var_ps(l01a, i1, l01b);
    z[2] = _mm512_permutex2var_ps(l23a, i0, l23b);
    z[3] = _mm512_permutex2var_ps(l23a, i1, l23b);
}

/* What a run contributes to a patch row, besides its offset: the masks of
 * its span's four vectors (its lanes, columns inside the image), and the
 * fix-up of columns 4 and 5 of its last lane (which the shift of columns 0
 * and 1 by one lane takes from the next run): mask m4 / m5 (that lane, if
 * the column is inside the image) and the byte offset from the span at
 * which a load puts the column in that lane. */
typedef struct GcrtWinoSpan {
    __mmask16 mz[4], m4, m5;
    int64_t e4;
    int64_t off[6];          /* offset of the span of patch row r in channel c0, from X */
    unsigned char rv[6];     /* patch row r inside the image */
    int64_t f0, f1;          /* the floats [f0, f1) of the span it reads (for prefetching) */
} GcrtWinoSpan;

/* Channels ahead whose input spans the input transform prefetches. */
#define GCRT_WINO_PFC 2

/* Patch row r of the group's 16 tiles (channel offset co): the runs' spans
 * merged through their masks and deinterleaved into columns 0..3; columns
 * 4 and 5 are columns 0 and 1 of the next lane, but at each run's last lane
 * (ends) the fix-ups. Then the transform along the row: e[s] = (d_r B)[s]. */
GCRT_WINO_INLINE void gcrt_wino_row(const float *X, int nr, const GcrtWinoSpan *sp, __mmask16 ends, int r, int64_t co,
                                    __m512 *e)
{
    __m512 z0 = _mm512_setzero_ps(), z1 = z0, z2 = z0, z3 = z0, f4 = z0, f5 = z0, d[6];
    for (int k = 0; k < nr; k++) {
        if (!sp[k].rv[r]) continue;
        const uintptr_t p = gcrt_wino_addr(X, sp[k].off[r] + co);
        z0 = _mm512_mask_loadu_ps(z0, sp[k].mz[0], (const float *)p);
        z1 = _mm512_mask_loadu_ps(z1, sp[k].mz[1], (const float *)(p + 64));
        z2 = _mm512_mask_loadu_ps(z2, sp[k].mz[2], (const float *)(p + 128));
        z3 = _mm512_mask_loadu_ps(z3, sp[k].mz[3], (const float *)(p + 192));
        f4 = _mm512_mask_loadu_ps(f4, sp[k].m4, (const float *)(p + (uintptr_t)sp[k].e4));
        f5 = _mm512_mask_loadu_ps(f5, sp[k].m5, (const float *)(p + (uintptr_t)sp[k].e4 + 4));
    }
    gcrt_wino_deint(z0, z1, z2, z3, d);
    const __m512i zero = _mm512_setzero_si512();
    d[4] = _mm512_mask_mov_ps(_mm512_castsi512_ps(_mm512_alignr_epi32(zero, _mm512_castps_si512(d[0]), 1)), ends, f4);
    d[5] = _mm512_mask_mov_ps(_mm512_castsi512_ps(_mm512_alignr_epi32(zero, _mm512_castps_si512(d[1]), 1)), ends, f5);
    gcrt_wino_bt(d, 1, e, 1);
}

/* V[xi*vxs + c*NB + l] for channels [c0, c0+kcb) of the group's tiles
 * (lane l; V points at the group's first lane). A run's span for patch row
 * r starts at column 4*tx - pl - 4*a: float f of the span is lane f/4,
 * patch column f%4. */
static void gcrt_wino_input(const GcrtWinoPlan *pl, const GcrtWinoRuns *rs, int64_t c0, int64_t kcb, float *V)
{
    const GcrtWino *w = pl->w;
    const int64_t HW = w->H * w->W, vxs = pl->vxs;
    GcrtWinoSpan sp[GCRT_WINO_GL];
    unsigned ends = 0;
    for (int k = 0; k < rs->nr; k++) {
        const int a = rs->a[k], b = rs->b[k];
        const int64_t iw0 = 4 * rs->tx[k] - w->pl - 4 * a, c4 = iw0 + 4 * b;
        const uint64_t bz = gcrt_wino_bits(4 * a, 4 * b) & gcrt_wino_bits(-iw0, w->W - iw0);
        for (int i = 0; i < 4; i++) sp[k].mz[i] = (__mmask16)(bz >> (16 * i));
        sp[k].m4 = (__mmask16)(c4 >= 0 && c4 < w->W ? 1u << (b - 1) : 0u);
        sp[k].m5 = (__mmask16)(c4 + 1 >= 0 && c4 + 1 < w->W ? 1u << (b - 1) : 0u);
        sp[k].e4 = (int64_t)sizeof(float) * (4 * b - (b - 1));
        sp[k].f0 = 4 * a > -iw0 ? 4 * a : -iw0;
        sp[k].f1 = 4 * b + 2 < w->W - iw0 ? 4 * b + 2 : w->W - iw0;
        if (sp[k].f1 <= sp[k].f0) sp[k].f0 = sp[k].f1 = 0;
        ends |= 1u << (b - 1);
        for (int r = 0; r < 6; r++) {
            const int64_t ih = 4 * rs->ty[k] - w->pt + r;
            sp[k].rv[r] = ih >= 0 && ih < w->H;
            sp[k].off[r] = ((rs->n[k] * w->C + c0) * w->H + ih) * w->W + iw0;
        }
    }
    for (int64_t c = 0; c < kcb; c++) {
        const int64_t co = c * HW;
        __m512 e[36], v[6];
        if (c + GCRT_WINO_PFC < kcb) /* the spans of a later channel: X is read in short pieces */
            for (int k = 0; k < rs->nr; k++)
                for (int r = 0; r < 6; r++)
                    if (sp[k].rv[r]) {
                        const uintptr_t p = gcrt_wino_addr(w->X, sp[k].off[r] + co + GCRT_WINO_PFC * HW);
                        for (int64_t f = sp[k].f0; f < sp[k].f1; f += 16)
                            _mm_prefetch((const char *)(p + (uintptr_t)f * 4), _MM_HINT_T0);
                        _mm_prefetch((const char *)(p + (uintptr_t)sp[k].f1 * 4 - 4), _MM_HINT_T0);
                    }
        /* rows, unrolled so that e stays in registers */
        gcrt_wino_row(w->X, rs->nr, sp, (__mmask16)ends, 0, co, e);
        gcrt_wino_row(w->X, rs->nr, sp, (__mmask16)ends, 1, co, e + 6);
        gcrt_wino_row(w->X, rs->nr, sp, (__mmask16)ends, 2, co, e + 12);
        gcrt_wino_row(w->X, rs->nr, sp, (__mmask16)ends, 3, co, e + 18);
        gcrt_wino_row(w->X, rs->nr, sp, (__mmask16)ends, 4, co, e + 24);
        gcrt_wino_row(w->X, rs->nr, sp, (__mmask16)ends, 5, co, e + 30);
        float *Vc = V + c * GCRT_WINO_NB;
#define GCRT_WINO_COL(s)                                                                                  \
    gcrt_wino_bt(e + (s), 6, v, 1);                                                                     \
    _mm512_storeu_ps(Vc + (s) * vxs, v[0]), _mm512_storeu_ps(Vc + (6 + (s)) * vxs, v[1]);               \
    _mm512_storeu_ps(Vc + (12 + (s)) * vxs, v[2]), _mm512_storeu_ps(Vc + (18 + (s)) * vxs, v[3]);       \
    _mm512_storeu_ps(Vc + (24 + (s)) * vxs, v[4]), _mm512_storeu_ps(Vc + (30 + (s)) * vxs, v[5]);
        GCRT_WINO_COL(0)
        GCRT_WINO_COL(1)
        GCRT_WINO_COL(2)
        GCRT_WINO_COL(3)
        GCRT_WINO_COL(4)
        GCRT_WINO_COL(5)
#undef GCRT_WINO_COL
    }
}

/* A run's output spans: the masks of its lanes inside OW, and for output
 * row i of its tiles the offset of the span in channel m0 (from Y or res)
 * and whether the row is inside OH. */
typedef struct GcrtWinoOspan {
    __mmask16 mo[4];
    unsigned char rv[4];
    int64_t off[4];
} GcrtWinoOspan;

/* Output row i of the group's tiles (o: its 4 columns, 16 tiles each)
 * interleaved into each run's span, plus the residual, activated, stored. */
GCRT_WINO_INLINE void gcrt_wino_orow(const GcrtWino *w, const GcrtTile *act, int nr, const GcrtWinoOspan *sp, int i,
                                     int64_t mo_, const __m512 *o)
{
    __m512 z[4];
    gcrt_wino_inter(o[0], o[1], o[2], o[3], z);
    if (w->res) {
        __m512 r0 = _mm512_setzero_ps(), r1 = r0, r2 = r0, r3 = r0;
        for (int k = 0; k < nr; k++) {
            if (!sp[k].rv[i]) continue;
            const uintptr_t p = gcrt_wino_addr(w->res, sp[k].off[i] + mo_);
            r0 = _mm512_mask_loadu_ps(r0, sp[k].mo[0], (const float *)p);
            r1 = _mm512_mask_loadu_ps(r1, sp[k].mo[1], (const float *)(p + 64));
            r2 = _mm512_mask_loadu_ps(r2, sp[k].mo[2], (const float *)(p + 128));
            r3 = _mm512_mask_loadu_ps(r3, sp[k].mo[3], (const float *)(p + 192));
        }
        z[0] = _mm512_add_ps(z[0], r0), z[1] = _mm512_add_ps(z[1], r1);
        z[2] = _mm512_add_ps(z[2], r2), z[3] = _mm512_add_ps(z[3], r3);
    }
    if (act->act != GCRT_ACT_NONE) { /* gcrt_cpu.c's epilogue, reduced to the activation */
        z[0] = gcrt_epi512(z[0], act, 0, 0, 0, 0xffff), z[1] = gcrt_epi512(z[1], act, 0, 0, 0, 0xffff);
        z[2] = gcrt_epi512(z[2], act, 0, 0, 0, 0xffff), z[3] = gcrt_epi512(z[3], act, 0, 0, 0, 0xffff);
    }
    for (int k = 0; k < nr; k++) {
        if (!sp[k].rv[i]) continue;
        const uintptr_t p = gcrt_wino_addr(w->Y, sp[k].off[i] + mo_);
        _mm512_mask_storeu_ps((float *)p, sp[k].mo[0], z[0]);
        _mm512_mask_storeu_ps((float *)(p + 64), sp[k].mo[1], z[1]);
        _mm512_mask_storeu_ps((float *)(p + 128), sp[k].mo[2], z[2]);
        _mm512_mask_storeu_ps((float *)(p + 192), sp[k].mo[3], z[3]);
    }
}

/* Y of channels [m0, m0+mlen) for the group's tiles from P[xi*pxs +
 * (m-m0)*NB + l] (P points at the group's first lane), with the epilogue. */
static void gcrt_wino_output(const GcrtWinoPlan *pl, const GcrtWinoRuns *rs, int64_t m0, int64_t mlen, const float *P)
{
    const GcrtWino *w = pl->w;
    const int64_t OHW = w->OH * w->OW, pxs = pl->pxs;
    GcrtWinoOspan sp[GCRT_WINO_GL];
    GcrtTile act;
    if (rs->nr == 0) return;
    memset(&act, 0, sizeof act);
    act.last = 1, act.act = w->act, act.lo = w->lo, act.hi = w->hi;
    for (int k = 0; k < rs->nr; k++) {
        const int64_t ow0 = 4 * rs->tx[k] - 4 * rs->a[k];
        const uint64_t bo = gcrt_wino_bits(4 * rs->a[k], 4 * rs->b[k]) & gcrt_wino_bits(-ow0, w->OW - ow0);
        for (int i = 0; i < 4; i++) {
            const int64_t oh = 4 * rs->ty[k] + i;
            sp[k].mo[i] = (__mmask16)(bo >> (16 * i));
            sp[k].rv[i] = oh < w->OH;
            sp[k].off[i] = (rs->n[k] * w->M + m0) * OHW + oh * w->OW + ow0;
        }
    }
    for (int64_t m = 0; m < mlen; m++) {
        const float *Pm = P + m * GCRT_WINO_NB;
        __m512 f[24], o[16], p[6];
        /* unrolled so that f and o stay in registers */
#define GCRT_WINO_OROW(q)                                                                                 \
    p[0] = _mm512_loadu_ps(Pm + (6 * (q)) * pxs), p[1] = _mm512_loadu_ps(Pm + (6 * (q) + 1) * pxs);     \
    p[2] = _mm512_loadu_ps(Pm + (6 * (q) + 2) * pxs), p[3] = _mm512_loadu_ps(Pm + (6 * (q) + 3) * pxs); \
    p[4] = _mm512_loadu_ps(Pm + (6 * (q) + 4) * pxs), p[5] = _mm512_loadu_ps(Pm + (6 * (q) + 5) * pxs); \
    gcrt_wino_at(p, 1, f + 4 * (q), 1);
        GCRT_WINO_OROW(0)
        GCRT_WINO_OROW(1)
        GCRT_WINO_OROW(2)
        GCRT_WINO_OROW(3)
        GCRT_WINO_OROW(4)
        GCRT_WINO_OROW(5)
#undef GCRT_WINO_OROW
        gcrt_wino_at(f, 4, o, 4);
        gcrt_wino_at(f + 1, 4, o + 1, 4);
        gcrt_wino_at(f + 2, 4, o + 2, 4);
        gcrt_wino_at(f + 3, 4, o + 3, 4);
        if (w->bias) {
            const __m512 b = _mm512_set1_ps(w->bias[m0 + m]);
            for (int i = 0; i < 16; i++) o[i] = _mm512_add_ps(o[i], b);
        }
        const int64_t mo_ = m * OHW;
        gcrt_wino_orow(w, &act, rs->nr, sp, 0, mo_, o);
        gcrt_wino_orow(w, &act, rs->nr, sp, 1, mo_, o + 4);
        gcrt_wino_orow(w, &act, rs->nr, sp, 2, mo_, o + 8);
        gcrt_wino_orow(w, &act, rs->nr, sp, 3, mo_, o + 12);
    }
}

#else /* no AVX-512: patches staged with scalar copies */

/* As the AVX-512 version: V[xi*vxs + c*NB + l], channels [c0, c0+kcb). */
static void gcrt_wino_input(const GcrtWinoPlan *pl, const GcrtWinoRuns *rs, int64_t c0, int64_t kcb, float *V)
{
    const GcrtWino *w = pl->w;
    const int64_t HW = w->H * w->W, vxs = pl->vxs;
    float st[36 * GCRT_WINO_GL];
    int64_t base[GCRT_WINO_GL]; /* patch origin in channel c0 of its image (may lie outside) */
    unsigned rows[GCRT_WINO_GL], cols[GCRT_WINO_GL];
    int nl = rs->nr ? rs->b[rs->nr - 1] : 0;
    for (int k = 0; k < rs->nr; k++)
        for (int l = rs->a[k]; l < rs->b[k]; l++) {
            const int64_t ih0 = 4 * rs->ty[k] - w->pt, iw0 = 4 * (rs->tx[k] + l - rs->a[k]) - w->pl;
            base[l] = ((rs->n[k] * w->C + c0) * w->H + ih0) * w->W + iw0;
            rows[l] = cols[l] = 0;
            for (int i = 0; i < 6; i++) {
                rows[l] |= (unsigned)(ih0 + i >= 0 && ih0 + i < w->H) << i;
                cols[l] |= (unsigned)(iw0 + i >= 0 && iw0 + i < w->W) << i;
            }
        }
    for (int i = 0; i < 36 * GCRT_WINO_GL; i++) st[i] = 0.0f; /* lanes past the last tile stay zero */
    for (int64_t c = 0; c < kcb; c++) {
        for (int l = 0; l < nl; l++) {
            const int64_t b = base[l] + c * HW;
            if (rows[l] == 63u && cols[l] == 63u) {
                for (int r = 0; r < 6; r++)
                    for (int s = 0; s < 6; s++) st[(r * 6 + s) * GCRT_WINO_GL + l] = w->X[b + r * w->W + s];
            } else {
                for (int r = 0; r < 6; r++)
                    for (int s = 0; s < 6; s++)
                        st[(r * 6 + s) * GCRT_WINO_GL + l] =
                            (rows[l] >> r & cols[l] >> s & 1u) ? w->X[b + r * w->W + s] : 0.0f;
            }
        }
        for (int l0 = 0; l0 < GCRT_WINO_GL; l0 += GCRT_WINO_WV) {
            GcrtWinoVec d[36], e[36];
            for (int i = 0; i < 36; i++) d[i] = gcrt_wino_vld(st + i * GCRT_WINO_GL + l0);
            for (int r = 0; r < 6; r++) gcrt_wino_bt(d + 6 * r, 1, e + 6 * r, 1);
            for (int s = 0; s < 6; s++) gcrt_wino_bt(e + s, 6, d + s, 6);
            for (int i = 0; i < 36; i++) gcrt_wino_vst(V + i * vxs + c * GCRT_WINO_NB + l0, d[i]);
        }
    }
}

/* The activation as gcrt_cpu.c's kernels apply it (NaN propagates
 * through Relu and Clip; Clip gives hi when lo > hi). */
static inline float gcrt_wino_act(float v, const GcrtWino *w)
{
    switch (w->act) {
    case GCRT_ACT_RELU: return v < 0.0f ? 0.0f : v;
    case GCRT_ACT_CLIP:
        v = v < w->lo ? w->lo : v;
        return v > w->hi ? w->hi : v;
    case GCRT_ACT_TANH: return gcrt_tanhf(v);
    case GCRT_ACT_SIGMOID: return 1.0f / (1.0f + gcrt_expf(-v));
    default: return v;
    }
}

/* As the AVX-512 version: Y of channels [m0, m0+mlen) from P, with the epilogue. */
static void gcrt_wino_output(const GcrtWinoPlan *pl, const GcrtWinoRuns *rs, int64_t m0, int64_t mlen, const float *P)
{
    const GcrtWino *w = pl->w;
    const int64_t OHW = w->OH * w->OW, pxs = pl->pxs;
    float ob[16 * GCRT_WINO_GL];
    for (int64_t m = 0; m < mlen; m++) {
        for (int l0 = 0; l0 < GCRT_WINO_GL; l0 += GCRT_WINO_WV) {
            GcrtWinoVec p[36], f[24], o[16];
            for (int i = 0; i < 36; i++) p[i] = gcrt_wino_vld(P + i * pxs + m * GCRT_WINO_NB + l0);
            for (int q = 0; q < 6; q++) gcrt_wino_at(p + 6 * q, 1, f + 4 * q, 1);
            for (int j = 0; j < 4; j++) gcrt_wino_at(f + j, 4, o + j, 4);
            if (w->bias) {
                const GcrtWinoVec b = gcrt_wino_vset1(w->bias[m0 + m]);
                for (int i = 0; i < 16; i++) o[i] = gcrt_wino_vadd(o[i], b);
            }
            for (int i = 0; i < 16; i++) gcrt_wino_vst(ob + i * GCRT_WINO_GL + l0, o[i]);
        }
        for (int k = 0; k < rs->nr; k++)
            for (int l = rs->a[k]; l < rs->b[k]; l++) {
                const int64_t oh0 = 4 * rs->ty[k], ow0 = 4 * (rs->tx[k] + l - rs->a[k]);
                const int64_t yo = (rs->n[k] * w->M + m0 + m) * OHW + oh0 * w->OW + ow0;
                for (int i = 0; i < 4 && oh0 + i < w->OH; i++)
                    for (int j = 0; j < 4 && ow0 + j < w->OW; j++) {
                        const int64_t y = yo + i * w->OW + j;
                        float v = ob[(i * 4 + j) * GCRT_WINO_GL + l];
                        if (w->res) v += w->res[y];
                        w->Y[y] = gcrt_wino_act(v, w);
                    }
            }
    }
}

#endif

/* ---- the products -------------------------------------------------------------
 *
 * P[xi] (+)= U[xi] * V[xi] for the item's output channels and one channel
 * block. A block of more than 16 tiles uses gcrt_ukernel on all 32 columns
 * (V is zero past the last tile, so P is too). A block of at most 16 (a
 * small image, or the last block) would waste half or more of that, and
 * such layers are bound by streaming U (it is used by so few tiles): the
 * narrow kernels below compute 16 rows (two A panels) by 16 (zmm) or 8
 * (ymm) columns, and for at most 4 tiles 32 rows by 4 columns with the
 * vectors along the rows of U; all read V and write P in the same layouts,
 * and prefetch the next slice of U as they go. Each value of P is one sum
 * over the channels of the block in order whichever kernel computes it,
 * and the choice depends on the shapes only. */

/* Blocks of at most GCRT_WINO_NARROW tiles use the narrow kernels, those
 * of at most GCRT_WINO_T4_MAX the transposed one, on GCRT_WINO_T4_NP
 * panels at a time. Without AVX-512VL only 16 vector registers: fewer
 * accumulators. */
#if defined(__AVX2__) && defined(__FMA__)
#define GCRT_WINO_T4_MAX 4
#if defined(__AVX512F__)
#define GCRT_WINO_NARROW 16
#else
#define GCRT_WINO_NARROW 8
#endif
#if defined(__AVX512VL__)
#define GCRT_WINO_N8_TWO 1
#define GCRT_WINO_T4_NP 4
#else
#define GCRT_WINO_N8_TWO 0
#define GCRT_WINO_T4_NP 2
#endif
#else
#define GCRT_WINO_T4_MAX 0
#define GCRT_WINO_NARROW 0
#define GCRT_WINO_T4_NP 1
#endif

#if defined(__AVX2__) && defined(__FMA__)

/* c[r] += A[r] * b for the 8 rows of a panel. */
#define GCRT_WINO_R8(c, A, b, fma, bc)                                                                      \
    c[0] = fma(bc(A), b, c[0]), c[1] = fma(bc(A + 1), b, c[1]), c[2] = fma(bc(A + 2), b, c[2]);          \
    c[3] = fma(bc(A + 3), b, c[3]), c[4] = fma(bc(A + 4), b, c[4]), c[5] = fma(bc(A + 5), b, c[5]);      \
    c[6] = fma(bc(A + 6), b, c[6]), c[7] = fma(bc(A + 7), b, c[7]);

/* P (+)= A * B over K for rows [0, rows) (one panel at A, or two a_ps
 * floats apart) and 8 columns; P and B have row stride NB. The first
 * channel block (acc 0) also zeroes columns 8-15, so that the group's
 * lanes the output transform reads are all defined. */
GCRT_WINO_INLINE void gcrt_wino_n8_body(int64_t K, const float *A, int64_t a_ps, int two, int rows, const float *B,
                                        float *P, int acc, const float *pf)
{
    __m256 c[16];
    const float *A1 = A + a_ps;
    const int64_t pk = pf ? K : 0;
    c[0] = _mm256_setzero_ps();
    c[1] = c[2] = c[3] = c[4] = c[5] = c[6] = c[7] = c[8] = c[9] = c[10] = c[11] = c[12] = c[13] = c[14] = c[15] = c[0];
    for (int64_t k = 0; k < K; k++, A += GCRT_PACK_MR, A1 += GCRT_PACK_MR, B += GCRT_WINO_NB) {
        const __m256 b = _mm256_loadu_ps(B);
        if (k < pk && !(k & 1)) {
            _mm_prefetch((const char *)(pf + k * GCRT_PACK_MR), _MM_HINT_T1);
            if (two) _mm_prefetch((const char *)(pf + a_ps + k * GCRT_PACK_MR), _MM_HINT_T1);
        }
        GCRT_WINO_R8(c, A, b, _mm256_fmadd_ps, _mm256_broadcast_ss)
        if (two) {
            GCRT_WINO_R8((c + 8), A1, b, _mm256_fmadd_ps, _mm256_broadcast_ss)
        }
    }
    /* constant indices only, or c would live in memory */
#define GCRT_WINO_ST8(r)                                                                                  \
    if ((r) < rows) {                                                                                     \
        float *p = P + (r) * GCRT_WINO_NB;                                                                \
        _mm256_storeu_ps(p, acc ? _mm256_add_ps(c[r], _mm256_loadu_ps(p)) : c[r]);                       \
        if (!acc) _mm256_storeu_ps(p + 8, _mm256_setzero_ps());                                           \
    }
    GCRT_WINO_ST8(0) GCRT_WINO_ST8(1) GCRT_WINO_ST8(2) GCRT_WINO_ST8(3)
    GCRT_WINO_ST8(4) GCRT_WINO_ST8(5) GCRT_WINO_ST8(6) GCRT_WINO_ST8(7)
    if (two) {
        GCRT_WINO_ST8(8) GCRT_WINO_ST8(9) GCRT_WINO_ST8(10) GCRT_WINO_ST8(11)
        GCRT_WINO_ST8(12) GCRT_WINO_ST8(13) GCRT_WINO_ST8(14) GCRT_WINO_ST8(15)
    }
#undef GCRT_WINO_ST8
}

/* The transposed narrow kernel, for blocks of at most 4 tiles (images of
 * up to 8x8 outputs): vectors run along the 8 rows of an A panel (one
 * load of U per panel and channel, no broadcast), each tile a broadcast of
 * V; np panels x 4 tiles of accumulators, transposed into P's rows at the
 * end (P rows [0, rows), columns 0-3; the first channel block also zeroes
 * columns 4-15). */
GCRT_WINO_INLINE void gcrt_wino_t4_body(int64_t K, const float *A, int64_t a_ps, int np, int rows, const float *B,
                                        float *P, int acc, const float *pf)
{
    __m256 c[4][4];
    const int64_t pk = pf ? K : 0;
    for (int p = 0; p < 4; p++) c[p][0] = c[p][1] = c[p][2] = c[p][3] = _mm256_setzero_ps();
    for (int64_t k = 0; k < K; k++, A += GCRT_PACK_MR, B += GCRT_WINO_NB) {
        const __m256 b0 = _mm256_broadcast_ss(B), b1 = _mm256_broadcast_ss(B + 1), b2 = _mm256_broadcast_ss(B + 2),
                     b3 = _mm256_broadcast_ss(B + 3);
        if (k < pk && !(k & 1))
            for (int p = 0; p < np; p++) _mm_prefetch((const char *)(pf + p * a_ps + k * GCRT_PACK_MR), _MM_HINT_T1);
#define GCRT_WINO_TP(p)                                                                                   \
    if (np > (p)) {                                                                                       \
        const __m256 a = _mm256_loadu_ps(A + (p) * a_ps);                                                 \
        c[p][0] = _mm256_fmadd_ps(a, b0, c[p][0]), c[p][1] = _mm256_fmadd_ps(a, b1, c[p][1]);             \
        c[p][2] = _mm256_fmadd_ps(a, b2, c[p][2]), c[p][3] = _mm256_fmadd_ps(a, b3, c[p][3]);             \
    }
        GCRT_WINO_TP(0)
        GCRT_WINO_TP(1)
        GCRT_WINO_TP(2)
        GCRT_WINO_TP(3)
#undef GCRT_WINO_TP
    }
    /* c[p][t] holds rows 8p..8p+7 of column t: 4x8 transposes into rows of 4 */
#define GCRT_WINO_TS(p)                                                                                   \
    if (np > (p)) {                                                                                       \
        const __m256 u0 = _mm256_unpacklo_ps(c[p][0], c[p][1]), u1 = _mm256_unpackhi_ps(c[p][0], c[p][1]); \
        const __m256 u2 = _mm256_unpacklo_ps(c[p][2], c[p][3]), u3 = _mm256_unpackhi_ps(c[p][2], c[p][3]); \
        const __m256 q0 = _mm256_shuffle_ps(u0, u2, 0x44), q1 = _mm256_shuffle_ps(u0, u2, 0xee);         \
        const __m256 q2 = _mm256_shuffle_ps(u1, u3, 0x44), q3 = _mm256_shuffle_ps(u1, u3, 0xee);         \
        const __m128 o[8] = {_mm256_castps256_ps128(q0), _mm256_castps256_ps128(q1),                      \
                             _mm256_castps256_ps128(q2), _mm256_castps256_ps128(q3),                      \
                             _mm256_extractf128_ps(q0, 1), _mm256_extractf128_ps(q1, 1),                  \
                             _mm256_extractf128_ps(q2, 1), _mm256_extractf128_ps(q3, 1)};                 \
        for (int r = 0; r < 8 && 8 * (p) + r < rows; r++) {                                              \
            float *d = P + (8 * (p) + r) * GCRT_WINO_NB;                                                  \
            if (acc) {                                                                                    \
                _mm_storeu_ps(d, _mm_add_ps(o[r], _mm_loadu_ps(d)));                                      \
            } else {                                                                                      \
                _mm_storeu_ps(d, o[r]);                                                                   \
                _mm_storeu_ps(d + 4, _mm_setzero_ps());                                                   \
                _mm256_storeu_ps(d + 8, _mm256_setzero_ps());                                             \
            }                                                                                             \
        }                                                                                                 \
    }
    GCRT_WINO_TS(0)
    GCRT_WINO_TS(1)
    GCRT_WINO_TS(2)
    GCRT_WINO_TS(3)
#undef GCRT_WINO_TS
}

/* The kernels with their panel counts as constants (so that the
 * accumulators stay in registers), not inlined into the item loop. */
#define GCRT_WINO_KDEF(name, body, np)                                                                    \
    GCRT_WINO_NOINLINE void name(int64_t K, const float *A, int64_t a_ps, int rows, const float *B, float *P, int acc, \
                                 const float *pf)                                                         \
    {                                                                                                     \
        body(K, A, a_ps, np, rows, B, P, acc, pf);                                                        \
    }
GCRT_WINO_KDEF(gcrt_wino_t4_1, gcrt_wino_t4_body, 1)
GCRT_WINO_KDEF(gcrt_wino_t4_2, gcrt_wino_t4_body, 2)
#if GCRT_WINO_T4_NP == 4
GCRT_WINO_KDEF(gcrt_wino_t4_3, gcrt_wino_t4_body, 3)
GCRT_WINO_KDEF(gcrt_wino_t4_4, gcrt_wino_t4_body, 4)
#endif
GCRT_WINO_KDEF(gcrt_wino_n8_1, gcrt_wino_n8_body, 0)
#if GCRT_WINO_N8_TWO
GCRT_WINO_KDEF(gcrt_wino_n8_2, gcrt_wino_n8_body, 1)
#endif
#endif

#if defined(__AVX512F__)
static inline __m512 gcrt_wino_bc16(const float *p) { return _mm512_set1_ps(*p); }

/* As gcrt_wino_n8, two panels, 16 columns. */
GCRT_WINO_NOINLINE void gcrt_wino_n16(int64_t K, const float *A, int64_t a_ps, int rows, const float *B, float *P,
                                      int acc, const float *pf)
{
    __m512 c[16];
    const float *A1 = A + a_ps;
    const int64_t pk = pf ? K : 0;
    c[0] = _mm512_setzero_ps();
    c[1] = c[2] = c[3] = c[4] = c[5] = c[6] = c[7] = c[8] = c[9] = c[10] = c[11] = c[12] = c[13] = c[14] = c[15] = c[0];
    for (int64_t k = 0; k < K; k++, A += GCRT_PACK_MR, A1 += GCRT_PACK_MR, B += GCRT_WINO_NB) {
        const __m512 b = _mm512_loadu_ps(B);
        if (k < pk && !(k & 1)) {
            _mm_prefetch((const char *)(pf + k * GCRT_PACK_MR), _MM_HINT_T1);
            _mm_prefetch((const char *)(pf + a_ps + k * GCRT_PACK_MR), _MM_HINT_T1);
        }
        GCRT_WINO_R8(c, A, b, _mm512_fmadd_ps, gcrt_wino_bc16)
        GCRT_WINO_R8((c + 8), A1, b, _mm512_fmadd_ps, gcrt_wino_bc16)
    }
#define GCRT_WINO_ST16(r)                                                                                 \
    if ((r) < rows) {                                                                                     \
        float *p = P + (r) * GCRT_WINO_NB;                                                                \
        _mm512_storeu_ps(p, acc ? _mm512_add_ps(c[r], _mm512_loadu_ps(p)) : c[r]);                       \
    }
    GCRT_WINO_ST16(0) GCRT_WINO_ST16(1) GCRT_WINO_ST16(2) GCRT_WINO_ST16(3)
    GCRT_WINO_ST16(4) GCRT_WINO_ST16(5) GCRT_WINO_ST16(6) GCRT_WINO_ST16(7)
    GCRT_WINO_ST16(8) GCRT_WINO_ST16(9) GCRT_WINO_ST16(10) GCRT_WINO_ST16(11)
    GCRT_WINO_ST16(12) GCRT_WINO_ST16(13) GCRT_WINO_ST16(14) GCRT_WINO_ST16(15)
#undef GCRT_WINO_ST16
}
#endif

/* Asks for floats [p, p+n) in the L2 cache: the GEMM's next slices of U,
 * which are not contiguous with the current one (hardware prefetchers
 * would start late). */
static inline void gcrt_wino_prefetch(const float *p, int64_t n)
{
#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
    for (int64_t i = 0; i < n; i += 16) _mm_prefetch((const char *)(p + i), _MM_HINT_T1);
#else
    (void)p, (void)n;
#endif
}

/* P[xi] rows [0, mlen) (+)= U[xi] rows [m0, m0+mlen) x V[xi] over the
 * channels [c0, c0+kcb) (the first block stores, later ones add), for a
 * block of nt tiles. */
static void gcrt_wino_products(const GcrtWinoPlan *pl, const float *V, float *P, int64_t c0, int64_t kcb, int64_t m0,
                               int64_t mlen, int nt)
{
    const GcrtWino *w = pl->w;
    const int64_t xs = pl->Mp * w->C, ps = GCRT_PACK_MR * w->C; /* floats from U[xi] to U[xi+1], panel to panel */
    const int64_t nk = (w->C - c0 - kcb < pl->kc ? w->C - c0 - kcb : pl->kc) * GCRT_PACK_MR;
    const int step = nt <= GCRT_WINO_T4_MAX ? GCRT_WINO_T4_NP * GCRT_PACK_MR
                     : nt <= GCRT_WINO_NARROW ? 2 * GCRT_PACK_MR
                                              : GCRT_MR;
    GcrtTile tile;
    memset(&tile, 0, sizeof tile);
    tile.acc = c0 > 0;
    for (int xi = 0; xi < 36; xi++) {
        const float *B = V + xi * pl->vxs;
        for (int64_t m = m0; m < m0 + mlen; m += step) {
            const int mr = (int)(m0 + mlen - m < step ? m0 + mlen - m : step);
            const float *A = w->U + xi * xs + m / GCRT_PACK_MR * ps + c0 * GCRT_PACK_MR + m % GCRT_PACK_MR;
            float *Pm = P + xi * pl->pxs + (m - m0) * GCRT_WINO_NB;
            /* this slice of U for the next xi (or the next channel block), spread over the narrow
             * kernels' loop, at once for gcrt_ukernel */
            const float *pf = xi < 35 ? A + xs : nk > 0 ? A - 35 * xs + kcb * GCRT_PACK_MR : 0;
            const int64_t npf = xi < 35 ? kcb : nk / GCRT_PACK_MR;
#if GCRT_WINO_NARROW >= 8
            if (nt <= GCRT_WINO_T4_MAX) {
                const float *pt = npf == kcb ? pf : 0;
                switch ((mr + GCRT_PACK_MR - 1) / GCRT_PACK_MR) { /* panels present */
                case 1: gcrt_wino_t4_1(kcb, A, ps, mr, B, Pm, c0 > 0, pt); break;
#if GCRT_WINO_T4_NP == 4
                case 2: gcrt_wino_t4_2(kcb, A, ps, mr, B, Pm, c0 > 0, pt); break;
                case 3: gcrt_wino_t4_3(kcb, A, ps, mr, B, Pm, c0 > 0, pt); break;
                default: gcrt_wino_t4_4(kcb, A, ps, mr, B, Pm, c0 > 0, pt); break;
#else
                default: gcrt_wino_t4_2(kcb, A, ps, mr, B, Pm, c0 > 0, pt); break;
#endif
                }
                continue;
            }
            if (nt <= 8) {
                const float *pt = npf == kcb ? pf : 0;
#if GCRT_WINO_N8_TWO
                if (mr > GCRT_PACK_MR) {
                    gcrt_wino_n8_2(kcb, A, ps, mr, B, Pm, c0 > 0, pt);
                    continue;
                }
#endif
                gcrt_wino_n8_1(kcb, A, 0, mr < GCRT_PACK_MR ? mr : GCRT_PACK_MR, B, Pm, c0 > 0, pt);
                if (mr > GCRT_PACK_MR)
                    gcrt_wino_n8_1(kcb, A + ps, 0, mr - GCRT_PACK_MR, B, Pm + GCRT_PACK_MR * GCRT_WINO_NB, c0 > 0,
                                   pt ? pt + ps : 0);
                continue;
            }
#endif
#if GCRT_WINO_NARROW >= 16
            if (nt <= 16) {
                gcrt_wino_n16(kcb, A, mr > GCRT_PACK_MR ? ps : 0, mr, B, Pm, c0 > 0, npf == kcb ? pf : 0);
                continue;
            }
#endif
            if (pf && m % GCRT_PACK_MR == 0) gcrt_wino_prefetch(pf, npf * GCRT_PACK_MR);
            gcrt_ukernel(kcb, A, 1, GCRT_PACK_MR, mr, B, GCRT_WINO_NB, GCRT_WINO_NB, Pm, GCRT_WINO_NB, &tile);
        }
    }
}

/* ---- the work items ------------------------------------------------------------
 *
 * Item t = (block of 32 tiles t / nmb, block of mb output channels t % nmb).
 * A task's consecutive items share their tile block; when the channels fit
 * one block (C <= KC) the transformed input in the slot is reused. */
static void gcrt_wino_range(void *arg, int64_t t0, int64_t t1, int slot)
{
    const GcrtWinoPlan *pl = (const GcrtWinoPlan *)arg;
    const GcrtWino *w = pl->w;
    float *V = w->ws + (int64_t)slot * pl->slot, *P = V + 36 * pl->vxs;
    int64_t have = -1; /* the tile block whose whole input V holds */
    GcrtWinoRuns rs[2];
    for (int64_t t = t0; t < t1; t++) {
        const int64_t blk = t / pl->nmb, m0 = t % pl->nmb * pl->mb;
        const int64_t mlen = w->M - m0 < pl->mb ? w->M - m0 : pl->mb;
        const int nt = (int)(pl->T - blk * GCRT_WINO_NB < GCRT_WINO_NB ? pl->T - blk * GCRT_WINO_NB : GCRT_WINO_NB);
        gcrt_wino_runs(pl, blk * GCRT_WINO_NB, &rs[0]);
        gcrt_wino_runs(pl, blk * GCRT_WINO_NB + GCRT_WINO_GL, &rs[1]);
        if (w->C == 0) memset(P, 0, sizeof(float) * (size_t)(36 * pl->pxs));
        for (int64_t c0 = 0; c0 < w->C; c0 += pl->kc) {
            const int64_t kcb = w->C - c0 < pl->kc ? w->C - c0 : pl->kc;
            if (!(have == blk && kcb == w->C)) {
                gcrt_wino_input(pl, &rs[0], c0, kcb, V);
                if (nt > GCRT_WINO_NARROW) gcrt_wino_input(pl, &rs[1], c0, kcb, V + GCRT_WINO_GL);
                have = kcb == w->C ? blk : -1;
            }
            gcrt_wino_products(pl, V, P, c0, kcb, m0, mlen, nt);
        }
        gcrt_wino_output(pl, &rs[0], m0, mlen, P);
        if (nt > GCRT_WINO_GL) gcrt_wino_output(pl, &rs[1], m0, mlen, P + GCRT_WINO_GL);
    }
}

/* See gcrt_winograd.h. */
GCRT_FN void gcrt_wino_conv_f32(const GcrtWino *w, const GcThreadPool *pool)
{
    GcrtWinoPlan pl;
    pl.w = w;
    pl.TH = (w->OH + 3) / 4;
    pl.TW = (w->OW + 3) / 4;
    pl.T = w->N * pl.TH * pl.TW;
    pl.Mp = GCRT_WINO_MPAD(w->M);
    pl.mb = GCRT_WINO_ITEM_M(w->N, w->M, w->OH, w->OW);
    pl.nmb = pl.mb ? (w->M + pl.mb - 1) / pl.mb : 0;
    pl.kc = w->C < GCRT_WINO_KC ? w->C : GCRT_WINO_KC;
    pl.slot = GCRT_WINO_SLOT_FLOATS(w->M, w->C);
    pl.vxs = pl.kc * GCRT_WINO_NB + GCRT_WINO_SKEW;
    pl.pxs = pl.mb * GCRT_WINO_NB + GCRT_WINO_SKEW;
    if (w->OH <= 0 || w->OW <= 0 || pl.nmb == 0) return;
    gcrt_parallel_runs(gcrt_pool_for(pool, gcrt_work(w->N * w->M, w->C, 9, w->OH * w->OW)),
                       (pl.T + GCRT_WINO_NB - 1) / GCRT_WINO_NB * pl.nmb, pl.nmb, w->max_slots, gcrt_wino_range, &pl);
}
