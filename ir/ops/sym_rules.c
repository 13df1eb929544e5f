/* sym_rules.c — how symbolic (runtime) dimensions flow through ops: the
 * rules that op descriptions name in their `infer_sym` facet, and
 * ir_infer_node, which runs an op's shape inference and then its rule.
 *
 * An op's `infer` works on dims alone, which for a symbolic dim is its
 * upper bound, so it computes every output's maximum shape unchanged;
 * ir_set_out leaves the outputs static. When some input has a symbolic dim,
 * the op's `infer_sym` rule then marks which output dims are symbolic and
 * checks that the op's structural constraints hold for every runtime value,
 * not only at the bound (a symbolic dim broadcasts against 1 or the same
 * symbol only; a matmul's K must be the same on both sides; ...). An op
 * without a rule refuses runtime shapes with one line naming the node, the
 * op and the value, never computing a result at the wrong size. Ops with a
 * scalar expression (the elementwise family) use the broadcasting rule
 * unless they name another.
 */
#include "../op.h"
#include "nn_attrs.h"
#include "shape_attrs.h"
#include "linalg_attrs.h"
#include "geometry.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int has_shape_val_input(const Node *n)
{
    for (int j = 0; j < n->n_in; j++)
        if (n->in[j] && n->in[j]->shape_val) return 1;
    return 0;
}

static int has_sym_input(const Node *n)
{
    for (int j = 0; j < n->n_in; j++)
        if (n->in[j] && ir_shape_has_sym(&n->in[j]->shape)) return 1;
    return 0;
}

/* The output dims `infer` marked IR_SYM_NEW (data-dependent) become
 * symbols of n, bounded by their dims (or the graph's max_dim); fresh[i]
 * gets a bit per such dim of output i, and the marks are cleared. Without
 * max_dim an unbounded one keeps its negative dim for the rule to resolve
 * from a shape value (unbounded_error refuses it otherwise). */
static int take_fresh(Graph *g, Node *n, uint32_t *fresh, uint32_t *unbounded, int64_t *factor, Diag *d)
{
    for (int i = 0; i < n->n_out; i++) {
        Shape *s = &n->out[i]->shape;
        fresh[i] = unbounded[i] = 0;
        factor[i] = 1;
        for (int k = 0; k < s->rank; k++) {
            if (s->sym[k] != IR_SYM_NEW) continue;
            s->sym[k] = 0;
            fresh[i] |= 1u << k;
            if (s->dims[k] >= 0) continue;
            unbounded[i] |= 1u << k;
            if (g->max_dim <= 0) continue;
            int64_t f = -s->dims[k];
            if (ir_mul_ok(f, g->max_dim, &s->dims[k]) || ir_mul_ok(factor[i], f, &factor[i]))
                return diag_node_error(d, n, "dim %d of output '%s' overflows int64 at --max-dim=%lld", k, n->out[i]->name,
                                       (long long)g->max_dim);
        }
    }
    return 0;
}

/* An unbounded fresh dim that the rule did not resolve, without max_dim. */
static int unbounded_error(const Graph *g, Node *n, const uint32_t *unbounded, Diag *d)
{
    if (g->max_dim > 0) return 0;
    for (int i = 0; i < n->n_out; i++) {
        const Shape *s = &n->out[i]->shape;
        for (int k = 0; k < s->rank; k++)
            if ((unbounded[i] >> k & 1) && !s->sym[k] && s->dims[k] < 0)
                return diag_node_error(d, n, "dim %d of output '%s' is known only at run time and nothing in the model bounds it; "
                                       "compile with --max-dim=N (its largest extent)", k, n->out[i]->name);
    }
    return 0;
}

