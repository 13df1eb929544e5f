/* elementwise.c — operator descriptions of the elementwise family.
 *
 * Every op here maps each output element to a function of the input elements
 * at the same (numpy-broadcast) position, so three facets describe it fully:
 *   infer        dtype rules and broadcasting (ONNX opset 17 semantics),
 *   scalar_ref   the function on doubles (reference: interpreter, folding),
 *   scalar_expr  the same function as C expression text in a compute type
 *                `ct` (float functions for f32, double ones for f64, integer
 *                arithmetic for integer types), shared by every emitter and
 *                by fusion.
 * Evaluation is the shared ir_eval_elementwise (broadcasting over scalar_ref).
 *
 * scalar_ref and scalar_expr agree on the corner cases the C code can reach
 * without undefined behaviour: integer results wrap modulo 2^bits (what C
 * conversions do on the targets we support; integer Pow, computed in double,
 * saturates instead), integer division by zero gives
 * 0 instead of trapping, Max/Min/Relu/Clip propagate NaN like numpy, and Cast
 * from float to integer truncates and saturates (NaN gives 0), exactly as
 * ir_store_f64 does.
 *
 * Expressions may repeat an argument (ternaries); emitters pass plain
 * identifiers (each input element is loaded into a local first), so nothing
 * is evaluated twice at run time.
 */
#include "ew_common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- small helpers ------------------------------------------------------- */

/* Post-processes an arithmetic result for output dtype t. */
static double fin(const Node *n, double v)
{
    DType t = n->out[0]->dtype;
    return ir_dtype_is_int(t) ? ew_wrap_int(t, v) : v;
}

/* ---- inference functions ------------------------------------------------- */

static int infer_unary(Node *n, EwClass c, Diag *d)
{
    if (ew_check_count(n, d) || ew_check_class(n, 0, c, d)) return -1;
    ir_set_out(n, 0, n->in[0]->dtype, &n->in[0]->shape);
    return 0;
}

static int infer_unary_float(Node *n, Diag *d) { return infer_unary(n, EW_FLOAT, d); }
static int infer_unary_signed(Node *n, Diag *d) { return infer_unary(n, EW_SIGNED, d); }
static int infer_unary_numeric(Node *n, Diag *d) { return infer_unary(n, EW_NUMERIC, d); }
static int infer_unary_any(Node *n, Diag *d) { return infer_unary(n, EW_ANY, d); }
static int infer_unary_bool(Node *n, Diag *d) { return infer_unary(n, EW_BOOL, d); }

/* All inputs share one dtype of class c; the output broadcasts them and has
 * dtype `out` (DT_UNDEF: the inputs' dtype). Max/Min accept absent variadic
 * inputs past the first. */
static int infer_arith(Node *n, Diag *d) { return ew_infer_nary(n, EW_NUMERIC, DT_UNDEF, d); }
static int infer_compare(Node *n, Diag *d) { return ew_infer_nary(n, EW_NUMERIC, DT_BOOL, d); }
static int infer_equal(Node *n, Diag *d) { return ew_infer_nary(n, EW_ANY, DT_BOOL, d); }

/* Pow: base X and exponent Y may have different numeric dtypes (ONNX T, T1). */
static int infer_pow(Node *n, Diag *d)
{
    if (ew_check_count(n, d) || ew_check_class(n, 0, EW_NUMERIC, d) || ew_check_class(n, 1, EW_NUMERIC, d)) return -1;
    Shape s;
    if (ew_broadcast_inputs(n, 0, &s, d)) return -1;
    ir_set_out(n, 0, n->in[0]->dtype, &s);
    return 0;
}

static int infer_where(Node *n, Diag *d)
{
    if (ew_check_count(n, d) || ew_check_class(n, 0, EW_BOOL, d) || ew_check_same_dtype(n, 2, 1, d)) return -1;
    Shape s;
    if (ew_broadcast_inputs(n, 0, &s, d)) return -1;
    ir_set_out(n, 0, n->in[1]->dtype, &s);
    return 0;
}

