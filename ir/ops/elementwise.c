/* elementwise.c — operator descriptions of the elementwise family.
 *
 * Every op here maps each output element to a function of the input elements
 * at the same (numpy-broadcast) position, so three facets describe it fully:
 *   infer        dtype rules and broadcasting (ONNX opset 17 semantics),
 *   scalar_ref   the function on doubles (reference: interpreter, folding),
 *   scalar_expr  the same function as a target-neutral expression tree
 *                (ir/sexpr.h) in a compute type `ct` (float math for f32,
 *                double for f64, integer arithmetic for integer types),
 *                which every backend prints in its own language and which
 *                fusion composes.
 * Evaluation is the shared ir_eval_elementwise (broadcasting over scalar_ref).
 *
 * scalar_ref and scalar_expr agree on the corner cases the generated code
 * can reach without undefined behaviour: integer results wrap modulo 2^bits
 * (what C conversions do on the targets we support; integer Pow, computed in
 * double, saturates instead), integer division by zero gives 0 instead of
 * trapping, Max/Min/Relu/Clip propagate NaN like numpy, and Cast from float
 * to integer truncates and saturates (NaN gives 0), exactly as ir_store_f64
 * does.
 *
 * Trees may use an argument several times (selects); backends load each
 * input element into a local first, so nothing is evaluated twice at run
 * time.
 */
#include "ew_common.h"
#include "../grad.h"

#include <math.h>

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
    Shape s = {0};
    if (ew_broadcast_inputs(n, 0, &s, d)) return -1;
    ir_set_out(n, 0, n->in[0]->dtype, &s);
    return 0;
}

