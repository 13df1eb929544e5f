/* gcrt_cpu.h — graphc's fast CPU kernels (runtime/cpu): the shared pieces
 * (vector width, the epilogue applied on the tile, the split of a kernel's
 * tiles over a thread pool) and the packed SGEMM / convolution kernels.
 *
 * ISA: chosen when the generated code is compiled, by the target flags the
 * compiler was given (the generated Makefile passes -march=native when the
 * compiler targets the machine it runs on): AVX-512F, else AVX2+FMA, else
 * portable C loops over small arrays that compilers auto-vectorize (SSE2,
 * NEON, Helium) or run scalar (Cortex-M4). A build for another machine
 * states its -march/-mcpu. Compile-time choice keeps the code free of
 * global state (no CPU-detection cache) and lets every kernel inline.
 *
 * Layouts the compiler packs weights into (graphc writes them so; nothing
 * is packed at run time):
 *   - "A panels" (Conv weights, the left operand W[M,K] of Y = W * X):
 *     rows in panels of GCRT_PACK_MR, each panel stored k-major
 *     (panel[k][r]), the last panel zero-padded to GCRT_PACK_MR rows;
 *   - "B panels" (Gemm/MatMul weights, the right operand W[K,N] of
 *     Y = X * W): columns in panels of GCRT_PACK_NR, each panel stored
 *     k-major (panel[k][c]), the last zero-padded to GCRT_PACK_NR columns.
 * Both are independent of the ISA, so one weights file serves every build.
 *
 * Plain C99 plus intrinsics under the ISA macros; no allocation, no I/O,
 * no global mutable state; every function is GCRT_FN (private to the
 * model, see gcrt_base.h).
 */
#ifndef GCRT_CPU_H
#define GCRT_CPU_H

#include <stdint.h>

#include "gc_thread_pool.h"
#include "gcrt_base.h"

#define GCRT_PACK_MR 8
#define GCRT_PACK_NR 32

/* The epilogue applied to each output tile as it is stored:
 *   y = act(acc + bias + res)
 * bias: NULL, or one value per output channel (Conv: per row of Y = W*X;
 * the depthwise kernel: per channel) or per column (Gemm/MatMul: Y = X*W),
 * as the kernel's contract says; res: NULL or a tensor of Y's shape and
 * layout (the residual); act: GCRT_ACT_* (Tanh and Sigmoid through a
 * vector exp within 2 ulp; the depthwise kernel takes NONE, RELU, CLIP);
 * lo/hi the clip bounds
 * (min(max(y, lo), hi): hi when lo > hi). NaN propagates through both, as
 * the ops' reference evaluation says. */
enum { GCRT_ACT_NONE, GCRT_ACT_RELU, GCRT_ACT_CLIP, GCRT_ACT_TANH, GCRT_ACT_SIGMOID };
typedef struct GcrtEpi {
    const float *bias;
    const float *res;
    int act;
    float lo, hi;
} GcrtEpi;

/* A kernel's tiles [t0, t1) run by one task; slot (0 <= slot < the
 * max_slots given to gcrt_parallel) indexes per-task scratch. */
typedef void (*GcrtRangeFn)(void *arg, int64_t t0, int64_t t1, int slot);

/* max_slots of a kernel without per-task scratch. */
#define GCRT_NO_SCRATCH (1 << 30)

/* Runs fn over tiles [0, n_tiles): serially as fn(arg, 0, n_tiles, 0) when
 * pool is NULL or has one thread; otherwise k = min(n_threads, n_tiles,
 * max_slots) tasks run at once. A kernel without scratch gets up to 4k
 * tasks of contiguous tiles (slot 0), which the pool's threads take as they
 * come free. One with scratch (max_slots below GCRT_NO_SCRATCH) gets k
 * tasks, task j taking the contiguous tiles [j*n_tiles/k, (j+1)*n_tiles/k)
 * and slot j; see gcrt_parallel_runs for the finer split. A tile's result
 * never depends on the task that runs it. */
GCRT_FN void gcrt_parallel(const GcThreadPool *pool, int64_t n_tiles, int max_slots, GcrtRangeFn fn, void *arg);

/* gcrt_parallel for a kernel whose tiles come in runs of `grain` that
 * share what a task builds in its scratch slot. A kernel with scratch whose
 * runs number at least 2k, on a pool with n_threads <= max_slots <= 32,
 * gets up to 4k tasks of whole runs, each task on a slot no other running
 * task holds (taken when it starts): a kernel must not expect a slot to
 * hold anything from an earlier task. Otherwise as gcrt_parallel. */
GCRT_FN void gcrt_parallel_runs(const GcThreadPool *pool, int64_t n_tiles, int64_t grain, int max_slots,
                                GcrtRangeFn fn, void *arg);

/* The pool a kernel call of `work` multiply-adds (or comparable element
 * steps) splits over: NULL, run serially, below GCRT_PAR_MIN_WORK, where
 * waking the pool's threads and joining them (a few microseconds) costs
 * more than the split saves (measured: LeNet took 0.042 ms at 2 threads
 * against 0.026 ms at 1 before). The result is the same either way: a
 * tile's result never depends on the task that runs it. */
