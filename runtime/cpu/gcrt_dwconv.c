/* gcrt_dwconv.c — depthwise 2-D convolution, f32, NCHW (see gcrt_dwconv.h).
 *
 * What: Y[n,c] = act(conv(X[n,c], Wt[c]) + bias[c] + res[n,c]) for every
 * image n and channel c, each (n, c) plane filtered by its own KHxKW taps.
 *
 * Why a kernel of its own: a depthwise layer does only KH*KW multiply-adds
 * per output against one load and one store of every element, so it runs
 * at the speed of its memory traffic only if the arithmetic keeps out of
 * the way: no per-tap bounds checks, no gather, no second pass for the
 * epilogue, one vector FMA per tap and V outputs (with data in cache, the
 * FMA rate is then the limit). The generic conv's direct loops check every
 * tap and run scalar.
 *
 * Algorithm. The work is split into tiles: a tile is a block of output
 * rows of one plane (a whole plane when there are enough planes to go
 * round; the split depends on the shape only, never on the thread count,
 * and no output is summed across tiles, so every thread count gives the
 * same bits). What depends on the geometry alone (the column blocks of a
 * row and their lane masks, the flat path's tables) is computed once per
 * task, for all the tiles it runs. The SIMD paths (AVX-512F, AVX2+FMA)
 * keep the sum of V outputs (V = 16 or 8) in one register, starting from
 * the bias, and take one of three routes:
 *   - flat (3x3 and 5x5 filters, stride 1, W == OW, rows of at most V/2,
 *     i.e. the 7x7 maps of MobileNet): a row-wise vector would leave most
 *     lanes idle, so the whole output plane is one flat run of vectors.
 *     With W == OW, output o = oh*OW + ow reads tap (kh, kw) at plane
 *     element o + off(kh, kw), the same offset for every output: each tap
 *     is one load at a fixed offset under a mask that clears the lanes
 *     whose tap lies outside the image (either side, top or bottom); the
 *     offsets and masks, per vector and tap, are tables built per task.
 *   - multi-row (3x3 and 5x5 filters, stride 1 or 2 in both directions,
 *     no dilation; every other such map): the taps are broadcast into
 *     registers once per plane and the rows go RB at a time (AVX-512: 8,
 *     AVX2: 4). A row is cut into blocks of V output columns; per block,
 *     each of the input rows that the RB output rows read is loaded once
 *     and feeds every output row whose window holds it (an input row
 *     serves up to KH output rows with stride 1, two with stride 2), so
 *     loads and shuffles per FMA drop by about KH (stride 1) or 1.5
 *     (stride 2) against one row at a time. Input rows in the top/bottom
 *     padding are skipped. Stride 1 loads each tap's V columns directly
 *     (unaligned loads measured faster than shifting one load into place
 *     per tap). Stride 2, AVX-512, 3-wide filter: the 2V + 1 inputs of a
 *     filter row come in two loads and a broadcast, taps 0 and 1 are their
 *     evens and odds (two-source permutes), tap 2 is tap 0 moved one lane
 *     (valignd). Other stride-2 filters (and AVX2) load the 2V inputs of
 *     taps 2m and 2m + 1 as two vectors and take their evens and odds with
 *     one in-lane shuffle each; that leaves the lanes in a fixed permuted
 *     order, the same for every tap, so the sum is put back in order once
 *     per block.
 *   - row by row (other filter sizes, dilations, a row stride other than
 *     the column stride): one output row at a time over its valid filter
 *     rows; 3x3 and 5x5 keep their taps in registers for the rows whose
 *     window lies inside the image, the others broadcast them from memory.
 *     Stride 1 with AVX-512 and those filters loads V + KW - 1 columns per
 *     filter row and shifts them into place per tap (valignd).
 * In all three, interior blocks (all their loads inside the row) form one
 * run in the middle of the row and load without masks; border blocks
 * (left/right padding, the last partial block, rows narrower than V) load
 * under the lane mask of the columns inside the row, so padding reads as
 * zero and nothing outside the row is touched (masked lanes never fault),
 * and store under the mask of the row. The activation is a clamp to
 * [lo, hi] ([-inf, inf] for none, [0, inf] for ReLU), applied with the
 * residual right after the block's sum, before the store.
 * The portable path (no SIMD ISA, or a column stride other than 1 and 2)
 * starts the row at the bias and, tap by tap, adds the tap times the input
 * over the span of output columns whose input lies in the row: plain loops
 * without checks that compilers auto-vectorize (contiguous for stride 1,
 * de-interleaving loads for stride 2). The residual and the activation
 * follow on the row while it is in L1.
 * Taps are summed in filter order (row-major), starting from the bias, on
 * every route; the SIMD paths fuse each multiply-add (explicit FMA
 * intrinsics, since -std=c99 turns off contraction), the portable path
 * rounds twice. Padding taps contribute nothing: the SIMD paths add a
 * multiply by zero (masked lanes) or skip the tap (padding rows, and
 * taps whose lanes all fall outside the row).
 *
 * Plain C99 plus intrinsics under the ISA macros; single precision only;
 * no allocation, no I/O, no global state; every function is GCRT_FN or
 * static inline. Include after gcrt_cpu.c (gcrt_parallel).
 */
#include "gcrt_dwconv.h"

#include <limits.h>

#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
#include <immintrin.h>
#endif

#if defined(__GNUC__) || defined(__clang__)
#define GCRT_DW_INLINE static inline __attribute__((always_inline, unused))
#define GCRT_DW_NOINLINE __attribute__((noinline, unused))
#else
#define GCRT_DW_INLINE static inline
#define GCRT_DW_NOINLINE
#endif

/* Fully unrolls the tap loops of the 3x3 and 5x5 specializations, so that
 * their taps stay in registers (GCC's -O2 alone does not unroll them;
 * clang unrolls such short constant loops by itself, and its unroll pragma
 * warns on the loops whose trip count is a run-time value). */
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 8
#define GCRT_DW_UNROLL _Pragma("GCC unroll 8")
#define GCRT_DW_UNROLL_TAPS _Pragma("GCC unroll 25")
#else
#define GCRT_DW_UNROLL
#define GCRT_DW_UNROLL_TAPS
#endif

/* Tiles are whole planes unless there are fewer planes than this; then
 * each plane is cut into row blocks so that about this many tiles exist.
 * On a pool of T threads, planes of at least GCRT_DW_SPLIT_ROWS output rows
 * are cut into at least T blocks, and the tiles go block by block (all
 * planes' first rows, then the next rows, ...): the pool's thread i then
 * takes the i-th T-th of the rows of every plane, the part of the image the
 * convolutions before and after give it (they split by position), so it
 * reads its input from its own cache (measured, MobileNetV2 at 2 threads:
 * its 1x1 convolutions 5 to 16% faster). Smaller planes, and the flat
 * path's, stay whole: the two threads would write the two ends of every
 * plane's boundary cache lines (14x14 depthwise layers took about 20%
 * longer split by rows), and the 1x1 convolutions around the flat path's
 * maps (GCRT_CONV_WHOLE) split by channel anyway. */
#define GCRT_DW_MIN_TILES 64
#define GCRT_DW_SPLIT_ROWS 32

/* The call's geometry and tensors, shared by all tiles. */
typedef struct GcrtDwArgs {
    int64_t C, H, W, OH, OW, KH, KW, sh, sw, dh, dw, pt, pl;
    int64_t planes; /* N * C */
    int64_t rows;   /* output rows per tile */
    int64_t blocks; /* tiles per plane; tile t is block t / planes of plane t % planes */
    int flat;       /* the flat path takes the call (gcrt_dw_flat_ok) */
    const float *X, *Wt, *bias, *res;
    float *Y;
    int act;
    float lo, hi;
    float clo, chi; /* the activation as a clamp: [-inf, inf], [0, inf] or [lo, hi] */
} GcrtDwArgs;

/* One tile's plane. */
typedef struct GcrtDwPlane {
    const float *x;   /* input plane [H, W] (NULL when empty) */
    const float *w;   /* filter [KH, KW] */
    const float *res; /* residual plane [OH, OW] or NULL */
    float *y;         /* output plane [OH, OW] */
    float bias;
} GcrtDwPlane;

/* The r in [0, n_out) with 0 <= i0 + r*step < n form [*lo, *hi) (empty:
 * *lo == *hi); step >= 1. */
GCRT_DW_INLINE void gcrt_dw_span(int64_t i0, int64_t step, int64_t n, int64_t n_out, int64_t *lo, int64_t *hi)
{
    int64_t a = i0 >= 0 ? 0 : step == 1 ? -i0 : (-i0 + step - 1) / step;
    int64_t b = i0 >= n ? 0 : step == 1 ? n - i0 : (n - 1 - i0) / step + 1;
    if (b > n_out) b = n_out;
    if (a > b) a = b;
    *lo = a;
    *hi = b;
}

