/* cuda_select.c — the CUDA backend's data-dependent selections: NonZero,
 * Unique, NonMaxSuppression and Compress with a runtime condition (see
 * cuda_emit.h); and the node on the host (cu_emit_on_host), which they and
 * STFT with a runtime frame step or length use.
 *
 * Each counts what it selects, and that count is a data-dependent dim of
 * its output, which the host must know before anything after it launches:
 * such a model runs eagerly (cuda_shapes.c), the host waiting for the
 * device in mid-run. So these run on the host, where the count is read
 * anyway: the node's inputs are copied back into the host scratch m->hws
 * (at the run's extents), the C backend's own text computes the selection
 * there (backend/c/emit_select.c through CgenDims: the same statements,
 * over host pointers), sets the count in the shape table with its bound
 * check, and the outputs are copied to the device at their actual extents.
 * The selections are short sequential scans (sorting and suppression on
 * the host is what the reference does), so the device would gain little.
 * f16 and bf16 inputs are refused (the host text converts them with the C
 * runtime's functions, which the CUDA folder does not carry).
 */
#include "cuda_emit.h"
#include "../cfamily/cfam_expr.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int64_t align64(int64_t b) { return (b + 63) / 64 * 64; }

int cu_select_check(const Node *n, Diag *d)
{
    for (int j = 0; j < n->n_in + n->n_out; j++) {
        const Value *v = j < n->n_in ? n->in[j] : n->out[j - n->n_in];
        if (v && (v->dtype == DT_F16 || v->dtype == DT_BF16))
            return diag_node_error(d, n, "the CUDA backend runs %s on the host, for f32, f64, bool and integer tensors only",
                                   ir_op(n->op)->name);
    }
    return 0;
}

int cu_emit_on_host(Cu *c, const Node *n, void (*write)(const CgenDims *, const Node *), size_t ws, Diag *d)
{
    const Graph *g = c->g;
    Writer *b = &c->body;
    if (ir_numel(&n->out[0]->shape) == 0) return 0; /* empty at its bound: nothing to compute */
    if (!cu_eager(g)) /* its extents known at compile time, or runtime dims a captured graph holds */
        return diag_node_error(d, n, "the CUDA backend runs %s on the host only where it decides a data-dependent dim",
                               ir_op(n->op)->name);
    /* the host scratch: inputs, outputs (at their bounds), workspace */
    int64_t off = 0;
    for (int j = 0; j < n->n_in + n->n_out; j++) {
        const Value *v = j < n->n_in ? n->in[j] : n->out[j - n->n_in];
        if (!v || c->hoff[v->id] >= 0) continue; /* a tensor the node reads twice has one copy */
        c->hoff[v->id] = off;
        off += align64(ir_numel(&v->shape) * (int64_t)ir_dtype_size(v->dtype));
    }
    c->hws_at = off;
    off += align64((int64_t)ws);
    if (off > c->hws_bytes) c->hws_bytes = off;
    char nb[256];
    w_printf(b, "    { /* on the host: its inputs read back, the C backend's code, its outputs copied in */\n");
    for (int j = 0; j < n->n_in; j++) {
        const Value *v = n->in[j];
        if (!v || ir_numel(&v->shape) == 0) continue;
        w_printf(b, "        if (cudaMemcpyAsync(m->hws + %lld, %s, (size_t)%s * %d, cudaMemcpyDeviceToHost, stream) != cudaSuccess) return -1;\n",
                 (long long)c->hoff[v->id], cu_ptr(c, v), cu_dims_sz(c, &v->shape, 0, v->shape.rank), (int)ir_dtype_size(v->dtype));
    }
    w_puts(b, "        if (cudaStreamSynchronize(stream) != cudaSuccess) return -1;\n");
    w_puts(b, "        unsigned char *const h_ws = m->hws; /* the text below may name a local m */\n");
    for (int j = 0; j < n->n_in + n->n_out; j++) { /* the node's tensors there, each once */
        const Value *v = j < n->n_in ? n->in[j] : n->out[j - n->n_in];
        int seen = 0;
        for (int q = 0; q < j && v; q++) seen |= (q < n->n_in ? n->in[q] : n->out[q - n->n_in]) == v;
        if (!v || seen) continue;
        w_printf(b, "        %s%s *const h_%s = (%s%s *)(void *)(h_ws + %lld);\n        (void)h_%s;\n", j < n->n_in ? "const " : "",
                 cfam_ctype(v->dtype), c->id[v->id], j < n->n_in ? "const " : "", cfam_ctype(v->dtype), (long long)c->hoff[v->id],
                 c->id[v->id]);
    }
    b->indent += 2;
    CgenDims o = cu_dims_ctx(c);
    write(&o, n);
    b->indent -= 2;
    c->hws_at = -1;
    for (int j = 0; j < n->n_out; j++) {
        const Value *v = n->out[j];
        if (!v || ir_numel(&v->shape) == 0) continue;
        snprintf(nb, sizeof nb, "%s", cu_dims_sz(c, &v->shape, 0, v->shape.rank));
        w_printf(b, "        if (cudaMemcpyAsync(%s, m->hws + %lld, (size_t)%s * %d, cudaMemcpyHostToDevice, stream) != cudaSuccess) return -1;\n",
                 cu_ptr(c, v), (long long)c->hoff[v->id], nb, (int)ir_dtype_size(v->dtype));
    }
    for (int j = 0; j < n->n_in + n->n_out; j++) {
        const Value *v = j < n->n_in ? n->in[j] : n->out[j - n->n_in];
        if (v) c->hoff[v->id] = -1;
    }
    cu_dims_to_device(c);
    w_puts(b, "    }\n");
    return 0;
}

int cu_emit_select(Cu *c, const Node *n, Diag *d)
{
    return cu_emit_on_host(c, n,
                           n->op == OP_NonZero    ? cgen_write_nonzero
                           : n->op == OP_Compress ? cgen_write_compress
                           : n->op == OP_Unique   ? cgen_write_unique
                                                  : cgen_write_nms,
                           cgen_select_workspace(n), d);
}

#define HOST "on the host (inputs read back, the count set in the shape table, outputs copied in)"

const CudaEntry cuda_select_entries[] = {
    {OP_NonZero, cu_select_check, cu_emit_select, NULL, HOST, 0, 2},
    {OP_Unique, cu_select_check, cu_emit_select, NULL, HOST, 0, 2},
    {OP_NonMaxSuppression, cu_select_check, cu_emit_select, NULL, HOST, 0, 2},
    {-1, NULL, NULL, NULL, NULL, 0, 0},
};
