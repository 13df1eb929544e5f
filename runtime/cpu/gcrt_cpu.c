/* gcrt_cpu.c — the shared part of graphc's fast CPU kernels: the split of
 * a kernel's tiles over a thread pool (see gcrt_cpu.h). */
#include "gcrt_cpu.h"

#include <math.h>

/* The tile epilogue runs once per vector of the tile: inlined, its tests of
 * the tile's options hoist out of the store loop. */
#if defined(__GNUC__) || defined(__clang__)
#define GCRT_ALWAYS_INLINE static inline __attribute__((always_inline))
#else
#define GCRT_ALWAYS_INLINE static inline
#endif

/* A hint to fetch the cache line at p (no effect on results). */
#if defined(__GNUC__) || defined(__clang__)
#define GCRT_PREFETCH(p) __builtin_prefetch((p), 0, 3)
#else
#define GCRT_PREFETCH(p) ((void)(p))
#endif

/* More tasks than threads lets the pool's threads balance the work (a core
 * slowed by another process, or tiles of unequal cost, no longer holds the
 * others at the end of every kernel). On this project's VMs one of the two
 * cores often runs slower for a while (a single-thread FMA loop measured
 * 118 and 157 GFLOP/s on the two at the same moment).
 *
 * A kernel with per-task scratch splits finer too, when the pool runs at
 * most as many tasks at once as there are slots (n_threads <= max_slots, at
 * most 32) and its runs (`grain` consecutive tiles that share what a task
 * builds in its slot: an im2col panel, a Winograd input block) number at
 * least 2 per thread: tasks then take whole runs, and a task takes a free
 * slot when it starts and gives it back when it ends (a bit mask, atomic),
 * so no two running tasks share one. Task boundaries inside runs would
 * build their panels again (measured: a W^T im2col conv, 128 -> 256
 * channels at 28x28 stride 2, 14% slower at 2 threads split by tiles, 7
 * to 10% faster split by its runs, bench/conv_ab.sh). With one task per
 * thread, ResNet-18's Winograd convs at 56x56 waited for the slower core:
 * split into their 7 runs, conv_ab.sh's KIND 3 measured them 4 to 15%
 * faster at 2 threads (three runs). Otherwise (few runs, no __atomic
 * builtins, a pool with more threads than slots) such a kernel gets one
 * task per slot, task j owning slot j. */
#define GCRT_TASKS_PER_THREAD 4
#if defined(__GNUC__) || defined(__clang__)
#define GCRT_HAVE_SLOT_MASK 1
#else
#define GCRT_HAVE_SLOT_MASK 0
#endif

typedef struct GcrtSplit {
    GcrtRangeFn fn;
    void *arg;
    int64_t n_tiles, grain, n_runs, n_tasks; /* task j: runs [j n_runs / n_tasks, (j+1) n_runs / n_tasks) */
    int slots;           /* 0: no scratch (every task gets slot 0); 1: task j owns slot j; 2: free_slots */
    uint32_t free_slots; /* slots == 2: bit i set while slot i is free (atomic) */
} GcrtSplit;

static void gcrt_split_task(void *arg, int64_t j)
{
    GcrtSplit *s = (GcrtSplit *)arg;
    const int64_t t0 = j * s->n_runs / s->n_tasks * s->grain, e = (j + 1) * s->n_runs / s->n_tasks * s->grain;
    const int64_t t1 = e < s->n_tiles ? e : s->n_tiles;
    if (t0 >= t1) return;
#if GCRT_HAVE_SLOT_MASK
    if (s->slots == 2) {
        /* never empty: at most n_threads <= max_slots tasks run at once */
        uint32_t v = __atomic_load_n(&s->free_slots, __ATOMIC_RELAXED);
        int slot;
        for (;;) {
            if (v == 0) { /* only a pool that breaks its n_threads promise gets here: wait for a slot */
                v = __atomic_load_n(&s->free_slots, __ATOMIC_RELAXED);
                continue;
            }
            if (__atomic_compare_exchange_n(&s->free_slots, &v, v & (v - 1u), 1, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
                break;
        }
        slot = __builtin_ctz(v);
        s->fn(s->arg, t0, t1, slot);
        __atomic_or_fetch(&s->free_slots, 1u << slot, __ATOMIC_RELEASE);
        return;
    }
#endif
    s->fn(s->arg, t0, t1, s->slots == 1 ? (int)j : 0);
}

/* See gcrt_cpu.h. */
GCRT_FN void gcrt_parallel_runs(const GcThreadPool *pool, int64_t n_tiles, int64_t grain, int max_slots,
                                GcrtRangeFn fn, void *arg)
{
    const int64_t threads = gcrt_pool_threads(pool);
    int64_t k = threads;
    if (k > n_tiles) k = n_tiles;
    if (k > max_slots) k = max_slots;
    if (n_tiles <= 0) return;
    if (k <= 1) {
        fn(arg, 0, n_tiles, 0);
        return;
    }
    GcrtSplit s;
    s.fn = fn;
    s.arg = arg;
    s.n_tiles = n_tiles;
    s.grain = 1;
    s.n_runs = n_tiles;
    s.n_tasks = k;
    s.slots = max_slots >= GCRT_NO_SCRATCH ? 0 : 1;
    s.free_slots = 0;
    if (grain < 1) grain = 1;
    if (GCRT_HAVE_SLOT_MASK && s.slots == 1 && threads <= max_slots && max_slots <= 32 &&
        (n_tiles + grain - 1) / grain >= 2 * k) {
        s.slots = 2;
        s.free_slots = max_slots == 32 ? 0xffffffffu : (1u << max_slots) - 1u;
        s.grain = grain;
        s.n_runs = (n_tiles + grain - 1) / grain;
    }
    if (s.slots != 1) s.n_tasks = k * GCRT_TASKS_PER_THREAD < s.n_runs ? k * GCRT_TASKS_PER_THREAD : s.n_runs;
    pool->parallel_for(pool->ctx, s.n_tasks, gcrt_split_task, &s);
}

/* See gcrt_cpu.h. */
GCRT_FN void gcrt_parallel(const GcThreadPool *pool, int64_t n_tiles, int max_slots, GcrtRangeFn fn, void *arg)
{
    gcrt_parallel_runs(pool, n_tiles, 1, max_slots, fn, arg);
}

/* ---- the micro-kernel -----------------------------------------------------
 *
 * One call computes a tile of C of mr <= GCRT_MR rows and nr <= 32 columns
 * over the whole K: for each k it loads 32 values of B's row k (masked past
 * nr), broadcasts a(r,k) for each row and accumulates with fused
 * multiply-adds in registers; the epilogue (bias, residual, activation) is
 * applied on the registers before the one store of the tile. K is never
 * split, so each element is one sequential sum over k: the reduction order
 * depends on nothing but the shapes. Rows past mr re-read row mr-1 (their
 * results are not stored), so A needs no padding.
 *   AVX-512F: 8 rows x 2 zmm (16 accumulators);
 *   AVX2+FMA: 4 rows x 4 ymm (16 accumulators, B reloaded per vector);
 *   portable: 2 rows x 32 floats in arrays the compiler vectorizes.
 */

typedef struct GcrtTile {
    int acc;               /* add the tile's current contents of C first (a later K block) */
    int last;              /* the last K block: apply the epilogue below (else store raw) */
    const float *bias_row; /* bias_row[r] for row r of the tile, or NULL */
    const float *bias_col; /* bias_col[j], or NULL */
    const float *res;      /* res[r*ldr + j], or NULL */
    int64_t ldr;
    int act;
    float lo, hi;
} GcrtTile;

#if defined(__AVX512F__)
#include <immintrin.h>
#define GCRT_MR 8

/* e^x: x = k ln2 + r (two-constant ln2), e^r by its Taylor polynomial to
 * r^7 (|r| <= ln2/2: truncation under 1e-8 relative), times 2^k by
 * vscalefps (exact, with overflow to inf and gradual underflow). NaN in,
 * NaN out. */
static inline __m512 gcrt_exp512(__m512 x)
{
    x = _mm512_min_ps(_mm512_set1_ps(88.8f), _mm512_max_ps(_mm512_set1_ps(-104.0f), x));
    __m512 k = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504f)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fnmadd_ps(k, _mm512_set1_ps(0.693145752f), x);
    r = _mm512_fnmadd_ps(k, _mm512_set1_ps(1.42860677e-6f), r);
    __m512 p = _mm512_set1_ps(1.0f / 5040.0f);
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 720.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 120.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 24.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 6.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
    return _mm512_scalef_ps(p, k);
}

/* tanh: the odd Taylor polynomial to x^11 below |x| = 0.25 (no
 * cancellation near 0), (1 - t) / (1 + t) with t = e^-2|x| above; the
 * sign of x restored. */
static inline __m512 gcrt_tanh512(__m512 v)
{
    const __m512 sign = _mm512_set1_ps(-0.0f);
    __m512 a = _mm512_andnot_ps(sign, v), a2 = _mm512_mul_ps(a, a);
    __m512 p = _mm512_set1_ps(-1382.0f / 155925.0f);
    p = _mm512_fmadd_ps(p, a2, _mm512_set1_ps(62.0f / 2835.0f));
    p = _mm512_fmadd_ps(p, a2, _mm512_set1_ps(-17.0f / 315.0f));
    p = _mm512_fmadd_ps(p, a2, _mm512_set1_ps(2.0f / 15.0f));
    p = _mm512_fmadd_ps(p, a2, _mm512_set1_ps(-1.0f / 3.0f));
    p = _mm512_fmadd_ps(_mm512_mul_ps(p, a2), a, a);
    __m512 t = gcrt_exp512(_mm512_mul_ps(a, _mm512_set1_ps(-2.0f)));
    __m512 q = _mm512_div_ps(_mm512_sub_ps(_mm512_set1_ps(1.0f), t), _mm512_add_ps(_mm512_set1_ps(1.0f), t));
    __m512 y = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, _mm512_set1_ps(0.25f), _CMP_LT_OQ), q, p);
    return _mm512_or_ps(y, _mm512_and_ps(v, sign));
}

