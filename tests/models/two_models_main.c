/* two_models_main.c — one program that links two graphc models, the MLP and
 * the LeNet-style CNN of test_models.c (libmlp.a and liblenet.a), and runs
 * both. It links only if the two generated libraries define no symbol in
 * common (their runtime kernels are private to each model).
 *
 *   two_models MLP_IN.raw LENET_IN.raw MLP_OUT.raw LENET_OUT.raw
 *
 * Inputs and outputs are raw little-endian float32 files of exactly the
 * models' input and output sizes; test_models.c writes the inputs and
 * compares the outputs with the interpreter. Exit status 0 on success. */
#include <stdio.h>
#include <stdlib.h>

#include "lenet.h"
#include "mlp.h"

static int read_raw(const char *path, void *buf, size_t bytes)
{
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    size_t n = fread(buf, 1, bytes, f);
    int extra = fgetc(f) != EOF;
    fclose(f);
    return n == bytes && !extra ? 0 : -1;
}

static int write_raw(const char *path, const void *buf, size_t bytes)
{
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    size_t n = fwrite(buf, 1, bytes, f);
    return fclose(f) == 0 && n == bytes ? 0 : -1;
}

static _Alignas(64) unsigned char mlp_arena[mlp_ARENA_BYTES + 1];
static _Alignas(64) unsigned char lenet_arena[lenet_ARENA_BYTES + 1];
static float mlp_x[mlp_INPUT_0_NUMEL], mlp_y[mlp_OUTPUT_0_NUMEL];
static float lenet_x[lenet_INPUT_0_NUMEL], lenet_y[lenet_OUTPUT_0_NUMEL];

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: %s MLP_IN LENET_IN MLP_OUT LENET_OUT\n", argv[0]);
        return 2;
    }
    if (read_raw(argv[1], mlp_x, sizeof mlp_x) || read_raw(argv[2], lenet_x, sizeof lenet_x)) {
        fprintf(stderr, "cannot read the inputs\n");
        return 1;
    }
    if (mlp_run(mlp_arena, mlp_x, mlp_y) != 0 || lenet_run(lenet_arena, lenet_x, lenet_y) != 0) {
        fprintf(stderr, "a model refused to run\n");
        return 1;
    }
    if (write_raw(argv[3], mlp_y, sizeof mlp_y) || write_raw(argv[4], lenet_y, sizeof lenet_y)) {
        fprintf(stderr, "cannot write the outputs\n");
        return 1;
    }
    return 0;
}
