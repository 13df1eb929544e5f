/* test_sexpr.c — unit tests of scalar expression trees (ir/sexpr.h) and
 * their C-family printer (backend/cfamily/cfam_expr.h).
 *
 * The printer's conventions are checked on hand-built trees with their
 * exact text: arguments in parentheses except as a call's only operand,
 * precedence-driven parentheses, a shared subtree printed as one unit, the
 * max/min and saturation templates, typed literals (shortest float digits,
 * NAN/INFINITY, integers past INT64_MAX). Then the facet end to end: ops
 * parsed from text IR build their trees through scalar_expr and print as
 * the C backend prints them.
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

#include "backend/cfamily/cfam_expr.h"
#include "ir/ir.h"
#include "ir/op.h"
#include "ir/text.h"
#include "passes/passes.h"

static const char *const names[] = {"x", "y", "z"};

/* Checks that tree e prints as `want` (arguments named x, y, z). */
static void expect(const Sx *e, const char *want)
{
    Writer w;
    w_init(&w);
    cfam_expr(&w, &cfam_c99, e, names);
    assert_string_equal(w.buf, want);
    w_free(&w);
}

static void test_literals(void **state)
{
    (void)state;
    char b[64];
    assert_string_equal(cfam_lit(b, sizeof b, DT_F32, 1), "1.0f");
    assert_string_equal(cfam_lit(b, sizeof b, DT_F32, 0.1), "0.1f");
    assert_string_equal(cfam_lit(b, sizeof b, DT_F32, (float)1e-5), "1e-05f");
    assert_string_equal(cfam_lit(b, sizeof b, DT_F64, 0.1), "0.1");
    assert_string_equal(cfam_lit(b, sizeof b, DT_F64, -2), "-2.0");
    assert_string_equal(cfam_lit(b, sizeof b, DT_F16, 0.5), "0.5f");
    assert_string_equal(cfam_lit(b, sizeof b, DT_F32, INFINITY), "INFINITY");
    assert_string_equal(cfam_lit(b, sizeof b, DT_F64, -INFINITY), "-(double)INFINITY"); /* no float promoted */
    assert_string_equal(cfam_lit(b, sizeof b, DT_F64, NAN), "(double)NAN");
    assert_string_equal(cfam_lit(b, sizeof b, DT_F32, NAN), "NAN");
    assert_string_equal(cfam_lit(b, sizeof b, DT_I32, -1), "-1");
    assert_string_equal(cfam_lit(b, sizeof b, DT_BOOL, 1), "1");
    assert_string_equal(cfam_lit(b, sizeof b, DT_U64, 9223372036854775808.0), "9223372036854775808u");
    assert_string_equal(cfam_ctype(DT_BF16), "uint16_t");
    assert_string_equal(cfam_ctype(DT_BOOL), "uint8_t");
}