GCRT_ALWAYS_INLINE __m512 gcrt_epi512(__m512 v, const GcrtTile *t, const float *c, int r, int j, __mmask16 m)
{
    if (t->acc) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(m, c));
    if (!t->last) return v;
    if (t->bias_row) v = _mm512_add_ps(v, _mm512_set1_ps(t->bias_row[r]));
    if (t->bias_col) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(m, t->bias_col + j));
    if (t->res) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(m, t->res + r * t->ldr + j));
    /* max/min return their second operand when either is NaN: NaN propagates */
    if (t->act == GCRT_ACT_RELU) v = _mm512_max_ps(_mm512_setzero_ps(), v);
    else if (t->act == GCRT_ACT_CLIP)
        v = _mm512_min_ps(_mm512_set1_ps(t->hi), _mm512_max_ps(_mm512_set1_ps(t->lo), v));
    else if (t->act == GCRT_ACT_TANH) v = gcrt_tanh512(v);
    else if (t->act == GCRT_ACT_SIGMOID)
        v = _mm512_div_ps(_mm512_set1_ps(1.0f), _mm512_add_ps(_mm512_set1_ps(1.0f), gcrt_exp512(_mm512_sub_ps(_mm512_setzero_ps(), v))));
    return v;
}

/* Rows [0, mr) of an 8 x 32 tile of accumulators (columns 0-15 in acc[r][0]
 * under mask m0, 16-31 in acc[r][1] under m1) through the epilogue into C. */
GCRT_ALWAYS_INLINE void gcrt_store_acc512(const __m512 acc[GCRT_MR][2], int mr, __mmask16 m0, __mmask16 m1, float *C,
                                          int64_t ldc, const GcrtTile *t)
{
    for (int r = 0; r < mr; r++) {
        float *c = C + r * ldc;
        _mm512_mask_storeu_ps(c, m0, gcrt_epi512(acc[r][0], t, c, r, 0, m0));
        if (m1) _mm512_mask_storeu_ps(c + 16, m1, gcrt_epi512(acc[r][1], t, c + 16, r, 16, m1));
    }
}

/* The same tile stored transposed: element (r, j) to C[j*ldc + r] through
 * the epilogue with j as its row (bias_row[j], res[j*ldr + r]). Per half
 * of 16 columns, an 8 x 16 transpose in registers: unpacklo/hi pair rows
 * (0,1), (2,3), ... within each 128-bit lane, shuffle_ps makes u[c] hold,
 * in lane L, rows 0-3 (u[c + 4]: rows 4-7) of column 4L + c, and one
 * permutex2var puts column 4L + c's 8 rows in the low 8 lanes. */
GCRT_ALWAYS_INLINE void gcrt_store_acc512_t(const __m512 acc[GCRT_MR][2], int mr, int nr, float *C, int64_t ldc,
                                            const GcrtTile *t)
{
    const __mmask16 m = (__mmask16)((1u << mr) - 1u);
    for (int h = 0; h < 2 && 16 * h < nr; h++) {
        __m512 u[8];
        for (int q = 0; q < 2; q++) { /* rows 4q .. 4q + 3 */
            const __m512 lo01 = _mm512_unpacklo_ps(acc[4 * q][h], acc[4 * q + 1][h]);
            const __m512 hi01 = _mm512_unpackhi_ps(acc[4 * q][h], acc[4 * q + 1][h]);
            const __m512 lo23 = _mm512_unpacklo_ps(acc[4 * q + 2][h], acc[4 * q + 3][h]);
            const __m512 hi23 = _mm512_unpackhi_ps(acc[4 * q + 2][h], acc[4 * q + 3][h]);
            u[4 * q] = _mm512_shuffle_ps(lo01, lo23, 0x44);
            u[4 * q + 1] = _mm512_shuffle_ps(lo01, lo23, 0xee);
            u[4 * q + 2] = _mm512_shuffle_ps(hi01, hi23, 0x44);
            u[4 * q + 3] = _mm512_shuffle_ps(hi01, hi23, 0xee);
        }
        for (int L = 0; L < 4; L++) {
            const __m512i idx = _mm512_setr_epi32(4 * L, 4 * L + 1, 4 * L + 2, 4 * L + 3, 16 + 4 * L, 17 + 4 * L,
                                                  18 + 4 * L, 19 + 4 * L, 0, 0, 0, 0, 0, 0, 0, 0);
            for (int c = 0; c < 4; c++) {
                const int j = 16 * h + 4 * L + c;
                if (j >= nr) return;
                float *cj = C + j * ldc;
                const __m512 v = _mm512_permutex2var_ps(u[c], idx, u[c + 4]);
                _mm512_mask_storeu_ps(cj, m, gcrt_epi512(v, t, cj, j, 0, m));
            }
        }
    }
}

GCRT_ALWAYS_INLINE void gcrt_ukernel_body(int64_t K, const float *A, int64_t a_rs, int64_t a_ks, int mr, const float *B,
                                          int64_t b_ks, int nr, float *C, int64_t ldc, const GcrtTile *t, int trans,
                                          const char *pf, int64_t pf_lines, const int32_t *ind)
{
    __mmask16 m0 = (__mmask16)(nr >= 16 ? 0xffffu : (1u << nr) - 1u);
    __mmask16 m1 = (__mmask16)(nr >= 32 ? 0xffffu : nr > 16 ? (1u << (nr - 16)) - 1u : 0u);
    int64_t o[GCRT_MR];
    for (int r = 0; r < GCRT_MR; r++) o[r] = (r < mr ? r : mr - 1) * a_rs;
    __m512 c00 = _mm512_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00, c30 = c00,
           c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00, c60 = c00, c61 = c00, c70 = c00, c71 = c00;
#define GCRT_ROW(cA, cB, off)                                                                             \
    a = _mm512_set1_ps(A[off]);                                                                       \
    cA = _mm512_fmadd_ps(a, b0, cA);                                                                  \
    cB = _mm512_fmadd_ps(a, b1, cB);
#define GCRT_LOOP(O0, O1, O2, O3, O4, O5, O6, O7)                                                         \
    for (int64_t k = 0; k < K; k++) {                                                                 \
        __m512 b0 = _mm512_maskz_loadu_ps(m0, B), b1 = _mm512_maskz_loadu_ps(m1, B + 16), a;          \
        GCRT_ROW(c00, c01, O0)                                                                        \
        GCRT_ROW(c10, c11, O1)                                                                        \
        GCRT_ROW(c20, c21, O2)                                                                        \
        GCRT_ROW(c30, c31, O3)                                                                        \
        GCRT_ROW(c40, c41, O4)                                                                        \
        GCRT_ROW(c50, c51, O5)                                                                        \
        GCRT_ROW(c60, c61, O6)                                                                        \
        GCRT_ROW(c70, c71, O7)                                                                        \
        A += a_ks;                                                                                    \
        B += b_ks;                                                                                    \
    }
#define GCRT_LOOP4(O0, O1, O2, O3)                                                                        \
    for (int64_t k = 0; k < K; k++) {                                                                 \
        __m512 b0 = _mm512_maskz_loadu_ps(m0, B), b1 = _mm512_maskz_loadu_ps(m1, B + 16), a;          \
        GCRT_ROW(c00, c01, O0)                                                                        \
        GCRT_ROW(c10, c11, O1)                                                                        \
        GCRT_ROW(c20, c21, O2)                                                                        \
        GCRT_ROW(c30, c31, O3)                                                                        \
        A += a_ks;                                                                                    \
        B += b_ks;                                                                                    \
    }
    if (ind) { /* row r of step k: A[ind[k] + o[r]] (a_ks unused), with pf prefetched as below */
        const int64_t o0 = o[0], o1 = o[1], o2 = o[2], o3 = o[3], o4 = o[4], o5 = o[5], o6 = o[6], o7 = o[7];
        const int64_t every = pf_lines > 0 && K / pf_lines > 0 ? K / pf_lines : 1;
        int64_t left = pf ? pf_lines : 0, count = every;
        const float *base = A;
        for (int64_t k = 0; k < K; k++) {
            __m512 b0 = _mm512_maskz_loadu_ps(m0, B), b1 = _mm512_maskz_loadu_ps(m1, B + 16), a;
            A = base + ind[k];
            GCRT_ROW(c00, c01, o0)
            GCRT_ROW(c10, c11, o1)
            GCRT_ROW(c20, c21, o2)
            GCRT_ROW(c30, c31, o3)
            GCRT_ROW(c40, c41, o4)
            GCRT_ROW(c50, c51, o5)
            GCRT_ROW(c60, c61, o6)
            GCRT_ROW(c70, c71, o7)
            B += b_ks;
            if (--count == 0 && left > 0) {
                _mm_prefetch(pf, _MM_HINT_T1);
                pf += 64;
                left--;
                count = every;
            }
        }
    } else if (a_rs == 1 && a_ks == GCRT_PACK_MR && mr == GCRT_MR) { /* a full packed panel: offsets are constants */
        GCRT_LOOP(0, 1, 2, 3, 4, 5, 6, 7)
    } else if (mr <= 4) { /* a short tail: half the work */
        const int64_t o0 = o[0], o1 = o[1], o2 = o[2], o3 = o[3];
        GCRT_LOOP4(o0, o1, o2, o3)
    } else {
        const int64_t o0 = o[0], o1 = o[1], o2 = o[2], o3 = o[3], o4 = o[4], o5 = o[5], o6 = o[6], o7 = o[7];
        GCRT_LOOP(o0, o1, o2, o3, o4, o5, o6, o7)
    }
#undef GCRT_LOOP4
#undef GCRT_LOOP
#undef GCRT_ROW
    const __m512 acc[GCRT_MR][2] = {{c00, c01}, {c10, c11}, {c20, c21}, {c30, c31},
                                    {c40, c41}, {c50, c51}, {c60, c61}, {c70, c71}};
    if (trans) gcrt_store_acc512_t(acc, mr, nr, C, ldc, t);
    else gcrt_store_acc512(acc, mr, m0, m1, C, ldc, t);
}

