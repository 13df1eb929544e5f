/* math.c — operator descriptions of the math family: more elementwise ops
 * (logic, Mod, Sign, Round, NaN/Inf tests, inverse and hyperbolic
 * trigonometry, small activations, variadic Sum/Mean, BitShift, CastLike).
 *
 * Like the elementwise family, each op is described by infer (ONNX opset 17
 * dtype rules, numpy broadcasting), scalar_ref (the function on doubles,
 * used by the interpreter and constant folding through ir_eval_elementwise)
 * and scalar_expr (the same function as a target-neutral expression tree,
 * ir/sexpr.h, in a compute type `ct`: float math and float constants for
 * f32 — also for f16/bf16, which compute in float —, double for f64,
 * integer arithmetic for integer types). Backends print the tree; the C
 * backend's generic elementwise emitter writes the loops around it.
 *
 * Corner cases are defined the same way on both sides, never left to
 * undefined behaviour: integer Mod by 0 gives 0 (numpy), x % -1 is 0 (C's
 * INT_MIN % -1 traps), BitShift by the bit width or more gives 0 (numpy),
 * Round is half-to-even (nearbyint in the default rounding mode), NaN propagates
 * through Sign/PRelu/ThresholdedRelu/Celu and gives 0 in Shrink (ONNX's
 * reference formulas). Trees may use an argument several times: backends
 * load each input element into a local first.
 *
 * CastLike is the one op without scalar facets: its second input only
 * supplies a dtype and may have any shape, so it must not take part in
 * broadcasting or fusion. It evaluates and emits as Cast on its first input
 * (Cast's facets read only in[0] and out[0]).
 *
 * Gradients (the section before the descriptions) compose elementwise ops,
 * as the elementwise family does; the comparisons, logic, NaN/Inf tests and
 * BitShift have none (bool or integer results).
 */
#include "ew_common.h"
#include "../grad.h"

#include <math.h>
#include <string.h>

/* Post-processes an arithmetic result for the output dtype (integer wrap). */
static double fin(const Node *n, double v)
{
    DType t = n->out[0]->dtype;
    return ir_dtype_is_int(t) ? ew_wrap_int(t, v) : v;
}

/* ---- inference ----------------------------------------------------------- */

static int infer_unary(Node *n, EwClass c, DType out, Diag *d)
{
    if (ew_check_count(n, d) || ew_check_class(n, 0, c, d)) return -1;
    ir_set_out(n, 0, out == DT_UNDEF ? n->in[0]->dtype : out, &n->in[0]->shape);
    return 0;
}

static int infer_unary_float(Node *n, Diag *d) { return infer_unary(n, EW_FLOAT, DT_UNDEF, d); }
static int infer_unary_numeric(Node *n, Diag *d) { return infer_unary(n, EW_NUMERIC, DT_UNDEF, d); }
static int infer_float_test(Node *n, Diag *d) { return infer_unary(n, EW_FLOAT, DT_BOOL, d); }

static int infer_logic(Node *n, Diag *d) { return ew_infer_nary(n, EW_BOOL, DT_UNDEF, d); }
static int infer_compare(Node *n, Diag *d) { return ew_infer_nary(n, EW_NUMERIC, DT_BOOL, d); }
static int infer_float_nary(Node *n, Diag *d) { return ew_infer_nary(n, EW_FLOAT, DT_UNDEF, d); }

enum { MOD_FMOD };
static const AttrSpec mod_attrs[] = {{"fmod", ATTR_INT, "0", 0}};

static int infer_mod(Node *n, Diag *d)
{
    if (ew_infer_nary(n, EW_NUMERIC, DT_UNDEF, d)) return -1;
    int64_t f = n->attrs[MOD_FMOD].i;
    if (f != 0 && f != 1) return diag_node_error(d, n, "attribute 'fmod' must be 0 or 1, got %lld", (long long)f);
    DType t = n->in[0]->dtype;
    if (f == 0 && ir_dtype_is_float(t))
        return diag_node_error(d, n, "attribute 'fmod' must be 1 for float dtype %s (fmod=0 is integer modulo)",
                               ir_dtype_name(t));
    return 0;
}