/* &row[i] for an i that may lie outside the row: only masked loads, which
 * never touch the lanes outside it, use the address, but computing it with
 * pointer arithmetic would be undefined outside the array. */
GCRT_DW_INLINE const float *gcrt_dw_at(const float *row, int64_t i)
{
    return (const float *)((uintptr_t)row + (uintptr_t)i * (uintptr_t)sizeof(float));
}

/* Output rows [oh0, oh1) of one plane, portable C (see the file comment). */
GCRT_FN void gcrt_dw_rows_c(const GcrtDwArgs *a, const GcrtDwPlane *p, int64_t oh0, int64_t oh1)
{
    const int64_t W = a->W, OW = a->OW, KW = a->KW, sw = a->sw, dw = a->dw, pl = a->pl;
    const float lo = a->act == GCRT_ACT_RELU ? 0.0f : a->lo, hi = a->hi;
    int64_t span[2 * 16]; /* the column span of each tap kw < 16: the same on every row */
    int64_t oh, kh, kw, j;
    for (kw = 0; kw < KW && kw < 16; kw++) gcrt_dw_span(kw * dw - pl, sw, W, OW, &span[2 * kw], &span[2 * kw + 1]);
    for (oh = oh0; oh < oh1; oh++) {
        float *restrict yr = p->y + oh * OW;
        const int64_t ih0 = oh * a->sh - a->pt;
        int64_t k0, k1;
        for (j = 0; j < OW; j++) yr[j] = p->bias;
        gcrt_dw_span(ih0, a->dh, a->H, a->KH, &k0, &k1);
        for (kh = k0; kh < k1; kh++) {
            const float *restrict xr = p->x + (ih0 + kh * a->dh) * W;
            const float *wr = p->w + kh * KW;
            for (kw = 0; kw < KW; kw++) {
                const float t = wr[kw];
                const int64_t off = kw * dw - pl;
                int64_t c0, c1;
                if (kw < 16) {
                    c0 = span[2 * kw];
                    c1 = span[2 * kw + 1];
                } else {
                    gcrt_dw_span(off, sw, W, OW, &c0, &c1);
                }
                if (sw == 1)
                    for (j = c0; j < c1; j++) yr[j] += t * xr[j + off];
                else
                    for (j = c0; j < c1; j++) yr[j] += t * xr[j * sw + off];
            }
        }
        if (p->res) {
            const float *restrict rr = p->res + oh * OW;
            for (j = 0; j < OW; j++) yr[j] += rr[j];
        }
        if (a->act == GCRT_ACT_RELU)
            for (j = 0; j < OW; j++) yr[j] = yr[j] < lo ? lo : yr[j];
        else if (a->act == GCRT_ACT_CLIP)
            for (j = 0; j < OW; j++) {
                float v = yr[j];
                if (v < lo) v = lo;
                if (v > hi) v = hi;
                yr[j] = v;
            }
    }
}

#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))

/* ---- the vector primitives of the ISA; the row code below is written once against them ---- */
#ifdef __AVX512F__

#define GCRT_DW_V 16
typedef __m512 GcrtDwVec;
typedef __mmask16 GcrtDwMask;

/* The lanes t in [0, V) with 0 <= i0 + t < n; *any: whether there is one. */
GCRT_DW_INLINE GcrtDwMask gcrt_dw_lanes(int64_t i0, int64_t n, int *any)
{
    int64_t lo = i0 < 0 ? -i0 : 0, hi = n - i0;
    if (hi > 16) hi = 16;
    *any = hi > lo;
    return hi > lo ? (GcrtDwMask)((0xffffu >> (16 - hi)) & (0xffffu << lo)) : (GcrtDwMask)0;
}
GCRT_DW_INLINE GcrtDwVec gcrt_dw_set1(float v) { return _mm512_set1_ps(v); }
GCRT_DW_INLINE GcrtDwVec gcrt_dw_load(const float *p) { return _mm512_loadu_ps(p); }
GCRT_DW_INLINE GcrtDwVec gcrt_dw_mload(GcrtDwMask m, const float *p) { return _mm512_maskz_loadu_ps(m, p); }
GCRT_DW_INLINE void gcrt_dw_store(float *p, GcrtDwVec v) { _mm512_storeu_ps(p, v); }
GCRT_DW_INLINE void gcrt_dw_mstore(float *p, GcrtDwMask m, GcrtDwVec v) { _mm512_mask_storeu_ps(p, m, v); }
GCRT_DW_INLINE GcrtDwVec gcrt_dw_fma(GcrtDwVec a, GcrtDwVec b, GcrtDwVec c) { return _mm512_fmadd_ps(a, b, c); }
GCRT_DW_INLINE GcrtDwVec gcrt_dw_add(GcrtDwVec a, GcrtDwVec b) { return _mm512_add_ps(a, b); }
/* max/min return their second operand when either is NaN: a NaN sum stays NaN */
GCRT_DW_INLINE GcrtDwVec gcrt_dw_max(GcrtDwVec a, GcrtDwVec b) { return _mm512_max_ps(a, b); }
GCRT_DW_INLINE GcrtDwVec gcrt_dw_min(GcrtDwVec a, GcrtDwVec b) { return _mm512_min_ps(a, b); }
/* The even (odd) elements of the 2V floats lo:hi, in the lane order 0 1 8 9 | 2 3 10 11 | 4 5 12 13 |
 * 6 7 14 15 (one in-lane shuffle); gcrt_dw_unshuffle puts a vector in that order back in order. */
GCRT_DW_INLINE GcrtDwVec gcrt_dw_evens(GcrtDwVec lo, GcrtDwVec hi) { return _mm512_shuffle_ps(lo, hi, 0x88); }
GCRT_DW_INLINE GcrtDwVec gcrt_dw_odds(GcrtDwVec lo, GcrtDwVec hi) { return _mm512_shuffle_ps(lo, hi, 0xdd); }
/* p[0, n) in the low lanes, zeros above: only those n floats are read. */
GCRT_DW_INLINE GcrtDwVec gcrt_dw_tail(const float *p, int n) { return _mm512_maskz_loadu_ps((__mmask16)((1u << n) - 1u), p); }
/* Elements s .. s + 15 of the 32 floats lo:hi, 0 <= s < 16 (valignd; s is a constant once the
 * tap loops are unrolled). */
#define GCRT_DW_HAVE_SHIFT 1
GCRT_DW_INLINE GcrtDwVec gcrt_dw_shift(GcrtDwVec lo, GcrtDwVec hi, int s)
{
    const __m512i a = _mm512_castps_si512(lo), b = _mm512_castps_si512(hi);
    switch (s) {
    case 0: return lo;
    case 1: return _mm512_castsi512_ps(_mm512_alignr_epi32(b, a, 1));
    case 2: return _mm512_castsi512_ps(_mm512_alignr_epi32(b, a, 2));
    case 3: return _mm512_castsi512_ps(_mm512_alignr_epi32(b, a, 3));
    case 4: return _mm512_castsi512_ps(_mm512_alignr_epi32(b, a, 4));
    default:
        return _mm512_permutex2var_ps(
            lo, _mm512_add_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15), _mm512_set1_epi32(s)),
            hi);
    }
}
GCRT_DW_INLINE GcrtDwVec gcrt_dw_unshuffle(GcrtDwVec v)
{
    return _mm512_permutexvar_ps(_mm512_setr_epi32(0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15), v);
}
/* The mask of lanes t with bit t of b set. */
GCRT_DW_INLINE GcrtDwMask gcrt_dw_bits(unsigned b) { return (GcrtDwMask)b; }
/* The three taps of a 3-wide stride-2 filter row from the 2V + 1 floats x[i0, i0 + 2V] in lo:hi
 * and lane 0 of nx, in order: x[i0 + 2t] (t0), x[i0 + 2t + 1] (t1), x[i0 + 2t + 2] (t2, which is
 * t0 shifted by one lane). Two two-source permutes and one valignd. */
#define GCRT_DW_HAVE_TAPS3_S2 1
GCRT_DW_INLINE void gcrt_dw_taps3_s2(GcrtDwVec lo, GcrtDwVec hi, GcrtDwVec nx, GcrtDwVec *t0, GcrtDwVec *t1,
                                     GcrtDwVec *t2)
{
    const __m512i ie = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    *t0 = _mm512_permutex2var_ps(lo, ie, hi);
    *t1 = _mm512_permutex2var_ps(lo, _mm512_add_epi32(ie, _mm512_set1_epi32(1)), hi);
    *t2 = _mm512_castsi512_ps(_mm512_alignr_epi32(_mm512_castps_si512(nx), _mm512_castps_si512(*t0), 1));
}

#else /* AVX2 + FMA */

#define GCRT_DW_V 8
typedef __m256 GcrtDwVec;
typedef __m256i GcrtDwMask;

