/* test_ir.c — unit tests of the IR foundations (ir/ir.h): the graph arena,
 * dtype conversion (including f16/bf16 rounding of values whose nearest
 * representation is known by hand), numpy broadcasting and its rejections,
 * checked shape arithmetic, attribute parsing from key=value text, the
 * structural checks (verifier, topological sort with cycle detection), and
 * the completeness of every op's attribute schema.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "ir/ir.h"
#include "ir/op.h"

static Shape shp(int rank, int64_t d0, int64_t d1, int64_t d2)
{
    int64_t d[3] = {d0, d1, d2};
    return ir_shape(rank, d);
}

static void assert_contains(const char *hay, const char *needle)
{
    if (!strstr(hay, needle)) fail_msg("'%s' does not contain '%s'", hay, needle);
}

/* ---- arena ---- */

static void test_arena(void **state)
{
    (void)state;
    Arena a = {0};
    for (int i = 0; i < 100; i++) {
        unsigned char *p = arena_alloc(&a, (size_t)(1 + i * 37));
        assert_non_null(p);
        assert_int_equal((uintptr_t)p % 16, 0);
        for (int k = 0; k < 1 + i * 37; k++) assert_int_equal(p[k], 0);
        memset(p, 0xab, (size_t)(1 + i * 37));
    }
    unsigned char *big = arena_alloc(&a, 1 << 20); /* larger than one chunk */
    assert_int_equal(big[(1 << 20) - 1], 0);
    char *s = arena_strdup(&a, "hello");
    assert_string_equal(s, "hello");
    char *t = arena_strndup(&a, "abcdef", 3);
    assert_string_equal(t, "abc");
    arena_free(&a);
    assert_null(a.head);

    Graph *g = ir_graph_new("g");
    assert_string_equal(g->name, "g");
    assert_string_equal(ir_strdup(g, "x"), "x");
    ir_graph_free(g);
}

/* ---- dtypes ---- */

static void test_dtype_names_sizes(void **state)
{
    (void)state;
    static const struct { const char *name; size_t size; } want[] = {
        {"f32", 4}, {"f64", 8}, {"f16", 2}, {"bf16", 2}, {"i8", 1}, {"u8", 1},
        {"i16", 2}, {"i32", 4}, {"i64", 8}, {"bool", 1}, {"u16", 2}, {"u32", 4}, {"u64", 8},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        DType t = DT_UNDEF;
        assert_int_equal(ir_dtype_parse(want[i].name, &t), 0);
        assert_string_equal(ir_dtype_name(t), want[i].name);
        assert_int_equal(ir_dtype_size(t), want[i].size);
    }
    DType t;
    assert_int_equal(ir_dtype_parse("float32", &t), -1);
    assert_true(ir_dtype_is_float(DT_BF16));
    assert_false(ir_dtype_is_float(DT_I32));
    assert_true(ir_dtype_is_int(DT_U8));
    assert_true(ir_dtype_is_int(DT_U16));
    assert_true(ir_dtype_is_int(DT_U32));
    assert_true(ir_dtype_is_int(DT_U64));
    assert_false(ir_dtype_is_float(DT_U64));
    assert_false(ir_dtype_is_int(DT_BOOL));
}

static void test_f16_rounding(void **state)
{
    (void)state;
    uint16_t h = 0;
    /* 1/3 -> 0x3555 = 1365/4096 */
    ir_store_f64(DT_F16, &h, 0, 1.0 / 3.0);
    assert_int_equal(h, 0x3555);
    assert_true(ir_load_f64(DT_F16, &h, 0) == 1365.0 / 4096.0);
    /* largest finite half, and the first value that rounds to infinity */
    ir_store_f64(DT_F16, &h, 0, 65504.0);
    assert_int_equal(h, 0x7bff);
    assert_true(ir_load_f64(DT_F16, &h, 0) == 65504.0);
    ir_store_f64(DT_F16, &h, 0, 65519.0);
    assert_int_equal(h, 0x7bff);
    ir_store_f64(DT_F16, &h, 0, 65520.0);
    assert_int_equal(h, 0x7c00);
    assert_true(isinf(ir_load_f64(DT_F16, &h, 0)));
    ir_store_f64(DT_F16, &h, 0, -65520.0);
    assert_int_equal(h, 0xfc00);
    /* subnormals: 2^-24 is the smallest; 2^-25 ties to even (zero) */
    ir_store_f64(DT_F16, &h, 0, ldexp(1.0, -24));
    assert_int_equal(h, 0x0001);
    ir_store_f64(DT_F16, &h, 0, ldexp(1.0, -25));
    assert_int_equal(h, 0x0000);
    ir_store_f64(DT_F16, &h, 0, 1.0 + ldexp(1.0, -11)); /* tie between 1 and 1+2^-10 -> even (1) */
    assert_int_equal(h, 0x3c00);
    ir_store_f64(DT_F16, &h, 0, NAN);
    assert_true(isnan(ir_load_f64(DT_F16, &h, 0)));
    assert_true(ir_round_to(DT_F16, 0.1) == 0.0999755859375);
}

