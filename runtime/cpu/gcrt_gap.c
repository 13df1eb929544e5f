/* gcrt_gap.c — global average pooling split over the thread pool (see gcrt_gap.h).
 *
 * Tiles of GCRT_GAP_TILE planes; a task takes a run of tiles and passes
 * its planes to the portable kernel, whose result for a plane depends on
 * that plane alone. Plain C99; no allocation, no I/O, no global state.
 * Include after gcrt_cpu.c (gcrt_parallel); the generated code includes
 * gcrt_nn.c too (the portable kernel).
 */
#include "gcrt_gap.h"

#include "gcrt_nn.h"

/* planes per tile: the portable kernel's interleave (it sums 8 planes side by side) */
#define GCRT_GAP_TILE 8

typedef struct GcrtGapArgs {
    int64_t NC, S;
    const float *X;
    float *Y;
} GcrtGapArgs;

static void gcrt_gap_tiles(void *arg, int64_t t0, int64_t t1, int slot)
{
    const GcrtGapArgs *a = (const GcrtGapArgs *)arg;
    const int64_t q0 = t0 * GCRT_GAP_TILE, q1 = t1 * GCRT_GAP_TILE < a->NC ? t1 * GCRT_GAP_TILE : a->NC;
    (void)slot;
    gcrt_global_avgpool_f32(q1 - q0, a->S, a->X + q0 * a->S, a->Y + q0);
}

/* See gcrt_gap.h. */
GCRT_FN void gcrt_global_avgpool_pool_f32(int64_t NC, int64_t S, const float *X, float *Y, const GcThreadPool *pool)
{
    GcrtGapArgs a;
    if (NC <= 0) return;
    a.NC = NC;
    a.S = S;
    a.X = X;
    a.Y = Y;
    /* a compensated add is a chain of 4 dependent adds (8 planes side by side): about 16 of a
     * GEMM's packed multiply-adds */
    pool = gcrt_pool_for(pool, gcrt_work(16, NC, S, 1));
    gcrt_parallel(pool, (NC + GCRT_GAP_TILE - 1) / GCRT_GAP_TILE, GCRT_NO_SCRATCH, gcrt_gap_tiles, &a);
}
