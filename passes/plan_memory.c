/* plan_memory.c — assigns every intermediate tensor and every node
 * workspace an offset in one arena.
 *
 * Liveness over the schedule (g->nodes order): a temporary lives from the
 * step that produces it to the last step that reads it; a workspace lives
 * for its node's step only. Graph inputs, constants and graph outputs are
 * not in the arena (the caller owns them). Offsets come from the pure
 * planner in memplan.c; the overlap checker runs on every plan.
 */
#include "passes.h"
#include "memplan.h"
#include "../ir/op.h"

#include <stdlib.h>

int pass_plan_memory(Graph *g, Diag *d)
{
    int nv = g->n_values, nn = g->n_nodes;
    int *last = malloc(sizeof(int) * (size_t)(nv + 1));
    PlanBuf *bufs = malloc(sizeof(PlanBuf) * (size_t)(nv + nn + 1));
    void **owner = malloc(sizeof(void *) * (size_t)(nv + nn + 1));
    char *is_ws = malloc((size_t)(nv + nn + 1));
    GC_ASSERT(last && bufs && owner && is_ws);
    for (int i = 0; i < nv; i++) { last[i] = -1; g->values[i]->offset = -1; }
    for (int s = 0; s < nn; s++)
        for (int j = 0; j < g->nodes[s]->n_in; j++)
            if (g->nodes[s]->in[j]) last[g->nodes[s]->in[j]->id] = s;
    int nb = 0;
    for (int s = 0; s < nn; s++) {
        Node *n = g->nodes[s];
        const OpDesc *od = ir_op(n->op);
        for (int j = 0; j < n->n_out; j++) {
            Value *v = n->out[j];
            if (v->is_output) continue;
            int64_t bytes;
            /* shape inference already proved the byte size fits */
            int bad = ir_mul_ok(ir_numel(&v->shape), (int64_t)ir_dtype_size(v->dtype), &bytes);
            GC_ASSERT(!bad);
            bufs[nb] = (PlanBuf){bytes, s, last[v->id] > s ? last[v->id] : s, 0};
            owner[nb] = v;
            is_ws[nb++] = 0;
        }
        n->ws_offset = -1;
        n->ws_bytes = od->workspace ? od->workspace(n) : 0;
        if (n->ws_bytes) {
            bufs[nb] = (PlanBuf){(int64_t)n->ws_bytes, s, s, 0};
            owner[nb] = n;
            is_ws[nb++] = 1;
        }
    }
    int64_t total = memplan_greedy(bufs, nb);
    int a, b;
    int rc = 0;
    if (total < 0) rc = diag_error(d, "arena size overflows int64");
    else GC_ASSERT(memplan_check(bufs, nb, &a, &b) == 0);
    for (int i = 0; i < nb && !rc; i++) {
        if (is_ws[i]) ((Node *)owner[i])->ws_offset = bufs[i].offset;
        else ((Value *)owner[i])->offset = bufs[i].offset;
    }
    g->arena_bytes = total;
    free(last); free(bufs); free(owner); free(is_ws);
    return rc;
}
