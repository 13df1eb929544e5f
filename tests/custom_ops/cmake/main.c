/* Reads custom_mlp's input x (raw f32, argv[1]), runs the model and writes
 * its output y (raw f32) to argv[2]. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "custom_mlp.h"

int main(int argc, char **argv)
{
    static unsigned char arena[custom_mlp_ARENA_BYTES + custom_mlp_ARENA_ALIGN];
    float x[custom_mlp_INPUT_0_NUMEL], y[custom_mlp_OUTPUT_0_NUMEL];
    if (argc != 3) return 2;
    FILE *f = fopen(argv[1], "rb");
    if (!f || fread(x, sizeof x, 1, f) != 1) return 3;
    fclose(f);
    void *a = arena + (custom_mlp_ARENA_ALIGN - (uintptr_t)arena % custom_mlp_ARENA_ALIGN) % custom_mlp_ARENA_ALIGN;
    if (custom_mlp_run(a, x, y)) return 4;
    f = fopen(argv[2], "wb");
    if (!f || fwrite(y, sizeof y, 1, f) != 1 || fclose(f)) return 5;
    return 0;
}
