/* emit_nn.c — C emitters for the nn family: Conv, MaxPool, MaxUnpool, AveragePool,
 * GlobalAveragePool, BatchNormalization, Softmax, LogSoftmax and
 * LayerNormalization.
 *
 * Each op becomes one call of a runtime kernel (runtime/gcrt_nn.h) with
 * every size a literal. Windowed ops take the geometry that shape inference
 * computed (ir_nn_window_geometry in ir/ops/nn.c: kernel, strides,
 * dilations, pads with auto_pad resolved), lifted to 3 spatial dims by
 * leading unit dims, passed as C99 compound literals. Conv gets the planned
 * workspace for im2col when its entry's workspace (conv_workspace: one
 * tile of EMIT_CONV_WS_CAP bytes at most) asked for one, and a null pointer
 * otherwise (the kernel then uses its direct loops); its call
 * is emit_conv_call, which the quantized convolutions share (emit_quant.c).
 * f32 and f64 are supported; other dtypes are refused with a diagnostic.
 * A Conv `epilogue` (ir/fused.h: activation, residual add, ...) is applied
 * by one loop over Y right after the kernel call in the same node block.
 * f32 Convs with 1 or 2 spatial dims take the fast CPU path instead
 * (emit_cpu.c: packed weights, the epilogue on the tile, threads).
 * f32 Softmax / LogSoftmax whose reduced axis is contiguous (inner == 1) and
 * f32 LayerNormalization with full-length Scale and B and no Mean/InvStdDev
 * outputs call the fast last-axis kernels (gcrt_*_last_f32) instead.
 */
#include "cgen.h"
#include "emit_common.h"
#include "../../ir/ops/geometry.h"
#include "../../ir/ops/nn_attrs.h"

#include <stdio.h>

/* Geometry of a windowed node lifted to 3 spatial dims. */
typedef struct Geo3 {
    int sr;
    int64_t in[IR_MAX_RANK], out[IR_MAX_RANK], k[IR_MAX_RANK], s[IR_MAX_RANK], dl[IR_MAX_RANK];
    int64_t pb[IR_MAX_RANK], pe[IR_MAX_RANK];
} Geo3;

static int geo3(const Node *n, Geo3 *g, Diag *d)
{
    g->sr = ir_nn_window_geometry(n, g->k, g->s, g->dl, g->pb, g->pe);
    GC_ASSERT(g->sr >= 1);
    if (g->sr > 3)
        return diag_node_error(d, n, "the C backend implements %s for 1 to 3 spatial dims, got %d",
                               ir_op(n->op)->name, g->sr);
    for (int i = 0; i < g->sr; i++) {
        g->in[i] = n->in[0]->shape.dims[2 + i];
        g->out[i] = n->out[0]->shape.dims[2 + i];
    }
    return 0;
}

/* The window arguments shared by the pool kernels: "in, k, out,\n" then, one
 * indent deeper, "strides, " (the caller closes the indent). */
static void emit_window_head(Writer *w, const Geo3 *g)
{
    emit_dims3(w, g->in, g->sr, 1);
    w_puts(w, ", ");
    emit_dims3(w, g->k, g->sr, 1);
    w_puts(w, ", ");
    emit_dims3(w, g->out, g->sr, 1);
    w_puts(w, ",\n");
    w->indent++;
    emit_dims3(w, g->s, g->sr, 1);
    w_puts(w, ", ");
}

/* See emit_common.h. */
int emit_conv_call(Cgen *c, const Node *n, DType t, const char *px, const char *pw, const char *pb, const char *py,
                   const char *pws, Diag *d)
{
    Writer *w = cgen_w(c);
    const char *sfx = t == DT_F32 ? "f32" : "f64";
    const Shape *xs = &n->in[0]->shape, *ws = &n->in[ir_conv_weight_input(n)]->shape;
    Geo3 g;
    if (geo3(n, &g, d)) return -1;
    w_printf(w, "gcrt_conv_%s(%lld, %lld, %lld, %lld,\n", sfx, (long long)xs->dims[0], (long long)xs->dims[1],
             (long long)ws->dims[0], (long long)n->attrs[CONV_GROUP].i);
    w->indent++;
    emit_dims3(w, g.in, g.sr, 1);
    w_puts(w, ", ");
    emit_dims3(w, g.k, g.sr, 1);
    w_puts(w, ", ");
    emit_dims3(w, g.out, g.sr, 1);
    w_puts(w, ",\n");
    emit_dims3(w, g.s, g.sr, 1);
    w_puts(w, ", ");
    emit_dims3(w, g.dl, g.sr, 1);
    w_puts(w, ", ");
    emit_dims3(w, g.pb, g.sr, 0);
    w_printf(w, ",\n%s, %s, %s, %s, ", px, pw, pb, py);
    int64_t cols = emit_conv_im2col_cols(n, ir_dtype_size(t));
    if (pws && cols) w_printf(w, "(%s *)(void *)%s, %lld);\n", cgen_ctype(t), pws, (long long)cols);
    else w_puts(w, "0, 0);\n");
    w->indent--;
    return 0;
}