/* The lanes t in [0, V) with 0 <= i0 + t < n; *any: whether there is one. */
GCRT_DW_INLINE GcrtDwMask gcrt_dw_lanes(int64_t i0, int64_t n, int *any)
{
    const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    int64_t lo = i0 < 0 ? -i0 : 0, hi = n - i0;
    if (lo > 8) lo = 8;
    if (hi > 8) hi = 8;
    if (hi < 0) hi = 0;
    *any = hi > lo;
    return _mm256_and_si256(_mm256_cmpgt_epi32(_mm256_set1_epi32((int)hi), iota),
                            _mm256_cmpgt_epi32(iota, _mm256_set1_epi32((int)lo - 1)));
}
GCRT_DW_INLINE GcrtDwVec gcrt_dw_set1(float v) { return _mm256_set1_ps(v); }
GCRT_DW_INLINE GcrtDwVec gcrt_dw_load(const float *p) { return _mm256_loadu_ps(p); }
GCRT_DW_INLINE GcrtDwVec gcrt_dw_mload(GcrtDwMask m, const float *p) { return _mm256_maskload_ps(p, m); }
GCRT_DW_INLINE void gcrt_dw_store(float *p, GcrtDwVec v) { _mm256_storeu_ps(p, v); }
GCRT_DW_INLINE void gcrt_dw_mstore(float *p, GcrtDwMask m, GcrtDwVec v) { _mm256_maskstore_ps(p, m, v); }
GCRT_DW_INLINE GcrtDwVec gcrt_dw_fma(GcrtDwVec a, GcrtDwVec b, GcrtDwVec c) { return _mm256_fmadd_ps(a, b, c); }
GCRT_DW_INLINE GcrtDwVec gcrt_dw_add(GcrtDwVec a, GcrtDwVec b) { return _mm256_add_ps(a, b); }
/* max/min return their second operand when either is NaN: a NaN sum stays NaN */
GCRT_DW_INLINE GcrtDwVec gcrt_dw_max(GcrtDwVec a, GcrtDwVec b) { return _mm256_max_ps(a, b); }
GCRT_DW_INLINE GcrtDwVec gcrt_dw_min(GcrtDwVec a, GcrtDwVec b) { return _mm256_min_ps(a, b); }
/* The even (odd) elements of the 2V floats lo:hi, in the lane order 0 1 4 5 | 2 3 6 7 (one in-lane
 * shuffle); gcrt_dw_unshuffle puts a vector in that order back in order (swaps the middle pairs). */
GCRT_DW_INLINE GcrtDwVec gcrt_dw_evens(GcrtDwVec lo, GcrtDwVec hi) { return _mm256_shuffle_ps(lo, hi, 0x88); }
GCRT_DW_INLINE GcrtDwVec gcrt_dw_odds(GcrtDwVec lo, GcrtDwVec hi) { return _mm256_shuffle_ps(lo, hi, 0xdd); }
GCRT_DW_INLINE GcrtDwVec gcrt_dw_unshuffle(GcrtDwVec v)
{
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(v), 0xd8));
}
/* The mask of lanes t with bit t of b set. */
GCRT_DW_INLINE GcrtDwMask gcrt_dw_bits(unsigned b)
{
    const __m256i bit = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
    return _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_set1_epi32((int)b), bit), bit);
}

#endif

/* The masks of one border block, precomputed per task (GcrtDwCols): for tap kw, lanes inside the
 * row of its load (stride 1: [kw]) or of its two loads (stride 2: [kw*2], [kw*2 + 1]); then
 * [KW*SW] the store's lanes, [KW*SW + 1] and [KW*SW + 2] the lanes inside the row of the V
 * columns from the block's first input column and of the V after them. At most GCRT_DW_NMASK
 * masks per call (else the blocks compute their masks themselves). */
#define GCRT_DW_NMASK 96

/* The border block of output columns [ow0, ow0 + V) of one row (see gcrt_dw_row_simd): loads
 * are masked to the columns inside the row (the padding reads as zero), the store to [0, OW).
 * mk: the block's precomputed masks; with them, loads are shared between taps as in the interior
 * loop (DW1). mk NULL: the masks are computed here and taps wholly outside the row skipped. */
GCRT_DW_INLINE void gcrt_dw_block_masked(const GcrtDwArgs *a, const float *xr, int64_t rs, int64_t nk,
                                         const GcrtDwVec *tv, const float *w, const GcrtDwVec *ep, int64_t ow0,
                                         const GcrtDwMask *mk, float *yr, const float *rr, const int NKc,
                                         const int KWc, const int SW, const int DW1)
{
    const int64_t NK = NKc ? NKc : nk, KW = KWc ? KWc : a->KW, W = a->W, dw = DW1 ? 1 : a->dw;
    const int64_t i0 = ow0 * SW - a->pl;
    GcrtDwVec acc = ep[0];
    int64_t r, kw;
    int any;
    GcrtDwMask mo;
    GCRT_DW_UNROLL
    for (r = 0; r < NK; r++) {
        const float *xk = xr + r * rs;
#ifdef GCRT_DW_HAVE_SHIFT
        if (SW == 1 && DW1 && KWc > 1 && mk) {
            const GcrtDwVec lo = gcrt_dw_mload(mk[KW + 1], gcrt_dw_at(xk, i0));
            const GcrtDwVec hi = gcrt_dw_mload(mk[KW + 2], gcrt_dw_at(xk, i0 + GCRT_DW_V));
            GCRT_DW_UNROLL
            for (kw = 0; kw < KW; kw++) {
                const GcrtDwVec t = NKc ? tv[r * KW + kw] : gcrt_dw_set1(w[r * KW + kw]);
                acc = gcrt_dw_fma(t, gcrt_dw_shift(lo, hi, (int)kw), acc);
            }
            continue;
        }
#endif
        GCRT_DW_UNROLL
        for (kw = 0; kw < KW; kw++) {
            const GcrtDwVec t = NKc && KWc ? tv[r * KW + kw] : gcrt_dw_set1(w[r * KW + kw]);
            const int64_t i = i0 + kw * dw;
            GcrtDwVec v;
            if (mk && SW == 1) {
                v = gcrt_dw_mload(mk[kw], gcrt_dw_at(xk, i));
            } else if (mk && DW1) { /* taps 2m and 2m + 1 load the same two vectors */
                const int64_t b = kw & ~(int64_t)1;
                const GcrtDwVec lo = gcrt_dw_mload(mk[b * 2], gcrt_dw_at(xk, i0 + b));
                const GcrtDwVec hi = gcrt_dw_mload(mk[b * 2 + 1], gcrt_dw_at(xk, i0 + b + GCRT_DW_V));
                v = kw & 1 ? gcrt_dw_odds(lo, hi) : gcrt_dw_evens(lo, hi);
            } else if (mk) {
                v = gcrt_dw_evens(gcrt_dw_mload(mk[kw * 2], gcrt_dw_at(xk, i)),
                                  gcrt_dw_mload(mk[kw * 2 + 1], gcrt_dw_at(xk, i + GCRT_DW_V)));
            } else {
                int any0, any1 = 0;
                const GcrtDwMask m0 = gcrt_dw_lanes(i, W, &any0);
                if (SW == 1) {
                    if (!any0) continue;
                    v = gcrt_dw_mload(m0, gcrt_dw_at(xk, i));
                } else {
                    const GcrtDwMask m1 = gcrt_dw_lanes(i + GCRT_DW_V, W, &any1);
                    if (!any0 && !any1) continue;
                    v = gcrt_dw_evens(gcrt_dw_mload(m0, gcrt_dw_at(xk, i)),
                                      gcrt_dw_mload(m1, gcrt_dw_at(xk, i + GCRT_DW_V)));
                }
            }
            acc = gcrt_dw_fma(t, v, acc);
        }
    }
    if (SW == 2) acc = gcrt_dw_unshuffle(acc);
    mo = mk ? mk[KW * SW] : gcrt_dw_lanes(0, a->OW - ow0, &any);
    if (rr) acc = gcrt_dw_add(acc, gcrt_dw_mload(mo, rr + ow0));
    acc = gcrt_dw_min(ep[2], gcrt_dw_max(ep[1], acc));
    gcrt_dw_mstore(yr + ow0, mo, acc);
}

/* One output row: yr[0, OW) from the nk filter rows whose input rows start at xr, xr + rs, ...
 * (all inside the image). Taps: tv[r*KW + kw] (registers: NKc, KWc are compile-time sizes and
 * nk == NKc) or w[r*KW + kw] (broadcast from memory: NKc == 0). ep: bias, clamp low, clamp high.
 * SW: the column stride, 1 or 2; DW1: the column dilation is 1 (compile time). The blocks are nl
 * border blocks, nc interior blocks (every load inside the row: unmasked), then border blocks
 * to the end of the row; mk: the border blocks' masks (mstride apart), or NULL.
 * Interior blocks with DW1 load less: stride 1 (AVX-512) loads V + KW - 1 columns per filter row
 * and shifts them into place for each tap (valignd), stride 2 shares the two loads of taps 2m
 * and 2m + 1 (their evens and odds). */
