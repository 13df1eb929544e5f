/* cfam_expr.c — C-family spelling of dtypes, literals and expression trees
 * (see cfam_expr.h).
 *
 * Trees print by C precedence with a few fixed conventions, chosen so that
 * the text reads well and -Wall -Wextra stays quiet:
 *   - an argument is written "(name)" (its text could be any expression),
 *     except as the only operand of a function call: "expf(x)";
 *   - the root, and an operand whose operator binds less tightly than its
 *     place requires, is parenthesized; a select nested in the middle of a
 *     select is parenthesized, one in the last place chains
 *     ("a ? b : c ? d : e");
 *   - comparisons and logical nots inside comparisons, && inside || and
 *     arithmetic inside shifts are parenthesized (gcc's -Wparentheses);
 *   - unary minus, logical not and conversions parenthesize their operand
 *     ("-(x)", "(float)(y)"; a constant after a conversion stays bare);
 *   - a subexpression the tree uses more than once (a shared node) is set
 *     off as one unit: it prints as a root does, wherever it appears;
 *   - max/min, the saturating conversion and sequences print as fixed
 *     templates with every operand as a unit ("(((b) > a || (b) != (b)) ?
 *     (b) : a)" for a float max).
 * Operands may be repeated in the text (selects, max, saturation): the
 * emitters pass names of locals, so nothing runs twice.
 *
 * Literals are typed by the node: float constants get an 'f' suffix and
 * use the shortest digits that read back as the same float, so the compiler
 * never sees a double where the kernel computes in float.
 */
#include "cfam_expr.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- dialects ----------------------------------------------------------- */

static const CfamFnName math_fn[SX_FN_COUNT] = {
    [SX_FN_EXP] = {"exp", "expf"},
    [SX_FN_EXPM1] = {"expm1", "expm1f"},
    [SX_FN_LOG] = {"log", "logf"},
    [SX_FN_LOG1P] = {"log1p", "log1pf"},
    [SX_FN_SQRT] = {"sqrt", "sqrtf"},
    [SX_FN_FABS] = {"fabs", "fabsf"},
    [SX_FN_FLOOR] = {"floor", "floorf"},
    [SX_FN_CEIL] = {"ceil", "ceilf"},
    [SX_FN_NEARBYINT] = {"nearbyint", "nearbyintf"},
    [SX_FN_SIN] = {"sin", "sinf"},
    [SX_FN_COS] = {"cos", "cosf"},
    [SX_FN_TAN] = {"tan", "tanf"},
    [SX_FN_ASIN] = {"asin", "asinf"},
    [SX_FN_ACOS] = {"acos", "acosf"},
    [SX_FN_ATAN] = {"atan", "atanf"},
    [SX_FN_SINH] = {"sinh", "sinhf"},
    [SX_FN_COSH] = {"cosh", "coshf"},
    [SX_FN_TANH] = {"tanh", "tanhf"},
    [SX_FN_ASINH] = {"asinh", "asinhf"},
    [SX_FN_ACOSH] = {"acosh", "acoshf"},
    [SX_FN_ATANH] = {"atanh", "atanhf"},
    [SX_FN_ERF] = {"erf", "erff"},
    [SX_FN_POW] = {"pow", "powf"},
    [SX_FN_FMOD] = {"fmod", "fmodf"},
};

/* The generated C calls graphc's own float exp, log, tanh and erf
 * (runtime/common/gcrt_base.h: libm's on hosted systems, graphc's on bare
 * metal, where newlib's would pull in errno). CUDA's math library has no
 * errno: the CUDA dialect keeps the standard names. */
static const char *const c99_f32[SX_FN_COUNT] = {
    [SX_FN_EXP] = "gcrt_expf",
    [SX_FN_LOG] = "gcrt_logf",
    [SX_FN_TANH] = "gcrt_tanhf",
    [SX_FN_ERF] = "gcrt_erff",
};

const CfamDialect cfam_c99 = {"C99", math_fn, c99_f32};
const CfamDialect cfam_cuda = {"CUDA C", math_fn, NULL};

