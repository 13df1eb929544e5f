/* fuse_layernorm.c — the LayerNorm that PyTorch exports before opset 17,
 * rewritten as one LayerNormalization node.
 *
 * The pattern, matched backwards from nothing but forwards from its mean:
 *     mean = ReduceMean(x, axes=A)          keepdims=1
 *     d    = Sub(x, mean)
 *     sq   = Pow(d, 2)        (or Mul(d, d))
 *     var  = ReduceMean(sq, axes=A)         keepdims=1
 *     ve   = Add(var, eps)    (either order; eps a one-element constant)
 *     std  = Sqrt(ve)
 *     nrm  = Div(d, std)
 *     [m   = Mul(nrm, gamma)] (either order)
 *     [y   = Add(m, beta)]    (either order)
 * where the reduced axes A, normalized, are the trailing axes a..rank-1
 * (the IR's ReduceMean takes axes as an attribute at every opset: the
 * frontend upgrades the other forms). It becomes
 *     y = LayerNormalization(x, gamma or ones, beta or absent) {axis=a, epsilon=eps}
 * at the place of the last node of the pattern, producing the same Value
 * (name and readers unchanged). Conditions: every interior value has no
 * reader outside the pattern and is no graph output (d has exactly its two
 * readers); the dtypes are one float type; the affine Mul and Add do not
 * broadcast x (their output has x's shape) and their operand has a shape
 * LayerNormalization accepts (rank at most rank-a, each dim equal to the
 * normalized dim or 1). A Mul or Add that does not qualify simply ends the
 * pattern before it. The interior nodes then die (rw_remove_dead).
 */
#include "passes.h"
#include "rewrite.h"
#include "../ir/op.h"

#include <stdio.h>
#include <string.h>

/* The sole reader of v (single use, not a graph output), else NULL. */
static Node *sole_reader(const Graph *g, const RwUses *u, const Value *v)
{
    if (!rw_single_use(u, v)) return NULL;
    for (int i = 0; i < g->n_nodes; i++)
        for (int j = 0; j < g->nodes[i]->n_in; j++)
            if (g->nodes[i]->in[j] == v) return g->nodes[i];
    return NULL;
}

/* For binary node n with one input `v`: the other input, else NULL. */
static Value *other_input(const Node *n, const Value *v)
{
    if (n->n_in != 2) return NULL;
    if (n->in[0] == v) return n->in[1];
    if (n->in[1] == v) return n->in[0];
    return NULL;
}

/* The first reduced axis when ReduceMean r (keepdims=1) reduces exactly the
 * trailing axes a..rank-1 of its input; -1 otherwise. */
static int trailing_axis(const Node *r)
{
    if (r->op != OP_ReduceMean || r->n_in != 1) return -1;
    if (r->attrs[ir_attr_index(r, "keepdims")].i != 1) return -1;
    const AttrVal *a = &r->attrs[ir_attr_index(r, "axes")];
    int rank = r->in[0]->shape.rank, mask[IR_MAX_RANK] = {0};
    if (!a->set || a->n < 1) return -1;
    for (int i = 0; i < a->n; i++) {
        int ax = ir_norm_axis(a->ints[i], rank);
        if (ax < 0 || mask[ax]) return -1;
        mask[ax] = 1;
    }
    int first = rank - a->n;
    for (int i = first; i < rank; i++)
        if (!mask[i]) return -1;
    return first;
}

/* Whether p can be LayerNormalization's Scale/B for x normalized from axis. */
static int affine_operand_ok(const Value *p, const Value *x, int axis)
{
    if (!p || p->dtype != x->dtype) return 0;
    int nr = x->shape.rank - axis;
    if (p->shape.rank > nr) return 0;
    for (int k = 0; k < p->shape.rank; k++) {
        int64_t pd = p->shape.dims[p->shape.rank - 1 - k], xd = x->shape.dims[x->shape.rank - 1 - k];
        if (pd != xd && pd != 1) return 0;
    }
    return 1;
}

