/* sexpr.c — building scalar expression trees (see sexpr.h).
 *
 * Every constructor allocates one node from the builder's arena, numbers it
 * (ids grow, so a node's operands always have smaller ids than the node:
 * printers size per-node tables by the root's id) and checks the operand
 * rules that would otherwise surface as wrong text in some backend.
 */
#include "sexpr.h"

void sx_build_init(SxBuild *b, Arena *arena)
{
    b->arena = arena;
    b->n_nodes = 0;
}

/* A new node of kind k and dtype t with operands x, y, z (NULL: none). */
static Sx *node(SxBuild *b, SxKind k, DType t, const Sx *x, const Sx *y, const Sx *z)
{
    Sx *e = arena_alloc(b->arena, sizeof *e);
    e->kind = k;
    e->t = t;
    e->id = b->n_nodes++;
    e->a[0] = x;
    e->a[1] = y;
    e->a[2] = z;
    e->n = z ? 3 : y ? 2 : x ? 1 : 0;
    for (int j = 0; j < e->n; j++) GC_ASSERT(e->a[j]);
    return e;
}

const Sx *sx_arg(SxBuild *b, int i, DType t)
{
    GC_ASSERT(i >= 0);
    Sx *e = node(b, SX_ARG, t, NULL, NULL, NULL);
    e->i = i;
    return e;
}

const Sx *sx_const(SxBuild *b, DType t, double v)
{
    Sx *e = node(b, SX_CONST, t, NULL, NULL, NULL);
    e->v = v;
    return e;
}

const Sx *sx_limit(SxBuild *b, DType t, int max)
{
    GC_ASSERT(ir_dtype_is_int(t));
    Sx *e = node(b, SX_LIMIT, t, NULL, NULL, NULL);
    e->i = max != 0;
    return e;
}

const Sx *sx_unary(SxBuild *b, SxKind k, const Sx *x)
{
    GC_ASSERT(k == SX_NEG || k == SX_NOT);
    return node(b, k, k == SX_NOT ? DT_BOOL : x->t, x, NULL, NULL);
}

int sx_is_compare(SxKind k) { return k >= SX_EQ && k <= SX_GE; }

const Sx *sx_binary(SxBuild *b, SxKind k, const Sx *x, const Sx *y)
{
    GC_ASSERT(k >= SX_ADD && k <= SX_MIN && k != SX_SELECT);
    int boolean = sx_is_compare(k) || k == SX_AND || k == SX_OR;
    return node(b, k, boolean ? DT_BOOL : x->t, x, y, NULL);
}

const Sx *sx_select(SxBuild *b, const Sx *c, const Sx *x, const Sx *y)
{
    return node(b, SX_SELECT, x->t, c, x, y);
}

int sx_fn_arity(SxFn f) { return f == SX_FN_POW || f == SX_FN_FMOD ? 2 : 1; }

const Sx *sx_call(SxBuild *b, SxFn f, const Sx *x, const Sx *y)
{
    GC_ASSERT(f >= 0 && f < SX_FN_COUNT && (y != NULL) == (sx_fn_arity(f) == 2));
    GC_ASSERT(x->t == DT_F32 || x->t == DT_F64);
    Sx *e = node(b, SX_CALL, x->t, x, y, NULL);
    e->i = f;
    return e;
}

const Sx *sx_convert(SxBuild *b, DType t, const Sx *x) { return node(b, SX_CONVERT, t, x, NULL, NULL); }

const Sx *sx_sat_int(SxBuild *b, DType t, const Sx *x)
{
    GC_ASSERT(ir_dtype_is_int(t) && ir_dtype_is_float(x->t));
    return node(b, SX_SAT_INT, t, x, NULL, NULL);
}

const Sx *sx_seq(SxBuild *b, const Sx *x, const Sx *y) { return node(b, SX_SEQ, y->t, x, y, NULL); }