static void test_bf16_rounding(void **state)
{
    (void)state;
    uint16_t b = 0;
    /* float(1/3) = 0x3eaaaaab -> bf16 0x3eab */
    ir_store_f64(DT_BF16, &b, 0, 1.0 / 3.0);
    assert_int_equal(b, 0x3eab);
    assert_true(ir_load_f64(DT_BF16, &b, 0) == 0.333984375);
    ir_store_f64(DT_BF16, &b, 0, 65504.0); /* 0x477fe000 -> 0x4780 = 65536 */
    assert_int_equal(b, 0x4780);
    assert_true(ir_load_f64(DT_BF16, &b, 0) == 65536.0);
    ir_store_f64(DT_BF16, &b, 0, 1.0 + ldexp(1.0, -8)); /* tie -> even (1.0) */
    assert_int_equal(b, 0x3f80);
    ir_store_f64(DT_BF16, &b, 0, 1.0 + 3 * ldexp(1.0, -8)); /* tie -> even (1 + 2^-6) */
    assert_int_equal(b, 0x3f82);
    ir_store_f64(DT_BF16, &b, 0, NAN);
    assert_true(isnan(ir_load_f64(DT_BF16, &b, 0)));
}

static void test_int_and_bool_store(void **state)
{
    (void)state;
    int8_t i8 = 0;
    ir_store_f64(DT_I8, &i8, 0, 300.0);
    assert_int_equal(i8, 127);
    ir_store_f64(DT_I8, &i8, 0, -3.7);
    assert_int_equal(i8, -3);
    ir_store_f64(DT_I8, &i8, 0, NAN);
    assert_int_equal(i8, 0);
    uint8_t u8 = 0;
    ir_store_f64(DT_U8, &u8, 0, -1.0);
    assert_int_equal(u8, 0);
    int64_t i64[2] = {0, 0};
    ir_store_f64(DT_I64, i64, 1, -123456789012.0);
    assert_true(i64[1] == -123456789012LL);
    assert_true(ir_load_f64(DT_I64, i64, 1) == -123456789012.0);
    unsigned char bl = 7;
    ir_store_f64(DT_BOOL, &bl, 0, 0.5);
    assert_int_equal(bl, 1);
    ir_store_f64(DT_BOOL, &bl, 0, 0.0);
    assert_int_equal(bl, 0);
    float f = 0;
    ir_store_f64(DT_F32, &f, 0, 1.0 / 3.0);
    assert_true(f == (float)(1.0 / 3.0));
    assert_true(ir_round_to(DT_F32, 0.1) == (double)0.1f);
    assert_true(ir_round_to(DT_I32, 2.9) == 2.0);
}

/* Unsigned stores truncate and saturate like Cast (NaN gives 0); u64
 * saturates to exactly 2^64-1 although no double holds it. */
