/* cuda_shapes.c — runtime shapes in the CUDA backend: a model with symbolic
 * dims (Graph.syms, bound from the input shapes, `--max-shape`) compiles
 * once to CUDA that runs at any extent within the bounds.
 *
 * Memory is planned at the maximum, so every pointer stays the static one;
 * what varies is the element count of each kernel and the sizes passed to
 * cuBLAS and cuDNN. The schedule holds the shape table `dim[]` (filled from
 * the actual input shapes, clamped to the bounds) and writes its host-side
 * sizes as products over it (cgen_prod_str: "dim[0] * 784"); a kernel of a
 * node with a runtime dim takes the device copy of that table as its
 * parameter `const int64_t *dim`, so the same text computes the same sizes
 * on both sides. A static model generates exactly what it did before.
 *
 * CUDA graphs: a captured graph holds its launches' sizes and its library
 * calls' arguments, so it is the graph of one set of dims. NAME_run_shapes
 * captures the schedule anew when the dims (or the buffers) differ from the
 * graph's, after copying the dims into the device table on the caller's
 * stream (stream order puts the copy after the runs before it and before
 * the graph's launch), and updates the executable graph in place
 * (cudaGraphExecUpdate); repeated runs at one shape replay the graph as a
 * static model does. A cuDNN convolution with a runtime batch sets its x
 * and y descriptors' batch in the schedule (so at capture), and keeps the
 * algorithm NAME_init chose at the maximum unless its workspace at the
 * actual batch exceeds the planned one (then implicit GEMM, which needs
 * none).
 *
 * What runs with runtime dims is what the entries marked dyn take, within
 * their checks: elementwise and Fused kernels, Gemm/MatMul on cuBLAS,
 * Conv on cuDNN (a runtime batch), pooling, Softmax, LayerNormalization
 * (over static dims), BatchNormalization, the reductions, Transpose,
 * Slice, Concat (any axis), Split (a static axis), Gather, GatherElements,
 * GatherND, ScatterElements, RoiAlign, Pad, Tile, Expand, TopK, Shape, Size
 * and the views: the ops the C backend takes with runtime dims (an f64
 * MatMul or Gemm excepted: its generated GEMM takes static shapes).
 *
 * Data-dependent dims (ir/ir.h's SYM_DATA: extents computed from values
 * while the model runs) need the host to wait for the device in mid-run,
 * which a captured graph cannot do: a graph with them (cu_eager) runs its
 * schedule directly, NAME_run waiting for it. The entries marked dyn 2
 * compute theirs: the host copies the operand back (cu_read_host), sets
 * the extent with its bound checks (cu_set_dim, NAME_ERR_SHAPE as in the C
 * backend) and copies the table to the device (cu_dims_to_device) before
 * the kernel. The statements that turn operand values into extents are the
 * C backend's own (backend/c/dims_text.c through CgenDims, cu_dims_ctx:
 * Reshape/Squeeze/Unsqueeze, Slice, Split, TopK, ReduceSum, Tile, Expand,
 * Pad, MaxUnpool), or short expressions (Range, OneHot, ConstantOfShape, the
 * windows, Resize/Upsample); the selections (NonZero, Unique,
 * NonMaxSuppression, Compress) and STFT run on the host entirely
 * (cuda_select.c), and IfSelect takes the extents of the branch its
 * condition picks. Host statements that only read the shape table (a
 * Slice's ranges over runtime extents, a constant K against a runtime axis)
 * run inside a captured graph too: at capture, which happens once per set
 * of dims, their results passed to the kernels as arguments.
 */
#include "cuda_emit.h"
#include "../c/cgen_model.h"
#include "../cfamily/cfam_expr.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers for the emitters --------------------------------------------------------- */

int cu_dyn(const Cu *c, const Node *n) { return c->g->n_syms > 0 && cgen_node_has_sym(n); }