static int infer_where(Node *n, Diag *d)
{
    if (ew_check_count(n, d) || ew_check_class(n, 0, EW_BOOL, d) || ew_check_same_dtype(n, 2, 1, d)) return -1;
    Shape s = {0};
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

enum { CAST_TO };

/* Cast: attribute 'to' is an ONNX TensorProto.DataType code (the shared
 * table of ir_dtype_from_onnx: every dtype graphc has). */
static int infer_cast(Node *n, Diag *d)
{
    if (ew_check_count(n, d)) return -1;
    const AttrVal *to = &n->attrs[CAST_TO];
    if (!to->set) return diag_node_error(d, n, "required attribute 'to' is missing");
    DType t;
    if (ir_dtype_from_onnx(to->i, &t))
        return diag_node_error(d, n,
                               "attribute 'to' = %lld is not a supported ONNX dtype (supported: 1 float, 2 uint8, "
                               "3 int8, 4 uint16, 5 int16, 6 int32, 7 int64, 9 bool, 10 float16, 11 double, "
                               "12 uint32, 13 uint64, 16 bfloat16)",
                               (long long)to->i);
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
static const AttrSpec cast_attrs[] = {{"to", ATTR_INT, NULL, 1}};

static const char *const names_clip[] = {"input", "min", "max"};
static const char *const names_where[] = {"condition", "X", "Y"};
static const char *const names_max[] = {"max"};
static const char *const names_min[] = {"min"};

/* ---- scalar functions ---------------------------------------------------- */

/* Unary float math functions: one call of the function in the compute type. */
EW_MATH_UNARY(Exp, SX_FN_EXP, exp)
EW_MATH_UNARY(Log, SX_FN_LOG, log)
EW_MATH_UNARY(Sqrt, SX_FN_SQRT, sqrt)
EW_MATH_UNARY(Tanh, SX_FN_TANH, tanh)
EW_MATH_UNARY(Erf, SX_FN_ERF, erf)
EW_MATH_UNARY(Floor, SX_FN_FLOOR, floor)
EW_MATH_UNARY(Ceil, SX_FN_CEIL, ceil)
EW_MATH_UNARY(Sin, SX_FN_SIN, sin)
EW_MATH_UNARY(Cos, SX_FN_COS, cos)

static const Sx *expr_Abs(const Node *n, SxBuild *b, const Sx *const *args, DType ct)
{
    (void)n;
    if (ir_dtype_is_float(ct)) return CALL(FABS, A);
    if (ew_is_signed_int(ct)) return SEL(BIN(LT, A, NUM(0)), sx_unary(b, SX_NEG, A), A);
    return A;
}
static double ref_Abs(const Node *n, const double *x) { return fin(n, fabs(x[0])); }

static const Sx *expr_Neg(const Node *n, SxBuild *b, const Sx *const *args, DType ct)
{
    (void)n, (void)ct;
    return sx_unary(b, SX_NEG, A);
}
static double ref_Neg(const Node *n, const double *x) { return fin(n, -x[0]); }

static const Sx *expr_Reciprocal(const Node *n, SxBuild *b, const Sx *const *args, DType ct)
{
    (void)n;
    return BIN(DIV, NUM(1), A);
}
static double ref_Reciprocal(const Node *n, const double *x) { (void)n; return 1.0 / x[0]; }

/* Relu propagates NaN: x < 0 ? 0 : x. Unsigned inputs pass through. */
static const Sx *expr_Relu(const Node *n, SxBuild *b, const Sx *const *args, DType ct)
{
    (void)n;
    if (ew_is_unsigned(ct) || ct == DT_BOOL) return A;
    const Sx *z = NUM(0);
    return SEL(BIN(LT, A, z), z, A);
}
static double ref_Relu(const Node *n, const double *x) { (void)n; return x[0] < 0 ? 0 : x[0]; }

static const Sx *expr_Sigmoid(const Node *n, SxBuild *b, const Sx *const *args, DType ct)
{
    (void)n;
    const Sx *one = NUM(1);
    return BIN(DIV, one, BIN(ADD, one, CALL(EXP, sx_unary(b, SX_NEG, A))));
}
static double ref_Sigmoid(const Node *n, const double *x)
{
    (void)n;
    double v = x[0];
    if (v >= 0) return 1.0 / (1.0 + exp(-v));
    double e = exp(v);
    return e / (1.0 + e);
}

static const Sx *expr_LeakyRelu(const Node *n, SxBuild *b, const Sx *const *args, DType ct)
{
    return SEL(BIN(LT, A, NUM(0)), BIN(MUL, NUM(n->attrs[ALPHA_ALPHA].f), A), A);
}
static double ref_LeakyRelu(const Node *n, const double *x)
{
    return x[0] < 0 ? n->attrs[ALPHA_ALPHA].f * x[0] : x[0];
}

static const Sx *expr_Elu(const Node *n, SxBuild *b, const Sx *const *args, DType ct)
{
    return SEL(BIN(LT, A, NUM(0)), BIN(MUL, NUM(n->attrs[ALPHA_ALPHA].f), CALL(EXPM1, A)), A);
}
static double ref_Elu(const Node *n, const double *x)
{
    return x[0] < 0 ? n->attrs[ALPHA_ALPHA].f * expm1(x[0]) : x[0];
}

static const Sx *expr_Selu(const Node *n, SxBuild *b, const Sx *const *args, DType ct)
{
    const Sx *neg = BIN(MUL, NUM(n->attrs[SELU_ALPHA].f), CALL(EXPM1, A));
    return BIN(MUL, NUM(n->attrs[SELU_GAMMA].f), SEL(BIN(LE, A, NUM(0)), neg, A));
}
static double ref_Selu(const Node *n, const double *x)
{
    double v = x[0];
    return n->attrs[SELU_GAMMA].f * (v <= 0 ? n->attrs[SELU_ALPHA].f * expm1(v) : v);
}

/* clamp(t, 0, 1) with NaN propagation; t is one shared node. */
static const Sx *clamp01(SxBuild *b, const Sx *t, DType ct)
{
    const Sx *z = NUM(0), *o = NUM(1);
    return SEL(BIN(LT, t, z), z, SEL(BIN(GT, t, o), o, t));
}
static double clamp01_ref(double t) { return t < 0 ? 0 : t > 1 ? 1 : t; }

static const Sx *expr_HardSigmoid(const Node *n, SxBuild *b, const Sx *const *args, DType ct)
{
    const Sx *t = BIN(ADD, BIN(MUL, NUM(n->attrs[HSIG_ALPHA].f), A), NUM(n->attrs[HSIG_BETA].f));
    return clamp01(b, t, ct);
}
static double ref_HardSigmoid(const Node *n, const double *x)
{
    return clamp01_ref(n->attrs[HSIG_ALPHA].f * x[0] + n->attrs[HSIG_BETA].f);
}

/* HardSwish: x * clamp(x / 6 + 0.5, 0, 1). */
static const Sx *expr_HardSwish(const Node *n, SxBuild *b, const Sx *const *args, DType ct)
{
    (void)n;
    const Sx *t = BIN(ADD, BIN(MUL, NUM(1.0 / 6.0), A), NUM(0.5));
    return BIN(MUL, A, clamp01(b, t, ct));
}
static double ref_HardSwish(const Node *n, const double *x)
{
    (void)n;
    return x[0] * clamp01_ref(x[0] / 6.0 + 0.5);
}

/* Softplus = log(exp(x) + 1), written so that neither branch overflows. */
static const Sx *expr_Softplus(const Node *n, SxBuild *b, const Sx *const *args, DType ct)
{
    (void)n;
    const Sx *pos = BIN(ADD, A, CALL(LOG1P, CALL(EXP, sx_unary(b, SX_NEG, A))));
    return SEL(BIN(GT, A, NUM(0)), pos, CALL(LOG1P, CALL(EXP, A)));
}
static double ref_Softplus(const Node *n, const double *x)
{
    (void)n;
    double v = x[0];
    return v > 0 ? v + log1p(exp(-v)) : log1p(exp(v));
}

/* Clip = min(max(x, lo), hi) as numpy computes it (NaN propagates; when
 * lo > hi the result is hi). Absent bounds are skipped. */
static const Sx *expr_Clip(const Node *n, SxBuild *b, const Sx *const *args, DType ct)
{
    (void)ct;
    int has_lo = n->n_in > 1 && n->in[1], has_hi = n->n_in > 2 && n->in[2];
    const Sx *lo = has_lo ? args[1] : NULL, *hi = has_hi ? args[2] : NULL;
    if (has_lo && has_hi) return SEL(BIN(LT, A, lo), SEL(BIN(GT, lo, hi), hi, lo), SEL(BIN(GT, A, hi), hi, A));
    if (has_lo) return SEL(BIN(LT, A, lo), lo, A);
    if (has_hi) return SEL(BIN(GT, A, hi), hi, A);
    return A;
}
static double ref_Clip(const Node *n, const double *x)
{
    double v = x[0];
    if (n->n_in > 1 && n->in[1] && v < x[1]) v = x[1];
    if (n->n_in > 2 && n->in[2] && v > x[2]) v = x[2];
    return v;
}

static const Sx *expr_Not(const Node *n, SxBuild *b, const Sx *const *args, DType ct)
{
    (void)n, (void)ct;
    return sx_unary(b, SX_NOT, A);
}
static double ref_Not(const Node *n, const double *x) { (void)n; return x[0] != 0 ? 0 : 1; }

static const Sx *expr_Identity(const Node *n, SxBuild *b, const Sx *const *args, DType ct)
{
    (void)n, (void)b, (void)ct;
    return A;
}
static double ref_Identity(const Node *n, const double *x) { (void)n; return x[0]; }

/* Cast: the value is computed in the input's compute type; the store
 * converts. Conversions a plain conversion leaves undefined are spelled
 * out: to bool is `!= 0`; float to integer saturates at the type's limits
 * (compared in the input's type) and maps NaN to 0. */
static const Sx *expr_Cast(const Node *n, SxBuild *b, const Sx *const *args, DType ct)
{
    DType to = n->out[0]->dtype, from = n->in[0]->dtype;
    if (to == DT_BOOL) return BIN(NE, A, NUM(0));
    if (!ir_dtype_is_int(to) || !ir_dtype_is_float(from)) return A;
    int bits = (int)ir_dtype_size(to) * 8, is_signed = ew_is_signed_int(to);
    double lo = is_signed ? -ldexp(1.0, bits - 1) : 0.0, hi = ldexp(1.0, is_signed ? bits - 1 : bits);
    const Sx *in_range = SEL(BIN(GE, A, NUM(hi)), sx_limit(b, to, 1), sx_convert(b, to, A));
    return SEL(BIN(NE, A, A), sx_const(b, to, 0), SEL(BIN(LE, A, NUM(lo)), sx_limit(b, to, 0), in_range));
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

static const Sx *expr_Add(const Node *n, SxBuild *b, const Sx *const *args, DType ct)
{
    (void)n, (void)ct;
    return BIN(ADD, A, B);
}
static double ref_Add(const Node *n, const double *x) { return fin(n, x[0] + x[1]); }

static const Sx *expr_Sub(const Node *n, SxBuild *b, const Sx *const *args, DType ct)
{
    (void)n, (void)ct;
    return BIN(SUB, A, B);
}
static double ref_Sub(const Node *n, const double *x) { return fin(n, x[0] - x[1]); }

/* u16 operands promote to int in C, whose product can overflow: multiply
 * as u32 instead (the store truncates). */
static const Sx *expr_Mul(const Node *n, SxBuild *b, const Sx *const *args, DType ct)
{
    (void)n;
    return BIN(MUL, ct == DT_U16 ? sx_convert(b, DT_U32, A) : A, B);
}
static double ref_Mul(const Node *n, const double *x) { return fin(n, x[0] * x[1]); }

/* Integer division truncates toward zero (C and ONNX); by zero it gives 0. */
static const Sx *expr_Div(const Node *n, SxBuild *b, const Sx *const *args, DType ct)
{
    (void)n;
    if (ir_dtype_is_float(ct)) return BIN(DIV, A, B);
    return SEL(BIN(NE, B, NUM(0)), BIN(DIV, A, B), NUM(0));
}
static double ref_Div(const Node *n, const double *x)
{
    if (ir_dtype_is_float(n->out[0]->dtype)) return x[0] / x[1];
    return x[1] != 0 ? fin(n, trunc(x[0] / x[1])) : 0;
}

/* Pow: float bases call pow in their type; integer bases compute in double,
 * truncate and saturate at the type's limits (SX_SAT_INT, as a Cast would:
 * a plain conversion of an out-of-range double is undefined). The exponent
 * may have another dtype. */
static const Sx *expr_Pow(const Node *n, SxBuild *b, const Sx *const *args, DType ct)
{
    (void)n;
    if (ir_dtype_is_float(ct)) return sx_call(b, SX_FN_POW, A, sx_convert(b, ct, B));
    const Sx *p = sx_call(b, SX_FN_POW, sx_convert(b, DT_F64, A), sx_convert(b, DT_F64, B));
    return sx_sat_int(b, ct, p);
}
static double ref_Pow(const Node *n, const double *x)
{
    DType t = n->out[0]->dtype;
    double v = pow(x[0], x[1]);
    return ir_dtype_is_int(t) ? ir_round_to(t, v) : v;
}

/* Max/Min fold left over the inputs with SX_MAX / SX_MIN (float versions
 * propagate NaN; ties keep the earlier input). */
static const Sx *fold_minmax(const Node *n, SxBuild *b, const Sx *const *args, SxKind k)
{
    const Sx *acc = A;
    for (int j = 1; j < n->n_in; j++) acc = sx_binary(b, k, acc, args[j]);
    return acc;
}
static const Sx *expr_Max(const Node *n, SxBuild *b, const Sx *const *args, DType ct)
{
    (void)ct;
    return fold_minmax(n, b, args, SX_MAX);
}
static const Sx *expr_Min(const Node *n, SxBuild *b, const Sx *const *args, DType ct)
{
    (void)ct;
    return fold_minmax(n, b, args, SX_MIN);
}
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

static const Sx *expr_Equal(const Node *n, SxBuild *b, const Sx *const *args, DType ct)
{
    (void)n, (void)ct;
    return BIN(EQ, A, B);
}
static double ref_Equal(const Node *n, const double *x) { (void)n; return x[0] == x[1]; }

static const Sx *expr_Less(const Node *n, SxBuild *b, const Sx *const *args, DType ct)
{
    (void)n, (void)ct;
    return BIN(LT, A, B);
}
static double ref_Less(const Node *n, const double *x) { (void)n; return x[0] < x[1]; }

static const Sx *expr_Greater(const Node *n, SxBuild *b, const Sx *const *args, DType ct)
{
    (void)n, (void)ct;
    return BIN(GT, A, B);
}
static double ref_Greater(const Node *n, const double *x) { (void)n; return x[0] > x[1]; }

static const Sx *expr_Where(const Node *n, SxBuild *b, const Sx *const *args, DType ct)
{
    (void)n, (void)ct;
    return SEL(args[0], args[1], args[2]);
}
static double ref_Where(const Node *n, const double *x) { (void)n; return x[0] != 0 ? x[1] : x[2]; }

/* ---- gradients (ir/grad.h) ------------------------------------------------
 *
 * dx = dy * f'(x), composed of elementwise ops (fusion later turns each
 * chain into one loop). Broadcast operands get their gradient summed back to
 * their shape (gb_reduce_to). Where f' is easier from the result (Exp,
 * Sqrt, Reciprocal, Sigmoid, Tanh) the gradient reads the output instead of
 * the input, and so does Relu, so the input can die after the forward use
 * (and the op run in place). Kinks take the
 * PyTorch convention: Relu'(0) = 0, Clip passes dy on [min, max]; Floor and
 * Ceil have derivative zero wherever it exists. */

#define GX(i) (gc->n->in[i])
#define GYV (gc->n->out[0])

static Value *ew_c(GradCtx *gc, double v) { return gb_scalar(gc, GYV->dtype, v); }
static Value *ew_mul(GradCtx *gc, Value *a, Value *b) { return gb2(gc, OP_Mul, NULL, a, b); }
/* Sets the gradient of the only input to dy * f (f NULL: dy itself). */
static int ew_unary(GradCtx *gc, Value *f)
{
    Value *dy = gb_dy(gc, 0);
    gb_set(gc, 0, f ? ew_mul(gc, dy, f) : dy);
    return gb_done(gc);
}
/* Where(cond, a, b). */
static Value *ew_where(GradCtx *gc, Value *c, Value *a, Value *b) { return gb3(gc, OP_Where, NULL, c, a, b); }
/* Sets input i's gradient to g summed back to its shape. */
static void ew_set(GradCtx *gc, int i, Value *g)
{
    if (gc->need[i]) gb_set(gc, i, gb_reduce_to(gc, g, &GX(i)->shape));
}

static int grad_Abs(GradCtx *gc) { return ew_unary(gc, gb1(gc, OP_Sign, NULL, GX(0))); }
static int grad_Neg(GradCtx *gc) { gb_set(gc, 0, gb1(gc, OP_Neg, NULL, gb_dy(gc, 0))); return gb_done(gc); }
static int grad_Exp(GradCtx *gc) { return ew_unary(gc, GYV); }
static int grad_Log(GradCtx *gc) { gb_set(gc, 0, gb2(gc, OP_Div, NULL, gb_dy(gc, 0), GX(0))); return gb_done(gc); }
static int grad_Sqrt(GradCtx *gc) { return ew_unary(gc, gb2(gc, OP_Div, NULL, ew_c(gc, 0.5), GYV)); }
static int grad_Reciprocal(GradCtx *gc) { return ew_unary(gc, gb1(gc, OP_Neg, NULL, ew_mul(gc, GYV, GYV))); }
/* From the output (y > 0 exactly where x > 0), so that x may die after the
 * forward pass and Relu run in place. */
static int grad_Relu(GradCtx *gc)
{
    Value *dy = gb_dy(gc, 0);
    gb_set(gc, 0, ew_where(gc, gb2(gc, OP_Greater, NULL, GYV, ew_c(gc, 0)), dy, ew_c(gc, 0)));
    return gb_done(gc);
}
static int grad_Sigmoid(GradCtx *gc) { return ew_unary(gc, ew_mul(gc, GYV, gb2(gc, OP_Sub, NULL, ew_c(gc, 1), GYV))); }
static int grad_Tanh(GradCtx *gc) { return ew_unary(gc, gb2(gc, OP_Sub, NULL, ew_c(gc, 1), ew_mul(gc, GYV, GYV))); }
static int grad_Erf(GradCtx *gc)
{
    Value *e = gb1(gc, OP_Exp, NULL, gb1(gc, OP_Neg, NULL, ew_mul(gc, GX(0), GX(0))));
    return ew_unary(gc, ew_mul(gc, e, ew_c(gc, 1.1283791670955126))); /* 2/sqrt(pi) */
}
/* dy where x > 0, dy * neg elsewhere. */
static int ew_piecewise(GradCtx *gc, Value *pos, Value *neg)
{
    Value *dy = gb_dy(gc, 0);
    Value *c = gb2(gc, OP_Greater, NULL, GX(0), ew_c(gc, 0));
    gb_set(gc, 0, ew_mul(gc, dy, ew_where(gc, c, pos, neg)));
    return gb_done(gc);
}
static int grad_LeakyRelu(GradCtx *gc) { return ew_piecewise(gc, ew_c(gc, 1), ew_c(gc, gc->n->attrs[ALPHA_ALPHA].f)); }
static int grad_Elu(GradCtx *gc)
{
    double a = gc->n->attrs[ALPHA_ALPHA].f;
    return ew_piecewise(gc, ew_c(gc, 1), ew_mul(gc, ew_c(gc, a), gb1(gc, OP_Exp, NULL, GX(0))));
}
static int grad_Selu(GradCtx *gc)
{
    double a = gc->n->attrs[SELU_ALPHA].f, g = gc->n->attrs[SELU_GAMMA].f;
    return ew_piecewise(gc, ew_c(gc, g), ew_mul(gc, ew_c(gc, a * g), gb1(gc, OP_Exp, NULL, GX(0))));
}
/* alpha where lo < alpha*x + beta < hi, else 0, times dy. */
static Value *ew_band(GradCtx *gc, Value *t, double lo, double hi, Value *in, Value *out)
{
    Value *inside = gb2(gc, OP_And, NULL, gb2(gc, OP_Greater, NULL, t, ew_c(gc, lo)), gb2(gc, OP_Less, NULL, t, ew_c(gc, hi)));
    return ew_where(gc, inside, in, out);
}
static int grad_HardSigmoid(GradCtx *gc)
{
    double a = gc->n->attrs[HSIG_ALPHA].f, b = gc->n->attrs[HSIG_BETA].f;
    Value *t = gb2(gc, OP_Add, NULL, ew_mul(gc, GX(0), ew_c(gc, a)), ew_c(gc, b));
    return ew_unary(gc, ew_band(gc, t, 0, 1, ew_c(gc, a), ew_c(gc, 0)));
}
static int grad_HardSwish(GradCtx *gc) /* x/6*relu6(x+3): (2x+3)/6 on (-3,3), 1 above, 0 below */
{
    Value *x = GX(0);
    Value *mid = gb2(gc, OP_Add, NULL, ew_mul(gc, x, ew_c(gc, 1.0 / 3)), ew_c(gc, 0.5));
    Value *hi = ew_where(gc, gb2(gc, OP_Less, NULL, x, ew_c(gc, 3)), mid, ew_c(gc, 1));
    return ew_unary(gc, ew_where(gc, gb2(gc, OP_Greater, NULL, x, ew_c(gc, -3)), hi, ew_c(gc, 0)));
}
static int grad_Softplus(GradCtx *gc) { return ew_unary(gc, gb1(gc, OP_Sigmoid, NULL, GX(0))); }
/* y = min(max(x, lo), hi): x passes where lo <= x <= hi (ties pass, as in
 * PyTorch), lo receives dy where x < lo <= hi, hi where max(x, lo) > hi. */
static int grad_Clip(GradCtx *gc)
{
    Value *x = GX(0), *dy = gb_dy(gc, 0), *keep = NULL, *z = ew_c(gc, 0);
    int lo = ir_has_input(gc->n, 1), hi = ir_has_input(gc->n, 2);
    if (lo) keep = gb2(gc, OP_GreaterOrEqual, NULL, x, GX(1));
    if (hi) {
        Value *le = gb2(gc, OP_LessOrEqual, NULL, x, GX(2));
        keep = keep ? gb2(gc, OP_And, NULL, keep, le) : le;
    }
    gb_set(gc, 0, keep ? ew_where(gc, keep, dy, z) : dy);
    if (lo && gc->need[1]) {
        Value *below = gb2(gc, OP_Less, NULL, x, GX(1));
        if (hi) below = gb2(gc, OP_And, NULL, below, gb2(gc, OP_LessOrEqual, NULL, GX(1), GX(2)));
        ew_set(gc, 1, ew_where(gc, below, dy, z));
    }
    if (hi && gc->need[2]) {
        Value *m = lo ? gb2(gc, OP_Max, NULL, x, GX(1)) : x;
        ew_set(gc, 2, ew_where(gc, gb2(gc, OP_Greater, NULL, m, GX(2)), dy, z));
    }
    return gb_done(gc);
}
static int grad_zero(GradCtx *gc) { gb_set(gc, 0, gb_zeros_like(gc, GX(0))); return gb_done(gc); }
#define grad_Floor grad_zero
#define grad_Ceil grad_zero
static int grad_Sin(GradCtx *gc) { return ew_unary(gc, gb1(gc, OP_Cos, NULL, GX(0))); }
static int grad_Cos(GradCtx *gc) { return ew_unary(gc, gb1(gc, OP_Neg, NULL, gb1(gc, OP_Sin, NULL, GX(0)))); }
static int grad_Identity(GradCtx *gc) { return ew_unary(gc, NULL); }
static int grad_Cast(GradCtx *gc)
{
    Value *dy = gb_dy(gc, 0);
    gb_set(gc, 0, dy->dtype == GX(0)->dtype ? dy : gb1(gc, OP_Cast, gb_fmt(gc, "to=%d", ir_dtype_to_onnx(GX(0)->dtype)), dy));
    return gb_done(gc);
}
static int grad_Add(GradCtx *gc)
{
    Value *dy = gb_dy(gc, 0);
    ew_set(gc, 0, dy);
    ew_set(gc, 1, dy);
    return gb_done(gc);
}
static int grad_Sub(GradCtx *gc)
{
    Value *dy = gb_dy(gc, 0);
    ew_set(gc, 0, dy);
    if (gc->need[1]) ew_set(gc, 1, gb1(gc, OP_Neg, NULL, dy));
    return gb_done(gc);
}
static int grad_Mul(GradCtx *gc)
{
    Value *dy = gb_dy(gc, 0);
    if (gc->need[0]) ew_set(gc, 0, ew_mul(gc, dy, GX(1)));
    if (gc->need[1]) ew_set(gc, 1, ew_mul(gc, dy, GX(0)));
    return gb_done(gc);
}
static int grad_Div(GradCtx *gc) /* a/b: dy/b and -dy*y/b */
{
    Value *q = gb2(gc, OP_Div, NULL, gb_dy(gc, 0), GX(1));
    ew_set(gc, 0, q);
    if (gc->need[1]) ew_set(gc, 1, gb1(gc, OP_Neg, NULL, ew_mul(gc, q, GYV)));
    return gb_done(gc);
}
static int grad_Pow(GradCtx *gc) /* x^e: dy*e*x^(e-1) and dy*y*ln(x) */
{
    Value *x = GX(0), *e = GX(1), *dy = gb_dy(gc, 0);
    if (gc->need[0]) {
        Value *ex = e->dtype == x->dtype ? e : gb1(gc, OP_Cast, gb_fmt(gc, "to=%d", ir_dtype_to_onnx(x->dtype)), e);
        Value *p = gb2(gc, OP_Pow, NULL, x, gb2(gc, OP_Sub, NULL, ex, gb_scalar(gc, x->dtype, 1)));
        ew_set(gc, 0, ew_mul(gc, dy, ew_mul(gc, ex, p)));
    }
    if (gc->need[1]) ew_set(gc, 1, ew_mul(gc, dy, ew_mul(gc, GYV, gb1(gc, OP_Log, NULL, x))));
    return gb_done(gc);
}
/* Max/Min: each input gets dy where it is the result. */
static int grad_Max(GradCtx *gc)
{
    Value *dy = gb_dy(gc, 0);
    for (int i = 0; i < gc->n->n_in; i++)
        if (gc->need[i]) ew_set(gc, i, ew_where(gc, gb2(gc, OP_Equal, NULL, GX(i), GYV), dy, ew_c(gc, 0)));
    return gb_done(gc);
}
#define grad_Min grad_Max
static int grad_Where(GradCtx *gc)
{
    Value *dy = gb_dy(gc, 0), *z = ew_c(gc, 0);
    if (gc->need[1]) ew_set(gc, 1, ew_where(gc, GX(0), dy, z));
    if (gc->need[2]) ew_set(gc, 2, ew_where(gc, GX(0), z, dy));
    return gb_done(gc);
}
#define grad_Not NULL
#define grad_Equal NULL
#define grad_Less NULL
#define grad_Greater NULL

/* What each gradient reads. */
#define bw_Abs ir_bw_inputs
#define bw_Neg ir_bw_none
#define bw_Exp ir_bw_outputs
#define bw_Log ir_bw_inputs
#define bw_Sqrt ir_bw_outputs
#define bw_Reciprocal ir_bw_outputs
#define bw_Relu ir_bw_outputs
#define bw_Sigmoid ir_bw_outputs
#define bw_Tanh ir_bw_outputs
#define bw_Erf ir_bw_inputs
#define bw_LeakyRelu ir_bw_inputs
#define bw_Elu ir_bw_inputs
#define bw_Selu ir_bw_inputs
#define bw_HardSigmoid ir_bw_inputs
#define bw_HardSwish ir_bw_inputs
#define bw_Softplus ir_bw_inputs
#define bw_Clip ir_bw_inputs
#define bw_Floor ir_bw_none
#define bw_Ceil ir_bw_none
#define bw_Sin ir_bw_inputs
#define bw_Cos ir_bw_inputs
#define bw_Identity ir_bw_none
#define bw_Cast ir_bw_none
#define bw_Add ir_bw_none
#define bw_Sub ir_bw_none
#define bw_Mul ir_bw_inputs
#define bw_Div ir_bw_all
#define bw_Pow ir_bw_all
#define bw_Max ir_bw_all
#define bw_Min ir_bw_all
#define bw_Where ir_bw_input0
#define bw_Not NULL
#define bw_Equal NULL
#define bw_Less NULL
#define bw_Greater NULL

/* ---- the descriptions ---------------------------------------------------- */

#define EW_COMMON(Op)                                                                              \
    .name = #Op, .min_out = 1, .max_out = 1, .scalar_expr = expr_##Op, .scalar_ref = ref_##Op,  \
    .eval = ir_eval_elementwise, .inplace = ew_inplace_any, .n_inplace = 4, .gradient = grad_##Op,       \
    .backward_reads = bw_##Op
#define UNARY(Op, inf, in_n, out_n)                                                                \
    const OpDesc op_##Op = {EW_COMMON(Op), .min_in = 1, .max_in = 1, .in_names = in_n,            \
                            .out_names = out_n, .infer = inf}
#define UNARY_ATTRS(Op, inf, spec)                                                                 \
    const OpDesc op_##Op = {EW_COMMON(Op), .min_in = 1, .max_in = 1, .in_names = ew_names_X,         \
                            .out_names = ew_names_Y, .infer = inf, OP_ATTRS(spec)}
#define BINARY(Op, inf, in_n, out_n)                                                               \
    const OpDesc op_##Op = {EW_COMMON(Op), .min_in = 2, .max_in = 2, .in_names = in_n,            \
                            .out_names = out_n, .infer = inf}