/* ---- types and literals ------------------------------------------------- */

const char *cfam_ctype(DType t)
{
    static const char *const names[DT_COUNT] = {
        [DT_F32] = "float", [DT_F64] = "double", [DT_F16] = "uint16_t", [DT_BF16] = "uint16_t",
        [DT_I8] = "int8_t", [DT_U8] = "uint8_t", [DT_I16] = "int16_t", [DT_I32] = "int32_t",
        [DT_I64] = "int64_t", [DT_BOOL] = "uint8_t", [DT_U16] = "uint16_t", [DT_U32] = "uint32_t",
        [DT_U64] = "uint64_t",
    };
    GC_ASSERT(t > DT_UNDEF && t < DT_COUNT);
    return names[t];
}

const char *cfam_lit(char *buf, size_t cap, DType t, double v)
{
    if (!ir_dtype_is_float(t)) {
        GC_ASSERT(v >= -9223372036854775808.0 && v < 18446744073709551616.0);
        if (v >= 9223372036854775808.0) snprintf(buf, cap, "%lluu", (unsigned long long)v);
        else snprintf(buf, cap, "%lld", (long long)v);
        return buf;
    }
    if (!isfinite(v)) {
        /* the macros are floats: an f64 literal converts them, so that no
         * expression promotes a float to double implicitly */
        const char *dbl = t == DT_F64 ? "(double)" : "";
        snprintf(buf, cap, "%s%s%s", !isnan(v) && v < 0 ? "-" : "", dbl, isnan(v) ? "NAN" : "INFINITY");
        return buf;
    }
    int f32 = t != DT_F64;
    for (int prec = f32 ? 6 : 15; prec <= (f32 ? 9 : 17); prec++) {
        snprintf(buf, cap, "%.*g", prec, v);
        double back = strtod(buf, NULL);
        if (f32 ? (float)back == (float)v : back == v) break;
    }
    if (!strpbrk(buf, ".eE")) strncat(buf, ".0", cap - strlen(buf) - 1);
    if (f32) strncat(buf, "f", cap - strlen(buf) - 1);
    return buf;
}

/* <stdint.h> spellings of the integer dtypes' limits (unsigned minimum: 0). */
static const struct {
    DType t;
    const char *min, *max;
} int_lim[] = {
    {DT_I8, "INT8_MIN", "INT8_MAX"},   {DT_U8, "0", "UINT8_MAX"},      {DT_I16, "INT16_MIN", "INT16_MAX"},
    {DT_I32, "INT32_MIN", "INT32_MAX"}, {DT_I64, "INT64_MIN", "INT64_MAX"}, {DT_U16, "0", "UINT16_MAX"},
    {DT_U32, "0", "UINT32_MAX"},       {DT_U64, "0", "UINT64_MAX"},
};

/* The limit (max = 0: smallest, 1: largest) of integer dtype t. */
static const char *limit_name(DType t, int max)
{
    for (size_t k = 0; k < sizeof int_lim / sizeof int_lim[0]; k++)
        if (int_lim[k].t == t) return max ? int_lim[k].max : int_lim[k].min;
    GC_ASSERT(0 && "not an integer dtype");
    return NULL;
}

/* ---- expressions -------------------------------------------------------- */

/* Binding strength of the place an operand is printed in (P_BARE: the only
 * operand of a call) and of each node's operator, loosest first. */
enum { P_BARE, P_ANY, P_COND, P_OR, P_AND, P_EQ, P_REL, P_SHIFT, P_ADD, P_MUL, P_UNARY, P_PRIMARY };

typedef struct Printer {
    Writer *w;
    const CfamDialect *dl;
    const char *const *names;
    unsigned char *uses; /* by node id: times the tree refers to the node (capped at 2) */
} Printer;

static const char *const binop_text[SX_KIND_COUNT] = {
    [SX_ADD] = "+", [SX_SUB] = "-", [SX_MUL] = "*", [SX_DIV] = "/", [SX_MOD] = "%", [SX_SHL] = "<<",
    [SX_SHR] = ">>", [SX_EQ] = "==", [SX_NE] = "!=", [SX_LT] = "<", [SX_LE] = "<=", [SX_GT] = ">",
    [SX_GE] = ">=", [SX_AND] = "&&", [SX_OR] = "||",
};