int ir_infer_node(Graph *g, Node *n, Diag *d)
{
    const OpDesc *od = ir_op(n->op);
    if (od->infer(n, d)) return -1;
    uint32_t fresh_small[16], *fresh = n->n_out <= 8 ? fresh_small : calloc(2 * (size_t)n->n_out, sizeof *fresh);
    GC_ASSERT(fresh);
    uint32_t *unbounded = fresh + n->n_out;
    int64_t factor_small[8], *factor = n->n_out <= 8 ? factor_small : calloc((size_t)n->n_out, sizeof *factor);
    GC_ASSERT(factor);
    int rc = take_fresh(g, n, fresh, unbounded, factor, d);
    if (!rc && (has_sym_input(n) || has_shape_val_input(n))) {
        int (*rule)(Graph *, Node *, Diag *) = od->infer_sym ? od->infer_sym : od->scalar_expr ? ir_sym_broadcast : NULL;
        if (!rule) {
            for (int j = 0; j < n->n_in; j++)
                if (n->in[j] && ir_shape_has_sym(&n->in[j]->shape)) {
                    char b[160];
                    rc = diag_node_error(d, n, "op '%s' does not support runtime shapes yet (input '%s' is %s)", od->name,
                                         n->in[j]->name, ir_shape_str_g(g, &n->in[j]->shape, b, sizeof b));
                    break;
                }
        } else {
            rc = rule(g, n, d);
        }
    }
    if (!rc) rc = unbounded_error(g, n, unbounded, d);
    for (int i = 0; i < n->n_out && !rc; i++) {
        Shape *s = &n->out[i]->shape;
        int32_t lead = 0;
        for (int k = 0; k < s->rank; k++) {
            int resolved = s->sym[k] == IR_SYM_STATIC; /* the rule gave it a static extent */
            if (resolved) s->sym[k] = 0;
            if (!(fresh[i] >> k & 1) || s->sym[k] || resolved) continue;
            s->sym[k] = ir_sym_data(g, n, i, k, s->dims[k]);
            IrSym *sy = &g->syms[s->sym[k] - 1];
            sy->group = 0;
            if (unbounded[i] >> k & 1) {
                /* the dims nothing bounds share --max-dim (IrSym.group) */
                if (!lead) lead = s->sym[k];
                sy->group = lead;
                if (ir_mul_ok(factor[i], g->max_dim, &g->syms[lead - 1].group_cap))
                    g->syms[lead - 1].group_cap = INT64_MAX;
            }
        }
    }
    /* every output with symbolic dims: its most elements under the joint bounds */
    for (int i = 0; i < n->n_out && !rc; i++) {
        Value *v = n->out[i];
        int64_t raw;
        if (!ir_shape_has_sym(&v->shape)) continue;
        if (ir_shape_numel(&v->shape, &raw))
            rc = diag_node_error(d, n, "output '%s' has more elements at the bounds of its runtime dims than int64 holds%s", v->name,
                                 unbounded[i] ? "; give a smaller --max-dim" : "");
        else if (ir_shape_max_numel(g, &v->shape) < raw)
            v->numel_cap = ir_shape_max_numel(g, &v->shape);
    }
    if (!rc && od->infer_value) od->infer_value(g, n);
    if (fresh != fresh_small) free(fresh);
    if (factor != factor_small) free(factor);
    return rc;
}

/* "T" for a symbol, for messages. */
static const char *sym_name(const Graph *g, int32_t s) { return g && s <= g->n_syms ? ir_sym(g, s)->name : "?"; }

int ir_sym_same(Graph *g, Node *n, Diag *d)
{
    (void)g;
    (void)d;
    const Shape *xs = &n->in[0]->shape;
    for (int i = 0; i < n->n_out; i++) {
        Shape *ys = &n->out[i]->shape;
        GC_ASSERT(ys->rank == xs->rank);
        memcpy(ys->sym, xs->sym, sizeof ys->sym);
    }
    return 0;
}

/* Output dims broadcast from inputs ins[0..nin) aligned at the right: a
 * symbolic dim takes the symbol; every other operand's dim there must be 1
 * or the same symbol. */
static int broadcast_syms(Graph *g, Node *n, Value *const *ins, int nin, Shape *ys, int from, int to, int *rank_of,
                          Diag *d)
{
    for (int k = from; k < to; k++) {
        int32_t s = 0;
        int owner = -1;
        for (int j = 0; j < nin; j++) {
            if (!ins[j]) continue;
            int kj = rank_of[j] - (to - k);
            if (kj < 0 || !ins[j]->shape.sym[kj]) continue;
            if (!s) {
                s = ins[j]->shape.sym[kj];
                owner = j;
            } else if (ins[j]->shape.sym[kj] != s) {
                return diag_node_error(d, n, "runtime dims %s of input '%s' and %s of input '%s' do not broadcast",
                                       sym_name(g, s), ins[owner]->name, sym_name(g, ins[j]->shape.sym[kj]),
                                       ins[j]->name);
            }
        }
        if (!s) continue;
        for (int j = 0; j < nin; j++) {
            if (!ins[j]) continue;
            int kj = rank_of[j] - (to - k);
            if (kj >= 0 && !ins[j]->shape.sym[kj] && ins[j]->shape.dims[kj] != 1)
                return diag_node_error(d, n, "dim %d of input '%s' (%lld) does not broadcast against runtime dim %s of input '%s'",
                                       kj, ins[j]->name, (long long)ins[j]->shape.dims[kj], sym_name(g, s),
                                       ins[owner]->name);
        }
        ys->sym[k] = s;
    }
    return 0;
}