/* Conv's scratch: one im2col tile in X's dtype. */
static size_t conv_workspace(const Node *n) { return emit_conv_im2col_bytes(n, ir_dtype_size(n->in[0]->dtype)); }

static int emit_conv(Cgen *c, const Node *n, Diag *d)
{
    const Value *X = n->in[0], *W = n->in[1], *B = n->n_in > 2 ? n->in[2] : NULL, *Y = n->out[0];
    const char *sfx = emit_kernel_suffix(n, Y->dtype, d);
    Geo3 g;
    if (!sfx || geo3(n, &g, d)) return -1;
    if (ir_numel(&Y->shape) == 0) return 0;
    int fast = cgen_cpu_emit(c, n, d);
    if (fast) return fast < 0 ? -1 : 0;
    if (cgen_node_has_sym(n))
        return diag_node_error(d, n, "the C backend supports a runtime batch in f32 Conv with 1 or 2 spatial dims only");
    cgen_use_runtime(c, CGEN_RT_nn);
    if (emit_conv_call(c, n, Y->dtype, cgen_ptr(c, X), cgen_ptr(c, W), B ? cgen_ptr(c, B) : "0", cgen_ptr(c, Y),
                       n->ws_bytes ? cgen_workspace(c, n) : NULL, d))
        return -1;
    return cgen_emit_epilogue(c, n, d);
}

/* The product of dims [from, to) of s as C text: a literal, or with a
 * runtime batch "dim[0] * 64". */
static const char *dims_str(const Shape *s, int from, int to, char *buf, size_t cap)
{
    CgenProd p = cgen_dims_prod(s, from, to);
    return cgen_prod_str(&p, buf, cap);
}

/* MaxPool (is_max) or AveragePool. */
static int emit_pool(Cgen *c, const Node *n, Diag *d, int is_max)
{
    Writer *w = cgen_w(c);
    const Value *X = n->in[0], *Y = n->out[0];
    const char *sfx = emit_kernel_suffix(n, Y->dtype, d);
    Geo3 g;
    if (!sfx || geo3(n, &g, d)) return -1;
    if (ir_numel(&Y->shape) == 0) return 0;
    char nc[160];
    if (is_max && g.sr == 2 && X->dtype == DT_F32) { /* the fast 2-D kernel (runtime/cpu/gcrt_maxpool.c) */
        w_printf(w, "gcrt_maxpool2d_f32(%s, %lld, %lld, %lld, %lld, %lld, %lld, %lld, %lld, %lld, %lld, %lld, %lld,\n",
                 dims_str(&X->shape, 0, 2, nc, sizeof nc), (long long)g.in[0], (long long)g.in[1], (long long)g.out[0],
                 (long long)g.out[1], (long long)g.k[0], (long long)g.k[1], (long long)g.s[0], (long long)g.s[1],
                 (long long)g.dl[0], (long long)g.dl[1], (long long)g.pb[0], (long long)g.pb[1]);
        w_line(w, "    %s, %s, pool);", cgen_ptr(c, X), cgen_ptr(c, Y));
        cgen_use_runtime(c, CGEN_RT_maxpool);
        return 0;
    }
    cgen_use_runtime(c, CGEN_RT_nn);
    w_printf(w, "gcrt_%s_%s(%s, ", is_max ? "maxpool" : "avgpool", sfx, dims_str(&X->shape, 0, 2, nc, sizeof nc));
    emit_window_head(w, &g);
    if (is_max) {
        emit_dims3(w, g.dl, g.sr, 1);
        w_puts(w, ", ");
        emit_dims3(w, g.pb, g.sr, 0);
    } else {
        emit_dims3(w, g.pb, g.sr, 0);
        w_puts(w, ", ");
        emit_dims3(w, g.pe, g.sr, 0);
        w_printf(w, ", %d", n->attrs[AVGPOOL_COUNT_INCLUDE_PAD].i != 0);
    }
    w_printf(w, ", %s, %s);\n", cgen_ptr(c, X), cgen_ptr(c, Y));
    w->indent--;
    return 0;
}

/* MaxPool: the float kernel without Indices; gcrt_maxpool_idx_* (runtime/
 * gcrt_pool.h) for u8/i8 inputs or when the Indices output is wanted. */
