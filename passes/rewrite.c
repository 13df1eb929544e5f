/* rewrite.c — graph-editing helpers for the rewriting passes (contracts in
 * rewrite.h).
 *
 * The passes rewrite edges, not the schedule: a node that a rewrite makes
 * useless stays in g->nodes with no readers until rw_remove_dead() walks the
 * schedule backwards once, dropping every node whose outputs are neither
 * read nor graph outputs and releasing its inputs as it goes (the order is
 * topological, so a producer is always visited after all its readers).
 *
 * Renaming a graph output (rw_forward): when the value to drop is a graph
 * output `old` and its replacement `v` is an ordinary node output, the two
 * Values swap producers — v's producer now writes `old`, every reader of v
 * reads `old`, and old's former producer writes `v`, which nobody reads, so
 * it dies. The Value objects (and thus names) of graph outputs never change.
 */
#include "rewrite.h"
#include "../ir/op.h"

#include <stdlib.h>
#include <string.h>

void rw_replace_uses(Graph *g, Value *old, Value *nv)
{
    for (int i = 0; i < g->n_nodes; i++) {
        Node *n = g->nodes[i];
        for (int j = 0; j < n->n_in; j++)
            if (n->in[j] == old) n->in[j] = nv;
    }
}

int rw_forward(Graph *g, Value *old, Value *v)
{
    GC_ASSERT(old != v && old->dtype == v->dtype && ir_shape_eq(&old->shape, &v->shape));
    if (!old->is_output) {
        rw_replace_uses(g, old, v);
        return 1;
    }
    if (v->kind != VK_TEMP || v->is_output || !old->producer) {
        rw_replace_uses(g, old, v); /* the node stays for the graph output only */
        return 0;
    }
    rw_swap_producers(g, old, v);
    return 1;
}

void rw_swap_producers(Graph *g, Value *old, Value *v)
{
    GC_ASSERT(old->producer && v->producer && !v->is_output);
    Node *vp = v->producer, *op = old->producer;
    int vi = v->producer_out, oi = old->producer_out;
    rw_replace_uses(g, v, old);
    vp->out[vi] = old;
    old->producer = vp;
    old->producer_out = vi;
    op->out[oi] = v;
    v->producer = op;
    v->producer_out = oi;
}

/* Index of n in the schedule (node ids may be stale during a pass). */
static int node_index(const Graph *g, const Node *n)
{
    if (n->id >= 0 && n->id < g->n_nodes && g->nodes[n->id] == n) return n->id;
    for (int i = 0; i < g->n_nodes; i++)
        if (g->nodes[i] == n) return i;
    GC_ASSERT(0 && "node is not scheduled");
    return -1;
}

Node *rw_replace_node(Graph *g, Node *old, OpKind op, Value *const *in, int n_in)
{
    int at = node_index(g, old);
    Node *n = ir_add_node(g, op, old->name, in, n_in, old->n_out, NULL);
    g->n_nodes--; /* ir_add_node appended it; it takes old's slot instead */
    g->nodes[at] = n;
    n->id = old->id;
    for (int i = 0; i < old->n_out; i++) {
        Value *v = old->out[i];
        n->out[i]->producer = NULL; /* the fresh value is dropped by the next sweep */
        n->out[i] = v;
        v->producer = n;
        v->producer_out = i;
    }
    return n;
}

int rw_same_type(const Value *a, const Value *b)
{
    return a->dtype == b->dtype && ir_shape_eq(&a->shape, &b->shape);
}

void rw_check_node(Node *n)
{
    DType t[IR_MAX_RANK];
    Shape s[IR_MAX_RANK] = {{0}};
    GC_ASSERT(n->n_out <= IR_MAX_RANK);
    for (int i = 0; i < n->n_out; i++) { t[i] = n->out[i]->dtype; s[i] = n->out[i]->shape; }
    Diag d = {0};
    int rc = ir_op(n->op)->infer(n, &d);
    GC_ASSERT(rc == 0 && "a rewritten node fails shape inference");
    for (int i = 0; i < n->n_out; i++) {
        /* infer alone leaves symbolic dims static: compare dims, keep the symbols */
        Shape got = n->out[i]->shape;
        memcpy(got.sym, s[i].sym, sizeof got.sym);
        GC_ASSERT(n->out[i]->dtype == t[i] && ir_shape_eq(&got, &s[i]));
        n->out[i]->shape = s[i];
    }
}

