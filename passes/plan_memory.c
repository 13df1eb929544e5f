/* plan_memory.c — assigns every intermediate tensor and every node
 * workspace an offset in one arena.
 *
 * Storage roots. A value owns storage unless it is a view: at -O2, the
 * output 0 of a node whose op has the `view` facet (its bytes are input 0's
 * bytes: Reshape, Flatten, Squeeze, Unsqueeze, Identity) becomes an alias
 * of the root of input 0 — unless it is a graph output, which the caller
 * owns. Roots are temporaries (arena), graph inputs, constants or graph
 * outputs (the caller's buffers); the backend emits no code for an aliased
 * view node.
 *
 * Liveness over the schedule (g->nodes order): a root lives from the step
 * that produces it to the last step that reads it or any of its aliases
 * (or whose kernel reads it beyond the node's inputs, as the target says:
 * Graph.extra_reads); a workspace lives for its node's step only. Only temporaries that are not
 * graph outputs take arena space.
 *
 * In-place (-O2). At step s, for each InplacePair (i, o) of the node's op:
 * out[o] takes the buffer of in[i]'s root r when r is an arena temporary,
 * out[o] is not a graph output, both have the same byte size and element
 * count, r is last read at s (aliases included), no other input of the node
 * has root r, and no other output of the node took r's buffer. The op
 * description promises that it reads each input element before writing the
 * same output element, so the sharing is invisible. Sharing values are
 * members of one buffer whose lifetime spans them all; since out[o] is
 * always fresh, the "union" is an assignment of out[o] to r's buffer.
 *
 * -O0 makes no views and no in-place sharing and plans with greedy by size
 * only: its arena is the baseline the optimizations are measured against.
 * -O2 runs both strategies of memplan.c and keeps the smaller arena.
 *
 * Offsets come from the pure planner in memplan.c; the overlap checker runs
 * on every plan (a failure is a compiler bug and aborts). The arena is held
 * to the same size policy as one tensor (ir_tensor_limit, --max-tensor-bytes):
 * a plan over it, or one whose size overflows int64, is a user error. The figures
 * g->plan_lower_bound and g->plan_no_reuse describe the same buffers.
 * pass_plan_entries rebuilds the buffers from the planned graph (the
 * decisions are a function of the graph and its aliases) to print them.
 */
#include "passes.h"
#include "memplan.h"
#include "../ir/op.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The buffers of one plan and which values and nodes own them. */
typedef struct Plan {
    const Graph *g;
    int *last;      /* per value id: last step reading it or an alias of it (roots) */
    int *buf;       /* per value id: buffer index, -1 when not in the arena */
    PlanBuf *bufs;
    const Value **owner; /* per buffer: first value stored there (NULL: workspace) */
    const Node **ws_node; /* per buffer: the node of a workspace */
    int nb;
} Plan;

static Value *root_of(Value *v) { return v->alias ? v->alias : v; }

/* Whether v is an arena temporary: produced by a node, not a graph output,
 * not a view. */
static int in_arena(const Value *v) { return v->kind == VK_TEMP && !v->is_output && !v->alias; }

/* Makes output 0 of each view node an alias of input 0's root (-O2). */
static void make_views(Graph *g)
{
    for (int s = 0; s < g->n_nodes; s++) {
        Node *n = g->nodes[s];
        if (!ir_op(n->op)->view || n->n_out != 1 || n->n_in < 1 || !n->in[0]) continue;
        Value *y = n->out[0], *x = n->in[0];
        if (y->is_output || y->kind != VK_TEMP) continue;
        if (ir_value_bytes(y) != ir_value_bytes(x)) continue; /* the facet promises equality; stay safe */
        y->alias = root_of(x);
    }
}

/* The bytes of v's buffer: what the target stores of it (Graph.stored_bytes), at most its own. */
static int64_t planned_bytes(const Graph *g, const Value *v)
{
    const int64_t whole = ir_value_bytes(v), s = g->stored_bytes ? g->stored_bytes(g, v) : -1;
    return s >= 0 && s < whole ? s : whole;
}