UNARY(Abs, infer_unary_numeric, ew_names_X, ew_names_Y);
UNARY(Neg, infer_unary_signed, ew_names_X, ew_names_Y);
UNARY(Exp, infer_unary_float, ew_names_input, ew_names_output);
UNARY(Log, infer_unary_float, ew_names_input, ew_names_output);
UNARY(Sqrt, infer_unary_float, ew_names_X, ew_names_Y);
UNARY(Reciprocal, infer_unary_float, ew_names_X, ew_names_Y);
UNARY(Relu, infer_unary_numeric, ew_names_X, ew_names_Y);
UNARY(Sigmoid, infer_unary_float, ew_names_X, ew_names_Y);
UNARY(Tanh, infer_unary_float, ew_names_input, ew_names_output);
UNARY(Erf, infer_unary_float, ew_names_input, ew_names_output);
UNARY_ATTRS(LeakyRelu, infer_unary_float, leaky_attrs);
UNARY_ATTRS(Elu, infer_unary_float, elu_attrs);
UNARY_ATTRS(Selu, infer_unary_float, selu_attrs);
UNARY_ATTRS(HardSigmoid, infer_unary_float, hardsigmoid_attrs);
UNARY(HardSwish, infer_unary_float, ew_names_X, ew_names_Y);
UNARY(Softplus, infer_unary_float, ew_names_X, ew_names_Y);
const OpDesc op_Clip = {EW_COMMON(Clip), .min_in = 1, .max_in = 3, .in_names = names_clip,
                        .out_names = ew_names_output, .infer = infer_clip};
