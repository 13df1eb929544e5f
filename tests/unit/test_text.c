/* test_text.c — unit tests of the text IR (ir/text.h, docs/text-ir.md).
 *
 * The central property is the fixed point print(parse(print(g))) == print(g),
 * checked over handwritten graphs (every dtype with its awkward values —
 * signed zeros, subnormals, infinities, NaNs with payloads, integer extremes —
 * quoted names, hex and random constants, scalar and zero-size shapes, absent
 * inputs, output types as after shape inference, every attribute of every
 * op's schema) and over every *.gir file under tests/. Constants must also
 * survive byte for byte. Parse errors are checked with their exact text,
 * "FILE:LINE:COL: message".
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ir/ir.h"
#include "ir/op.h"
#include "ir/text.h"
#include "passes/passes.h"

/* ---- helpers ---- */

static char *print_graph(const Graph *g, int elide)
{
    Writer w;
    w_init(&w);
    ir_print(g, &w, elide);
    char *s = strdup(w.buf ? w.buf : "");
    w_free(&w);
    return s;
}

static Graph *parse_ok(const char *text)
{
    Diag d;
    memset(&d, 0, sizeof d);
    Graph *g = ir_parse(text, strlen(text), "t.gir", &d);
    if (!g) fail_msg("parse failed: %s\n--- text ---\n%s", d.msg, text);
    assert_int_equal(d.n_errors, 0);
    return g;
}

/* Checks print(parse(print(g))) == print(g); returns print(g) (malloc'd). */
static char *check_fixed_point(const Graph *g)
{
    char *p1 = print_graph(g, 0);
    Graph *g2 = parse_ok(p1);
    char *p2 = print_graph(g2, 0);
    if (strcmp(p1, p2) != 0) fail_msg("round trip differs:\n--- first ---\n%s--- second ---\n%s", p1, p2);
    free(p2);
    ir_graph_free(g2);
    return p1;
}

/* Parses text, checks the fixed point and returns the canonical print. */
static char *roundtrip_text(const char *text)
{
    Graph *g = parse_ok(text);
    char *p = check_fixed_point(g);
    ir_graph_free(g);
    return p;
}

static void expect_error(const char *text, const char *msg)
{
    Diag d;
    memset(&d, 0, sizeof d);
    d.file = "ignored-by-parser";
    Graph *g = ir_parse(text, strlen(text), "t.gir", &d);
    if (g) {
        char *p = print_graph(g, 0);
        ir_graph_free(g);
        fail_msg("expected error '%s' but parsed:\n%s", msg, p);
    }
    assert_int_equal(d.n_errors, 1);
    assert_string_equal(d.msg, msg);
    assert_string_equal(d.file, "ignored-by-parser"); /* restored */
}

static const AttrSpec *find_attr(const char *op, const char *key, AttrKind kind)
{
    int k = ir_op_lookup(op);
    if (k < 0) return NULL;
    const OpDesc *od = ir_op(k);
    for (int i = 0; i < od->n_attrs; i++)
        if (strcmp(od->attrs[i].name, key) == 0 && od->attrs[i].kind == kind) return &od->attrs[i];
    return NULL;
}

/* Every constant of a and b (matched by name) holds the same bytes. */
static void assert_same_consts(const Graph *a, const Graph *b)
{
    int n = 0;
    for (int i = 0; i < a->n_values; i++) {
        const Value *v = a->values[i];
        if (v->kind != VK_CONST) continue;
        const Value *u = ir_find_value(b, v->name);
        assert_non_null(u);
        assert_int_equal(u->kind, VK_CONST);
        assert_int_equal(u->dtype, v->dtype);
        assert_true(ir_shape_eq(&u->shape, &v->shape));
        assert_int_equal(u->nbytes, v->nbytes);
        if (v->nbytes && memcmp(u->data, v->data, v->nbytes) != 0)
            fail_msg("constant '%s' (%s) changed across print/parse", v->name, ir_dtype_name(v->dtype));
        n++;
    }
    assert_true(n > 0);
}

/* ---- canonical form ---- */

static const char tiny[] =
    "graph tiny {\n"
    "  input %x: f32[2]\n"
    "  const %c: f32[2] = [0.1, -0]\n"
    "  const %s: i64[] = [7]\n"
    "  const %e: u8[0,3] = []\n"
    "  %y: f32[2] = Add(%x, %c)\n"
    "  r: %z = Relu(%y)\n"
    "  %a, %b: i64[] = Split(%z, _, %s, _)\n"
    "  Identity(%a)\n"
    "  output %z\n"
    "  output %b\n"
    "}\n";

static void test_canonical_print(void **state)
{
    (void)state;
    char *p = roundtrip_text(tiny);
    assert_string_equal(p, tiny);
    free(p);
}