static void gcrt_ukernel(int64_t K, const float *A, int64_t a_rs, int64_t a_ks, int mr, const float *B,
                         int64_t b_ks, int nr, float *C, int64_t ldc, const GcrtTile *t)
{
    gcrt_ukernel_body(K, A, a_rs, a_ks, mr, B, b_ks, nr, C, ldc, t, 0, 0, 0, 0);
}

/* See the generic gcrt_ukernel_t and gcrt_ukernel_t_ind below. Here the
 * tile is transposed in registers, with no trip through memory: gathering
 * the columns of a tile just stored waits on those stores (the kernel on
 * the tiles of ResNet-18's 512-channel 7x7 conv, on its own: 67 GFLOP/s
 * with the gathers, 92 to 122 without). The indirect form also prefetches
 * pf_lines lines from pf into L2, one every K / pf_lines steps. */
#define GCRT_HAVE_UKERNEL_T 1
static void gcrt_ukernel_t_ind(int64_t K, const float *A, const int32_t *ind, int64_t a_rs, int mr, const float *B,
                               int64_t b_ks, int nr, float *C, int64_t ldc, const GcrtTile *t, const char *pf,
                               int64_t pf_lines)
{
    gcrt_ukernel_body(K, A, a_rs, 0, mr, B, b_ks, nr, C, ldc, t, 1, pf, pf_lines, ind);
}
static void gcrt_ukernel_t(int64_t K, const float *A, int64_t a_rs, int64_t a_ks, int mr, const float *B,
                           int64_t b_ks, int nr, float *C, int64_t ldc, const GcrtTile *t)
{
    gcrt_ukernel_body(K, A, a_rs, a_ks, mr, B, b_ks, nr, C, ldc, t, 1, 0, 0, 0);
}

/* One row (a GEMV: batch-1 Gemm/MatMul): 32 columns, k unrolled by 4 with
 * separate accumulators (8 independent FMA chains instead of 2), summed
 * at the end in a fixed order. */
#define GCRT_HAVE_ROW_KERNEL 1
static void gcrt_ukernel_row(int64_t K, const float *A, int64_t a_ks, const float *B, int64_t b_ks, int nr, float *C,
                             const GcrtTile *t)
{
    __mmask16 m0 = (__mmask16)(nr >= 16 ? 0xffffu : (1u << nr) - 1u);
    __mmask16 m1 = (__mmask16)(nr >= 32 ? 0xffffu : nr > 16 ? (1u << (nr - 16)) - 1u : 0u);
    __m512 p0 = _mm512_setzero_ps(), p1 = p0, q0 = p0, q1 = p0, r0 = p0, r1 = p0, s0 = p0, s1 = p0;
    int64_t k = 0;
    for (; k + 4 <= K; k += 4) {
        __m512 a = _mm512_set1_ps(A[0]);
        p0 = _mm512_fmadd_ps(a, _mm512_maskz_loadu_ps(m0, B), p0);
        p1 = _mm512_fmadd_ps(a, _mm512_maskz_loadu_ps(m1, B + 16), p1);
        a = _mm512_set1_ps(A[a_ks]);
        q0 = _mm512_fmadd_ps(a, _mm512_maskz_loadu_ps(m0, B + b_ks), q0);
        q1 = _mm512_fmadd_ps(a, _mm512_maskz_loadu_ps(m1, B + b_ks + 16), q1);
        a = _mm512_set1_ps(A[2 * a_ks]);
        r0 = _mm512_fmadd_ps(a, _mm512_maskz_loadu_ps(m0, B + 2 * b_ks), r0);
        r1 = _mm512_fmadd_ps(a, _mm512_maskz_loadu_ps(m1, B + 2 * b_ks + 16), r1);
        a = _mm512_set1_ps(A[3 * a_ks]);
        s0 = _mm512_fmadd_ps(a, _mm512_maskz_loadu_ps(m0, B + 3 * b_ks), s0);
        s1 = _mm512_fmadd_ps(a, _mm512_maskz_loadu_ps(m1, B + 3 * b_ks + 16), s1);
        A += 4 * a_ks;
        B += 4 * b_ks;
    }
    for (; k < K; k++) {
        __m512 a = _mm512_set1_ps(A[0]);
        p0 = _mm512_fmadd_ps(a, _mm512_maskz_loadu_ps(m0, B), p0);
        p1 = _mm512_fmadd_ps(a, _mm512_maskz_loadu_ps(m1, B + 16), p1);
        A += a_ks;
        B += b_ks;
    }
    p0 = _mm512_add_ps(_mm512_add_ps(p0, q0), _mm512_add_ps(r0, s0));
    p1 = _mm512_add_ps(_mm512_add_ps(p1, q1), _mm512_add_ps(r1, s1));
    _mm512_mask_storeu_ps(C, m0, gcrt_epi512(p0, t, C, 0, 0, m0));
    if (m1) _mm512_mask_storeu_ps(C + 16, m1, gcrt_epi512(p1, t, C + 16, 0, 16, m1));
}

#elif defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#define GCRT_MR 4

static inline __m256i gcrt_mask8(int n)
{
    int32_t idx[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    __m256i v;
    memcpy(&v, idx, sizeof v);
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), v);
}

GCRT_ALWAYS_INLINE __m256 gcrt_epi256(__m256 v, const GcrtTile *t, const float *c, int r, int j, __m256i m)
{
    if (t->acc) v = _mm256_add_ps(v, _mm256_maskload_ps(c, m));
    if (!t->last) return v;
    if (t->bias_row) v = _mm256_add_ps(v, _mm256_set1_ps(t->bias_row[r]));
    if (t->bias_col) v = _mm256_add_ps(v, _mm256_maskload_ps(t->bias_col + j, m));
    if (t->res) v = _mm256_add_ps(v, _mm256_maskload_ps(t->res + r * t->ldr + j, m));
    if (t->act == GCRT_ACT_RELU) v = _mm256_max_ps(_mm256_setzero_ps(), v);
    else if (t->act == GCRT_ACT_CLIP)
        v = _mm256_min_ps(_mm256_set1_ps(t->hi), _mm256_max_ps(_mm256_set1_ps(t->lo), v));
    else if (t->act == GCRT_ACT_TANH || t->act == GCRT_ACT_SIGMOID) {
        float l[8];
        _mm256_storeu_ps(l, v);
        for (int i = 0; i < 8; i++) l[i] = t->act == GCRT_ACT_TANH ? gcrt_tanhf(l[i]) : 1.0f / (1.0f + gcrt_expf(-l[i]));
        v = _mm256_loadu_ps(l);
    }
    return v;
}

static void gcrt_ukernel(int64_t K, const float *A, int64_t a_rs, int64_t a_ks, int mr, const float *B,
                         int64_t b_ks, int nr, float *C, int64_t ldc, const GcrtTile *t)
{
    __m256i m[4];
    for (int v = 0; v < 4; v++) m[v] = gcrt_mask8(nr - 8 * v);
    const __m256i m0 = m[0], m1 = m[1], m2 = m[2], m3 = m[3];
    const int64_t o0 = 0, o1 = (mr > 1 ? 1 : 0) * a_rs, o2 = (mr > 2 ? 2 : mr - 1) * a_rs,
                  o3 = (mr > 3 ? 3 : mr - 1) * a_rs;
    __m256 acc[GCRT_MR][4];
    __m256 c00 = _mm256_setzero_ps(), c01 = c00, c02 = c00, c03 = c00, c10 = c00, c11 = c00, c12 = c00, c13 = c00,
           c20 = c00, c21 = c00, c22 = c00, c23 = c00, c30 = c00, c31 = c00, c32 = c00, c33 = c00;
    for (int64_t k = 0; k < K; k++) {
        __m256 a0 = _mm256_set1_ps(A[o0]), a1 = _mm256_set1_ps(A[o1]), a2 = _mm256_set1_ps(A[o2]),
               a3 = _mm256_set1_ps(A[o3]), b;
#define GCRT_COL(v, mv, x0, x1, x2, x3)                                                                   \
    b = _mm256_maskload_ps(B + 8 * (v), mv);                                                          \
    x0 = _mm256_fmadd_ps(a0, b, x0);                                                                  \
    x1 = _mm256_fmadd_ps(a1, b, x1);                                                                  \
    x2 = _mm256_fmadd_ps(a2, b, x2);                                                                  \
    x3 = _mm256_fmadd_ps(a3, b, x3);
        GCRT_COL(0, m0, c00, c10, c20, c30)
        GCRT_COL(1, m1, c01, c11, c21, c31)
        GCRT_COL(2, m2, c02, c12, c22, c32)
        GCRT_COL(3, m3, c03, c13, c23, c33)
#undef GCRT_COL
        A += a_ks;
        B += b_ks;
    }
    acc[0][0] = c00, acc[0][1] = c01, acc[0][2] = c02, acc[0][3] = c03;
    acc[1][0] = c10, acc[1][1] = c11, acc[1][2] = c12, acc[1][3] = c13;
    acc[2][0] = c20, acc[2][1] = c21, acc[2][2] = c22, acc[2][3] = c23;
    acc[3][0] = c30, acc[3][1] = c31, acc[3][2] = c32, acc[3][3] = c33;
    for (int r = 0; r < mr; r++)
        for (int v = 0; v < 4 && 8 * v < nr; v++)
            _mm256_maskstore_ps(C + r * ldc + 8 * v, m[v], gcrt_epi256(acc[r][v], t, C + r * ldc + 8 * v, r, 8 * v, m[v]));
}