static void test_unsigned_store(void **state)
{
    (void)state;
    uint16_t u16 = 7;
    ir_store_f64(DT_U16, &u16, 0, 70000.0);
    assert_int_equal(u16, 65535);
    ir_store_f64(DT_U16, &u16, 0, -0.9);
    assert_int_equal(u16, 0);
    ir_store_f64(DT_U16, &u16, 0, 65535.9);
    assert_int_equal(u16, 65535);
    ir_store_f64(DT_U16, &u16, 0, NAN);
    assert_int_equal(u16, 0);
    assert_true(ir_load_f64(DT_U16, &(uint16_t){40000}, 0) == 40000.0);
    uint32_t u32 = 7;
    ir_store_f64(DT_U32, &u32, 0, 4294967295.5);
    assert_true(u32 == UINT32_MAX);
    ir_store_f64(DT_U32, &u32, 0, 1e300);
    assert_true(u32 == UINT32_MAX);
    ir_store_f64(DT_U32, &u32, 0, -INFINITY);
    assert_true(u32 == 0);
    ir_store_f64(DT_U32, &u32, 0, 3000000000.7);
    assert_true(u32 == 3000000000u);
    assert_true(ir_load_f64(DT_U32, &u32, 0) == 3000000000.0);
    uint64_t u64 = 7;
    ir_store_f64(DT_U64, &u64, 0, 18446744073709551616.0);
    assert_true(u64 == UINT64_MAX);
    ir_store_f64(DT_U64, &u64, 0, INFINITY);
    assert_true(u64 == UINT64_MAX);
    ir_store_f64(DT_U64, &u64, 0, 18446744073709549568.0); /* the largest double below 2^64 */
    assert_true(u64 == UINT64_C(18446744073709549568));
    ir_store_f64(DT_U64, &u64, 0, 9223372036854775808.0);
    assert_true(u64 == UINT64_C(1) << 63);
    ir_store_f64(DT_U64, &u64, 0, -5.0);
    assert_true(u64 == 0);
    ir_store_f64(DT_U64, &u64, 0, NAN);
    assert_true(u64 == 0);
    u64 = UINT64_MAX;
    assert_true(ir_load_f64(DT_U64, &u64, 0) == 18446744073709551616.0);
    assert_true(ir_round_to(DT_U64, 1e30) == 18446744073709551616.0);
    assert_true(ir_round_to(DT_U32, -3.0) == 0.0);
}

/* ---- shapes ---- */

static void expect_broadcast(Shape a, Shape b, Shape want)
{
    Shape out = {0};
    char sa[64], sb[64], so[64], sw[64];
    if (ir_broadcast(&a, &b, &out) != 0 || !ir_shape_eq(&out, &want))
        fail_msg("broadcast %s with %s: got %s, want %s", ir_shape_str(&a, sa, 64), ir_shape_str(&b, sb, 64),
                 ir_shape_str(&out, so, 64), ir_shape_str(&want, sw, 64));
}

static void test_broadcast(void **state)
{
    (void)state;
    expect_broadcast(shp(2, 2, 3, 0), shp(1, 3, 0, 0), shp(2, 2, 3, 0));
    expect_broadcast(shp(1, 3, 0, 0), shp(2, 2, 3, 0), shp(2, 2, 3, 0));
    expect_broadcast(shp(3, 4, 1, 5), shp(2, 3, 1, 0), shp(3, 4, 3, 5));
    expect_broadcast(shp(0, 0, 0, 0), shp(1, 2, 0, 0), shp(1, 2, 0, 0));  /* scalar */
    expect_broadcast(shp(2, 0, 3, 0), shp(2, 1, 3, 0), shp(2, 0, 3, 0));  /* zero-size dim */
    expect_broadcast(shp(1, 1, 0, 0), shp(1, 0, 0, 0), shp(1, 0, 0, 0));
    Shape out, a = shp(2, 2, 3, 0), b = shp(1, 4, 0, 0);
    assert_int_equal(ir_broadcast(&a, &b, &out), -1);
    a = shp(1, 0, 0, 0);
    b = shp(1, 2, 0, 0);
    assert_int_equal(ir_broadcast(&a, &b, &out), -1);
    a = shp(3, 2, 1, 4);
    b = shp(3, 3, 1, 4);
    assert_int_equal(ir_broadcast(&a, &b, &out), -1);
}