GCRT_DW_INLINE void gcrt_dw_row_simd(const GcrtDwArgs *a, const float *xr, int64_t rs, int64_t nk, const GcrtDwVec *tv,
                                     const float *w, const GcrtDwVec *ep, int64_t nl, int64_t nc,
                                     const GcrtDwMask *mk, int64_t mstride, float *yr, const float *rr,
                                     const int NKc, const int KWc, const int SW, const int DW1)
{
    const int64_t NK = NKc ? NKc : nk, KW = KWc ? KWc : a->KW, OW = a->OW, dw = DW1 ? 1 : a->dw;
    int64_t ow0 = 0, j = 0, r, kw, i;
    while (ow0 < OW) {
        if (ow0 != nl * GCRT_DW_V || nc == 0) { /* one border block (the j-th) */
            gcrt_dw_block_masked(a, xr, rs, nk, tv, w, ep, ow0, mk ? mk + j * mstride : NULL, yr, rr, NKc, KWc, SW, DW1);
            j++;
            ow0 += GCRT_DW_V;
            continue;
        }
        for (i = 0; i < nc; i++, ow0 += GCRT_DW_V) { /* the interior run */
            const float *xb = xr + ow0 * SW - a->pl;
            GcrtDwVec acc = ep[0];
            GCRT_DW_UNROLL
            for (r = 0; r < NK; r++) {
                const float *xk = xb + r * rs;
#ifdef GCRT_DW_HAVE_SHIFT
                if (SW == 1 && DW1 && KWc > 1) {
                    const GcrtDwVec lo = gcrt_dw_load(xk), hi = gcrt_dw_tail(xk + GCRT_DW_V, KWc - 1);
                    GCRT_DW_UNROLL
                    for (kw = 0; kw < KW; kw++) {
                        const GcrtDwVec t = NKc ? tv[r * KW + kw] : gcrt_dw_set1(w[r * KW + kw]);
                        acc = gcrt_dw_fma(t, gcrt_dw_shift(lo, hi, (int)kw), acc);
                    }
                    continue;
                }
#endif
                GCRT_DW_UNROLL
                for (kw = 0; kw < KW; kw++) {
                    const GcrtDwVec t = NKc && KWc ? tv[r * KW + kw] : gcrt_dw_set1(w[r * KW + kw]);
                    GcrtDwVec v;
                    if (SW == 1) {
                        v = gcrt_dw_load(xk + kw * dw);
                    } else if (DW1) { /* taps 2m and 2m + 1 load the same two vectors */
                        const GcrtDwVec lo = gcrt_dw_load(xk + (kw & ~(int64_t)1));
                        const GcrtDwVec hi = gcrt_dw_load(xk + (kw & ~(int64_t)1) + GCRT_DW_V);
                        v = kw & 1 ? gcrt_dw_odds(lo, hi) : gcrt_dw_evens(lo, hi);
                    } else {
                        v = gcrt_dw_evens(gcrt_dw_load(xk + kw * dw), gcrt_dw_load(xk + kw * dw + GCRT_DW_V));
                    }
                    acc = gcrt_dw_fma(t, v, acc);
                }
            }
            if (SW == 2) acc = gcrt_dw_unshuffle(acc);
            if (rr) acc = gcrt_dw_add(acc, gcrt_dw_load(rr + ow0));
            gcrt_dw_store(yr + ow0, gcrt_dw_min(ep[2], gcrt_dw_max(ep[1], acc)));
        }
    }
}

/* The column blocks of a call, the same for every row and plane: nl border blocks, nc interior
 * blocks (all their loads inside the row: unmasked), then border blocks to the end of the row;
 * ok: mk holds the border blocks' masks (see gcrt_dw_block_masked), ms apart. */
typedef struct GcrtDwCols {
    int64_t nl, nc, ms;
    int ok;
    GcrtDwMask mk[GCRT_DW_NMASK];
} GcrtDwCols;

/* Fills cl for the call a. */
GCRT_DW_INLINE void gcrt_dw_cols_init(const GcrtDwArgs *a, GcrtDwCols *cl)
{
    const int64_t SW = a->sw, KW = a->KW, W = a->W, OW = a->OW, nb = (OW + GCRT_DW_V - 1) / GCRT_DW_V;
    /* interior blocks start at ow0 in [c_lo, c_hi]: all their loads lie inside the row */
    const int64_t c_lo = (a->pl + SW - 1) / SW;
    int64_t c_hi = W + a->pl - (KW - 1) * a->dw - GCRT_DW_V * SW, nl, nc;
    c_hi = c_hi < 0 ? -1 : c_hi / SW;
    if (c_hi > OW - GCRT_DW_V) c_hi = OW - GCRT_DW_V;
    nl = (c_lo + GCRT_DW_V - 1) / GCRT_DW_V;
    if (nl > nb) nl = nb;
    nc = c_hi >= nl * GCRT_DW_V ? (c_hi - nl * GCRT_DW_V) / GCRT_DW_V + 1 : 0;
    cl->nl = nl;
    cl->nc = nc;
    cl->ms = KW * SW + 3;
    cl->ok = (SW == 1 || SW == 2) && (nb - nc) * cl->ms <= GCRT_DW_NMASK;
    if (cl->ok) {
        const int64_t ms = cl->ms;
        int64_t j, b, kw, h;
        int any;
        for (j = 0, b = 0; b < nb; b++) {
            const int64_t ow0 = b * GCRT_DW_V;
            if (b >= nl && b < nl + nc) continue;
            for (kw = 0; kw < KW; kw++)
                for (h = 0; h < SW; h++)
                    cl->mk[j * ms + kw * SW + h] =
                        gcrt_dw_lanes(ow0 * SW - a->pl + kw * a->dw + h * GCRT_DW_V, W, &any);
            cl->mk[j * ms + KW * SW] = gcrt_dw_lanes(0, OW - ow0, &any);
            cl->mk[j * ms + KW * SW + 1] = gcrt_dw_lanes(ow0 * SW - a->pl, W, &any);
            cl->mk[j * ms + KW * SW + 2] = gcrt_dw_lanes(ow0 * SW - a->pl + GCRT_DW_V, W, &any);
            j++;
        }
    }
}

/* Output rows per pass of the multi-row path (measured: AVX-512 8 better than 4 or 6, also for
 * 5x5 whose taps then spill to memory operands; AVX2, 16 registers, 4 better than 2 or 3). */
#ifdef __AVX512F__
#define GCRT_DW_RB 8
#else
#define GCRT_DW_RB 4
#endif

/* 1: stride-2 3-wide filter rows take gcrt_dw_taps3_s2 (sums in lane order), 0: evens/odds. */
#ifdef GCRT_DW_HAVE_TAPS3_S2
#define GCRT_DW_TAPS3_S2 1
#else
#define GCRT_DW_TAPS3_S2 0
#endif

/* One block of V output columns from ow0 in output rows oh, oh + 1, ..., oh + nr - 1 (nr <= RB)
 * of one plane (see gcrt_dw_rows_multi): x is the plane, ih0 the input row of the first output
 * row's first tap; input rows ih0 + i, i in [ilo, ihi), lie in the image (the others are padding
 * and skipped). m: the block's masks (as in gcrt_dw_block_masked) or NULL for an interior block.
 * Loads each input row's vectors once and feeds them to every output row whose window holds
 * that row (the same taps in the same order as one row at a time). */