void rw_uses_take(const Graph *g, RwUses *u)
{
    u->cap = g->n_values;
    u->n = calloc((size_t)u->cap + 1, sizeof *u->n);
    GC_ASSERT(u->n);
    for (int i = 0; i < g->n_nodes; i++) {
        const Node *n = g->nodes[i];
        for (int j = 0; j < n->n_in; j++)
            if (n->in[j] && n->in[j]->id < u->cap) u->n[n->in[j]->id]++;
    }
}

void rw_uses_free(RwUses *u)
{
    free(u->n);
    u->n = NULL;
    u->cap = 0;
}

int rw_uses(const RwUses *u, const Value *v)
{
    return v->id < u->cap ? u->n[v->id] : INT32_MAX;
}

int rw_single_use(const RwUses *u, const Value *v)
{
    return !v->is_output && rw_uses(u, v) == 1;
}

void rw_uses_fresh(Graph *g, RwUses *u)
{
    for (int i = 0; i < g->n_values; i++) g->values[i]->id = i;
    rw_uses_take(g, u);
}

int rw_rewrite_each(Graph *g, OpKind op, int (*fn)(Graph *g, Node *n, const RwUses *u))
{
    RwUses u;
    rw_uses_fresh(g, &u);
    int done = 0;
    for (int i = 0; i < g->n_nodes; i++)
        if (g->nodes[i]->op == op) done += fn(g, g->nodes[i], &u);
    rw_uses_free(&u);
    if (done) rw_remove_dead(g);
    return done;
}

int rw_remove_dead(Graph *g)
{
    RwUses u;
    rw_uses_fresh(g, &u);
    char *dead = calloc((size_t)g->n_nodes + 1, 1);
    GC_ASSERT(dead);
    int removed = 0;
    for (int i = g->n_nodes - 1; i >= 0; i--) {
        const Node *n = g->nodes[i];
        int live = 0;
        for (int j = 0; j < n->n_out && !live; j++) live = n->out[j]->is_output || u.n[n->out[j]->id] > 0;
        if (live) continue;
        dead[i] = 1;
        removed++;
        for (int j = 0; j < n->n_in; j++)
            if (n->in[j]) u.n[n->in[j]->id]--;
    }
    int k = 0;
    for (int i = 0; i < g->n_nodes; i++)
        if (!dead[i]) {
            g->nodes[i]->id = k;
            g->nodes[k++] = g->nodes[i];
        }
    g->n_nodes = k;
    free(dead);
    rw_uses_free(&u);
    ir_sweep_values(g);
    return removed;
}

int rw_const_all(const Value *v, double x)
{
    if (!v || v->kind != VK_CONST) return 0;
    int64_t n = ir_numel(&v->shape);
    for (int64_t i = 0; i < n; i++)
        if (ir_load_f64(v->dtype, v->data, (size_t)i) != x) return 0;
    return 1;
}

int rw_attr_eq(AttrKind k, const AttrVal *a, const AttrVal *b)
{
    if (a->set != b->set) return 0;
    if (!a->set) return 1;
    switch (k) {
    case ATTR_INT: return a->i == b->i;
    case ATTR_FLOAT: return memcmp(&a->f, &b->f, sizeof a->f) == 0;
    case ATTR_STRING: return (a->s && b->s) ? strcmp(a->s, b->s) == 0 : a->s == b->s;
    case ATTR_INTS: return a->n == b->n && (a->n == 0 || memcmp(a->ints, b->ints, sizeof(int64_t) * (size_t)a->n) == 0);
    case ATTR_FLOATS:
        return a->n == b->n && (a->n == 0 || memcmp(a->floats, b->floats, sizeof(double) * (size_t)a->n) == 0);
    case ATTR_TENSOR:
        return a->t.dtype == b->t.dtype && ir_shape_eq(&a->t.shape, &b->t.shape) && a->t.nbytes == b->t.nbytes &&
               (a->t.nbytes == 0 || memcmp(a->t.data, b->t.data, a->t.nbytes) == 0);
    }
    return 0;
}

int rw_const_eq(const Value *a, const Value *b)
{
    return a->kind == VK_CONST && b->kind == VK_CONST && a->dtype == b->dtype && ir_shape_eq(&a->shape, &b->shape) &&
           a->nbytes == b->nbytes && (a->nbytes == 0 || memcmp(a->data, b->data, a->nbytes) == 0);
}