static void test_shape_numel_and_checked_math(void **state)
{
    (void)state;
    int64_t n = -1;
    Shape s = shp(3, 2, 3, 4);
    assert_int_equal(ir_shape_numel(&s, &n), 0);
    assert_int_equal(n, 24);
    s = shp(0, 0, 0, 0);
    assert_int_equal(ir_shape_numel(&s, &n), 0);
    assert_int_equal(n, 1);
    s = shp(2, 0, INT64_MAX, 0);
    assert_int_equal(ir_shape_numel(&s, &n), 0);
    assert_int_equal(n, 0);
    s = shp(3, (int64_t)1 << 40, (int64_t)1 << 40, 1);
    assert_int_equal(ir_shape_numel(&s, &n), -1);
    s = shp(2, 3, -1, 0);
    assert_int_equal(ir_shape_numel(&s, &n), -1);

    char buf[64];
    s = shp(3, 1, 3, 224);
    assert_string_equal(ir_shape_str(&s, buf, sizeof buf), "[1,3,224]");
    s = shp(0, 0, 0, 0);
    assert_string_equal(ir_shape_str(&s, buf, sizeof buf), "[]");

    int64_t r = 0;
    assert_int_equal(ir_mul_ok(INT64_MAX / 2, 2, &r), 0);
    assert_true(r == INT64_MAX - 1);
    assert_int_equal(ir_mul_ok(INT64_MAX / 2 + 1, 2, &r), -1);
    assert_int_equal(ir_mul_ok(0, INT64_MAX, &r), 0);
    assert_int_equal(r, 0);
    assert_int_equal(ir_mul_ok(-1, 2, &r), -1);
    assert_int_equal(ir_add_ok(INT64_MAX - 1, 1, &r), 0);
    assert_true(r == INT64_MAX);
    assert_int_equal(ir_add_ok(INT64_MAX, 1, &r), -1);
    assert_int_equal(ir_add_ok(-5, 1, &r), -1);

    assert_int_equal(ir_norm_axis(-1, 4), 3);
    assert_int_equal(ir_norm_axis(3, 4), 3);
    assert_int_equal(ir_norm_axis(4, 4), -1);
    assert_int_equal(ir_norm_axis(-5, 4), -1);
}

/* ---- attributes ---- */

static void test_set_attrs(void **state)
{
    (void)state;
    Graph *g = ir_graph_new("attrs");
    Shape s = shp(2, 2, 3, 0);
    Value *a = ir_add_input(g, "a", DT_F32, &s);
    Value *b = ir_add_input(g, "b", DT_F32, &s);
    Value *in[2] = {a, b};
    Node *n = ir_add_node(g, OP_Gemm, "fc", in, 2, 1, NULL);
    int alpha = ir_attr_index(n, "alpha"), transb = ir_attr_index(n, "transB");
    assert_true(alpha >= 0 && transb >= 0);
    assert_true(n->attrs[alpha].set && n->attrs[alpha].f == 1.0); /* default */
    Diag d = {0};
    assert_int_equal(ir_set_attrs(g, n, "alpha=0.5 transB=1", &d), 0);
    assert_true(n->attrs[alpha].f == 0.5);
    assert_int_equal(n->attrs[transb].i, 1);
    assert_int_equal(ir_set_attrs(g, n, " alpha = 2.25 ; transB=0", &d), 0);
    assert_true(n->attrs[alpha].f == 2.25);
    assert_int_equal(n->attrs[transb].i, 0);

    assert_int_equal(ir_set_attrs(g, n, "transB=yes", &d), -1);
    assert_contains(d.msg, "node 'fc' (Gemm): attribute 'transB' expects int");
    Diag d2 = {0};
    assert_int_equal(ir_set_attrs(g, n, "bogus=1", &d2), -1);
    assert_contains(d2.msg, "unknown attribute 'bogus'");
    Diag d3 = {0};
    assert_int_equal(ir_set_attrs(g, n, "alpha", &d3), -1);
    assert_int_equal(d3.n_errors, 1);

    Value *w = ir_add_input(g, "w", DT_F32, &s);
    Value *cin[2] = {a, w};
    Node *c = ir_add_node(g, OP_Conv, "conv", cin, 2, 1, NULL);
    Diag d4 = {0};
    assert_int_equal(ir_set_attrs(g, c, "kernel_shape=[3, 3] pads=1,1,1,1;auto_pad=\"SAME_UPPER\" group=2", &d4), 0);
    const AttrVal *ks = &c->attrs[ir_attr_index(c, "kernel_shape")];
    assert_int_equal(ks->n, 2);
    assert_true(ks->ints[0] == 3 && ks->ints[1] == 3);
    const AttrVal *pads = &c->attrs[ir_attr_index(c, "pads")];
    assert_int_equal(pads->n, 4);
    assert_true(pads->ints[3] == 1);
    assert_string_equal(c->attrs[ir_attr_index(c, "auto_pad")].s, "SAME_UPPER");
    assert_int_equal(c->attrs[ir_attr_index(c, "group")].i, 2);
    Diag d5 = {0};
    assert_int_equal(ir_set_attrs(g, c, "pads=[1,x]", &d5), -1);
    assert_contains(d5.msg, "attribute 'pads' expects ints");
    ir_graph_free(g);
}

/* ---- structure ---- */