static int emit_maxpool(Cgen *c, const Node *n, Diag *d)
{
    const Value *X = n->in[0], *Y = n->out[0], *I = n->n_out > 1 ? n->out[1] : NULL;
    DType t = X->dtype;
    if (!I && t != DT_U8 && t != DT_I8) return emit_pool(c, n, d, 1);
    const char *sfx = t == DT_U8 ? "u8" : t == DT_I8 ? "i8" : emit_kernel_suffix(n, t, d);
    Geo3 g;
    if (!sfx || geo3(n, &g, d)) return -1;
    if (ir_numel(&Y->shape) == 0) return 0;
    Writer *w = cgen_w(c);
    char nc[160];
    cgen_use_runtime(c, CGEN_RT_pool);
    w_printf(w, "gcrt_maxpool_idx_%s(%s, ", sfx, dims_str(&X->shape, 0, 2, nc, sizeof nc));
    emit_window_head(w, &g);
    emit_dims3(w, g.dl, g.sr, 1);
    w_puts(w, ", ");
    emit_dims3(w, g.pb, g.sr, 0);
    w_printf(w, ", %d, %s, ", n->attrs[MAXPOOL_STORAGE_ORDER].i == 1, cgen_ptr(c, X));
    w_printf(w, "%s, ", cgen_ptr(c, Y));
    w_printf(w, "%s);\n", I ? cgen_ptr(c, I) : "0");
    w->indent--;
    return 0;
}
static int emit_avgpool(Cgen *c, const Node *n, Diag *d) { return emit_pool(c, n, d, 0); }

/* MaxUnpool: one call of gcrt_maxunpool_* (zero Y, scatter X at I, the
 * indices referring to ir_maxunpool_index_dims). */
static int emit_maxunpool(Cgen *c, const Node *n, Diag *d)
{
    const Value *X = n->in[0], *I = n->in[1], *Y = n->out[0];
    DType t = X->dtype;
    const char *sfx = t == DT_U8 ? "u8" : t == DT_I8 ? "i8" : emit_kernel_suffix(n, t, d);
    if (!sfx) return -1;
    int64_t src[IR_MAX_RANK];
    int sr = ir_maxunpool_index_dims(n, src);
    GC_ASSERT(sr >= 1);
    if (sr > 3)
        return diag_node_error(d, n, "the C backend implements MaxUnpool for 1 to 3 spatial dims, got %d", sr);
    if (ir_numel(&Y->shape) == 0) return 0;
    Writer *w = cgen_w(c);
    char px[EMIT_EXPR_CAP], pi[EMIT_EXPR_CAP], py[EMIT_EXPR_CAP];
    int dyn = cgen_node_has_sym(n);
    if (dyn) {
        /* runtime shapes: output_shape read at run time (N and C must be X's) */
        CgenDims o = cgen_dims_ctx(c);
        cgen_write_maxunpool_dims(&o, n, cgen_ptr(c, n->in[2]));
    }
    w_printf(w, "gcrt_maxunpool_%s(%lld, %s, %s, %lld, ", sfx, (long long)ir_numel(&X->shape),
             emit_ptr_name(c, X, px), emit_ptr_name(c, I, pi), (long long)(X->shape.dims[0] * X->shape.dims[1]));
    emit_dims3(w, src, sr, 1);
    w_puts(w, ", ");
    if (dyn) {
        char b[160];
        w_puts(w, "(const int64_t[3]){");
        for (int i = 0; i < 3; i++) {
            CgenProd p = i < 3 - sr ? cgen_prod(1) : cgen_dims_prod(&Y->shape, 2 + i - (3 - sr), 3 + i - (3 - sr));
            w_printf(w, "%s%s", i ? ", " : "", cgen_prod_str(&p, b, sizeof b));
        }
        w_puts(w, "}");
    } else {
        emit_dims3(w, Y->shape.dims + 2, sr, 1);
    }
    w_printf(w, ", %s);\n", emit_ptr_name(c, Y, py));
    return 0;
}