int ir_sym_broadcast(Graph *g, Node *n, Diag *d)
{
    int rank_of[64];
    if (n->n_in > 64) return diag_node_error(d, n, "runtime shapes support at most 64 inputs here");
    for (int j = 0; j < n->n_in; j++) rank_of[j] = n->in[j] ? n->in[j]->shape.rank : 0;
    for (int i = 0; i < n->n_out; i++) {
        Shape *ys = &n->out[i]->shape;
        if (broadcast_syms(g, n, n->in, n->n_in, ys, 0, ys->rank, rank_of, d)) return -1;
    }
    return 0;
}

/* A's dim ka and B's dim kb are one contraction length: the same symbol,
 * or both static. */
static int same_dim(Graph *g, Node *n, const Value *a, int ka, const Value *b, int kb, Diag *d)
{
    if (a->shape.sym[ka] == b->shape.sym[kb]) return 0;
    char sa[64], sb[64];
    snprintf(sa, sizeof sa, "%s", a->shape.sym[ka] ? sym_name(g, a->shape.sym[ka]) : "");
    snprintf(sb, sizeof sb, "%s", b->shape.sym[kb] ? sym_name(g, b->shape.sym[kb]) : "");
    return diag_node_error(d, n, "dim %d of input '%s' (%s%s%lld) and dim %d of input '%s' (%s%s%lld) must be the same at run time",
                           ka, a->name, sa, *sa ? "<=" : "", (long long)a->shape.dims[ka], kb, b->name, sb,
                           *sb ? "<=" : "", (long long)b->shape.dims[kb]);
}

/* The epilogue operands (inputs from `first` on: ir/fused.h) broadcast
 * into Y: a symbolic dim of theirs is Y's, a static one is 1 where Y's is
 * symbolic. */
static int epilogue_syms(Graph *g, Node *n, int first, Diag *d)
{
    const Shape *ys = &n->out[0]->shape;
    for (int j = first; j < n->n_in; j++) {
        const Value *e = n->in[j];
        if (!e) continue;
        for (int k = 0; k < e->shape.rank; k++) {
            int ky = ys->rank - e->shape.rank + k;
            int32_t s = ky >= 0 ? ys->sym[ky] : 0;
            if (e->shape.sym[k] ? e->shape.sym[k] != s : s && e->shape.dims[k] != 1)
                return diag_node_error(d, n, "epilogue input '%s' does not broadcast against the runtime shape of Y (%s)",
                                       e->name, s ? sym_name(g, s) : "static");
        }
    }
    return 0;
}

int ir_sym_matmul(Graph *g, Node *n, Diag *d)
{
    Value *a = n->in[0], *b = n->in[1];
    Shape *ys = &n->out[0]->shape;
    int ra = a->shape.rank, rb = b->shape.rank;
    if (ra < 2 || rb < 2)
        return diag_node_error(d, n, "runtime shapes need both inputs of rank 2 or more (got %d and %d)", ra, rb);
    if (same_dim(g, n, a, ra - 1, b, rb - 2, d)) return -1;
    Value *ins[2] = {a, b};
    int rank_of[2] = {ra - 2, rb - 2};
    if (broadcast_syms(g, n, ins, 2, ys, 0, ys->rank - 2, rank_of, d)) return -1;
    ys->sym[ys->rank - 2] = a->shape.sym[ra - 2];
    ys->sym[ys->rank - 1] = b->shape.sym[rb - 1];
    return epilogue_syms(g, n, 2, d);
}