GCRT_DW_INLINE void gcrt_dw_block_multi(const GcrtDwArgs *a, const float *x, int64_t ih0, int64_t ilo, int64_t ihi,
                                        int64_t nr, const GcrtDwVec *tv, const GcrtDwVec *ep, int64_t ow0,
                                        const GcrtDwMask *m, float *yr, const float *rr, const int KHc, const int KWc,
                                        const int SW, const int FULL)
{
    const int64_t W = a->W, OW = a->OW, i0 = ow0 * SW - a->pl;
    const int RB = GCRT_DW_RB;
    GcrtDwVec acc[GCRT_DW_RB];
    int64_t r, i, kw;
    GCRT_DW_UNROLL
    for (r = 0; r < RB; r++) acc[r] = ep[0];
    GCRT_DW_UNROLL_TAPS
    for (i = 0; i < SW * (RB - 1) + KHc; i++) {
        const float *xi = gcrt_dw_at(x, (ih0 + i) * W); /* dereferenced only inside the image */
        GcrtDwVec sv[5];
        if (!FULL && (i < ilo || i >= ihi)) continue; /* padding */
        if (SW == 1) {
            GCRT_DW_UNROLL
            for (kw = 0; kw < KWc; kw++)
                sv[kw] = m ? gcrt_dw_mload(m[kw], gcrt_dw_at(xi, i0 + kw)) : gcrt_dw_load(xi + i0 + kw);
        } else if (GCRT_DW_TAPS3_S2 && KWc == 3) {
#ifdef GCRT_DW_HAVE_TAPS3_S2
            /* x[i0 + 2V] for a border block: the lane V - 2 of the tap-2 load's second half */
            const GcrtDwVec lo = m ? gcrt_dw_mload(m[0], gcrt_dw_at(xi, i0)) : gcrt_dw_load(xi + i0);
            const GcrtDwVec hi =
                m ? gcrt_dw_mload(m[1], gcrt_dw_at(xi, i0 + GCRT_DW_V)) : gcrt_dw_load(xi + i0 + GCRT_DW_V);
            const GcrtDwVec nx = m ? gcrt_dw_mload((GcrtDwMask)((m[5] >> (GCRT_DW_V - 2)) & 1),
                                                   gcrt_dw_at(xi, i0 + 2 * GCRT_DW_V))
                                   : gcrt_dw_set1(xi[i0 + 2 * GCRT_DW_V]);
            gcrt_dw_taps3_s2(lo, hi, nx, &sv[0], &sv[1], &sv[2]);
#endif
        } else { /* taps 2b and 2b + 1 load the same two vectors: their evens and odds */
            GCRT_DW_UNROLL
            for (kw = 0; kw < KWc; kw += 2) {
                const GcrtDwVec lo = m ? gcrt_dw_mload(m[kw * 2], gcrt_dw_at(xi, i0 + kw)) : gcrt_dw_load(xi + i0 + kw);
                const GcrtDwVec hi = m ? gcrt_dw_mload(m[kw * 2 + 1], gcrt_dw_at(xi, i0 + kw + GCRT_DW_V))
                                       : gcrt_dw_load(xi + i0 + kw + GCRT_DW_V);
                sv[kw] = gcrt_dw_evens(lo, hi);
                if (kw + 1 < KWc) sv[kw + 1] = gcrt_dw_odds(lo, hi);
            }
        }
        GCRT_DW_UNROLL
        for (r = 0; r < RB; r++) {
            const int64_t kh = i - SW * r;
            if (kh < 0 || kh >= KHc || (!FULL && r >= nr)) continue;
            GCRT_DW_UNROLL
            for (kw = 0; kw < KWc; kw++) acc[r] = gcrt_dw_fma(tv[kh * KWc + kw], sv[kw], acc[r]);
        }
    }
    GCRT_DW_UNROLL
    for (r = 0; r < RB; r++) {
        GcrtDwVec v = SW == 2 && !(GCRT_DW_TAPS3_S2 && KWc == 3) ? gcrt_dw_unshuffle(acc[r]) : acc[r];
        if (!FULL && r >= nr) break;
        if (m) {
            if (rr) v = gcrt_dw_add(v, gcrt_dw_mload(m[KWc * SW], rr + r * OW + ow0));
            gcrt_dw_mstore(yr + r * OW + ow0, m[KWc * SW], gcrt_dw_min(ep[2], gcrt_dw_max(ep[1], v)));
        } else {
            if (rr) v = gcrt_dw_add(v, gcrt_dw_load(rr + r * OW + ow0));
            gcrt_dw_store(yr + r * OW + ow0, gcrt_dw_min(ep[2], gcrt_dw_max(ep[1], v)));
        }
    }
}

/* Output rows [oh0, oh1) of one plane, GCRT_DW_RB at a time: stride SW (1 or 2) in both
 * directions, dilation 1, the KHc x KWc taps tv in registers, the column blocks and border
 * masks of cl (ok). */
GCRT_DW_INLINE void gcrt_dw_rows_multi(const GcrtDwArgs *a, const GcrtDwCols *cl, const GcrtDwPlane *p, int64_t oh0,
                                       int64_t oh1, const GcrtDwVec *tv, const GcrtDwVec *ep, const int KHc,
                                       const int KWc, const int SW)
{
    const int RB = GCRT_DW_RB;
    const int64_t OW = a->OW, ni = SW * (RB - 1) + KHc;
    int64_t oh, ow0;
    for (oh = oh0; oh < oh1; oh += RB) {
        const int64_t ih0 = oh * SW - a->pt, nr = oh1 - oh < RB ? oh1 - oh : RB;
        const int64_t ilo = ih0 < 0 ? -ih0 : 0, ihi = a->H - ih0 < ni ? a->H - ih0 : ni;
        const float *rr = p->res ? p->res + oh * OW : NULL;
        float *yr = p->y + oh * OW;
        int64_t j = 0;
        for (ow0 = 0; ow0 < OW; ow0 += GCRT_DW_V) {
            const int interior = ow0 >= cl->nl * GCRT_DW_V && ow0 < (cl->nl + cl->nc) * GCRT_DW_V;
            const GcrtDwMask *m = interior ? NULL : cl->mk + j * cl->ms;
            if (nr == RB && ilo == 0 && ihi == ni) /* the common case, without the checks */
                gcrt_dw_block_multi(a, p->x, ih0, 0, ni, nr, tv, ep, ow0, m, yr, rr, KHc, KWc, SW, 1);
            else
                gcrt_dw_block_multi(a, p->x, ih0, ilo, ihi, nr, tv, ep, ow0, m, yr, rr, KHc, KWc, SW, 0);
            j += !interior;
        }
    }
}

/* Output rows [oh0, oh1) of one plane, column stride SW (1 or 2); KHc/KWc: the filter size when
 * known at compile time (its taps then live in registers), else 0; DW1: the column dilation is 1.
 * With the taps in registers, row stride SW and dilation 1, the rows go GCRT_DW_RB at a time
 * (gcrt_dw_rows_multi). Else row by row: rows whose window lies wholly inside the image take the
 * register taps; the others (top/bottom padding) take the taps of their valid filter rows from
 * memory. cl: the call's column blocks and masks. */
GCRT_DW_INLINE void gcrt_dw_rows_simd(const GcrtDwArgs *a, const GcrtDwCols *cl, const GcrtDwPlane *p, int64_t oh0,
                                      int64_t oh1, const int KHc, const int KWc, const int SW, const int DW1)
{
    const int64_t KH = KHc ? KHc : a->KH, KW = KWc ? KWc : a->KW, W = a->W, OW = a->OW, dh = a->dh;
    const int64_t nl = cl->nl, nc = cl->nc, ms = cl->ms;
    const GcrtDwMask *mkp = cl->ok ? cl->mk : NULL;
    int64_t oh, t;
    GcrtDwVec tv[25], ep[3];
    ep[0] = gcrt_dw_set1(p->bias);
    ep[1] = gcrt_dw_set1(a->clo);
    ep[2] = gcrt_dw_set1(a->chi);
    if (KHc && KWc) {
        GCRT_DW_UNROLL_TAPS
        for (t = 0; t < KHc * KWc; t++) tv[t] = gcrt_dw_set1(p->w[t]);
        if (DW1 && a->sh == SW && dh == 1 && mkp) {
            gcrt_dw_rows_multi(a, cl, p, oh0, oh1, tv, ep, KHc, KWc, SW);
            return;
        }
    }
    for (oh = oh0; oh < oh1; oh++) {
        const int64_t ih0 = oh * a->sh - a->pt;
        const float *rr = p->res ? p->res + oh * OW : NULL;
        float *yr = p->y + oh * OW;
        int64_t k0, k1;
        gcrt_dw_span(ih0, dh, a->H, KH, &k0, &k1);
        if (KHc && KWc && k0 == 0 && k1 == KHc)
            gcrt_dw_row_simd(a, p->x + ih0 * W, dh * W, KHc, tv, p->w, ep, nl, nc, mkp, ms, yr, rr, KHc, KWc, SW, DW1);
        else if (k0 < k1)
            gcrt_dw_row_simd(a, p->x + (ih0 + k0 * dh) * W, dh * W, k1 - k0, tv, p->w + k0 * KW, ep, nl, nc, mkp, ms,
                             yr, rr, 0, KWc, SW, DW1);
        else /* every tap in padding: the epilogue of the bias alone */
            for (t = 0; t < OW; t += GCRT_DW_V) {
                int any;
                const GcrtDwMask mo = gcrt_dw_lanes(0, OW - t, &any);
                GcrtDwVec acc = ep[0];
                if (rr) acc = gcrt_dw_add(acc, gcrt_dw_mload(mo, rr + t));
                gcrt_dw_mstore(yr + t, mo, gcrt_dw_min(ep[2], gcrt_dw_max(ep[1], acc)));
            }
    }
}

/* ---- small planes as flat vectors ---- */

/* The flat path's limit: vectors of output per plane. */
#define GCRT_DW_FLAT_MAXV 64

/* The flat path's tables, the same for every plane of a call: tap k reads x + off[k] + o0 for
 * the vector of outputs [o0, o0 + V) of the plane x under the mask m[v*KK + k] of vector v (bit
 * t: output o0 + t exists and its tap lies in the image). */
