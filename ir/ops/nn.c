/* nn.c — operator descriptions of the neural-network family: Conv, MaxPool,
 * AveragePool, GlobalAveragePool, BatchNormalization (inference and training
 * mode), Softmax,
 * LogSoftmax and LayerNormalization, with ONNX opset 17 semantics.
 *
 * Conv and the two windowed pools share one geometry routine
 * (nn_window_geo in nn_common.c, which ConvInteger and QLinearConv use too)
 * that validates kernel_shape/strides/dilations/pads/auto_pad against X
 * and computes, per spatial dim, the kernel, stride, dilation, resolved
 * leading/trailing pads and output size. Shape inference, the reference
 * evaluation (nn_conv_ref for every convolution) and the C emitter with
 * its im2col workspace (through ir_nn_window_geometry) all read the same numbers,
 * so they cannot disagree.
 *
 * Output size per spatial dim with effective kernel ek = (k-1)*dilation+1:
 *   NOTSET/VALID: floor((in + pb + pe - ek) / s) + 1, or with ceil_mode
 *                 ceil(...) + 1 minus one when the last window would start
 *                 past the input and leading padding (PyTorch/onnxruntime rule);
 *   SAME_*:       ceil(in / s), total pad max(0, (out-1)*s + ek - in), split
 *                 evenly with the odd unit at the end (UPPER) or begin (LOWER).
 * AveragePool divides by the taps inside the input, or with count_include_pad
 * by the taps inside the padded input (window clipped at in + pe).
 * MaxPool also accepts u8/i8 and can output Indices: per output, the flat
 * index of the (first) maximum in the whole input, (n*C + c) * plane +
 * spatial offset, the spatial offset column major with storage_order=1.
 * MaxUnpool scatters X into zeros at those indices.
 *
 * Reference evaluations work in double on any spatial rank.
 *
 * Gradients (ir/grad.h): the windowed ops, Softmax/LogSoftmax and the
 * normalizations call the grad family's backward ops (ir/ops/grad.c) with
 * the forward attributes; the rest is composed. MaxPool's gradient goes to
 * the window's first maximum (the element Indices names), as MaxPoolGrad.
 * Every float output carries a gradient: BatchNormalization's running
 * statistics (momentum * input + (1 - momentum) * batch statistic) and
 * LayerNormalization's Mean and InvStdDev feed back into X and the inputs.
 */
#include "../op.h"
#include "../fused.h"
#include "../grad.h"
#include "geometry.h"
#include "nn_common.h"
#include "nn_attrs.h"

#include <math.h>
#include <string.h>

/* See geometry.h. */
int ir_nn_window_geometry(const Node *n, int64_t *kernel, int64_t *strides, int64_t *dilations,
                          int64_t *pad_begin, int64_t *pad_end)
{
    NnWindow w;
    if (nn_window_geo(n, &w, NULL)) return -1;
    size_t sz = sizeof(int64_t) * (size_t)w.sr;
    memcpy(kernel, w.k, sz);
    memcpy(strides, w.s, sz);
    memcpy(dilations, w.dl, sz);
    memcpy(pad_begin, w.pb, sz);
    memcpy(pad_end, w.pe, sz);
    return w.sr;
}

/* ---- Conv --------------------------------------------------------------- */

/* Inputs from x3 on are epilogue operands (attribute `epilogue`, ir/fused.h). */
static const char *const conv_in[3 + FUSED_MAX_EPI] = {"X", "W", "B", "x3", "x4", "x5", "x6", "x7", "x8", "x9", "x10"};
static const char *const conv_out[] = {"Y"};
/* See nn_common.h: ConvInteger and QLinearConv take the entries before CONV_EPILOGUE. */
const AttrSpec nn_conv_attrs[CONV_COUNT] = {
    [CONV_AUTO_PAD] = {"auto_pad", ATTR_STRING, "NOTSET", 0},
    [CONV_DILATIONS] = {"dilations", ATTR_INTS, NULL, 0},
    [CONV_GROUP] = {"group", ATTR_INT, "1", 0},
    [CONV_KERNEL_SHAPE] = {"kernel_shape", ATTR_INTS, NULL, 0},
    [CONV_PADS] = {"pads", ATTR_INTS, NULL, 0},
    [CONV_STRIDES] = {"strides", ATTR_INTS, NULL, 0},
    [CONV_EPILOGUE] = {"epilogue", ATTR_STRING, NULL, 0},
};
OP_ATTRS_CHECK(nn_conv_attrs, CONV_COUNT);

static int conv_infer(Node *n, Diag *d)
{
    NnWindow w;
    char b1[160];
    if (nn_check_float(n, 0, d) || nn_check_same_dtype(n, 1, d)) return -1;
    if (n->n_in > 2 && n->in[2] && nn_check_same_dtype(n, 2, d)) return -1;
    if (nn_window_geo(n, &w, d)) return -1;
    const Shape *xs = &n->in[0]->shape, *ws = &n->in[1]->shape;
    int64_t group = n->attrs[CONV_GROUP].i, C = xs->dims[1], M = ws->dims[0];
    if (nn_check_group(n, group, C, d)) return -1;
    if (M % group != 0)
        return diag_node_error(d, n, "input 'W' shape %s has %lld output channels, which group=%lld does not divide",
                               ir_shape_str(ws, b1, sizeof b1), (long long)M, (long long)group);
    if (ws->dims[1] != C / group)
        return diag_node_error(d, n, "input 'W' has %lld input channels per group but X has %lld channels and group=%lld (expects %lld)",
                               (long long)ws->dims[1], (long long)C, (long long)group, (long long)(C / group));
    if (n->n_in > 2 && n->in[2] && nn_check_vec(n, 2, M, "output channels of W", d)) return -1;
    Shape os = {0};
    nn_window_out_shape(n, &w, M, &os);
    ir_set_out(n, 0, n->in[0]->dtype, &os);
    return ir_epilogue_infer(n, 3, d);
}