enum { ISINF_DETECT_NEGATIVE, ISINF_DETECT_POSITIVE };
static const AttrSpec isinf_attrs[] = {{"detect_negative", ATTR_INT, "1", 0}, {"detect_positive", ATTR_INT, "1", 0}};

enum { ALPHA_ALPHA };
static const AttrSpec thresholded_attrs[] = {{"alpha", ATTR_FLOAT, "1.0", 0}};
static const AttrSpec celu_attrs[] = {{"alpha", ATTR_FLOAT, "1.0", 0}};

static int infer_celu(Node *n, Diag *d)
{
    if (infer_unary_float(n, d)) return -1;
    if (n->attrs[ALPHA_ALPHA].f == 0) return diag_node_error(d, n, "attribute 'alpha' must not be 0");
    return 0;
}

enum { SHRINK_BIAS, SHRINK_LAMBD };
static const AttrSpec shrink_attrs[] = {{"bias", ATTR_FLOAT, "0.0", 0}, {"lambd", ATTR_FLOAT, "0.5", 0}};

/* PRelu: slope broadcasts to X's shape (unidirectionally). */
static int infer_prelu(Node *n, Diag *d)
{
    if (ew_check_count(n, d) || ew_check_class(n, 0, EW_NUMERIC, d) || ew_check_same_dtype(n, 1, 0, d)) return -1;
    const Shape *x = &n->in[0]->shape, *s = &n->in[1]->shape;
    Shape r = {0};
    if (ir_broadcast(x, s, &r) != 0 || !ir_shape_eq(&r, x)) {
        char xb[128], sb[128];
        return diag_node_error(d, n, "input 'slope' shape %s does not broadcast to input 'X' shape %s",
                               ir_shape_str(s, sb, sizeof sb), ir_shape_str(x, xb, sizeof xb));
    }
    ir_set_out(n, 0, n->in[0]->dtype, x);
    return 0;
}

enum { BITSHIFT_DIRECTION };
static const AttrSpec bitshift_attrs[] = {{"direction", ATTR_STRING, NULL, 1}};

/* 1 for LEFT, 0 for RIGHT (after inference checked the attribute). */
static int shift_left(const Node *n) { return strcmp(n->attrs[BITSHIFT_DIRECTION].s, "LEFT") == 0; }

static int infer_bitshift(Node *n, Diag *d)
{
    if (ew_check_count(n, d)) return -1;
    for (int j = 0; j < 2; j++) {
        DType t = n->in[j]->dtype;
        char nb[32];
        if (!ew_is_unsigned(t))
            return diag_node_error(d, n,
                                   "input '%s' has dtype %s; expected an unsigned integer dtype (u8, u16, u32, u64)",
                                   ew_in_name(n, j, nb, sizeof nb), ir_dtype_name(t));
    }
    if (ew_check_same_dtype(n, 1, 0, d)) return -1;
    const AttrVal *a = &n->attrs[BITSHIFT_DIRECTION];
    if (!a->set) return diag_node_error(d, n, "required attribute 'direction' is missing");
    if (strcmp(a->s, "LEFT") != 0 && strcmp(a->s, "RIGHT") != 0)
        return diag_node_error(d, n, "attribute 'direction' must be \"LEFT\" or \"RIGHT\", got \"%s\"", a->s);
    Shape s = {0};
    if (ew_broadcast_inputs(n, 0, &s, d)) return -1;
    ir_set_out(n, 0, n->in[0]->dtype, &s);
    return 0;
}

/* CastLike: the output has input's shape and target_type's dtype. */
static int infer_castlike(Node *n, Diag *d)
{
    if (ew_check_count(n, d)) return -1;
    ir_set_out(n, 0, n->in[1]->dtype, &n->in[0]->shape);
    return 0;
}

/* ---- scalar functions ---------------------------------------------------- */

#define EXPR(Op) static const Sx *expr_##Op(const Node *n, SxBuild *b, const Sx *const *args, DType ct)
#define REF(Op) static double ref_##Op(const Node *n, const double *x)