const char *cu_sz(Cu *c, CgenProd p)
{
    char *b = c->sz[c->szk++ % 16];
    if (p.n == 0 || p.c == 0 || (p.n == 1 && p.c == 1)) return cgen_prod_str(&p, b, sizeof c->sz[0]);
    /* a product, parenthesized: it may stand after / or % */
    b[0] = '(';
    cgen_prod_str(&p, b + 1, sizeof c->sz[0] - 2);
    strcat(b, ")");
    return b;
}

const char *cu_dims_sz(Cu *c, const Shape *s, int from, int to) { return cu_sz(c, cgen_dims_prod(s, from, to)); }

const char *cu_kparam(const Cu *c, const Node *n) { return cu_dyn(c, n) ? ", const int64_t *dim" : ""; }

const char *cu_karg(const Cu *c, const Node *n) { return cu_dyn(c, n) ? ", ddim" : ""; }

void cu_kuse(const Cu *c, const Node *n, Writer *k)
{
    if (cu_dyn(c, n)) w_puts(k, "    (void)dim;\n");
}

void cu_bstrides_p(const Shape *s, const Shape *os, CgenProd *st)
{
    CgenProd acc = cgen_prod(1);
    for (int k = os->rank - 1; k >= 0; k--) {
        const int ks = s->rank - os->rank + k;
        if (ks < 0 || (s->dims[ks] == 1 && !s->sym[ks])) {
            st[k] = cgen_prod(0);
        } else {
            st[k] = acc;
            cgen_prod_mul_dim(&acc, s, ks);
        }
    }
}

void cu_strides_p(const Shape *s, CgenProd *st)
{
    CgenProd acc = cgen_prod(1);
    for (int k = s->rank - 1; k >= 0; k--) {
        st[k] = acc;
        cgen_prod_mul_dim(&acc, s, k);
    }
}

int cu_static_dims(const Shape *s, int from, int to)
{
    for (int k = from; k < to; k++)
        if (s->sym[k]) return 0;
    return 1;
}

int cu_eager(const Graph *g) { return ir_graph_has_data_syms(g); }

int cu_check_data_dims(const Graph *g, const Node *n, int sets, Diag *d)
{
    for (int i = 0; i < n->n_out; i++)
        for (int k = 0; k < n->out[i]->shape.rank; k++)
            if (cgen_own_dim(g, n->out[i], k) && !sets)
                return diag_node_error(d, n,
                                       "dim %d of output '%s' is known only while the model runs (data-dependent), which the "
                                       "CUDA backend does not compute for op '%s' yet; make the operand that decides it a "
                                       "constant",
                                       k, n->out[i]->name, ir_op(n->op)->name);
    return 0;
}

/* ---- data-dependent dims: set by the host in mid-run ------------------------------------------ */

void cu_read_host(Cu *c, const Value *v, const char *name)
{
    Writer *b = &c->body;
    const int64_t cnt = ir_numel(&v->shape);
    w_printf(b, "        %s %s[%lld];\n", cfam_ctype(v->dtype), name, (long long)(cnt ? cnt : 1));
    if (cnt)
        w_printf(b, "        if (cudaMemcpyAsync(%s, %s, sizeof %s, cudaMemcpyDeviceToHost, stream) != cudaSuccess ||\n"
                    "            cudaStreamSynchronize(stream) != cudaSuccess)\n            return -1;\n",
                 name, cu_ptr(c, v), name);
}

void cu_set_dim(Cu *c, const Value *v, int k, const char *expr)
{
    const Graph *g = c->g;
    Writer *b = &c->body;
    const int32_t y = v->shape.sym[k];
    char err[96];
    snprintf(err, sizeof err, "%s_ERR_SHAPE", c->name);
    if (!cgen_own_dim(g, v, k)) { /* a dim known before: the run's value must agree */
        if (y) w_printf(b, "        if ((%s) != dim[%d]) return %s;\n", expr, y - 1, err);
        else w_printf(b, "        if ((%s) != %lld) return %s;\n", expr, (long long)v->shape.dims[k], err);
        return;
    }
    const IrSym *s = ir_sym(g, y);
    w_printf(b, "        dim[%d] = %s; /* ", y - 1, expr);
    cu_comment_text(b, s->name);
    w_printf(b, " */\n        if (dim[%d] < %lld || dim[%d] > %lld) return %s;\n", y - 1, (long long)s->lo, y - 1, (long long)s->hi, err);
    b->indent += 2;
    if (s->group) cgen_check_group(g, y, b, err);
    b->indent -= 2;
}

