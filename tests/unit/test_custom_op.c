/* test_custom_op.c — unit tests of user operators (ir/custom_op.h).
 *
 * Loads tests/custom_ops/scaled_tanh.c and checks the descriptions the
 * reader builds (kinds after the built-in ones, names, attribute schema,
 * gradient companion, the call facet the C backend reads); evaluates a
 * ScaledTanh node in the interpreter (through the compiled file) against
 * tanhf; then checks that a failed load registers nothing and that an
 * unreadable prototype and GRAPHC_GENERAL are FILE:LINE errors.
 */
#define _DEFAULT_SOURCE /* mkstemps */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "ir/custom_op.h"
#include "ir/interp.h"
#include "passes/passes.h"

static char header[8192];
static size_t header_len;

static void read_header(void)
{
    FILE *f = fopen(GRAPHC_SOURCE_DIR "/include/graphc/custom_op.h", "rb");
    assert_non_null(f);
    header_len = fread(header, 1, sizeof header, f);
    fclose(f);
    assert_true(header_len > 0 && header_len < sizeof header);
}

/* Writes text to a fresh file under /tmp and returns its path. */
static const char *temp_file(const char *text, char *path, size_t cap)
{
    snprintf(path, cap, "/tmp/graphc-test-custom-XXXXXX.c");
    int fd = mkstemps(path, 2);
    assert_true(fd >= 0);
    assert_true(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
    close(fd);
    return path;
}

static void test_descriptions(void **state)
{
    (void)state;
    Diag d = {0};
    int before = ir_op_count();
    assert_int_equal(ir_custom_load(GRAPHC_SOURCE_DIR "/tests/custom_ops/scaled_tanh.c", header, header_len, &d), 0);
    assert_int_equal(ir_op_count(), before + 2);
    int k = ir_op_lookup("ScaledTanh"), gk = ir_op_lookup("ScaledTanhGrad");
    assert_true(k >= OP_COUNT && gk >= OP_COUNT);
    assert_int_equal(ir_custom_lookup_domain("com.example", "ScaledTanh"), k);
    assert_int_equal(ir_custom_lookup_domain("com.other", "ScaledTanh"), -1);
    assert_string_equal(ir_op_family(k), "custom");
    const OpDesc *od = ir_op(k);
    assert_int_equal(od->min_in, 1);
    assert_int_equal(od->max_out, 1);
    assert_string_equal(od->in_names[0], "x");
    assert_string_equal(od->out_names[0], "y");
    assert_int_equal(od->n_attrs, 1);
    assert_string_equal(od->attrs[0].name, "alpha");
    assert_int_equal(od->attrs[0].kind, ATTR_FLOAT);
    assert_non_null(od->gradient);
    assert_null(od->scalar_expr);
    assert_int_equal(od->n_inplace, 0);
    assert_string_equal(od->custom->func, "scaled_tanh");
    assert_int_equal(od->custom->attr_ctype[0], 'f');
    assert_int_equal(ir_custom_grad_kind(k), gk);
    assert_int_equal(ir_custom_grad_kind(gk), -2);
    const OpDesc *gd = ir_op(gk);
    assert_int_equal(gd->min_in, 3);
    assert_int_equal(gd->min_out, 1);
    assert_string_equal(gd->in_names[2], "dy");
    assert_string_equal(gd->out_names[0], "dx");
    assert_null(gd->gradient);
    assert_string_equal(gd->custom->func, "scaled_tanh_grad");
}

static void test_eval(void **state)
{
    (void)state;
    int k = ir_op_lookup("ScaledTanh");
    assert_true(k >= OP_COUNT);
    Graph *g = ir_graph_new("t");
    Shape s = ir_shape(1, (int64_t[]){5});
    Value *x = ir_add_input(g, "x", DT_F32, &s);
    Node *n = ir_add_node(g, k, "st", &x, 1, 1, NULL);
    Diag d = {0};
    assert_int_equal(ir_set_attr(g, n, "alpha", "0.7", &d), 0);
    ir_add_output(g, n->out[0]);
    assert_int_equal(pass_infer_shapes(g, &d), 0);
    float in[5] = {-2, -0.5f, 0, 0.25f, 3}, out[5];
    const void *ins[1] = {in};
    void *outs[1] = {out};
    assert_int_equal(ir_interp_run(g, INTERP_F32, ins, outs, &d), 0);
    for (int i = 0; i < 5; i++) assert_true(fabsf(out[i] - tanhf(0.7f * in[i])) <= 1e-7f);
    ir_graph_free(g);
}

static void test_errors_register_nothing(void **state)
{
    (void)state;
    char path[64], want[256];
    Diag d = {0};
    int before = ir_op_count();
    setenv("GRAPHC_OPS_READER", "plain", 1); /* the first file needs graphc's own reader (libclang reads it) */
    temp_file("#include <graphc/custom_op.h>\n"
              "GRAPHC_OP(\"a.b\", \"Good\", GRAPHC_ELEMENTWISE)\n"
              "void good(int64_t n, const float *x, float *y) { (void)n; (void)x; (void)y; }\n"
              "GRAPHC_OP(\"a.b\", \"Bad\", GRAPHC_ELEMENTWISE)\n"
              "void bad(int64_t n, const float x[], float *y);\n",
              path, sizeof path);
    assert_int_equal(ir_custom_load(path, header, header_len, &d), -1);
    snprintf(want, sizeof want, "%s:5: cannot read parameter 'const float x[]' of 'bad'", path);
    assert_non_null(strstr(d.msg, want));
    assert_non_null(strstr(d.msg, "libclang"));
    assert_int_equal(ir_op_count(), before);
    assert_int_equal(ir_op_lookup("Good"), -1);
    unlink(path);
    unsetenv("GRAPHC_OPS_READER");

    Diag d2 = {0};
    temp_file("#include <graphc/custom_op.h>\n\nGRAPHC_OP(\"a.b\", \"Gen\", GRAPHC_GENERAL)\nvoid gen(int64_t n);\n", path, sizeof path);
    assert_int_equal(ir_custom_load(path, header, header_len, &d2), -1);
    snprintf(want, sizeof want, "%s:4: general op 'gen' takes no input: its inputs are 'const graphc_tensor *'", path);
    assert_non_null(strstr(d2.msg, want));
    unlink(path);
}

int main(void)
{
    read_header();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_descriptions),
        cmocka_unit_test(test_eval),
        cmocka_unit_test(test_errors_register_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