/* Clip (opset 13): optional scalar inputs min and max of the input's dtype. */
static int infer_clip(Node *n, Diag *d)
{
    if (ew_check_count(n, d) || ew_check_class(n, 0, EW_NUMERIC, d)) return -1;
    for (int j = 1; j < n->n_in; j++) {
        if (!n->in[j]) continue;
        if (ew_check_same_dtype(n, j, 0, d)) return -1;
        const Shape *s = &n->in[j]->shape;
        char sb[128];
        if (ir_numel(s) != 1 || s->rank > n->in[0]->shape.rank)
            return diag_node_error(d, n, "input '%s' must be a scalar, got shape %s", j == 1 ? "min" : "max",
                                   ir_shape_str(s, sb, sizeof sb));
    }
    ir_set_out(n, 0, n->in[0]->dtype, &n->in[0]->shape);
    return 0;
}

/* ONNX TensorProto.DataType codes graphc supports, and their dtypes. */
static const struct { int code; DType t; } cast_codes[] = {
    {1, DT_F32}, {2, DT_U8}, {3, DT_I8}, {4, DT_U16}, {5, DT_I16}, {6, DT_I32}, {7, DT_I64},
    {9, DT_BOOL}, {10, DT_F16}, {11, DT_F64}, {12, DT_U32}, {13, DT_U64}, {16, DT_BF16},
};

static DType cast_target(const Node *n)
{
    for (size_t k = 0; k < sizeof cast_codes / sizeof cast_codes[0]; k++)
        if (n->attrs[0].set && n->attrs[0].i == cast_codes[k].code) return cast_codes[k].t;
    return DT_UNDEF;
}

static int infer_cast(Node *n, Diag *d)
{
    if (ew_check_count(n, d)) return -1;
    if (!n->attrs[0].set) return diag_node_error(d, n, "required attribute 'to' is missing");
    DType t = cast_target(n);
    if (t == DT_UNDEF)
        return diag_node_error(d, n,
                               "attribute 'to' = %lld is not a supported ONNX dtype (supported: 1 float, 2 uint8, "
                               "3 int8, 4 uint16, 5 int16, 6 int32, 7 int64, 9 bool, 10 float16, 11 double, "
                               "12 uint32, 13 uint64, 16 bfloat16)",
                               (long long)n->attrs[0].i);
    ir_set_out(n, 0, t, &n->in[0]->shape);
    return 0;
}

/* ---- attribute schemas --------------------------------------------------- */

enum { ALPHA_ALPHA };
static const AttrSpec leaky_attrs[] = {{"alpha", ATTR_FLOAT, "0.01", 0}};
static const AttrSpec elu_attrs[] = {{"alpha", ATTR_FLOAT, "1.0", 0}};
enum { SELU_ALPHA, SELU_GAMMA };
static const AttrSpec selu_attrs[] = {
    {"alpha", ATTR_FLOAT, "1.67326319217681884765625", 0},
    {"gamma", ATTR_FLOAT, "1.05070102214813232421875", 0},
};
enum { HSIG_ALPHA, HSIG_BETA };
static const AttrSpec hardsigmoid_attrs[] = {{"alpha", ATTR_FLOAT, "0.2", 0}, {"beta", ATTR_FLOAT, "0.5", 0}};
enum { CAST_TO };
static const AttrSpec cast_attrs[] = {{"to", ATTR_INT, NULL, 1}};

static const char *const names_X[] = {"X"};
static const char *const names_Y[] = {"Y"};
static const char *const names_input[] = {"input"};
static const char *const names_output[] = {"output"};
static const char *const names_AB[] = {"A", "B"};
static const char *const names_C[] = {"C"};
static const char *const names_XY[] = {"X", "Y"};
static const char *const names_Z[] = {"Z"};
static const char *const names_clip[] = {"input", "min", "max"};
static const char *const names_where[] = {"condition", "X", "Y"};
static const char *const names_data[] = {"data_0"};
static const char *const names_max[] = {"max"};
static const char *const names_min[] = {"min"};

/* Any input may share the output's memory: the generic emitter loads every
 * input element before it stores the output element at the same index, and
 * the planner only shares an input of the output's element count (never a
 * broadcast one). Pairs past a node's input count are ignored. */
static const InplacePair inplace_any[] = {{0, 0}, {1, 0}, {2, 0}, {3, 0}};

/* ---- scalar functions ---------------------------------------------------- */

/* Expression writers get their arguments as C expressions; A and B name them. */
#define A (args[0])
#define B (args[1])

