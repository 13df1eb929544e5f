/* simplify.c — local simplifications, common-subexpression elimination and
 * dead-code elimination, repeated until nothing changes.
 *
 * Rules, each applied to every node in schedule order:
 * - no-op nodes: a view (OpDesc.view: Identity, Reshape, Flatten, Squeeze,
 *   Unsqueeze) whose output has its input's shape; Dropout in inference
 *   (training_mode absent or a false constant) whose mask output nobody
 *   reads; a Cast whose output has its input's dtype; a Transpose with the
 *   identity perm; a Pad whose pads are all constant zeros (PyTorch's
 *   AvgPool2d export adds one). The output is forwarded to the input
 *   (rw_forward).
 * - reshape chains: a view of a view reads the first one's input. A
 *   Reshape whose shape operand has no 0 (0 copies an input dim) keeps its
 *   operand; any other reshape becomes a Reshape to a new constant holding
 *   its (static) output shape.
 * - Transpose chains: Transpose(perm2) of Transpose(perm1) is one Transpose
 *   with perm[j] = perm1[perm2[j]], or nothing when that is the identity.
 *   A Transpose that moves only dims of size 1 ([1,128,256] to [128,1,256],
 *   as a batch-1 sequence model's exports have) keeps the bytes in their
 *   order: it becomes a Reshape to a constant of its static output shape,
 *   a view that costs no copy.
 * - algebraic identities: x*1, 1*x, x+0, 0+x, x-0, x/1 where the constant
 *   is all ones / all zeros and the result has x's dtype and shape (a
 *   constant that broadcasts x to a larger shape, or changes its dtype,
 *   keeps the node). x+0 forwards x even for x = -0.0 (the sign of a zero
 *   sum is the only difference), as every graph optimizer does.
 * - CSE: equal constants (dtype, shape, bytes) are merged first; then a node
 *   with the same op, the same input values and equal attributes (lists,
 *   strings and tensors by content) as an earlier node is replaced by it.
 *   Every op is deterministic, so this is always sound.
 * - DCE: nodes whose outputs nobody reads and that are no graph output go.
 *
 * Which ops a rule applies to comes from the op description (the `view`
 * facet) or, where no facet says it, a small table or test inside the rule
 * (the algebraic units; Dropout, Cast, Transpose), as in QBE's simplifier;
 * everything else comes from the values' dtypes and shapes. Graph outputs keep their names: forwarding a
 * graph output renames the replacement's producer (see rewrite.c) or, when
 * that is impossible (the replacement is a graph input, a constant or
 * another graph output), leaves the node alone.
 */
#include "passes.h"
#include "rewrite.h"
#include "../ir/op.h"
#include "../ir/ops/geometry.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SIMPLIFY_MAX_ROUNDS 16

/* x OP c == x when c is all `unit`; `right_only`: only for c on the right. */
static const struct {
    OpKind op;
    double unit;
    int right_only;
} algebra[] = {
    {OP_Mul, 1, 0},
    {OP_Add, 0, 0},
    {OP_Sub, 0, 1},
    {OP_Div, 1, 1},
};

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* Views (OpDesc.view: Reshape, Flatten, Squeeze, Unsqueeze, Identity):
 * output 0 is input 0's elements in the same order under a new shape; any
 * other input is a static shape operand. */
static int is_reshape(const Node *n)
{
    return ir_op(n->op)->view && n->n_in >= 1 && n->in[0] && n->n_out == 1;
}

static int is_identity_perm(const int *perm, int r)
{
    for (int i = 0; i < r; i++)
        if (perm[i] != i) return 0;
    return 1;
}

/* ---- forwarding in one sweep ---------------------------------------------- */

/* A sweep forwards many values; rw_forward() rewrites every reader at once,
 * a scan of the whole schedule per call, which is quadratic when thousands
 * of nodes go. Instead a sweep records old -> new in `rep` and rewrites
 * each node's inputs when the sweep reaches it: readers come after their
 * producers, so every reader is reached after the record is made, and the
 * rules see the rewritten inputs, as they would after rw_forward. A graph
 * output goes through rw_forward at once (it may rename producers); the
 * pending records are applied to the whole schedule first. */
typedef struct Sweep {
    Graph *g;
    Value **rep; /* by value id (below cap): the value that stands for it */
    RwUses uses; /* reader counts when the sweep began */
} Sweep;

static void sweep_begin(Graph *g, Sweep *s)
{
    s->g = g;
    rw_uses_fresh(g, &s->uses);
    s->rep = calloc((size_t)s->uses.cap + 1, sizeof *s->rep);
    GC_ASSERT(s->rep);
}