static int conv_eval(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    NnWindow w;
    if (nn_window_geo(n, &w, d)) return -1;
    nn_conv_ref(&w, n->in[0]->shape.dims[0], n->in[0]->shape.dims[1], n->in[1]->shape.dims[0],
                n->attrs[CONV_GROUP].i, in[0], in[1], n->n_in > 2 ? in[2] : NULL, out[0]);
    return ir_epilogue_eval(n, in, out[0], d);
}

/* dX = ConvGradData(dY, W) and dW = ConvGradFilter(X, dY), each with the
 * forward attributes and the shape it does not receive; dB sums dY over
 * every axis but 1. A fused Conv (epilogue) has none. */
static int conv_grad(GradCtx *gc)
{
    const Node *n = gc->n;
    char b1[160];
    if (n->attrs[CONV_EPILOGUE].set)
        return diag_node_error(gc->d, n, "has no gradient once fused (autodiff runs before fusion)");
    Value *x = n->in[0], *w = n->in[1], *dy = gb_dy(gc, 0);
    if (gc->need[0]) {
        const char *a = gb_fmt(gc, "x_shape=%s", nn_ints_str(x->shape.dims, x->shape.rank, b1, sizeof b1));
        gb_set(gc, 0, gb2(gc, OP_ConvGradData, gb_fwd_attrs(gc, a), dy, w));
    }
    if (gc->need[1]) {
        const char *a = gb_fmt(gc, "w_shape=%s", nn_ints_str(w->shape.dims, w->shape.rank, b1, sizeof b1));
        gb_set(gc, 1, gb2(gc, OP_ConvGradFilter, gb_fwd_attrs(gc, a), x, dy));
    }
    if (ir_has_input(n, 2) && gc->need[2]) gb_set(gc, 2, nn_grad_sum_channels(gc, dy));
    return gb_done(gc);
}

/* dX reads W and dW reads X; dB reads nothing. */
static int conv_bw(const Node *n, int is_output, int i) { (void)n; return !is_output && i < 2; }

/* Size of one im2col element: the input dtype's for Conv; the quantized
 * convolutions run the kernel on double copies (see geometry.h). */
const OpDesc op_Conv = {
    .name = "Conv",
    .min_in = 2, .max_in = 3 + FUSED_MAX_EPI, .in_names = conv_in,
    .min_out = 1, .max_out = 1, .out_names = conv_out,
    OP_ATTRS(nn_conv_attrs),
    .infer = conv_infer,
    .infer_sym = ir_sym_batch,
    .eval = conv_eval,
    .gradient = conv_grad,
    .backward_reads = conv_bw,
};

/* ---- MaxPool / AveragePool ---------------------------------------------- */

static const char *const pool_in[] = {"X"};
static const char *const maxpool_out[] = {"Y", "Indices"};
static const AttrSpec maxpool_attrs[] = {
    [MAXPOOL_AUTO_PAD] = {"auto_pad", ATTR_STRING, "NOTSET", 0},
    [MAXPOOL_CEIL_MODE] = {"ceil_mode", ATTR_INT, "0", 0},
    [MAXPOOL_DILATIONS] = {"dilations", ATTR_INTS, NULL, 0},
    [MAXPOOL_KERNEL_SHAPE] = {"kernel_shape", ATTR_INTS, NULL, 1},
    [MAXPOOL_PADS] = {"pads", ATTR_INTS, NULL, 0},
    [MAXPOOL_STORAGE_ORDER] = {"storage_order", ATTR_INT, "0", 0},
    [MAXPOOL_STRIDES] = {"strides", ATTR_INTS, NULL, 0},
};
OP_ATTRS_CHECK(maxpool_attrs, MAXPOOL_COUNT);

/* MaxPool also takes 8-bit integers and may output the argmax Indices. */
static int pool_infer(Node *n, Diag *d)
{
    NnWindow w;
    int is_max = n->op == OP_MaxPool;
    DType t = n->in[0]->dtype;
    if (!(is_max && (t == DT_U8 || t == DT_I8)) && nn_check_float(n, 0, d)) return -1;
    if (is_max) {
        int64_t so = n->attrs[MAXPOOL_STORAGE_ORDER].i;
        if (so != 0 && so != 1)
            return diag_node_error(d, n, "attribute 'storage_order' must be 0 (row major) or 1 (column major), got %lld",
                                   (long long)so);
    }
    if (nn_window_geo(n, &w, d)) return -1;
    Shape os = {0};
    nn_window_out_shape(n, &w, n->in[0]->shape.dims[1], &os);
    ir_set_out(n, 0, t, &os);
    if (n->n_out > 1 && n->out[1]) ir_set_out(n, 1, DT_I64, &os);
    return 0;
}

/* Shared pooling reference: max (is_max) or mean of each window. With
 * `idx` (MaxPool's Indices) the flat index of each maximum (first on ties)
 * over the whole input, its spatial part column major when col_major. */