static void test_precedence(void **state)
{
    (void)state;
    Arena a = {0};
    SxBuild b;
    sx_build_init(&b, &a);
    const Sx *x = sx_arg(&b, 0, DT_F32), *y = sx_arg(&b, 1, DT_F32), *z = sx_arg(&b, 2, DT_F32);
    const Sx *one = sx_const(&b, DT_F32, 1);
    expect(x, "(x)");
    expect(sx_call(&b, SX_FN_EXP, x, NULL), "gcrt_expf(x)"); /* gcrt_base.h: libm's, or graphc's on bare metal */
    expect(sx_binary(&b, SX_DIV, one, sx_binary(&b, SX_ADD, one, sx_call(&b, SX_FN_EXP, sx_unary(&b, SX_NEG, x), NULL))),
           "(1.0f / (1.0f + gcrt_expf(-(x))))");
    expect(sx_binary(&b, SX_SUB, x, sx_binary(&b, SX_SUB, y, z)), "((x) - ((y) - (z)))");
    expect(sx_binary(&b, SX_ADD, sx_binary(&b, SX_ADD, x, y), z), "((x) + (y) + (z))");
    expect(sx_binary(&b, SX_ADD, sx_binary(&b, SX_MUL, x, y), z), "((x) * (y) + (z))");
    expect(sx_binary(&b, SX_MUL, sx_binary(&b, SX_ADD, x, y), z), "(((x) + (y)) * (z))");
    expect(sx_call(&b, SX_FN_POW, x, sx_convert(&b, DT_F32, y)), "powf((x), (float)(y))");
    expect(sx_call(&b, SX_FN_EXPM1, sx_binary(&b, SX_DIV, x, one), NULL), "expm1f((x) / 1.0f)");
    /* selects: nested in the middle parenthesized, in the last place chained */
    expect(sx_select(&b, sx_binary(&b, SX_LT, x, y), sx_select(&b, sx_binary(&b, SX_GT, x, z), y, z),
                     sx_select(&b, sx_binary(&b, SX_LE, y, z), z, x)),
           "((x) < (y) ? ((x) > (z) ? (y) : (z)) : (y) <= (z) ? (z) : (x))");
    const Sx *c = sx_binary(&b, SX_LT, x, y);
    /* booleans inside comparisons, && inside || */
    expect(sx_binary(&b, SX_NE, sx_unary(&b, SX_NOT, x), sx_unary(&b, SX_NOT, y)), "((!(x)) != (!(y)))");
    expect(sx_binary(&b, SX_NE, c, sx_binary(&b, SX_GT, y, z)), "(((x) < (y)) != ((y) > (z)))");
    expect(sx_binary(&b, SX_OR, sx_binary(&b, SX_AND, x, y), z), "(((x) && (y)) || (z))");
    expect(sx_binary(&b, SX_SUB, c, sx_binary(&b, SX_GT, x, y)), "(((x) < (y)) - ((x) > (y)))");
    expect(sx_convert(&b, DT_I8, sx_const(&b, DT_I8, 0)), "((int8_t)0)");
    expect(sx_seq(&b, y, sx_const(&b, DT_BOOL, 0)), "((void)(y), 0)");
    arena_free(&a);
}

static void test_shared_and_templates(void **state)
{
    (void)state;
    Arena a = {0};
    SxBuild b;
    sx_build_init(&b, &a);
    const Sx *x = sx_arg(&b, 0, DT_F32), *y = sx_arg(&b, 1, DT_F32);
    const Sx *z = sx_const(&b, DT_F32, 0), *o = sx_const(&b, DT_F32, 1);
    /* a node used three times prints as one unit each time */
    const Sx *t = sx_binary(&b, SX_ADD, sx_binary(&b, SX_MUL, sx_const(&b, DT_F32, 0.2), x), sx_const(&b, DT_F32, 0.5));
    expect(sx_select(&b, sx_binary(&b, SX_LT, t, z), z, sx_select(&b, sx_binary(&b, SX_GT, t, o), o, t)),
           "((0.2f * (x) + 0.5f) < 0.0f ? 0.0f : (0.2f * (x) + 0.5f) > 1.0f ? 1.0f : (0.2f * (x) + 0.5f))");
    /* max over floats propagates NaN; over integers it is a plain compare */
    const Sx *m = sx_binary(&b, SX_MAX, x, y);
    expect(m, "(((y) > (x) || (y) != (y)) ? (y) : (x))");
    expect(sx_binary(&b, SX_MIN, m, x),
           "(((x) < (((y) > (x) || (y) != (y)) ? (y) : (x)) || (x) != (x)) ? (x) : (((y) > (x) || (y) != (y)) ? (y) : "
           "(x)))");
    const Sx *i = sx_arg(&b, 0, DT_I32), *j = sx_arg(&b, 1, DT_I32);
    expect(sx_binary(&b, SX_MAX, i, j), "((y) > (x) ? (y) : (x))");
    /* saturation: limits in the operand's type, i64 stops below 2^63 */
    const Sx *p = sx_call(&b, SX_FN_POW, sx_convert(&b, DT_F64, i), sx_convert(&b, DT_F64, j));
    expect(sx_sat_int(&b, DT_U8, p),
           "((pow((double)(x), (double)(y))) != (pow((double)(x), (double)(y))) ? (uint8_t)0 : "
           "(pow((double)(x), (double)(y))) <= 0.0 ? (uint8_t)0 : (pow((double)(x), (double)(y))) >= 256.0 ? "
           "(uint8_t)UINT8_MAX : (uint8_t)(pow((double)(x), (double)(y))))");
    const Sx *d = sx_arg(&b, 0, DT_F64);
    expect(sx_sat_int(&b, DT_I64, d),
           "(((x)) != ((x)) ? (int64_t)0 : ((x)) <= -9.223372036854776e+18 ? (int64_t)INT64_MIN : ((x)) >= "
           "9.223372036854775e+18 ? (int64_t)(int64_t)9223372036854774784 : (int64_t)((x)))");
    expect(sx_limit(&b, DT_I16, 1), "INT16_MAX");
    expect(sx_limit(&b, DT_U32, 0), "0");
    arena_free(&a);
}