static void test_whitespace_and_comments(void **state)
{
    (void)state;
    const char *messy =
        "#! expect-nothing: directives are comments\n"
        "\n"
        "   # leading comment\n"
        "graph    tiny{   # header comment\n"
        "input %x :f32 [ 2 ]\r\n"
        "\tconst %c:f32[2]=[ 0.100000001 ,-0.0 ]\n"
        "  const %s : i64[ ] = [ +7 ]   # scalar\n"
        "  const %e: u8[0, 3] = [ ]\n"
        "  y : %y:f32[2]=Add( %x ,%c )\n"
        "  r:%z=Relu(%y)\n"
        "  %a,%b:i64[]=Split(%z,_,%s,_){}\n"
        "  Identity (%a)\n"
        "  output   %z\n"
        "  output %b # last\n"
        "}\n"
        "# trailing comment\n";
    char *p = roundtrip_text(messy);
    assert_string_equal(p, tiny);
    free(p);
}

/* ---- dtypes and exact constants ---- */

static void fill_specials(DType t, unsigned char *buf, int *count)
{
    static const double fl[] = {0.0, -0.0, 1.0, 0.1, -2.5, 1e-45, 1e-310, 65504.0, 3.4028234663852886e38,
                                1.7976931348623157e308, 5e-324, 6.1e-5, 1.0 / 3.0, -1e20};
    static const double in[] = {0, 1, -1, 127, -128, 255, 32767, -32768, 2147483647.0, -2147483648.0, 42};
    int n = 0;
    if (ir_dtype_is_float(t)) {
        for (size_t i = 0; i < sizeof fl / sizeof fl[0]; i++) ir_store_f64(t, buf, (size_t)n++, fl[i]);
        ir_store_f64(t, buf, (size_t)n++, INFINITY);
        ir_store_f64(t, buf, (size_t)n++, -INFINITY);
        ir_store_f64(t, buf, (size_t)n++, NAN);
    } else if (t == DT_BOOL) {
        buf[n++] = 1;
        buf[n++] = 0;
        buf[n++] = 1;
    } else if (t == DT_U64) {
        uint64_t v[] = {UINT64_MAX, 0, 1, 9007199254740993ULL, UINT64_C(1) << 63, UINT64_MAX - 1};
        memcpy(buf, v, sizeof v);
        n = 6;
    } else if (t == DT_I64) {
        int64_t v[] = {INT64_MIN, INT64_MAX, 0, -1, 9007199254740993LL};
        memcpy(buf, v, sizeof v);
        n = 5;
    } else {
        for (size_t i = 0; i < sizeof in / sizeof in[0]; i++) ir_store_f64(t, buf, (size_t)n++, in[i]);
    }
    *count = n;
}

static void test_every_dtype(void **state)
{
    (void)state;
    for (int ti = 1; ti < DT_COUNT; ti++) {
        DType t = (DType)ti;
        Graph *g = ir_graph_new("dtypes");
        int64_t d2[2] = {2, 3};
        Shape s23 = ir_shape(2, d2), scalar = ir_shape(0, NULL);
        Value *x = ir_add_input(g, "x", t, &s23);
        ir_add_input(g, "sc", t, &scalar);

        unsigned char buf[8 * 64];
        int n;
        fill_specials(t, buf, &n);
        int64_t dn = n;
        Shape sn = ir_shape(1, &dn);
        ir_add_const(g, "special", t, &sn, buf, 1);

        /* > 64 elements: printed as hex, arbitrary bytes (NaN payloads, bools
         * that are not 0/1) must survive exactly. */
        size_t es = ir_dtype_size(t);
        int64_t big = 100;
        Shape sb = ir_shape(1, &big);
        unsigned char *raw = malloc((size_t)big * es);
        for (size_t i = 0; i < (size_t)big * es; i++) raw[i] = (unsigned char)(i * 37 + 11);
        ir_add_const(g, "big", t, &sb, raw, 1);
        /* <= 64 elements but not representable as a list: hex as well. */
        ir_add_const(g, "odd", t, &sn, raw, 1);
        free(raw);
        unsigned char one[8];
        ir_store_f64(t, one, 0, 1);
        ir_add_const(g, "one", t, &scalar, one, 1);

        Value *in[1] = {x};
        Node *nd = ir_add_node(g, OP_Identity, NULL, in, 1, 1, (const char *const[]){"y"});
        ir_set_out(nd, 0, t, &s23); /* as after shape inference */
        ir_add_output(g, nd->out[0]);

        char *p = check_fixed_point(g);
        char want[64];
        snprintf(want, sizeof want, "  input %%x: %s[2,3]\n", ir_dtype_name(t));
        if (!strstr(p, want)) fail_msg("missing '%s' in\n%s", want, p);
        snprintf(want, sizeof want, "  %%y: %s[2,3] = Identity(%%x)\n", ir_dtype_name(t));
        if (!strstr(p, want)) fail_msg("missing '%s' in\n%s", want, p);
        snprintf(want, sizeof want, "  const %%special: %s[%d] = [", ir_dtype_name(t), n);
        if (!strstr(p, want)) fail_msg("missing '%s' (a list, not hex) in\n%s", want, p);
        assert_non_null(strstr(p, "const %big: "));
        assert_non_null(strstr(p, " = hex\""));
        Graph *g2 = parse_ok(p);
        assert_same_consts(g, g2);
        ir_graph_free(g2);
        free(p);
        ir_graph_free(g);
    }
}

