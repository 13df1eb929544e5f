/* test_public_header.c — graphc's public header used on its own.
 *
 * This file is built with include/ as its only graphc include folder (see
 * tests/CMakeLists.txt), so it compiles only if include/graphc/graphc.h is
 * complete by itself: a GcDiag declared and read by value, graphs and values
 * through opaque pointers. Through that header alone it builds
 * y = Relu(x * w + b) on hand-picked numbers, interprets it and compares
 * with the values worked out by hand, checks that errors arrive as one
 * message in GcDiag (unknown op, bad dtype, unknown target, a model name
 * that is not a C identifier, a tensor over max_tensor_bytes, the CUDA
 * target's options out of place), and compiles the graph into a folder; a
 * Conv compiled for the CUDA target at fp16 shows its layout option. A user
 * operator file registered with gc_load_ops gives an op that gc_op and
 * gc_interpret know.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "graphc/graphc.h"

static GcGraph *build(GcDiag *d)
{
    static const int64_t dims[1] = {4};
    static const float w[4] = {1.0f, -2.0f, 0.5f, 3.0f}, b[4] = {0.0f, 1.0f, -1.0f, 0.25f};
    GcGraph *g = gc_graph_new("affine_relu");
    GcValue *x = gc_input(g, "x", "f32", 1, dims, d);
    GcValue *wv = gc_const(g, "w", "f32", 1, dims, w, d);
    GcValue *bv = gc_const(g, "b", "f32", 1, dims, b, d);
    assert_non_null(x);
    assert_non_null(wv);
    assert_non_null(bv);
    GcValue *xw_in[2] = {x, wv};
    GcValue *xw = gc_op(g, "Mul", "xw", xw_in, 2, NULL, d);
    GcValue *s_in[2] = {xw, bv};
    GcValue *s = gc_op(g, "Add", "s", s_in, 2, NULL, d);
    GcValue *y = gc_op(g, "Relu", "y", &s, 1, NULL, d);
    assert_non_null(y);
    gc_output(g, y);
    return g;
}

static void test_interpret(void **state)
{
    (void)state;
    GcDiag d = {0};
    GcGraph *g = build(&d);
    const float x[4] = {2.0f, 1.0f, 4.0f, -1.0f};
    /* 2*1+0 = 2; 1*-2+1 = -1 -> 0; 4*0.5-1 = 1; -1*3+0.25 = -2.75 -> 0 */
    const float want[4] = {2.0f, 0.0f, 1.0f, 0.0f};
    float y[4] = {-9, -9, -9, -9};
    const void *ins[1] = {x};
    void *outs[1] = {y};
    if (gc_interpret(g, ins, outs, &d)) fail_msg("gc_interpret: %s", d.msg);
    assert_int_equal(d.n_errors, 0);
    for (int i = 0; i < 4; i++) assert_true(y[i] == want[i]);
    gc_graph_free(g);
}

static void test_errors(void **state)
{
    (void)state;
    GcDiag d = {0};
    GcGraph *g = gc_graph_new("bad");
    static const int64_t dims[1] = {2};
    assert_null(gc_input(g, "x", "f33", 1, dims, &d));
    assert_int_equal(d.n_errors, 1);
    assert_non_null(strstr(d.msg, "unknown dtype 'f33'"));
    GcValue *x = gc_input(g, "x", "f32", 1, dims, &d);
    assert_null(gc_op(g, "Frobnicate", "f", &x, 1, NULL, &d));
    assert_int_equal(d.n_errors, 2);
    assert_string_equal(d.msg, "unknown op 'Frobnicate'");
    gc_graph_free(g);

    g = build(&d);
    GcCompileOptions o = {0};
    o.target = "fpga";
    assert_int_equal(gc_compile(g, GRAPHC_BINARY_DIR "/public_header_bad", &o, &d), -1);
    assert_string_equal(d.msg, "unknown target 'fpga'");
    o.target = NULL;
    o.name = "not-an-identifier";
    assert_int_equal(gc_compile(g, GRAPHC_BINARY_DIR "/public_header_bad", &o, &d), -1);
    assert_non_null(strstr(d.msg, "model name 'not-an-identifier' is not a C identifier"));
    o.name = NULL;
    o.max_tensor_bytes = 8; /* the size policy: every tensor here is 16 bytes */
    assert_int_equal(gc_compile(g, GRAPHC_BINARY_DIR "/public_header_bad", &o, &d), -1);
    assert_string_equal(d.msg, "input 'x' is 16 bytes (f32 [4]), over the 8-byte limit (--max-tensor-bytes)");
    o.max_tensor_bytes = -1;
    assert_int_equal(gc_compile(g, GRAPHC_BINARY_DIR "/public_header_bad", &o, &d), -1);
    assert_non_null(strstr(d.msg, "max_tensor_bytes -1 is out of range"));
    o.max_tensor_bytes = 0;
    /* the CUDA target's options */
    o.precision = "fp16";
    assert_int_equal(gc_compile(g, GRAPHC_BINARY_DIR "/public_header_bad", &o, &d), -1);
    assert_string_equal(d.msg, "precision=fp16 needs target \"cuda\" (the c target computes in the model's own types)");
    o.target = "cuda";
    o.precision = "fp8";
    assert_int_equal(gc_compile(g, GRAPHC_BINARY_DIR "/public_header_bad", &o, &d), -1);
    assert_string_equal(d.msg, "precision needs fp32, fp16 or bf16, got 'fp8'");
    o.precision = NULL;
    o.cuda_layout = "chwn";
    assert_int_equal(gc_compile(g, GRAPHC_BINARY_DIR "/public_header_bad", &o, &d), -1);
    assert_string_equal(d.msg, "cuda_layout needs auto, nchw or nhwc, got 'chwn'");
    o.target = "c";
    o.cuda_layout = "nhwc";
    assert_int_equal(gc_compile(g, GRAPHC_BINARY_DIR "/public_header_bad", &o, &d), -1);
    assert_string_equal(d.msg, "cuda_layout needs target \"cuda\" (the target is 'c')");
    o.cuda_layout = NULL;
    o.cuda_jit = 1;
    assert_int_equal(gc_compile(g, GRAPHC_BINARY_DIR "/public_header_bad", &o, &d), -1);
    assert_string_equal(d.msg, "cuda_jit needs target \"cuda\" (the target is 'c')");
    struct stat st;
    assert_int_not_equal(stat(GRAPHC_BINARY_DIR "/public_header_bad", &st), 0); /* nothing left behind */
    gc_graph_free(g);
}