typedef struct GcrtDwFlat {
    int64_t nv; /* vectors per plane */
    int64_t off[25];
    uint16_t m[GCRT_DW_FLAT_MAXV * 25];
} GcrtDwFlat;

/* Whether the flat path takes the call: a 3x3 or 5x5 filter, stride 1, on at least
 * GCRT_DW_MIN_TILES whole planes of at most GCRT_DW_FLAT_MAXV vectors, with W == OW (the input
 * offset of a tap is then the same for every output: input (oh + dy, ow + dx) is plane element
 * oh*OW + ow + dy*W + dx) and rows of at most V/2 (wider rows waste fewer lanes on the multi-row
 * path, which measured faster). */
GCRT_DW_INLINE int gcrt_dw_flat_ok(const GcrtDwArgs *a)
{
    const unsigned v = GCRT_DW_VARIANT(a->KH, a->KW, a->dw, a->sw) & GCRT_DW_VARIANTS;
    const int k = v == GCRT_DW_K3_S1 || v == GCRT_DW_K5_S1;
    if (!k || a->planes < GCRT_DW_MIN_TILES || a->H <= 0 || a->OH * a->OW > GCRT_DW_FLAT_MAXV * GCRT_DW_V) return 0;
    return a->sh == 1 && a->sw == 1 && a->W == a->OW && a->OW <= GCRT_DW_V / 2;
}

/* Fills f for the call a (gcrt_dw_flat_ok): a tap's valid outputs are a block of rows times a
 * block of columns (gcrt_dw_span), set in the masks as one run of bits per row. */
GCRT_DW_INLINE void gcrt_dw_flat_init(const GcrtDwArgs *a, GcrtDwFlat *f)
{
    const int64_t KH = a->KH, KW = a->KW, KK = KH * KW, OW = a->OW;
    int64_t kh, kw, v;
    f->nv = (a->OH * OW + GCRT_DW_V - 1) / GCRT_DW_V;
    for (v = 0; v < f->nv * KK; v++) f->m[v] = 0;
    for (kh = 0; kh < KH; kh++)
        for (kw = 0; kw < KW; kw++) {
            const int64_t k = kh * KW + kw, dy = kh * a->dh - a->pt, dx = kw * a->dw - a->pl;
            int64_t r0, r1, c0, c1, oh;
            f->off[k] = dy * a->W + dx;
            gcrt_dw_span(dy, 1, a->H, a->OH, &r0, &r1);
            gcrt_dw_span(dx, 1, a->W, OW, &c0, &c1);
            for (oh = r0; oh < r1 && c0 < c1; oh++) {
                int64_t b = oh * OW + c0;
                const int64_t e = oh * OW + c1;
                while (b < e) {
                    const int64_t lo = b % GCRT_DW_V, n = GCRT_DW_V - lo < e - b ? GCRT_DW_V - lo : e - b;
                    f->m[b / GCRT_DW_V * KK + k] |= (uint16_t)(((1u << n) - 1u) << lo);
                    b += n;
                }
            }
        }
}

/* One plane on the flat path: the outputs as one flat run of vectors, every tap one masked load
 * at its fixed offset in the input plane; KKc taps in registers. */
GCRT_DW_INLINE void gcrt_dw_flat_plane(const GcrtDwArgs *a, const GcrtDwFlat *f, const GcrtDwPlane *p, const int KKc)
{
    const int64_t n = a->OH * a->OW, nv = f->nv;
    GcrtDwVec tv[25], ep[3];
    int64_t v;
    int k;
    ep[0] = gcrt_dw_set1(p->bias);
    ep[1] = gcrt_dw_set1(a->clo);
    ep[2] = gcrt_dw_set1(a->chi);
    GCRT_DW_UNROLL_TAPS
    for (k = 0; k < KKc; k++) tv[k] = gcrt_dw_set1(p->w[k]);
    for (v = 0; v < nv; v++) {
        const int64_t o0 = v * GCRT_DW_V;
        const uint16_t *m = f->m + v * KKc;
        GcrtDwVec acc = ep[0];
        int any;
        GcrtDwMask mo;
        GCRT_DW_UNROLL_TAPS
        for (k = 0; k < KKc; k++)
            acc = gcrt_dw_fma(tv[k], gcrt_dw_mload(gcrt_dw_bits(m[k]), gcrt_dw_at(p->x, o0 + f->off[k])), acc);
        if (o0 + GCRT_DW_V <= n && !p->res) {
            gcrt_dw_store(p->y + o0, gcrt_dw_min(ep[2], gcrt_dw_max(ep[1], acc)));
            continue;
        }
        mo = gcrt_dw_lanes(0, n - o0, &any);
        if (p->res) acc = gcrt_dw_add(acc, gcrt_dw_mload(mo, p->res + o0));
        gcrt_dw_mstore(p->y + o0, mo, gcrt_dw_min(ep[2], gcrt_dw_max(ep[1], acc)));
    }
}

/* Tiles (whole planes) [t0, t1) on the flat path; the tables are built once for them. */
GCRT_FN void gcrt_dw_flat_tiles(const GcrtDwArgs *a, int64_t t0, int64_t t1)
{
    GcrtDwFlat f;
    int64_t q;
    gcrt_dw_flat_init(a, &f);
    for (q = t0; q < t1; q++) {
        const int64_t c = q % a->C;
        GcrtDwPlane p;
        p.x = a->X + q * a->H * a->W;
        p.w = a->Wt + c * a->KH * a->KW;
        p.res = a->res ? a->res + q * a->OH * a->OW : NULL;
        p.y = a->Y + q * a->OH * a->OW;
        p.bias = a->bias ? a->bias[c] : 0.0f;
        if ((GCRT_DW_VARIANTS & GCRT_DW_K3_S1) && a->KH == 3) gcrt_dw_flat_plane(a, &f, &p, 9);
        else if (GCRT_DW_VARIANTS & GCRT_DW_K5_S1) gcrt_dw_flat_plane(a, &f, &p, 25);
    }
}

/* The SIMD specializations of a plane's rows, one function each: kept apart (not inlined into
 * gcrt_dw_rows), each compiles in a fraction of the time the six took as one function (MobileNetV2's
 * model source with all six: 12.8 s as one function, 7.7 s as six). */
#define GCRT_DW_ROWS_FN(name, KHc, KWc, SW, DW1)                                                           \
    static GCRT_DW_NOINLINE void name(const GcrtDwArgs *a, const GcrtDwCols *cl, const GcrtDwPlane *p,     \
                                      int64_t oh0, int64_t oh1)                                            \
    {                                                                                                      \
        gcrt_dw_rows_simd(a, cl, p, oh0, oh1, KHc, KWc, SW, DW1);                                          \
    }
GCRT_DW_ROWS_FN(gcrt_dw_rows_k3_s1, 3, 3, 1, 1)
GCRT_DW_ROWS_FN(gcrt_dw_rows_k5_s1, 5, 5, 1, 1)
GCRT_DW_ROWS_FN(gcrt_dw_rows_kany_s1, 0, 0, 1, 0)
GCRT_DW_ROWS_FN(gcrt_dw_rows_k3_s2, 3, 3, 2, 1)
GCRT_DW_ROWS_FN(gcrt_dw_rows_k5_s2, 5, 5, 2, 1)
GCRT_DW_ROWS_FN(gcrt_dw_rows_kany_s2, 0, 0, 2, 0)

/* Rows of one plane: the SIMD specializations (3x3 and 5x5 without column dilation, any size;
 * stride 1 or 2) that GCRT_DW_VARIANTS keeps, else portable C. cl: the call's column blocks
 * (gcrt_dw_cols_init). Each test names its bit of the constant mask first, so that a
 * specialization the mask leaves out is never called, and never compiled. */
GCRT_FN void gcrt_dw_rows(const GcrtDwArgs *a, const GcrtDwCols *cl, const GcrtDwPlane *p, int64_t oh0, int64_t oh1)
{
    const unsigned v = GCRT_DW_VARIANT(a->KH, a->KW, a->dw, a->sw) & GCRT_DW_VARIANTS;
    if ((GCRT_DW_VARIANTS & GCRT_DW_K3_S1) && v == GCRT_DW_K3_S1) gcrt_dw_rows_k3_s1(a, cl, p, oh0, oh1);
    else if ((GCRT_DW_VARIANTS & GCRT_DW_K5_S1) && v == GCRT_DW_K5_S1) gcrt_dw_rows_k5_s1(a, cl, p, oh0, oh1);
    else if ((GCRT_DW_VARIANTS & GCRT_DW_KANY_S1) && v == GCRT_DW_KANY_S1) gcrt_dw_rows_kany_s1(a, cl, p, oh0, oh1);
    else if ((GCRT_DW_VARIANTS & GCRT_DW_K3_S2) && v == GCRT_DW_K3_S2) gcrt_dw_rows_k3_s2(a, cl, p, oh0, oh1);
    else if ((GCRT_DW_VARIANTS & GCRT_DW_K5_S2) && v == GCRT_DW_K5_S2) gcrt_dw_rows_k5_s2(a, cl, p, oh0, oh1);
    else if ((GCRT_DW_VARIANTS & GCRT_DW_KANY_S2) && v == GCRT_DW_KANY_S2) gcrt_dw_rows_kany_s2(a, cl, p, oh0, oh1);
    else gcrt_dw_rows_c(a, p, oh0, oh1);
}