/* Matches the pattern from `mean` and rewrites it; 1 if fused. */
static int fuse(Graph *g, Node *mean, const RwUses *u)
{
    int axis = trailing_axis(mean);
    if (axis < 0) return 0;
    Value *x = mean->in[0];
    if (!ir_dtype_is_float(x->dtype)) return 0;
    Node *sub = sole_reader(g, u, mean->out[0]);
    if (!sub || sub->op != OP_Sub || sub->n_in != 2 || sub->in[0] != x || sub->in[1] != mean->out[0]) return 0;
    Value *d = sub->out[0];
    if (!rw_same_type(d, x) || d->is_output) return 0;
    /* d's two readers: the square and the Div */
    Node *sq = NULL, *div = NULL;
    for (int i = 0; i < g->n_nodes; i++) {
        Node *n = g->nodes[i];
        if (n->n_in < 1 || (n->in[0] != d && (n->n_in < 2 || n->in[1] != d))) continue;
        if (n->op == OP_Div && n->in[0] == d && !div) div = n;
        else if (!sq) sq = n;
        else return 0;
    }
    if (!sq || !div) return 0;
    int is_pow = sq->op == OP_Pow && sq->n_in == 2 && sq->in[0] == d && sq->in[1] != d &&
                 ir_numel(&sq->in[1]->shape) == 1 && rw_const_all(sq->in[1], 2);
    int is_mul = sq->op == OP_Mul && sq->n_in == 2 && sq->in[0] == d && sq->in[1] == d;
    if ((!is_pow && !is_mul) || !rw_same_type(sq->out[0], x) || rw_uses(u, d) != 2 + is_mul) return 0;
    Node *var = sole_reader(g, u, sq->out[0]);
    if (!var || trailing_axis(var) != axis || !rw_same_type(var->out[0], mean->out[0])) return 0;
    Node *add = sole_reader(g, u, var->out[0]);
    Value *eps = add && add->op == OP_Add ? other_input(add, var->out[0]) : NULL;
    if (!eps || eps->kind != VK_CONST || ir_numel(&eps->shape) != 1 || eps->dtype != x->dtype) return 0;
    if (!rw_same_type(add->out[0], var->out[0])) return 0;
    Node *sqrt_n = sole_reader(g, u, add->out[0]);
    if (!sqrt_n || sqrt_n->op != OP_Sqrt) return 0;
    if (sole_reader(g, u, sqrt_n->out[0]) != div || div->in[1] != sqrt_n->out[0] || !rw_same_type(div->out[0], x))
        return 0;

    /* the optional affine tail */
    Node *last = div;
    Value *gamma = NULL, *beta = NULL;
    Node *nx = sole_reader(g, u, last->out[0]);
    if (nx && nx->op == OP_Mul) {
        Value *p = other_input(nx, last->out[0]);
        if (p != last->out[0] && affine_operand_ok(p, x, axis) && rw_same_type(nx->out[0], x)) {
            gamma = p;
            last = nx;
            nx = sole_reader(g, u, last->out[0]);
        }
    }
    if (nx && nx->op == OP_Add) {
        Value *p = other_input(nx, last->out[0]);
        if (p != last->out[0] && affine_operand_ok(p, x, axis) && rw_same_type(nx->out[0], x)) {
            beta = p;
            last = nx;
        }
    }
    if (!gamma) {
        Shape ns = ir_shape(x->shape.rank - axis, x->shape.dims + axis);
        size_t nb = (size_t)ir_numel(&ns) * ir_dtype_size(x->dtype);
        void *ones = ir_alloc(g, nb ? nb : 1);
        for (int64_t i = 0; i < ir_numel(&ns); i++) ir_store_f64(x->dtype, ones, (size_t)i, 1.0);
        char name[512];
        snprintf(name, sizeof name, "%s_scale", last->out[0]->name);
        gamma = ir_add_const(g, name, x->dtype, &ns, ones, 0);
    }
    Value *in[3] = {x, gamma, beta};
    double e = ir_load_f64(eps->dtype, eps->data, 0);
    Node *ln = rw_replace_node(g, last, OP_LayerNormalization, in, beta ? 3 : 2);
    ln->attrs[ir_attr_index(ln, "axis")].i = axis;
    ln->attrs[ir_attr_index(ln, "epsilon")].f = e;
    rw_check_node(ln);
    return 1;
}

int pass_fuse_layernorm(Graph *g, Diag *d)
{
    (void)d;
    rw_rewrite_each(g, OP_ReduceMean, fuse);
    return 0;
}