/* Unary float math functions: NAME(x) -> "namef(x)" / "name(x)". */
EW_LIBM_UNARY(Exp, "exp", exp)
EW_LIBM_UNARY(Log, "log", log)
EW_LIBM_UNARY(Sqrt, "sqrt", sqrt)
EW_LIBM_UNARY(Tanh, "tanh", tanh)
EW_LIBM_UNARY(Erf, "erf", erf)
EW_LIBM_UNARY(Floor, "floor", floor)
EW_LIBM_UNARY(Ceil, "ceil", ceil)
EW_LIBM_UNARY(Sin, "sin", sin)
EW_LIBM_UNARY(Cos, "cos", cos)

static void expr_Abs(const Node *n, Writer *w, const char *const *args, DType ct)
{
    (void)n;
    if (ir_dtype_is_float(ct)) w_printf(w, "fabs%s(%s)", ew_fs(ct), A);
    else if (ew_is_signed_int(ct)) w_printf(w, "((%s) < 0 ? -(%s) : (%s))", A, A, A);
    else w_printf(w, "(%s)", A);
}
static double ref_Abs(const Node *n, const double *x) { return fin(n, fabs(x[0])); }

static void expr_Neg(const Node *n, Writer *w, const char *const *args, DType ct)
{
    (void)n, (void)ct;
    w_printf(w, "(-(%s))", A);
}
static double ref_Neg(const Node *n, const double *x) { return fin(n, -x[0]); }

static void expr_Reciprocal(const Node *n, Writer *w, const char *const *args, DType ct)
{
    char b[64];
    (void)n;
    w_printf(w, "(%s / (%s))", ew_lit(b, sizeof b, ct, 1), A);
}
static double ref_Reciprocal(const Node *n, const double *x) { (void)n; return 1.0 / x[0]; }

/* Relu propagates NaN: x < 0 ? 0 : x. Unsigned inputs pass through. */
static void expr_Relu(const Node *n, Writer *w, const char *const *args, DType ct)
{
    char b[64];
    (void)n;
    if (ew_is_unsigned(ct) || ct == DT_BOOL) { w_printf(w, "(%s)", A); return; }
    ew_lit(b, sizeof b, ct, 0);
    w_printf(w, "((%s) < %s ? %s : (%s))", A, b, b, A);
}
static double ref_Relu(const Node *n, const double *x) { (void)n; return x[0] < 0 ? 0 : x[0]; }

static void expr_Sigmoid(const Node *n, Writer *w, const char *const *args, DType ct)
{
    char b[64];
    (void)n;
    ew_lit(b, sizeof b, ct, 1);
    w_printf(w, "(%s / (%s + exp%s(-(%s))))", b, b, ew_fs(ct), A);
}
static double ref_Sigmoid(const Node *n, const double *x)
{
    (void)n;
    double v = x[0];
    if (v >= 0) return 1.0 / (1.0 + exp(-v));
    double e = exp(v);
    return e / (1.0 + e);
}

static void expr_LeakyRelu(const Node *n, Writer *w, const char *const *args, DType ct)
{
    char z[64], al[64];
    ew_lit(z, sizeof z, ct, 0);
    ew_lit(al, sizeof al, ct, n->attrs[ALPHA_ALPHA].f);
    w_printf(w, "((%s) < %s ? %s * (%s) : (%s))", A, z, al, A, A);
}
static double ref_LeakyRelu(const Node *n, const double *x)
{
    return x[0] < 0 ? n->attrs[ALPHA_ALPHA].f * x[0] : x[0];
}

static void expr_Elu(const Node *n, Writer *w, const char *const *args, DType ct)
{
    char z[64], al[64];
    ew_lit(z, sizeof z, ct, 0);
    ew_lit(al, sizeof al, ct, n->attrs[ALPHA_ALPHA].f);
    w_printf(w, "((%s) < %s ? %s * expm1%s(%s) : (%s))", A, z, al, ew_fs(ct), A, A);
}
static double ref_Elu(const Node *n, const double *x)
{
    return x[0] < 0 ? n->attrs[ALPHA_ALPHA].f * expm1(x[0]) : x[0];
}

static void expr_Selu(const Node *n, Writer *w, const char *const *args, DType ct)
{
    char z[64], al[64], ga[64];
    ew_lit(z, sizeof z, ct, 0);
    ew_lit(al, sizeof al, ct, n->attrs[SELU_ALPHA].f);
    ew_lit(ga, sizeof ga, ct, n->attrs[SELU_GAMMA].f);
    w_printf(w, "(%s * ((%s) <= %s ? %s * expm1%s(%s) : (%s)))", ga, A, z, al, ew_fs(ct), A, A);
}
static double ref_Selu(const Node *n, const double *x)
{
    double v = x[0];
    return n->attrs[SELU_GAMMA].f * (v <= 0 ? n->attrs[SELU_ALPHA].f * expm1(v) : v);
}