/* Unary float functions: one call of the function in the compute type. */
EW_MATH_UNARY(Acos, SX_FN_ACOS, acos)
EW_MATH_UNARY(Acosh, SX_FN_ACOSH, acosh)
EW_MATH_UNARY(Asin, SX_FN_ASIN, asin)
EW_MATH_UNARY(Asinh, SX_FN_ASINH, asinh)
EW_MATH_UNARY(Atan, SX_FN_ATAN, atan)
EW_MATH_UNARY(Atanh, SX_FN_ATANH, atanh)
EW_MATH_UNARY(Cosh, SX_FN_COSH, cosh)
EW_MATH_UNARY(Sinh, SX_FN_SINH, sinh)
EW_MATH_UNARY(Tan, SX_FN_TAN, tan)
EW_MATH_UNARY(Round, SX_FN_NEARBYINT, nearbyint) /* half to even in the default rounding mode */

EXPR(And)
{
    (void)n, (void)ct;
    return BIN(AND, A, B);
}
REF(And) { (void)n; return x[0] != 0 && x[1] != 0; }

EXPR(Or)
{
    (void)n, (void)ct;
    return BIN(OR, A, B);
}
REF(Or) { (void)n; return x[0] != 0 || x[1] != 0; }

EXPR(Xor)
{
    (void)n, (void)ct;
    return BIN(NE, sx_unary(b, SX_NOT, A), sx_unary(b, SX_NOT, B));
}
REF(Xor) { (void)n; return (x[0] != 0) != (x[1] != 0); }

/* Mod: fmod=1 is the truncated remainder (fmod for floats), fmod=0 the
 * floored one whose sign follows the divisor (Python, numpy.mod). */
EXPR(Mod)
{
    int f = n->attrs[MOD_FMOD].i != 0;
    if (ir_dtype_is_float(ct)) return sx_call(b, SX_FN_FMOD, A, B);
    if (!ew_is_signed_int(ct)) return SEL(BIN(EQ, B, NUM(0)), NUM(0), BIN(MOD, A, B));
    const Sx *no_rem = BIN(OR, BIN(EQ, B, NUM(0)), BIN(EQ, B, NUM(-1))); /* b == -1 would trap at MIN */
    if (f) return SEL(no_rem, NUM(0), BIN(MOD, A, B));
    const Sx *wrong_sign = BIN(AND, BIN(NE, BIN(MOD, A, B), NUM(0)),
                               BIN(NE, BIN(LT, BIN(MOD, A, B), NUM(0)), BIN(LT, B, NUM(0))));
    return SEL(no_rem, NUM(0), SEL(wrong_sign, BIN(ADD, BIN(MOD, A, B), B), BIN(MOD, A, B)));
}
REF(Mod)
{
    double a = x[0], b = x[1];
    if (ir_dtype_is_float(n->out[0]->dtype)) return fmod(a, b);
    if (b == 0) return 0;
    double r = fmod(a, b);
    if (n->attrs[MOD_FMOD].i == 0 && r != 0 && (r < 0) != (b < 0)) r += b;
    return fin(n, r);
}

EXPR(Sign)
{
    (void)n;
    if (ir_dtype_is_float(ct)) return SEL(BIN(GT, A, NUM(0)), NUM(1), SEL(BIN(LT, A, NUM(0)), NUM(-1), A));
    if (ew_is_signed_int(ct)) return BIN(SUB, BIN(GT, A, NUM(0)), BIN(LT, A, NUM(0)));
    return BIN(NE, A, NUM(0));
}
REF(Sign)
{
    (void)n;
    return x[0] > 0 ? 1 : x[0] < 0 ? -1 : x[0];
}

/* NaN is the one value unequal to itself. */
EXPR(IsNaN)
{
    (void)n, (void)ct;
    return BIN(NE, A, A);
}
REF(IsNaN) { (void)n; return isnan(x[0]) ? 1 : 0; }

EXPR(IsInf)
{
    int neg = n->attrs[ISINF_DETECT_NEGATIVE].i != 0, pos = n->attrs[ISINF_DETECT_POSITIVE].i != 0;
    const Sx *is_pos = BIN(EQ, A, NUM(INFINITY)), *is_neg = BIN(EQ, A, NUM(-INFINITY));
    if (neg && pos) return BIN(OR, is_pos, is_neg);
    if (pos) return is_pos;
    if (neg) return is_neg;
    return sx_seq(b, A, sx_const(b, DT_BOOL, 0));
}
REF(IsInf)
{
    if (!isinf(x[0])) return 0;
    return x[0] > 0 ? n->attrs[ISINF_DETECT_POSITIVE].i != 0 : n->attrs[ISINF_DETECT_NEGATIVE].i != 0;
}