/* A user operator registered through gc_load_ops, used by name in gc_op
 * and interpreted (the interpreter compiles the file). */
static void test_user_op(void **state)
{
    (void)state;
    GcDiag d;
    assert_int_equal(gc_load_ops(GRAPHC_SOURCE_DIR "/tests/custom_ops/no_such_file.c", &d), -1);
    assert_non_null(strstr(d.msg, "no_such_file.c: cannot open"));
    if (gc_load_ops(GRAPHC_SOURCE_DIR "/tests/custom_ops/scaled_tanh.c", &d)) fail_msg("gc_load_ops: %s", d.msg);
    static const int64_t dims[1] = {3};
    GcGraph *g = gc_graph_new("user_op");
    GcValue *x = gc_input(g, "x", "f32", 1, dims, &d);
    GcValue *y = gc_op(g, "ScaledTanh", "st", &x, 1, "alpha=0.5", &d);
    assert_non_null(y);
    gc_output(g, y);
    float in[3] = {-1.0f, 0.0f, 2.0f}, out[3];
    const void *ins[1] = {in};
    void *outs[1] = {out};
    if (gc_interpret(g, ins, outs, &d)) fail_msg("gc_interpret: %s", d.msg);
    for (int i = 0; i < 3; i++) assert_true(fabsf(out[i] - tanhf(0.5f * in[i])) <= 1e-7f);
    gc_graph_free(g);
}

static void test_compile(void **state)
{
    (void)state;
    GcDiag d = {0};
    GcGraph *g = build(&d);
    GcCompileOptions o = {0};
    o.target = "c";
    if (gc_compile(g, GRAPHC_BINARY_DIR "/public_header_out", &o, &d)) fail_msg("gc_compile: %s", d.msg);
    struct stat st;
    assert_int_equal(stat(GRAPHC_BINARY_DIR "/public_header_out/affine_relu.c", &st), 0);
    assert_int_equal(stat(GRAPHC_BINARY_DIR "/public_header_out/affine_relu.h", &st), 0);
    gc_graph_free(g);
}

/* The whole text of a file, NUL-terminated (free it), or NULL. */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (n + 4096 + 1 > cap) {
            cap = 2 * cap + 4096 + 1;
            char *b = realloc(buf, cap);
            if (!b) break;
            buf = b;
        }
        size_t got = fread(buf + n, 1, 4096, f);
        n += got;
        if (got < 4096) break;
    }
    fclose(f);
    if (buf) buf[n] = 0;
    return buf;
}

/* precision and cuda_layout reach the CUDA target: at fp16 the Conv's
 * descriptors are half, NHWC by default (auto) and NCHW with "nchw". */
static void test_cuda_options(void **state)
{
    (void)state;
    static const int64_t xd[4] = {1, 2, 5, 5}, wd[4] = {3, 2, 3, 3};
    float w[54];
    for (int i = 0; i < 54; i++) w[i] = (float)(i % 7) * 0.125f - 0.375f;
    const char *layouts[2] = {NULL, "nchw"};
    for (int k = 0; k < 2; k++) {
        GcDiag d = {0};
        GcGraph *g = gc_graph_new("conv_opts");
        GcValue *in[2] = {gc_input(g, "x", "f32", 4, xd, &d), gc_const(g, "w", "f32", 4, wd, w, &d)};
        GcValue *y = gc_op(g, "Conv", "c", in, 2, "pads=[1,1,1,1]", &d);
        assert_non_null(y);
        gc_output(g, y);
        GcCompileOptions o = {0};
        o.target = "cuda";
        o.precision = "fp16";
        o.cuda_layout = layouts[k];
        if (gc_compile(g, GRAPHC_BINARY_DIR "/public_header_cuda", &o, &d)) fail_msg("gc_compile: %s", d.msg);
        char *cu = slurp(GRAPHC_BINARY_DIR "/public_header_cuda/conv_opts.cu");
        assert_non_null(cu);
        assert_non_null(strstr(cu, "CUDNN_DATA_HALF"));
        if (k == 0) assert_non_null(strstr(cu, "CUDNN_TENSOR_NHWC, CUDNN_DATA_HALF, 1, 2, 5, 5"));
        else assert_null(strstr(cu, "CUDNN_TENSOR_NHWC"));
        free(cu);
        gc_graph_free(g);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_interpret),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_compile),
        cmocka_unit_test(test_cuda_options),
        cmocka_unit_test(test_user_op),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
