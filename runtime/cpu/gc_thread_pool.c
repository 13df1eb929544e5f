/* gc_thread_pool.c — the bundled pthread pool behind gc_thread_pool.h.
 *
 * What: a pool of n_threads - 1 persistent worker threads plus the thread
 * that calls parallel_for; a parallel_for runs fn(arg, t) for every task t
 * of one job and returns when all of them have finished.
 *
 * Why this shape: the generated code calls parallel_for once per parallel
 * kernel, dozens of times per inference and thousands of times per second,
 * with a handful of tasks each (one per thread), so the cost that matters
 * is the latency of waking the workers and of noticing that the job is
 * done, not the throughput of a task queue.
 *
 * Algorithm. A job is published under the mutex: its function, argument,
 * task count, the task counter reset to 0, the count of unfinished tasks,
 * and a generation number bumped last. Workers (and the caller) claim
 * tasks with an atomic fetch-add on the counter until it passes the task
 * count, and decrement the unfinished count after each task; whoever
 * brings it to zero wakes the caller. Idle workers first spin for a while
 * watching the generation (a new job is then picked up within a fraction
 * of a microsecond), then sleep on a condition variable. The caller runs
 * tasks too, then spins briefly and finally sleeps until the unfinished
 * count is zero.
 *
 * A worker joins a job (copies it and counts itself in `joined`) under the
 * mutex and leaves it under the mutex; a new job is published only when no
 * worker is still inside the previous one. So a worker that woke late
 * never claims a task of the next job with the previous job's function:
 * the counter is reset only when nobody can be between reading the job and
 * claiming from it.
 *
 * parallel_for is meant to be called by one thread at a time; a call made
 * while a job is running (from inside a task, or from a second thread) runs
 * its tasks serially on the calling thread instead of deadlocking.
 *
 * C99 + POSIX threads; the task counters use GCC's __atomic builtins
 * (C11 <stdatomic.h> is not available under -std=c99).
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "gc_thread_pool.h"

#include <pthread.h>
#include <stdlib.h>

/* Polls of an idle worker (for a new job) and of the waiting caller (for
 * the end of the job) before they sleep on a condition variable. */
#define GC_POOL_SPIN 4096

struct GcPthreadPool {
    int n_threads;
    int n_workers; /* threads created: n_threads - 1 */
    pthread_t *threads;
    pthread_mutex_t mu;
    pthread_cond_t wake; /* a new job or stop (workers wait on it) */
    pthread_cond_t done; /* unfinished or joined reached 0 (the caller waits on it) */
    /* the current job; written under mu while joined == 0 */
    GcTaskFn fn;
    void *arg;
    int64_t n_tasks;
    int64_t next;       /* the next task to claim (atomic) */
    int64_t unfinished; /* tasks not yet finished (atomic) */
    unsigned gen;       /* bumped per job (atomic: workers poll it) */
    int joined;         /* workers inside the current job (under mu) */
    int running;        /* a parallel_for is in progress (under mu) */
    int stop;           /* under mu */
};

static void gc_pool_pause(void)
{
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    __builtin_ia32_pause();
#endif
}

/* Claims and runs tasks of the job (fn, arg, n) until none is left;
 * signals the caller when the last unfinished task is done. */
static void gc_pool_work(GcPthreadPool *p, GcTaskFn fn, void *arg, int64_t n)
{
    for (;;) {
        int64_t t = __atomic_fetch_add(&p->next, 1, __ATOMIC_RELAXED);
        if (t >= n) return;
        fn(arg, t);
        if (__atomic_sub_fetch(&p->unfinished, 1, __ATOMIC_ACQ_REL) == 0) {
            pthread_mutex_lock(&p->mu);
            pthread_cond_broadcast(&p->done);
            pthread_mutex_unlock(&p->mu);
        }
    }
}

static void *gc_pool_worker(void *ctx)
{
    GcPthreadPool *p = (GcPthreadPool *)ctx;
    unsigned seen = 0; /* gen starts at 0: no job is missed */
    for (;;) {
        GcTaskFn fn;
        void *arg;
        int64_t n;
        int i;
        for (i = 0; i < GC_POOL_SPIN && __atomic_load_n(&p->gen, __ATOMIC_ACQUIRE) == seen; i++) gc_pool_pause();
        pthread_mutex_lock(&p->mu);
        while (!p->stop && __atomic_load_n(&p->gen, __ATOMIC_ACQUIRE) == seen) pthread_cond_wait(&p->wake, &p->mu);
        if (p->stop) {
            pthread_mutex_unlock(&p->mu);
            return NULL;
        }
        seen = __atomic_load_n(&p->gen, __ATOMIC_ACQUIRE);
        fn = p->fn;
        arg = p->arg;
        n = p->n_tasks;
        p->joined++;
        pthread_mutex_unlock(&p->mu);

        gc_pool_work(p, fn, arg, n);

        pthread_mutex_lock(&p->mu);
        if (--p->joined == 0) pthread_cond_broadcast(&p->done);
        pthread_mutex_unlock(&p->mu);
    }
}

