/* infer_shapes.c — shape and dtype inference over the whole graph, with
 * constant folding on the way.
 *
 * Visits nodes in topological order and asks each op's description to set
 * its outputs' dtype and shape (ir_infer_node: the op's `infer`, then, for
 * symbolic inputs, its runtime-shape rule or the one-line refusal). Before asking, it checks what every op
 * shares: input/output counts, required inputs present and already typed.
 * After, it holds every output to the size policy (ir_check_tensor_size:
 * at most --max-tensor-bytes, 16 GiB by default; an element or byte count
 * that overflows int64 is over it too), as it holds the graph's inputs and
 * constants before the walk. This pass runs before anything that
 * allocates a tensor — folding, the interpreter (`graphc run` calls it
 * directly), memory planning — so a ConstantOfShape of [1e6,1e6] is refused
 * here, with its size, and never reaches malloc.
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

/* A node whose inference failed leaves no half-set shapes behind (an
 * output marked known with a dim its op could not bound, which a later
 * printer or kernel note would read): its outputs become unknown again. */
static int forget_outputs(Node *n)
{
    for (int j = 0; j < n->n_out; j++) n->out[j]->shape_known = 0;
    return -1;
}

int pass_infer_shapes(Graph *g, Diag *d)
{
    if (ir_toposort(g, d)) return -1;
    for (int i = 0; i < g->n_values; i++) {
        const Value *v = g->values[i];
        if (v->kind != VK_TEMP && v->shape_known && ir_check_tensor_size(g, NULL, v->kind == VK_CONST ? "constant" : "input", v, d))
            return -1;
    }
    int kept = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        Node *n = g->nodes[i];
        const OpDesc *od = ir_op(n->op);
        if (!od->infer) return diag_node_error(d, n, "op '%s' has no shape inference", od->name);
        for (int j = 0; j < n->n_in; j++)
            if (n->in[j] && !n->in[j]->shape_known)
                return diag_node_error(d, n, "input '%s' has no known shape", n->in[j]->name);
        for (int j = 0; j < n->n_out; j++) n->out[j]->shape_known = 0;
        if (ir_infer_node(g, n, d)) return forget_outputs(n);
        for (int j = 0; j < n->n_out; j++) {
            Value *v = n->out[j];
            GC_ASSERT(v->shape_known && "infer did not set every output");
            for (int k = 0; k < v->shape.rank; k++)
                if (v->shape.dims[k] < 0) {
                    diag_node_error(d, n, "output '%s' has negative dim %lld", v->name, (long long)v->shape.dims[k]);
                    return forget_outputs(n);
                }
            if (ir_check_tensor_size(g, n, "output", v, d)) return forget_outputs(n);
        }
        int folded = pass_fold_node(g, n, d);
        if (folded < 0) return -1;
        if (!folded) g->nodes[kept++] = n;
    }
    g->n_nodes = kept;
    for (int i = 0; i < kept; i++) g->nodes[i]->id = i;
    return 0;
}