/* Whether node n at step s may write output o into input i's buffer. */
static int can_share(const Plan *p, const Node *n, int s, int i, int o, const int *claimed)
{
    if (i < 0 || i >= n->n_in || o < 0 || o >= n->n_out || !n->in[i]) return 0;
    const Value *x = n->in[i], *y = n->out[o];
    const Value *r = x->alias ? x->alias : x;
    if (x->kind != VK_TEMP || !in_arena(r) || !in_arena(y)) return 0;
    if (p->buf[y->id] >= 0) return 0; /* already shares another input's buffer */
    int b = p->buf[r->id];
    if (b < 0 || claimed[b] == s) return 0;
    int64_t bytes = ir_value_bytes(y);
    if (bytes <= 0 || ir_value_bytes(x) != bytes || ir_value_bytes(r) != bytes) return 0;
    if (planned_bytes(p->g, y) != bytes || planned_bytes(p->g, r) != bytes) return 0; /* a value not stored whole */
    if (ir_numel(&x->shape) != ir_numel(&y->shape)) return 0;
    if (p->last[r->id] != s) return 0;
    for (int k = 0; k < n->n_in; k++)
        if (k != i && n->in[k] && root_of(n->in[k]) == r) return 0;
    return 1;
}

/* Liveness, in-place decisions and the buffer list of g as it stands
 * (aliases already set); offsets are not assigned. */
static void plan_build(Plan *p, const Graph *g)
{
    int nv = g->n_values, nn = g->n_nodes;
    memset(p, 0, sizeof *p);
    p->g = g;
    p->last = malloc(sizeof(int) * (size_t)(nv + 1));
    p->buf = malloc(sizeof(int) * (size_t)(nv + 1));
    p->bufs = malloc(sizeof(PlanBuf) * (size_t)(nv + nn + 1));
    p->owner = malloc(sizeof(Value *) * (size_t)(nv + nn + 1));
    p->ws_node = malloc(sizeof(Node *) * (size_t)(nv + nn + 1));
    int *claimed = malloc(sizeof(int) * (size_t)(nv + nn + 1));
    GC_ASSERT(p->last && p->buf && p->bufs && p->owner && p->ws_node && claimed);
    for (int i = 0; i < nv; i++) p->last[i] = p->buf[i] = -1;
    for (int s = 0; s < nn; s++)
        for (int j = 0; j < g->nodes[s]->n_in; j++)
            if (g->nodes[s]->in[j]) p->last[root_of(g->nodes[s]->in[j])->id] = s;
    if (g->extra_reads) g->extra_reads(g, p->last); /* reads by the target's kernels beyond their inputs */
    if (g->plan_keep_forward) { /* the no-backward-dependency baseline: forward values live to the end */
        int s = 0;
        while (s < nn && !g->nodes[s]->backward) s++;
        for (int t = 0; t < s; t++)
            for (int j = 0; j < g->nodes[t]->n_out; j++) p->last[g->nodes[t]->out[j]->id] = nn - 1;
    }
    for (int s = 0; s < nn; s++) {
        const Node *n = g->nodes[s];
        const OpDesc *od = ir_op(n->op);
        if (g->opt_level >= 2)
            for (int k = 0; k < od->n_inplace; k++) {
                int i = od->inplace[k].in, o = od->inplace[k].out;
                if (!can_share(p, n, s, i, o, claimed)) continue;
                const Value *y = n->out[o];
                int b = p->buf[root_of(n->in[i])->id];
                p->buf[y->id] = b;
                claimed[b] = s;
                if (p->last[y->id] > p->bufs[b].last) p->bufs[b].last = p->last[y->id];
            }
        for (int j = 0; j < n->n_out; j++) {
            const Value *v = n->out[j];
            if (!in_arena(v) || p->buf[v->id] >= 0) continue;
            p->bufs[p->nb] = (PlanBuf){planned_bytes(g, v), s, p->last[v->id] > s ? p->last[v->id] : s, 0};
            p->owner[p->nb] = v;
            p->ws_node[p->nb] = NULL;
            claimed[p->nb] = -1;
            p->buf[v->id] = p->nb++;
        }
        if (n->ws_bytes) { /* set by pass_plan_memory from the target's workspace policy */
            p->bufs[p->nb] = (PlanBuf){(int64_t)n->ws_bytes, s, s, 0};
            p->owner[p->nb] = NULL;
            p->ws_node[p->nb] = n;
            claimed[p->nb++] = -1;
        }
    }
    free(claimed);
}