/* Softsign = x / (1 + |x|). */
EXPR(Softsign)
{
    (void)n;
    return BIN(DIV, A, BIN(ADD, NUM(1), CALL(FABS, A)));
}
REF(Softsign) { (void)n; return x[0] / (1 + fabs(x[0])); }

/* ThresholdedRelu = x > alpha ? x : 0 (NaN stays NaN, as in ONNX's formula). */
EXPR(ThresholdedRelu)
{
    return SEL(BIN(LE, A, NUM(n->attrs[ALPHA_ALPHA].f)), NUM(0), A);
}
REF(ThresholdedRelu) { return x[0] <= n->attrs[ALPHA_ALPHA].f ? 0 : x[0]; }

/* Celu = max(0, x) + min(0, alpha * (exp(x / alpha) - 1)), which is x for
 * x > 0 and alpha * expm1(x / alpha) otherwise, for either sign of alpha. */
EXPR(Celu)
{
    const Sx *al = NUM(n->attrs[ALPHA_ALPHA].f);
    return SEL(BIN(GT, A, NUM(0)), A, BIN(MUL, al, CALL(EXPM1, BIN(DIV, A, al))));
}
REF(Celu)
{
    double al = n->attrs[ALPHA_ALPHA].f;
    return x[0] > 0 ? x[0] : al * expm1(x[0] / al);
}

/* x converted to double: a fresh node per use, so each prints in place. */
static const Sx *f64_of(SxBuild *b, const Sx *x) { return sx_convert(b, DT_F64, x); }

/* Shrink = x < -lambd ? x + bias : x > lambd ? x - bias : 0. Integer inputs
 * compare and add in double and convert the result back saturating
 * (SX_SAT_INT: x - bias may leave the type's range, below 0 for unsigned). */
EXPR(Shrink)
{
    double bias = n->attrs[SHRINK_BIAS].f, lambd = n->attrs[SHRINK_LAMBD].f;
    if (ir_dtype_is_float(ct))
        return SEL(BIN(LT, A, NUM(-lambd)), BIN(ADD, A, NUM(bias)),
                   SEL(BIN(GT, A, NUM(lambd)), BIN(SUB, A, NUM(bias)), NUM(0)));
    const Sx *lo = sx_const(b, DT_F64, -lambd), *hi = sx_const(b, DT_F64, lambd), *bs = sx_const(b, DT_F64, bias);
    const Sx *e = SEL(BIN(LT, f64_of(b, A), lo), BIN(ADD, f64_of(b, A), bs),
                      SEL(BIN(GT, f64_of(b, A), hi), BIN(SUB, f64_of(b, A), bs), sx_const(b, DT_F64, 0)));
    return sx_sat_int(b, ct, e);
}
REF(Shrink)
{
    double bias = n->attrs[SHRINK_BIAS].f, lambd = n->attrs[SHRINK_LAMBD].f;
    double v = x[0] < -lambd ? x[0] + bias : x[0] > lambd ? x[0] - bias : 0;
    DType t = n->out[0]->dtype;
    return ir_dtype_is_int(t) ? ir_round_to(t, v) : v;
}

/* PRelu = x < 0 ? slope * x : x; unsigned inputs pass through (the slope
 * stays in the tree, unused). */
EXPR(PRelu)
{
    (void)n;
    if (ew_is_unsigned(ct)) return sx_seq(b, B, A);
    return SEL(BIN(LT, A, NUM(0)), BIN(MUL, B, A), A);
}
REF(PRelu) { return x[0] < 0 ? fin(n, x[1] * x[0]) : x[0]; }

EXPR(GreaterOrEqual)
{
    (void)n, (void)ct;
    return BIN(GE, A, B);
}
REF(GreaterOrEqual) { (void)n; return x[0] >= x[1]; }

EXPR(LessOrEqual)
{
    (void)n, (void)ct;
    return BIN(LE, A, B);
}
REF(LessOrEqual) { (void)n; return x[0] <= x[1]; }