/* Writes clamp(t, 0, 1) with NaN propagation; t is repeated. */
static void write_clamp01(Writer *w, const char *t, DType ct)
{
    char z[64], o[64];
    ew_lit(z, sizeof z, ct, 0);
    ew_lit(o, sizeof o, ct, 1);
    w_printf(w, "(%s < %s ? %s : %s > %s ? %s : %s)", t, z, z, t, o, o, t);
}
static double clamp01(double t) { return t < 0 ? 0 : t > 1 ? 1 : t; }

static void expr_HardSigmoid(const Node *n, Writer *w, const char *const *args, DType ct)
{
    char al[64], be[64], t[256];
    ew_lit(al, sizeof al, ct, n->attrs[HSIG_ALPHA].f);
    ew_lit(be, sizeof be, ct, n->attrs[HSIG_BETA].f);
    snprintf(t, sizeof t, "(%s * (%s) + %s)", al, A, be);
    write_clamp01(w, t, ct);
}
static double ref_HardSigmoid(const Node *n, const double *x)
{
    return clamp01(n->attrs[HSIG_ALPHA].f * x[0] + n->attrs[HSIG_BETA].f);
}

/* HardSwish: x * clamp(x / 6 + 0.5, 0, 1). */
static void expr_HardSwish(const Node *n, Writer *w, const char *const *args, DType ct)
{
    char al[64], be[64], t[256];
    (void)n;
    ew_lit(al, sizeof al, ct, 1.0 / 6.0);
    ew_lit(be, sizeof be, ct, 0.5);
    snprintf(t, sizeof t, "(%s * (%s) + %s)", al, A, be);
    w_printf(w, "((%s) * ", A);
    write_clamp01(w, t, ct);
    w_puts(w, ")");
}
static double ref_HardSwish(const Node *n, const double *x)
{
    (void)n;
    return x[0] * clamp01(x[0] / 6.0 + 0.5);
}

/* Softplus = log(exp(x) + 1), written so that neither branch overflows. */
static void expr_Softplus(const Node *n, Writer *w, const char *const *args, DType ct)
{
    char z[64];
    (void)n;
    ew_lit(z, sizeof z, ct, 0);
    w_printf(w, "((%s) > %s ? (%s) + log1p%s(exp%s(-(%s))) : log1p%s(exp%s(%s)))", A, z, A, ew_fs(ct), ew_fs(ct), A,
             ew_fs(ct), ew_fs(ct), A);
}
static double ref_Softplus(const Node *n, const double *x)
{
    (void)n;
    double v = x[0];
    return v > 0 ? v + log1p(exp(-v)) : log1p(exp(v));
}

/* Clip = min(max(x, lo), hi) as numpy computes it (NaN propagates; when
 * lo > hi the result is hi). Absent bounds are skipped. */
static void expr_Clip(const Node *n, Writer *w, const char *const *args, DType ct)
{
    (void)ct;
    int lo = n->n_in > 1 && n->in[1], hi = n->n_in > 2 && n->in[2];
    if (lo && hi)
        w_printf(w, "((%s) < (%s) ? ((%s) > (%s) ? (%s) : (%s)) : (%s) > (%s) ? (%s) : (%s))", A, args[1], args[1],
                 args[2], args[2], args[1], A, args[2], args[2], A);
    else if (lo) w_printf(w, "((%s) < (%s) ? (%s) : (%s))", A, args[1], args[1], A);
    else if (hi) w_printf(w, "((%s) > (%s) ? (%s) : (%s))", A, args[2], args[2], A);
    else w_printf(w, "(%s)", A);
}
static double ref_Clip(const Node *n, const double *x)
{
    double v = x[0];
    if (n->n_in > 1 && n->in[1] && v < x[1]) v = x[1];
    if (n->n_in > 2 && n->in[2] && v > x[2]) v = x[2];
    return v;
}

static void expr_Not(const Node *n, Writer *w, const char *const *args, DType ct)
{
    (void)n, (void)ct;
    w_printf(w, "(!(%s))", A);
}
static double ref_Not(const Node *n, const double *x) { (void)n; return x[0] != 0 ? 0 : 1; }

