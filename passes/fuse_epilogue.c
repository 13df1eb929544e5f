/* fuse_epilogue.c — bias, activation and residual folded into the op that
 * produces their operand: Conv, Gemm and MatMul (every op whose attribute
 * schema has an `epilogue`, see ir/fused.h).
 *
 * Such an op P absorbs the one reader R of its output y when
 *   - y has exactly one reader, R, and is not a graph output,
 *   - R is elementwise (a scalar-expression op or a Fused node),
 *   - R's output has y's shape and dtype (so R's other operands broadcast
 *     to y) and y is not f16/bf16,
 *   - P's inputs plus R's other operands fit P's input count.
 * P's epilogue becomes R's expression with y in place of R's operand y
 * (or P's previous epilogue there, so absorbing repeats) and R's other
 * operands as P's inputs: ones P already reads are referenced by index, the
 * others are appended from P's first epilogue operand on (absent optional
 * own inputs padded). P takes over R's output Value, so names and readers
 * downstream stay; P moves to R's place in the schedule (R's operands may be
 * computed after P, and nothing between reads y), R is dropped and y swept.
 * P keeps its name.
 */
#include "passes.h"
#include "../ir/fused.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int index_of(const Graph *g, const Node *n)
{
    for (int k = 0; k < g->n_nodes; k++)
        if (g->nodes[k] == n) return k;
    GC_ASSERT(0 && "node not in the schedule");
    return -1;
}

/* The single reader of v, or NULL. */
static Node *only_reader(const Graph *g, const Value *v)
{
    if (ir_value_uses(g, v) != 1) return NULL;
    for (int i = 0; i < g->n_nodes; i++)
        for (int j = 0; j < g->nodes[i]->n_in; j++)
            if (g->nodes[i]->in[j] == v) return g->nodes[i];
    return NULL;
}

/* 1 when p absorbed its reader, 0 when not, -1 on error. */
static int absorb(Graph *g, Node *p, int ei, int first, Diag *d)
{
    if (p->n_out != 1) return 0;
    Value *y = p->out[0];
    if (y->is_output || y->dtype == DT_F16 || y->dtype == DT_BF16) return 0;
    Node *r = only_reader(g, y);
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
    if (!epi) {
        free(ins);
        return 0;
    }

    p->in = ir_alloc(g, sizeof(Value *) * (size_t)nin);
    memcpy(p->in, ins, sizeof(Value *) * (size_t)nin);
    p->n_in = nin;
    free(ins);
    p->attrs[ei].set = 1;
    p->attrs[ei].s = ir_strdup(g, epi);
    free(epi);
    Value *z = r->out[0];
    p->out[0] = z;
    z->producer = p;
    z->producer_out = 0;
    /* p moves to r's place; r leaves the schedule */
    int ip = index_of(g, p), ir = index_of(g, r);
    GC_ASSERT(ip < ir);
    memmove(&g->nodes[ip], &g->nodes[ip + 1], sizeof(Node *) * (size_t)(ir - ip - 1));
    g->nodes[ir - 1] = p;
    memmove(&g->nodes[ir], &g->nodes[ir + 1], sizeof(Node *) * (size_t)(g->n_nodes - ir - 1));
    g->n_nodes--;
    if (od->infer(p, d)) return -1;
    return 1;
}

int pass_fuse_epilogue(Graph *g, Diag *d)
{
    for (int i = 0; i < g->n_nodes; i++) {
        Node *p = g->nodes[i];
        int ei = ir_attr_index(p, "epilogue");
        int first = ir_epilogue_first(p->op);
        if (ei < 0 || first < 0) continue;
        int rc;
        while ((rc = absorb(g, p, ei, first, d)) == 1) {
        }
        if (rc < 0) return -1;
        /* p moved later; the node now at i has not been visited yet */
        if (g->nodes[i] != p) i--;
    }
    for (int i = 0; i < g->n_nodes; i++) g->nodes[i]->id = i;
    ir_sweep_values(g);
    return 0;
}
