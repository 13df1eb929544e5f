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
 * Algorithm. The caller publishes a job: its function, argument, the task
 * ranges and the count of unfinished tasks, then a generation number. The
 * tasks are dealt out in contiguous ranges, one per thread (the caller is
 * thread 0, worker i thread i + 1): each thread takes the tasks of its own
 * range from the front, and when it has none left takes the others' from
 * the back (a compare-and-swap on the range's packed front and back). The
 * kernels hand contiguous runs of tiles to consecutive tasks, so a thread
 * computes the same part of every kernel's output (the same rows of an
 * image, for example) from one call to the next, and reads what it wrote
 * itself from its own cache instead of from another core's; a thread that
 * falls behind (a core taken by another process) still hands its last
 * tasks over. Whoever finishes the last task (the unfinished count reaches
 * zero) wakes the caller if it sleeps. Idle workers first spin for a while
 * watching the generation (a new job is then picked up within a fraction
 * of a microsecond), then poll yielding the core, then sleep on a
 * condition variable. The caller runs tasks too, then polls the same way
 * and finally sleeps until the unfinished count is zero.
 *
 * No lock on the way of a job while the threads spin (the mutex only
 * guards going to sleep and waking up). The generation is odd while the
 * caller writes a job and even once it is published. A worker joins a job
 * by counting itself in `active` and then reading the generation again; it
 * runs the job only if that is a published one it has not run, and counts
 * itself out when it leaves. The caller makes the generation odd, waits
 * until `active` is zero, and only then rewrites the job. So a worker that
 * woke late never claims a task of the next job with the previous job's
 * function: either it counted itself in first (the caller waits for it to
 * leave) or it reads the odd generation or the next one (all sequentially
 * consistent atomics). Whoever may sleep counts itself (`sleepers`, or
 * `caller_sleeping`) under the mutex before it checks its condition a last
 * time; whoever makes the condition true reads that count afterwards and
 * only then takes the mutex to wake it. Against the version that took the
 * mutex to join and to leave every job (a contended mutex between the
 * caller and a worker), a job of two short tasks at 2 threads went from
 * about 2.8 to 1.3 us (tests/runtime/test_thread_pool.c checks the
 * protocol; it passes under ThreadSanitizer).
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
#include <sched.h>
#include <stdlib.h>
#include <string.h>

/* How an idle worker waits for a new job, and the caller for the end of
 * its job: GC_POOL_SPIN polls with a pause instruction between them (about
 * 21 ns each on this project's Xeon VMs: 90 us), then GC_POOL_YIELDS polls
 * with sched_yield() between them (0.33 us each when nothing else wants the
 * core: another 0.17 ms; the caller 4 times as many), then it sleeps on a
 * condition variable. With the pause polls alone, ResNet-18's workers went
 * to sleep about 7 times an inference at 2 threads (a task of a Winograd
 * conv can run longer than 90 us), each woken by the next job with a futex
 * wake-up on the caller's way; with the yields 0.2 to 0.7 times (three
 * runs). Polling that long with pauses only (16384, 0.35 ms) did as well
 * alone, but made ResNet-18 at 3 threads on 2 cores 25% slower and at 2
 * threads beside a busy process 15 to 40% slower: a polling thread held a
 * core the working ones needed. A yielding poll hands the core over. */
#define GC_POOL_SPIN 4096
#define GC_POOL_YIELDS 512

/* One thread's range of tasks: front (low 32 bits) and back (high 32 bits),
 * the tasks [front, back) not yet taken; a cache line of its own. */
typedef struct GcPoolRange {
    uint64_t fb;
    char pad[64 - sizeof(uint64_t)];
} GcPoolRange;

/* A worker thread and its index among the job's threads (1..n_workers). */
typedef struct GcPoolWorker {
    struct GcPthreadPool *pool;
    int index;
} GcPoolWorker;

struct GcPthreadPool {
    int n_threads;
    int n_workers; /* threads created: n_threads - 1 */
    pthread_t *threads;
    GcPoolWorker *workers;
    GcPoolRange range[GC_PTHREAD_POOL_MAX];
    pthread_mutex_t mu;
    pthread_cond_t wake; /* a new job or stop (sleeping workers wait on it) */
    pthread_cond_t done; /* unfinished reached 0 (a sleeping caller waits on it) */
    /* the current job: written by the caller while gen is odd and no worker is active */
    GcTaskFn fn;
    void *arg;
    /* atomics */
    int64_t unfinished;  /* tasks of the current job not yet finished */
    unsigned gen;        /* even: the job of that number is published; odd: one is being written */
    int active;          /* workers between joining a job and leaving it */
    int sleepers;        /* workers inside the wake wait (counted under mu) */
    int caller_sleeping; /* the caller waits on done (set under mu) */
    int running;         /* a parallel_for is in progress */
    int stop;            /* set under mu */
};