/* The transposed store of gcrt_ukernel_t's raw mr x nr tile buf (row
 * stride GCRT_PACK_NR): element (r, j) goes to C[j*ldc + r] through the
 * epilogue, one column j (mr lanes gathered) at a time. */
static void gcrt_store_t(const float *buf, int mr, int nr, float *C, int64_t ldc, const GcrtTile *t)
{
    const __m256i idx = _mm256_setr_epi32(0, 32, 64, 96, 128, 160, 192, 224), m = gcrt_mask8(mr);
    for (int j = 0; j < nr; j++) {
        const __m256 v = _mm256_mask_i32gather_ps(_mm256_setzero_ps(), buf + j, idx, _mm256_castsi256_ps(m), 4);
        _mm256_maskstore_ps(C + j * ldc, m, gcrt_epi256(v, t, C + j * ldc, j, 0, m));
    }
}

/* The raw mr x nr tile buf (row stride GCRT_PACK_NR) to C through the
 * epilogue (the slide kernel's store). */
static void gcrt_store_tile(const float *buf, int mr, int nr, float *C, int64_t ldc, const GcrtTile *t)
{
    for (int r = 0; r < mr; r++)
        for (int j = 0; j < nr; j += 8) {
            const __m256i m = gcrt_mask8(nr - j);
            float *c = C + r * ldc + j;
            _mm256_maskstore_ps(c, m, gcrt_epi256(_mm256_loadu_ps(buf + r * GCRT_PACK_NR + j), t, c, r, j, m));
        }
}

#else
#define GCRT_MR 2

/* The epilogue of element (r, j) of a tile, c its place in C. */
static inline float gcrt_epi1(float v, const GcrtTile *t, const float *c, int r, int j)
{
    if (t->acc) v += *c;
    if (!t->last) return v;
    if (t->bias_row) v += t->bias_row[r];
    if (t->bias_col) v += t->bias_col[j];
    if (t->res) v += t->res[r * t->ldr + j];
    if (t->act == GCRT_ACT_RELU) v = v < 0.0f ? 0.0f : v; /* NaN propagates */
    else if (t->act == GCRT_ACT_CLIP) {
        v = v < t->lo ? t->lo : v;
        v = v > t->hi ? t->hi : v;
    }
    else if (t->act == GCRT_ACT_TANH) v = gcrt_tanhf(v);
    else if (t->act == GCRT_ACT_SIGMOID) v = 1.0f / (1.0f + gcrt_expf(-v));
    return v;
}

static void gcrt_ukernel(int64_t K, const float *A, int64_t a_rs, int64_t a_ks, int mr, const float *B,
                         int64_t b_ks, int nr, float *C, int64_t ldc, const GcrtTile *t)
{
    float c0[GCRT_PACK_NR], c1[GCRT_PACK_NR];
    const int64_t o1 = mr > 1 ? a_rs : 0;
    int j;
    for (j = 0; j < GCRT_PACK_NR; j++) c0[j] = c1[j] = 0.0f;
    if (nr == GCRT_PACK_NR) {
        for (int64_t k = 0; k < K; k++) {
            const float a0 = A[0], a1 = A[o1];
            for (j = 0; j < GCRT_PACK_NR; j++) {
                c0[j] += a0 * B[j];
                c1[j] += a1 * B[j];
            }
            A += a_ks;
            B += b_ks;
        }
    } else {
        for (int64_t k = 0; k < K; k++) {
            const float a0 = A[0], a1 = A[o1];
            for (j = 0; j < nr; j++) {
                c0[j] += a0 * B[j];
                c1[j] += a1 * B[j];
            }
            A += a_ks;
            B += b_ks;
        }
    }
    for (int r = 0; r < mr; r++) {
        float *acc = r ? c1 : c0, *c = C + r * ldc;
        for (j = 0; j < nr; j++) c[j] = gcrt_epi1(acc[j], t, c + j, r, j);
    }
}

/* See the AVX2 gcrt_store_t. */
static void gcrt_store_t(const float *buf, int mr, int nr, float *C, int64_t ldc, const GcrtTile *t)
{
    for (int j = 0; j < nr; j++)
        for (int r = 0; r < mr; r++) C[j * ldc + r] = gcrt_epi1(buf[r * GCRT_PACK_NR + j], t, C + j * ldc + r, j, r);
}

/* See the AVX2 gcrt_store_tile. */
static void gcrt_store_tile(const float *buf, int mr, int nr, float *C, int64_t ldc, const GcrtTile *t)
{
    for (int r = 0; r < mr; r++)
        for (int j = 0; j < nr; j++) C[r * ldc + j] = gcrt_epi1(buf[r * GCRT_PACK_NR + j], t, C + r * ldc + j, r, j);
}
#endif

#ifndef GCRT_HAVE_UKERNEL_T
/* The tile with its rows and columns swapped in C: the mr x nr tile of
 * A*B, as gcrt_ukernel computes it, stored with element (r, j) at
 * C[j*ldc + r]; the epilogue's bias_row is indexed by j and res by
 * res[j*ldr + r]. The conv with output positions as the tile's rows uses
 * it (32 output channels per vector, so a 7x7 or 14x14 map wastes no
 * lanes). The raw tile goes through a stack buffer. */
static void gcrt_ukernel_t(int64_t K, const float *A, int64_t a_rs, int64_t a_ks, int mr, const float *B,
                           int64_t b_ks, int nr, float *C, int64_t ldc, const GcrtTile *t)
{
    float buf[GCRT_MR * GCRT_PACK_NR];
    GcrtTile raw;
    memset(&raw, 0, sizeof raw);
    gcrt_ukernel(K, A, a_rs, a_ks, mr, B, b_ks, nr, buf, GCRT_PACK_NR, &raw);
    gcrt_store_t(buf, mr, nr, C, ldc, t);
}

/* The indirect form (see the AVX-512 one): row r of step k is
 * A[ind[k] + r*a_rs]. The rows are gathered into a packed panel 64 steps
 * at a time, and the raw tile is summed over the chunks in buf before the
 * transposed store. No prefetching here. */
static void gcrt_ukernel_t_ind(int64_t K, const float *A, const int32_t *ind, int64_t a_rs, int mr, const float *B,
                               int64_t b_ks, int nr, float *C, int64_t ldc, const GcrtTile *t, const char *pf,
                               int64_t pf_lines)
{
    float buf[GCRT_MR * GCRT_PACK_NR], pa[64 * GCRT_MR];
    GcrtTile raw;
    memset(&raw, 0, sizeof raw);
    (void)pf;
    (void)pf_lines;
    for (int64_t k0 = 0; k0 < K; k0 += 64) {
        const int64_t kc = K - k0 < 64 ? K - k0 : 64;
        for (int64_t k = 0; k < kc; k++)
            for (int r = 0; r < mr; r++) pa[k * GCRT_MR + r] = A[ind[k0 + k] + r * a_rs];
        raw.acc = k0 > 0;
        gcrt_ukernel(kc, pa, 1, GCRT_MR, mr, B + k0 * b_ks, b_ks, nr, buf, GCRT_PACK_NR, &raw);
    }
    gcrt_store_t(buf, mr, nr, C, ldc, t);
}
#endif

/* Copies n floats / zeroes n floats (the im2col's runs; -O2 builds do not
 * vectorize loops of unknown trip count by themselves). */
