/* emit_grad.c — C emitters for the grad family (ir/ops/grad.c):
 * ConvGradData, ConvGradFilter, MaxPoolGrad, AveragePoolGrad, SoftmaxGrad,
 * LogSoftmaxGrad, LayerNormalizationGrad and BatchNormalizationGrad.
 *
 * Each op becomes one call of a runtime kernel (runtime/c/gcrt_grad.h) with
 * every size a literal, as in emit_nn.c. The conv gradients get one im2col
 * tile (emit_im2col_tile_cols, as the forward Conv) as the node's planned
 * workspace (convgrad_workspace), none for a 1x1 unit-stride unpadded conv. The windowed ops take the forward
 * op's geometry that shape inference resolved (ir_grad_window_geometry:
 * kernel, strides, dilations, pads with auto_pad applied, the forward input
 * and output spatial dims), lifted to 3 spatial dims by leading unit dims.
 * epsilon is passed as a double literal: the kernels compute the statistics
 * in double. f32 and f64 are supported; other dtypes are refused with a
 * diagnostic.
 */
#include "cgen.h"
#include "emit_common.h"
#include "../../ir/ops/geometry.h"
#include "../../ir/ops/grad_attrs.h"

/* The forward window of a windowed grad node (sr <= 3 spatial dims). */
typedef struct GradGeo {
    int sr;
    int64_t in[IR_MAX_RANK], out[IR_MAX_RANK], k[IR_MAX_RANK], s[IR_MAX_RANK], dl[IR_MAX_RANK];
    int64_t pb[IR_MAX_RANK], pe[IR_MAX_RANK];
} GradGeo;

static int grad_geo(const Node *n, GradGeo *g, Diag *d)
{
    g->sr = ir_grad_window_geometry(n, g->in, g->out, g->k, g->s, g->dl, g->pb, g->pe);
    GC_ASSERT(g->sr >= 1);
    if (g->sr > 3)
        return diag_node_error(d, n, "the C backend implements %s for 1 to 3 spatial dims, got %d",
                               ir_op(n->op)->name, g->sr);
    return 0;
}

/* "in, k, out,\n" then, one indent deeper, "strides, " (the caller closes
 * the indent). */
static void emit_grad_window_head(Writer *w, const GradGeo *g)
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

/* The forward W's shape [M, C/group, k...] of a conv grad node: input W
 * or dW's shape. */
static const Shape *convgrad_wshape(const Node *n)
{
    return n->op == OP_ConvGradData ? &n->in[1]->shape : &n->out[0]->shape;
}

/* Output positions per im2col tile of a conv grad node (elements of elem
 * bytes); 0 when it needs none (1x1 unit-stride unpadded: the kernel
 * multiplies X or dX directly) or the geometry is not the C backend's. */
static int64_t convgrad_cols(const Node *n, size_t elem)
{
    GradGeo g;
    g.sr = ir_grad_window_geometry(n, g.in, g.out, g.k, g.s, g.dl, g.pb, g.pe);
    if (g.sr < 1 || g.sr > 3) return 0;
    const Shape *ws = convgrad_wshape(n);
    int64_t rows = 1, P = 1;
    int pointwise = 1;
    for (int i = 1; i < ws->rank; i++) rows *= ws->dims[i];
    for (int i = 0; i < g.sr; i++) {
        P *= g.out[i];
        if (g.k[i] != 1 || g.s[i] != 1 || g.pb[i] != 0 || g.pe[i] != 0) pointwise = 0;
    }
    return pointwise ? 0 : emit_im2col_tile_cols(rows, P, elem);
}

/* A conv grad node's scratch: one im2col tile in its output's dtype. */
static size_t convgrad_workspace(const Node *n)
{
    size_t elem = ir_dtype_size(n->out[0]->dtype);
    const Shape *ws = convgrad_wshape(n);
    int64_t rows = 1;
    for (int i = 1; i < ws->rank; i++) rows *= ws->dims[i];
    return (size_t)(rows * convgrad_cols(n, elem)) * elem;
}