int ir_sym_gemm(Graph *g, Node *n, Diag *d)
{
    Value *a = n->in[0], *b = n->in[1];
    int ta = n->attrs[GEMM_TRANS_A].i != 0, tb = n->attrs[GEMM_TRANS_B].i != 0;
    Shape *ys = &n->out[0]->shape;
    if (same_dim(g, n, a, ta ? 0 : 1, b, tb ? 1 : 0, d)) return -1;
    ys->sym[0] = a->shape.sym[ta ? 1 : 0];
    ys->sym[1] = b->shape.sym[tb ? 0 : 1];
    if (ir_has_input(n, 2)) {
        const Value *c = n->in[2];
        for (int k = 0; k < c->shape.rank; k++) {
            int ky = 2 - c->shape.rank + k;
            if (c->shape.sym[k] ? c->shape.sym[k] != ys->sym[ky] : ys->sym[ky] && c->shape.dims[k] != 1)
                return diag_node_error(d, n, "input 'C' dim %d does not broadcast against the runtime shape of Y", k);
        }
    }
    return epilogue_syms(g, n, 3, d);
}

/* Dims [axis, rank) of X must be static (a normalization over them). */
int ir_sym_layernorm(Graph *g, Node *n, Diag *d)
{
    const Shape *xs = &n->in[0]->shape;
    int a = ir_norm_axis(n->attrs[LN_AXIS].i, xs->rank);
    GC_ASSERT(a >= 0);
    for (int k = a; k < xs->rank; k++)
        if (xs->sym[k])
            return diag_node_error(d, n, "normalizes over runtime dim %s of input '%s'; runtime shapes need static dims from the axis on",
                                   sym_name(g, xs->sym[k]), n->in[0]->name);
    for (int j = 1; j < n->n_in; j++)
        if (n->in[j] && ir_shape_has_sym(&n->in[j]->shape))
            return diag_node_error(d, n, "input '%s' must have a static shape", n->in[j]->name);
    for (int i = 0; i < n->n_out; i++) {
        Shape *ys = &n->out[i]->shape;
        for (int k = 0; k < a && k < ys->rank; k++) ys->sym[k] = xs->sym[k];
    }
    return 0;
}

int ir_sym_view(Graph *g, Node *n, Diag *d)
{
    const Shape *xs = &n->in[0]->shape;
    Shape *ys = &n->out[0]->shape;
    int j = 0;
    int64_t acc_in = 1;
    for (int i = 0; i < xs->rank; i++) {
        if (!xs->sym[i]) {
            acc_in *= xs->dims[i];
            continue;
        }
        int64_t acc_out = 1;
        while (j < ys->rank && acc_out < acc_in) acc_out *= ys->dims[j++];
        while (j < ys->rank && ys->dims[j] == 1 && acc_out == acc_in) j++;
        if (acc_out != acc_in || j >= ys->rank || ys->dims[j] != xs->dims[i]) {
            char b1[160], b2[160];
            return diag_node_error(d, n, "runtime dim %s of input '%s' %s must stay one dim of the output (got %s)",
                                   sym_name(g, xs->sym[i]), n->in[0]->name, ir_shape_str_g(g, xs, b1, sizeof b1),
                                   ir_shape_str(ys, b2, sizeof b2));
        }
        ys->sym[j++] = xs->sym[i];
        acc_in = 1;
    }
    return 0;
}

int ir_sym_transpose(Graph *g, Node *n, Diag *d)
{
    (void)g;
    (void)d;
    int perm[IR_MAX_RANK];
    ir_transpose_perm(n, perm);
    Shape *ys = &n->out[0]->shape;
    for (int i = 0; i < ys->rank; i++) ys->sym[i] = n->in[0]->shape.sym[perm[i]];
    return 0;
}

int ir_sym_concat(Graph *g, Node *n, Diag *d)
{
    Shape *ys = &n->out[0]->shape;
    int a = ir_norm_axis(n->attrs[CONCAT_AXIS].i, ys->rank);
    GC_ASSERT(a >= 0);
    const Value *x0 = n->in[0];
    /* along the axis: the sum of the inputs' extents (a derived symbol when
     * one is a runtime dim, as when a detector concatenates per-class
     * selections) */
    IrSymTerm len = {0, 0};
    for (int j = 0; j < n->n_in; j++) {
        const Value *x = n->in[j];
        for (int k = 0; k < ys->rank; k++)
            if (k != a && x->shape.sym[k] != x0->shape.sym[k])
                return diag_node_error(d, n, "dim %d of inputs '%s' and '%s' must be the same at run time", k, x0->name,
                                       x->name);
        IrSymTerm t = x->shape.sym[a] ? (IrSymTerm){x->shape.sym[a], 0} : (IrSymTerm){0, x->shape.dims[a]};
        if (!len.sym && !t.sym) len.c += t.c;
        else if (!(t.sym == 0 && t.c == 0)) len = len.sym == 0 && len.c == 0 ? t : (IrSymTerm){ir_sym_derive(g, SYM_ADD, len, t), 0};
    }
    memcpy(ys->sym, x0->shape.sym, sizeof ys->sym);
    ys->sym[a] = len.sym;
    return 0;
}