void cu_dims_to_device(Cu *c)
{
    Writer *b = &c->body;
    b->indent += 2;
    cgen_derive_data_dims(c->g, b);
    b->indent -= 2;
    w_puts(b, "        if (cudaMemcpyAsync(m->ddim, dim, sizeof dim, cudaMemcpyHostToDevice, stream) != cudaSuccess) return -1;\n");
}

static const char *dims_tmp(void *ctx, const char *base)
{
    Cu *c = ctx;
    char *b = c->tmpn[c->tmpk++ % 16];
    snprintf(b, sizeof c->tmpn[0], "h_%s", base);
    return b;
}

static void dims_set(void *ctx, const Value *v, int k, const char *expr)
{
    Cu *c = ctx;
    const int save = c->body.indent; /* cu_set_dim writes at the block's indent itself */
    c->body.indent = save - 2;
    cu_set_dim(c, v, k, expr);
    c->body.indent = save;
}

/* A constant operand's values as a table (no device read: also inside a
 * captured graph); a runtime one read back (cu_read_host). */
static void dims_read(void *ctx, const Node *n, int j, const char *name, const char *i)
{
    Cu *c = ctx;
    const Value *v = n->in[j];
    (void)i;
    if (v->kind == VK_CONST) {
        const int64_t cnt = ir_numel(&v->shape);
        int64_t *vals = malloc(sizeof *vals * (size_t)(cnt ? cnt : 1));
        GC_ASSERT(vals && ir_const_ints(v, vals, (int)cnt) == (int)cnt);
        w_printf(&c->body, "static const int64_t %s[%lld] = {", name, (long long)(cnt ? cnt : 1));
        for (int64_t e = 0; e < cnt; e++) w_printf(&c->body, "%s%lld", e ? ", " : "", (long long)vals[e]);
        w_puts(&c->body, cnt ? "};\n" : "0};\n");
        free(vals);
        return;
    }
    const int save = c->body.indent;
    c->body.indent = save - 2;
    cu_read_host(c, v, name);
    c->body.indent = save;
}

/* A node on the host (cuda_select.c): its tensors' copies in the host
 * scratch, which cu_emit_select declares as h_ID. */
static const char *dims_ptr(void *ctx, const Value *v, char *buf)
{
    Cu *c = ctx;
    GC_ASSERT(c->hoff[v->id] >= 0);
    snprintf(buf, 256, "h_%s", c->id[v->id]);
    return buf;
}

static const char *dims_ws(void *ctx, const Node *n)
{
    Cu *c = ctx;
    (void)n;
    GC_ASSERT(c->hws_at >= 0);
    snprintf(c->tmpn[c->tmpk++ % 16], sizeof c->tmpn[0], "(h_ws + %lld)", (long long)c->hws_at);
    return c->tmpn[(c->tmpk - 1) % 16];
}

CgenDims cu_dims_ctx(Cu *c)
{
    snprintf(c->errname, sizeof c->errname, "%s_ERR_SHAPE", c->name);
    return (CgenDims){c->g, &c->body, c->errname, c, dims_tmp, dims_set, dims_read, dims_ptr, dims_ws};
}

int cu_view_sets_dims(const Graph *g, const Node *n)
{
    return (n->op == OP_Reshape || n->op == OP_Squeeze || n->op == OP_Unsqueeze) && n->n_in > 1 && n->in[1] &&
           n->in[1]->kind != VK_CONST && cgen_sets_dims(g, n);
}

