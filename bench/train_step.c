/* train_step.c — times NAME_train_step of a model compiled with
 * `graphc compile --train` (bench/train_step.py builds it against each model).
 *
 *   train_step BATCH.bin WARMUP STEPS
 *
 * BATCH.bin holds one batch: the train_step inputs in order, their raw bytes
 * (NAME_INPUT_<i>_BYTES each). The program initializes the state, runs WARMUP
 * steps, then STEPS timed steps, all on that batch, and prints
 *
 *   loss0: L        the loss of the first step (the initial weights)
 *   ms/step: M      the median over the timed steps
 *   ms/step mean: A
 *
 * Built with -DMODEL=name (the --name given to graphc); the shapes come from
 * the generated header's macros, as in tests/train/train_driver.c.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define STR_(a) #a
#define STR(a) STR_(a)
#define M(s) CAT(MODEL, s)
#include STR(MODEL.h)

static void *aligned(size_t n)
{
    void *p = NULL;
    if (posix_memalign(&p, 64, n ? n : 64)) return NULL;
    return p;
}

static int fail(const char *msg)
{
    fprintf(stderr, "train_step: %s\n", msg);
    return 1;
}

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    if (argc != 4) return fail("usage: train_step BATCH.bin WARMUP STEPS");
    long warmup = atol(argv[2]), steps = atol(argv[3]);
    if (warmup < 0 || steps < 1) return fail("WARMUP must be >= 0 and STEPS >= 1");
    static const size_t in_bytes[] = {M(_INPUT_0_BYTES),
#if M(_NUM_INPUTS) > 1
                                      M(_INPUT_1_BYTES),
#endif
    };
    enum { NIN = sizeof in_bytes / sizeof in_bytes[0] };
    if (NIN != M(_NUM_INPUTS)) return fail("the model has more than 2 inputs");
    static const size_t out_bytes[] = {M(_OUTPUT_0_BYTES),
#if M(_NUM_OUTPUTS) > 1
                                       M(_OUTPUT_1_BYTES),
#endif
    };
    if (sizeof out_bytes / sizeof out_bytes[0] != M(_NUM_OUTPUTS)) return fail("the model has more than 2 outputs");
    unsigned char *state = aligned(M(_STATE_BYTES)), *arena = aligned(M(_ARENA_BYTES));
    void *ins[NIN], *outs[M(_NUM_OUTPUTS)];
    double *times = malloc(sizeof(double) * (size_t)steps);
    if (!state || !arena || !times) return fail("out of memory");
    FILE *f = fopen(argv[1], "rb");
    if (!f) return fail("cannot open BATCH.bin");
    for (int i = 0; i < NIN; i++) {
        ins[i] = aligned(in_bytes[i]);
        if (!ins[i] || fread(ins[i], 1, in_bytes[i], f) != in_bytes[i]) return fail("BATCH.bin is too short");
    }
    fclose(f);
    for (int i = 0; i < M(_NUM_OUTPUTS); i++)
        if (!(outs[i] = aligned(out_bytes[i]))) return fail("out of memory");
    if (M(_init_state)(state)) return fail("init_state failed");

    for (long s = 0; s < warmup + steps; s++) {
        double t = now_ms();
        if (M(_train_step)(state, arena, (const void *const *)ins, outs)) return fail("train_step failed");
        t = now_ms() - t;
        if (s == 0) printf("loss0: %.9g\n", (double)*(float *)outs[0]);
        if (s >= warmup) times[s - warmup] = t;
    }
    double sum = 0;
    for (long s = 0; s < steps; s++) sum += times[s];
    qsort(times, (size_t)steps, sizeof(double), cmp_double);
    double median = steps % 2 ? times[steps / 2] : 0.5 * (times[steps / 2 - 1] + times[steps / 2]);
    printf("ms/step: %.4f\nms/step mean: %.4f\n", median, sum / (double)steps);
    for (int i = 0; i < NIN; i++) free(ins[i]);
    for (int i = 0; i < M(_NUM_OUTPUTS); i++) free(outs[i]);
    free(times);
    free(state);
    free(arena);
    return 0;
}