/* Windowed ops over [N, C, spatial...] (Conv, pools, BatchNormalization): a
 * runtime batch only. Input 0's dim 0 may be symbolic, its other dims and
 * every other own input (weights, bias, statistics) static; each output's
 * dim 0 takes the batch. Conv's epilogue operands (from `first` on)
 * broadcast into Y as for MatMul. */
int ir_sym_batch(Graph *g, Node *n, Diag *d)
{
    const Shape *xs = &n->in[0]->shape;
    char b[160];
    for (int k = 1; k < xs->rank; k++)
        if (xs->sym[k])
            return diag_node_error(d, n, "runtime shapes support a runtime batch (dim 0) only; input '%s' is %s", n->in[0]->name,
                                   ir_shape_str_g(g, xs, b, sizeof b));
    int first = n->op == OP_Conv ? 3 : n->n_in;
    for (int j = 1; j < first && j < n->n_in; j++)
        if (n->in[j] && ir_shape_has_sym(&n->in[j]->shape))
            return diag_node_error(d, n, "input '%s' must have a static shape (%s)", n->in[j]->name,
                                   ir_shape_str_g(g, &n->in[j]->shape, b, sizeof b));
    for (int i = 0; i < n->n_out; i++) {
        Shape *ys = &n->out[i]->shape;
        /* BatchNormalization's running statistics ([C]) have no batch */
        if (ys->rank == xs->rank && ys->dims[0] == xs->dims[0]) ys->sym[0] = xs->sym[0];
    }
    return epilogue_syms(g, n, first, d);
}

/* Runtime shapes: output dim i broadcasts input dim j against shape term
 * q. A runtime input dim meets the term 1 or its own symbol; a runtime
 * term meets an input dim 1 (or none). What that does not decide (a
 * runtime term against a static input dim, say) stays the data-dependent
 * dim `infer` asked for, which the kernel sets and checks. */
int ir_sym_expand(Graph *g, Node *n, Diag *d)
{
    const Shape *xs = &n->in[0]->shape;
    Shape *ys = &n->out[0]->shape;
    IrSymTerm t[IR_MAX_RANK];
    int R = ys->rank, r = xs->rank, is_const = n->in[1]->kind == VK_CONST;
    int k = ir_value_terms(n->in[1], t, IR_MAX_RANK);
    for (int i = 0; i < R; i++) {
        int j = i - (R - r), q = i - (R - k);
        int32_t xsym = j >= 0 ? xs->sym[j] : 0;
        int64_t xd = j >= 0 ? xs->dims[j] : 1;
        IrSymTerm tq = k >= 0 && q >= 0 ? t[q] : (IrSymTerm){0, 1};
        if (is_const) {
            /* `infer` broadcast the constant shape; a runtime input dim needs a 1 there */
            if (xsym && tq.c != 1)
                return diag_node_error(d, n, "input 'shape' expands runtime dim %s of input 'input' to %lld",
                                       sym_name(g, xsym), (long long)tq.c);
            ys->sym[i] = xsym;
            continue;
        }
        if (k < 0) continue; /* no terms: every dim data-dependent */
        if (!tq.sym && tq.c < 0)
            return diag_node_error(d, n, "input 'shape' value %lld at index %d is negative", (long long)tq.c, q);
        if (tq.sym ? tq.sym == xsym || (!xsym && xd == 1) : tq.c == 1) {
            /* the term's symbol, or the input dim where the term is 1 */
            int32_t s = tq.sym ? tq.sym : xsym;
            ys->sym[i] = s ? s : IR_SYM_STATIC;
            ys->dims[i] = s ? ir_sym(g, s)->hi : xd;
        } else if (!tq.sym && !xsym) {
            if (xd != 1 && xd != tq.c)
                return diag_node_error(d, n, "input 'shape' value %lld at index %d does not broadcast against dim %d (%lld) of input 'input'",
                                       (long long)tq.c, q, j, (long long)xd);
            ys->sym[i] = IR_SYM_STATIC;
            ys->dims[i] = tq.c;
        }
    }
    return 0;
}
