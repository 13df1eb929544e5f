/* api_main.c — a program built against graphc's C API (graphc/graphc.h,
 * libgraphc): builds y = Relu(x * w + b) on hand-picked numbers, interprets
 * it and prints y (2 0 1 0, worked out by hand in test_package.py), then
 * compiles it into the folder argv[1] and prints "compiled".
 */
#include <stdio.h>

#include "graphc/graphc.h"

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s OUTPUT_FOLDER\n", argv[0]);
        return 2;
    }
    static const int64_t dims[1] = {4};
    static const float w[4] = {1.0f, -2.0f, 0.5f, 3.0f}, b[4] = {0.0f, 1.0f, -1.0f, 0.25f};
    static const float x[4] = {2.0f, 1.0f, 4.0f, -1.0f};
    GcDiag d = {0};
    GcGraph *g = gc_graph_new("affine_relu");
    GcValue *xw_in[2] = {gc_input(g, "x", "f32", 1, dims, &d), gc_const(g, "w", "f32", 1, dims, w, &d)};
    GcValue *s_in[2] = {gc_op(g, "Mul", "xw", xw_in, 2, NULL, &d), gc_const(g, "b", "f32", 1, dims, b, &d)};
    GcValue *s = gc_op(g, "Add", "s", s_in, 2, NULL, &d);
    GcValue *yv = gc_op(g, "Relu", "y", &s, 1, NULL, &d);
    if (!yv) {
        fprintf(stderr, "building the graph: %s\n", d.msg);
        return 1;
    }
    gc_output(g, yv);
    float y[4] = {-9, -9, -9, -9};
    const void *ins[1] = {x};
    void *outs[1] = {y};
    if (gc_interpret(g, ins, outs, &d)) {
        fprintf(stderr, "gc_interpret: %s\n", d.msg);
        return 1;
    }
    printf("%g %g %g %g\n", y[0], y[1], y[2], y[3]);
    GcCompileOptions o = {0};
    if (gc_compile(g, argv[1], &o, &d)) {
        fprintf(stderr, "gc_compile: %s\n", d.msg);
        return 1;
    }
    printf("compiled\n");
    gc_graph_free(g);
    return 0;
}