static int pool_eval(const Node *n, const double *const *in, double *const *out, Diag *d, int is_max,
                     int count_include_pad, double *idx, int col_major)
{
    NnWindow w;
    if (nn_window_geo(n, &w, d)) return -1;
    const Shape *xs = &n->in[0]->shape;
    int64_t NC = xs->dims[0] * xs->dims[1], plane = 1, P = 1, KP = 1;
    for (int i = 0; i < w.sr; i++) { plane *= w.in[i]; P *= w.out[i]; KP *= w.k[i]; }
    for (int64_t q = 0; q < NC; q++) {
        const double *x = in[0] + q * plane;
        int64_t o[IR_MAX_RANK] = {0};
        for (int64_t p = 0; p < P; p++, nn_next_index(o, w.out, w.sr)) {
            double acc = is_max ? -INFINITY : 0, cnt = 1, arg = 0;
            int found = 0;
            int64_t t[IR_MAX_RANK] = {0};
            for (int64_t kp = 0; kp < KP; kp++, nn_next_index(t, w.k, w.sr)) {
                int64_t off = 0, ok = 1, pos[IR_MAX_RANK];
                for (int i = 0; i < w.sr && ok; i++) {
                    pos[i] = o[i] * w.s[i] - w.pb[i] + t[i] * w.dl[i];
                    ok = pos[i] >= 0 && pos[i] < w.in[i];
                    off = off * w.in[i] + pos[i];
                }
                if (!ok) continue;
                if (is_max) {
                    /* first tap starts; strictly greater replaces; NaN yields to a number */
                    if (!found || x[off] > acc || (acc != acc && x[off] == x[off])) {
                        int64_t cm = 0;
                        for (int i = w.sr - 1; i >= 0; i--) cm = cm * w.in[i] + pos[i];
                        arg = (double)(col_major ? cm : off);
                        acc = x[off];
                    }
                    found = 1;
                } else {
                    acc += x[off];
                }
            }
            if (!is_max) {
                for (int i = 0; i < w.sr; i++) {
                    int64_t s = o[i] * w.s[i] - w.pb[i], e = s + w.k[i];
                    int64_t lim = count_include_pad ? w.in[i] + w.pe[i] : w.in[i];
                    int64_t lo = count_include_pad ? s : (s < 0 ? 0 : s);
                    cnt *= (double)((e < lim ? e : lim) - lo);
                }
                acc /= cnt;
            }
            out[0][q * P + p] = acc;
            if (idx) idx[q * P + p] = (double)(q * plane) + arg;
        }
    }
    return 0;
}

static int maxpool_eval(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    double *idx = n->n_out > 1 && n->out[1] ? out[1] : NULL;
    return pool_eval(n, in, out, d, 1, 0, idx, n->attrs[MAXPOOL_STORAGE_ORDER].i == 1);
}

/* MaxPoolGrad(X, dY): dY to each window's first maximum. Only Y carries a
 * gradient (Indices is integer). */
static int maxpool_grad(GradCtx *gc)
{
    gb_set(gc, 0, gb2(gc, OP_MaxPoolGrad, gb_fwd_attrs(gc, NULL), gc->n->in[0], gb_dy(gc, 0)));
    return gb_done(gc);
}

const OpDesc op_MaxPool = {
    .name = "MaxPool",
    .min_in = 1, .max_in = 1, .in_names = pool_in,
    .min_out = 1, .max_out = 2, .out_names = maxpool_out,
    OP_ATTRS(maxpool_attrs),
    .infer = pool_infer,
    .infer_sym = ir_sym_batch,
    .eval = maxpool_eval,
    .gradient = maxpool_grad,
    .backward_reads = ir_bw_input0,
};

static const AttrSpec avgpool_attrs[] = {
    [AVGPOOL_AUTO_PAD] = {"auto_pad", ATTR_STRING, "NOTSET", 0},
    [AVGPOOL_CEIL_MODE] = {"ceil_mode", ATTR_INT, "0", 0},
    [AVGPOOL_COUNT_INCLUDE_PAD] = {"count_include_pad", ATTR_INT, "0", 0},
    [AVGPOOL_KERNEL_SHAPE] = {"kernel_shape", ATTR_INTS, NULL, 1},
    [AVGPOOL_PADS] = {"pads", ATTR_INTS, NULL, 0},
    [AVGPOOL_STRIDES] = {"strides", ATTR_INTS, NULL, 0},
};
OP_ATTRS_CHECK(avgpool_attrs, AVGPOOL_COUNT);
static const char *const one_out_Y[] = {"Y"};

static int avgpool_eval(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    return pool_eval(n, in, out, d, 0, n->attrs[AVGPOOL_COUNT_INCLUDE_PAD].i != 0, NULL, 0);
}

/* AveragePoolGrad(dY): dY / divisor to every tap of its window. */
static int avgpool_grad(GradCtx *gc)
{
    const Shape *xs = &gc->n->in[0]->shape;
    char b1[160];
    const char *a = gb_fmt(gc, "x_shape=%s", nn_ints_str(xs->dims, xs->rank, b1, sizeof b1));
    gb_set(gc, 0, gb1(gc, OP_AveragePoolGrad, gb_fwd_attrs(gc, a), gb_dy(gc, 0)));
    return gb_done(gc);
}

const OpDesc op_AveragePool = {
    .name = "AveragePool",
    .min_in = 1, .max_in = 1, .in_names = pool_in,
    .min_out = 1, .max_out = 1, .out_names = one_out_Y,
    OP_ATTRS(avgpool_attrs),
    .infer = pool_infer,
    .infer_sym = ir_sym_batch,
    .eval = avgpool_eval,
    .gradient = avgpool_grad,
    .backward_reads = ir_bw_none,
};

/* ---- MaxUnpool ---------------------------------------------------------- */

static const char *const maxunpool_in[] = {"X", "I", "output_shape"};
static const AttrSpec maxunpool_attrs[] = {
    [MAXUNPOOL_KERNEL_SHAPE] = {"kernel_shape", ATTR_INTS, NULL, 1},
    [MAXUNPOOL_PADS] = {"pads", ATTR_INTS, NULL, 0},
    [MAXUNPOOL_STRIDES] = {"strides", ATTR_INTS, NULL, 0},
};
OP_ATTRS_CHECK(maxunpool_attrs, MAXUNPOOL_COUNT);

/* Indices I refer to the default shape, per spatial dim
 * (in - 1) * stride + kernel - pad_begin - pad_end; output_shape (a
 * constant) may give other spatial dims: elements keep their coordinates
 * (the extra is zero padding at the end, as the ONNX reference). */
