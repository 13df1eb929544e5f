/* test_thread_pool.c — the bundled pthread pool (runtime/cpu/gc_thread_pool.c).
 *
 * A plain C program (no framework), built like the other runtime tests. For
 * pools of 2, 3 and 8 threads it runs thousands of jobs of 2 to 300 tasks
 * back to back, and checks that every task of every job ran exactly once
 * and that parallel_for returned only after all of them had finished (each
 * task counts itself in its job's argument, which the caller reads right
 * after the call; jobs alternate between two arguments, so a late worker
 * that ran a task with the previous job's argument shows there). It also
 * covers:
 *   - jobs after a pause long enough for the workers to go to sleep on the
 *     condition variable (the wake-up path) and a caller that has to sleep
 *     until a slow task ends (the done path);
 *   - a parallel_for called from inside a task (runs serially, no deadlock);
 *   - two threads calling parallel_for on the same pool at once (one of them
 *     runs its job serially; both jobs complete);
 *   - starting and stopping pools repeatedly, with and without jobs.
 * The interleavings are checked by running it under ThreadSanitizer (by
 * hand: gcc -fsanitize=thread); here it checks results. Exits non-zero on
 * any failure, printing what failed.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "gc_thread_pool.c"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define MAX_TASKS 300

static int failures;

#define CHECK(cond, ...)                                                                                         \
    do {                                                                                                         \
        if (!(cond)) {                                                                                           \
            if (failures++ < 20) {                                                                               \
                printf("FAIL %s:%d: ", __FILE__, __LINE__);                                                      \
                printf(__VA_ARGS__);                                                                             \
                printf("\n");                                                                                    \
            }                                                                                                    \
        }                                                                                                        \
    } while (0)

typedef struct Job {
    int runs[MAX_TASKS]; /* times task t ran (atomic) */
    int n;               /* tasks of the job */
    int bad_task;        /* tasks with an index out of range (atomic) */
    int sleep_task;      /* a task that sleeps 3 ms (-1: none) */
    const GcThreadPool *nested; /* non-NULL: each task calls parallel_for on it */
    int nested_runs;            /* tasks of the nested calls that ran (atomic) */
} Job;

static void sleep_ms(int ms)
{
    struct timespec ts;
    ts.tv_sec = 0;
    ts.tv_nsec = (long)ms * 1000000L;
    nanosleep(&ts, NULL);
}

static void nested_task(void *arg, int64_t t)
{
    Job *j = (Job *)arg;
    (void)t;
    __atomic_add_fetch(&j->nested_runs, 1, __ATOMIC_RELAXED);
}

static void task(void *arg, int64_t t)
{
    Job *j = (Job *)arg;
    volatile int spin = 0;
    int i;
    if (t < 0 || t >= MAX_TASKS) {
        __atomic_add_fetch(&j->bad_task, 1, __ATOMIC_RELAXED);
        return;
    }
    for (i = 0; i < (int)(t % 7) * 50; i++) spin++; /* unequal tasks: the threads take each other's */
    if (t == j->sleep_task) sleep_ms(3);
    if (j->nested) j->nested->parallel_for(j->nested->ctx, 5, nested_task, j);
    __atomic_add_fetch(&j->runs[t], 1, __ATOMIC_RELAXED);
}

/* Checks job j after its parallel_for returned: every task ran once. */
static void check_job(const Job *j, int job)
{
    int t;
    for (t = 0; t < j->n; t++)
        CHECK(j->runs[t] == 1, "job %d (%d tasks): task %d ran %d times", job, j->n, t, j->runs[t]);
    for (; t < MAX_TASKS; t++) CHECK(j->runs[t] == 0, "job %d (%d tasks): task %d outside the job ran", job, j->n, t);
    CHECK(j->bad_task == 0, "job %d: a task index out of range", job);
}

/* Runs job number `job` of n tasks on pool v with jobs[job % 2] as its
 * argument and checks it, and that the previous job's argument (the other
 * one) saw no task since its own call returned: a worker that ran a task of
 * this job with the last job's argument would count it there. */
