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
 * layout (the residual); act: GCRT_ACT_*; lo/hi the clip bounds. */
enum { GCRT_ACT_NONE, GCRT_ACT_RELU, GCRT_ACT_CLIP };
typedef struct GcrtEpi {
    const float *bias;
    const float *res;
    int act;
    float lo, hi;
} GcrtEpi;

/* A kernel's tiles [t0, t1) run by one task; slot (0 <= slot < the
 * max_slots given to gcrt_parallel) indexes per-task scratch. */
typedef void (*GcrtRangeFn)(void *arg, int64_t t0, int64_t t1, int slot);

/* Runs fn over tiles [0, n_tiles): serially as fn(arg, 0, n_tiles, 0) when
 * pool is NULL or has one thread; otherwise as k = min(n_threads, n_tiles,
 * max_slots) tasks of the pool, task j taking the contiguous tiles
 * [j*n_tiles/k, (j+1)*n_tiles/k) and slot j. */
GCRT_FN void gcrt_parallel(const GcThreadPool *pool, int64_t n_tiles, int max_slots, GcrtRangeFn fn, void *arg);

#endif
