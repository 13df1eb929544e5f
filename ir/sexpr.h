/* sexpr.h — target-neutral scalar expression trees: what an elementwise op
 * computes for one output element (OpDesc.scalar_expr builds one).
 *
 * A tree is made of typed nodes (Sx): arguments (the op's input elements),
 * constants, arithmetic, comparisons, logic, selects, NaN-propagating
 * max/min, math functions named by enum, conversions and the saturating
 * float-to-integer conversion. It says what is computed and in which dtype,
 * never how a language spells it: each backend prints trees in its own
 * language (backend/cfamily/ for C and CUDA C).
 *
 * Semantics are C's on the node's dtype, with the corner cases C leaves
 * undefined kept out by construction: writers guard integer division and
 * shifts themselves, and out-of-range float-to-integer conversion goes
 * through SX_SAT_INT (or an explicit select). Where an operand of an
 * arithmetic node has another dtype than the first (a u16 product widened
 * to u32, bools subtracted), the usual arithmetic conversions of C apply.
 *
 * Nodes live in the arena of the SxBuild that made them (no global state,
 * freed with the arena). An operand always exists before the node that uses
 * it, so ids grow from the leaves to the root and a node may be shared by
 * several parents (a DAG): printers may set such a repeated subexpression
 * off as one unit.
 */
#ifndef GRAPHC_SEXPR_H
#define GRAPHC_SEXPR_H

#include "ir.h"

typedef enum SxKind {
    SX_ARG,     /* argument i (an input element, in its compute dtype) */
    SX_CONST,   /* the number v in dtype t */
    SX_LIMIT,   /* the smallest (i = 0) or largest (i = 1) value of integer dtype t */
    SX_NEG,     /* -a */
    SX_NOT,     /* logical not: 1 when a is 0, else 0 */
    SX_ADD,     /* a + b */
    SX_SUB,     /* a - b */
    SX_MUL,     /* a * b */
    SX_DIV,     /* a / b (integers truncate toward zero; b != 0) */
    SX_MOD,     /* integer remainder with a's sign (b != 0, not MIN % -1) */
    SX_SHL,     /* a << b (unsigned, b below the bit width) */
    SX_SHR,     /* a >> b */
    SX_EQ,      /* comparisons: bool results */
    SX_NE,
    SX_LT,
    SX_LE,
    SX_GT,
    SX_GE,
    SX_AND,     /* logical and / or of truth values: bool results */
    SX_OR,
    SX_SELECT,  /* a ? b : c (a is a truth value; only one branch is evaluated) */
    SX_MAX,     /* b when b > a or b is NaN, else a: NaN propagates, ties keep a */
    SX_MIN,     /* b when b < a or b is NaN, else a */
    SX_CALL,    /* math function i (SxFn) of one or two operands, in dtype t (f32 or f64) */
    SX_CONVERT, /* a converted to dtype t (in range; bool is 0/1) */
    SX_SAT_INT, /* float a to integer dtype t: NaN gives 0, truncation toward zero,
                 * values past t's range give its limit (i64: the largest double
                 * below 2^63, where ir_store_f64 stops) */
    SX_SEQ,     /* b; a is evaluated and discarded (keeps every argument in the tree) */
    SX_KIND_COUNT
} SxKind;

/* Math functions; each has the meaning of the <math.h> function of the same
 * name on the call's dtype. */
typedef enum SxFn {
    SX_FN_EXP,
    SX_FN_EXPM1,
    SX_FN_LOG,
    SX_FN_LOG1P,
    SX_FN_SQRT,
    SX_FN_FABS,
    SX_FN_FLOOR,
    SX_FN_CEIL,
    SX_FN_NEARBYINT, /* round half to even (default rounding mode) */
    SX_FN_SIN,
    SX_FN_COS,
    SX_FN_TAN,
    SX_FN_ASIN,
    SX_FN_ACOS,
    SX_FN_ATAN,
    SX_FN_SINH,
    SX_FN_COSH,
    SX_FN_TANH,
    SX_FN_ASINH,
    SX_FN_ACOSH,
    SX_FN_ATANH,
    SX_FN_ERF,
    SX_FN_POW,  /* two operands */
    SX_FN_FMOD, /* two operands */
    SX_FN_COUNT
} SxFn;

typedef struct Sx {
    SxKind kind;
    DType t;   /* dtype of the value (comparisons and logic: bool) */
    int id;    /* creation order in its SxBuild: operands have smaller ids */
    int i;     /* SX_ARG: argument index; SX_CALL: SxFn; SX_LIMIT: 0 min, 1 max */
    double v;  /* SX_CONST */
    int n;     /* operands in a[] */
    const struct Sx *a[3];
} Sx;

/* Where trees are built: nodes come from `arena` (the caller frees it). */
typedef struct SxBuild {
    Arena *arena;
    int n_nodes;
} SxBuild;

void sx_build_init(SxBuild *b, Arena *arena);

const Sx *sx_arg(SxBuild *b, int i, DType t);
const Sx *sx_const(SxBuild *b, DType t, double v);
/* SX_LIMIT: max = 0 for the smallest value of integer dtype t, 1 for the largest. */
const Sx *sx_limit(SxBuild *b, DType t, int max);
/* SX_NEG or SX_NOT. */
const Sx *sx_unary(SxBuild *b, SxKind k, const Sx *x);
/* Any kind from SX_ADD to SX_MIN but SX_SELECT; comparisons and logic are
 * bool, the rest has x's dtype. */
const Sx *sx_binary(SxBuild *b, SxKind k, const Sx *x, const Sx *y);
const Sx *sx_select(SxBuild *b, const Sx *c, const Sx *x, const Sx *y);
/* Function f of x (and y for two-operand functions, else NULL), in x's dtype. */
const Sx *sx_call(SxBuild *b, SxFn f, const Sx *x, const Sx *y);
const Sx *sx_convert(SxBuild *b, DType t, const Sx *x);
const Sx *sx_sat_int(SxBuild *b, DType t, const Sx *x);
const Sx *sx_seq(SxBuild *b, const Sx *x, const Sx *y);

/* Number of operands function f takes (1 or 2). */
int sx_fn_arity(SxFn f);
/* Whether k is a comparison (SX_EQ .. SX_GE). */
int sx_is_compare(SxKind k);

#endif