/* The scalar expression of the only node of `text`, printed with arguments
 * x, y, z (each input in its dtype; ct from the first input). */
static void expect_op(const char *text, const char *want)
{
    Diag dg;
    memset(&dg, 0, sizeof dg);
    Graph *g = ir_parse(text, strlen(text), "t.gir", &dg);
    if (!g) fail_msg("parse failed: %s", dg.msg);
    if (pass_infer_shapes(g, &dg)) fail_msg("shape inference failed: %s", dg.msg);
    const Node *n = g->nodes[0];
    Arena a = {0};
    SxBuild b;
    sx_build_init(&b, &a);
    const Sx *args[3] = {NULL, NULL, NULL};
    for (int j = 0; j < n->n_in; j++)
        if (n->in[j]) args[j] = sx_arg(&b, j, n->in[j]->dtype);
    expect(ir_op(n->op)->scalar_expr(n, &b, args, n->in[0]->dtype), want);
    arena_free(&a);
    ir_graph_free(g);
}

static void test_op_trees(void **state)
{
    (void)state;
    expect_op("graph t {\n input %a: f32[2]\n %y = LeakyRelu(%a) {alpha=0.5}\n output %y\n}\n",
              "((x) < 0.0f ? 0.5f * (x) : (x))");
    expect_op("graph t {\n input %a: f64[2]\n %y = Selu(%a)\n output %y\n}\n",
              "(1.0507010221481323 * ((x) <= 0.0 ? 1.6732631921768188 * expm1(x) : (x)))");
    expect_op("graph t {\n input %a: i32[2]\n input %b: i32[2]\n %y = Div(%a, %b)\n output %y\n}\n",
              "((y) != 0 ? (x) / (y) : 0)");
    expect_op("graph t {\n input %a: f32[2]\n %y = Cast(%a) {to=3}\n output %y\n}\n",
              "((x) != (x) ? 0 : (x) <= -128.0f ? INT8_MIN : (x) >= 128.0f ? INT8_MAX : (int8_t)(x))");
    expect_op("graph t {\n input %a: u8[2]\n input %b: u8[2]\n %y = BitShift(%a, %b) {direction=\"LEFT\"}\n"
              " output %y\n}\n",
              "((y) >= 8 ? 0 : (uint8_t)((x) << (y)))");
    expect_op("graph t {\n input %a: f32[2]\n %y = IsInf(%a)\n output %y\n}\n",
              "((x) == INFINITY || (x) == -INFINITY)");
    expect_op("graph t {\n input %a: bool[2]\n input %b: bool[2]\n %y = Xor(%a, %b)\n output %y\n}\n",
              "((!(x)) != (!(y)))");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_literals),
        cmocka_unit_test(test_precedence),
        cmocka_unit_test(test_shared_and_templates),
        cmocka_unit_test(test_op_trees),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