#else

/* Nothing to precompute for the portable path. */
typedef struct GcrtDwCols {
    int unused;
} GcrtDwCols;

GCRT_DW_INLINE void gcrt_dw_cols_init(const GcrtDwArgs *a, GcrtDwCols *cl)
{
    (void)a;
    cl->unused = 0;
}

/* Rows of one plane: portable C. */
GCRT_FN void gcrt_dw_rows(const GcrtDwArgs *a, const GcrtDwCols *cl, const GcrtDwPlane *p, int64_t oh0, int64_t oh1)
{
    (void)cl;
    gcrt_dw_rows_c(a, p, oh0, oh1);
}

#endif

/* Tiles [t0, t1) of the call described by arg (a GcrtDwArgs). */
GCRT_FN void gcrt_dw_tiles(void *arg, int64_t t0, int64_t t1, int slot)
{
    const GcrtDwArgs *a = (const GcrtDwArgs *)arg;
    int64_t t, q = t0 % a->planes, b = t0 / a->planes, c = q % a->C; /* plane, row block, channel */
    GcrtDwCols cl;
    (void)slot;
#ifdef GCRT_DW_V
    if (a->flat) {
        gcrt_dw_flat_tiles(a, t0, t1);
        return;
    }
#endif
    gcrt_dw_cols_init(a, &cl);
    for (t = t0; t < t1; t++) {
        const int64_t oh0 = b * a->rows, oh1 = oh0 + a->rows < a->OH ? oh0 + a->rows : a->OH;
        GcrtDwPlane p;
        p.x = a->H > 0 ? a->X + q * a->H * a->W : NULL;
        p.w = a->Wt + c * a->KH * a->KW;
        p.res = a->res ? a->res + q * a->OH * a->OW : NULL;
        p.y = a->Y + q * a->OH * a->OW;
        p.bias = a->bias ? a->bias[c] : 0.0f;
        gcrt_dw_rows(a, &cl, &p, oh0, oh1);
        if (++c == a->C) c = 0;
        if (++q == a->planes) {
            q = 0;
            b++;
        }
    }
}

/* The geometry, tensors and epilogue of a call (not its tiling). */
GCRT_FN void gcrt_dw_setup(GcrtDwArgs *ap, int64_t N, int64_t C, int64_t H, int64_t W, int64_t OH, int64_t OW,
                           int64_t KH, int64_t KW, int64_t sh, int64_t sw, int64_t dh, int64_t dw, int64_t pt,
                           int64_t pl, const float *X, const float *Wt, const GcrtEpi *epi, float *Y)
{
    GcrtDwArgs a;
    a.planes = N * C;
    a.C = C;
    a.H = W > 0 ? H : 0; /* an empty image: every tap is padding */
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
    a.Wt = Wt;
    a.Y = Y;
    a.bias = epi ? epi->bias : NULL;
    a.res = epi ? epi->res : NULL;
    a.act = epi ? epi->act : GCRT_ACT_NONE;
    a.lo = epi ? epi->lo : 0.0f;
    a.hi = epi ? epi->hi : 0.0f;
    a.clo = a.act == GCRT_ACT_RELU ? 0.0f : a.act == GCRT_ACT_CLIP ? a.lo : gcrt_bits_f32(0xff800000u);
    a.chi = a.act == GCRT_ACT_CLIP ? a.hi : gcrt_bits_f32(0x7f800000u);
#ifdef GCRT_DW_V
    a.flat = gcrt_dw_flat_ok(&a);
#else
    a.flat = 0;
#endif
    a.rows = OH;
    a.blocks = 1;
    *ap = a;
}

/* See gcrt_dwconv.h. */
GCRT_FN void gcrt_dwconv2d_f32(int64_t N, int64_t C, int64_t H, int64_t W, int64_t OH, int64_t OW,
                               int64_t KH, int64_t KW, int64_t sh, int64_t sw, int64_t dh, int64_t dw,
                               int64_t pt, int64_t pl, const float *X, const float *Wt, const GcrtEpi *epi,
                               float *Y, const GcThreadPool *pool)
{
    GcrtDwArgs a;
    const int64_t planes = N * C;
    int64_t threads;
    if (planes <= 0 || OH <= 0 || OW <= 0) return;
    /* a depthwise tap costs about 4 of a GEMM's packed multiply-adds (loads, no reuse across channels) */
    pool = gcrt_pool_for(pool, gcrt_work(4, planes, OH * OW, KH * KW));
    threads = gcrt_pool_threads(pool);
    gcrt_dw_setup(&a, N, C, H, W, OH, OW, KH, KW, sh, sw, dh, dw, pt, pl, X, Wt, epi, Y);
    /* row blocks per plane (see GCRT_DW_MIN_TILES); a tile's outputs do not depend on them */
    a.blocks = planes < GCRT_DW_MIN_TILES ? (GCRT_DW_MIN_TILES + planes - 1) / planes : 1;
    if (a.blocks < threads && OH >= GCRT_DW_SPLIT_ROWS && !a.flat) a.blocks = threads;
    if (a.blocks > OH) a.blocks = OH;
    a.rows = (OH + a.blocks - 1) / a.blocks;
#ifdef GCRT_DW_V
    /* whole passes of the multi-row path (a block of fewer rows costs as much as a full pass):
     * unequal blocks, which the pool's threads even out by taking each other's last tasks */
    if (a.blocks > 1) a.rows = (a.rows + GCRT_DW_RB - 1) / GCRT_DW_RB * GCRT_DW_RB;
#endif
    a.blocks = (OH + a.rows - 1) / a.rows;
    gcrt_parallel(pool, planes * a.blocks, GCRT_NO_SCRATCH, gcrt_dw_tiles, &a);
}

/* ---- a depthwise conv and the 1x1 conv that reads it, by bands of output rows ----
 *
 * See gcrt_dwconv.h (gcrt_dwconv_pw_f32). A band's depthwise rows are computed plane by plane
 * with the row kernels above (the flat path takes whole planes, so it is not used) into the
 * task's slot, C planes of the band's nb positions, then the 1x1 conv reads the slot as its
 * input with row stride nb: the W^T tiles of gcrt_conv_range (gcrt_conv_wt_tiles), on the
 * band's positions. */

typedef struct GcrtDwPw {
    GcrtDwArgs a;       /* the depthwise conv (one image); a.Y is not used */
    const GcrtConv *pw; /* the 1x1 conv; pw->X is not used */
    int64_t rows;       /* output rows per band */
    int64_t slot_floats;
} GcrtDwPw;

/* Bands [t0, t1): each band's depthwise rows go to the task's slot of pw->ws, C planes of the
 * band's positions, and the 1x1 conv multiplies them from there (positions as the tile's rows). */
GCRT_FN void gcrt_dwpw_bands(void *arg, int64_t t0, int64_t t1, int slot)
{
    const GcrtDwPw *f = (const GcrtDwPw *)arg;
    const GcrtDwArgs *a = &f->a;
    const GcrtConv *pw = f->pw;
    const int64_t C = a->C, OW = a->OW, K = C;
    float *S = pw->ws + (int64_t)slot * f->slot_floats;
    GcrtDwCols cl;
    gcrt_dw_cols_init(a, &cl);
    for (int64_t b = t0; b < t1; b++) {
        const int64_t oh0 = b * f->rows, oh1 = oh0 + f->rows < a->OH ? oh0 + f->rows : a->OH;
        const int64_t nb = (oh1 - oh0) * OW, p0 = oh0 * OW;
        for (int64_t c = 0; c < C; c++) {
            GcrtDwPlane p;
            p.x = a->H > 0 ? a->X + c * a->H * a->W : NULL;
            p.w = a->Wt + c * a->KH * a->KW;
            p.res = NULL;
            /* output row oh lands at S + c*nb + (oh - oh0)*OW */
            p.y = (float *)((uintptr_t)(S + c * nb) - (uintptr_t)p0 * sizeof(float));
            p.bias = a->bias ? a->bias[c] : 0.0f;
            gcrt_dw_rows(a, &cl, &p, oh0, oh1);
        }
        for (int64_t k0 = 0; k0 < K; k0 += GCRT_CONV_KC) {
            const int64_t kc = K - k0 < GCRT_CONV_KC ? K - k0 : GCRT_CONV_KC;
            gcrt_conv_wt_tiles(pw, S + k0 * nb, nb, nb, p0, 0, pw->M, k0, kc, K);
        }
    }
}