static int maxunpool_dims(const Node *n, int64_t *dims, Diag *d)
{
    const Value *x = n->in[0];
    if (nn_check_min_rank(n, 3, "N, C and at least one spatial dim", d)) return -1;
    int sr = x->shape.rank - 2;
    const AttrVal *ka = &n->attrs[MAXUNPOOL_KERNEL_SHAPE];
    if (ka->n != sr)
        return diag_node_error(d, n, "attribute 'kernel_shape' has %d values but X has %d spatial dims", ka->n, sr);
    if (nn_check_kernel_positive(n, ka->ints, sr, d)) return -1;
    int64_t st[IR_MAX_RANK], pads[2 * IR_MAX_RANK];
    if (nn_window_ints(n, "strides", sr, sr, 1, 1, st, d) || nn_window_ints(n, "pads", sr, 2 * sr, 0, 0, pads, d))
        return -1;
    for (int i = 0; i < sr; i++) {
        dims[i] = (x->shape.dims[2 + i] - 1) * st[i] + ka->ints[i] - pads[i] - pads[sr + i];
        if (dims[i] < 0) return diag_node_error(d, n, "output spatial dim %d would be %lld", i, (long long)dims[i]);
    }
    return sr;
}

int ir_maxunpool_index_dims(const Node *n, int64_t *dims)
{
    return maxunpool_dims(n, dims, NULL);
}

static int maxunpool_infer(Node *n, Diag *d)
{
    const Value *x = n->in[0], *ix = n->in[1];
    char b1[160], b2[160];
    if (ix->dtype != DT_I64)
        return diag_node_error(d, n, "input 'I' has dtype %s; expected i64", ir_dtype_name(ix->dtype));
    if (!ir_shape_eq(&ix->shape, &x->shape))
        return diag_node_error(d, n, "input 'I' shape %s differs from input 'X' shape %s",
                               ir_shape_str(&ix->shape, b1, sizeof b1), ir_shape_str(&x->shape, b2, sizeof b2));
    int64_t dims[IR_MAX_RANK];
    int sr = maxunpool_dims(n, dims, d);
    if (sr < 0) return -1;
    Shape os = x->shape;
    memcpy(os.dims + 2, dims, sizeof(int64_t) * (size_t)sr);
    if (ir_has_input(n, 2) && n->in[2]->kind != VK_CONST) {
        /* runtime shapes: output_shape arrives at run time; the spatial
         * dims it gives are data-dependent, bounded only by --max-dim */
        const Value *os_v = n->in[2];
        if (os_v->dtype != DT_I64 || os_v->shape.rank != 1 || os_v->shape.sym[0] || os_v->shape.dims[0] != x->shape.rank)
            return diag_node_error(d, n, "input 'output_shape' must be an i64 list of %d values (the rank of X)", x->shape.rank);
        for (int i = 2; i < x->shape.rank; i++) {
            os.dims[i] = IR_DIM_UNBOUNDED;
            os.sym[i] = IR_SYM_NEW;
        }
    } else if (ir_has_input(n, 2)) {
        int64_t v[IR_MAX_RANK + 1];
        int k = ir_const_ints(n->in[2], v, IR_MAX_RANK + 1);
        if (k < 0) return diag_node_error(d, n, "input 'output_shape' must be a constant");
        if (k != x->shape.rank)
            return diag_node_error(d, n, "input 'output_shape' has %d values; expected %d (the rank of X)", k,
                                   x->shape.rank);
        for (int i = 0; i < k; i++)
            if (v[i] < 0 || (i < 2 && v[i] != x->shape.dims[i]))
                return diag_node_error(d, n, "input 'output_shape' %s does not fit X %s (same N and C, sizes >= 0)",
                                       nn_ints_str(v, k, b1, sizeof b1), ir_shape_str(&x->shape, b2, sizeof b2));
        memcpy(os.dims, v, sizeof(int64_t) * (size_t)k);
    }
    ir_set_out(n, 0, x->dtype, &os);
    return 0;
}

static int maxunpool_eval(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    int64_t src[IR_MAX_RANK];
    int sr = maxunpool_dims(n, src, d);
    if (sr < 0) return -1;
    const int64_t *dst = n->out[0]->shape.dims + 2;
    int64_t nx = ir_numel(&n->in[0]->shape), ny = ir_numel(&n->out[0]->shape);
    int64_t psrc = nn_prod(src, 0, sr), pdst = nn_prod(dst, 0, sr);
    int64_t NC = n->in[0]->shape.dims[0] * n->in[0]->shape.dims[1];
    for (int64_t i = 0; i < ny; i++) out[0][i] = 0.0;
    for (int64_t i = 0; i < nx; i++) {
        double jd = in[1][i];
        if (!(jd >= 0 && jd < (double)(NC * psrc))) continue;
        int64_t j = (int64_t)jd, r = j % psrc, o = 0, ok = 1, c[IR_MAX_RANK];
        for (int a = sr - 1; a >= 0; a--) {
            c[a] = r % src[a];
            r /= src[a];
        }
        for (int a = 0; a < sr; a++) {
            ok = ok && c[a] < dst[a];
            o = o * dst[a] + c[a];
        }
        if (ok) out[0][(j / psrc) * pdst + o] = in[0][i];
    }
    return 0;
}

const OpDesc op_MaxUnpool = {
    .name = "MaxUnpool",
    .min_in = 2, .max_in = 3, .in_names = maxunpool_in,
    .min_out = 1, .max_out = 1, .out_names = one_out_Y,
    OP_ATTRS(maxunpool_attrs),
    .infer = maxunpool_infer,
    .eval = maxunpool_eval,
    .shape_inputs = 1u << 2,
};

/* ---- GlobalAveragePool -------------------------------------------------- */

static int gap_eval(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    (void)d;
    const Shape *xs = &n->in[0]->shape;
    int64_t NC = xs->dims[0] * xs->dims[1], S = 1;
    for (int i = 2; i < xs->rank; i++) S *= xs->dims[i];
    for (int64_t q = 0; q < NC; q++) {
        double acc = 0;
        for (int64_t i = 0; i < S; i++) acc += in[0][q * S + i];
        out[0][q] = acc / (double)S;
    }
    return 0;
}