static void expr_Identity(const Node *n, Writer *w, const char *const *args, DType ct)
{
    (void)n, (void)ct;
    w_printf(w, "(%s)", A);
}
static double ref_Identity(const Node *n, const double *x) { (void)n; return x[0]; }

/* Cast: the value is computed in the input's compute type; the store
 * converts. Conversions C leaves undefined are spelled out: to bool is
 * `!= 0`, float to integer saturates and maps NaN to 0. */
static void expr_Cast(const Node *n, Writer *w, const char *const *args, DType ct)
{
    DType to = n->out[0]->dtype, from = n->in[0]->dtype;
    char z[64];
    if (to == DT_BOOL) {
        w_printf(w, "((%s) != %s)", A, ew_lit(z, sizeof z, ct, 0));
        return;
    }
    if (!ir_dtype_is_int(to) || !ir_dtype_is_float(from)) {
        w_printf(w, "(%s)", A);
        return;
    }
    static const struct { DType t; const char *min, *max; double lo, hi; } lim[] = {
        {DT_I8, "INT8_MIN", "INT8_MAX", -128.0, 128.0},
        {DT_U8, "0", "UINT8_MAX", 0.0, 256.0},
        {DT_I16, "INT16_MIN", "INT16_MAX", -32768.0, 32768.0},
        {DT_I32, "INT32_MIN", "INT32_MAX", -2147483648.0, 2147483648.0},
        {DT_I64, "INT64_MIN", "INT64_MAX", -9223372036854775808.0, 9223372036854775808.0},
        {DT_U16, "0", "UINT16_MAX", 0.0, 65536.0},
        {DT_U32, "0", "UINT32_MAX", 0.0, 4294967296.0},
        {DT_U64, "0", "UINT64_MAX", 0.0, 18446744073709551616.0},
    };
    for (size_t k = 0; k < sizeof lim / sizeof lim[0]; k++) {
        if (lim[k].t != to) continue;
        char lo[64], hi[64];
        ew_lit(lo, sizeof lo, ct, lim[k].lo);
        ew_lit(hi, sizeof hi, ct, lim[k].hi);
        w_printf(w, "((%s) != (%s) ? 0 : (%s) <= %s ? %s : (%s) >= %s ? %s : (%s)(%s))", A, A, A, lo, lim[k].min, A,
                 hi, lim[k].max, ew_ctype(to), A);
        return;
    }
    GC_ASSERT(0 && "Cast to an unknown integer dtype");
}
static double ref_Cast(const Node *n, const double *x)
{
    DType to = n->out[0]->dtype, from = n->in[0]->dtype;
    double v = x[0];
    if (to == DT_BOOL) return v != 0;
    if (to == DT_I64 && from == DT_U64 && v >= 9223372036854775808.0) /* wraps negative; UINT64_MAX gives -1 */
        return v >= 18446744073709551616.0 ? -1.0 : v - 18446744073709551616.0;
    if (ir_dtype_is_int(to) && !ir_dtype_is_float(from)) return ew_wrap_int(to, v);
    return ir_round_to(to, v); /* floats round; float to integer saturates */
}

static void expr_Add(const Node *n, Writer *w, const char *const *args, DType ct)
{
    (void)n, (void)ct;
    w_printf(w, "((%s) + (%s))", A, B);
}
static double ref_Add(const Node *n, const double *x) { return fin(n, x[0] + x[1]); }

static void expr_Sub(const Node *n, Writer *w, const char *const *args, DType ct)
{
    (void)n, (void)ct;
    w_printf(w, "((%s) - (%s))", A, B);
}
static double ref_Sub(const Node *n, const double *x) { return fin(n, x[0] - x[1]); }

/* u16 operands promote to int, whose product can overflow: multiply as
 * unsigned int instead (the store truncates). */
static void expr_Mul(const Node *n, Writer *w, const char *const *args, DType ct)
{
    (void)n;
    if (ct == DT_U16) w_printf(w, "((uint32_t)(%s) * (%s))", A, B);
    else w_printf(w, "((%s) * (%s))", A, B);
}
static double ref_Mul(const Node *n, const double *x) { return fin(n, x[0] * x[1]); }