#if defined(__AVX512F__)
static inline void gcrt_vcopy(float *d, const float *s, int64_t n)
{
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) _mm512_storeu_ps(d + i, _mm512_loadu_ps(s + i));
    if (i < n) {
        __mmask16 m = (__mmask16)((1u << (n - i)) - 1u);
        _mm512_mask_storeu_ps(d + i, m, _mm512_maskz_loadu_ps(m, s + i));
    }
}
static inline void gcrt_vzero(float *d, int64_t n)
{
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) _mm512_storeu_ps(d + i, _mm512_setzero_ps());
    if (i < n) _mm512_mask_storeu_ps(d + i, (__mmask16)((1u << (n - i)) - 1u), _mm512_setzero_ps());
}
/* d[i] = s[i*stride], i < n (every s[i*stride] readable, nothing past it). */
static inline void gcrt_vcopy_strided(float *d, const float *s, int64_t stride, int64_t n)
{
    int64_t i = 0;
    if (stride == 2) {
        const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
        for (; i + 16 <= n; i += 16) {
            __m512 a = _mm512_loadu_ps(s + 2 * i), b = _mm512_maskz_loadu_ps(0x7fff, s + 2 * i + 16);
            _mm512_storeu_ps(d + i, _mm512_permutex2var_ps(a, even, b));
        }
    }
    for (; i < n; i++) d[i] = s[i * stride];
}
#elif defined(__AVX2__) && defined(__FMA__)
static inline void gcrt_vcopy(float *d, const float *s, int64_t n)
{
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(d + i, _mm256_loadu_ps(s + i));
    for (; i < n; i++) d[i] = s[i];
}
static inline void gcrt_vzero(float *d, int64_t n)
{
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(d + i, _mm256_setzero_ps());
    for (; i < n; i++) d[i] = 0.0f;
}
static inline void gcrt_vcopy_strided(float *d, const float *s, int64_t stride, int64_t n)
{
    for (int64_t i = 0; i < n; i++) d[i] = s[i * stride];
}
#else
static inline void gcrt_vcopy(float *d, const float *s, int64_t n)
{
    for (int64_t i = 0; i < n; i++) d[i] = s[i];
}
static inline void gcrt_vzero(float *d, int64_t n)
{
    for (int64_t i = 0; i < n; i++) d[i] = 0.0f;
}
static inline void gcrt_vcopy_strided(float *d, const float *s, int64_t stride, int64_t n)
{
    for (int64_t i = 0; i < n; i++) d[i] = s[i * stride];
}
#endif

/* ---- GEMM driver ---------------------------------------------------------- */

/* Tiles: batch-major, then 32-column panels of C, then GCRT_MR-row blocks
 * (a task's consecutive tiles share one B panel, which stays in cache). */
static void gcrt_gemm_range(void *arg, int64_t t0, int64_t t1, int slot)
{
    const GcrtGemm *g = (const GcrtGemm *)arg;
    const int64_t nm = (g->M + GCRT_MR - 1) / GCRT_MR, nn = (g->N + GCRT_PACK_NR - 1) / GCRT_PACK_NR;
    (void)slot;
    for (int64_t t = t0; t < t1; t++) {
        const int64_t b = t / (nm * nn), np = t / nm % nn, mb = t % nm;
        const int64_t m0 = mb * GCRT_MR, n0 = np * GCRT_PACK_NR;
        const int mr = (int)(g->M - m0 < GCRT_MR ? g->M - m0 : GCRT_MR);
        const int nr = (int)(g->N - n0 < GCRT_PACK_NR ? g->N - n0 : GCRT_PACK_NR);
        const float *A = g->A + b * g->a_bs, *B = g->B + b * g->b_bs;
        int64_t a_rs = g->a_rs, a_ks = g->a_ks, b_ks = g->ldb;
        if (g->a_packed) {
            A += m0 / GCRT_PACK_MR * GCRT_PACK_MR * g->K + m0 % GCRT_PACK_MR;
            a_rs = 1;
            a_ks = GCRT_PACK_MR;
        } else {
            A += m0 * a_rs;
        }
        if (g->b_packed) {
            B += np * GCRT_PACK_NR * g->K;
            b_ks = GCRT_PACK_NR;
        } else {
            B += n0;
        }
        float *C = g->C + b * g->c_bs + m0 * g->ldc + n0;
        GcrtTile tile;
        tile.acc = 0;
        tile.last = 1;
        tile.bias_row = g->bias_row ? g->bias_row + m0 : 0;
        tile.bias_col = g->bias_col ? g->bias_col + n0 : 0;
        tile.res = g->res ? g->res + b * g->c_bs + m0 * g->ldc + n0 : 0;
        tile.ldr = g->ldc;
        tile.act = g->act;
        tile.lo = g->lo;
        tile.hi = g->hi;
#ifdef GCRT_HAVE_ROW_KERNEL
        if (mr == 1) {
            gcrt_ukernel_row(g->K, A, a_ks, B, b_ks, nr, C, &tile);
            continue;
        }
#endif
        gcrt_ukernel(g->K, A, a_rs, a_ks, mr, B, b_ks, nr, C, g->ldc, &tile);
    }
}

/* See gcrt_cpu.h. */
GCRT_FN void gcrt_gemm_f32(const GcrtGemm *g, const GcThreadPool *pool)
{
    const int64_t nm = (g->M + GCRT_MR - 1) / GCRT_MR, nn = (g->N + GCRT_PACK_NR - 1) / GCRT_PACK_NR;
    gcrt_parallel(gcrt_pool_for(pool, gcrt_work(g->batch, g->M, g->N, g->K)), g->batch * nm * nn,
                  GCRT_NO_SCRATCH, gcrt_gemm_range, (void *)g);
}

/* ---- convolution as GEMM --------------------------------------------------
 *
 * Y[n][g] (Mg x P, P = OH*OW) = W[g] (Mg x K, K = Cg*KH*KW) * im2col(X[n][g])
 * (K x P). The im2col matrix is never formed whole: a task builds the rows
 * [k0, k0+KC) of 32 output positions at a time (a "panel", K-block kb) in
 * its slot of the workspace and multiplies every filter row of its tile
 * with it; the K blocks of one output add up in C in block order (the
 * epilogue with the last), so the sum order is fixed by the shapes. A 1x1
 * stride-1 unpadded conv multiplies X in place (rows of X are rows of B).
 */

/* Rows [k0, k1) of the im2col of output positions [p0, p0+nr) of the Cg
 * channels at X, row k at dst + (k-k0)*32. */
static void gcrt_im2col32(const GcrtConv *cv, const float *X, int64_t k0, int64_t k1, int64_t p0, int nr, float *dst)
{
    const int64_t HW = cv->H * cv->W, khw = cv->KH * cv->KW;
    int64_t c = k0 / khw, kh = k0 % khw / cv->KW, kw = k0 % cv->KW; /* k = (c, kh, kw), advanced below */
    const int64_t oh0 = p0 / cv->OW, ow0 = p0 % cv->OW;
    for (int64_t k = k0; k < k1; k++, dst += GCRT_PACK_NR) {
        const float *xc = X + c * HW;
        int64_t oh = oh0, ow = ow0;
        int j = 0;
        while (j < nr) {
            int64_t run = cv->OW - ow;
            if (run > nr - j) run = nr - j;
            const int64_t ih = oh * cv->sh - cv->pt + kh * cv->dh;
            if (ih < 0 || ih >= cv->H) {
                gcrt_vzero(dst + j, run);
            } else {
                const float *row = xc + ih * cv->W;
                int64_t iw = ow * cv->sw - cv->pl + kw * cv->dw;
                /* zeros where the run leaves the row, a (strided) copy between */
                const int64_t sw = cv->sw;
                int64_t lo = iw < 0 ? (-iw + sw - 1) / sw : 0, hi = iw < cv->W ? (cv->W - iw + sw - 1) / sw : 0;
                if (lo > run) lo = run;
                if (hi > run) hi = run;
                if (hi < lo) hi = lo;
                gcrt_vzero(dst + j, lo);
                if (sw == 1) gcrt_vcopy(dst + j + lo, row + iw + lo, hi - lo);
                else gcrt_vcopy_strided(dst + j + lo, row + iw + lo * sw, sw, hi - lo);
                gcrt_vzero(dst + j + hi, run - hi);
            }
            j += (int)run;
            ow = 0;
            oh++;
        }
        if (++kw == cv->KW) {
            kw = 0;
            if (++kh == cv->KH) kh = 0, c++;
        }
    }
}

/* The epilogue of a conv tile whose first output channel is m, in K block
 * [k0, k0 + kc) of K (tile.res is the caller's). */
static GcrtTile gcrt_conv_tile(const GcrtConv *cv, int64_t m, int64_t k0, int64_t kc, int64_t K)
{
    GcrtTile tile;
    tile.acc = k0 > 0;
    tile.last = k0 + kc == K;
    tile.bias_row = cv->bias ? cv->bias + m : 0;
    tile.bias_col = 0;
    tile.res = 0;
    tile.ldr = cv->OH * cv->OW;
    tile.act = cv->act;
    tile.lo = cv->lo;
    tile.hi = cv->hi;
    return tile;
}

/* The W^T tiles (cv->w_trans: positions as the tile's rows, 32 channels its
 * columns) of output channels [m_begin, m_end) at nr positions, over K block
 * [k0, k0 + kc) of K: row k of the block's input at B + (k - k0) * b_ks,
 * output y0 (channel 0's first position) + m * P. */
static void gcrt_conv_wt_tiles(const GcrtConv *cv, const float *B, int64_t b_ks, int64_t nr, int64_t y0,
                               int64_t m_begin, int64_t m_end, int64_t k0, int64_t kc, int64_t K)
{
    const int64_t P = cv->OH * cv->OW;
    for (int64_t m0 = m_begin; m0 < m_end; m0 += GCRT_PACK_NR) {
        const int nc = (int)(m_end - m0 < GCRT_PACK_NR ? m_end - m0 : GCRT_PACK_NR);
        const int64_t yo = y0 + m0 * P;
        GcrtTile tile = gcrt_conv_tile(cv, m0, k0, kc, K);
        for (int64_t r0 = 0; r0 < nr; r0 += GCRT_MR) {
            const int mr = (int)(nr - r0 < GCRT_MR ? nr - r0 : GCRT_MR);
            tile.res = cv->res ? cv->res + yo + r0 : 0;
            gcrt_ukernel_t(kc, B + r0, 1, b_ks, mr, cv->Wt + m0 * K + k0 * GCRT_PACK_NR, GCRT_PACK_NR, nc,
                           cv->Y + yo + r0, P, &tile);
        }
    }
}