/* dY / (spatial size), broadcast over the spatial dims. */
static int gap_grad(GradCtx *gc)
{
    const Value *x = gc->n->in[0];
    double S = (double)nn_prod(x->shape.dims, 2, x->shape.rank);
    Value *g = gb2(gc, OP_Mul, NULL, gb_dy(gc, 0), gb_scalar(gc, x->dtype, 1.0 / S));
    gb_set(gc, 0, gb_expand(gc, g, &x->shape));
    return gb_done(gc);
}

const OpDesc op_GlobalAveragePool = {
    .name = "GlobalAveragePool",
    .min_in = 1, .max_in = 1, .in_names = pool_in,
    .min_out = 1, .max_out = 1, .out_names = one_out_Y,
    .infer = nn_infer_global_pool,
    .infer_sym = ir_sym_batch,
    .eval = gap_eval,
    .gradient = gap_grad,
    .backward_reads = ir_bw_none,
};

/* ---- BatchNormalization ------------------------------------------------- */

/* Inference: Y = (X - input_mean) / sqrt(input_var + eps) * scale + B.
 * training_mode=1: the same with the batch mean and population variance
 * over every axis but 1, and the optional outputs running_mean/var =
 * momentum * input_mean/var + (1 - momentum) * batch mean/var. */

static const char *const bn_in[] = {"X", "scale", "B", "input_mean", "input_var"};
static const char *const bn_out[] = {"Y", "running_mean", "running_var"};
static const AttrSpec bn_attrs[] = {
    [BN_EPSILON] = {"epsilon", ATTR_FLOAT, "1e-5", 0},
    [BN_MOMENTUM] = {"momentum", ATTR_FLOAT, "0.9", 0},
    [BN_TRAINING_MODE] = {"training_mode", ATTR_INT, "0", 0},
};
OP_ATTRS_CHECK(bn_attrs, BN_COUNT);

static int bn_infer(Node *n, Diag *d)
{
    const Shape *xs = &n->in[0]->shape;
    int64_t tm = n->attrs[BN_TRAINING_MODE].i;
    if (tm != 0 && tm != 1)
        return diag_node_error(d, n, "attribute 'training_mode' must be 0 or 1, got %lld", (long long)tm);
    if (!tm && n->n_out > 1)
        return diag_node_error(d, n, "outputs 'running_mean' and 'running_var' exist only in training mode; the inference form has 1 output");
    if (nn_check_float(n, 0, d) || nn_check_min_rank(n, 2, "N, C, ...", d)) return -1;
    for (int i = 1; i < 5; i++)
        if (nn_check_same_dtype(n, i, d) || nn_check_vec(n, i, xs->dims[1], "channels of X", d)) return -1;
    ir_set_out(n, 0, n->in[0]->dtype, xs);
    for (int o = 1; o < n->n_out; o++)
        if (n->out[o]) ir_set_out(n, o, n->in[0]->dtype, &n->in[3]->shape);
    return 0;
}

static int bn_eval(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    (void)d;
    const Shape *xs = &n->in[0]->shape;
    int64_t N = xs->dims[0], C = xs->dims[1], S = 1;
    for (int i = 2; i < xs->rank; i++) S *= xs->dims[i];
    double eps = n->attrs[BN_EPSILON].f, mom = n->attrs[BN_MOMENTUM].f;
    int train = n->attrs[BN_TRAINING_MODE].i != 0;
    for (int64_t c = 0; c < C; c++) {
        double mu = in[3][c], var = in[4][c];
        if (train) {
            double s = 0.0, q = 0.0, cnt = (double)(N * S);
            for (int64_t b = 0; b < N; b++)
                for (int64_t i = 0; i < S; i++) s += in[0][(b * C + c) * S + i];
            mu = s / cnt;
            for (int64_t b = 0; b < N; b++)
                for (int64_t i = 0; i < S; i++) {
                    double e = in[0][(b * C + c) * S + i] - mu;
                    q += e * e;
                }
            var = q / cnt;
            if (n->n_out > 1 && out[1]) out[1][c] = in[3][c] * mom + mu * (1.0 - mom);
            if (n->n_out > 2 && out[2]) out[2][c] = in[4][c] * mom + var * (1.0 - mom);
        }
        double a = in[1][c] / sqrt(var + eps);
        for (int64_t b = 0; b < N; b++)
            for (int64_t i = 0; i < S; i++) {
                int64_t e = (b * C + c) * S + i;
                out[0][e] = (in[0][e] - mu) * a + in[2][c];
            }
    }
    return 0;
}

/* The axes of a rank-r [N, C, ...] tensor but 1, as attribute text. */
static const char *nn_axes_but_channels(GradCtx *gc, int r)
{
    int64_t axes[IR_MAX_RANK];
    int na = 0;
    char b1[160];
    for (int k = 0; k < r; k++)
        if (k != 1) axes[na++] = k;
    return gb_fmt(gc, "axes=%s", nn_ints_str(axes, na, b1, sizeof b1));
}

/* Training mode: BatchNormalizationGrad gives X's, scale's and B's
 * gradients through the batch statistics; the running statistics add
 * theirs: running_mean = momentum * input_mean + (1 - momentum) * mean(X)
 * sends momentum * dRM to input_mean and (1 - momentum) / m * dRM to X,
 * running_var (population variance) momentum * dRV to input_var and
 * 2 (1 - momentum) / m * (X - mean) * dRV to X (m elements per channel).
 * Inference mode is composed, with rstd = 1/sqrt(var + eps), a = scale *
 * rstd and sums over every axis but 1: dX = dY * a, dB = sum dY, dscale =
 * rstd * sum dY (X - mean), dmean = -a * sum dY, dvar = -scale rstd^3 / 2
 * * sum dY (X - mean). */