static void run_job(const GcThreadPool *v, Job *jobs, int job, int n, int sleep_task, const GcThreadPool *nested)
{
    Job *j = &jobs[job % 2];
    memset(j, 0, sizeof *j);
    j->n = n;
    j->sleep_task = sleep_task;
    j->nested = nested;
    v->parallel_for(v->ctx, n, task, j);
    /* plain reads after the call: parallel_for must have waited for every task */
    check_job(j, job);
    if (jobs[(job + 1) % 2].n > 0) check_job(&jobs[(job + 1) % 2], job - 1);
    if (nested) CHECK(j->nested_runs == 5 * n, "job %d: %d nested tasks ran, want %d", job, j->nested_runs, 5 * n);
}

typedef struct Caller {
    const GcThreadPool *v;
    int first_job;
    Job jobs[2];
} Caller;

static void *caller_main(void *arg)
{
    Caller *c = (Caller *)arg;
    int i;
    for (i = 0; i < 300; i++) run_job(c->v, c->jobs, c->first_job + i, 2 + i % 40, -1, NULL);
    return NULL;
}

int main(void)
{
    static const int threads[] = {2, 3, 8};
    static Job jobs[2];
    size_t k;
    int i;
    for (k = 0; k < sizeof threads / sizeof threads[0]; k++) {
        GcPthreadPool *p = gc_pthread_pool_start(threads[k]);
        GcThreadPool v;
        CHECK(p != NULL, "gc_pthread_pool_start(%d) failed", threads[k]);
        if (!p) continue;
        v = gc_pthread_pool_get(p);
        memset(jobs, 0, sizeof jobs);
        CHECK(v.n_threads == threads[k], "n_threads %d, want %d", v.n_threads, threads[k]);
        /* back to back: the workers spin between jobs */
        for (i = 0; i < 3000; i++) run_job(&v, jobs, i, 2 + (i * 37) % (MAX_TASKS - 1), -1, NULL);
        /* after a pause the workers sleep: a job must wake them; a slow task makes the caller sleep */
        for (i = 0; i < 6; i++) {
            sleep_ms(40);
            run_job(&v, jobs, 10000 + i, 2 + i * 13, i % 2 ? 1 : -1, NULL);
        }
        /* a parallel_for from inside a task runs serially on that thread */
        for (i = 0; i < 50; i++) run_job(&v, jobs, 20000 + i, 2 + i, -1, &v);
        /* two callers at once */
        {
            Caller a, b;
            pthread_t ta, tb;
            memset(&a, 0, sizeof a);
            memset(&b, 0, sizeof b);
            a.v = b.v = &v;
            a.first_job = 30000;
            b.first_job = 40000;
            if (pthread_create(&ta, NULL, caller_main, &a) == 0) {
                if (pthread_create(&tb, NULL, caller_main, &b) == 0) pthread_join(tb, NULL);
                else CHECK(0, "pthread_create failed");
                pthread_join(ta, NULL);
            } else {
                CHECK(0, "pthread_create failed");
            }
        }
        gc_pthread_pool_stop(p);
    }
    /* start and stop, with and without a job; a pool of one thread runs jobs itself */
    memset(jobs, 0, sizeof jobs);
    for (i = 0; i < 40; i++) {
        GcPthreadPool *p = gc_pthread_pool_start(1 + i % 4);
        GcThreadPool v = gc_pthread_pool_get(p);
        if (i % 3) run_job(&v, jobs, 50000 + i, 1 + i, -1, NULL);
        if (i % 5 == 0) sleep_ms(1);
        gc_pthread_pool_stop(p);
    }
    CHECK(gc_pthread_pool_start(0) == NULL, "a pool of 0 threads started");
    CHECK(gc_pthread_pool_start(GC_PTHREAD_POOL_MAX + 1) == NULL, "a pool over the maximum started");
    gc_pthread_pool_stop(NULL);
    if (failures) {
        printf("test_thread_pool: %d failures\n", failures);
        return 1;
    }
    printf("test_thread_pool: all passed\n");
    return 0;
}