void cu_read_back_dims(Cu *c, const Node *n, int j, const char *what, void (*write)(const CgenDims *, const Node *, const char *))
{
    Writer *b = &c->body;
    w_printf(b, "    { /* its %s, read back: the output's extents */\n", what);
    cu_read_host(c, n->in[j], "rb_vals");
    b->indent += 2;
    CgenDims o = cu_dims_ctx(c);
    write(&o, n, "rb_vals");
    b->indent -= 2;
    cu_dims_to_device(c);
    w_puts(b, "    }\n");
}

void cu_view_dims(Cu *c, const Node *n)
{
    if (cu_view_sets_dims(c->g, n)) cu_read_back_dims(c, n, 1, n->op == OP_Reshape ? "shape" : "axes", cgen_write_view_dims);
}

/* ---- NAME.h ------------------------------------------------------------------------------ */

void cu_shapes_port_macros(const Cu *c, Writer *w, const char *kind, int i, const Value *v)
{
    const char *N = c->name;
    w_printf(w, "#define %s_%s_%d_MAX_DIMS %s_%s_%d_DIMS\n", N, kind, i, N, kind, i);
    w_printf(w, "#define %s_%s_%d_DIM_SYMS {", N, kind, i);
    for (int k = 0; k < v->shape.rank; k++) w_printf(w, "%s%d", k ? ", " : "", v->shape.sym[k] - 1);
    w_printf(w, "%s} /* -1: fixed, else the index of its runtime dim */\n", v->shape.rank ? "" : "-1");
}

void cu_shapes_api_decls(const Cu *c, Writer *w)
{
    const char *N = c->name;
    w_printf(w, "/* Runtime shapes: %s_run_shapes runs the model on inputs of the actual shapes\n"
                " * in_dims[i] (in_dims[i][k]: dim k of input i, host memory, within the bounds\n"
                " * above; fixed dims must be the model's, and a runtime dim the same wherever\n"
                " * it appears). Every device buffer is dense at its actual shape (output\n"
                " * buffers may be sized for the maximum, _BYTES); out_dims[i] (NULL, or room\n"
                " * for _OUTPUT_i_RANK dims) receives output i's actual shape. The graph is\n"
                " * captured anew when the dims differ from the last run's (the graph updated\n"
                " * in place): runs at one shape replay it. %s_run_shapes_host takes host\n"
                " * buffers, as %s_run_host. Both return 0, -1 on a CUDA error, or\n"
                " * %s_ERR_SHAPE when an input shape is outside the bounds or inconsistent\n"
                " * (nothing is then run or written). %s_run and %s_run_host run at the\n"
                " * maximum shapes (_DIMS). */\n"
                "#define %s_ERR_SHAPE (-2)\n"
                "int %s_run_shapes(%s_Model *model, const void *const *inputs, const int64_t *const *in_dims,\n"
                "    void *const *outputs, int64_t *const *out_dims);\n"
                "int %s_run_shapes_host(%s_Model *model, const void *const *inputs, const int64_t *const *in_dims,\n"
                "    void *const *outputs, int64_t *const *out_dims);\n",
             N, N, N, N, N, N, N, N, N, N, N);
}

/* ---- NAME.cu ------------------------------------------------------------------------------ */

void cu_shapes_prologue(const Cu *c, Writer *w)
{
    const Graph *g = c->g;
    cgen_write_shape_table(g, w);
    w_puts(w, "    const int64_t *const ddim = m->ddim; /* its device copy, which kernels read */\n");
    w_puts(w, "    (void)dim, (void)ddim;\n");
    if (cu_eager(g)) /* no graph: the table set here, and again as data-dependent dims are set */
        w_puts(w, "    if (cudaMemcpyAsync(m->ddim, dim, sizeof dim, cudaMemcpyHostToDevice, m->cap) != cudaSuccess) return -1;\n");
}

void cu_shapes_epilogue(const Cu *c, Writer *w)
{
    if (!cu_eager(c->g)) return;
    w_printf(w, "    if (dims_out != NULL) /* the extents this run had, data-dependent ones included */\n"
                "        for (int k = 0; k < %d; k++) dims_out[k] = dim[k];\n", c->g->n_syms);
}

