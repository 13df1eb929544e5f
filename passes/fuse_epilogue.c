/* fuse_epilogue.c — bias, activation and residual folded into the op that
 * produces their operand: Conv, Gemm and MatMul (every op whose attribute
 * schema has an `epilogue`, see ir/fused.h).
 *
 * Such an op P absorbs the one reader R of its output y when
 *   - y has exactly one reader, R, and is not a graph output,
 *   - R is elementwise (a scalar-expression op or a Fused node),
 *   - R's output has y's shape and dtype (so R's other operands broadcast
 *     to y),
 *   - P's inputs plus R's other operands fit P's input count, and
 *   - the epilogue stays within FUSED_MAX_OPS ops and FUSED_MAX_DEPTH
 *     nesting (a long elementwise chain after a MatMul is not one epilogue).
 * P's epilogue becomes R's expression with y in place of R's operand y
 * (or P's previous epilogue there, so absorbing repeats) and R's other
 * operands as P's inputs: ones P already reads are referenced by index, the
 * others are appended from P's first epilogue operand on (absent optional
 * own inputs padded). P takes over R's output Value, so names and readers
 * downstream stay; P moves to R's place in the schedule (R's operands may be
 * computed after P, and nothing between reads y), R is dropped and y swept.
 * P keeps its name.
 *
 * Reader counts and the reader of each once-read value are taken once and
 * updated as R's operands move to P; P's move is recorded in place (P takes
 * R's slot, P's old slot is emptied) and the schedule compacted at the end,
 * so the pass is linear in the graph's size.
 */
#include "passes.h"
#include "../ir/fused.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct Epi {
    Graph *g;
    int *uses;      /* by value id: node inputs reading it */
    Node **reader;  /* by value id: its reader, valid when uses is 1 */
    int *slot;      /* by node id: its index in g->nodes */
    char *done;     /* by node id: visited */
} Epi;

static void note_reads(Epi *e, Node *n, int delta)
{
    for (int j = 0; j < n->n_in; j++)
        if (n->in[j]) {
            e->uses[n->in[j]->id] += delta;
            if (delta > 0) e->reader[n->in[j]->id] = n;
        }
}

/* The single reader of v, or NULL. */
static Node *only_reader(const Epi *e, const Value *v)
{
    return e->uses[v->id] == 1 ? e->reader[v->id] : NULL;
}

/* Ops (one '(' each: attribute values never hold one) and nesting depth of
 * an expression text. */
static void expr_size(const char *s, int *ops, int *depth)
{
    int d = 0;
    *ops = *depth = 0;
    for (; *s; s++) {
        if (*s == '(') {
            ++*ops;
            if (++d > *depth) *depth = d;
        } else if (*s == ')') {
            d--;
        }
    }
}

/* 1 when p absorbed its reader, 0 when not, -1 on error. */
static int absorb(Epi *e, Node *p, int ei, int first, Diag *d)
{
    Graph *g = e->g;
    if (p->n_out != 1) return 0;
    Value *y = p->out[0];
    if (y->is_output) return 0;
    Node *r = only_reader(e, y);
    if (!r || r->n_out != 1) return 0;
    if (r->out[0]->dtype != y->dtype || !ir_shape_eq(&r->out[0]->shape, &y->shape)) return 0;
    char *rexpr = ir_fused_node_expr(r);
    if (!rexpr) return 0;

    const OpDesc *od = ir_op(p->op);
    int cap = od->max_in;
    Value **ins = calloc((size_t)cap + 1, sizeof *ins);
    char (*nm)[16] = calloc((size_t)r->n_in + 1, sizeof *nm);
    const char **rep = calloc((size_t)r->n_in + 1, sizeof *rep);
    GC_ASSERT(ins && nm && rep);
    int nin = p->n_in, ok = 1;
    memcpy(ins, p->in, sizeof(Value *) * (size_t)nin);
    const char *old = p->attrs[ei].set ? p->attrs[ei].s : "y";
    for (int k = 0; k < r->n_in && ok; k++) {
        Value *v = r->in[k];
        if (!v) continue;
        if (v == y) {
            rep[k] = old;
            continue;
        }
        int s = -1;
        for (int q = 0; q < nin && s < 0; q++)
            if (ins[q] == v) s = q;
        if (s < 0) {
            if (nin < first) nin = first; /* pad absent optional own inputs */
            if (nin >= cap) ok = 0;
            else s = nin++;
            if (ok) ins[s] = v;
        }
        snprintf(nm[k], sizeof nm[k], "x%d", s);
        rep[k] = nm[k];
    }
    char *epi = ok ? ir_fused_subst(rexpr, rep, r->n_in, NULL) : NULL;
    free(rexpr);
    free(nm);
    free(rep);
    int ops, depth;
    if (epi) expr_size(epi, &ops, &depth);
    if (epi && (ops > FUSED_MAX_OPS || depth > FUSED_MAX_DEPTH)) {
        free(epi);
        epi = NULL;
    }
    if (!epi) {
        free(ins);
        return 0;
    }

    note_reads(e, p, -1);
    note_reads(e, r, -1);
    p->in = ir_alloc(g, sizeof(Value *) * (size_t)nin);
    memcpy(p->in, ins, sizeof(Value *) * (size_t)nin);
    p->n_in = nin;
    free(ins);
    note_reads(e, p, +1);
    p->attrs[ei].set = 1;
    p->attrs[ei].s = ir_strdup(g, epi);
    free(epi);
    Value *z = r->out[0];
    p->out[0] = z;
    z->producer = p;
    z->producer_out = 0;
    /* p moves to r's place; r leaves the schedule */
    GC_ASSERT(e->slot[p->id] < e->slot[r->id]);
    g->nodes[e->slot[p->id]] = NULL;
    g->nodes[e->slot[r->id]] = p;
    e->slot[p->id] = e->slot[r->id];
    e->slot[r->id] = -1;
    if (ir_infer_node(e->g, p, d)) return -1;
    return 1;
}

int pass_fuse_epilogue(Graph *g, Diag *d)
{
    int nn = g->n_nodes;
    for (int i = 0; i < g->n_values; i++) g->values[i]->id = i;
    Epi e = {g, calloc((size_t)g->n_values + 1, sizeof(int)), calloc((size_t)g->n_values + 1, sizeof(Node *)),
             calloc((size_t)nn + 1, sizeof(int)), calloc((size_t)nn + 1, 1)};
    GC_ASSERT(e.uses && e.reader && e.slot && e.done);
    for (int i = 0; i < nn; i++) {
        g->nodes[i]->id = i;
        e.slot[i] = i;
        note_reads(&e, g->nodes[i], +1);
    }
    int rc = 0;
    for (int i = 0; i < nn && rc >= 0; i++) {
        Node *p = g->nodes[i];
        if (!p || e.done[p->id]) continue; /* emptied, or p moved here after its visit */
        e.done[p->id] = 1;
        int ei = ir_attr_index(p, "epilogue");
        int first = ir_epilogue_first(p->op);
        if (ei < 0 || first < 0) continue;
        while ((rc = absorb(&e, p, ei, first, d)) == 1) {
        }
    }
    int k = 0;
    for (int i = 0; i < nn; i++)
        if (g->nodes[i]) g->nodes[k++] = g->nodes[i];
    g->n_nodes = k;
    for (int i = 0; i < g->n_nodes; i++) g->nodes[i]->id = i;
    free(e.uses);
    free(e.reader);
    free(e.slot);
    free(e.done);
    if (rc < 0) return -1;
    ir_sweep_values(g);
    return 0;
}