/* Integer division truncates toward zero (C and ONNX); by zero it gives 0. */
static void expr_Div(const Node *n, Writer *w, const char *const *args, DType ct)
{
    (void)n;
    if (ir_dtype_is_float(ct)) w_printf(w, "((%s) / (%s))", A, B);
    else w_printf(w, "((%s) != 0 ? (%s) / (%s) : 0)", B, A, B);
}
static double ref_Div(const Node *n, const double *x)
{
    if (ir_dtype_is_float(n->out[0]->dtype)) return x[0] / x[1];
    return x[1] != 0 ? fin(n, trunc(x[0] / x[1])) : 0;
}

/* Pow: float bases use pow/powf; integer bases compute in double, truncate
 * and saturate at the type's limits (ew_sat_int, as a Cast would: a plain C
 * conversion of an out-of-range double is undefined). The exponent may have
 * another dtype. */
static void expr_Pow(const Node *n, Writer *w, const char *const *args, DType ct)
{
    (void)n;
    if (ir_dtype_is_float(ct)) {
        w_printf(w, "pow%s((%s), (%s)(%s))", ew_fs(ct), A, ew_ctype(ct), B);
        return;
    }
    char e[256];
    snprintf(e, sizeof e, "pow((double)(%s), (double)(%s))", A, B);
    ew_sat_int(w, ct, e);
}
static double ref_Pow(const Node *n, const double *x)
{
    DType t = n->out[0]->dtype;
    double v = pow(x[0], x[1]);
    return ir_dtype_is_int(t) ? ir_round_to(t, v) : v;
}

/* Max/Min fold left over the inputs: v = (x_j CMP v || x_j is NaN) ? x_j : v,
 * so float versions propagate NaN and ties keep the earlier input. */
static void write_minmax(const Node *n, Writer *w, const char *const *args, DType ct, const char *cmp)
{
    Writer acc, nxt;
    w_init(&acc);
    w_printf(&acc, "(%s)", A);
    for (int j = 1; j < n->n_in; j++) {
        w_init(&nxt);
        if (ir_dtype_is_float(ct))
            w_printf(&nxt, "(((%s) %s %s || (%s) != (%s)) ? (%s) : %s)", args[j], cmp, acc.buf, args[j], args[j],
                     args[j], acc.buf);
        else w_printf(&nxt, "((%s) %s %s ? (%s) : %s)", args[j], cmp, acc.buf, args[j], acc.buf);
        w_free(&acc);
        acc = nxt;
    }
    w_puts(w, acc.buf);
    w_free(&acc);
}
static void expr_Max(const Node *n, Writer *w, const char *const *args, DType ct) { write_minmax(n, w, args, ct, ">"); }
static void expr_Min(const Node *n, Writer *w, const char *const *args, DType ct) { write_minmax(n, w, args, ct, "<"); }
static double ref_Max(const Node *n, const double *x)
{
    double v = x[0];
    for (int j = 1; j < n->n_in; j++)
        if (x[j] > v || isnan(x[j])) v = x[j];
    return v;
}
static double ref_Min(const Node *n, const double *x)
{
    double v = x[0];
    for (int j = 1; j < n->n_in; j++)
        if (x[j] < v || isnan(x[j])) v = x[j];
    return v;
}

static void expr_Equal(const Node *n, Writer *w, const char *const *args, DType ct)
{
    (void)n, (void)ct;
    w_printf(w, "((%s) == (%s))", A, B);
}
static double ref_Equal(const Node *n, const double *x) { (void)n; return x[0] == x[1]; }

static void expr_Less(const Node *n, Writer *w, const char *const *args, DType ct)
{
    (void)n, (void)ct;
    w_printf(w, "((%s) < (%s))", A, B);
}
static double ref_Less(const Node *n, const double *x) { (void)n; return x[0] < x[1]; }

static void expr_Greater(const Node *n, Writer *w, const char *const *args, DType ct)
{
    (void)n, (void)ct;
    w_printf(w, "((%s) > (%s))", A, B);
}
static double ref_Greater(const Node *n, const double *x) { (void)n; return x[0] > x[1]; }

static void expr_Where(const Node *n, Writer *w, const char *const *args, DType ct)
{
    (void)n, (void)ct;
    w_printf(w, "((%s) ? (%s) : (%s))", args[0], args[1], args[2]);
}
static double ref_Where(const Node *n, const double *x) { (void)n; return x[0] != 0 ? x[1] : x[2]; }

#undef A
#undef B