static void test_float_lists(void **state)
{
    (void)state;
    char *p = roundtrip_text("graph f {\n"
                             "  const %a: f32[6] = [0.1, 1, 1e-45, 3.40282347e+38, -inf, nan]\n"
                             "  const %b: f64[3] = [0.1, 0.30000000000000004, 5e-324]\n"
                             "  const %h: f16[3] = [0.1, 65504, 6e-08]\n"
                             "  const %z: bf16[2] = [0.1, -3]\n"
                             "  const %o: bool[3] = [true, 0, 1]\n"
                             "  const %i: i8[2] = [-128, 127]\n"
                             "  output %a\n"
                             "}\n");
    assert_non_null(strstr(p, "= [0.1, 1, 1e-45, 3.4028235e+38, -inf, nan]\n"));
    assert_non_null(strstr(p, "= [0.1, 0.30000000000000004, 5e-324]\n"));
    assert_non_null(strstr(p, "f16[3] = [0.1, 65504, 6e-08]\n"));
    assert_non_null(strstr(p, "bf16[2] = [0.1, -3]\n"));
    assert_non_null(strstr(p, "bool[3] = [true, false, true]\n"));
    free(p);
}

/* Unsigned lists: the whole range of each dtype, exact for u64 beyond 2^53
 * (bytes checked), and "-0" reads as 0. */
static void test_unsigned_lists(void **state)
{
    (void)state;
    const char *text = "graph u {\n"
                       "  const %a: u16[3] = [0, 65535, -0]\n"
                       "  const %b: u32[3] = [0, 4294967295, 2147483648]\n"
                       "  const %c: u64[4] = [18446744073709551615, 9007199254740993, 0, 18446744073709551614]\n"
                       "  output %a\n"
                       "}\n";
    char *p = roundtrip_text(text);
    assert_non_null(strstr(p, "u16[3] = [0, 65535, 0]\n"));
    assert_non_null(strstr(p, "u32[3] = [0, 4294967295, 2147483648]\n"));
    assert_non_null(strstr(p, "u64[4] = [18446744073709551615, 9007199254740993, 0, 18446744073709551614]\n"));
    free(p);
    Graph *g = parse_ok(text);
    const Value *c = ir_find_value(g, "c");
    assert_non_null(c);
    uint64_t want[4] = {UINT64_MAX, 9007199254740993ULL, 0, UINT64_MAX - 1};
    assert_memory_equal(c->data, want, sizeof want);
    const Value *b = ir_find_value(g, "b");
    uint32_t wb[3] = {0, UINT32_MAX, UINT32_C(2147483648)};
    assert_memory_equal(b->data, wb, sizeof wb);
    ir_graph_free(g);
}

/* ---- names ---- */

static void test_quoted_names(void **state)
{
    (void)state;
    Graph *g = ir_graph_new("my graph");
    Shape s = ir_shape(0, NULL);
    Value *a = ir_add_input(g, "a b", DT_F32, &s);
    Value *b = ir_add_input(g, "q\"u\\o\tt\ne\x01", DT_F32, &s);
    Value *c = ir_add_input(g, "caf\xc3\xa9", DT_F32, &s);
    Value *d = ir_add_input(g, "ok.name/with-$_0", DT_F32, &s);
    Value *in[4] = {a, b, c, d};
    Node *n = ir_add_node(g, OP_Max, "node #1", in, 4, 1, (const char *const[]){"out:0"});
    Node *m = ir_add_node(g, OP_Relu, "", n->out, 1, 1, (const char *const[]){"_"});
    ir_add_output(g, m->out[0]);
    char *p = check_fixed_point(g);
    assert_string_equal(p, "graph \"my graph\" {\n"
                           "  input %\"a b\": f32[]\n"
                           "  input %\"q\\\"u\\\\o\\tt\\ne\\x01\": f32[]\n"
                           "  input %\"caf\xc3\xa9\": f32[]\n"
                           "  input %ok.name/with-$_0: f32[]\n"
                           "  \"node #1\": %\"out:0\" = Max(%\"a b\", %\"q\\\"u\\\\o\\tt\\ne\\x01\", "
                           "%\"caf\xc3\xa9\", %ok.name/with-$_0)\n"
                           "  \"\": %_ = Relu(%\"out:0\")\n"
                           "  output %_\n"
                           "}\n");
    Graph *g2 = parse_ok(p);
    assert_non_null(ir_find_value(g2, "q\"u\\o\tt\ne\x01"));
    assert_string_equal(g2->nodes[0]->name, "node #1");
    assert_string_equal(g2->name, "my graph");
    ir_graph_free(g2);
    free(p);
    /* \xHH accepts upper case and decodes any byte but NUL */
    Graph *g3 = parse_ok("graph g {\n input %\"\\x41\\x7E\": f32[]\n output %\"A~\" \n}");
    assert_string_equal(g3->inputs[0]->name, "A~");
    ir_graph_free(g3);
    ir_graph_free(g);
}