static int bn_grad(GradCtx *gc)
{
    const Node *n = gc->n;
    Value *x = n->in[0], *scale = n->in[1], *dy = gb_dy(gc, 0);
    int r = x->shape.rank;
    DType t = x->dtype;
    if (n->attrs[BN_TRAINING_MODE].i) {
        int64_t C = x->shape.dims[1], numel = ir_numel(&x->shape);
        double mom = n->attrs[BN_MOMENTUM].f, inv_m = numel > 0 ? (double)C / (double)numel : 0.0;
        Value *o[3] = {NULL, NULL, NULL}, *in[3] = {dy, x, scale};
        int n_out = gc->need[2] ? 3 : gc->need[1] ? 2 : 1;
        if (gc->need[0] || gc->need[1] || gc->need[2])
            gb_node(gc, OP_BatchNormalizationGrad, gb_fwd_attrs(gc, NULL), 3, in, n_out, o);
        Value *dx = o[0], *drm = n->n_out > 1 ? gc->dy[1] : NULL, *drv = n->n_out > 2 ? gc->dy[2] : NULL;
        if (drm) {
            if (gc->need[0])
                dx = gb2(gc, OP_Add, NULL, dx, gb2(gc, OP_Mul, NULL, nn_grad_per_channel(gc, drm, r), gb_scalar(gc, t, (1 - mom) * inv_m)));
            gb_set(gc, 3, gb2(gc, OP_Mul, NULL, drm, gb_scalar(gc, t, mom)));
        }
        if (drv) {
            if (gc->need[0]) {
                Value *mu = gb1(gc, OP_ReduceMean, nn_axes_but_channels(gc, r), x);
                Value *f = gb2(gc, OP_Mul, NULL, nn_grad_per_channel(gc, drv, r), gb_scalar(gc, t, 2 * (1 - mom) * inv_m));
                dx = gb2(gc, OP_Add, NULL, dx, gb2(gc, OP_Mul, NULL, gb2(gc, OP_Sub, NULL, x, mu), f));
            }
            gb_set(gc, 4, gb2(gc, OP_Mul, NULL, drv, gb_scalar(gc, t, mom)));
        }
        gb_set(gc, 0, dx);
        gb_set(gc, 1, o[1]);
        gb_set(gc, 2, o[2]);
        return gb_done(gc);
    }
    Value *mean = n->in[3], *var = n->in[4];
    Value *rstd = gb1(gc, OP_Reciprocal, NULL,
                      gb1(gc, OP_Sqrt, NULL, gb2(gc, OP_Add, NULL, var, gb_scalar(gc, t, n->attrs[BN_EPSILON].f))));
    Value *a = gb2(gc, OP_Mul, NULL, scale, rstd), *sdy = NULL, *sdyx = NULL;
    if (gc->need[0]) gb_set(gc, 0, gb2(gc, OP_Mul, NULL, dy, nn_grad_per_channel(gc, a, r)));
    if (gc->need[2] || gc->need[3]) sdy = nn_grad_sum_channels(gc, dy);
    if (gc->need[1] || gc->need[4])
        sdyx = nn_grad_sum_channels(gc, gb2(gc, OP_Mul, NULL, dy, gb2(gc, OP_Sub, NULL, x, nn_grad_per_channel(gc, mean, r))));
    if (gc->need[1]) gb_set(gc, 1, gb2(gc, OP_Mul, NULL, sdyx, rstd));
    if (gc->need[2]) gb_set(gc, 2, sdy);
    if (gc->need[3]) gb_set(gc, 3, gb1(gc, OP_Neg, NULL, gb2(gc, OP_Mul, NULL, sdy, a)));
    if (gc->need[4]) {
        Value *r3 = gb2(gc, OP_Mul, NULL, rstd, gb2(gc, OP_Mul, NULL, rstd, rstd));
        Value *f = gb2(gc, OP_Mul, NULL, gb2(gc, OP_Mul, NULL, scale, r3), gb_scalar(gc, t, -0.5));
        gb_set(gc, 4, gb2(gc, OP_Mul, NULL, sdyx, f));
    }
    return gb_done(gc);
}

/* Everything but B (training mode reads X and scale only). */
static int bn_bw(const Node *n, int is_output, int i) { (void)n; return !is_output && i != 2; }

/* input_mean <- running_mean, input_var <- running_var (training mode). */
static const InplacePair bn_stats[2] = {{3, 1}, {4, 2}};

/* Inference form: normalize with the running statistics; no stats outputs. */
static void bn_to_inference(Node *n)
{
    n->attrs[BN_TRAINING_MODE].i = 0;
    n->n_out = 1;
}

const OpDesc op_BatchNormalization = {
    .name = "BatchNormalization",
    .min_in = 5, .max_in = 5, .in_names = bn_in,
    .min_out = 1, .max_out = 3, .out_names = bn_out,
    OP_ATTRS(bn_attrs),
    .infer = bn_infer,
    .infer_sym = ir_sym_batch,
    .inplace = ir_inplace_00, .n_inplace = 1,
    .eval = bn_eval,
    .gradient = bn_grad,
    .backward_reads = bn_bw,
    .stat_updates = bn_stats, .n_stat_updates = 2,
    .to_inference = bn_to_inference,
};

/* ---- Softmax / LogSoftmax ----------------------------------------------- */

static const char *const sm_in[] = {"input"};
static const char *const sm_out[] = {"output"};
static const AttrSpec sm_attrs[] = {[SOFTMAX_AXIS] = {"axis", ATTR_INT, "-1", 0}};
OP_ATTRS_CHECK(sm_attrs, SOFTMAX_COUNT);

