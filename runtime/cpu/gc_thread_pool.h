/* gc_thread_pool.h — the thread-pool interface of graphc's generated C.
 *
 * A model's NAME_run_parallel takes a GcThreadPool: how many tasks may run
 * at once and a parallel_for callback that runs fn(arg, t) for every t in
 * [0, n_tasks), in any order and on any threads, and returns when all have
 * finished. Firmware without threads passes NULL (or uses NAME_run); an app
 * with its own pool wraps it in these three fields. The generated kernels
 * split their output into tiles fixed at compile time and hand contiguous
 * runs of tiles to the tasks, so the result is bit-for-bit the same for any
 * n_threads: a split never changes a reduction order.
 *
 * gc_thread_pool.c, copied beside this header, is a small pthread
 * implementation (used by NAME_main --threads): compile it once per program
 * (it is not part of libNAME.a), start a pool, pass gc_pthread_pool_get().
 */
#ifndef GC_THREAD_POOL_H
#define GC_THREAD_POOL_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef void (*GcTaskFn)(void *arg, int64_t task);

typedef struct GcThreadPool {
    int n_threads; /* tasks that may run at once; <= 1 means run serially */
    void (*parallel_for)(void *ctx, int64_t n_tasks, GcTaskFn fn, void *arg);
    void *ctx; /* passed back to parallel_for */
} GcThreadPool;

/* ---- the bundled pthread pool (gc_thread_pool.c) ---- */

#define GC_PTHREAD_POOL_MAX 64

typedef struct GcPthreadPool GcPthreadPool;

/* Starts a pool of n_threads (1..GC_PTHREAD_POOL_MAX; the calling thread
 * is one of them, so n_threads - 1 threads are created). NULL when the
 * threads cannot be created or n_threads is out of range. */
GcPthreadPool *gc_pthread_pool_start(int n_threads);
/* The GcThreadPool view of a started pool, for NAME_run_parallel. */
GcThreadPool gc_pthread_pool_get(GcPthreadPool *p);
/* Joins the threads and frees the pool (NULL is a no-op). */
void gc_pthread_pool_stop(GcPthreadPool *p);

#ifdef __cplusplus
}
#endif

#endif