/* ---- absent inputs, multiple outputs, types after inference ---- */

static void test_absent_inputs_and_types(void **state)
{
    (void)state;
    char *p = roundtrip_text("graph g {\n"
                             "  input %x: f32[4,6]\n"
                             "  const %max: f32[] = [6]\n"
                             "  %c = Clip(%x, _, %max)\n"
                             "  %d = Clip(%x, _, _)\n"
                             "  %a: f32[4,3], %b = Split(%c, %d)\n"
                             "  n: Relu()\n"
                             "  output %a\n"
                             "  output %x\n"
                             "  output %a\n"
                             "}\n");
    assert_non_null(strstr(p, "  %c = Clip(%x, _, %max)\n"));
    assert_non_null(strstr(p, "  %d = Clip(%x, _, _)\n"));
    assert_non_null(strstr(p, "  %a: f32[4,3], %b = Split(%c, %d)\n"));
    assert_non_null(strstr(p, "  n: Relu()\n"));
    Graph *g = parse_ok(p);
    assert_int_equal(g->nodes[1]->n_in, 3);
    assert_null(g->nodes[1]->in[1]);
    assert_null(g->nodes[1]->in[2]);
    assert_int_equal(g->n_outputs, 3);
    assert_true(g->nodes[2]->out[0]->shape_known);
    assert_false(g->nodes[2]->out[1]->shape_known);
    /* types set later (as shape inference does) print and read back */
    int64_t dims[2] = {4, 3};
    Shape s = ir_shape(2, dims);
    ir_set_out(g->nodes[2], 1, DT_F64, &s);
    char *q = check_fixed_point(g);
    assert_non_null(strstr(q, "  %a: f32[4,3], %b: f64[4,3] = Split(%c, %d)\n"));
    free(q);
    ir_graph_free(g);
    free(p);
}

/* ---- random constants ---- */

static void test_random(void **state)
{
    (void)state;
    Graph *g = parse_ok("graph r {\n"
                        "  const %u: f64[1000] = random(seed=0, lo=0, hi=1)\n"
                        "  const %v: f64[1000] = random(hi=1, lo=0, seed=0)\n"
                        "  const %w: f32[1000] = random(seed=18446744073709551615, lo=-1.5, hi=-0.5)\n"
                        "  const %k: i8[1000] = random(seed=7, lo=-2, hi=2)\n"
                        "  const %c: f32[3] = random(seed=1, lo=2, hi=2)\n"
                        "  const %dflt: f32[1000] = random(seed=5)\n"
                        "  output %u\n"
                        "}\n");
    const Value *u = ir_find_value(g, "u"), *v = ir_find_value(g, "v");
    const Value *w = ir_find_value(g, "w"), *k = ir_find_value(g, "k"), *c = ir_find_value(g, "c");
    /* splitmix64 from state 0 yields 0xe220a8397b1dcdaf first */
    assert_true(ir_load_f64(DT_F64, u->data, 0) == (double)(0xe220a8397b1dcdafull >> 11) * 0x1p-53);
    assert_memory_equal(u->data, v->data, u->nbytes);
    int seen[5] = {0};
    for (int i = 0; i < 1000; i++) {
        double x = ir_load_f64(DT_F64, u->data, (size_t)i);
        assert_true(x >= 0 && x < 1);
        double y = ir_load_f64(DT_F32, w->data, (size_t)i);
        assert_true(y >= -1.5 && y <= -0.5);
        double z = ir_load_f64(DT_I8, k->data, (size_t)i);
        assert_true(z >= -2 && z <= 2);
        seen[(int)z + 2]++;
    }
    for (int i = 0; i < 5; i++) assert_true(seen[i] > 100);
    for (int i = 0; i < 3; i++) assert_true(ir_load_f64(DT_F32, c->data, (size_t)i) == 2.0);
    const Value *df = ir_find_value(g, "dflt"); /* lo=-1, hi=1 by default */
    double mn = 1, mx = -1;
    for (int i = 0; i < 1000; i++) {
        double x = ir_load_f64(DT_F32, df->data, (size_t)i);
        mn = x < mn ? x : mn;
        mx = x > mx ? x : mx;
    }
    assert_true(mn >= -1 && mn < -0.9 && mx <= 1 && mx > 0.9);
    /* printed as exact data, never as random() */
    char *p = check_fixed_point(g);
    assert_null(strstr(p, "random"));
    assert_non_null(strstr(p, "const %c: f32[3] = [2, 2, 2]\n"));
    Graph *g2 = parse_ok(p);
    assert_same_consts(g, g2);
    ir_graph_free(g2);
    free(p);
    ir_graph_free(g);
}