static int sm_infer(Node *n, Diag *d)
{
    int64_t o, l, i;
    if (nn_check_float(n, 0, d) || nn_axis_split(n, SOFTMAX_AXIS, &o, &l, &i, d)) return -1;
    ir_set_out(n, 0, n->in[0]->dtype, &n->in[0]->shape);
    return 0;
}

static int sm_eval_any(const Node *n, const double *const *in, double *const *out, Diag *d, int log_out)
{
    int64_t outer, len, inner;
    if (nn_axis_split(n, SOFTMAX_AXIS, &outer, &len, &inner, d)) return -1;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            const double *x = in[0] + o * len * inner + i;
            double *y = out[0] + o * len * inner + i;
            double mx = -INFINITY, s = 0;
            for (int64_t j = 0; j < len; j++) mx = x[j * inner] > mx ? x[j * inner] : mx;
            for (int64_t j = 0; j < len; j++) s += exp(x[j * inner] - mx);
            for (int64_t j = 0; j < len; j++)
                y[j * inner] = log_out ? x[j * inner] - mx - log(s) : exp(x[j * inner] - mx) / s;
        }
    return 0;
}

static int softmax_eval(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    return sm_eval_any(n, in, out, d, 0);
}

static int logsoftmax_eval(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    return sm_eval_any(n, in, out, d, 1);
}

/* SoftmaxGrad / LogSoftmaxGrad(dY, Y), from the forward output. */
static int sm_grad(GradCtx *gc)
{
    OpKind op = gc->n->op == OP_Softmax ? OP_SoftmaxGrad : OP_LogSoftmaxGrad;
    gb_set(gc, 0, gb2(gc, op, gb_fwd_attrs(gc, NULL), gb_dy(gc, 0), gc->n->out[0]));
    return gb_done(gc);
}

/* In place (ir_inplace_00): each row is read whole before (or, element by
 * element, just before) it is written, so Y may be X's buffer (runtime
 * softmax_any, layernorm). */
const OpDesc op_Softmax = {
    .name = "Softmax",
    .min_in = 1, .max_in = 1, .in_names = sm_in,
    .min_out = 1, .max_out = 1, .out_names = sm_out,
    OP_ATTRS(sm_attrs),
    .infer = sm_infer,
    .infer_sym = ir_sym_same,
    .inplace = ir_inplace_00, .n_inplace = 1,
    .eval = softmax_eval,
    .gradient = sm_grad,
    .backward_reads = ir_bw_outputs,
};

const OpDesc op_LogSoftmax = {
    .name = "LogSoftmax",
    .min_in = 1, .max_in = 1, .in_names = sm_in,
    .min_out = 1, .max_out = 1, .out_names = sm_out,
    OP_ATTRS(sm_attrs),
    .infer = sm_infer,
    .infer_sym = ir_sym_same,
    .inplace = ir_inplace_00, .n_inplace = 1,
    .eval = logsoftmax_eval,
    .gradient = sm_grad,
    .backward_reads = ir_bw_outputs,
};

/* ---- LayerNormalization ------------------------------------------------- */

static const char *const ln_in[] = {"X", "Scale", "B"};
static const char *const ln_out[] = {"Y", "Mean", "InvStdDev"};
static const AttrSpec ln_attrs[] = {
    [LN_AXIS] = {"axis", ATTR_INT, "-1", 0},
    [LN_EPSILON] = {"epsilon", ATTR_FLOAT, "1e-5", 0},
    [LN_STASH_TYPE] = {"stash_type", ATTR_INT, "1", 0},
};
OP_ATTRS_CHECK(ln_attrs, LN_COUNT);

/* Normalized axis of a LayerNormalization node, -1 when out of range. */
static int ln_axis(const Node *n)
{
    return ir_norm_axis(n->attrs[LN_AXIS].i, n->in[0]->shape.rank);
}

/* Element strides of input i (Scale or B) broadcast to X.shape[axis:]. */
static void ln_param_strides(const Node *n, int i, int axis, int64_t *st)
{
    const Shape *xs = &n->in[0]->shape, *ps = &n->in[i]->shape;
    int r = xs->rank - axis;
    int64_t acc = 1;
    for (int k = r - 1; k >= 0; k--) {
        int pk = k - (r - ps->rank);
        if (pk < 0) { st[k] = 0; continue; }
        st[k] = ps->dims[pk] == 1 ? 0 : acc;
        acc *= ps->dims[pk];
    }
}

static int ln_infer(Node *n, Diag *d)
{
    const Shape *xs = &n->in[0]->shape;
    char b1[160], b2[160];
    if (nn_check_float(n, 0, d)) return -1;
    int axis = ln_axis(n);
    if (axis < 0)
        return diag_node_error(d, n, "attribute 'axis' = %lld is out of range for input 'X' of shape %s",
                               (long long)n->attrs[LN_AXIS].i, ir_shape_str(xs, b1, sizeof b1));
    if (n->attrs[LN_STASH_TYPE].i != 1)
        return diag_node_error(d, n, "attribute 'stash_type' = %lld is not supported (only 1, float32)",
                               (long long)n->attrs[LN_STASH_TYPE].i);
    Shape norm = ir_shape(xs->rank - axis, xs->dims + axis);
    for (int i = 1; i < 3 && i < n->n_in; i++) {
        if (!n->in[i]) continue;
        if (nn_check_same_dtype(n, i, d)) return -1;
        const Shape *ps = &n->in[i]->shape;
        int ok = ps->rank <= norm.rank;
        for (int k = 0; ok && k < ps->rank; k++) {
            int64_t pd = ps->dims[ps->rank - 1 - k], nd = norm.dims[norm.rank - 1 - k];
            ok = pd == nd || pd == 1;
        }
        if (!ok)
            return diag_node_error(d, n, "input '%s' shape %s does not broadcast to the normalized shape %s (X.shape[%d:])",
                                   ln_in[i], ir_shape_str(ps, b1, sizeof b1), ir_shape_str(&norm, b2, sizeof b2), axis);
    }
    ir_set_out(n, 0, n->in[0]->dtype, xs);
    Shape ss = *xs;
    for (int k = axis; k < ss.rank; k++) ss.dims[k] = 1;
    for (int j = 1; j < n->n_out; j++) ir_set_out(n, j, DT_F32, &ss);
    return 0;
}