static Value *resolve(const Sweep *s, Value *v)
{
    while (v && v->id < s->uses.cap && s->rep[v->id] && s->g->values[v->id] == v) v = s->rep[v->id];
    return v;
}

/* Rewrites n's inputs through the records; returns how many changed. */
static int sweep_visit(const Sweep *s, Node *n)
{
    int changed = 0;
    for (int j = 0; j < n->n_in; j++) {
        Value *v = resolve(s, n->in[j]);
        if (v != n->in[j]) {
            n->in[j] = v;
            changed++;
        }
    }
    return changed;
}

/* Applies every record to the whole schedule and forgets them. */
static void sweep_flush(Sweep *s)
{
    for (int i = 0; i < s->g->n_nodes; i++) sweep_visit(s, s->g->nodes[i]);
    memset(s->rep, 0, sizeof *s->rep * (size_t)s->uses.cap);
}

/* rw_forward(old, v), deferred where old is not a graph output. */
static int sweep_forward(Sweep *s, Value *old, Value *v)
{
    GC_ASSERT(old != v && old->dtype == v->dtype && ir_shape_eq(&old->shape, &v->shape));
    if (!old->is_output && old->id < s->uses.cap && s->g->values[old->id] == old) {
        s->rep[old->id] = v;
        return 1;
    }
    sweep_flush(s);
    return rw_forward(s->g, old, v);
}

static void sweep_end(Sweep *s)
{
    sweep_flush(s);
    free(s->rep);
    rw_uses_free(&s->uses);
}

/* Whether Dropout n is the identity on its data: inference and no reader
 * of its mask. */
static int dropout_is_identity(const Sweep *s, const Node *n)
{
    if (n->n_in > 2 && n->in[2] && !rw_const_all(n->in[2], 0)) return 0;
    return n->n_out < 2 || (!n->out[1]->is_output && rw_uses(&s->uses, n->out[1]) == 0);
}

/* The value n's output 0 equals when n does nothing, else NULL. */
static Value *noop_source(const Sweep *s, const Node *n)
{
    if (n->n_in < 1 || !n->in[0] || n->n_out < 1) return NULL;
    Value *x = n->in[0], *y = n->out[0];
    if (!rw_same_type(x, y)) return NULL;
    if (n->op == OP_Cast || is_reshape(n)) return x;
    if (n->op == OP_Dropout) return dropout_is_identity(s, n) ? x : NULL;
    if (n->op == OP_Transpose) {
        int perm[IR_MAX_RANK];
        ir_transpose_perm(n, perm);
        return is_identity_perm(perm, x->shape.rank) ? x : NULL;
    }
    if (n->op == OP_Pad && n->n_in > 1 && n->in[1]) { /* every pad a constant 0 (any mode) */
        int64_t pads[2 * IR_MAX_RANK];
        int k = ir_const_ints(n->in[1], pads, 2 * IR_MAX_RANK);
        if (k <= 0) return NULL;
        for (int i = 0; i < k; i++)
            if (pads[i] != 0) return NULL;
        return x;
    }
    return NULL;
}

/* x when n is `x OP unit` (see the algebra table), else NULL. */
static Value *algebra_source(const Node *n)
{
    for (int i = 0; i < COUNT(algebra); i++) {
        if (n->op != algebra[i].op || n->n_in != 2) continue;
        for (int k = algebra[i].right_only ? 1 : 0; k < 2; k++) {
            Value *c = n->in[k], *x = n->in[1 - k];
            if (rw_const_all(c, algebra[i].unit) && rw_same_type(x, n->out[0])) return x;
        }
    }
    return NULL;
}

/* A reshape of a reshape reads the inner one's input. Returns 1 if changed. */
static int merge_reshapes(Graph *g, Node *n)
{
    if (!is_reshape(n)) return 0;
    const Node *p = n->in[0]->producer;
    if (!p || !is_reshape(p)) return 0;
    Value *x = p->in[0], *y = n->out[0];
    for (int i = 0; i < y->shape.rank; i++)
        if (y->shape.dims[i] == 0) return 0; /* 0 in a shape operand means "copy" */
    /* A Reshape keeps its shape operand unless a 0 in it copies an input dim. */
    int64_t shp[IR_MAX_RANK];
    int k = n->op == OP_Reshape ? ir_const_ints(n->in[1], shp, IR_MAX_RANK) : -1;
    int keep = k >= 0;
    if (keep && n->attrs[ir_attr_index(n, "allowzero")].i == 0)
        for (int i = 0; i < k; i++) keep &= shp[i] != 0;
    if (keep) {
        n->in[0] = x;
        rw_check_node(n);
        return 1;
    }
    if (ir_shape_has_sym(&y->shape)) return 0; /* a runtime dim has no literal to write */
    Shape s1 = ir_shape(1, (int64_t[]){y->shape.rank});
    char name[512];
    snprintf(name, sizeof name, "%s_shape", y->name);
    Value *sv = ir_add_const(g, name, DT_I64, &s1, y->shape.dims, 1);
    Value *in[2] = {x, sv};
    rw_check_node(rw_replace_node(g, n, OP_Reshape, in, 2));
    return 1;
}