static const unsigned char kind_prec[SX_KIND_COUNT] = {
    [SX_ARG] = P_PRIMARY, [SX_CONST] = P_PRIMARY, [SX_LIMIT] = P_PRIMARY, [SX_NEG] = P_UNARY,
    [SX_NOT] = P_UNARY, [SX_ADD] = P_ADD, [SX_SUB] = P_ADD, [SX_MUL] = P_MUL, [SX_DIV] = P_MUL,
    [SX_MOD] = P_MUL, [SX_SHL] = P_SHIFT, [SX_SHR] = P_SHIFT, [SX_EQ] = P_EQ, [SX_NE] = P_EQ,
    [SX_LT] = P_REL, [SX_LE] = P_REL, [SX_GT] = P_REL, [SX_GE] = P_REL, [SX_AND] = P_AND,
    [SX_OR] = P_OR, [SX_SELECT] = P_COND, [SX_MAX] = P_PRIMARY, [SX_MIN] = P_PRIMARY,
    [SX_CALL] = P_PRIMARY, [SX_CONVERT] = P_UNARY, [SX_SAT_INT] = P_PRIMARY, [SX_SEQ] = P_PRIMARY,
};

static void count_uses(unsigned char *uses, const Sx *e)
{
    if (uses[e->id]++) {
        uses[e->id] = 2;
        return;
    }
    for (int j = 0; j < e->n; j++) count_uses(uses, e->a[j]);
}

static void print(Printer *p, const Sx *e, int need);

/* e as one unit: as the root of an expression. */
static void unit(Printer *p, const Sx *e) { print(p, e, P_PRIMARY); }

/* e inside parentheses: "(x)" for an argument, else "(" e ")". */
static void paren(Printer *p, const Sx *e)
{
    if (e->kind == SX_ARG) {
        unit(p, e);
        return;
    }
    w_puts(p->w, "(");
    print(p, e, P_ANY);
    w_puts(p->w, ")");
}

/* What operand `side` (0 left, 1 right) of binary node e requires. */
static int operand_need(const Sx *e, const Sx *x, int side)
{
    int pr = kind_prec[e->kind];
    if (sx_is_compare(e->kind) && (x->kind == SX_NOT || kind_prec[x->kind] < P_SHIFT)) return P_PRIMARY;
    if (e->kind == SX_OR && x->kind == SX_AND) return P_PRIMARY;
    if (e->kind == SX_SHL || e->kind == SX_SHR) return P_MUL;
    return pr + side;
}

static void print_sat(Printer *p, const Sx *e)
{
    const Sx *x = e->a[0];
    const char *t = cfam_ctype(e->t);
    int bits = (int)ir_dtype_size(e->t) * 8;
    int is_signed = e->t == DT_I8 || e->t == DT_I16 || e->t == DT_I32 || e->t == DT_I64;
    /* limits as doubles: values <= lo give min, values >= hi give max; the
     * i64 maximum is the largest double below 2^63 */
    double lo = is_signed ? -ldexp(1.0, bits - 1) : 0.0, hi = ldexp(1.0, is_signed ? bits - 1 : bits);
    const char *max = limit_name(e->t, 1);
    if (e->t == DT_I64) {
        hi = 9223372036854774784.0;
        max = "(int64_t)9223372036854774784";
    }
    char lb[64], hb[64];
    cfam_lit(lb, sizeof lb, x->t, lo);
    cfam_lit(hb, sizeof hb, x->t, hi);
    Writer *w = p->w;
    w_puts(w, "((");
    unit(p, x);
    w_puts(w, ") != (");
    unit(p, x);
    w_printf(w, ") ? (%s)0 : (", t);
    unit(p, x);
    w_printf(w, ") <= %s ? (%s)%s : (", lb, t, limit_name(e->t, 0));
    unit(p, x);
    w_printf(w, ") >= %s ? (%s)%s : (%s)(", hb, t, max, t);
    unit(p, x);
    w_puts(w, "))");
}