UNARY(Floor, infer_unary_float, ew_names_X, ew_names_Y);
UNARY(Ceil, infer_unary_float, ew_names_X, ew_names_Y);
UNARY(Sin, infer_unary_float, ew_names_input, ew_names_output);
UNARY(Cos, infer_unary_float, ew_names_input, ew_names_output);
UNARY(Not, infer_unary_bool, ew_names_X, ew_names_Y);
const OpDesc op_Identity = {EW_COMMON(Identity), .min_in = 1, .max_in = 1, .in_names = ew_names_input,
                            .out_names = ew_names_output, .infer = infer_unary_any, .view = 1,
                            .infer_value = ir_value_copy};
const OpDesc op_Cast = {EW_COMMON(Cast), .min_in = 1, .max_in = 1, .in_names = ew_names_input,
                        .out_names = ew_names_output, .infer = infer_cast, OP_ATTRS(cast_attrs),
                        .infer_value = ir_value_copy};
/* Add, Mul and Div also carry shape values (ir/ops/shape_values.c). */
#define BINARY_V(Op, inf, in_n, out_n)                                                             \
    const OpDesc op_##Op = {EW_COMMON(Op), .min_in = 2, .max_in = 2, .in_names = in_n,            \
                            .out_names = out_n, .infer = inf, .infer_value = ir_value_arith}