#ifndef GCRT_PAR_MIN_WORK /* the runtime's tests set 0: every call splits */
#define GCRT_PAR_MIN_WORK 262144
#endif
static inline const GcThreadPool *gcrt_pool_for(const GcThreadPool *pool, int64_t work)
{
    return work < GCRT_PAR_MIN_WORK ? (const GcThreadPool *)0 : pool;
}

/* The tasks that may run at once on pool (1 without a pool). */
static inline int64_t gcrt_pool_threads(const GcThreadPool *pool)
{
    return pool && pool->parallel_for ? pool->n_threads : 1;
}

/* min(a * b * c * d, GCRT_PAR_MIN_WORK) for factors >= 0, in integers that
 * cannot overflow (no double arithmetic: a Cortex-M4's FPU has none). */
static inline int64_t gcrt_work(int64_t a, int64_t b, int64_t c, int64_t d)
{
    const int64_t f[4] = {a, b, c, d};
    int64_t w = 1;
    for (int i = 0; i < 4; i++) {
        const int64_t x = f[i] < GCRT_PAR_MIN_WORK ? f[i] : GCRT_PAR_MIN_WORK;
        if (x <= 0) return 0;
        w = w * x < GCRT_PAR_MIN_WORK ? w * x : GCRT_PAR_MIN_WORK;
    }
    return w;
}

/* ---- packed SGEMM ---- */

/* One GEMM (or a batch of them): C[b] = A[b] * B[b] + epilogue, every
 * matrix f32, C row-major with row stride ldc. A is the packed A panels
 * (a_packed: GCRT_PACK_MR-row panels, k-major, of an [M,K] matrix) or
 * strided (a(m,k) = A[m*a_rs + k*a_ks]); B is the packed B panels
 * (b_packed: GCRT_PACK_NR-column panels of a [K,N] matrix) or row-major
 * with row stride ldb (b(k,n) = B[k*ldb + n]). Batch b offsets A, B, C
 * (and res) by a_bs, b_bs, c_bs elements (0: shared). The epilogue adds
 * bias_row[m] and/or bias_col[n] (either may be NULL), then res[m*ldc+n]
 * (res NULL: none), then applies act. Tiles: GCRT_MR x GCRT_PACK_NR blocks
 * of C, fixed by the shapes alone. */
typedef struct GcrtGemm {
    int64_t batch, a_bs, b_bs, c_bs;
    int64_t M, N, K;
    const float *A;
    int a_packed;
    int64_t a_rs, a_ks;
    const float *B;
    int b_packed;
    int64_t ldb;
    float *C;
    int64_t ldc;
    const float *bias_row, *bias_col, *res;
    int act;
    float lo, hi;
} GcrtGemm;
GCRT_FN void gcrt_gemm_f32(const GcrtGemm *g, const GcThreadPool *pool);

/* Conv (NCHW, f32, 1 or 2 spatial dims given as H=1 for 1-D) as a GEMM per
 * image and group: Y[g][Mg, OH*OW] = W[g][Mg, Cg*KH*KW] * im2col(X)[g].
 * W: the packed A panels of each group's [Mg, K] filter matrix, group after
 * group (w_packed), or the ONNX [M, Cg, KH, KW] tensor. The im2col of 32
 * output positions and GCRT_CONV_KC rows at a time goes to the task's slot
 * of ws (GCRT_CONV_SLOT_FLOATS floats each, max_slots of them); a 1x1
 * stride-1 unpadded conv (GCRT_CONV_DIRECT) reads X in place and needs no
 * ws. Epilogue: bias per output channel, res of Y's shape, act. */
typedef struct GcrtConv {
    int64_t N, C, H, W, M, G, OH, OW, KH, KW, sh, sw, dh, dw, pt, pl;
    const float *X, *Wt;
    int w_packed;
    /* w_trans (G == 1): Wt is the packed B panels of the [K, M] matrix W^T
     * (GCRT_PACK_NR output channels per panel), and the micro-tiles take
     * output positions as rows and 32 channels as columns, stored
     * transposed: no lanes idle past the last position (7x7, 14x14 maps). */
    int w_trans;
    /* slide (G == 1, w_packed, KW <= GCRT_SLIDE_MAX_KW): no im2col; ws holds
     * the zero-padded input of one image, GCRT_SLIDE_FLOATS(cv) floats, and
     * a tile is 8 output channels of one output row (see gcrt_cpu.c). For
     * few output channels, where building im2col panels costs more than
     * the multiplications that use them (LeNet, ResNet's 7x7 stem). */
    int slide;
    /* by_channels (a 1x1 stride-1 unpadded conv, GCRT_CONV_DIRECT, on
     * position panels): a pool's thread i takes the i-th share of the
     * output channel blocks at every position instead of the i-th share
     * of the positions, for a reader that splits by channels (a depthwise
     * conv on a small map); the outputs are the same bits. Ignored by
     * other convs. */
    int by_channels;
    const float *bias, *res;
    int act;
    float lo, hi;
    float *Y;
    float *ws;
    int max_slots;
} GcrtConv;
GCRT_FN void gcrt_conv_gemm_f32(const GcrtConv *cv, const GcThreadPool *pool);
#define GCRT_CONV_KC 512
#define GCRT_CONV_MB 64
/* Channel blocks of a 1x1 conv read in place (no im2col panel for a block
 * to share: finer tiles balance the threads), with W packed in 8-row panels
 * (MobileNetV2's 64-channel projections at 14x14 split 4:3 over two
 * threads with 64) or in W^T panels (GCRT_CONV_MB_DIRECT_T, one panel: its
 * 96-channel projections at 14x14 took 1.12 to 1.2 times as long on two
 * threads in blocks of 64, tiles of unequal cost), and of a
 * GCRT_CONV_WHOLE conv (one W^T panel each). */