/* Element count of port v at the dims in dim[] as C text. */
static const char *numel_text(const Value *v, char *buf, size_t cap)
{
    CgenProd p = cgen_dims_prod(&v->shape, 0, v->shape.rank);
    return cgen_prod_str(&p, buf, cap);
}

/* NAME_bind: dim[] from the actual input shapes (the C backend's checks). */
static void gen_bind(const Cu *c, Writer *w)
{
    const char *N = c->name;
    w_printf(w, "/* The shape table of one run from the actual input shapes: 0, or %s_ERR_SHAPE. */\n", N);
    w_printf(w, "static int %s_bind(const int64_t *const *in_dims, int64_t *dim)\n{\n", N);
    cgen_write_bind_dims(c->g, N, w);
    w_puts(w, "    return 0;\n}\n\n");
}

/* NAME_launch: the graph of dims dim over the buffers, captured anew when
 * either differs from the graph's. */
static void gen_launch(const Cu *c, Writer *w)
{
    const Graph *g = c->g;
    const char *N = c->name;
    w_puts(w, "/* Launches the graph of dims dim over inputs/outputs on the caller's stream, first\n"
              " * capturing it anew (the device's shape table set first, in stream order) when\n"
              " * the dims or the buffers differ from the graph's. 0, -1 or NAME_ERR_SHAPE (a check of\n"
              " * the dims in the schedule). */\n");
    w_printf(w, "static int %s_launch(%s_Model *m, const void *const *inputs, void *const *outputs, const int64_t *dim)\n{\n",
             N, N);
    w_puts(w, "    int same = m->exec != NULL;\n");
    if (g->n_inputs) w_printf(w, "    for (int i = 0; same && i < %d; i++) same = inputs[i] == m->gin[i];\n", g->n_inputs);
    if (g->n_outputs) w_printf(w, "    for (int i = 0; same && i < %d; i++) same = outputs[i] == m->gout[i];\n", g->n_outputs);
    w_printf(w, "    for (int k = 0; same && k < %d; k++) same = dim[k] == m->gdim[k];\n", g->n_syms);
    w_puts(w, "    if (!same) {\n");
    w_printf(w, "        if (cudaMemcpyAsync(m->ddim, dim, sizeof(int64_t) * %d, cudaMemcpyHostToDevice, m->stream) != cudaSuccess)\n",
             g->n_syms);
    w_puts(w, "            return -1;\n");
    w_printf(w, "        const int rc = %s_capture(m, inputs, outputs, dim);\n        if (rc) return rc;\n    }\n", N);
    w_puts(w, "    return cudaGraphLaunch(m->exec, m->stream) == cudaSuccess ? 0 : -1;\n}\n\n");
}

/* NAME_out_shapes: output i's actual shape into out_dims[i]. */
static void gen_out_shapes(const Cu *c, Writer *w)
{
    w_printf(w, "static void %s_out_shapes(const int64_t *dim, int64_t *const *out_dims)\n{\n", c->name);
    w_puts(w, "    (void)dim;\n    if (out_dims == NULL) return;\n");
    cgen_write_out_dims(c->g, w);
    w_puts(w, "}\n\n");
}

/* NAME_eager (a model with data-dependent dims): the schedule run directly
 * on the model's stream after the caller's stream's work, waited for. */
static void gen_eager(const Cu *c, Writer *w)
{
    const char *N = c->name;
    w_puts(w, "/* Runs the schedule at dims dim directly (data-dependent dims: the host sets them in\n"
              " * mid-run, which a captured graph cannot), after the caller's stream's work, and\n"
              " * waits for it; the run's dims into dims_out (NULL: not wanted). 0, -1 or NAME_ERR_SHAPE. */\n");
    w_printf(w, "static int %s_eager(%s_Model *m, const void *const *inputs, void *const *outputs, const int64_t *dim,\n"
                "    int64_t *dims_out)\n{\n", N, N);
    w_puts(w, "    if (cudaStreamSynchronize(m->stream) != cudaSuccess) return -1;\n");
    w_printf(w, "    const int rc = %s_schedule(m, inputs, outputs, dim, dims_out);\n", N);
    w_puts(w, "    if (cudaStreamSynchronize(m->cap) != cudaSuccess) return -1;\n    return rc;\n}\n\n");
}

