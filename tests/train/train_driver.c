/* train_driver.c — runs a model compiled with `graphc compile --train` on a
 * prepared batch stream: the digits test (tests/train/test_digits.py) and
 * the training benchmark build it against each generated model.
 *
 *   train_driver BATCHES.bin TEST.bin LOSSES.txt
 *
 * BATCHES.bin holds the training steps one after another: per step, the
 * model's train_step inputs in order (their raw bytes, NAME_INPUT_<i>_BYTES
 * each). TEST.bin holds the test set in inference batches: per batch, the
 * NAME_INFER_INPUT_0 bytes, then the batch's labels as int64. The driver
 * initializes the state, runs one train_step per step and writes each
 * step's loss on its own line of LOSSES.txt (%.9g), then runs infer_v on
 * every test batch and prints "accuracy: A (correct/total)" from the argmax
 * of output 0 (labels < 0 are padding and not counted).
 *
 * Built with -DMODEL=name (the --name given to graphc); everything comes
 * from the generated header's macros, so one driver serves every model.
 */
#define _POSIX_C_SOURCE 200112L /* posix_memalign */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    fprintf(stderr, "train_driver: %s\n", msg);
    return 1;
}

int main(int argc, char **argv)
{
    if (argc != 4) return fail("usage: train_driver BATCHES.bin TEST.bin LOSSES.txt");
    static const size_t in_bytes[] = {M(_INPUT_0_BYTES),
#if M(_NUM_INPUTS) > 1
                                      M(_INPUT_1_BYTES),
#endif
#if M(_NUM_INPUTS) > 2
                                      M(_INPUT_2_BYTES),
#endif
    };
    enum { NIN = sizeof in_bytes / sizeof in_bytes[0] };
    if (NIN != M(_NUM_INPUTS)) return fail("the model has more than 3 inputs");
    unsigned char *state = aligned(M(_STATE_BYTES)), *arena = aligned(M(_ARENA_BYTES));
    void *ins[NIN], *outs[M(_NUM_OUTPUTS)];
    static const size_t out_bytes[] = {M(_OUTPUT_0_BYTES),
#if M(_NUM_OUTPUTS) > 1
                                       M(_OUTPUT_1_BYTES),
#endif
    };
    if (sizeof out_bytes / sizeof out_bytes[0] < M(_NUM_OUTPUTS)) return fail("the model has more than 2 outputs");
    for (int i = 0; i < NIN; i++) ins[i] = aligned(in_bytes[i]);
    for (int i = 0; i < M(_NUM_OUTPUTS); i++) outs[i] = aligned(out_bytes[i]);
    if (!state || !arena) return fail("out of memory");
    if (M(_init_state)(state)) return fail("init_state failed");

    FILE *fb = fopen(argv[1], "rb"), *ft = fopen(argv[2], "rb"), *fl = fopen(argv[3], "w");
    if (!fb || !ft || !fl) return fail("cannot open a file");
    long steps = 0;
    for (;;) {
        int got = 1;
        for (int i = 0; i < NIN && got; i++) got = fread(ins[i], 1, in_bytes[i], fb) == in_bytes[i];
        if (!got) break;
        if (M(_train_step)(state, arena, (const void *const *)ins, outs)) return fail("train_step failed");
        double loss = M(_OUTPUT_0_BYTES) == 4 ? (double)*(float *)outs[0] : *(double *)outs[0];
        fprintf(fl, "%.9g\n", loss);
        steps++;
    }
    fclose(fb);
    if (fclose(fl)) return fail("cannot write the losses");

    static const int64_t odims[] = M(_INFER_OUTPUT_0_DIMS);
    const int64_t B = odims[0], classes = M(_INFER_OUTPUT_0_NUMEL) / B;
    void *tx = aligned(M(_INFER_INPUT_0_BYTES));
    float *logits = aligned(M(_INFER_OUTPUT_0_BYTES));
    int64_t *labels = malloc(sizeof(int64_t) * (size_t)B);
    if (!tx || !logits || !labels) return fail("out of memory");
    long correct = 0, total = 0;
    while (fread(tx, 1, M(_INFER_INPUT_0_BYTES), ft) == M(_INFER_INPUT_0_BYTES)) {
        if (fread(labels, sizeof(int64_t), (size_t)B, ft) != (size_t)B) return fail("TEST.bin ends inside a batch");
        const void *tin[1] = {tx};
        void *tout[1] = {logits};
        if (M(_infer_v)(state, arena, tin, tout)) return fail("infer_v failed");
        for (int b = 0; b < B; b++) {
            if (labels[b] < 0) continue;
            int64_t best = 0;
            for (int64_t k = 1; k < classes; k++)
                if (logits[b * classes + k] > logits[b * classes + best]) best = k;
            correct += best == labels[b];
            total++;
        }
    }
    fclose(ft);
    printf("steps: %ld\naccuracy: %.6f (%ld/%ld)\n", steps, total ? (double)correct / (double)total : 0.0, correct, total);
    free(tx);
    free(logits);
    free(labels);
    for (int i = 0; i < NIN; i++) free(ins[i]);
    for (int i = 0; i < M(_NUM_OUTPUTS); i++) free(outs[i]);
    free(state);
    free(arena);
    return 0;
}
