/* cuda_layout.c — which 4-d activations the CUDA backend keeps channels-last
 * (see cuda_emit.h, CuLayout).
 *
 * cuDNN's tensor-core convolutions work on NHWC data: given NCHW tensors
 * they transpose the input and the filter into NHWC and the output back on
 * every call, three extra kernels per convolution. So, where the option
 * (Graph.layout, compile --cuda-layout) allows it, a Conv on cuDNN with a
 * constant filter runs on NHWC descriptors (its filter stored KRSC in the
 * weights), and the 4-d values between such convolutions are stored NHWC:
 * the layout is decided per value, from the graph's structure only, so the
 * workspace policy (memory planning) and the emitter see the same one.
 *
 * A value is stored NHWC when it is a 4-d arena temporary (not a graph
 * input or output, not a view's root) whose producer and every reader have
 * an NHWC form: an NHWC Conv (its output; its input X), an elementwise or
 * Fused kernel (any operand; each is read through its own strides), a
 * Conv/Gemm/MatMul epilogue operand, MaxPool/AveragePool over 2 spatial
 * dims (input and output), GlobalAveragePool (input); a node of a MatMul's
 * folded chain (cuda_fold.c, read through NCHW strides) has none. Then, so
 * that no kernel writes over an operand it shares a buffer with in place in
 * another order, an elementwise kernel's output and every operand of its
 * size (an epilogue's output and its operands of that size) that live in
 * the arena are all NHWC or all NCHW: a disagreement makes them all NCHW,
 * until nothing changes. An NHWC Conv whose input or output stays NCHW
 * copies it through its workspace (the model's first Conv reads the NCHW
 * graph input so, unless a Cast before it writes NHWC); none where the two
 * layouts are the same bytes (one channel, or one position). A graph with
 * runtime dims (cuda_shapes.c) stays NCHW throughout: the NHWC strides
 * above are constants.
 */
#include "cuda_emit.h"
#include "../../ir/fused.h"
#include "../../ir/ops/nn_common.h"

#include <stdlib.h>
#include <string.h>

static int is_half(DType t) { return t == DT_F16 || t == DT_BF16; }

/* cu_conv_nhwc_capable with the filter's reads (every input slot of every
 * node that holds it) counted already: w_reads. */
static int capable(const Graph *g, const Node *n, int w_reads)
{
    /* runtime shapes keep every value NCHW (the layout's strides are static) */
    if (n->op != OP_Conv || g->layout == GRAPH_LAYOUT_NCHW || g->opt_level < 2 || g->n_syms) return 0;
    const Value *X = n->in[0], *W = n->in[1];
    if (X->shape.rank != 4 || !cu_conv_on_cudnn(n) || ir_numel(&n->out[0]->shape) == 0) return 0;
    if (g->layout == GRAPH_LAYOUT_AUTO && !is_half(X->dtype)) return 0;
    /* the filter is permuted to KRSC in the weights: a constant this Conv
     * alone reads */
    return W->kind == VK_CONST && !W->alias && !W->is_output && W->data && w_reads == 1;
}

int cu_conv_nhwc_capable(const Graph *g, const Node *n)
{
    if (n->op != OP_Conv || g->layout == GRAPH_LAYOUT_NCHW || g->opt_level < 2) return 0;
    int reads = 0;
    for (int i = 0; i < g->n_nodes; i++)
        for (int j = 0; j < g->nodes[i]->n_in; j++) reads += g->nodes[i]->in[j] == n->in[1];
    return capable(g, n, reads);
}

/* Whether pooling node n has an NHWC kernel (emit_pool's float path over 2
 * spatial dims; GlobalAveragePool over 4-d input). */
static int pool_nhwc(const Node *n)
{
    if (n->in[0]->shape.rank != 4) return 0;
    if (n->op == OP_GlobalAveragePool) return 1;
    if (n->op != OP_MaxPool && n->op != OP_AveragePool) return 0;
    const DType t = n->in[0]->dtype;
    if (n->op == OP_MaxPool && n->n_out > 1 && n->out[1]) return 0;
    return cu_is_float(t) || is_half(t);
}

/* The ops whose kernels apply an epilogue through the elementwise printer. */
static int has_ew_epilogue(const Node *n)
{
    return (n->op == OP_Conv || n->op == OP_Gemm || n->op == OP_MatMul) && ir_epilogue(n);
}

static int reader_ok(const unsigned char *cap, const Node *n, int j)
{
    if (ir_op(n->op)->view) return 0;
    if (cu_node_is_ew(n)) return 1;
    if (has_ew_epilogue(n) && ir_epilogue_first(n->op) >= 0 && j >= ir_epilogue_first(n->op)) return 1;
    if (n->op == OP_Conv) return j == 0 && cap[n->id];
    if (pool_nhwc(n)) return j == 0;
    return 0;
}

static int producer_ok(const unsigned char *cap, const Value *v)
{
    const Node *n = v->producer;
    if (!n || v->producer_out != 0) return 0;
    if (n->op == OP_Conv) return cap[n->id];
    if (cu_node_is_ew(n)) return 1;
    return pool_nhwc(n) && n->op != OP_GlobalAveragePool;
}