static void gc_pool_pause(void)
{
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    __builtin_ia32_pause();
#endif
}

/* Takes a task from range r: its front (own) or its back (another
 * thread's range); -1 when it is empty. */
static int64_t gc_pool_take(GcPoolRange *r, int own)
{
    uint64_t v = __atomic_load_n(&r->fb, __ATOMIC_RELAXED);
    for (;;) {
        const uint32_t front = (uint32_t)v, back = (uint32_t)(v >> 32);
        uint64_t want;
        if (front >= back) return -1;
        want = own ? v + 1u : (uint64_t)(back - 1u) << 32 | front;
        if (__atomic_compare_exchange_n(&r->fb, &v, want, 1, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
            return own ? (int64_t)front : (int64_t)(back - 1u);
    }
}

/* Runs tasks of the job (fn, arg) as thread `self`: its own range, then
 * the others' from the back. Whoever finishes the last task wakes the
 * caller if it sleeps. */
static void gc_pool_work(GcPthreadPool *p, int self, GcTaskFn fn, void *arg)
{
    int i;
    for (i = 0; i < p->n_threads; i++) {
        GcPoolRange *r = &p->range[(self + i) % p->n_threads];
        int64_t t;
        while ((t = gc_pool_take(r, i == 0)) >= 0) {
            fn(arg, t);
            if (__atomic_sub_fetch(&p->unfinished, 1, __ATOMIC_SEQ_CST) == 0 &&
                __atomic_load_n(&p->caller_sleeping, __ATOMIC_SEQ_CST)) {
                pthread_mutex_lock(&p->mu);
                pthread_cond_broadcast(&p->done);
                pthread_mutex_unlock(&p->mu);
            }
        }
    }
}

/* Whether gen g names a published job that a worker who last ran job `seen` has not run. */
static int gc_pool_new_job(unsigned g, unsigned seen)
{
    return g != seen && (g & 1u) == 0;
}

static void *gc_pool_worker(void *ctx)
{
    GcPthreadPool *p = ((GcPoolWorker *)ctx)->pool;
    const int self = ((GcPoolWorker *)ctx)->index;
    unsigned seen = 0; /* gen starts at 0: no job is missed */
    for (;;) {
        unsigned g = 0;
        int i;
        for (i = 0; i < GC_POOL_SPIN + GC_POOL_YIELDS; i++) {
            g = __atomic_load_n(&p->gen, __ATOMIC_ACQUIRE);
            if (gc_pool_new_job(g, seen) || __atomic_load_n(&p->stop, __ATOMIC_ACQUIRE)) break;
            if (i < GC_POOL_SPIN) gc_pool_pause();
            else sched_yield();
        }
        if (i == GC_POOL_SPIN + GC_POOL_YIELDS) {
            pthread_mutex_lock(&p->mu);
            __atomic_add_fetch(&p->sleepers, 1, __ATOMIC_SEQ_CST);
            while (!__atomic_load_n(&p->stop, __ATOMIC_ACQUIRE) && !gc_pool_new_job(__atomic_load_n(&p->gen, __ATOMIC_SEQ_CST), seen))
                pthread_cond_wait(&p->wake, &p->mu);
            __atomic_sub_fetch(&p->sleepers, 1, __ATOMIC_SEQ_CST);
            pthread_mutex_unlock(&p->mu);
        }
        if (__atomic_load_n(&p->stop, __ATOMIC_ACQUIRE)) return NULL;
        /* join: count in, then read gen again; the caller rewrites the job only while
         * gen is odd and nobody is counted in, so this one stays put until we leave */
        __atomic_add_fetch(&p->active, 1, __ATOMIC_SEQ_CST);
        g = __atomic_load_n(&p->gen, __ATOMIC_SEQ_CST);
        if (gc_pool_new_job(g, seen)) {
            seen = g;
            gc_pool_work(p, self, p->fn, p->arg);
        }
        __atomic_sub_fetch(&p->active, 1, __ATOMIC_RELEASE);
    }
}

static void gc_pool_parallel_for(void *ctx, int64_t n_tasks, GcTaskFn fn, void *arg)
{
    GcPthreadPool *p = (GcPthreadPool *)ctx;
    int64_t t;
    unsigned g;
    int i, idle = 0;
    if (n_tasks <= 0) return;
    if (!p || p->n_workers == 0 || n_tasks == 1 || n_tasks > (int64_t)UINT32_MAX ||
        !__atomic_compare_exchange_n(&p->running, &idle, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
        /* serial, or a nested or concurrent call: run it here */
        for (t = 0; t < n_tasks; t++) fn(arg, t);
        return;
    }
    /* gen odd: no worker joins from here on; wait for the late leavers of the last job */
    g = __atomic_load_n(&p->gen, __ATOMIC_RELAXED);
    __atomic_store_n(&p->gen, g + 1u, __ATOMIC_SEQ_CST);
    for (i = 0; __atomic_load_n(&p->active, __ATOMIC_SEQ_CST) != 0; i++) {
        gc_pool_pause();
        if (i >= GC_POOL_SPIN) sched_yield(); /* a leaver lost its core */
    }
    p->fn = fn;
    p->arg = arg;
    for (i = 0; i < p->n_threads; i++) { /* thread i's range: tasks [i n / T, (i + 1) n / T) */
        const uint64_t front = (uint64_t)(i * n_tasks / p->n_threads);
        const uint64_t back = (uint64_t)((i + 1) * n_tasks / p->n_threads);
        __atomic_store_n(&p->range[i].fb, back << 32 | front, __ATOMIC_RELAXED);
    }
    __atomic_store_n(&p->unfinished, n_tasks, __ATOMIC_RELAXED);
    __atomic_store_n(&p->gen, g + 2u, __ATOMIC_SEQ_CST); /* published */
    if (__atomic_load_n(&p->sleepers, __ATOMIC_SEQ_CST) > 0) {
        pthread_mutex_lock(&p->mu);
        pthread_cond_broadcast(&p->wake);
        pthread_mutex_unlock(&p->mu);
    }

    gc_pool_work(p, 0, fn, arg);

    for (i = 0; i < GC_POOL_SPIN + 4 * GC_POOL_YIELDS && __atomic_load_n(&p->unfinished, __ATOMIC_ACQUIRE) != 0; i++) {
        if (i < GC_POOL_SPIN) gc_pool_pause();
        else sched_yield();
    }
    if (__atomic_load_n(&p->unfinished, __ATOMIC_ACQUIRE) != 0) {
        pthread_mutex_lock(&p->mu);
        __atomic_store_n(&p->caller_sleeping, 1, __ATOMIC_SEQ_CST);
        while (__atomic_load_n(&p->unfinished, __ATOMIC_SEQ_CST) != 0) pthread_cond_wait(&p->done, &p->mu);
        __atomic_store_n(&p->caller_sleeping, 0, __ATOMIC_RELAXED);
        pthread_mutex_unlock(&p->mu);
    }
    __atomic_store_n(&p->running, 0, __ATOMIC_RELEASE);
}

/* Wakes and joins the first n workers of p, then frees it. */
static void gc_pool_destroy(GcPthreadPool *p, int n)
{
    int i;
    pthread_mutex_lock(&p->mu);
    __atomic_store_n(&p->stop, 1, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->mu);
    for (i = 0; i < n; i++) pthread_join(p->threads[i], NULL);
    pthread_cond_destroy(&p->done);
    pthread_cond_destroy(&p->wake);
    pthread_mutex_destroy(&p->mu);
    free(p->workers);
    free(p->threads);
    free(p);
}

GcPthreadPool *gc_pthread_pool_start(int n_threads)
{
    GcPthreadPool *p;
    void *mem;
    const size_t n_alloc = (size_t)(n_threads > 1 ? n_threads - 1 : 1);
    int i, stage = 0;
    if (n_threads < 1 || n_threads > GC_PTHREAD_POOL_MAX) return NULL;
    /* cache-line aligned, so that every thread's task range has a line of its own */
    if (posix_memalign(&mem, 64, sizeof *p) != 0) return NULL;
    p = (GcPthreadPool *)mem;
    memset(p, 0, sizeof *p);
    p->n_threads = n_threads;
    p->n_workers = n_threads - 1;
    p->threads = (pthread_t *)calloc(n_alloc, sizeof *p->threads);
    p->workers = (GcPoolWorker *)calloc(n_alloc, sizeof *p->workers);
    if (p->threads && p->workers && pthread_mutex_init(&p->mu, NULL) == 0) {
        stage = 1;
        if (pthread_cond_init(&p->wake, NULL) == 0) {
            stage = 2;
            if (pthread_cond_init(&p->done, NULL) == 0) stage = 3;
        }
    }
    if (stage < 3) {
        if (stage >= 2) pthread_cond_destroy(&p->wake);
        if (stage >= 1) pthread_mutex_destroy(&p->mu);
        free(p->workers);
        free(p->threads);
        free(p);
        return NULL;
    }
    for (i = 0; i < p->n_workers; i++) {
        p->workers[i].pool = p;
        p->workers[i].index = i + 1;
        if (pthread_create(&p->threads[i], NULL, gc_pool_worker, &p->workers[i]) != 0) {
            gc_pool_destroy(p, i);
            return NULL;
        }
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