/* See gcrt_dwconv.h. */
GCRT_FN void gcrt_dwconv_pw_f32(int64_t C, int64_t H, int64_t W, int64_t OH, int64_t OW, int64_t KH, int64_t KW,
                                int64_t sh, int64_t sw, int64_t pt, int64_t pl, const float *X, const float *Wd,
                                const GcrtEpi *epi, const GcrtConv *pw, const GcThreadPool *pool)
{
    GcrtDwPw f;
    int64_t threads;
    if (C <= 0 || OH <= 0 || OW <= 0 || pw->M <= 0) return;
    /* per output position: the depthwise taps (about 4 multiply-adds' worth each) and M multiply-adds */
    pool = gcrt_pool_for(pool, gcrt_work(C, OH * OW, pw->M + 4 * KH * KW, 1));
    threads = gcrt_pool_threads(pool);
    if (threads > pw->max_slots) threads = pw->max_slots > 0 ? pw->max_slots : 1;
    gcrt_dw_setup(&f.a, 1, C, H, W, OH, OW, KH, KW, sh, sw, 1, 1, pt, pl, X, Wd, epi, NULL);
    f.a.flat = 0; /* a band is rows of the planes: the multi-row and row paths */
    f.pw = pw;
    f.rows = gcrt_dwpw_rows(OH, OW, threads);
    f.slot_floats = C * f.rows * OW;
    gcrt_parallel(pool, (OH + f.rows - 1) / f.rows, pw->max_slots, gcrt_dwpw_bands, &f);
}

/* ---- a 1x1 conv and the depthwise conv that reads it, by bands of output rows ----
 *
 * See gcrt_dwconv.h (gcrt_pw_dwconv_f32). A task owns a contiguous share of the depthwise output
 * rows (one task per thread: a band picks up the rows the band before computed) and goes through
 * it GCRT_PWDW_ROWS rows at a time, whole multi-row passes but the last. A band's input rows are
 * the 1x1 conv's micro-tiles of gcrt_conv_range (W in 8-row panels, 32 positions), stored into
 * the slot with row stride GCRT_PWDW_SLOT_ROWS x W per channel; the depthwise row kernels then
 * read the slot as an image of those rows (top padding shifted by the band's first input row). */

typedef struct GcrtPwDw {
    GcrtDwArgs a;        /* the depthwise conv (one image); a.X unused, a.H and a.pt set per band */
    const GcrtConv *pw;  /* the 1x1 conv; pw->Y is not written, pw->ws holds the slots */
    int64_t srows;       /* input rows a slot holds */
    int64_t slot_floats; /* C x srows x W */
} GcrtPwDw;

/* The 1x1 conv's rows [r0, r1), every channel, into the slot from its row s0: channel m's row r
 * at S + m * srows * W + (s0 + r - r0) * W. */
static void gcrt_pwdw_expand(const GcrtPwDw *f, float *S, int64_t r0, int64_t r1, int64_t s0)
{
    const GcrtConv *pw = f->pw;
    const int64_t W = pw->W, P = pw->H * pw->W, K = pw->C, M = pw->M, ldc = f->srows * W;
    const int64_t q0 = r0 * W, q1 = r1 * W;
    for (int64_t p0 = q0; p0 < q1; p0 += GCRT_PACK_NR) {
        const int nr = (int)(q1 - p0 < GCRT_PACK_NR ? q1 - p0 : GCRT_PACK_NR);
        float *y = S + s0 * W + (p0 - q0);
        for (int64_t k0 = 0; k0 < K; k0 += GCRT_CONV_KC) {
            const int64_t kc = K - k0 < GCRT_CONV_KC ? K - k0 : GCRT_CONV_KC;
            for (int64_t m0 = 0; m0 < M; m0 += GCRT_MR) {
                const int mr = (int)(M - m0 < GCRT_MR ? M - m0 : GCRT_MR);
                const float *A = pw->Wt + m0 / GCRT_PACK_MR * GCRT_PACK_MR * K + k0 * GCRT_PACK_MR + m0 % GCRT_PACK_MR;
                GcrtTile tile = gcrt_conv_tile(pw, m0, k0, kc, K);
                gcrt_ukernel(kc, A, 1, GCRT_PACK_MR, mr, pw->X + k0 * P + p0, P, nr, y + m0 * ldc, ldc, &tile);
            }
        }
    }
}

/* Depthwise output rows [t0, t1), GCRT_PWDW_ROWS at a time. */
GCRT_FN void gcrt_pwdw_bands(void *arg, int64_t t0, int64_t t1, int slot)
{
    const GcrtPwDw *f = (const GcrtPwDw *)arg;
    const int64_t C = f->a.C, H = f->pw->H, W = f->pw->W, plane = f->srows * W;
    float *S = f->pw->ws + (int64_t)slot * f->slot_floats;
    GcrtDwArgs a = f->a;
    GcrtDwCols cl;
    int64_t h0 = 0, h1 = 0; /* the input rows the slot holds */
    gcrt_dw_cols_init(&a, &cl);
    for (int64_t oh0 = t0; oh0 < t1; oh0 += GCRT_PWDW_ROWS) {
        const int64_t oh1 = oh0 + GCRT_PWDW_ROWS < t1 ? oh0 + GCRT_PWDW_ROWS : t1;
        const int64_t lo = oh0 * a.sh - f->a.pt, hi = (oh1 - 1) * a.sh - f->a.pt + a.KH;
        const int64_t r0 = lo > 0 ? lo : 0, r1 = hi < H ? hi : H;
        if (r1 <= r0) {
            h0 = h1 = 0; /* every tap in padding */
        } else if (h1 > r0 && r0 >= h0) { /* rows [r0, h1) are in the slot already */
            if (r0 > h0)
                for (int64_t c = 0; c < C; c++)
                    memmove(S + c * plane, S + c * plane + (r0 - h0) * W, sizeof(float) * (size_t)((h1 - r0) * W));
            gcrt_pwdw_expand(f, S, h1, r1, h1 - r0);
            h0 = r0, h1 = r1;
        } else {
            gcrt_pwdw_expand(f, S, r0, r1, 0);
            h0 = r0, h1 = r1;
        }
        /* the slot as an image of rows [r0, r1): output row oh reads slot row oh * sh - (pt + r0) + kh */
        a.H = r1 > r0 ? r1 - r0 : 0;
        a.pt = f->a.pt + r0;
        for (int64_t c = 0; c < C; c++) {
            GcrtDwPlane p;
            p.x = a.H > 0 ? S + c * plane : NULL;
            p.w = a.Wt + c * a.KH * a.KW;
            p.res = a.res ? a.res + c * a.OH * a.OW : NULL;
            p.y = a.Y + c * a.OH * a.OW;
            p.bias = a.bias ? a.bias[c] : 0.0f;
            gcrt_dw_rows(&a, &cl, &p, oh0, oh1);
        }
    }
}

/* See gcrt_dwconv.h. */
GCRT_FN void gcrt_pw_dwconv_f32(const GcrtConv *pw, int64_t OH, int64_t OW, int64_t KH, int64_t KW, int64_t sh,
                                int64_t sw, int64_t pt, int64_t pl, const float *Wd, const GcrtEpi *epi, float *Y,
                                const GcThreadPool *pool)
{
    GcrtPwDw f;
    int64_t threads;
    const int64_t C = pw->M;
    if (C <= 0 || OH <= 0 || OW <= 0) return;
    /* per input position: the 1x1 conv's K multiply-adds; per output: the taps (about 4 each) */
    pool = gcrt_pool_for(pool, gcrt_work(C, pw->H * pw->W * pw->C + OH * OW * 4 * KH * KW, 1, 1));
    threads = gcrt_pool_threads(pool);
    if (threads > pw->max_slots) threads = pw->max_slots > 0 ? pw->max_slots : 1;
    gcrt_dw_setup(&f.a, 1, C, pw->H, pw->W, OH, OW, KH, KW, sh, sw, 1, 1, pt, pl, NULL, Wd, epi, Y);
    f.a.flat = 0; /* bands of rows: the multi-row and row paths */
    f.pw = pw;
    f.srows = GCRT_PWDW_SLOT_ROWS(KH, sh) < pw->H ? GCRT_PWDW_SLOT_ROWS(KH, sh) : pw->H;
    f.slot_floats = C * f.srows * pw->W;
    /* tiles: the output rows; one task per thread (runs of ceil(OH / threads) rows: fewer runs than
     * twice the threads), task j owning slot j */
    gcrt_parallel_runs(threads > 1 ? pool : NULL, OH, (OH + threads - 1) / threads, pw->max_slots, gcrt_pwdw_bands,
                       &f);
}