/* x0 + x1 + ... (left to right). */
static const Sx *sum_args(const Node *n, SxBuild *b, const Sx *const *args)
{
    const Sx *s = A;
    for (int j = 1; j < n->n_in; j++) s = BIN(ADD, s, args[j]);
    return s;
}

EXPR(Sum)
{
    (void)ct;
    return sum_args(n, b, args);
}
REF(Sum)
{
    double s = 0;
    for (int j = 0; j < n->n_in; j++) s += x[j];
    return s;
}

EXPR(Mean) { return BIN(DIV, sum_args(n, b, args), NUM(n->n_in)); }
REF(Mean) { return ref_Sum(n, x) / n->n_in; }

/* BitShift on an unsigned dtype of w bits: shifts of w or more give 0
 * (numpy; C leaves them undefined). In C, u8 and u16 operands promote to
 * int, where x << s for s < w still fits; the conversion back to the dtype
 * truncates the result to w bits. */
EXPR(BitShift)
{
    int bits = (int)ir_dtype_size(ct) * 8;
    const Sx *sh = shift_left(n) ? BIN(SHL, A, B) : BIN(SHR, A, B);
    return SEL(BIN(GE, B, NUM(bits)), NUM(0), sx_convert(b, ct, sh));
}
REF(BitShift)
{
    int bits = (int)ir_dtype_size(n->out[0]->dtype) * 8;
    if (x[1] >= bits) return 0;
    double p = ldexp(1.0, (int)x[1]); /* a power of 2: the products and quotients are exact */
    return shift_left(n) ? fmod(x[0] * p, ldexp(1.0, bits)) : floor(x[0] / p);
}

#undef EXPR
#undef REF

/* CastLike = Cast of input 0 to target_type's dtype: evaluated through
 * Cast's description on a one-input view of the node. */
static int eval_castlike(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    Node view = *n;
    view.op = OP_Cast;
    view.n_in = 1;
    return ir_eval_elementwise(&view, in, out, d);
}

/* ---- gradients (ir/grad.h) ------------------------------------------------
 *
 * Composed of elementwise ops as in elementwise.c (fusion later turns each
 * chain into one loop); broadcast operands get their gradient summed back
 * to their shape. Kinks take the PyTorch convention: PRelu uses the slope
 * only where x < 0 (its forward test), ThresholdedRelu passes dy where
 * x > alpha, Shrink where |x| > lambd, Celu has derivative 1 at 0; Sign and
 * Round have derivative zero wherever it exists. Float Mod is always the
 * truncated remainder (infer rejects fmod=0 for floats): a - b*trunc(a/b),
 * whose trunc(a/b) is read back exactly as Round((a - y)/b). CastLike casts
 * dy back to the input's dtype; its target_type only supplies a dtype and
 * gets no gradient. Integer inputs never need one (autodiff). */

#define GX(i) (gc->n->in[i])
#define GYV (gc->n->out[0])

static Value *m_c(GradCtx *gc, double v) { return gb_scalar(gc, GYV->dtype, v); }
static Value *m_mul(GradCtx *gc, Value *a, Value *b) { return gb2(gc, OP_Mul, NULL, a, b); }
static Value *m_where(GradCtx *gc, Value *c, Value *a, Value *b) { return gb3(gc, OP_Where, NULL, c, a, b); }
/* Sets the gradient of the only input to dy * f. */
static int m_unary(GradCtx *gc, Value *f)
{
    gb_set(gc, 0, m_mul(gc, gb_dy(gc, 0), f));
    return gb_done(gc);
}
/* Sets the gradient of the only input to dy / f. */
static int m_unary_div(GradCtx *gc, Value *f)
{
    gb_set(gc, 0, gb2(gc, OP_Div, NULL, gb_dy(gc, 0), f));
    return gb_done(gc);
}
/* dy where cond, else 0. */
static int m_pass_where(GradCtx *gc, Value *cond)
{
    gb_set(gc, 0, m_where(gc, cond, gb_dy(gc, 0), m_c(gc, 0)));
    return gb_done(gc);
}
/* Sets input i's gradient to g summed back to its shape. */
static void m_set(GradCtx *gc, int i, Value *g)
{
    if (gc->need[i]) gb_set(gc, i, gb_reduce_to(gc, g, &GX(i)->shape));
}
/* 1 + s * x*x (s = 1 or -1), or x*x - 1 for s = 0. */
static Value *m_quad(GradCtx *gc, int s)
{
    Value *xx = m_mul(gc, GX(0), GX(0));
    if (s == 0) return gb2(gc, OP_Sub, NULL, xx, m_c(gc, 1));
    return gb2(gc, s > 0 ? OP_Add : OP_Sub, NULL, m_c(gc, 1), xx);
}