/* ---- attributes ---- */

/* A value of kind k that differs from the default text `deflt`. */
static void set_nondefault(Graph *g, Node *n, const AttrSpec *sp, int idx)
{
    AttrVal *a = &n->attrs[idx];
    static double fl[] = {0.1, -0.0, 1e300, 3.0, INFINITY};
    switch (sp->kind) {
    case ATTR_INT: a->set = 1; a->i = a->i == 7 ? 8 : 7; break;
    case ATTR_FLOAT: a->set = 1; a->f = a->f == 0.1 ? 0.2 : 0.1; break;
    case ATTR_STRING: a->set = 1; a->s = "Q \"x\"\\y"; break;
    case ATTR_INTS:
        a->set = 1;
        a->n = 3;
        a->ints = ir_alloc(g, 3 * sizeof(int64_t));
        a->ints[0] = -1; a->ints[1] = 0; a->ints[2] = INT64_MAX;
        break;
    case ATTR_FLOATS:
        a->set = 1;
        a->n = 5;
        a->floats = fl;
        break;
    case ATTR_TENSOR: {
        static const float data[3] = {1.5f, -2.0f, 0.25f};
        a->set = 1;
        a->t.dtype = DT_F32;
        int64_t three = 3;
        a->t.shape = ir_shape(1, &three);
        a->t.data = data;
        a->t.nbytes = sizeof data;
        break;
    }
    }
}

/* Every attribute of every op: defaults are not printed; a non-default value
 * of each kind prints and reads back. */
static void test_all_op_attributes(void **state)
{
    (void)state;
    int n_attrs = 0;
    for (int op = 0; op < OP_COUNT; op++) {
        const OpDesc *od = ir_op(op);
        Graph *g = ir_graph_new("attrs");
        Shape s = ir_shape(0, NULL);
        Value *x = ir_add_input(g, "x", DT_F32, &s);
        Node *d = ir_add_node(g, op, NULL, &x, 1, 1, (const char *const[]){"d"});
        Node *n = ir_add_node(g, op, NULL, &x, 1, 1, (const char *const[]){"n"});
        for (int k = 0; k < od->n_attrs; k++) set_nondefault(g, n, &od->attrs[k], k);
        ir_add_output(g, d->out[0]);
        ir_add_output(g, n->out[0]);
        char *p = check_fixed_point(g);
        char want[256];
        snprintf(want, sizeof want, "  %%d = %s(%%x)\n", od->name);
        if (!strstr(p, want)) fail_msg("defaults printed for %s:\n%s", od->name, p);
        for (int k = 0; k < od->n_attrs; k++) {
            snprintf(want, sizeof want, "%s=", od->attrs[k].name);
            if (!strstr(p, want)) fail_msg("attribute %s.%s not printed:\n%s", od->name, od->attrs[k].name, p);
            n_attrs++;
        }
        free(p);
        ir_graph_free(g);
    }
    print_message("checked %d attributes over %d ops\n", n_attrs, (int)OP_COUNT);
}

