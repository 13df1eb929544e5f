/* cpu_bench.c — times NAME_run_v (1 thread) or NAME_run_v_parallel (THREADS > 1) of a model
 * compiled by `graphc compile` (bench/cpu_vs_torch.py builds it against each model).
 *
 *   cpu_bench THREADS REPS [IN.bin [OUT.bin]]
 *
 * The inputs are IN.bin's raw bytes (the inputs in graph order, NAME_INPUT_<i>_BYTES each) or,
 * without IN.bin, a fixed pattern (f32 inputs: uniform in [-1, 1) from an LCG; other dtypes:
 * zero bytes). The program runs one untimed warm-up inference, writes its outputs (raw, in
 * graph order, NAME_OUTPUT_<i>_BYTES each) to OUT.bin when given, then runs REPS timed
 * inferences (REPS may be 0) and prints each one's time in ms (CLOCK_MONOTONIC), one per line,
 * after the last run (no I/O between runs).
 *
 * THREADS 1 calls NAME_run_v, the serial entry. THREADS > 1 calls NAME_run_v_parallel with the
 * bundled pthread pool (gc_thread_pool.c, compiled into this program), started once before the
 * warm-up; when the generated header does not define NAME_HAS_RUN_PARALLEL the program prints
 * "cpu_bench: no parallel entry" to stderr and exits with status 3.
 *
 * Built with -DMODEL=name (the --name given to graphc) and -I DIR; the buffer sizes come from
 * the generated header's macros. Up to 4 inputs and 4 outputs.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define STR_(a) #a
#define STR(a) STR_(a)
#define M(s) CAT(MODEL, s)
#include STR(MODEL.h)

/* An undefined NAME_HAS_RUN_PARALLEL expands to an identifier that #if reads as 0. */
#if M(_HAS_RUN_PARALLEL)
#include "gc_thread_pool.h"
#define HAVE_PARALLEL 1
#else
#define HAVE_PARALLEL 0
#endif

#if M(_NUM_INPUTS) < 1 || M(_NUM_INPUTS) > 4 || M(_NUM_OUTPUTS) < 1 || M(_NUM_OUTPUTS) > 4
#error "cpu_bench.c handles 1 to 4 inputs and 1 to 4 outputs"
#endif

static const size_t in_bytes[] = {
    M(_INPUT_0_BYTES),
#if M(_NUM_INPUTS) > 1
    M(_INPUT_1_BYTES),
#endif
#if M(_NUM_INPUTS) > 2
    M(_INPUT_2_BYTES),
#endif
#if M(_NUM_INPUTS) > 3
    M(_INPUT_3_BYTES),
#endif
};
static const char *const in_dtype[] = {
    M(_INPUT_0_DTYPE),
#if M(_NUM_INPUTS) > 1
    M(_INPUT_1_DTYPE),
#endif
#if M(_NUM_INPUTS) > 2
    M(_INPUT_2_DTYPE),
#endif
#if M(_NUM_INPUTS) > 3
    M(_INPUT_3_DTYPE),
#endif
};
static const size_t out_bytes[] = {
    M(_OUTPUT_0_BYTES),
#if M(_NUM_OUTPUTS) > 1
    M(_OUTPUT_1_BYTES),
#endif
#if M(_NUM_OUTPUTS) > 2
    M(_OUTPUT_2_BYTES),
#endif
#if M(_NUM_OUTPUTS) > 3
    M(_OUTPUT_3_BYTES),
#endif
};
enum { NIN = M(_NUM_INPUTS), NOUT = M(_NUM_OUTPUTS) };

static void *aligned(size_t n)
{
    void *p = NULL;
    if (posix_memalign(&p, 64, n ? n : 64)) return NULL;
    return p;
}

static int fail(const char *msg)
{
    fprintf(stderr, "cpu_bench: %s\n", msg);
    return 1;
}

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

int main(int argc, char **argv)
{
    if (argc < 3 || argc > 5) return fail("usage: cpu_bench THREADS REPS [IN.bin [OUT.bin]]");
    int threads = atoi(argv[1]);
    long reps = atol(argv[2]);
    if (threads < 1 || reps < 0) return fail("THREADS must be >= 1 and REPS >= 0");
#if !HAVE_PARALLEL
    if (threads > 1) {
        fprintf(stderr, "cpu_bench: no parallel entry (" STR(MODEL) "_HAS_RUN_PARALLEL is not defined)\n");
        return 3;
    }
#endif
    void *ins[NIN], *outs[NOUT];
    void *arena = aligned(M(_ARENA_BYTES) > M(_ARENA_ALIGN) ? (size_t)M(_ARENA_BYTES) : (size_t)M(_ARENA_ALIGN));
    double *times = malloc(sizeof(double) * (size_t)(reps ? reps : 1));
    if (!arena || !times) return fail("out of memory");
    FILE *f = argc > 3 ? fopen(argv[3], "rb") : NULL;
    if (argc > 3 && !f) return fail("cannot open IN.bin");
    unsigned s = 12345u;
    for (int i = 0; i < NIN; i++) {
        if (!(ins[i] = aligned(in_bytes[i]))) return fail("out of memory");
        if (f) {
            if (fread(ins[i], 1, in_bytes[i], f) != in_bytes[i]) return fail("IN.bin is too short");
        } else if (!strcmp(in_dtype[i], "f32")) {
            float *x = ins[i];
            for (size_t k = 0; k < in_bytes[i] / sizeof(float); k++) {
                s = s * 1664525u + 1013904223u;
                x[k] = (float)((s >> 8) & 0xffff) / 32768.0f - 1.0f;
            }
        } else {
            memset(ins[i], 0, in_bytes[i]);
        }
    }
    if (f) fclose(f);
    for (int i = 0; i < NOUT; i++)
        if (!(outs[i] = aligned(out_bytes[i]))) return fail("out of memory");

#if HAVE_PARALLEL
    GcPthreadPool *pp = NULL;
    GcThreadPool pool = {1, NULL, NULL};
    if (threads > 1) {
        if (!(pp = gc_pthread_pool_start(threads))) return fail("gc_pthread_pool_start failed");
        pool = gc_pthread_pool_get(pp);
    }
#define RUN()                                                                                              \
    (threads > 1 ? M(_run_v_parallel)(NULL, arena, (const void *const *)ins, outs, &pool)                  \
                 : M(_run_v)(NULL, arena, (const void *const *)ins, outs))
#else
#define RUN() M(_run_v)(NULL, arena, (const void *const *)ins, outs)
#endif

    if (RUN()) return fail("the run function failed");
    if (argc > 4) {
        FILE *o = fopen(argv[4], "wb");
        if (!o) return fail("cannot create OUT.bin");
        for (int i = 0; i < NOUT; i++)
            if (fwrite(outs[i], 1, out_bytes[i], o) != out_bytes[i]) return fail("cannot write OUT.bin");
        if (fclose(o)) return fail("cannot write OUT.bin");
    }
    for (long r = 0; r < reps; r++) {
        double t = now_ms();
        if (RUN()) return fail("the run function failed");
        times[r] = now_ms() - t;
    }
    for (long r = 0; r < reps; r++) printf("%.6f\n", times[r]);

#if HAVE_PARALLEL
    gc_pthread_pool_stop(pp);
#endif
    for (int i = 0; i < NIN; i++) free(ins[i]);
    for (int i = 0; i < NOUT; i++) free(outs[i]);
    free(times);
    free(arena);
    return 0;
}
