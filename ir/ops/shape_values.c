/* shape_values.c — runtime shapes: shape values, the small integer tensors
 * whose elements shape inference knows as symbolic terms (Value.shape_val).
 *
 * A PyTorch export computes shapes in the graph: Shape(x) -> Gather ->
 * Unsqueeze -> Concat -> Reshape, or Slice(pos, 0, T) with T read from
 * Shape(idx). When x has a runtime dim T, those values are known at compile
 * time as terms, T or a constant, though not as constants. The `infer_value`
 * facets below carry the terms through the ops that compute shapes, and the
 * ops that read a shape operand (Reshape, Slice: their `infer_sym` rules)
 * turn terms into output dims, so a Reshape to [B, T, H, D] keeps T as T
 * instead of a data-dependent dim that would not broadcast against T. The
 * values themselves are still computed at run time like any tensor; the C
 * backend checks that what the consumer reads agrees with the dims shape
 * inference gave (cgen_set_dim).
 */
#include "../op.h"
#include "shape_attrs.h"
#include "reduce_attrs.h"
#include "geometry.h"

#include <string.h>

#define MAX_TERMS (2 * IR_MAX_RANK)

int ir_value_terms(const Value *v, IrSymTerm *t, int max)
{
    if (!v || (!ir_dtype_is_int(v->dtype) && v->dtype != DT_BOOL) || v->shape.rank > 1) return -1;
    if (v->kind == VK_CONST && v->dtype == DT_BOOL) {
        int64_t n = ir_numel(&v->shape);
        if (n > max || !v->data) return -1;
        for (int64_t i = 0; i < n; i++) t[i] = (IrSymTerm){0, ir_load_f64(DT_BOOL, v->data, (size_t)i) != 0.0};
        return (int)n;
    }
    if (v->kind == VK_CONST) {
        int64_t c[MAX_TERMS];
        int n = ir_const_ints(v, c, max < MAX_TERMS ? max : MAX_TERMS);
        for (int i = 0; i < n; i++) t[i] = (IrSymTerm){0, c[i]};
        return n;
    }
    if (!v->shape_val || v->n_shape_val > max) return -1;
    memcpy(t, v->shape_val, sizeof *t * (size_t)v->n_shape_val);
    return v->n_shape_val;
}

static void set_terms(Graph *g, Value *v, const IrSymTerm *t, int n)
{
    IrSymTerm *p = ir_alloc(g, sizeof *p * (size_t)(n ? n : 1));
    memcpy(p, t, sizeof *p * (size_t)n);
    v->shape_val = p;
    v->n_shape_val = n;
}

/* Shape: the dims of its input in [start, end). */
void ir_value_shape(Graph *g, Node *n)
{
    const Shape *xs = &n->in[0]->shape;
    if (!ir_shape_has_sym(xs)) return;
    int s, e;
    ir_shape_range(n, &s, &e);
    IrSymTerm t[IR_MAX_RANK];
    for (int k = s; k < e; k++) t[k - s] = xs->sym[k] ? (IrSymTerm){xs->sym[k], 0} : (IrSymTerm){0, xs->dims[k]};
    set_terms(g, n->out[0], t, e > s ? e - s : 0);
}

/* Gather from a shape value at constant indices. */
void ir_value_gather(Graph *g, Node *n)
{
    IrSymTerm x[MAX_TERMS], idx[MAX_TERMS], t[MAX_TERMS];
    int nx = ir_value_terms(n->in[0], x, MAX_TERMS), ni = ir_value_terms(n->in[1], idx, MAX_TERMS);
    if (nx < 0 || ni < 0 || n->in[0]->kind == VK_CONST) return;
    for (int i = 0; i < ni; i++) {
        if (idx[i].sym) return;
        int64_t k = idx[i].c < 0 ? idx[i].c + nx : idx[i].c;
        if (k < 0 || k >= nx) return;
        t[i] = x[k];
    }
    set_terms(g, n->out[0], t, ni);
}

/* The same elements in the same order (Identity, Cast between integer
 * types, Reshape/Squeeze/Unsqueeze/Flatten of a scalar or list). */
void ir_value_copy(Graph *g, Node *n)
{
    IrSymTerm t[MAX_TERMS];
    int nt = ir_value_terms(n->in[0], t, MAX_TERMS);
    if (nt < 0 || n->in[0]->kind == VK_CONST || !ir_dtype_is_int(n->out[0]->dtype) || n->out[0]->shape.rank > 1) return;
    set_terms(g, n->out[0], t, nt);
}

/* Concat of shape values and constant lists. */
void ir_value_concat(Graph *g, Node *n)
{
    IrSymTerm t[MAX_TERMS];
    int nt = 0, any = 0;
    for (int j = 0; j < n->n_in; j++) {
        int k = ir_value_terms(n->in[j], t + nt, MAX_TERMS - nt);
        if (k < 0) return;
        any |= n->in[j]->kind != VK_CONST;
        nt += k;
    }
    if (any) set_terms(g, n->out[0], t, nt);
}

/* Add, Mul, Div of shape values (a scalar broadcasts): constants fold,
 * symbols give derived symbols (ir_sym_derive). */