static void gc_pool_parallel_for(void *ctx, int64_t n_tasks, GcTaskFn fn, void *arg)
{
    GcPthreadPool *p = (GcPthreadPool *)ctx;
    int64_t t;
    int i;
    if (n_tasks <= 0) return;
    if (!p || p->n_workers == 0 || n_tasks == 1) {
        for (t = 0; t < n_tasks; t++) fn(arg, t);
        return;
    }
    pthread_mutex_lock(&p->mu);
    if (p->running) { /* nested or concurrent call: run it here */
        pthread_mutex_unlock(&p->mu);
        for (t = 0; t < n_tasks; t++) fn(arg, t);
        return;
    }
    while (p->joined > 0) pthread_cond_wait(&p->done, &p->mu); /* late leavers of the last job */
    p->running = 1;
    p->fn = fn;
    p->arg = arg;
    p->n_tasks = n_tasks;
    __atomic_store_n(&p->next, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&p->unfinished, n_tasks, __ATOMIC_RELAXED);
    __atomic_store_n(&p->gen, p->gen + 1u, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->mu);

    gc_pool_work(p, fn, arg, n_tasks);

    for (i = 0; i < GC_POOL_SPIN && __atomic_load_n(&p->unfinished, __ATOMIC_ACQUIRE) != 0; i++) gc_pool_pause();
    pthread_mutex_lock(&p->mu);
    while (__atomic_load_n(&p->unfinished, __ATOMIC_ACQUIRE) != 0) pthread_cond_wait(&p->done, &p->mu);
    p->running = 0;
    pthread_mutex_unlock(&p->mu);
}

/* Wakes and joins the first n workers of p, then frees it. */
static void gc_pool_destroy(GcPthreadPool *p, int n)
{
    int i;
    pthread_mutex_lock(&p->mu);
    p->stop = 1;
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->mu);
    for (i = 0; i < n; i++) pthread_join(p->threads[i], NULL);
    pthread_cond_destroy(&p->done);
    pthread_cond_destroy(&p->wake);
    pthread_mutex_destroy(&p->mu);
    free(p->threads);
    free(p);
}

GcPthreadPool *gc_pthread_pool_start(int n_threads)
{
    GcPthreadPool *p;
    int i;
    if (n_threads < 1 || n_threads > GC_PTHREAD_POOL_MAX) return NULL;
    p = (GcPthreadPool *)calloc(1, sizeof *p);
    if (!p) return NULL;
    p->n_threads = n_threads;
    p->n_workers = n_threads - 1;
    p->threads = (pthread_t *)calloc((size_t)(n_threads > 1 ? n_threads - 1 : 1), sizeof *p->threads);
    if (!p->threads) {
        free(p);
        return NULL;
    }
    if (pthread_mutex_init(&p->mu, NULL) != 0) {
        free(p->threads);
        free(p);
        return NULL;
    }
    if (pthread_cond_init(&p->wake, NULL) != 0) {
        pthread_mutex_destroy(&p->mu);
        free(p->threads);
        free(p);
        return NULL;
    }
    if (pthread_cond_init(&p->done, NULL) != 0) {
        pthread_cond_destroy(&p->wake);
        pthread_mutex_destroy(&p->mu);
        free(p->threads);
        free(p);
        return NULL;
    }
    for (i = 0; i < p->n_workers; i++)
        if (pthread_create(&p->threads[i], NULL, gc_pool_worker, p) != 0) {
            gc_pool_destroy(p, i);
            return NULL;
        }
    return p;
}

GcThreadPool gc_pthread_pool_get(GcPthreadPool *p)
{
    GcThreadPool v;
    v.n_threads = p ? p->n_threads : 1;
    v.parallel_for = p ? gc_pool_parallel_for : NULL;
    v.ctx = p;
    return v;
}

void gc_pthread_pool_stop(GcPthreadPool *p)
{
    if (p) gc_pool_destroy(p, p->n_workers);
}