/* Tiles: image, group, 32-position panel, then blocks of GCRT_CONV_MB_OF
 * output channels. A task takes its tiles in runs that share a position
 * panel and builds each K block of that panel once for the whole run. */
static void gcrt_conv_range(void *arg, int64_t t0, int64_t t1, int slot)
{
    const GcrtConv *cv = (const GcrtConv *)arg;
    const int64_t Cg = cv->C / cv->G, Mg = cv->M / cv->G, K = Cg * cv->KH * cv->KW, P = cv->OH * cv->OW;
    const int64_t MB = GCRT_CONV_MB_OF(cv), nmb = (Mg + MB - 1) / MB, np = (P + GCRT_PACK_NR - 1) / GCRT_PACK_NR;
    const int direct = GCRT_CONV_DIRECT(cv);
    float *panel = direct ? 0 : cv->ws + (int64_t)slot * GCRT_CONV_SLOT_FLOATS(Cg, cv->KH, cv->KW);
    const int64_t mpad = (Mg + GCRT_PACK_MR - 1) / GCRT_PACK_MR * GCRT_PACK_MR;
    for (int64_t t = t0; t < t1;) {
        const int64_t col = t / nmb; /* col = (n*G + g)*np + p */
        const int64_t run_end = (col + 1) * nmb < t1 ? (col + 1) * nmb : t1;
        const int64_t p = col % np, ng = col / np, g = ng % cv->G, n = ng / cv->G;
        const int64_t p0 = p * GCRT_PACK_NR;
        const int nr = (int)(P - p0 < GCRT_PACK_NR ? P - p0 : GCRT_PACK_NR);
        const float *X = cv->X + (n * cv->C + g * Cg) * cv->H * cv->W;
        const int64_t m_begin = t % nmb * MB, m_end = run_end - col * nmb == nmb ? Mg : (run_end % nmb) * MB;
        for (int64_t k0 = 0; k0 < K; k0 += GCRT_CONV_KC) {
            const int64_t kc = K - k0 < GCRT_CONV_KC ? K - k0 : GCRT_CONV_KC;
            const float *B;
            int64_t b_ks;
            if (direct) {
                B = X + k0 * P + p0;
                b_ks = P;
                /* the next panel's rows (a stream per row, P floats apart: more
                 * streams than the hardware prefetcher follows) while this one
                 * computes (measured: MobileNetV2 4% faster) */
                if (p0 + GCRT_PACK_NR < P)
                    for (int64_t k = 0; k < kc; k++) {
                        GCRT_PREFETCH(B + k * P + GCRT_PACK_NR);
                        GCRT_PREFETCH(B + k * P + GCRT_PACK_NR + 16);
                    }
            } else {
                gcrt_im2col32(cv, X, k0, k0 + kc, p0, nr, panel);
                B = panel;
                b_ks = GCRT_PACK_NR;
            }
            if (cv->w_trans) {
                gcrt_conv_wt_tiles(cv, B, b_ks, nr, n * cv->M * P + p0, m_begin, m_end, k0, kc, K);
                continue;
            }
            for (int64_t m0 = m_begin; m0 < m_end; m0 += GCRT_MR) {
                /* a micro-tile never straddles a channel block */
                const int64_t blk_end = (m0 / MB + 1) * MB < m_end ? (m0 / MB + 1) * MB : m_end;
                const int mr = (int)(blk_end - m0 < GCRT_MR ? blk_end - m0 : GCRT_MR);
                const float *A;
                int64_t a_rs, a_ks;
                if (cv->w_packed) {
                    A = cv->Wt + g * mpad * K + m0 / GCRT_PACK_MR * GCRT_PACK_MR * K + k0 * GCRT_PACK_MR +
                        m0 % GCRT_PACK_MR;
                    a_rs = 1;
                    a_ks = GCRT_PACK_MR;
                } else {
                    A = cv->Wt + (g * Mg + m0) * K + k0;
                    a_rs = K;
                    a_ks = 1;
                }
                const int64_t yo = ((n * cv->M) + g * Mg + m0) * P + p0;
                GcrtTile tile = gcrt_conv_tile(cv, g * Mg + m0, k0, kc, K);
                tile.res = cv->res ? cv->res + yo : 0;
                gcrt_ukernel(kc, A, a_rs, a_ks, mr, B, b_ks, nr, cv->Y + yo, P, &tile);
                if (mr < GCRT_MR) m0 = m0 + mr - GCRT_MR; /* continue at blk_end */
            }
        }
        t = run_end;
    }
}

/* A GCRT_CONV_WHOLE conv (w_trans, G == 1, a small map), one image at a
 * time, with no im2col: the pool first copies the image zero-padded into
 * ws (gcrt_conv_whole_pad: GCRT_WHOLE_HP rows of GCRT_WHOLE_WP floats per
 * channel), and the caller writes after it the offset of each row k =
 * (c, kh, kw) of W^T in that copy for output (0, 0) (ind[k], an int32_t
 * per float of ws). Then each task takes its blocks of GCRT_CONV_WHOLE_MB
 * output channels, one W^T panel (32 channels) at a time, K block by K
 * block of GCRT_CONV_KC rows, and multiplies the block (kc x 32, 64 KB)
 * with every tile of positions while it is in cache: a tile is GCRT_MR
 * consecutive outputs of one output row, whose row k the kernel reads
 * straight from the padded copy at ind[k] + (the tile's first output) +
 * r*sw (gcrt_ukernel_t_ind), adding into Y from the second block on. Per
 * element the sum is the K blocks, each a sequential sum, added up in
 * order: the shapes fix it. The W^T panels lie one after the other, so a
 * task reads W^T as one stream; the block after the current one is
 * prefetched into L2, a share of its lines under each tile, so that it
 * does not stream from memory under the first tile that needs it
 * (ResNet-18's 7x7 layers read 9.4 MB of W^T each). Against the version
 * that built each K block's im2col (all threads together, with a barrier
 * before and after the multiplications of each K block) and prefetched
 * nothing, bench/conv_ab.sh on ResNet-18's 512-channel 7x7 conv and its
 * three stride-2 3x3 convs (into 7x7, 14x14, 28x28; the last two took the
 * position panels of gcrt_conv_range before): new/old medians 0.81 to 0.93
 * with the weights in cache, 0.72 to 0.84 with them flushed before each
 * call (CONV_AB_COLD=1, as in the whole model), at 1 and 2 threads. A 1x1
 * conv read in place needs no copy: its rows are X's. */
typedef struct GcrtWhole {
    const GcrtConv *cv;
    const float *X;     /* the image */
    float *xp;          /* its padded copy */
    const int32_t *ind; /* the offsets of the rows of W^T in xp */
    int64_t n, hp, wp;
    int64_t bands, rows; /* each channel block's output rows in bands of `rows` */
} GcrtWhole;

/* Rows [t0, t1) of the padded copy (row r: padded row r % hp of channel r / hp). */
static void gcrt_conv_whole_pad(void *arg, int64_t t0, int64_t t1, int slot)
{
    const GcrtWhole *w = (const GcrtWhole *)arg;
    const GcrtConv *cv = w->cv;
    (void)slot;
    for (int64_t r = t0; r < t1; r++) {
        const int64_t c = r / w->hp, ih = r % w->hp - cv->pt;
        float *d = w->xp + r * w->wp;
        if (ih < 0 || ih >= cv->H) {
            gcrt_vzero(d, w->wp);
            continue;
        }
        /* padded column j is input column j - pl: inside for j in [lo, hi) */
        const int64_t lo = cv->pl < w->wp ? cv->pl : w->wp, hi = cv->W + cv->pl < w->wp ? cv->W + cv->pl : w->wp;
        gcrt_vzero(d, lo);
        if (hi > lo) gcrt_vcopy(d + lo, w->X + (c * cv->H + ih) * cv->W, hi - lo);
        gcrt_vzero(d + (hi > lo ? hi : lo), w->wp - (hi > lo ? hi : lo));
    }
}

/* Tiles [t0, t1): tile t is rows [b R, (b + 1) R) of the output (b = t %
 * bands, R = rows) for channel block t / bands; a task takes the
 * consecutive tiles of one block together. */