#define GCRT_CONV_MB_DIRECT 16
#define GCRT_CONV_MB_DIRECT_T 32
#define GCRT_CONV_WHOLE_MB 32
#define GCRT_CONV_MB_OF(cv) \
    (GCRT_CONV_DIRECT(cv) ? ((cv)->w_trans ? GCRT_CONV_MB_DIRECT_T : GCRT_CONV_MB_DIRECT) : GCRT_CONV_MB)
#define GCRT_CONV_SLOT_FLOATS(Cg, KH, KW) \
    (((Cg) * (KH) * (KW) < GCRT_CONV_KC ? (Cg) * (KH) * (KW) : GCRT_CONV_KC) * GCRT_PACK_NR)
/* w_trans with at most GCRT_CONV_WHOLE_P output positions (32x32 maps;
 * GCRT_CONV_WHOLE_P_DIRECT, 8x8, for a 1x1 conv read in place), and an
 * image whose zero-padded copy has fewer than 2^31 floats: the conv
 * multiplies each block of GCRT_CONV_KC rows of a W^T panel with the
 * positions of a band of output rows while it is in cache, reading the
 * positions' rows straight from a zero-padded copy of the image (see
 * gcrt_conv_whole in gcrt_cpu.c); the tiles are channel blocks of
 * GCRT_CONV_WHOLE_MB by bands of rows, at least GCRT_CONV_WHOLE_TILES of
 * them where the rows allow (a conv read in place: whole maps, or two bands
 * for an odd count of channel blocks). A 1x1 conv
 * read in place on a larger map keeps the position panels (with its 1x1
 * convs at 14x14 and 28x28 split by channel blocks, the whole MobileNetV2
 * took 1.07 times as long at 2 threads). */
#define GCRT_CONV_WHOLE_P 1024
#define GCRT_CONV_WHOLE_P_DIRECT 64
#define GCRT_CONV_WHOLE_TILES 16
#define GCRT_WHOLE_HP(cv) (((cv)->OH - 1) * (cv)->sh + ((cv)->KH - 1) * (cv)->dh + 1)
#define GCRT_WHOLE_WP(cv) (((cv)->OW - 1) * (cv)->sw + ((cv)->KW - 1) * (cv)->dw + 1)
#define GCRT_CONV_WHOLE(cv)                                                                                \
    ((cv)->w_trans && (cv)->OH * (cv)->OW <= (GCRT_CONV_DIRECT(cv) ? GCRT_CONV_WHOLE_P_DIRECT : GCRT_CONV_WHOLE_P) && \
     (cv)->C * GCRT_WHOLE_HP(cv) * GCRT_WHOLE_WP(cv) < 2147483647)
/* Its workspace (none when read in place): the zero-padded image,
 * GCRT_WHOLE_HP rows of GCRT_WHOLE_WP floats a channel, then an int32_t
 * per row of W^T (C * KH * KW). */
#define GCRT_CONV_WHOLE_SLOT_FLOATS(cv) \
    ((cv)->C * GCRT_WHOLE_HP(cv) * GCRT_WHOLE_WP(cv) + (cv)->C * (cv)->KH * (cv)->KW)
/* The slide kernel's padded input: GCRT_SLIDE_HP rows per channel, each
 * split into sw column phases of GCRT_SLIDE_WH floats (phase q holds the
 * padded columns q, q + sw, q + 2sw, ...), and 32 zeros after the last. */
#define GCRT_SLIDE_MAX_KW 32
#define GCRT_SLIDE_HP(cv) (((cv)->OH - 1) * (cv)->sh + ((cv)->KH - 1) * (cv)->dh + 1)
#define GCRT_SLIDE_WH(cv) ((((cv)->OW - 1) * (cv)->sw + ((cv)->KW - 1) * (cv)->dw + (cv)->sw) / (cv)->sw)
#define GCRT_SLIDE_FLOATS(cv) ((cv)->C * GCRT_SLIDE_HP(cv) * (cv)->sw * GCRT_SLIDE_WH(cv) + 32)
#define GCRT_CONV_DIRECT(cv)                                                                                   \
    ((cv)->KH == 1 && (cv)->KW == 1 && (cv)->sh == 1 && (cv)->sw == 1 && (cv)->pt == 0 && (cv)->pl == 0 && \
     (cv)->OH == (cv)->H && (cv)->OW == (cv)->W)

#endif