/* Max/min template: "((b CMP a) ? b : a)", with "|| b != b" for floats. */
static void print_minmax(Printer *p, const Sx *e)
{
    const Sx *a = e->a[0], *b = e->a[1];
    const char *cmp = e->kind == SX_MAX ? ">" : "<";
    Writer *w = p->w;
    if (ir_dtype_is_float(e->t)) {
        w_puts(w, "((");
        unit(p, b);
        w_printf(w, " %s ", cmp);
        unit(p, a);
        w_puts(w, " || ");
        unit(p, b);
        w_puts(w, " != ");
        unit(p, b);
        w_puts(w, ")");
    } else {
        w_puts(w, "(");
        unit(p, b);
        w_printf(w, " %s ", cmp);
        unit(p, a);
    }
    w_puts(w, " ? ");
    unit(p, b);
    w_puts(w, " : ");
    unit(p, a);
    w_puts(w, ")");
}

/* Writes e where the place requires binding strength `need`. */
static void print(Printer *p, const Sx *e, int need)
{
    Writer *w = p->w;
    char buf[64];
    if (e->kind == SX_ARG) {
        w_printf(w, need == P_BARE ? "%s" : "(%s)", p->names[e->i]);
        return;
    }
    if (e->n && p->uses[e->id] > 1) need = P_PRIMARY;
    int wrap = kind_prec[e->kind] < need;
    if (wrap) w_puts(w, "(");
    switch (e->kind) {
    case SX_CONST: w_puts(w, cfam_lit(buf, sizeof buf, e->t, e->v)); break;
    case SX_LIMIT: w_puts(w, limit_name(e->t, e->i)); break;
    case SX_NEG:
    case SX_NOT:
        w_puts(w, e->kind == SX_NEG ? "-" : "!");
        paren(p, e->a[0]);
        break;
    case SX_CONVERT:
        w_printf(w, "(%s)", cfam_ctype(e->t));
        if (e->a[0]->kind == SX_CONST) unit(p, e->a[0]);
        else paren(p, e->a[0]);
        break;
    case SX_SELECT:
        print(p, e->a[0], P_OR);
        w_puts(w, " ? ");
        print(p, e->a[1], P_OR);
        w_puts(w, " : ");
        print(p, e->a[2], P_COND);
        break;
    case SX_CALL: {
        const CfamFnName *fn = &p->dl->fn[e->i];
        const char *f32 = p->dl->f32_replace && p->dl->f32_replace[e->i] ? p->dl->f32_replace[e->i] : fn->f32;
        w_printf(w, "%s(", e->t == DT_F64 ? fn->f64 : f32);
        if (e->n == 1) {
            print(p, e->a[0], P_BARE);
        } else {
            print(p, e->a[0], P_ANY);
            w_puts(w, ", ");
            print(p, e->a[1], P_ANY);
        }
        w_puts(w, ")");
        break;
    }
    case SX_MAX:
    case SX_MIN: print_minmax(p, e); break;
    case SX_SAT_INT: print_sat(p, e); break;
    case SX_SEQ:
        w_puts(w, "((void)");
        paren(p, e->a[0]);
        w_puts(w, ", ");
        unit(p, e->a[1]);
        w_puts(w, ")");
        break;
    default:
        GC_ASSERT(binop_text[e->kind] && e->n == 2);
        print(p, e->a[0], operand_need(e, e->a[0], 0));
        w_printf(w, " %s ", binop_text[e->kind]);
        print(p, e->a[1], operand_need(e, e->a[1], 1));
        break;
    }
    if (wrap) w_puts(w, ")");
}

void cfam_expr(Writer *w, const CfamDialect *dl, const Sx *e, const char *const *names)
{
    Printer p = {w, dl, names, calloc((size_t)e->id + 1, 1)};
    GC_ASSERT(p.uses);
    count_uses(p.uses, e);
    unit(&p, e);
    free(p.uses);
}