void ir_value_arith(Graph *g, Node *n)
{
    IrSymTerm a[MAX_TERMS], b[MAX_TERMS], t[MAX_TERMS];
    int na = ir_value_terms(n->in[0], a, MAX_TERMS), nb = ir_value_terms(n->in[1], b, MAX_TERMS);
    if (na < 0 || nb < 0 || (n->in[0]->kind == VK_CONST && n->in[1]->kind == VK_CONST)) return;
    if (na != nb && na != 1 && nb != 1) return;
    IrSymKind kind = n->op == OP_Add ? SYM_ADD : n->op == OP_Mul ? SYM_MUL : SYM_DIV;
    int nt = na > nb ? na : nb;
    for (int i = 0; i < nt; i++) {
        IrSymTerm x = a[na == 1 ? 0 : i], y = b[nb == 1 ? 0 : i];
        if (!x.sym && !y.sym) {
            if (kind == SYM_DIV && y.c == 0) return;
            t[i] = (IrSymTerm){0, kind == SYM_ADD ? x.c + y.c : kind == SYM_MUL ? x.c * y.c : x.c / y.c};
        } else if ((x.sym && x.c) || (y.sym && y.c) || (!x.sym && x.c < 0) || (!y.sym && y.c <= 0 && kind != SYM_ADD)) {
            return; /* derived symbols are kept for non-negative extents */
        } else {
            t[i] = (IrSymTerm){ir_sym_derive(g, kind, x, y), 0};
        }
    }
    set_terms(g, n->out[0], t, nt);
}

/* ReduceMin, ReduceMax of a shape value over its one axis: a min(300, N)
 * (the detectors' TopK count) as the derived symbol SYM_MIN (SYM_MAX). */
void ir_value_reduce_min_max(Graph *g, Node *n)
{
    IrSymTerm x[MAX_TERMS];
    int nx = ir_value_terms(n->in[0], x, MAX_TERMS);
    const AttrVal *ax = &n->attrs[REDUCE_AXES];
    if (nx < 1 || n->in[0]->kind == VK_CONST || n->in[0]->shape.rank != 1) return;
    for (int i = 0; i < ax->n; i++)
        if (ax->ints[i] != 0 && ax->ints[i] != -1) return;
    int is_min = n->op == OP_ReduceMin;
    IrSymKind kind = is_min ? SYM_MIN : SYM_MAX;
    IrSymTerm t = x[0];
    for (int i = 1; i < nx; i++) {
        IrSymTerm y = x[i];
        if (!t.sym && !y.sym) t.c = is_min ? (y.c < t.c ? y.c : t.c) : (y.c > t.c ? y.c : t.c);
        else if ((!t.sym && t.c < 0) || (!y.sym && y.c < 0)) return; /* derived symbols are kept for non-negative extents */
        else t = (IrSymTerm){ir_sym_derive(g, kind, t, y), 0};
    }
    set_terms(g, n->out[0], &t, 1);
}

/* Whether terms a and b are equal (1), differ (0) for every runtime value,
 * or -1 when that depends on the values. A symbol is a non-negative
 * extent, so it differs from a negative constant. */
static int terms_equal(IrSymTerm a, IrSymTerm b)
{
    if (!a.sym && !b.sym) return a.c == b.c;
    if (a.sym && b.sym) return a.sym == b.sym ? 1 : -1;
    return (a.sym ? b.c : a.c) < 0 ? 0 : -1;
}

void ir_value_equal(Graph *g, Node *n)
{
    IrSymTerm a[MAX_TERMS], b[MAX_TERMS], t[MAX_TERMS];
    int na = ir_value_terms(n->in[0], a, MAX_TERMS), nb = ir_value_terms(n->in[1], b, MAX_TERMS);
    if (na < 0 || nb < 0 || (n->in[0]->kind == VK_CONST && n->in[1]->kind == VK_CONST)) return;
    if (na != nb && na != 1 && nb != 1) return;
    int nt = na > nb ? na : nb;
    for (int i = 0; i < nt; i++) {
        int e = terms_equal(a[na == 1 ? 0 : i], b[nb == 1 ? 0 : i]);
        if (e < 0) return;
        t[i] = (IrSymTerm){0, e};
    }
    set_terms(g, n->out[0], t, nt);
}

void ir_value_where(Graph *g, Node *n)
{
    IrSymTerm c[MAX_TERMS], a[MAX_TERMS], b[MAX_TERMS], t[MAX_TERMS];
    int nc = ir_value_terms(n->in[0], c, MAX_TERMS), na = ir_value_terms(n->in[1], a, MAX_TERMS);
    int nb = ir_value_terms(n->in[2], b, MAX_TERMS);
    if (nc < 0 || na < 0 || nb < 0 || !ir_dtype_is_int(n->out[0]->dtype)) return;
    if (n->in[1]->kind == VK_CONST && n->in[2]->kind == VK_CONST) return;
    int nt = nc > na ? nc : na;
    nt = nt > nb ? nt : nb;
    if ((nc != nt && nc != 1) || (na != nt && na != 1) || (nb != nt && nb != 1)) return;
    for (int i = 0; i < nt; i++) {
        IrSymTerm ci = c[nc == 1 ? 0 : i];
        if (ci.sym) return;
        t[i] = ci.c ? a[na == 1 ? 0 : i] : b[nb == 1 ? 0 : i];
    }
    set_terms(g, n->out[0], t, nt);
}