static void test_attribute_syntax(void **state)
{
    (void)state;
    const AttrSpec *alpha = find_attr("LeakyRelu", "alpha", ATTR_FLOAT);
    const AttrSpec *perm = find_attr("Transpose", "perm", ATTR_INTS);
    const AttrSpec *pad = find_attr("Conv", "auto_pad", ATTR_STRING);
    if (!alpha || !perm || !pad) {
        print_message("op schemas not in place yet (LeakyRelu.alpha, Transpose.perm, Conv.auto_pad)\n");
        skip();
    }
    char *p = roundtrip_text("graph a {\n"
                             "  input %x: f32[1,2,3]\n"
                             "  %y = LeakyRelu(%x) {alpha=2}\n"
                             "  %z = Transpose(%y) { perm = [ 2 , 0,1 ] }\n"
                             "  %w = LeakyRelu(%z) {alpha=1e-300}\n"
                             "  output %w\n"
                             "}\n");
    assert_non_null(strstr(p, "  %y = LeakyRelu(%x) {alpha=2.0}\n"));
    assert_non_null(strstr(p, "  %z = Transpose(%y) {perm=[2,0,1]}\n"));
    assert_non_null(strstr(p, "  %w = LeakyRelu(%z) {alpha=1e-300}\n"));
    free(p);
    expect_error("graph a {\n  input %x: f32[2]\n  %y = LeakyRelu(%x) {alpha=[1]}\n  output %y\n}\n",
                 "t.gir:3:29: attribute 'alpha' of op 'LeakyRelu' expects float, got '[1]'");
    expect_error("graph a {\n  input %x: f32[2]\n  %y = LeakyRelu(%x) {beta=1}\n  output %y\n}\n",
                 "t.gir:3:23: op 'LeakyRelu' has no attribute 'beta'");
    expect_error("graph a {\n  input %x: f32[2]\n  %y = LeakyRelu(%x) {alpha=1, alpha=2}\n  output %y\n}\n",
                 "t.gir:3:32: attribute 'alpha' is given twice");
    expect_error("graph a {\n  input %x: f32[2]\n  %y = LeakyRelu(%x) {alpha=\"a\"}\n  output %y\n}\n",
                 "t.gir:3:29: attribute 'alpha' of op 'LeakyRelu' expects float, got a string");
}

static void test_tensor_attribute(void **state)
{
    (void)state;
    if (!find_attr("Constant", "value", ATTR_TENSOR)) {
        print_message("Constant has no tensor attribute 'value' yet\n");
        skip();
    }
    char *p = roundtrip_text("graph k {\n"
                             "  %k = Constant() {value=f32[2] [1.5, 2]}\n"
                             "  %s = Constant() {value=i64[] [-3]}\n"
                             "  %h = Constant() {value=u8[65] random(seed=3, lo=0, hi=255)}\n"
                             "  %e = Constant() {value=bf16[2] hex\"803f0040\"}\n"
                             "  output %k\n"
                             "}\n");
    assert_non_null(strstr(p, "  %k = Constant() {value=f32[2] [1.5, 2]}\n"));
    assert_non_null(strstr(p, "  %s = Constant() {value=i64[] [-3]}\n"));
    assert_non_null(strstr(p, "  %h = Constant() {value=u8[65] hex\""));
    assert_non_null(strstr(p, "  %e = Constant() {value=bf16[2] [1, 2]}\n"));
    free(p);
    expect_error("graph k {\n  %k = Constant() {value=f32[2] [1]}\n  output %k\n}\n",
                 "t.gir:2:33: expected 2 elements for f32[2], got 1");
}

/* ---- elision ---- */

static void test_elided_dump(void **state)
{
    (void)state;
    Graph *g = parse_ok("graph e {\n"
                        "  const %big: f32[100] = random(seed=1, lo=-1, hi=1)\n"
                        "  const %small: f32[2] = [1, 2]\n"
                        "  output %big\n"
                        "}\n");
    char *p = print_graph(g, 1);
    assert_string_equal(p, "graph e {\n"
                           "  const %big: f32[100] = <elided 400 bytes>\n"
                           "  const %small: f32[2] = [1, 2]\n"
                           "  output %big\n"
                           "}\n");
    expect_error(p, "t.gir:2:26: constant data was elided from this dump (<elided 400 bytes>); it cannot be parsed");
    free(p);
    ir_graph_free(g);
}

/* ---- errors ---- */