static int ln_eval(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    const Shape *xs = &n->in[0]->shape;
    int axis = ln_axis(n);
    if (axis < 0) return diag_node_error(d, n, "attribute 'axis' is out of range");
    int r = xs->rank - axis;
    int64_t outer = 1, inner = 1;
    for (int k = 0; k < axis; k++) outer *= xs->dims[k];
    for (int k = axis; k < xs->rank; k++) inner *= xs->dims[k];
    int64_t ss[IR_MAX_RANK], bs[IR_MAX_RANK];
    const double *B = n->n_in > 2 ? in[2] : NULL;
    ln_param_strides(n, 1, axis, ss);
    if (B) ln_param_strides(n, 2, axis, bs);
    double eps = n->attrs[LN_EPSILON].f;
    for (int64_t o = 0; o < outer; o++) {
        const double *x = in[0] + o * inner;
        double *y = out[0] + o * inner;
        double mu = 0, var = 0;
        for (int64_t j = 0; j < inner; j++) mu += x[j];
        mu /= (double)inner;
        for (int64_t j = 0; j < inner; j++) var += (x[j] - mu) * (x[j] - mu);
        var /= (double)inner;
        double rs = 1.0 / sqrt(var + eps);
        int64_t t[IR_MAX_RANK] = {0};
        for (int64_t j = 0; j < inner; j++, nn_next_index(t, xs->dims + axis, r)) {
            int64_t so = 0, bo = 0;
            for (int k = 0; k < r; k++) { so += t[k] * ss[k]; if (B) bo += t[k] * bs[k]; }
            y[j] = (x[j] - mu) * rs * in[1][so] + (B ? B[bo] : 0);
        }
        if (n->n_out > 1) out[1][o] = mu;
        if (n->n_out > 2) out[2][o] = rs;
    }
    return 0;
}

/* v cast to dtype t (the f32 statistics of an f64 X). */
static Value *ln_cast(GradCtx *gc, Value *v, DType t)
{
    return !v || v->dtype == t ? v : gb1(gc, OP_Cast, gb_fmt(gc, "to=%d", ir_dtype_to_onnx(t)), v);
}

/* LayerNormalizationGrad(dY, X, Scale broadcast to X.shape[axis:]); the
 * gradients of a broadcast Scale and B are summed back to their shapes.
 * The outputs Mean and InvStdDev (rstd) add dMean / D and -dRstd rstd^3
 * (X - mean) / D to dX (D elements per row). */
static int ln_grad(GradCtx *gc)
{
    const Node *n = gc->n;
    Value *x = n->in[0], *scale = n->in[1], *dy = gb_dy(gc, 0);
    int a = ln_axis(n), r = x->shape.rank, has_b = ir_has_input(n, 2);
    DType t = x->dtype;
    Shape norm = ir_shape(r - a, x->shape.dims + a);
    double D = (double)nn_prod(x->shape.dims, a, r);
    int n_out = has_b && gc->need[2] ? 3 : gc->need[1] ? 2 : 1;
    Value *o[3] = {NULL, NULL, NULL}, *in[3] = {dy, x, gb_expand(gc, scale, &norm)};
    gb_node(gc, OP_LayerNormalizationGrad, gb_fwd_attrs(gc, NULL), 3, in, n_out, o);
    Value *dx = o[0], *dmean = n->n_out > 1 ? gc->dy[1] : NULL, *drs = n->n_out > 2 ? gc->dy[2] : NULL;
    if (dmean && gc->need[0]) dx = gb2(gc, OP_Add, NULL, dx, gb2(gc, OP_Mul, NULL, ln_cast(gc, dmean, t), gb_scalar(gc, t, 1 / D)));
    if (drs && gc->need[0]) {
        int64_t axes[IR_MAX_RANK];
        char b1[160];
        for (int k = a; k < r; k++) axes[k - a] = k;
        Value *mu = gb1(gc, OP_ReduceMean, gb_fmt(gc, "axes=%s", nn_ints_str(axes, r - a, b1, sizeof b1)), x);
        Value *rs = ln_cast(gc, n->out[2], t);
        Value *f = gb2(gc, OP_Mul, NULL, ln_cast(gc, drs, t), gb2(gc, OP_Mul, NULL, rs, gb2(gc, OP_Mul, NULL, rs, rs)));
        f = gb2(gc, OP_Mul, NULL, f, gb_scalar(gc, t, -1 / D));
        dx = gb2(gc, OP_Add, NULL, dx, gb2(gc, OP_Mul, NULL, gb2(gc, OP_Sub, NULL, x, mu), f));
    }
    gb_set(gc, 0, dx);
    if (gc->need[1]) gb_set(gc, 1, gb_reduce_to(gc, o[1], &scale->shape));
    if (has_b && gc->need[2]) gb_set(gc, 2, gb_reduce_to(gc, o[2], &n->in[2]->shape));
    return gb_done(gc);
}

/* X and Scale, and the output InvStdDev (when it has a gradient). */
static int ln_bw(const Node *n, int is_output, int i) { (void)n; return is_output ? i == 2 : i < 2; }

const OpDesc op_LayerNormalization = {
    .name = "LayerNormalization",
    .min_in = 2, .max_in = 3, .in_names = ln_in,
    .min_out = 1, .max_out = 3, .out_names = ln_out,
    OP_ATTRS(ln_attrs),
    .infer = ln_infer,
    .infer_sym = ir_sym_layernorm,
    .inplace = ir_inplace_00, .n_inplace = 1,
    .eval = ln_eval,
    .gradient = ln_grad,
    .backward_reads = ln_bw,
};
