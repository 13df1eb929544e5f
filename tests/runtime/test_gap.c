/* test_gap.c — global average pooling over the thread pool (runtime/cpu/gcrt_gap.c)
 * against a double-precision reference written here and against the portable kernel
 * (gcrt_global_avgpool_f32, runtime/c/gcrt_nn.c) that it splits.
 *
 * A plain C program (no framework): it includes the runtime sources the way generated code does
 * and pools planes of 1 to 200 elements, 1 to 40 planes and MobileNetV2's 1280 planes of 7x7,
 * with values of mixed magnitudes (the compensated sum keeps their mean to about one rounding),
 * serially and on the bundled pool at 1, 2, 3 and 8 threads. Every result must equal the
 * portable kernel's bit for bit, lie within a few float roundings of the reference, and nothing
 * outside Y may be written. Exits non-zero on any failure, printing what failed.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

/* every kernel call splits over the pool, however small (gcrt_pool_for) */
#define GCRT_PAR_MIN_WORK 0
#include "gc_thread_pool.c"
#include "gcrt_cpu.c"
#include "gcrt_gap.c"
#include "gcrt_linalg.c"
#include "gcrt_nn.c"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GUARD 16
#define CANARY -12345.0f

static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static double rng_unit(void) /* [0, 1) */
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) / 9007199254740992.0;
}

static GcPthreadPool *pools[4];
static const int pool_threads[4] = {1, 2, 3, 8};
static int failures, checks;

/* Pools NC planes of S elements serially and on every pool; compares. */
static void run_case(int64_t NC, int64_t S)
{
    float *X = calloc((size_t)(NC * S), sizeof(float));
    float *want = malloc(sizeof(float) * (size_t)NC), *Y = malloc(sizeof(float) * (size_t)(NC + 2 * GUARD));
    if (!X || !want || !Y) {
        fprintf(stderr, "FAIL: out of memory\n");
        exit(1);
    }
    for (int64_t i = 0; i < NC * S; i++) /* magnitudes 1e-3 to 1e3, both signs */
        X[i] = (float)((rng_unit() * 2.0 - 1.0) * pow(10.0, rng_unit() * 6.0 - 3.0));
    gcrt_global_avgpool_f32(NC, S, X, want);
    for (int64_t q = 0; q < NC; q++) { /* the portable kernel against the reference */
        double s = 0, a = 0;
        for (int64_t i = 0; i < S; i++) s += X[q * S + i], a += fabs(X[q * S + i]);
        const double ref = s / (double)S, tol = 4.0 * FLT_EPSILON * (fabs(ref) + a / (double)S * 1e-3) + 1e-30;
        checks++;
        if (!(fabs((double)want[q] - ref) <= tol)) {
            fprintf(stderr, "FAIL: NC=%lld S=%lld plane %lld: %.9g, reference %.9g\n", (long long)NC, (long long)S,
                    (long long)q, (double)want[q], ref);
            failures++;
            break;
        }
    }
    for (int p = -1; p < 4; p++) {
        GcThreadPool tp;
        for (int64_t i = 0; i < NC + 2 * GUARD; i++) Y[i] = CANARY;
        if (p >= 0) tp = gc_pthread_pool_get(pools[p]);
        gcrt_global_avgpool_pool_f32(NC, S, X, Y + GUARD, p < 0 ? NULL : &tp);
        checks++;
        if (memcmp(Y + GUARD, want, sizeof(float) * (size_t)NC)) {
            fprintf(stderr, "FAIL: NC=%lld S=%lld: %s differs from the portable kernel\n", (long long)NC, (long long)S,
                    p < 0 ? "the serial call" : "a pool's result");
            failures++;
        }
        for (int64_t i = 0; i < GUARD; i++)
            if (Y[i] != CANARY || Y[GUARD + NC + i] != CANARY) {
                fprintf(stderr, "FAIL: NC=%lld S=%lld: wrote outside Y\n", (long long)NC, (long long)S);
                failures++;
                break;
            }
    }
    free(X);
    free(want);
    free(Y);
}

int main(void)
{
    for (int p = 0; p < 4; p++)
        if (!(pools[p] = gc_pthread_pool_start(pool_threads[p]))) {
            fprintf(stderr, "FAIL: gc_pthread_pool_start(%d) returned NULL\n", pool_threads[p]);
            return 1;
        }
    static const int64_t sizes[] = {1, 2, 7, 16, 49, 200};
    for (int64_t NC = 1; NC <= 40; NC++)
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) run_case(NC, sizes[s]);
    run_case(1280, 49); /* MobileNetV2's */
    run_case(2048, 1);
    gcrt_global_avgpool_pool_f32(0, 49, NULL, NULL, NULL); /* no planes: nothing to touch */
    for (int p = 0; p < 4; p++) gc_pthread_pool_stop(pools[p]);
    printf("%s: %d checks, %d failures\n", failures ? "FAILED" : "ok", checks, failures);
    return failures != 0;
}