static int grad_Sum(GradCtx *gc)
{
    Value *dy = gb_dy(gc, 0);
    for (int i = 0; i < gc->n->n_in; i++) m_set(gc, i, dy);
    return gb_done(gc);
}
static int grad_Mean(GradCtx *gc)
{
    Value *g = m_mul(gc, gb_dy(gc, 0), m_c(gc, 1.0 / gc->n->n_in));
    for (int i = 0; i < gc->n->n_in; i++) m_set(gc, i, g);
    return gb_done(gc);
}
static int grad_PRelu(GradCtx *gc) /* x < 0: dx = dy*slope, dslope = dy*x; else dx = dy */
{
    Value *x = GX(0), *dy = gb_dy(gc, 0), *z = m_c(gc, 0);
    Value *neg = gb2(gc, OP_Less, NULL, x, z);
    if (gc->need[0]) gb_set(gc, 0, m_mul(gc, dy, m_where(gc, neg, GX(1), m_c(gc, 1))));
    if (gc->need[1]) m_set(gc, 1, m_mul(gc, dy, m_where(gc, neg, x, z)));
    return gb_done(gc);
}
static int grad_zero(GradCtx *gc) { gb_set(gc, 0, gb_zeros_like(gc, GX(0))); return gb_done(gc); }
#define grad_Sign grad_zero
#define grad_Round grad_zero
static int grad_Softsign(GradCtx *gc) /* 1 / (1 + |x|)^2 */
{
    Value *d = gb2(gc, OP_Add, NULL, m_c(gc, 1), gb1(gc, OP_Abs, NULL, GX(0)));
    return m_unary_div(gc, m_mul(gc, d, d));
}
static int grad_ThresholdedRelu(GradCtx *gc)
{
    return m_pass_where(gc, gb2(gc, OP_Greater, NULL, GX(0), m_c(gc, gc->n->attrs[ALPHA_ALPHA].f)));
}
static int grad_Celu(GradCtx *gc) /* 1 for x > 0, exp(x / alpha) otherwise */
{
    Value *x = GX(0);
    Value *e = gb1(gc, OP_Exp, NULL, m_mul(gc, x, m_c(gc, 1.0 / gc->n->attrs[ALPHA_ALPHA].f)));
    return m_unary(gc, m_where(gc, gb2(gc, OP_Greater, NULL, x, m_c(gc, 0)), m_c(gc, 1), e));
}
static int grad_Shrink(GradCtx *gc)
{
    double lambd = gc->n->attrs[SHRINK_LAMBD].f;
    Value *x = GX(0);
    return m_pass_where(gc, gb2(gc, OP_Or, NULL, gb2(gc, OP_Less, NULL, x, m_c(gc, -lambd)),
                                gb2(gc, OP_Greater, NULL, x, m_c(gc, lambd))));
}
static int grad_Acos(GradCtx *gc)
{
    gb_set(gc, 0, gb1(gc, OP_Neg, NULL, gb2(gc, OP_Div, NULL, gb_dy(gc, 0), gb1(gc, OP_Sqrt, NULL, m_quad(gc, -1)))));
    return gb_done(gc);
}
static int grad_Asin(GradCtx *gc) { return m_unary_div(gc, gb1(gc, OP_Sqrt, NULL, m_quad(gc, -1))); }
static int grad_Acosh(GradCtx *gc) { return m_unary_div(gc, gb1(gc, OP_Sqrt, NULL, m_quad(gc, 0))); }
static int grad_Asinh(GradCtx *gc) { return m_unary_div(gc, gb1(gc, OP_Sqrt, NULL, m_quad(gc, 1))); }
static int grad_Atan(GradCtx *gc) { return m_unary_div(gc, m_quad(gc, 1)); }
static int grad_Atanh(GradCtx *gc) { return m_unary_div(gc, m_quad(gc, -1)); }
static int grad_Cosh(GradCtx *gc) { return m_unary(gc, gb1(gc, OP_Sinh, NULL, GX(0))); }
static int grad_Sinh(GradCtx *gc) { return m_unary(gc, gb1(gc, OP_Cosh, NULL, GX(0))); }
static int grad_Tan(GradCtx *gc) { return m_unary(gc, gb2(gc, OP_Add, NULL, m_c(gc, 1), m_mul(gc, GYV, GYV))); }
static int grad_Mod(GradCtx *gc) /* y = a - b*trunc(a/b): dy and -dy*trunc(a/b) */
{
    Value *dy = gb_dy(gc, 0);
    m_set(gc, 0, dy);
    if (gc->need[1]) {
        Value *q = gb1(gc, OP_Round, NULL, gb2(gc, OP_Div, NULL, gb2(gc, OP_Sub, NULL, GX(0), GYV), GX(1)));
        m_set(gc, 1, gb1(gc, OP_Neg, NULL, m_mul(gc, dy, q)));
    }
    return gb_done(gc);
}
static int grad_CastLike(GradCtx *gc)
{
    Value *dy = gb_dy(gc, 0);
    DType t = GX(0)->dtype;
    gb_set(gc, 0, dy->dtype == t ? dy : gb1(gc, OP_Cast, gb_fmt(gc, "to=%d", ir_dtype_to_onnx(t)), dy));
    return gb_done(gc);
}

