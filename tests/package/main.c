/* main.c — a program built against a model that graphc compiled (NAME mlp):
 * reads the model's one f32 input as raw little-endian floats from argv[1],
 * runs it serially (mlp_run_v) and on the bundled pthread pool with two
 * threads (mlp_run_v_parallel), fails unless both give the same bits, and
 * prints every output element, one per line (%.9g). test_package.py compares
 * the lines with `graphc run` on the same input.
 */
#include <stdio.h>
#include <string.h>

#include "mlp.h"

#if mlp_NUM_INPUTS != 1 || mlp_NUM_OUTPUTS != 1
#error "main.c expects a model with one input and one output"
#endif

static unsigned char arena[mlp_ARENA_BYTES + 1] __attribute__((aligned(64)));
static float x[mlp_INPUT_0_NUMEL], y[mlp_OUTPUT_0_NUMEL], y_pool[mlp_OUTPUT_0_NUMEL];

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s INPUT.f32\n", argv[0]);
        return 2;
    }
    if (strcmp(mlp_INPUT_0_DTYPE, "f32") || strcmp(mlp_OUTPUT_0_DTYPE, "f32")) {
        fprintf(stderr, "main.c expects f32 tensors\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    if (!f || fread(x, sizeof x[0], mlp_INPUT_0_NUMEL, f) != mlp_INPUT_0_NUMEL) {
        fprintf(stderr, "cannot read %d floats from %s\n", (int)mlp_INPUT_0_NUMEL, argv[1]);
        return 1;
    }
    fclose(f);
    const void *ins[1] = {x};
    void *outs[1] = {y};
    if (mlp_run_v(NULL, arena, ins, outs)) {
        fprintf(stderr, "mlp_run_v failed\n");
        return 1;
    }
    GcPthreadPool *p = gc_pthread_pool_start(2);
    if (!p) {
        fprintf(stderr, "gc_pthread_pool_start failed\n");
        return 1;
    }
    GcThreadPool pool = gc_pthread_pool_get(p);
    outs[0] = y_pool;
    int rc = mlp_run_v_parallel(NULL, arena, ins, outs, &pool);
    gc_pthread_pool_stop(p);
    if (rc || memcmp(y, y_pool, sizeof y)) {
        fprintf(stderr, "mlp_run_v_parallel failed or differs from mlp_run_v\n");
        return 1;
    }
    for (int i = 0; i < mlp_OUTPUT_0_NUMEL; i++) printf("%.9g\n", y[i]);
    return 0;
}
