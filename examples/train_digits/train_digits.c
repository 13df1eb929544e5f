/* train_digits.c — trains the generated digits_mlp model on scikit-learn's
 * digits and prints its test accuracy: the training API of a model compiled
 * with `graphc compile --train` (see run.sh and the README, "Training").
 *
 *   train_digits digits.bin [EPOCHS]
 *
 * The last 360 digits are the test set; the rest are shuffled every epoch
 * (a fixed-seed generator) and fed in batches of 32. Everything the model
 * needs is two caller-provided buffers: the state (parameters and optimizer
 * slots, filled by digits_mlp_init_state and updated by every
 * digits_mlp_train_step) and the arena (scratch for either pass).
 */
#define _POSIX_C_SOURCE 200112L /* posix_memalign */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "digits_mlp.h"

enum { B = 32, FEAT = 64, CLASSES = 10, TEST = 360 };

static uint64_t rng_state = 1;
static uint32_t next_u32(void) /* xorshift64* */
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (uint32_t)((rng_state * 2685821657736338717ull) >> 32);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: train_digits digits.bin [EPOCHS]\n");
        return 1;
    }
    int epochs = argc > 2 ? atoi(argv[2]) : 10;
    FILE *f = fopen(argv[1], "rb");
    int32_t n = 0;
    if (!f || fread(&n, 4, 1, f) != 1 || n <= TEST) {
        fprintf(stderr, "train_digits: cannot read %s\n", argv[1]);
        return 1;
    }
    float *x = malloc(sizeof(float) * FEAT * (size_t)n);
    int64_t *y = malloc(sizeof(int64_t) * (size_t)n);
    int *order = malloc(sizeof(int) * (size_t)n);
    if (!x || !y || !order || fread(x, sizeof(float) * FEAT, (size_t)n, f) != (size_t)n ||
        fread(y, sizeof(int64_t), (size_t)n, f) != (size_t)n) {
        fprintf(stderr, "train_digits: %s is truncated\n", argv[1]);
        return 1;
    }
    fclose(f);
    int n_train = n - TEST;

    void *state = NULL, *arena = NULL;
    if (posix_memalign(&state, digits_mlp_STATE_ALIGN, digits_mlp_STATE_BYTES) ||
        posix_memalign(&arena, digits_mlp_ARENA_ALIGN, digits_mlp_ARENA_BYTES)) {
        fprintf(stderr, "train_digits: out of memory\n");
        return 1;
    }
    digits_mlp_init_state(state);

    static float bx[B * FEAT], logits[B * CLASSES];
    static int64_t by[B];
    float loss;
    const void *ins[2] = {bx, by};
    void *outs[2] = {&loss, logits};
    for (int i = 0; i < n_train; i++) order[i] = i;
    for (int e = 1; e <= epochs; e++) {
        for (int i = n_train - 1; i > 0; i--) { /* Fisher-Yates */
            int j = (int)(next_u32() % (uint32_t)(i + 1)), t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        double sum = 0;
        int steps = 0;
        for (int s = 0; s + B <= n_train; s += B, steps++) {
            for (int b = 0; b < B; b++) {
                memcpy(bx + b * FEAT, x + (size_t)order[s + b] * FEAT, sizeof(float) * FEAT);
                by[b] = y[order[s + b]];
            }
            digits_mlp_train_step(state, arena, ins, outs);
            sum += loss;
        }
        printf("epoch %2d: mean loss %.4f\n", e, sum / steps);
    }

    int correct = 0;
    const void *tin[1] = {bx};
    void *tout[1] = {logits};
    for (int s = n_train; s < n; s += B) {
        int m = n - s < B ? n - s : B;
        memset(bx, 0, sizeof bx);
        memcpy(bx, x + (size_t)s * FEAT, sizeof(float) * FEAT * (size_t)m);
        digits_mlp_infer_v(state, arena, tin, tout);
        for (int b = 0; b < m; b++) {
            int best = 0;
            for (int k = 1; k < CLASSES; k++)
                if (logits[b * CLASSES + k] > logits[b * CLASSES + best]) best = k;
            correct += best == y[s + b];
        }
    }
    printf("test accuracy: %.2f%% (%d of %d)\n", 100.0 * correct / TEST, correct, TEST);
    free(x);
    free(y);
    free(order);
    free(state);
    free(arena);
    return 0;
}