#define grad_And NULL
#define grad_Or NULL
#define grad_Xor NULL
#define grad_IsNaN NULL
#define grad_IsInf NULL
#define grad_GreaterOrEqual NULL
#define grad_LessOrEqual NULL
#define grad_BitShift NULL

/* What each gradient reads. */
#define bw_Sum ir_bw_none
#define bw_Mean ir_bw_none
#define bw_PRelu ir_bw_inputs
#define bw_Sign ir_bw_none
#define bw_Round ir_bw_none
#define bw_Softsign ir_bw_inputs
#define bw_ThresholdedRelu ir_bw_inputs
#define bw_Celu ir_bw_inputs
#define bw_Shrink ir_bw_inputs
#define bw_Acos ir_bw_inputs
#define bw_Acosh ir_bw_inputs
#define bw_Asin ir_bw_inputs
#define bw_Asinh ir_bw_inputs
#define bw_Atan ir_bw_inputs
#define bw_Atanh ir_bw_inputs
#define bw_Cosh ir_bw_inputs
#define bw_Sinh ir_bw_inputs
#define bw_Tan ir_bw_outputs
#define bw_Mod ir_bw_all
#define bw_CastLike ir_bw_none
#define bw_And NULL
#define bw_Or NULL
#define bw_Xor NULL
#define bw_IsNaN NULL
#define bw_IsInf NULL
#define bw_GreaterOrEqual NULL
#define bw_LessOrEqual NULL
#define bw_BitShift NULL

#undef GX
#undef GYV

/* ---- the descriptions ---------------------------------------------------- */

static const char *const names_prelu[] = {"X", "slope"};
static const char *const names_sum[] = {"sum"};
static const char *const names_mean[] = {"mean"};
static const char *const names_castlike[] = {"input", "target_type"};

/* Facets every op here shares; SAME_DTYPE ops may also write in place. */
#define EW(Op) \
    .name = #Op, .min_out = 1, .max_out = 1, .scalar_expr = expr_##Op, .scalar_ref = ref_##Op, \
    .eval = ir_eval_elementwise, .gradient = grad_##Op, .backward_reads = bw_##Op
#define INPLACE .inplace = ew_inplace_any, .n_inplace = 4
#define UNARY(Op, inf, in_n, out_n) \
    const OpDesc op_##Op = {EW(Op), INPLACE, .min_in = 1, .max_in = 1, .in_names = in_n, .out_names = out_n, \
                            .infer = inf}
#define BINARY(Op, inf, in_n, out_n) \
    const OpDesc op_##Op = {EW(Op), INPLACE, .min_in = 2, .max_in = 2, .in_names = in_n, .out_names = out_n, \
                            .infer = inf}