/* ConvGradData(dY, W) -> dX and ConvGradFilter(X, dY) -> dW. */
static int emit_convgrad(Cgen *c, const Node *n, Diag *d)
{
    int data = n->op == OP_ConvGradData;
    const Value *out = n->out[0];
    const char *sfx = emit_kernel_suffix(n, out->dtype, d);
    GradGeo g;
    if (!sfx || grad_geo(n, &g, d)) return -1;
    if (ir_numel(&out->shape) == 0) return 0;
    /* forward X: dX's shape or input X */
    const Shape *xs = data ? &out->shape : &n->in[0]->shape, *ws = convgrad_wshape(n);
    Writer *w = cgen_w(c);
    char p0[EMIT_EXPR_CAP], p1[EMIT_EXPR_CAP];
    w_printf(w, "gcrt_conv_grad_%s_%s(%lld, %lld, %lld, %lld, ", data ? "data" : "filter", sfx,
             (long long)xs->dims[0], (long long)xs->dims[1], (long long)ws->dims[0],
             (long long)n->attrs[CONVGRAD_GROUP].i);
    emit_grad_window_head(w, &g);
    emit_dims3(w, g.dl, g.sr, 1);
    w_puts(w, ", ");
    emit_dims3(w, g.pb, g.sr, 0);
    w_printf(w, ",\n%s, %s, ", emit_ptr_name(c, n->in[0], p0), emit_ptr_name(c, n->in[1], p1));
    w_printf(w, "%s, ", cgen_ptr(c, out));
    int64_t cols = convgrad_cols(n, ir_dtype_size(out->dtype));
    if (cols && n->ws_bytes)
        w_printf(w, "(%s *)(void *)%s, %lld);\n", cgen_ctype(out->dtype), cgen_workspace(c, n), (long long)cols);
    else w_puts(w, "0, 0);\n");
    w->indent--;
    return 0;
}

/* MaxPoolGrad(X, dY) and AveragePoolGrad(dY) -> dX. */
static int emit_poolgrad(Cgen *c, const Node *n, Diag *d)
{
    int is_max = n->op == OP_MaxPoolGrad;
    const Value *dX = n->out[0];
    const char *sfx = emit_kernel_suffix(n, dX->dtype, d);
    GradGeo g;
    if (!sfx || grad_geo(n, &g, d)) return -1;
    if (ir_numel(&dX->shape) == 0) return 0;
    Writer *w = cgen_w(c);
    char p0[EMIT_EXPR_CAP];
    w_printf(w, "gcrt_%s_grad_%s(%lld, ", is_max ? "maxpool" : "avgpool", sfx,
             (long long)(dX->shape.dims[0] * dX->shape.dims[1]));
    emit_grad_window_head(w, &g);
    if (is_max) {
        emit_dims3(w, g.dl, g.sr, 1);
        w_puts(w, ", ");
        emit_dims3(w, g.pb, g.sr, 0);
        w_printf(w, ", %s, ", emit_ptr_name(c, n->in[0], p0));
        w_printf(w, "%s, ", cgen_ptr(c, n->in[1]));
    } else {
        emit_dims3(w, g.pb, g.sr, 0);
        w_puts(w, ", ");
        emit_dims3(w, g.pe, g.sr, 0);
        w_printf(w, ", %d, %s, ", n->attrs[AVGPOOLGRAD_COUNT_INCLUDE_PAD].i != 0,
                 emit_ptr_name(c, n->in[0], p0));
    }
    w_printf(w, "%s);\n", cgen_ptr(c, dX));
    w->indent--;
    return 0;
}