static void gcrt_conv_whole_range(void *arg, int64_t t0, int64_t t1, int slot)
{
    const GcrtWhole *w = (const GcrtWhole *)arg;
    const GcrtConv *cv = w->cv;
    const int64_t K = cv->C * cv->KH * cv->KW, P = cv->OH * cv->OW, M = cv->M, n = w->n;
    const int64_t tpr = (cv->OW + GCRT_MR - 1) / GCRT_MR; /* position tiles per output row */
    const int direct = GCRT_CONV_DIRECT(cv);
    (void)slot;
    for (int64_t t = t0; t < t1;) {
        const int64_t mb = t / w->bands, run_end = (mb + 1) * w->bands < t1 ? (mb + 1) * w->bands : t1;
        const int64_t m0 = mb * GCRT_CONV_WHOLE_MB, oh0 = t % w->bands * w->rows;
        const int64_t oh1 = (run_end - 1) % w->bands * w->rows + w->rows < cv->OH ? (run_end - 1) % w->bands * w->rows + w->rows
                                                                                    : cv->OH;
        const int64_t q0 = oh0 * tpr, q1 = oh1 * tpr, nq = q1 - q0;
        const int nc = (int)(M - m0 < GCRT_PACK_NR ? M - m0 : GCRT_PACK_NR);
        for (int64_t k0 = 0; k0 < K; k0 += GCRT_CONV_KC) {
            const int64_t kc = K - k0 < GCRT_CONV_KC ? K - k0 : GCRT_CONV_KC;
            const float *wb = cv->Wt + m0 * K + k0 * GCRT_PACK_NR;
            GcrtTile tile = gcrt_conv_tile(cv, m0, k0, kc, K);
            if (direct) {
                for (int64_t p0 = oh0 * cv->OW; p0 < oh1 * cv->OW; p0 += GCRT_MR) {
                    const int mr = (int)(oh1 * cv->OW - p0 < GCRT_MR ? oh1 * cv->OW - p0 : GCRT_MR);
                    const int64_t yo = (n * M + m0) * P + p0;
                    tile.res = cv->res ? cv->res + yo : 0;
                    gcrt_ukernel_t(kc, w->X + k0 * P + p0, 1, P, mr, wb, GCRT_PACK_NR, nc, cv->Y + yo, P, &tile);
                }
                continue;
            }
            /* the next block: this panel's next K block, or the next panel's first (if this task's) */
            const int64_t next = k0 + kc < K ? K - (k0 + kc) : run_end < t1 ? K : 0;
            const int64_t nl = (next < GCRT_CONV_KC ? next : GCRT_CONV_KC) * GCRT_PACK_NR * (int64_t)sizeof(float) / 64;
            const char *nb = (const char *)(wb + kc * GCRT_PACK_NR);
            for (int64_t q = q0; q < q1; q++) {
                const int64_t oh = q / tpr, ow0 = q % tpr * GCRT_MR, l0 = (q - q0) * nl / nq, l1 = (q - q0 + 1) * nl / nq;
                const int mr = (int)(cv->OW - ow0 < GCRT_MR ? cv->OW - ow0 : GCRT_MR);
                const int64_t yo = (n * M + m0) * P + oh * cv->OW + ow0;
                tile.res = cv->res ? cv->res + yo : 0;
                gcrt_ukernel_t_ind(kc, w->xp + oh * cv->sh * w->wp + ow0 * cv->sw, w->ind + k0, cv->sw, mr, wb,
                                   GCRT_PACK_NR, nc, cv->Y + yo, P, &tile, nb + l0 * 64, l1 - l0);
            }
        }
        t = run_end;
    }
}

static void gcrt_conv_whole(const GcrtConv *cv, const GcThreadPool *pool)
{
    const int64_t K = cv->C * cv->KH * cv->KW;
    const int64_t nmb = (cv->M + GCRT_CONV_WHOLE_MB - 1) / GCRT_CONV_WHOLE_MB;
    const int direct = GCRT_CONV_DIRECT(cv);
    GcrtWhole w;
    w.cv = cv;
    /* at least GCRT_CONV_WHOLE_TILES tiles where the rows allow, for the threads to balance (read in
     * place: whole maps, positions tiled across rows, except that an odd count of channel blocks
     * takes two bands, which two threads share evenly: MobileNetV2's 160-channel projections at
     * 7x7, 5 blocks, went 3:2 and ran 1.44 to 1.47 times faster at 2 threads than at 1, in two
     * bands 1.56 to 1.60 (bench/layer_profile.py); a band costs at most one partial tile more) */
    w.bands = direct ? (nmb % 2 && cv->OH > 1 ? 2 : 1)
                     : (GCRT_CONV_WHOLE_TILES + nmb - 1) / nmb < cv->OH ? (GCRT_CONV_WHOLE_TILES + nmb - 1) / nmb : cv->OH;
    w.rows = (cv->OH + w.bands - 1) / w.bands;
    w.bands = (cv->OH + w.rows - 1) / w.rows;
    w.hp = GCRT_WHOLE_HP(cv);
    w.wp = GCRT_WHOLE_WP(cv);
    w.xp = direct ? 0 : cv->ws; /* a conv read in place has no ws */
    w.ind = 0;
    if (!direct) {
        int32_t *ind = (int32_t *)(void *)(cv->ws + cv->C * w.hp * w.wp);
        int64_t c = 0, kh = 0, kw = 0;
        for (int64_t k = 0; k < K; k++) { /* (c, kh, kw) advanced without divisions; GCRT_CONV_WHOLE: it fits */
            ind[k] = (int32_t)((c * w.hp + kh * cv->dh) * w.wp + kw * cv->dw);
            if (++kw == cv->KW) {
                kw = 0;
                if (++kh == cv->KH) kh = 0, c++;
            }
        }
        w.ind = ind;
    }
    /* a float copied by vectors costs about as much as 4 multiply-adds (a depthwise tap's weight) */
    const GcThreadPool *pad_pool = gcrt_pool_for(pool, gcrt_work(cv->C, w.hp, w.wp, 4));
    for (w.n = 0; w.n < cv->N; w.n++) {
        w.X = cv->X + w.n * cv->C * cv->H * cv->W;
        if (!direct) gcrt_parallel(pad_pool, cv->C * w.hp, GCRT_NO_SCRATCH, gcrt_conv_whole_pad, &w);
        gcrt_parallel(pool, nmb * w.bands, GCRT_NO_SCRATCH, gcrt_conv_whole_range, &w);
    }
}

/* ---- sliding-window convolution (cv->slide) ---------------------------------
 *
 * No im2col: per image, the input is copied once into ws zero-padded, each
 * padded row split into sw column phases (phase q holds the padded columns
 * q, q + sw, q + 2sw, ...; GCRT_SLIDE_* of gcrt_cpu.h), so the inputs that
 * tap (kh, kw) meets at 32 consecutive output columns of a row are 32
 * consecutive floats of one phase, at any stride and dilation. A tile is
 * one output row and the 8 output channels of one A panel; it runs along
 * the row 32 columns at a time, and for each tap k = (c, kh, kw) in order
 * multiplies the panel's 8 weights of k with those 32 inputs into 8 x 32
 * accumulators (the micro-kernel's shape, with no im2col panel to build),
 * then stores through the epilogue. Each output is one sequential sum
 * over k: the results depend on the shapes only. */

typedef struct GcrtSlide {
    const GcrtConv *cv;
    const float *X; /* the image */
    int64_t n, Hp, Wh;
    int64_t off[GCRT_SLIDE_MAX_KW]; /* tap kw's first float within a padded row */
} GcrtSlide;

/* Rows [t0, t1) of the padded copy, row by row across the channels (tile r:
 * padded row r / C of channel r % C), so that a pool's thread copies the
 * rows of the image it computes from (the slide tiles go by output row). */
static void gcrt_slide_pad(void *arg, int64_t t0, int64_t t1, int slot)
{
    const GcrtSlide *s = (const GcrtSlide *)arg;
    const GcrtConv *cv = s->cv;
    const int64_t sw = cv->sw;
    (void)slot;
    for (int64_t r = t0; r < t1; r++) {
        const int64_t c = r % cv->C, ih = r / cv->C - cv->pt;
        float *d = cv->ws + (c * s->Hp + r / cv->C) * sw * s->Wh;
        for (int64_t q = 0; q < sw; q++, d += s->Wh) {
            if (ih < 0 || ih >= cv->H) {
                gcrt_vzero(d, s->Wh);
                continue;
            }
            /* padded column j * sw + q is input column j * sw + q - pl: inside for j in [lo, hi) */
            int64_t lo = cv->pl - q > 0 ? (cv->pl - q + sw - 1) / sw : 0, hi = (cv->W + cv->pl - q + sw - 1) / sw;
            if (hi > s->Wh) hi = s->Wh;
            if (lo > hi) lo = hi;
            const float *x = s->X + (c * cv->H + ih) * cv->W + (lo * sw + q - cv->pl);
            gcrt_vzero(d, lo);
            if (sw == 1) gcrt_vcopy(d + lo, x, hi - lo);
            else gcrt_vcopy_strided(d + lo, x, sw, hi - lo);
            gcrt_vzero(d + hi, s->Wh - hi);
        }
    }
}

/* One tile's columns [ow0, ow0 + nr): A the panel (8 weights per tap), x
 * the padded rows of the tile's output row, channel c at x + c * cs and
 * kernel row kh at + kh * hs. */