static void test_verify_undefined_input(void **state)
{
    (void)state;
    Graph *g = ir_graph_new("undef");
    Shape s = shp(1, 4, 0, 0);
    Value *x = ir_add_input(g, "x", DT_F32, &s);
    Value *ghost = ir_new_value(g, "ghost"); /* a temp nothing produces */
    Value *in1[1] = {x};
    Node *r = ir_add_node(g, OP_Relu, "r", in1, 1, 1, NULL);
    ir_add_output(g, r->out[0]);
    Diag d = {0};
    assert_int_equal(ir_verify(g, &d), 0);
    Value *in2[2] = {r->out[0], ghost};
    Node *add = ir_add_node(g, OP_Add, "add", in2, 2, 1, NULL);
    ir_add_output(g, add->out[0]);
    assert_int_equal(ir_verify(g, &d), -1);
    assert_contains(d.msg, "node 'add' (Add): input 'ghost' is not defined before use");
    ir_graph_free(g);
}

static void test_toposort(void **state)
{
    (void)state;
    Graph *g = ir_graph_new("topo");
    Shape s = shp(1, 4, 0, 0);
    Value *x = ir_add_input(g, "x", DT_F32, &s);
    /* built out of order: n2 reads n1's output, but n1 is appended later */
    Value *h = ir_new_value(g, "h_placeholder");
    Value *in_h[1] = {h};
    Node *n2 = ir_add_node(g, OP_Neg, "n2", in_h, 1, 1, NULL);
    Value *in_x[1] = {x};
    Node *n1 = ir_add_node(g, OP_Relu, "n1", in_x, 1, 1, NULL);
    Node *dead = ir_add_node(g, OP_Abs, "dead", in_x, 1, 1, NULL);
    n2->in[0] = n1->out[0];
    ir_add_output(g, n2->out[0]);
    Diag d = {0};
    assert_int_equal(ir_verify(g, &d), -1);
    Diag d2 = {0};
    assert_int_equal(ir_toposort(g, &d2), 0);
    assert_int_equal(g->n_nodes, 2); /* `dead` is dropped */
    assert_ptr_equal(g->nodes[0], n1);
    assert_ptr_equal(g->nodes[1], n2);
    (void)dead;
    Diag d3 = {0};
    assert_int_equal(ir_verify(g, &d3), 0);
    ir_graph_free(g);
}

static void test_toposort_cycle(void **state)
{
    (void)state;
    Graph *g = ir_graph_new("cycle");
    Shape s = shp(1, 4, 0, 0);
    Value *x = ir_add_input(g, "x", DT_F32, &s);
    Value *in_x[1] = {x};
    Node *a = ir_add_node(g, OP_Relu, "a", in_x, 1, 1, NULL);
    Value *in_a[1] = {a->out[0]};
    Node *b = ir_add_node(g, OP_Neg, "b", in_a, 1, 1, NULL);
    a->in[0] = b->out[0]; /* a -> b -> a */
    ir_add_output(g, b->out[0]);
    Diag d = {0};
    assert_int_equal(ir_toposort(g, &d), -1);
    assert_contains(d.msg, "cycle");
    ir_graph_free(g);
}

static void test_const_ints(void **state)
{
    (void)state;
    Graph *g = ir_graph_new("c");
    Shape s = shp(1, 3, 0, 0);
    int64_t v64[3] = {1, -1, 7};
    int32_t v32[3] = {4, 5, -6};
    float vf[3] = {1, 2, 3};
    Value *c64 = ir_add_const(g, "c64", DT_I64, &s, v64, 1);
    Value *c32 = ir_add_const(g, "c32", DT_I32, &s, v32, 1);
    Value *cf = ir_add_const(g, "cf", DT_F32, &s, vf, 1);
    int64_t out[4];
    assert_int_equal(ir_const_ints(c64, out, 4), 3);
    assert_true(out[1] == -1 && out[2] == 7);
    assert_int_equal(ir_const_ints(c32, out, 4), 3);
    assert_true(out[2] == -6);
    assert_int_equal(ir_const_ints(cf, out, 4), -1);
    assert_int_equal(ir_const_ints(c64, out, 2), -1);
    ir_graph_free(g);
}

/* ---- attribute schemas ---- */

/* Every op's attribute schema is complete (an entry left out of the
 * designated initializers of ir/ops/<family>.c has no name) and names each
 * attribute once. */
