/* gcrt_cpu.c — the shared part of graphc's fast CPU kernels: the split of
 * a kernel's tiles over a thread pool (see gcrt_cpu.h). */
#include "gcrt_cpu.h"

typedef struct GcrtSplit {
    GcrtRangeFn fn;
    void *arg;
    int64_t n_tiles, n_tasks;
} GcrtSplit;

static void gcrt_split_task(void *arg, int64_t j)
{
    const GcrtSplit *s = (const GcrtSplit *)arg;
    int64_t t0 = j * s->n_tiles / s->n_tasks, t1 = (j + 1) * s->n_tiles / s->n_tasks;
    if (t0 < t1) s->fn(s->arg, t0, t1, (int)j);
}

/* See gcrt_cpu.h. */
GCRT_FN void gcrt_parallel(const GcThreadPool *pool, int64_t n_tiles, int max_slots, GcrtRangeFn fn, void *arg)
{
    int64_t k = pool && pool->parallel_for ? pool->n_threads : 1;
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
    s.n_tasks = k;
    pool->parallel_for(pool->ctx, k, gcrt_split_task, &s);
}