BINARY(And, infer_logic, ew_names_AB, ew_names_C);
BINARY(Or, infer_logic, ew_names_AB, ew_names_C);
BINARY(Xor, infer_logic, ew_names_AB, ew_names_C);
const OpDesc op_Mod = {EW(Mod), INPLACE, .min_in = 2, .max_in = 2, .in_names = ew_names_AB, .out_names = ew_names_C,
                       .infer = infer_mod, OP_ATTRS(mod_attrs)};
UNARY(Sign, infer_unary_numeric, ew_names_input, ew_names_output);
UNARY(Round, infer_unary_float, ew_names_X, ew_names_Y);
const OpDesc op_IsNaN = {EW(IsNaN), .min_in = 1, .max_in = 1, .in_names = ew_names_X, .out_names = ew_names_Y,
                         .infer = infer_float_test};
const OpDesc op_IsInf = {EW(IsInf), .min_in = 1, .max_in = 1, .in_names = ew_names_X, .out_names = ew_names_Y,
                         .infer = infer_float_test, OP_ATTRS(isinf_attrs)};
UNARY(Acos, infer_unary_float, ew_names_input, ew_names_output);
UNARY(Acosh, infer_unary_float, ew_names_input, ew_names_output);
UNARY(Asin, infer_unary_float, ew_names_input, ew_names_output);
UNARY(Asinh, infer_unary_float, ew_names_input, ew_names_output);
UNARY(Atan, infer_unary_float, ew_names_input, ew_names_output);
UNARY(Atanh, infer_unary_float, ew_names_input, ew_names_output);
UNARY(Cosh, infer_unary_float, ew_names_input, ew_names_output);
UNARY(Sinh, infer_unary_float, ew_names_input, ew_names_output);
UNARY(Tan, infer_unary_float, ew_names_input, ew_names_output);
UNARY(Softsign, infer_unary_float, ew_names_input, ew_names_output);
const OpDesc op_ThresholdedRelu = {EW(ThresholdedRelu), INPLACE, .min_in = 1, .max_in = 1, .in_names = ew_names_X,
                                   .out_names = ew_names_Y, .infer = infer_unary_float, OP_ATTRS(thresholded_attrs)};
const OpDesc op_Celu = {EW(Celu), INPLACE, .min_in = 1, .max_in = 1, .in_names = ew_names_X, .out_names = ew_names_Y,
                        .infer = infer_celu, OP_ATTRS(celu_attrs)};
const OpDesc op_Shrink = {EW(Shrink), INPLACE, .min_in = 1, .max_in = 1, .in_names = ew_names_input,
                          .out_names = ew_names_output, .infer = infer_unary_numeric, OP_ATTRS(shrink_attrs)};
BINARY(PRelu, infer_prelu, names_prelu, ew_names_Y);
const OpDesc op_GreaterOrEqual = {EW(GreaterOrEqual), .min_in = 2, .max_in = 2, .in_names = ew_names_AB,
                                  .out_names = ew_names_C, .infer = infer_compare};
const OpDesc op_LessOrEqual = {EW(LessOrEqual), .min_in = 2, .max_in = 2, .in_names = ew_names_AB,
                               .out_names = ew_names_C, .infer = infer_compare};
const OpDesc op_Sum = {EW(Sum), INPLACE, .min_in = 1, .max_in = -1, .in_names = ew_names_data, .out_names = names_sum,
                       .infer = infer_float_nary};
const OpDesc op_Mean = {EW(Mean), INPLACE, .min_in = 1, .max_in = -1, .in_names = ew_names_data,
                        .out_names = names_mean, .infer = infer_float_nary};
const OpDesc op_BitShift = {EW(BitShift), INPLACE, .min_in = 2, .max_in = 2, .in_names = ew_names_XY,
                            .out_names = ew_names_Z, .infer = infer_bitshift, OP_ATTRS(bitshift_attrs)};
const OpDesc op_CastLike = {.name = "CastLike", .min_in = 2, .max_in = 2, .in_names = names_castlike,
                            .min_out = 1, .max_out = 1, .out_names = ew_names_output, .infer = infer_castlike,
                            .eval = eval_castlike, .gradient = grad_CastLike, .backward_reads = bw_CastLike};
