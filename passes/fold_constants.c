/* fold_constants.c — constant folding and dead-value elimination.
 *
 * Folding. A node whose inputs are all constants is evaluated at compile
 * time with its op's reference evaluation (OpDesc.eval, on doubles), and its
 * outputs become constants: the data is stored in the output dtype in the
 * graph arena (ir_store_f64 rounding), the value turns VK_CONST with no
 * producer, and the node leaves the schedule. An op marked `shape_only`
 * (Shape, Size) reads only its inputs' shapes, so it folds as soon as those
 * are known, whatever its inputs hold. A shape value (Value.shape_val)
 * whose terms are all constants folds to them too.
 *
 * Folding runs inside shape inference (pass_fold_node is called on each node
 * right after its infer), so the Shape → Gather → Unsqueeze → Concat chains
 * that PyTorch exports become constants before Reshape, Slice or Expand
 * read them as their static `shape`/`starts` operands. The pass
 * "fold-constants" that follows folds whatever is left (nothing, after
 * infer-shapes) and removes what nothing uses: nodes no output depends on
 * (ir_toposort) and values no live node reads or writes (the constants whose
 * only readers were folded, unused declared constants, outputs of dropped
 * nodes). Graph inputs and outputs always stay; an output that became a
 * constant is still produced (the backend copies it).
 *
 * Limits, chosen and documented here:
 * - Size cap: a node whose outputs total more than FOLD_MAX_BYTES is folded
 *   only when they are no larger than its constant inputs (a Transpose of a
 *   weight folds; a ConstantOfShape / Expand that would blow a scalar up to
 *   a huge tensor stays a runtime node and keeps the weights small).
 * - Precision: evaluation is in double, as in the interpreter, so i64
 *   values beyond 2^53 may lose low bits (they are not shape-like in
 *   practice). The INT64_MAX sentinel ("slice to the end") is kept exact:
 *   a double at or above 2^63 stores as INT64_MAX.
 * - An op without eval is never folded; an eval error on constant data is
 *   reported (the same node would fail in the interpreter).
 *
 * Afterwards ir_sweep_values() drops the values nothing uses any more and
 * renumbers the rest.
 */
#include "passes.h"
#include "../ir/op.h"

#include <stdlib.h>
#include <string.h>

#define FOLD_MAX_BYTES ((int64_t)16 << 20)

/* Stores element i of a folded output; see the INT64_MAX note above. */
static void store_elem(DType t, void *data, size_t i, double x)
{
    if (t == DT_I64 && x >= 9223372036854775808.0) {
        int64_t m = INT64_MAX;
        memcpy((char *)data + 8 * i, &m, 8);
        return;
    }
    ir_store_f64(t, data, i, x);
}

/* 1 when n may be folded now: it has an eval, its inputs are constants (or
 * only their shapes matter) and its outputs pass the size cap. */
static int foldable(const Node *n)
{
    const OpDesc *od = ir_op(n->op);
    if (!od->eval) return 0;
    int64_t in_bytes = 0, out_bytes = 0;
    for (int j = 0; j < n->n_in; j++) {
        const Value *v = n->in[j];
        if (!v) continue;
        if (v->kind != VK_CONST && !od->shape_only) return 0;
        if (od->shape_only && ir_shape_has_sym(&v->shape)) return 0; /* known only at run time */
        if (v->kind == VK_CONST) in_bytes += ir_value_bytes(v);
    }
    for (int j = 0; j < n->n_out; j++) {
        if (!n->out[j]->shape_known) return 0;
        out_bytes += ir_value_bytes(n->out[j]);
    }
    return out_bytes <= FOLD_MAX_BYTES || out_bytes <= in_bytes;
}

/* Evaluates n (foldable) and turns its outputs into constants. */
static int fold(Graph *g, Node *n, Diag *d)
{
    const OpDesc *od = ir_op(n->op);
    int ni = n->n_in, no = n->n_out, rc = 0;
    double **in = calloc((size_t)ni + 1, sizeof *in);
    double **out = calloc((size_t)no + 1, sizeof *out);
    GC_ASSERT(in && out);
    for (int j = 0; j < ni; j++) {
        const Value *v = n->in[j];
        if (!v || v->kind != VK_CONST || od->shape_only) continue; /* eval reads no data */
        int64_t cnt = ir_numel(&v->shape);
        in[j] = malloc(sizeof(double) * (size_t)(cnt ? cnt : 1));
        GC_ASSERT(in[j]);
        for (int64_t k = 0; k < cnt; k++) in[j][k] = ir_load_f64(v->dtype, v->data, (size_t)k);
    }
    for (int j = 0; j < no; j++) {
        int64_t cnt = ir_numel(&n->out[j]->shape);
        out[j] = calloc((size_t)(cnt ? cnt : 1), sizeof(double));
        GC_ASSERT(out[j]);
    }
    rc = ir_outputs_empty(n) ? 0 : od->eval(n, (const double *const *)in, (double *const *)out, d);
    for (int j = 0; j < no && !rc; j++) {
        Value *v = n->out[j];
        int64_t cnt = ir_numel(&v->shape);
        size_t nbytes = (size_t)ir_value_bytes(v);
        void *data = ir_alloc(g, nbytes ? nbytes : 1);
        for (int64_t k = 0; k < cnt; k++) store_elem(v->dtype, data, (size_t)k, out[j][k]);
        v->kind = VK_CONST;
        v->producer = NULL;
        v->producer_out = 0;
        v->data = data;
        v->nbytes = nbytes;
    }
    for (int j = 0; j < ni; j++) free(in[j]);
    for (int j = 0; j < no; j++) free(out[j]);
    free(in);
    free(out);
    return rc ? -1 : 1;
}

/* A shape value whose terms are all constants (a static dim of a value
 * with runtime dims, read through Shape and Gather) is that constant: n's
 * only output becomes it, so what reads it (an Equal deciding an If)
 * folds in turn. */
static int fold_shape_value(Graph *g, Node *n)
{
    Value *v = n->n_out == 1 ? n->out[0] : NULL;
    if (!v || !v->shape_val || ir_shape_has_sym(&v->shape) || ir_numel(&v->shape) != v->n_shape_val) return 0;
    for (int i = 0; i < v->n_shape_val; i++)
        if (v->shape_val[i].sym) return 0;
    size_t nbytes = (size_t)ir_value_bytes(v);
    void *data = ir_alloc(g, nbytes ? nbytes : 1);
    for (int i = 0; i < v->n_shape_val; i++) store_elem(v->dtype, data, (size_t)i, (double)v->shape_val[i].c);
    v->kind = VK_CONST;
    v->producer = NULL;
    v->producer_out = 0;
    v->data = data;
    v->nbytes = nbytes;
    v->shape_val = NULL;
    v->n_shape_val = 0;
    return 1;
}

int pass_fold_node(Graph *g, Node *n, Diag *d)
{
    if (g->no_fold) return 0;
    return foldable(n) ? fold(g, n, d) : fold_shape_value(g, n);
}

int pass_fold_constants(Graph *g, Diag *d)
{
    int k = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        Node *n = g->nodes[i];
        int f = pass_fold_node(g, n, d);
        if (f < 0) return -1;
        if (!f) g->nodes[k++] = n;
    }
    g->n_nodes = k;
    if (ir_toposort(g, d)) return -1;
    ir_sweep_values(g);
    return 0;
}