static void test_errors(void **state)
{
    (void)state;
    expect_error("graph g {\n  input %x: f32[2]\n  %y = Foo(%x)\n  output %y\n}\n",
                 "t.gir:3:8: unknown op 'Foo'");
    expect_error("graph g {\n  input %x: f32[2]\n  %y = Add(%x, %q)\n  output %y\n}\n",
                 "t.gir:3:16: undefined value '%q'");
    expect_error("graph g {\n  input %x: f32[2]\n  %y = Add(%x, %\"a b\")\n  output %y\n}\n",
                 "t.gir:3:16: undefined value '%\"a b\"'");
    expect_error("graph g {\n  input %x: f32[2]\n  output %nope\n}\n",
                 "t.gir:3:10: undefined value '%nope'");
    expect_error("graph g {\n  input %x: f33[2]\n  output %x\n}\n",
                 "t.gir:2:13: unknown dtype 'f33'");
    expect_error("graph g {\n  const %c: f32[2,2] = [1, 2, 3]\n  output %c\n}\n",
                 "t.gir:2:24: expected 4 elements for f32[2,2], got 3");
    expect_error("graph g {\n  const %c: i32[2] = hex\"0000803f\"\n  output %c\n}\n",
                 "t.gir:2:22: expected 8 bytes of hex data for i32[2], got 4");
    expect_error("graph g {\n  const %c: f32[2] = <elided 8 bytes>\n  output %c\n}\n",
                 "t.gir:2:22: constant data was elided from this dump (<elided 8 bytes>); it cannot be parsed");
    expect_error("graph g {\n  input %\"abc: f32[2]\n  output %x\n}\n",
                 "t.gir:2:10: unterminated quoted string");
    expect_error("graph g {\n  input %x: f32[2]\n  input %x: f32[3]\n  output %x\n}\n",
                 "t.gir:3:9: value '%x' is already defined");
    expect_error("graph g {\n  input %x: f32[2]\n  %a, %a = Split(%x)\n  output %a\n}\n",
                 "t.gir:3:7: value '%a' is already defined");
    expect_error("graph g {\n  input %x: f32[2]\n  %x = Relu(%x)\n  output %x\n}\n",
                 "t.gir:3:3: value '%x' is already defined");
    expect_error("graph g {\n  input %x: f32[2]\n}\n", "t.gir:3:1: graph has no outputs (add 'output %NAME')");
    expect_error("graph g {\n  input %x: f32[2]\n  output %x\n", "t.gir:4:1: missing '}' at the end of graph");
    expect_error("graph g {\n  input %x: f32[2]\n  output %x\n}\ngraph h {\n",
                 "t.gir:5:1: unexpected text after the end of the graph");
    expect_error("graph g {\n  input %x: f32[2] junk\n  output %x\n}\n",
                 "t.gir:2:20: unexpected 'j' after the statement");
    expect_error("graph g {\n  const %c: u8[2] = [1, 256]\n  output %c\n}\n",
                 "t.gir:2:25: 256 is out of range for u8");
    expect_error("graph g {\n  const %c: u16[2] = [1, 65536]\n  output %c\n}\n",
                 "t.gir:2:26: 65536 is out of range for u16");
    expect_error("graph g {\n  const %c: u32[2] = [-1, 2]\n  output %c\n}\n",
                 "t.gir:2:23: -1 is out of range for u32");
    expect_error("graph g {\n  const %c: u64[1] = [18446744073709551616]\n  output %c\n}\n",
                 "t.gir:2:23: 18446744073709551616 is out of range for u64");
    expect_error("graph g {\n  const %c: u64[1] = [-1]\n  output %c\n}\n",
                 "t.gir:2:23: -1 is out of range for u64");
    expect_error("graph g {\n  const %c: i32[2] = [1, 2.5]\n  output %c\n}\n",
                 "t.gir:2:26: '2.5' is not a valid i32 literal");
    expect_error("graph g {\n  const %c: f32[1] = [0x10]\n  output %c\n}\n",
                 "t.gir:2:23: '0x10' is not a valid f32 literal");
    expect_error("graph g {\n  input %x: f32[-1]\n  output %x\n}\n",
                 "t.gir:2:17: dimensions must not be negative");
    expect_error("graph g {\n  input %x: f32[1,1,1,1,1,1,1,1,1]\n  output %x\n}\n",
                 "t.gir:2:33: rank exceeds the maximum of 8");
    expect_error("graph g {\n  input %x: f32[4294967296,4294967296]\n  output %x\n}\n",
                 "t.gir:2:13: shape is too large: its byte size overflows");
    expect_error("graph g {\n  input %\"a\\qb\": f32[1]\n  output %x\n}\n",
                 "t.gir:2:12: unknown escape '\\q' (use \\\" \\\\ \\n \\t \\xHH)");
    expect_error("graph g {\n  input %\"a\\x00\": f32[1]\n  output %x\n}\n",
                 "t.gir:2:12: escape \\x00 is not allowed (names and strings cannot hold NUL)");
    expect_error("graph g {\n  input %\"\": f32[1]\n  output %x\n}\n",
                 "t.gir:2:9: value names must not be empty");
    expect_error("graph g {\n  const %c: f32[2] = random(seed=1, lo=2, hi=1)\n  output %c\n}\n",
                 "t.gir:2:29: random(): lo must not exceed hi");
    expect_error("graph g {\n  const %c: f32[2] = random(lo=2)\n  output %c\n}\n",
                 "t.gir:2:29: random() needs seed=");
    expect_error("graph g {\n  const %c: f32[2] = random(seed=1, lo=2)\n  output %c\n}\n",
                 "t.gir:2:29: random(): lo must not exceed hi");
    expect_error("graph g {\n  const %c: f32[2] = hex\"0000803\"\n  output %c\n}\n",
                 "t.gir:2:22: hex\"...\" has an odd number of digits (7)");
    expect_error("graph g {\n  input %x: f32[2]\n  %y = Relu(%x\n  output %y\n}\n",
                 "t.gir:3:15: expected ',' or ')' in the op inputs, found end of line");
    expect_error("input %x: f32[1]\n", "t.gir:1:1: expected 'graph NAME {', found 'i'");
    expect_error("", "t.gir:1:1: expected 'graph NAME {'");
}