/* ---- the descriptions ---------------------------------------------------- */

#define EW_COMMON(Op)                                                                              \
    .name = #Op, .min_out = 1, .max_out = 1, .scalar_expr = expr_##Op, .scalar_ref = ref_##Op,  \
    .eval = ir_eval_elementwise, .inplace = inplace_any, .n_inplace = 4
#define UNARY(Op, inf, in_n, out_n)                                                                \
    const OpDesc op_##Op = {EW_COMMON(Op), .min_in = 1, .max_in = 1, .in_names = in_n,            \
                            .out_names = out_n, .infer = inf}
#define UNARY_ATTRS(Op, inf, spec)                                                                 \
    const OpDesc op_##Op = {EW_COMMON(Op), .min_in = 1, .max_in = 1, .in_names = names_X,         \
                            .out_names = names_Y, .infer = inf, .attrs = spec,                    \
                            .n_attrs = (int)(sizeof spec / sizeof spec[0])}
#define BINARY(Op, inf, in_n, out_n)                                                               \
    const OpDesc op_##Op = {EW_COMMON(Op), .min_in = 2, .max_in = 2, .in_names = in_n,            \
                            .out_names = out_n, .infer = inf}

UNARY(Abs, infer_unary_numeric, names_X, names_Y);
UNARY(Neg, infer_unary_signed, names_X, names_Y);
UNARY(Exp, infer_unary_float, names_input, names_output);
UNARY(Log, infer_unary_float, names_input, names_output);
UNARY(Sqrt, infer_unary_float, names_X, names_Y);
UNARY(Reciprocal, infer_unary_float, names_X, names_Y);
UNARY(Relu, infer_unary_numeric, names_X, names_Y);
UNARY(Sigmoid, infer_unary_float, names_X, names_Y);
UNARY(Tanh, infer_unary_float, names_input, names_output);
UNARY(Erf, infer_unary_float, names_input, names_output);
UNARY_ATTRS(LeakyRelu, infer_unary_float, leaky_attrs);
UNARY_ATTRS(Elu, infer_unary_float, elu_attrs);
UNARY_ATTRS(Selu, infer_unary_float, selu_attrs);
UNARY_ATTRS(HardSigmoid, infer_unary_float, hardsigmoid_attrs);
UNARY(HardSwish, infer_unary_float, names_X, names_Y);
UNARY(Softplus, infer_unary_float, names_X, names_Y);
const OpDesc op_Clip = {EW_COMMON(Clip), .min_in = 1, .max_in = 3, .in_names = names_clip,
                        .out_names = names_output, .infer = infer_clip};
UNARY(Floor, infer_unary_float, names_X, names_Y);
UNARY(Ceil, infer_unary_float, names_X, names_Y);
UNARY(Sin, infer_unary_float, names_input, names_output);
UNARY(Cos, infer_unary_float, names_input, names_output);
UNARY(Not, infer_unary_bool, names_X, names_Y);
const OpDesc op_Identity = {EW_COMMON(Identity), .min_in = 1, .max_in = 1, .in_names = names_input,
                            .out_names = names_output, .infer = infer_unary_any, .view = 1};
const OpDesc op_Cast = {EW_COMMON(Cast), .min_in = 1, .max_in = 1, .in_names = names_input,
                        .out_names = names_output, .infer = infer_cast, .attrs = cast_attrs, .n_attrs = 1};
BINARY(Add, infer_arith, names_AB, names_C);
BINARY(Sub, infer_arith, names_AB, names_C);
BINARY(Mul, infer_arith, names_AB, names_C);
BINARY(Div, infer_arith, names_AB, names_C);
BINARY(Pow, infer_pow, names_XY, names_Z);
const OpDesc op_Max = {EW_COMMON(Max), .min_in = 1, .max_in = -1, .in_names = names_data,
                       .out_names = names_max, .infer = infer_arith};
const OpDesc op_Min = {EW_COMMON(Min), .min_in = 1, .max_in = -1, .in_names = names_data,
                       .out_names = names_min, .infer = infer_arith};
BINARY(Equal, infer_equal, names_AB, names_C);
BINARY(Less, infer_compare, names_AB, names_C);
BINARY(Greater, infer_compare, names_AB, names_C);
const OpDesc op_Where = {EW_COMMON(Where), .min_in = 3, .max_in = 3, .in_names = names_where,
                         .out_names = names_output, .infer = infer_where};