/* Transpose of a Transpose: one Transpose with the composed permutation. */
static int merge_transposes(Graph *g, Node *n)
{
    if (n->op != OP_Transpose) return 0;
    Node *p = n->in[0]->producer;
    if (!p || p->op != OP_Transpose) return 0;
    int p1[IR_MAX_RANK], p2[IR_MAX_RANK], r = n->in[0]->shape.rank;
    ir_transpose_perm(p, p1);
    ir_transpose_perm(n, p2);
    AttrVal *a = &n->attrs[ir_attr_index(n, "perm")];
    int64_t *perm = ir_alloc(g, sizeof(int64_t) * (size_t)(r ? r : 1));
    for (int j = 0; j < r; j++) perm[j] = p1[p2[j]];
    a->set = 1;
    a->n = r;
    a->ints = perm;
    n->in[0] = p->in[0];
    rw_check_node(n);
    return 1;
}

/* A Transpose that only moves dims of size 1 ([1,128,256] -> [128,1,256]):
 * the same bytes in the same order, so a Reshape (a view: no copy). */
static int transpose_to_reshape(Graph *g, Node *n)
{
    if (n->op != OP_Transpose || !n->in[0]->shape_known || !n->out[0]->shape_known) return 0;
    const Value *x = n->in[0], *y = n->out[0];
    if (ir_shape_has_sym(&y->shape)) return 0;
    int perm[IR_MAX_RANK], last = -1;
    ir_transpose_perm(n, perm);
    if (is_identity_perm(perm, y->shape.rank)) return 0; /* a no-op: forwarded, or kept for a graph output */
    for (int i = 0; i < y->shape.rank; i++) {
        if (x->shape.dims[perm[i]] == 1) continue;
        if (perm[i] < last) return 0; /* two dims of size > 1 swap: a real transpose */
        last = perm[i];
    }
    for (int i = 0; i < y->shape.rank; i++)
        if (y->shape.dims[i] == 0) return 0; /* empty: nothing to gain; 0 in a shape operand means "copy" */
    Shape s1 = ir_shape(1, (int64_t[]){y->shape.rank});
    char name[512];
    snprintf(name, sizeof name, "%s_shape", y->name);
    Value *sv = ir_add_const(g, name, DT_I64, &s1, y->shape.dims, 1);
    Value *in[2] = {n->in[0], sv};
    rw_check_node(rw_replace_node(g, n, OP_Reshape, in, 2));
    return 1;
}

/* One sweep of the local rules over the schedule; returns the changes. */
static int local_rules(Graph *g)
{
    int changed = 0;
    Sweep s;
    sweep_begin(g, &s);
    for (int i = 0; i < g->n_nodes; i++) {
        Node *n = g->nodes[i];
        sweep_visit(&s, n);
        Value *src = noop_source(&s, n);
        if (!src) src = algebra_source(n);
        if (src && sweep_forward(&s, n->out[0], src)) {
            changed++;
            continue;
        }
        changed += merge_reshapes(g, n);
        changed += transpose_to_reshape(g, n);
        changed += merge_transposes(g, n);
    }
    sweep_end(&s);
    return changed;
}

/* ---- CSE ------------------------------------------------------------------ */

static uint64_t const_hash(const Value *v)
{
    uint64_t h = ir_hash_mix(IR_HASH_SEED, (uint64_t)v->dtype);
    for (int i = 0; i < v->shape.rank; i++) h = ir_hash_mix(h, (uint64_t)v->shape.dims[i]);
    const unsigned char *p = v->data;
    for (size_t i = 0; i < v->nbytes; i++) h = ir_hash_mix(h, p[i]);
    return h;
}