#if defined(__AVX512F__)
static void gcrt_slide_tile(const GcrtSlide *s, const float *A, const float *x, int mr, int nr, float *Y, int64_t ldy,
                            const GcrtTile *t)
{
    const GcrtConv *cv = s->cv;
    const int64_t hs = cv->dh * cv->sw * s->Wh, cs = s->Hp * cv->sw * s->Wh;
    const __mmask16 m0 = (__mmask16)(nr >= 16 ? 0xffffu : (1u << nr) - 1u);
    const __mmask16 m1 = (__mmask16)(nr >= 32 ? 0xffffu : nr > 16 ? (1u << (nr - 16)) - 1u : 0u);
    __m512 c00 = _mm512_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00, c30 = c00,
           c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00, c60 = c00, c61 = c00, c70 = c00, c71 = c00;
    for (int64_t c = 0; c < cv->C; c++)
        for (int64_t kh = 0; kh < cv->KH; kh++) {
            const float *xr = x + c * cs + kh * hs;
            if (m1) {
                for (int64_t kw = 0; kw < cv->KW; kw++, A += GCRT_PACK_MR) {
                    const __m512 b0 = _mm512_maskz_loadu_ps(m0, xr + s->off[kw]), b1 = _mm512_maskz_loadu_ps(m1, xr + s->off[kw] + 16);
                    __m512 a;
#define GCRT_ROW2(cA, cB, r)                         \
    a = _mm512_set1_ps(A[r]);                        \
    cA = _mm512_fmadd_ps(a, b0, cA);                 \
    cB = _mm512_fmadd_ps(a, b1, cB);
                    GCRT_ROW2(c00, c01, 0) GCRT_ROW2(c10, c11, 1) GCRT_ROW2(c20, c21, 2) GCRT_ROW2(c30, c31, 3)
                    GCRT_ROW2(c40, c41, 4) GCRT_ROW2(c50, c51, 5) GCRT_ROW2(c60, c61, 6) GCRT_ROW2(c70, c71, 7)
#undef GCRT_ROW2
                }
            } else { /* at most 16 columns: one vector */
                for (int64_t kw = 0; kw < cv->KW; kw++, A += GCRT_PACK_MR) {
                    const __m512 b0 = _mm512_maskz_loadu_ps(m0, xr + s->off[kw]);
                    c00 = _mm512_fmadd_ps(_mm512_set1_ps(A[0]), b0, c00);
                    c10 = _mm512_fmadd_ps(_mm512_set1_ps(A[1]), b0, c10);
                    c20 = _mm512_fmadd_ps(_mm512_set1_ps(A[2]), b0, c20);
                    c30 = _mm512_fmadd_ps(_mm512_set1_ps(A[3]), b0, c30);
                    c40 = _mm512_fmadd_ps(_mm512_set1_ps(A[4]), b0, c40);
                    c50 = _mm512_fmadd_ps(_mm512_set1_ps(A[5]), b0, c50);
                    c60 = _mm512_fmadd_ps(_mm512_set1_ps(A[6]), b0, c60);
                    c70 = _mm512_fmadd_ps(_mm512_set1_ps(A[7]), b0, c70);
                }
            }
        }
    const __m512 acc[GCRT_MR][2] = {{c00, c01}, {c10, c11}, {c20, c21}, {c30, c31},
                                    {c40, c41}, {c50, c51}, {c60, c61}, {c70, c71}};
    gcrt_store_acc512(acc, mr, m0, m1, Y, ldy, t);
}
#else
/* Portable: the 8 x 32 tile in an array (fixed-length loops the compiler
 * vectorizes; they read up to 32 floats from a tap's first, which the 32
 * zeros after the padded copy keep inside ws), stored through the
 * epilogue. */
static void gcrt_slide_tile(const GcrtSlide *s, const float *A, const float *x, int mr, int nr, float *Y, int64_t ldy,
                            const GcrtTile *t)
{
    const GcrtConv *cv = s->cv;
    const int64_t hs = cv->dh * cv->sw * s->Wh, cs = s->Hp * cv->sw * s->Wh;
    float acc[GCRT_PACK_MR][GCRT_PACK_NR];
    int r, j;
    for (r = 0; r < GCRT_PACK_MR; r++)
        for (j = 0; j < GCRT_PACK_NR; j++) acc[r][j] = 0.0f;
    for (int64_t c = 0; c < cv->C; c++)
        for (int64_t kh = 0; kh < cv->KH; kh++) {
            const float *xr = x + c * cs + kh * hs;
            for (int64_t kw = 0; kw < cv->KW; kw++, A += GCRT_PACK_MR) {
                const float *b = xr + s->off[kw];
                for (r = 0; r < GCRT_PACK_MR; r++)
                    for (j = 0; j < GCRT_PACK_NR; j++) acc[r][j] += A[r] * b[j];
            }
        }
    gcrt_store_tile(&acc[0][0], mr, nr, Y, ldy, t);
}
#endif

/* Tiles [t0, t1) of image s->n: tile t is output row t / np and A panel t % np. */
static void gcrt_slide_range(void *arg, int64_t t0, int64_t t1, int slot)
{
    const GcrtSlide *s = (const GcrtSlide *)arg;
    const GcrtConv *cv = s->cv;
    const int64_t K = cv->C * cv->KH * cv->KW, P = cv->OH * cv->OW;
    const int64_t np = (cv->M + GCRT_PACK_MR - 1) / GCRT_PACK_MR;
    (void)slot;
    for (int64_t t = t0; t < t1; t++) {
        const int64_t oh = t / np, m0 = t % np * GCRT_PACK_MR;
        const int mr = (int)(cv->M - m0 < GCRT_PACK_MR ? cv->M - m0 : GCRT_PACK_MR);
        const float *x = cv->ws + oh * cv->sh * cv->sw * s->Wh;
        for (int64_t ow0 = 0; ow0 < cv->OW; ow0 += GCRT_PACK_NR) {
            const int nr = (int)(cv->OW - ow0 < GCRT_PACK_NR ? cv->OW - ow0 : GCRT_PACK_NR);
            const int64_t yo = (s->n * cv->M + m0) * P + oh * cv->OW + ow0;
            GcrtTile tile;
            tile.acc = 0;
            tile.last = 1;
            tile.bias_row = cv->bias ? cv->bias + m0 : 0;
            tile.bias_col = 0;
            tile.res = cv->res ? cv->res + yo : 0;
            tile.ldr = P;
            tile.act = cv->act;
            tile.lo = cv->lo;
            tile.hi = cv->hi;
            gcrt_slide_tile(s, cv->Wt + m0 * K, x + ow0, mr, nr, cv->Y + yo, P, &tile);
        }
    }
}

static void gcrt_conv_slide(const GcrtConv *cv, const GcThreadPool *pool)
{
    GcrtSlide s;
    s.cv = cv;
    s.Hp = GCRT_SLIDE_HP(cv);
    s.Wh = GCRT_SLIDE_WH(cv);
    for (int64_t kw = 0; kw < cv->KW; kw++) s.off[kw] = kw * cv->dw % cv->sw * s.Wh + kw * cv->dw / cv->sw;
    gcrt_vzero(cv->ws + cv->C * s.Hp * cv->sw * s.Wh, 32);
    const GcThreadPool *pad_pool = gcrt_pool_for(pool, gcrt_work(cv->C, s.Hp, cv->sw * s.Wh, 4)); /* as gcrt_conv_whole's */
    pool = gcrt_pool_for(pool, gcrt_work(cv->M, cv->C * cv->KH * cv->KW, cv->OH, cv->OW));
    for (s.n = 0; s.n < cv->N; s.n++) {
        s.X = cv->X + s.n * cv->C * cv->H * cv->W;
        gcrt_parallel(pad_pool, cv->C * s.Hp, GCRT_NO_SCRATCH, gcrt_slide_pad, &s);
        gcrt_parallel(pool, cv->OH * ((cv->M + GCRT_PACK_MR - 1) / GCRT_PACK_MR), GCRT_NO_SCRATCH, gcrt_slide_range, &s);
    }
}

/* A by_channels conv: gcrt_conv_range's tiles (column, channel block) in another order, group of
 * channel blocks first (group g: blocks [g nmb / groups, (g + 1) nmb / groups), one group per
 * thread), then column, then block; a task's tiles of one group at one column are a run of
 * gcrt_conv_range's. */
typedef struct GcrtConvGroups {
    const GcrtConv *cv;
    int64_t groups, cols, nmb;
} GcrtConvGroups;

static void gcrt_conv_groups_range(void *arg, int64_t t0, int64_t t1, int slot)
{
    const GcrtConvGroups *a = (const GcrtConvGroups *)arg;
    int64_t g = 0, base = 0; /* base: the tiles of the groups before g */
    for (int64_t t = t0; t < t1;) {
        const int64_t lo = g * a->nmb / a->groups, w = (g + 1) * a->nmb / a->groups - lo;
        if (t >= base + w * a->cols) {
            base += w * a->cols;
            g++;
            continue;
        }
        const int64_t col = (t - base) / w, m = (t - base) % w, run = w - m < t1 - t ? w - m : t1 - t;
        gcrt_conv_range((void *)a->cv, col * a->nmb + lo + m, col * a->nmb + lo + m + run, slot);
        t += run;
    }
}

/* See gcrt_cpu.h. */
GCRT_FN void gcrt_conv_gemm_f32(const GcrtConv *cv, const GcThreadPool *pool)
{
    const int64_t Mg = cv->M / cv->G, P = cv->OH * cv->OW, MB = GCRT_CONV_MB_OF(cv);
    const int64_t nmb = (Mg + MB - 1) / MB, np = (P + GCRT_PACK_NR - 1) / GCRT_PACK_NR;
    const int scratch = GCRT_CONV_DIRECT(cv) ? GCRT_NO_SCRATCH : cv->max_slots;
    pool = gcrt_pool_for(pool, gcrt_work(cv->N, cv->M, cv->C / cv->G * cv->KH * cv->KW, P));
    if (cv->slide) gcrt_conv_slide(cv, pool);
    else if (GCRT_CONV_WHOLE(cv)) gcrt_conv_whole(cv, pool);
    else if (cv->by_channels && GCRT_CONV_DIRECT(cv) && gcrt_pool_threads(pool) > 1 && nmb > 1) {
        GcrtConvGroups a;
        a.cv = cv;
        a.cols = cv->N * cv->G * np;
        a.nmb = nmb;
        a.groups = gcrt_pool_threads(pool) < nmb ? gcrt_pool_threads(pool) : nmb;
        gcrt_parallel(pool, a.cols * nmb, GCRT_NO_SCRATCH, gcrt_conv_groups_range, &a);
    } else gcrt_parallel_runs(pool, cv->N * cv->G * np * nmb, nmb, scratch, gcrt_conv_range, (void *)cv);
}