BINARY_V(Add, infer_arith, ew_names_AB, ew_names_C);
BINARY(Sub, infer_arith, ew_names_AB, ew_names_C);
BINARY_V(Mul, infer_arith, ew_names_AB, ew_names_C);
BINARY_V(Div, infer_arith, ew_names_AB, ew_names_C);
BINARY(Pow, infer_pow, ew_names_XY, ew_names_Z);
const OpDesc op_Max = {EW_COMMON(Max), .min_in = 1, .max_in = -1, .in_names = ew_names_data,
                       .out_names = names_max, .infer = infer_arith};
const OpDesc op_Min = {EW_COMMON(Min), .min_in = 1, .max_in = -1, .in_names = ew_names_data,
                       .out_names = names_min, .infer = infer_arith};
const OpDesc op_Equal = {EW_COMMON(Equal), .min_in = 2, .max_in = 2, .in_names = ew_names_AB,
                         .out_names = ew_names_C, .infer = infer_equal, .infer_value = ir_value_equal};
BINARY(Less, infer_compare, ew_names_AB, ew_names_C);
BINARY(Greater, infer_compare, ew_names_AB, ew_names_C);
const OpDesc op_Where = {EW_COMMON(Where), .min_in = 3, .max_in = 3, .in_names = names_where,
                         .out_names = ew_names_output, .infer = infer_where, .infer_value = ir_value_where};