static uint64_t node_hash(const Node *n)
{
    uint64_t h = ir_hash_mix(IR_HASH_SEED, (uint64_t)n->op);
    h = ir_hash_mix(h, (uint64_t)n->n_in);
    h = ir_hash_mix(h, (uint64_t)n->n_out);
    for (int j = 0; j < n->n_in; j++) h = ir_hash_mix(h, n->in[j] ? (uint64_t)n->in[j]->id + 1 : 0);
    return h;
}

static int same_node(const Node *a, const Node *b)
{
    if (a->op != b->op || a->n_in != b->n_in || a->n_out != b->n_out) return 0;
    for (int j = 0; j < a->n_in; j++)
        if (a->in[j] != b->in[j]) return 0;
    const OpDesc *od = ir_op(a->op);
    for (int k = 0; k < od->n_attrs; k++)
        if (!rw_attr_eq(od->attrs[k].kind, &a->attrs[k], &b->attrs[k])) return 0;
    /* two NonZero of one mask have the same count but each its own
     * data-dependent symbol, which their readers' shapes name */
    for (int j = 0; j < a->n_out; j++)
        if (!ir_shape_eq(&a->out[j]->shape, &b->out[j]->shape)) return 0;
    return 1;
}

/* Open-addressing table of pointers keyed by a 64-bit hash. */
typedef struct Table {
    void **item;
    uint64_t *hash;
    int cap;
} Table;

static void table_init(Table *t, int n)
{
    t->cap = 16;
    while (t->cap < 2 * n + 2) t->cap *= 2;
    t->item = calloc((size_t)t->cap, sizeof *t->item);
    t->hash = calloc((size_t)t->cap, sizeof *t->hash);
    GC_ASSERT(t->item && t->hash);
}

static void table_free(Table *t)
{
    free(t->item);
    free(t->hash);
}

/* The first entry with hash h for which eq(entry, key) holds; otherwise key
 * is inserted and NULL returned. */
static void *table_find_or_add(Table *t, uint64_t h, void *key, int (*eq)(const void *, const void *))
{
    uint64_t mask = (uint64_t)t->cap - 1, i = h & mask;
    for (; t->item[i]; i = (i + 1) & mask)
        if (t->hash[i] == h && eq(t->item[i], key)) return t->item[i];
    t->item[i] = key;
    t->hash[i] = h;
    return NULL;
}

static int const_eq(const void *a, const void *b) { return rw_const_eq(a, b); }
static int node_eq(const void *a, const void *b) { return same_node(a, b); }

/* Node inputs read the first of equal constants. */
static int merge_constants(Graph *g)
{
    Value **rep = calloc((size_t)g->n_values + 1, sizeof *rep);
    GC_ASSERT(rep);
    Table t;
    table_init(&t, g->n_values);
    for (int i = 0; i < g->n_values; i++) {
        Value *v = g->values[i];
        GC_ASSERT(v->id == i);
        if (v->kind != VK_CONST) continue;
        Value *first = table_find_or_add(&t, const_hash(v), v, const_eq);
        rep[i] = first ? first : v;
    }
    int changed = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        Node *n = g->nodes[i];
        for (int j = 0; j < n->n_in; j++) {
            Value *v = n->in[j];
            if (v && v->kind == VK_CONST && rep[v->id] != v) {
                n->in[j] = rep[v->id];
                changed++;
            }
        }
    }
    table_free(&t);
    free(rep);
    return changed;
}

/* A node equal to an earlier one gives way to it. */
static int merge_nodes(Graph *g)
{
    Table t;
    table_init(&t, g->n_nodes);
    Sweep s;
    sweep_begin(g, &s);
    int changed = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        Node *n = g->nodes[i];
        sweep_visit(&s, n);
        if (n->n_out == 0) continue;
        Node *m = table_find_or_add(&t, node_hash(n), n, node_eq);
        if (!m) continue;
        /* n's readers all come later, so the counts are still exact for its outputs */
        for (int j = 0; j < n->n_out; j++) {
            Value *v = n->out[j];
            if (v->is_output || rw_uses(&s.uses, v) > 0) changed += sweep_forward(&s, v, m->out[j]);
        }
    }
    sweep_end(&s);
    table_free(&t);
    return changed;
}

int pass_simplify(Graph *g, Diag *d)
{
    (void)d;
    for (int i = 0; i < g->n_values; i++) g->values[i]->id = i;
    for (int round = 0; round < SIMPLIFY_MAX_ROUNDS; round++) {
        int changed = local_rules(g);
        changed += merge_constants(g);
        changed += merge_nodes(g);
        changed += rw_remove_dead(g);
        if (!changed) break;
    }
    return 0;
}