void cu_shapes_api(const Cu *c, Writer *w)
{
    const Graph *g = c->g;
    const char *N = c->name;
    const int eager = cu_eager(g);
    char b[192];
    gen_bind(c, w);
    if (eager) gen_eager(c, w);
    else gen_launch(c, w);
    gen_out_shapes(c, w);
    w_printf(w, "int %s_run(%s_Model *m, const void *const *inputs, void *const *outputs)\n{\n", N, N);
    if (eager) w_printf(w, "    return m ? %s_eager(m, inputs, outputs, %s_max_dims, NULL) : -1;\n}\n\n", N, N);
    else w_printf(w, "    return m ? %s_launch(m, inputs, outputs, %s_max_dims) : -1;\n}\n\n", N, N);
    w_printf(w, "int %s_run_shapes(%s_Model *m, const void *const *inputs, const int64_t *const *in_dims, void *const *outputs,\n"
                "    int64_t *const *out_dims)\n{\n", N, N);
    w_printf(w, "    int64_t dim[%d];\n    if (!m) return -1;\n", g->n_syms);
    w_printf(w, "    const int rc = %s_bind(in_dims, dim);\n    if (rc) return rc;\n", N);
    if (eager) {
        w_printf(w, "    const int er = %s_eager(m, inputs, outputs, dim, dim);\n    if (er) return er;\n", N);
    } else {
        w_printf(w, "    const int lr = %s_launch(m, inputs, outputs, dim);\n    if (lr) return lr;\n", N);
    }
    w_printf(w, "    %s_out_shapes(dim, out_dims);\n    return 0;\n}\n\n", N);
    w_printf(w, "int %s_run_shapes_host(%s_Model *m, const void *const *inputs, const int64_t *const *in_dims, void *const *outputs,\n"
                "    int64_t *const *out_dims)\n{\n", N, N);
    w_printf(w, "    int64_t dim[%d];\n    if (!m) return -1;\n", g->n_syms);
    w_printf(w, "    const int rc = %s_bind(in_dims, dim);\n    if (rc) return rc;\n", N);
    for (int i = 0; i < g->n_inputs; i++) {
        const Value *v = g->inputs[i];
        if (ir_numel(&v->shape) == 0) continue;
        w_printf(w, "    if (cudaMemcpyAsync(m->in[%d], inputs[%d], (size_t)(%s) * %d, cudaMemcpyHostToDevice, m->stream) != cudaSuccess)\n"
                    "        return -1;\n",
                 i, i, numel_text(v, b, sizeof b), (int)ir_dtype_size(v->dtype));
    }
    if (eager)
        w_printf(w, "    const int er = %s_eager(m, (const void *const *)m->in, m->out, dim, dim);\n    if (er) return er;\n", N);
    else
        w_printf(w, "    const int lr = %s_launch(m, (const void *const *)m->in, m->out, dim);\n    if (lr) return lr;\n", N);
    for (int i = 0; i < g->n_outputs; i++) {
        const Value *v = g->outputs[i];
        if (ir_numel(&v->shape) == 0) continue;
        w_printf(w, "    if (cudaMemcpyAsync(outputs[%d], m->out[%d], (size_t)(%s) * %d, cudaMemcpyDeviceToHost, m->stream) != cudaSuccess)\n"
                    "        return -1;\n",
                 i, i, numel_text(v, b, sizeof b), (int)ir_dtype_size(v->dtype));
    }
    w_puts(w, "    (void)inputs, (void)outputs; /* unread when every tensor is empty */\n");
    w_puts(w, "    if (cudaStreamSynchronize(m->stream) != cudaSuccess) return -1;\n");
    w_printf(w, "    %s_out_shapes(dim, out_dims);\n    return 0;\n}\n\n", N);
}