static int emit_gap(Cgen *c, const Node *n, Diag *d)
{
    const Value *X = n->in[0], *Y = n->out[0];
    const char *sfx = emit_kernel_suffix(n, Y->dtype, d);
    if (!sfx) return -1;
    if (ir_numel(&Y->shape) == 0) return 0;
    const Shape *xs = &X->shape;
    char nc[160];
    const long long S = (long long)emit_dims_prod(xs, 2, xs->rank);
    if (Y->dtype == DT_F32 && S > 0) { /* the planes split over the pool (runtime/cpu/gcrt_gap.c), same bits */
        w_line(cgen_w(c), "gcrt_global_avgpool_pool_f32(%s, %lld, %s, %s, pool);", dims_str(xs, 0, 2, nc, sizeof nc), S,
               cgen_ptr(c, X), cgen_ptr(c, Y));
        cgen_use_runtime(c, CGEN_RT_gap);
        return 0;
    }
    w_line(cgen_w(c), "gcrt_global_avgpool_%s(%s, %lld, %s, %s);", sfx, dims_str(xs, 0, 2, nc, sizeof nc), S,
           cgen_ptr(c, X), cgen_ptr(c, Y));
    return 0;
}

static int emit_batchnorm(Cgen *c, const Node *n, Diag *d)
{
    const Value *X = n->in[0], *Y = n->out[0];
    const char *sfx = emit_kernel_suffix(n, Y->dtype, d);
    if (!sfx) return -1;
    if (ir_numel(&Y->shape) == 0 && !n->attrs[BN_TRAINING_MODE].i) return 0;
    const Shape *xs = &X->shape;
    char eps[48], nb[160];
    emit_float_lit(eps, sizeof eps, n->attrs[BN_EPSILON].f, Y->dtype);
    dims_str(xs, 0, 1, nb, sizeof nb);
    if (n->attrs[BN_TRAINING_MODE].i) {
        const Value *rm = n->n_out > 1 ? n->out[1] : NULL, *rv = n->n_out > 2 ? n->out[2] : NULL;
        char mom[48], p[7][EMIT_EXPR_CAP];
        emit_float_lit(mom, sizeof mom, n->attrs[BN_MOMENTUM].f, Y->dtype);
        for (int i = 0; i < 5; i++) emit_ptr_name(c, n->in[i], p[i]);
        w_line(cgen_w(c), "gcrt_batchnorm_train_%s(%s, %lld, %lld, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s);", sfx,
               nb, (long long)xs->dims[1], (long long)emit_dims_prod(xs, 2, xs->rank), p[0],
               p[1], p[2], p[3], p[4], eps, mom, emit_ptr_name(c, Y, p[5]), rm ? emit_ptr_name(c, rm, p[6]) : "0",
               rv ? cgen_ptr(c, rv) : "0");
        return 0;
    }
    w_line(cgen_w(c), "gcrt_batchnorm_%s(%s, %lld, %lld, %s, %s, %s, %s, %s, %s, %s);", sfx,
           nb, (long long)xs->dims[1], (long long)emit_dims_prod(xs, 2, xs->rank),
           cgen_ptr(c, X), cgen_ptr(c, n->in[1]), cgen_ptr(c, n->in[2]), cgen_ptr(c, n->in[3]),
           cgen_ptr(c, n->in[4]), eps, cgen_ptr(c, Y));
    return 0;
}

static int emit_softmax_any(Cgen *c, const Node *n, Diag *d, const char *kernel)
{
    const Value *X = n->in[0], *Y = n->out[0];
    const char *sfx = emit_kernel_suffix(n, Y->dtype, d);
    if (!sfx) return -1;
    if (ir_numel(&Y->shape) == 0) return 0;
    const Shape *xs = &X->shape;
    int a = ir_norm_axis(n->attrs[SOFTMAX_AXIS].i, xs->rank);
    GC_ASSERT(a >= 0);
    /* sizes as products of runtime dims (literals for static shapes) */
    CgenProd outer = cgen_dims_prod(xs, 0, a), len = cgen_dims_prod(xs, a, a + 1),
             inner = cgen_dims_prod(xs, a + 1, xs->rank);
    char so[160], sl[160], si[160];
    cgen_prod_str(&outer, so, sizeof so);
    cgen_prod_str(&len, sl, sizeof sl);
    cgen_prod_str(&inner, si, sizeof si);
    if (Y->dtype == DT_F32 && cgen_prod_is(&inner, 1)) /* the reduced axis is contiguous: the fast kernel */
        w_line(cgen_w(c), "gcrt_%s_last_f32(%s, %s, %s, %s);", kernel, so, sl, cgen_ptr(c, X), cgen_ptr(c, Y));
    else
        w_line(cgen_w(c), "gcrt_%s_%s(%s, %s, %s, %s, %s);", kernel, sfx, so, sl, si, cgen_ptr(c, X), cgen_ptr(c, Y));
    return 0;
}

static int emit_softmax(Cgen *c, const Node *n, Diag *d) { return emit_softmax_any(c, n, d, "softmax"); }
static int emit_logsoftmax(Cgen *c, const Node *n, Diag *d) { return emit_softmax_any(c, n, d, "logsoftmax"); }