static void plan_free(Plan *p)
{
    free(p->last);
    free(p->buf);
    free(p->bufs);
    free(p->owner);
    free(p->ws_node);
}

int pass_plan_memory(Graph *g, Diag *d)
{
    for (int i = 0; i < g->n_values; i++) {
        g->values[i]->offset = -1;
        g->values[i]->alias = NULL;
    }
    for (int s = 0; s < g->n_nodes; s++) {
        Node *n = g->nodes[s];
        n->ws_offset = -1;
        n->ws_bytes = g->workspace ? g->workspace(g, n) : 0;
    }
    if (g->opt_level >= 2) make_views(g);

    Plan p;
    plan_build(&p, g);
    int64_t total = g->opt_level >= 2 ? memplan_plan(p.bufs, p.nb, NULL) : memplan_greedy(p.bufs, p.nb);
    int rc = 0;
    int64_t limit = ir_tensor_limit(g);
    if (total < 0) {
        rc = diag_error(d, "the memory arena would be more than %lld bytes, over the %lld-byte limit (--max-tensor-bytes)",
                        (long long)INT64_MAX, (long long)limit);
    } else if (total > limit) {
        rc = diag_error(d, "the memory arena would be %lld bytes, over the %lld-byte limit (--max-tensor-bytes)",
                        (long long)total, (long long)limit);
    } else {
        int a, b;
        GC_ASSERT(memplan_check(p.bufs, p.nb, &a, &b) == 0);
        for (int i = 0; i < g->n_values; i++) {
            Value *v = g->values[i];
            if (p.buf[i] >= 0) v->offset = p.bufs[p.buf[i]].offset;
        }
        for (int i = 0; i < g->n_values; i++) { /* views: the root's offset, -1 outside the arena */
            Value *v = g->values[i];
            if (v->alias) v->offset = v->alias->offset;
        }
        for (int k = 0; k < p.nb; k++)
            if (p.ws_node[k]) ((Node *)p.ws_node[k])->ws_offset = p.bufs[k].offset;
    }
    g->arena_bytes = total;
    g->plan_lower_bound = memplan_lower_bound(p.bufs, p.nb);
    g->plan_no_reuse = memplan_no_reuse(p.bufs, p.nb);
    plan_free(&p);
    return rc;
}

int pass_plan_entries(const Graph *g, PlanEntry **out)
{
    Plan p;
    plan_build(&p, g);
    size_t names = 0;
    for (int k = 0; k < p.nb; k++)
        if (p.ws_node[k]) names += strlen(p.ws_node[k]->name) + sizeof " (workspace)";
    PlanEntry *e = malloc(sizeof(PlanEntry) * (size_t)(p.nb + 1) + names);
    GC_ASSERT(e);
    char *text = (char *)(e + p.nb + 1);
    for (int k = 0; k < p.nb; k++) { /* buffers were made in step order */
        PlanEntry *x = &e[k];
        x->size = p.bufs[k].size;
        x->first = p.bufs[k].first;
        x->last = p.bufs[k].last;
        x->is_workspace = p.ws_node[k] != NULL;
        if (p.ws_node[k]) {
            size_t len = strlen(p.ws_node[k]->name) + sizeof " (workspace)";
            snprintf(text, len, "%s (workspace)", p.ws_node[k]->name);
            x->name = text;
            x->offset = p.ws_node[k]->ws_offset;
            text += len;
        } else {
            x->name = p.owner[k]->name;
            x->offset = p.owner[k]->offset;
        }
    }
    int nb = p.nb;
    plan_free(&p);
    *out = e;
    return nb;
}