/* Whether v lives in the arena, where memory planning may give a kernel's
 * output the buffer of an operand in place (graph inputs and outputs and
 * constants have their own storage). */
static int in_arena(const Value *v) { return v->kind == VK_TEMP && !v->is_output; }

/* Makes the values of one in-place group (an arena output and its arena
 * operands of its size) agree: all NHWC or all NCHW; 1 when something
 * changed. */
static int agree(unsigned char *cl, const Node *n, int first)
{
    const Value *o = n->out[0];
    if (!in_arena(o)) return 0;
    const int64_t size = ir_numel(&o->shape);
    int all = cl[o->id];
    for (int j = first; j < n->n_in; j++) {
        const Value *v = n->in[j];
        if (v && in_arena(v) && ir_numel(&v->shape) == size && !cl[v->id]) all = 0;
    }
    if (all) return 0;
    int changed = cl[o->id];
    cl[o->id] = 0;
    for (int j = first; j < n->n_in; j++) {
        const Value *v = n->in[j];
        if (v && in_arena(v) && ir_numel(&v->shape) == size && cl[v->id]) {
            cl[v->id] = 0;
            changed = 1;
        }
    }
    return changed;
}

int cu_layout_build(const Graph *g, CuLayout *L)
{
    memset(L, 0, sizeof *L);
    int max_node = 0;
    for (int i = 0; i < g->n_nodes; i++)
        if (g->nodes[i]->id > max_node) max_node = g->nodes[i]->id;
    L->n_values = g->n_values;
    L->n_ids = max_node + 1;
    L->cl = calloc((size_t)g->n_values + 1, 1);
    L->nhwc = calloc((size_t)L->n_ids, 1);
    unsigned char *cap = calloc((size_t)L->n_ids, 1);
    int any = 0, *reads = calloc((size_t)g->n_values + 1, sizeof *reads);
    if (!L->cl || !L->nhwc || !cap || !reads) {
        free(cap);
        free(reads);
        cu_layout_free(L);
        return -1;
    }
    for (int i = 0; i < g->n_nodes; i++)
        for (int j = 0; j < g->nodes[i]->n_in; j++)
            if (g->nodes[i]->in[j]) reads[g->nodes[i]->in[j]->id]++;
    for (int i = 0; i < g->n_nodes; i++) {
        const Node *n = g->nodes[i];
        if (n->op == OP_Conv && capable(g, n, reads[n->in[1]->id])) cap[n->id] = 1, any = 1;
    }
    free(reads);
    if (!any) {
        free(cap);
        return 0;
    }
    /* candidates: 4-d arena temporaries whose producer has an NHWC form */
    for (int i = 0; i < g->n_values; i++) {
        const Value *v = g->values[i];
        L->cl[v->id] = v->shape.rank == 4 && v->kind == VK_TEMP && !v->alias && !v->is_output &&
                       ir_numel(&v->shape) > 0 && producer_ok(cap, v);
    }
    /* every reader has one too (a view's root is read by the view) */
    for (int i = 0; i < g->n_nodes; i++) {
        const Node *n = g->nodes[i];
        for (int j = 0; j < n->n_in; j++)
            if (n->in[j] && !reader_ok(cap, n, j)) L->cl[n->in[j]->id] = 0;
    }
    for (int i = 0; i < g->n_values; i++)
        if (g->values[i]->alias) L->cl[g->values[i]->alias->id] = 0;
    /* a MatMul reads the top of a folded chain through NCHW strides
     * (cuda_fold.c), and the chain's nodes (a Mul by a scalar among them)
     * emit nothing */
    CuFolds fs;
    if (cu_folds_build(g, &fs)) {
        free(cap);
        cu_layout_free(L);
        return -1;
    }
    for (int i = 0; fs.n_ids && i < g->n_nodes; i++) {
        const Node *n = g->nodes[i];
        if (!fs.skip[n->id]) continue;
        for (int j = 0; j < n->n_in; j++)
            if (n->in[j]) L->cl[n->in[j]->id] = 0;
    }
    cu_folds_free(&fs);
    for (int changed = 1; changed;) {
        changed = 0;
        for (int i = 0; i < g->n_nodes; i++) {
            const Node *n = g->nodes[i];
            if (cu_node_is_ew(n)) changed |= agree(L->cl, n, 0);
            else if (has_ew_epilogue(n) && ir_epilogue_first(n->op) >= 0)
                changed |= agree(L->cl, n, ir_epilogue_first(n->op));
        }
    }
    for (int i = 0; i < g->n_nodes; i++) {
        const Node *n = g->nodes[i];
        if (cap[n->id] && (L->cl[n->in[0]->id] || L->cl[n->out[0]->id])) L->nhwc[n->id] = 1;
    }
    free(cap);
    return 0;
}

void cu_layout_free(CuLayout *L)
{
    free(L->cl);
    free(L->nhwc);
    memset(L, 0, sizeof *L);
}

int cu_value_nhwc(const Cu *c, const Value *v) { return c->lay.cl && v->id < c->lay.n_values && c->lay.cl[v->id]; }

int cu_conv_nhwc(const Cu *c, const Node *n) { return c->lay.nhwc && n->id < c->lay.n_ids && c->lay.nhwc[n->id]; }