static int emit_layernorm(Cgen *c, const Node *n, Diag *d)
{
    const Value *X = n->in[0], *Y = n->out[0];
    const Value *Sc = n->in[1], *B = n->n_in > 2 ? n->in[2] : NULL;
    const char *sfx = emit_kernel_suffix(n, Y->dtype, d);
    if (!sfx) return -1;
    const Shape *xs = &X->shape;
    int a = ir_norm_axis(n->attrs[LN_AXIS].i, xs->rank);
    GC_ASSERT(a >= 0);
    int64_t outer = emit_dims_prod(xs, 0, a), inner = emit_dims_prod(xs, a, xs->rank);
    /* Scale and B must repeat with a period dividing inner: their shape without
     * leading 1s is a suffix of X.shape[axis:] */
    int64_t period[2] = {1, 1};
    const Value *par[2] = {Sc, B};
    char sh[160];
    for (int i = 0; i < 2; i++) {
        if (!par[i]) continue;
        const Shape *ps = &par[i]->shape;
        int lead = 0;
        while (lead < ps->rank && ps->dims[lead] == 1) lead++;
        int ok = 1;
        for (int k = lead; k < ps->rank; k++)
            if (ps->dims[k] != xs->dims[xs->rank - ps->rank + k]) ok = 0;
        if (!ok)
            return diag_node_error(d, n, "the C backend supports input '%s' only when its shape (without leading 1s) is a suffix of X.shape[axis:], got %s",
                                   i ? "B" : "Scale", ir_shape_str(ps, sh, sizeof sh));
        period[i] = emit_dims_prod(ps, lead, ps->rank);
    }
    for (int j = 1; j < n->n_out; j++)
        if (n->out[j]->dtype != Y->dtype)
            return diag_node_error(d, n, "the C backend supports output '%s' only with the dtype of X (%s), got %s",
                                   j == 1 ? "Mean" : "InvStdDev", ir_dtype_name(Y->dtype),
                                   ir_dtype_name(n->out[j]->dtype));
    if (outer * inner == 0) return 0;
    char eps[48];
    emit_float_lit(eps, sizeof eps, n->attrs[LN_EPSILON].f, Y->dtype);
    /* the rows as a product of runtime dims (the normalized dims are static) */
    CgenProd rows = cgen_dims_prod(xs, 0, a);
    char so[160];
    cgen_prod_str(&rows, so, sizeof so);
    if (Y->dtype == DT_F32 && period[0] == inner && (!B || period[1] == inner) && n->n_out == 1) {
        /* full-length Scale and B, no Mean/InvStdDev: the fast kernel */
        w_line(cgen_w(c), "gcrt_layernorm_last_f32(%s, %lld, %s, %s, %s, %s, %s);", so, (long long)inner,
               cgen_ptr(c, X), cgen_ptr(c, Sc), B ? cgen_ptr(c, B) : "0", eps, cgen_ptr(c, Y));
        return 0;
    }
    w_line(cgen_w(c), "gcrt_layernorm_%s(%s, %lld, %s, %s, %lld, %s, %lld, %s, %s, %s, %s);", sfx, so,
           (long long)inner, cgen_ptr(c, X), cgen_ptr(c, Sc), (long long)period[0],
           B ? cgen_ptr(c, B) : "0", (long long)period[1], eps, cgen_ptr(c, Y),
           n->n_out > 1 ? cgen_ptr(c, n->out[1]) : "0", n->n_out > 2 ? cgen_ptr(c, n->out[2]) : "0");
    return 0;
}

const CgenEntry cgen_nn_entries[] = {
    {OP_Conv, emit_conv, 0, conv_workspace, 1}, /* cpu, dwconv, winograd or nn: emit_conv says */
    {OP_MaxPool, emit_maxpool, 0, NULL, 1}, /* its units: cgen_use_runtime per kernel */
    {OP_AveragePool, emit_avgpool, CGEN_RT_nn, NULL, 1},
    {OP_MaxUnpool, emit_maxunpool, CGEN_RT_pool, NULL, 1},
    {OP_GlobalAveragePool, emit_gap, CGEN_RT_nn, NULL, 1},
    {OP_BatchNormalization, emit_batchnorm, CGEN_RT_nn, NULL, 1},
    {OP_Softmax, emit_softmax, CGEN_RT_nn, NULL, 1},
    {OP_LogSoftmax, emit_logsoftmax, CGEN_RT_nn, NULL, 1},
    {OP_LayerNormalization, emit_layernorm, CGEN_RT_nn, NULL, 1},
    {-1, NULL, 0, NULL, 0},
};