/* SoftmaxGrad / LogSoftmaxGrad(dY, Y) -> dX. */
static int emit_smgrad(Cgen *c, const Node *n, Diag *d)
{
    const Value *dX = n->out[0];
    const char *sfx = emit_kernel_suffix(n, dX->dtype, d);
    int64_t outer, len, inner;
    if (!sfx || ir_softmax_grad_split(n, &outer, &len, &inner, d)) return -1;
    if (ir_numel(&dX->shape) == 0) return 0;
    char p0[EMIT_EXPR_CAP], p1[EMIT_EXPR_CAP];
    w_line(cgen_w(c), "gcrt_%s_grad_%s(%lld, %lld, %lld, %s, %s, %s);",
           n->op == OP_LogSoftmaxGrad ? "logsoftmax" : "softmax", sfx, (long long)outer, (long long)len,
           (long long)inner, emit_ptr_name(c, n->in[0], p0), emit_ptr_name(c, n->in[1], p1), cgen_ptr(c, dX));
    return 0;
}

/* Output j of a normalization grad node, if present and not empty. */
static const Value *grad_opt_out(const Node *n, int j)
{
    const Value *v = j < n->n_out ? n->out[j] : NULL;
    return v && ir_numel(&v->shape) > 0 ? v : NULL;
}

/* LayerNormalizationGrad / BatchNormalizationGrad(dY, X, Scale) -> dX[, dScale[, dBias]]. */
static int emit_normgrad(Cgen *c, const Node *n, Diag *d)
{
    int is_ln = n->op == OP_LayerNormalizationGrad;
    const Value *dX = n->out[0], *dS = grad_opt_out(n, 1), *dB = grad_opt_out(n, 2);
    const char *sfx = emit_kernel_suffix(n, dX->dtype, d);
    if (!sfx) return -1;
    int64_t a, b, s = 1;
    const Shape *xs = &n->in[1]->shape;
    if (is_ln) {
        if (ir_layernorm_grad_split(n, &a, &b, d) < 0) return -1;
    } else {
        a = xs->dims[0];
        b = xs->dims[1];
        s = emit_dims_prod(xs, 2, xs->rank);
    }
    if (ir_numel(&dX->shape) == 0 && !dS && !dB) return 0;
    char eps[48], p[6][EMIT_EXPR_CAP];
    emit_float_lit(eps, sizeof eps, n->attrs[is_ln ? LNGRAD_EPSILON : BNGRAD_EPSILON].f, DT_F64);
    for (int i = 0; i < 3; i++) emit_ptr_name(c, n->in[i], p[i]);
    emit_ptr_name(c, dX, p[3]);
    if (is_ln)
        w_line(cgen_w(c), "gcrt_layernorm_grad_%s(%lld, %lld, %s, %s, %s, %s, %s, %s, %s);", sfx, (long long)a,
               (long long)b, p[0], p[1], p[2], eps, p[3], dS ? emit_ptr_name(c, dS, p[4]) : "0",
               dB ? emit_ptr_name(c, dB, p[5]) : "0");
    else
        w_line(cgen_w(c), "gcrt_batchnorm_grad_%s(%lld, %lld, %lld, %s, %s, %s, %s, %s, %s, %s);", sfx,
               (long long)a, (long long)b, (long long)s, p[0], p[1], p[2], eps, p[3],
               dS ? emit_ptr_name(c, dS, p[4]) : "0", dB ? emit_ptr_name(c, dB, p[5]) : "0");
    return 0;
}

const CgenEntry cgen_grad_entries[] = {
    {OP_ConvGradData, emit_convgrad, CGEN_RT_grad, convgrad_workspace, 0},
    {OP_ConvGradFilter, emit_convgrad, CGEN_RT_grad, convgrad_workspace, 0},
    {OP_MaxPoolGrad, emit_poolgrad, CGEN_RT_grad, NULL, 0},
    {OP_AveragePoolGrad, emit_poolgrad, CGEN_RT_grad, NULL, 0},
    {OP_SoftmaxGrad, emit_smgrad, CGEN_RT_grad, NULL, 0},
    {OP_LogSoftmaxGrad, emit_smgrad, CGEN_RT_grad, NULL, 0},
    {OP_LayerNormalizationGrad, emit_normgrad, CGEN_RT_grad, NULL, 0},
    {OP_BatchNormalizationGrad, emit_normgrad, CGEN_RT_grad, NULL, 0},
    {-1, NULL, 0, NULL, 0},
};