static void test_attr_schemas(void **state)
{
    (void)state;
    for (int k = 0; k < OP_COUNT; k++) {
        const OpDesc *od = ir_op(k);
        for (int i = 0; i < od->n_attrs; i++) {
            if (!od->attrs[i].name) fail_msg("op %s: attribute index %d has no schema entry", od->name, i);
            for (int j = 0; j < i; j++)
                if (!strcmp(od->attrs[i].name, od->attrs[j].name))
                    fail_msg("op %s: attribute '%s' is listed twice", od->name, od->attrs[i].name);
        }
    }
}

/* Runtime shapes: the symbol table, derived symbols and their bounds,
 * binding from actual shapes, specialization, and shape equality that tells
 * a symbolic dim from a constant equal to its bound. */
static void test_symbolic_dims(void **state)
{
    (void)state;
    Graph *g = ir_graph_new("syms");
    Diag d = {0};
    int32_t t = ir_sym_var(g, "T", 1, 64, &d), b = ir_sym_var(g, "B", 1, 8, &d);
    assert_int_equal(t, 1);
    assert_int_equal(b, 2);
    assert_int_equal(ir_sym_var(g, "T", 1, 64, &d), t);
    assert_int_equal(ir_sym_var(g, "T", 1, 32, &d), -1);
    assert_non_null(strstr(d.msg, "symbolic dim 'T' is bounded"));
    int32_t tb = ir_sym_derive(g, SYM_MUL, (IrSymTerm){t, 0}, (IrSymTerm){b, 0});
    int32_t h = ir_sym_derive(g, SYM_DIV, (IrSymTerm){t, 0}, (IrSymTerm){0, 2});
    assert_int_equal(ir_sym_derive(g, SYM_MUL, (IrSymTerm){t, 0}, (IrSymTerm){b, 0}), tb); /* interned */
    assert_int_equal(ir_sym(g, tb)->hi, 512);
    assert_int_equal(ir_sym(g, h)->lo, 0);
    assert_int_equal(ir_sym(g, h)->hi, 32);

    Shape s = ir_shape(3, (int64_t[]){1, 64, 128}), c = s;
    s.sym[1] = t;
    assert_false(ir_shape_eq(&s, &c)); /* T<=64 is not the constant 64 */
    assert_true(ir_shape_has_sym(&s));
    char buf[64];
    assert_string_equal(ir_shape_str_g(g, &s, buf, sizeof buf), "[1,T<=64,128]");
    Shape bs = ir_shape(2, (int64_t[]){8, 4});
    bs.sym[0] = b;
    Value *x = ir_add_input(g, "x", DT_F32, &s);
    ir_add_input(g, "y", DT_F32, &bs);
    Shape a1 = ir_shape(3, (int64_t[]){1, 10, 128}), a2 = ir_shape(2, (int64_t[]){3, 4});
    const Shape *act[2] = {&a1, &a2};
    int64_t val[4];
    assert_int_equal(ir_sym_bind(g, act, val, &d), 0);
    assert_int_equal(val[t - 1], 10);
    assert_int_equal(val[tb - 1], 30);
    assert_int_equal(val[h - 1], 5);
    Shape over = ir_shape(3, (int64_t[]){1, 65, 128});
    act[0] = &over;
    Diag d2 = {0};
    assert_int_equal(ir_sym_bind(g, act, val, &d2), -1);
    assert_non_null(strstr(d2.msg, "input 'x' dim 1 is 65, beyond the bounds of T"));
    act[0] = &a1;
    assert_int_equal(ir_sym_bind(g, act, val, &d), 0);
    ir_sym_specialize(g, val);
    assert_int_equal(g->n_syms, 0);
    assert_false(ir_shape_has_sym(&x->shape));
    assert_int_equal(x->shape.dims[1], 10);
    ir_graph_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_arena),
        cmocka_unit_test(test_dtype_names_sizes),
        cmocka_unit_test(test_f16_rounding),
        cmocka_unit_test(test_bf16_rounding),
        cmocka_unit_test(test_int_and_bool_store),
        cmocka_unit_test(test_unsigned_store),
        cmocka_unit_test(test_broadcast),
        cmocka_unit_test(test_shape_numel_and_checked_math),
        cmocka_unit_test(test_set_attrs),
        cmocka_unit_test(test_verify_undefined_input),
        cmocka_unit_test(test_toposort),
        cmocka_unit_test(test_toposort_cycle),
        cmocka_unit_test(test_const_ints),
        cmocka_unit_test(test_attr_schemas),
        cmocka_unit_test(test_symbolic_dims),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