static void test_parse_file_errors(void **state)
{
    (void)state;
    Diag d;
    memset(&d, 0, sizeof d);
    assert_null(ir_parse_file("/nonexistent/dir/x.gir", &d));
    assert_int_equal(strncmp(d.msg, "/nonexistent/dir/x.gir: cannot read file: ", 42), 0);
}

/* ---- every .gir file in the source tree ---- */

typedef struct WalkStats {
    int parsed, rejected, inferred;
} WalkStats;

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    *len = fread(buf, 1, (size_t)n, f);
    buf[*len] = 0;
    fclose(f);
    return buf;
}

static void check_gir_file(const char *path, WalkStats *st)
{
    size_t len = 0;
    char *text = read_file(path, &len);
    assert_non_null(text);
    Diag d;
    memset(&d, 0, sizeof d);
    Graph *g = ir_parse(text, len, path, &d);
    if (!g) {
        /* only a file expecting this very parse error may fail here */
        const char *dir = strstr(text, "#! expect-error:");
        char want[1024] = "";
        if (dir) {
            dir += strlen("#! expect-error:");
            while (*dir == ' ') dir++;
            size_t wl = strcspn(dir, "\r\n");
            snprintf(want, sizeof want, "%.*s", (int)(wl < sizeof want - 1 ? wl : sizeof want - 1), dir);
        }
        if (!dir || !*want || !strstr(d.msg, want)) fail_msg("%s does not parse: %s", path, d.msg);
        if (strncmp(d.msg, path, strlen(path)) != 0) fail_msg("error does not start with the path: %s", d.msg);
        st->rejected++;
        free(text);
        return;
    }
    st->parsed++;
    free(check_fixed_point(g));
    Diag d2;
    memset(&d2, 0, sizeof d2);
    /* as the pipeline does: verify, then infer */
    if (ir_verify(g, &d2) == 0 && pass_infer_shapes(g, &d2) == 0) {
        st->inferred++;
        free(check_fixed_point(g));
    }
    ir_graph_free(g);
    free(text);
}

static void walk(const char *dir, WalkStats *st)
{
    DIR *dp = opendir(dir);
    if (!dp) return;
    /* sorted for deterministic order */
    char **names = NULL;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(dp))) {
        if (e->d_name[0] == '.') continue;
        names = realloc(names, sizeof *names * (size_t)(n + 1));
        names[n++] = strdup(e->d_name);
    }
    closedir(dp);
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
            char *t = names[j]; names[j] = names[j - 1]; names[j - 1] = t;
        }
    for (int i = 0; i < n; i++) {
        size_t pl = strlen(dir) + strlen(names[i]) + 2;
        char *path = malloc(pl);
        snprintf(path, pl, "%s/%s", dir, names[i]);
        struct stat sb;
        if (stat(path, &sb) == 0) {
            size_t nl = strlen(names[i]);
            if (S_ISDIR(sb.st_mode)) walk(path, st);
            else if (nl > 4 && strcmp(names[i] + nl - 4, ".gir") == 0) check_gir_file(path, st);
        }
        free(path);
        free(names[i]);
    }
    free(names);
}

static void test_gir_files(void **state)
{
    (void)state;
#ifdef GRAPHC_SOURCE_DIR
    WalkStats st = {0, 0, 0};
    walk(GRAPHC_SOURCE_DIR "/tests", &st);
    print_message("%d .gir files round-trip (%d also after shape inference), %d rejected by design\n",
                  st.parsed, st.inferred, st.rejected);
#else
    print_message("GRAPHC_SOURCE_DIR is not defined: skipping the walk over tests/**/*.gir\n");
    skip();
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_canonical_print),
        cmocka_unit_test(test_whitespace_and_comments),
        cmocka_unit_test(test_every_dtype),
        cmocka_unit_test(test_float_lists),
        cmocka_unit_test(test_unsigned_lists),
        cmocka_unit_test(test_quoted_names),
        cmocka_unit_test(test_absent_inputs_and_types),
        cmocka_unit_test(test_random),
        cmocka_unit_test(test_all_op_attributes),
        cmocka_unit_test(test_attribute_syntax),
        cmocka_unit_test(test_tensor_attribute),
        cmocka_unit_test(test_elided_dump),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_parse_file_errors),
        cmocka_unit_test(test_gir_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
