/* infer_shapes.c — shape and dtype inference over the whole graph, with
 * constant folding on the way.
 *
 * Visits nodes in topological order and asks each op's description to set
 * its outputs' dtype and shape. Before asking, it checks what every op
 * shares: input/output counts, required inputs present and already typed.
 * After, it checks that every output got a shape whose element count and
 * byte size fit in int64 (an overflowing shape is an error, never a wrap).
 *
 * Each node whose inputs are constants (or whose op reads only shapes, like
 * Shape) is then folded at once (fold_constants.c) and leaves the schedule,
 * so a later node that needs a static operand — Reshape's `shape`, Slice's
 * `starts` — sees a constant even when an exporter computed it from Shape →
 * Gather → Concat. A node whose static operand is still not constant gets
 * its op's error ("input 'shape' must be a constant").
 */
#include "passes.h"
#include "../ir/op.h"

int pass_infer_shapes(Graph *g, Diag *d)
{
    if (ir_toposort(g, d)) return -1;
    int kept = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        Node *n = g->nodes[i];
        const OpDesc *od = ir_op(n->op);
        if (!od->infer) return diag_node_error(d, n, "op '%s' has no shape inference", od->name);
        for (int j = 0; j < n->n_in; j++)
            if (n->in[j] && !n->in[j]->shape_known)
                return diag_node_error(d, n, "input '%s' has no known shape", n->in[j]->name);
        for (int j = 0; j < n->n_out; j++) n->out[j]->shape_known = 0;
        if (od->infer(n, d)) return -1;
        for (int j = 0; j < n->n_out; j++) {
            Value *v = n->out[j];
            int64_t cnt, bytes;
            GC_ASSERT(v->shape_known && "infer did not set every output");
            for (int k = 0; k < v->shape.rank; k++)
                if (v->shape.dims[k] < 0)
                    return diag_node_error(d, n, "output '%s' has negative dim %lld", v->name, (long long)v->shape.dims[k]);
            if (ir_shape_numel(&v->shape, &cnt) || ir_mul_ok(cnt, (int64_t)ir_dtype_size(v->dtype), &bytes))
                return diag_node_error(d, n, "output '%s' is too large: its byte size overflows", v->name);
        }
        int folded = pass_fold_node(g, n, d);
        if (folded < 0) return -1;
        if (!folded) g->nodes[kept++] = n;
    }
    g->n_nodes = kept;
    for (int i = 0; i < kept; i++) g->nodes[i]->id = i;
    return 0;
}
