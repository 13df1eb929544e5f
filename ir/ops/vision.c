/* vision.c — operator descriptions of the vision family, ONNX opset 17:
 * ConvTranspose, GlobalMaxPool, InstanceNormalization, LRN, DepthToSpace,
 * SpaceToDepth, Resize, Upsample (opset 9 form), Hardmax, Dropout
 * (inference), MeanVarianceNormalization and RoiAlign (opset 16).
 *
 * Two ops carry real geometry, computed once here and shared with the C
 * emitter through ir/ops/geometry.h so that inference, the reference and
 * the generated code read the same numbers:
 *
 * ConvTranspose (ct_geo). Per spatial dim with effective kernel
 * ek = (k-1)*dilation+1 and output_padding op:
 *   output_shape given: out = output_shape, total = s*(in-1) + op + ek - out;
 *   SAME_*:             out = in*s, total as above;
 *   NOTSET/VALID:       out = s*(in-1) + op + ek - pb - pe (VALID: pads 0).
 * A total is split with floor division (h = floor(total/2)): SAME_UPPER puts
 * h at the begin, every other mode puts total-h at the begin (so a negative
 * total extends the end, as the ONNX tests expect). Output position of input
 * i and tap t: i*s - pb + t*dilation.
 *
 * Resize / Upsample (resize_plan, resize_axis_taps). Interpolation is
 * separable: for each axis and output index, the coordinate transform gives
 * x in input space; base = ceil(x)-1 and t = x-base in (0,1] (the ONNX
 * reference picks the neighbours left of x, with t = 1 on integers);
 * nearest picks base or base+1 by nearest_mode, linear weighs base/base+1
 * by (1-t, t), cubic weighs base-1..base+2 with Keys' kernel (coefficient
 * A; exclude_outside zeroes taps outside the input and renormalizes).
 * Indices are clamped to the input (edge padding). A scale given by
 * `scales` is used as is in the transform (align_corners divides by
 * scale*in - 1, as the ONNX reference does); `sizes` gives scale out/in.
 * tf_crop_and_resize marks coordinates outside [0, in-1] as outside: the
 * output element is extrapolation_value. Each output element is the sum over
 * the tensor product of the axes' taps.
 *
 * Reference evaluations work in double.
 *
 * Gradients (ir/grad.h): ConvTranspose is the data gradient of the Conv
 * that maps its output back onto its input (same W, strides, dilations,
 * group, the resolved pads), so dX = Conv(dY, W) and dW =
 * ConvGradFilter(dY, X) of that Conv. A negative pad (SAME or output_shape
 * past the full output) adds output positions no input reaches: dY is
 * cropped to the reached ones first (Slice) and the pad taken as 0. It
 * needs output_padding < strides (ONNX's rule; else no such Conv exists
 * and the gradient is refused). GlobalMaxPool sends dY to every element equal to the
 * maximum (all of them on ties). InstanceNormalization is
 * LayerNormalizationGrad over the spatial dims with unit scale, applied to
 * dY * scale; inference Dropout is the identity.
 * DepthToSpace and SpaceToDepth are permutations, so
 * dX is the inverse permutation of dY (SpaceToDepth and DepthToSpace DCR
 * undo each other; CRD is undone by Reshape/Transpose/Reshape). Resize's
 * map is linear in X and separable, so dX is dY folded back axis by axis by
 * the matrix of tap weights (resize_grad).
 */
#include "../grad.h"
#include "../op.h"
#include "vision_attrs.h"
#include "geometry.h"
#include "nn_common.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- shared helpers ----------------------------------------------------- */

static int64_t floor_div2(int64_t v) { return v >= 0 ? v / 2 : -((-v + 1) / 2); }

static const char *const one_X[] = {"X"};
static const char *const one_Y[] = {"Y"};
static const char *const one_input[] = {"input"};
static const char *const one_output[] = {"output"};

/* ---- ConvTranspose ------------------------------------------------------ */

static const char *const ct_in[] = {"X", "W", "B"};
static const AttrSpec ct_attrs[] = {
    [CONV_TRANSPOSE_AUTO_PAD] = {"auto_pad", ATTR_STRING, "NOTSET", 0},
    [CONV_TRANSPOSE_DILATIONS] = {"dilations", ATTR_INTS, NULL, 0},
    [CONV_TRANSPOSE_GROUP] = {"group", ATTR_INT, "1", 0},
    [CONV_TRANSPOSE_KERNEL_SHAPE] = {"kernel_shape", ATTR_INTS, NULL, 0},
    [CONV_TRANSPOSE_OUTPUT_PADDING] = {"output_padding", ATTR_INTS, NULL, 0},
    [CONV_TRANSPOSE_OUTPUT_SHAPE] = {"output_shape", ATTR_INTS, NULL, 0},
    [CONV_TRANSPOSE_PADS] = {"pads", ATTR_INTS, NULL, 0},
    [CONV_TRANSPOSE_STRIDES] = {"strides", ATTR_INTS, NULL, 0},
};
OP_ATTRS_CHECK(ct_attrs, CONV_TRANSPOSE_COUNT);

typedef struct CtGeo {
    int sr;
    int64_t in[IR_MAX_RANK], k[IR_MAX_RANK], s[IR_MAX_RANK], dl[IR_MAX_RANK];
    int64_t pb[IR_MAX_RANK], pe[IR_MAX_RANK], op[IR_MAX_RANK], out[IR_MAX_RANK];
} CtGeo;

/* Reads ints attribute k of length len (default dflt), each >= minv. */
static int ct_ints(const Node *n, int k, int sr, int len, int64_t dflt, int64_t minv, int64_t *v, Diag *d)
{
    return nn_window_ints(n, ct_attrs[k].name, sr, len, dflt, minv, v, d);
}

static int ct_geo(const Node *n, CtGeo *g, Diag *d)
{
    const Shape *xs = &n->in[0]->shape, *ws = &n->in[1]->shape;
    char b1[160], b2[160];
    if (nn_check_min_rank(n, 3, "N, C and at least one spatial dim", d)) return -1;
    int sr = g->sr = xs->rank - 2;
    if (nn_check_weight_rank(n, 1, d)) return -1;
    for (int i = 0; i < sr; i++) {
        g->in[i] = xs->dims[2 + i];
        g->k[i] = ws->dims[2 + i];
    }
    const AttrVal *ka = &n->attrs[CONV_TRANSPOSE_KERNEL_SHAPE];
    if (ka->set && (ka->n != sr || memcmp(ka->ints, g->k, sizeof(int64_t) * (size_t)sr) != 0))
        return diag_node_error(d, n, "attribute 'kernel_shape' %s does not match the kernel dims %s of input 'W'",
                               nn_ints_str(ka->ints, ka->n, b1, sizeof b1), nn_ints_str(g->k, sr, b2, sizeof b2));
    if (nn_check_kernel_positive(n, g->k, sr, d)) return -1;
    int64_t pads[2 * IR_MAX_RANK];
    if (ct_ints(n, CONV_TRANSPOSE_STRIDES, sr, sr, 1, 1, g->s, d) ||
        ct_ints(n, CONV_TRANSPOSE_DILATIONS, sr, sr, 1, 1, g->dl, d) ||
        ct_ints(n, CONV_TRANSPOSE_PADS, sr, 2 * sr, 0, 0, pads, d) ||
        ct_ints(n, CONV_TRANSPOSE_OUTPUT_PADDING, sr, sr, 0, 0, g->op, d))
        return -1;
    NnAutoPad mode;
    if (nn_auto_pad(n, n->attrs[CONV_TRANSPOSE_AUTO_PAD].s, pads, sr, &mode, d)) return -1;
    int same = mode == NN_PAD_SAME_UPPER || mode == NN_PAD_SAME_LOWER, upper = mode == NN_PAD_SAME_UPPER;
    int valid = mode == NN_PAD_VALID;
    const AttrVal *os = &n->attrs[CONV_TRANSPOSE_OUTPUT_SHAPE];
    const int64_t *osv = NULL;
    if (os->set) {
        if (os->n != sr && os->n != sr + 2)
            return diag_node_error(d, n, "attribute 'output_shape' has %d values; expected %d (one for each spatial dim of X)",
                                   os->n, sr);
        osv = os->ints + (os->n - sr);
        for (int i = 0; i < sr; i++)
            if (osv[i] < 0)
                return diag_node_error(d, n, "attribute 'output_shape' must be non-negative, got %s",
                                       nn_ints_str(os->ints, os->n, b1, sizeof b1));
    }
    for (int i = 0; i < sr; i++) {
        int64_t ek = (g->k[i] - 1) * g->dl[i] + 1;
        int64_t full = g->s[i] * (g->in[i] - 1) + g->op[i] + ek;
        if (osv || same) {
            g->out[i] = osv ? osv[i] : g->in[i] * g->s[i];
            int64_t total = full - g->out[i], h = floor_div2(total);
            g->pb[i] = upper ? h : total - h;
            g->pe[i] = total - g->pb[i];
        } else {
            g->pb[i] = valid ? 0 : pads[i];
            g->pe[i] = valid ? 0 : pads[sr + i];
            g->out[i] = full - g->pb[i] - g->pe[i];
            if (g->out[i] < 0)
                return diag_node_error(d, n, "output spatial dim %d would be %lld: pads %lld+%lld exceed the full output %lld",
                                       i, (long long)g->out[i], (long long)g->pb[i], (long long)g->pe[i], (long long)full);
        }
    }
    return 0;
}

/* See geometry.h. */
int ir_convtranspose_geometry(const Node *n, int64_t *kernel, int64_t *strides, int64_t *dilations,
                              int64_t *pad_begin)
{
    CtGeo g;
    if (ct_geo(n, &g, NULL)) return -1;
    size_t sz = sizeof(int64_t) * (size_t)g.sr;
    memcpy(kernel, g.k, sz);
    memcpy(strides, g.s, sz);
    memcpy(dilations, g.dl, sz);
    memcpy(pad_begin, g.pb, sz);
    return g.sr;
}

static int ct_infer(Node *n, Diag *d)
{
    CtGeo g;
    char b1[160];
    if (nn_check_float(n, 0, d) || nn_check_same_dtype(n, 1, d)) return -1;
    if (n->n_in > 2 && n->in[2] && nn_check_same_dtype(n, 2, d)) return -1;
    if (ct_geo(n, &g, d)) return -1;
    const Shape *xs = &n->in[0]->shape, *ws = &n->in[1]->shape;
    int64_t group = n->attrs[CONV_TRANSPOSE_GROUP].i, C = xs->dims[1];
    if (nn_check_group(n, group, C, d)) return -1;
    if (ws->dims[0] != C)
        return diag_node_error(d, n, "input 'W' shape %s must have %lld input channels (the channels of X) in dim 0",
                               ir_shape_str(ws, b1, sizeof b1), (long long)C);
    int64_t M = ws->dims[1] * group;
    if (n->n_in > 2 && n->in[2] && nn_check_vec(n, 2, M, "output channels (W.shape[1]*group)", d)) return -1;
    Shape os = {0};
    os.rank = xs->rank;
    os.dims[0] = xs->dims[0];
    os.dims[1] = M;
    for (int i = 0; i < g.sr; i++) os.dims[2 + i] = g.out[i];
    ir_set_out(n, 0, n->in[0]->dtype, &os);
    return 0;
}

static int ct_eval(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    CtGeo g;
    if (ct_geo(n, &g, d)) return -1;
    const Shape *xs = &n->in[0]->shape;
    int64_t N = xs->dims[0], C = xs->dims[1], group = n->attrs[CONV_TRANSPOSE_GROUP].i;
    int64_t Cg = C / group, Mg = n->in[1]->shape.dims[1], M = Mg * group;
    int64_t IP = nn_prod(g.in, 0, g.sr), OP = nn_prod(g.out, 0, g.sr), KP = nn_prod(g.k, 0, g.sr);
    const double *B = n->n_in > 2 ? in[2] : NULL;
    for (int64_t b = 0; b < N; b++)
        for (int64_t m = 0; m < M; m++)
            for (int64_t p = 0; p < OP; p++) out[0][(b * M + m) * OP + p] = B ? B[m] : 0;
    for (int64_t b = 0; b < N; b++)
        for (int64_t c = 0; c < C; c++) {
            int64_t grp = c / Cg;
            int64_t ii[IR_MAX_RANK] = {0};
            for (int64_t ip = 0; ip < IP; ip++, nn_next_index(ii, g.in, g.sr)) {
                double x = in[0][(b * C + c) * IP + ip];
                int64_t t[IR_MAX_RANK] = {0};
                for (int64_t kp = 0; kp < KP; kp++, nn_next_index(t, g.k, g.sr)) {
                    int64_t off = 0, ok = 1;
                    for (int i = 0; i < g.sr && ok; i++) {
                        int64_t pos = ii[i] * g.s[i] - g.pb[i] + t[i] * g.dl[i];
                        ok = pos >= 0 && pos < g.out[i];
                        off = off * g.out[i] + pos;
                    }
                    if (!ok) continue;
                    for (int64_t mg = 0; mg < Mg; mg++) {
                        int64_t m = grp * Mg + mg;
                        out[0][(b * M + m) * OP + off] += x * in[1][(c * Mg + mg) * KP + kp];
                    }
                }
            }
        }
    return 0;
}

/* See the file comment. */
static int ct_grad(GradCtx *gc)
{
    const Node *n = gc->n;
    CtGeo g;
    char b1[160], b2[160], b3[160], b4[160];
    if (ct_geo(n, &g, gc->d)) return -1;
    int64_t pads[2 * IR_MAX_RANK], starts[IR_MAX_RANK], ends[IR_MAX_RANK], axes[IR_MAX_RANK];
    int crop = 0;
    for (int i = 0; i < g.sr; i++) {
        if (g.op[i] >= g.s[i])
            return diag_node_error(gc->d, n, "has no gradient: spatial dim %d has output_padding %lld with stride %lld (needs output_padding < stride)",
                                   i, (long long)g.op[i], (long long)g.s[i]);
        pads[i] = g.pb[i] > 0 ? g.pb[i] : 0;
        pads[g.sr + i] = g.pe[i] > 0 ? g.pe[i] : 0;
        starts[i] = pads[i] - g.pb[i];
        ends[i] = g.out[i] - (pads[g.sr + i] - g.pe[i]);
        axes[i] = 2 + i;
        crop |= g.pb[i] < 0 || g.pe[i] < 0;
    }
    const char *conv = gb_fmt(gc, "kernel_shape=%s strides=%s dilations=%s pads=%s group=%lld",
                              nn_ints_str(g.k, g.sr, b1, sizeof b1), nn_ints_str(g.s, g.sr, b2, sizeof b2),
                              nn_ints_str(g.dl, g.sr, b3, sizeof b3), nn_ints_str(pads, 2 * g.sr, b4, sizeof b4),
                              (long long)n->attrs[CONV_TRANSPOSE_GROUP].i);
    Value *x = n->in[0], *w = n->in[1], *dy = gb_dy(gc, 0), *dyc = dy;
    if (crop && (gc->need[0] || gc->need[1])) {
        Value *in[4] = {dy, gb_ints(gc, starts, g.sr), gb_ints(gc, ends, g.sr), gb_ints(gc, axes, g.sr)};
        dyc = gb_node(gc, OP_Slice, NULL, 4, in, 1, NULL);
    }
    if (gc->need[0]) gb_set(gc, 0, gb2(gc, OP_Conv, conv, dyc, w));
    if (gc->need[1]) {
        const char *a = gb_fmt(gc, "%s w_shape=%s", conv, nn_ints_str(w->shape.dims, w->shape.rank, b1, sizeof b1));
        gb_set(gc, 1, gb2(gc, OP_ConvGradFilter, a, dyc, x));
    }
    if (ir_has_input(n, 2) && gc->need[2]) gb_set(gc, 2, nn_grad_sum_channels(gc, dy));
    return gb_done(gc);
}

/* dX reads W and dW reads X; dB reads nothing. */
static int ct_bw(const Node *n, int is_output, int i) { (void)n; return !is_output && i < 2; }

const OpDesc op_ConvTranspose = {
    .name = "ConvTranspose",
    .min_in = 2, .max_in = 3, .in_names = ct_in,
    .min_out = 1, .max_out = 1, .out_names = one_Y,
    OP_ATTRS(ct_attrs),
    .infer = ct_infer,
    .eval = ct_eval,
    .gradient = ct_grad,
    .backward_reads = ct_bw,
};

/* ---- GlobalMaxPool ------------------------------------------------------ */

static int gmp_eval(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    const Shape *xs = &n->in[0]->shape;
    int64_t NC = xs->dims[0] * xs->dims[1], S = nn_prod(xs->dims, 2, xs->rank);
    if (S == 0 && NC > 0) return diag_node_error(d, n, "input 'X' has empty spatial dims: the maximum is undefined");
    for (int64_t q = 0; q < NC; q++) {
        double mx = -INFINITY;
        for (int64_t i = 0; i < S; i++) mx = in[0][q * S + i] > mx ? in[0][q * S + i] : mx;
        out[0][q] = mx;
    }
    return 0;
}

/* dY where X equals its maximum Y, else 0. */
static int gmp_grad(GradCtx *gc)
{
    Value *x = gc->n->in[0];
    Value *hit = gb2(gc, OP_Equal, NULL, x, gc->n->out[0]);
    gb_set(gc, 0, gb3(gc, OP_Where, NULL, hit, gb_expand(gc, gb_dy(gc, 0), &x->shape), gb_scalar(gc, x->dtype, 0)));
    return gb_done(gc);
}

const OpDesc op_GlobalMaxPool = {
    .name = "GlobalMaxPool",
    .min_in = 1, .max_in = 1, .in_names = one_X,
    .min_out = 1, .max_out = 1, .out_names = one_Y,
    .infer = nn_infer_global_pool,
    .eval = gmp_eval,
    .gradient = gmp_grad,
    .backward_reads = ir_bw_all,
};

/* ---- InstanceNormalization ---------------------------------------------- */

static const char *const in_in[] = {"input", "scale", "B"};
static const AttrSpec inorm_attrs[] = {[INSTANCE_NORM_EPSILON] = {"epsilon", ATTR_FLOAT, "1e-5", 0}};
OP_ATTRS_CHECK(inorm_attrs, INSTANCE_NORM_COUNT);

static int inorm_infer(Node *n, Diag *d)
{
    if (nn_check_float(n, 0, d) || nn_check_min_rank(n, 3, "N, C and at least one spatial dim", d)) return -1;
    int64_t C = n->in[0]->shape.dims[1];
    for (int i = 1; i < 3; i++)
        if (nn_check_same_dtype(n, i, d) || nn_check_vec(n, i, C, "channels of input", d)) return -1;
    ir_set_out(n, 0, n->in[0]->dtype, &n->in[0]->shape);
    return 0;
}

static int inorm_eval(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    (void)d;
    const Shape *xs = &n->in[0]->shape;
    int64_t N = xs->dims[0], C = xs->dims[1], S = nn_prod(xs->dims, 2, xs->rank);
    double eps = n->attrs[INSTANCE_NORM_EPSILON].f;
    for (int64_t b = 0; b < N; b++)
        for (int64_t c = 0; c < C; c++) {
            const double *x = in[0] + (b * C + c) * S;
            double *y = out[0] + (b * C + c) * S, mu = 0, var = 0;
            for (int64_t i = 0; i < S; i++) mu += x[i];
            mu /= (double)S;
            for (int64_t i = 0; i < S; i++) var += (x[i] - mu) * (x[i] - mu);
            var /= (double)S;
            double a = in[1][c] / sqrt(var + eps);
            for (int64_t i = 0; i < S; i++) y[i] = (x[i] - mu) * a + in[2][c];
        }
    return 0;
}

/* dX = LayerNormalizationGrad(dY * scale, X, ones){axis=2}; with xhat the
 * normalized input, dscale = sum dY * xhat and dB = sum dY over every axis
 * but 1. */
static int inorm_grad(GradCtx *gc)
{
    const Node *n = gc->n;
    Value *x = n->in[0], *scale = n->in[1], *dy = gb_dy(gc, 0);
    int r = x->shape.rank;
    DType t = x->dtype;
    double eps = n->attrs[INSTANCE_NORM_EPSILON].f;
    if (gc->need[0]) {
        Shape ss = ir_shape(r - 2, x->shape.dims + 2);
        int64_t S = ir_numel(&ss);
        void *data = ir_alloc(gc->g, ir_dtype_size(t) * (size_t)(S ? S : 1));
        for (int64_t i = 0; i < S; i++) ir_store_f64(t, data, (size_t)i, 1.0);
        Value *ones = ir_add_const(gc->g, NULL, t, &ss, data, 0);
        Value *g = gb2(gc, OP_Mul, NULL, dy, nn_grad_per_channel(gc, scale, r));
        gb_set(gc, 0, gb3(gc, OP_LayerNormalizationGrad, gb_fmt(gc, "axis=2 epsilon=%.17g", eps), g, x, ones));
    }
    if (gc->need[1]) {
        int64_t axes[IR_MAX_RANK];
        char b1[160];
        for (int k = 2; k < r; k++) axes[k - 2] = k;
        const char *a = gb_fmt(gc, "axes=%s", nn_ints_str(axes, r - 2, b1, sizeof b1));
        Value *xc = gb2(gc, OP_Sub, NULL, x, gb1(gc, OP_ReduceMean, a, x));
        Value *var = gb1(gc, OP_ReduceMean, a, gb2(gc, OP_Mul, NULL, xc, xc));
        Value *rstd = gb1(gc, OP_Reciprocal, NULL, gb1(gc, OP_Sqrt, NULL, gb2(gc, OP_Add, NULL, var, gb_scalar(gc, t, eps))));
        gb_set(gc, 1, nn_grad_sum_channels(gc, gb2(gc, OP_Mul, NULL, dy, gb2(gc, OP_Mul, NULL, xc, rstd))));
    }
    if (gc->need[2]) gb_set(gc, 2, nn_grad_sum_channels(gc, dy));
    return gb_done(gc);
}

/* X and scale. */
static int inorm_bw(const Node *n, int is_output, int i) { (void)n; return !is_output && i < 2; }

const OpDesc op_InstanceNormalization = {
    .name = "InstanceNormalization",
    .min_in = 3, .max_in = 3, .in_names = in_in,
    .min_out = 1, .max_out = 1, .out_names = one_output,
    OP_ATTRS(inorm_attrs),
    .infer = inorm_infer,
    .eval = inorm_eval,
    .gradient = inorm_grad,
    .backward_reads = inorm_bw,
};

/* ---- LRN ---------------------------------------------------------------- */

static const AttrSpec lrn_attrs[] = {
    [LRN_ALPHA] = {"alpha", ATTR_FLOAT, "1e-4", 0},
    [LRN_BETA] = {"beta", ATTR_FLOAT, "0.75", 0},
    [LRN_BIAS] = {"bias", ATTR_FLOAT, "1.0", 0},
    [LRN_SIZE] = {"size", ATTR_INT, NULL, 1},
};
OP_ATTRS_CHECK(lrn_attrs, LRN_COUNT);

static int lrn_infer(Node *n, Diag *d)
{
    if (nn_check_float(n, 0, d) || nn_check_min_rank(n, 2, "N, C, ...", d)) return -1;
    if (!n->attrs[LRN_SIZE].set) return diag_node_error(d, n, "required attribute 'size' is missing");
    if (n->attrs[LRN_SIZE].i <= 0)
        return diag_node_error(d, n, "attribute 'size' must be positive, got %lld", (long long)n->attrs[LRN_SIZE].i);
    ir_set_out(n, 0, n->in[0]->dtype, &n->in[0]->shape);
    return 0;
}

static int lrn_eval(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    (void)d;
    const Shape *xs = &n->in[0]->shape;
    int64_t N = xs->dims[0], C = xs->dims[1], S = nn_prod(xs->dims, 2, xs->rank), size = n->attrs[LRN_SIZE].i;
    int64_t lo = (size - 1) / 2, hi = size - 1 - lo;
    double alpha = n->attrs[LRN_ALPHA].f, beta = n->attrs[LRN_BETA].f, bias = n->attrs[LRN_BIAS].f;
    for (int64_t b = 0; b < N; b++)
        for (int64_t c = 0; c < C; c++)
            for (int64_t i = 0; i < S; i++) {
                double sq = 0;
                for (int64_t j = c - lo; j <= c + hi; j++)
                    if (j >= 0 && j < C) {
                        double v = in[0][(b * C + j) * S + i];
                        sq += v * v;
                    }
                int64_t e = (b * C + c) * S + i;
                out[0][e] = in[0][e] / pow(bias + alpha / (double)size * sq, beta);
            }
    return 0;
}

const OpDesc op_LRN = {
    .name = "LRN",
    .min_in = 1, .max_in = 1, .in_names = one_X,
    .min_out = 1, .max_out = 1, .out_names = one_Y,
    OP_ATTRS(lrn_attrs),
    .infer = lrn_infer,
    .eval = lrn_eval,
};

/* ---- DepthToSpace / SpaceToDepth ---------------------------------------- */

static const AttrSpec d2s_attrs[] = {
    [DEPTH_TO_SPACE_BLOCKSIZE] = {"blocksize", ATTR_INT, NULL, 1},
    [DEPTH_TO_SPACE_MODE] = {"mode", ATTR_STRING, "DCR", 0},
};
OP_ATTRS_CHECK(d2s_attrs, DEPTH_TO_SPACE_COUNT);
static const AttrSpec s2d_attrs[] = {[SPACE_TO_DEPTH_BLOCKSIZE] = {"blocksize", ATTR_INT, NULL, 1}};
OP_ATTRS_CHECK(s2d_attrs, SPACE_TO_DEPTH_COUNT);

static int block_check(const Node *n, Diag *d)
{
    const Shape *xs = &n->in[0]->shape;
    char b1[160];
    if (xs->rank != 4)
        return diag_node_error(d, n, "input 'input' must have rank 4 (N, C, H, W), got shape %s",
                               ir_shape_str(xs, b1, sizeof b1));
    const AttrVal *bs = &n->attrs[n->op == OP_DepthToSpace ? DEPTH_TO_SPACE_BLOCKSIZE : SPACE_TO_DEPTH_BLOCKSIZE];
    if (!bs->set) return diag_node_error(d, n, "required attribute 'blocksize' is missing");
    if (bs->i <= 0) return diag_node_error(d, n, "attribute 'blocksize' must be positive, got %lld", (long long)bs->i);
    return 0;
}

static int d2s_infer(Node *n, Diag *d)
{
    if (block_check(n, d)) return -1;
    const Shape *xs = &n->in[0]->shape;
    int64_t b = n->attrs[DEPTH_TO_SPACE_BLOCKSIZE].i;
    const char *mode = n->attrs[DEPTH_TO_SPACE_MODE].s;
    if (strcmp(mode, "DCR") != 0 && strcmp(mode, "CRD") != 0)
        return diag_node_error(d, n, "attribute 'mode' must be DCR or CRD, got '%s'", mode);
    if (xs->dims[1] % (b * b) != 0)
        return diag_node_error(d, n, "input 'input' has %lld channels, which blocksize^2 = %lld does not divide",
                               (long long)xs->dims[1], (long long)(b * b));
    Shape os = *xs;
    os.dims[1] = xs->dims[1] / (b * b);
    os.dims[2] = xs->dims[2] * b;
    os.dims[3] = xs->dims[3] * b;
    ir_set_out(n, 0, n->in[0]->dtype, &os);
    return 0;
}

static int s2d_infer(Node *n, Diag *d)
{
    if (block_check(n, d)) return -1;
    const Shape *xs = &n->in[0]->shape;
    int64_t b = n->attrs[SPACE_TO_DEPTH_BLOCKSIZE].i;
    char b1[160];
    if (xs->dims[2] % b != 0 || xs->dims[3] % b != 0)
        return diag_node_error(d, n, "input 'input' shape %s: H and W must be multiples of blocksize %lld",
                               ir_shape_str(xs, b1, sizeof b1), (long long)b);
    Shape os = *xs;
    os.dims[1] = xs->dims[1] * b * b;
    os.dims[2] = xs->dims[2] / b;
    os.dims[3] = xs->dims[3] / b;
    ir_set_out(n, 0, n->in[0]->dtype, &os);
    return 0;
}

/* See geometry.h. */
int64_t ir_depth_to_space_src(int64_t C, int64_t H, int64_t W, int64_t b, int crd, int64_t n, int64_t c,
                              int64_t y, int64_t x)
{
    int64_t Co = C / (b * b), h = y / b, bh = y % b, w = x / b, bw = x % b;
    int64_t ci = crd ? (c * b + bh) * b + bw : (bh * b + bw) * Co + c;
    return ((n * C + ci) * H + h) * W + w;
}

static int d2s_eval(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    (void)d;
    const Shape *xs = &n->in[0]->shape, *ys = &n->out[0]->shape;
    int64_t b = n->attrs[DEPTH_TO_SPACE_BLOCKSIZE].i, e = 0;
    int crd = strcmp(n->attrs[DEPTH_TO_SPACE_MODE].s, "CRD") == 0;
    for (int64_t i = 0; i < ys->dims[0]; i++)
        for (int64_t c = 0; c < ys->dims[1]; c++)
            for (int64_t y = 0; y < ys->dims[2]; y++)
                for (int64_t x = 0; x < ys->dims[3]; x++)
                    out[0][e++] = in[0][ir_depth_to_space_src(xs->dims[1], xs->dims[2], xs->dims[3], b, crd, i, c,
                                                              y, x)];
    return 0;
}

static int s2d_eval(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    (void)d;
    /* SpaceToDepth is the inverse of DepthToSpace in DCR mode. */
    const Shape *xs = &n->in[0]->shape, *ys = &n->out[0]->shape;
    int64_t b = n->attrs[SPACE_TO_DEPTH_BLOCKSIZE].i, e = 0;
    for (int64_t i = 0; i < xs->dims[0]; i++)
        for (int64_t c = 0; c < xs->dims[1]; c++)
            for (int64_t y = 0; y < xs->dims[2]; y++)
                for (int64_t x = 0; x < xs->dims[3]; x++)
                    out[0][ir_depth_to_space_src(ys->dims[1], ys->dims[2], ys->dims[3], b, 0, i, c, y, x)] =
                        in[0][e++];
    return 0;
}

static int d2s_grad(GradCtx *gc)
{
    const Node *n = gc->n;
    const Value *x = n->in[0];
    Value *dy = gb_dy(gc, 0);
    int64_t b = n->attrs[DEPTH_TO_SPACE_BLOCKSIZE].i;
    if (strcmp(n->attrs[DEPTH_TO_SPACE_MODE].s, "CRD") != 0) {
        gb_set(gc, 0, gb1(gc, OP_SpaceToDepth, gb_fmt(gc, "blocksize=%lld", (long long)b), dy));
        return gb_done(gc);
    }
    /* CRD: X as [N, C', bh, bw, H, W] and Y as [N, C', H, bh, W, bw] */
    const int64_t *xd = x->shape.dims;
    int64_t v[6] = {xd[0], xd[1] / (b * b), xd[2], b, xd[3], b};
    Shape sv = ir_shape(6, v);
    Value *t = gb1(gc, OP_Transpose, "perm=[0,1,3,5,2,4]", gb_reshape(gc, dy, &sv));
    gb_set(gc, 0, gb_reshape(gc, t, &x->shape));
    return gb_done(gc);
}

static int s2d_grad(GradCtx *gc)
{
    const char *a = gb_fmt(gc, "blocksize=%lld mode=\"DCR\"", (long long)gc->n->attrs[SPACE_TO_DEPTH_BLOCKSIZE].i);
    gb_set(gc, 0, gb1(gc, OP_DepthToSpace, a, gb_dy(gc, 0)));
    return gb_done(gc);
}

const OpDesc op_DepthToSpace = {
    .name = "DepthToSpace",
    .min_in = 1, .max_in = 1, .in_names = one_input,
    .min_out = 1, .max_out = 1, .out_names = one_output,
    OP_ATTRS(d2s_attrs),
    .infer = d2s_infer,
    .eval = d2s_eval,
    .gradient = d2s_grad, .backward_reads = ir_bw_none,
};

const OpDesc op_SpaceToDepth = {
    .name = "SpaceToDepth",
    .min_in = 1, .max_in = 1, .in_names = one_input,
    .min_out = 1, .max_out = 1, .out_names = one_output,
    OP_ATTRS(s2d_attrs),
    .infer = s2d_infer,
    .eval = s2d_eval,
    .gradient = s2d_grad, .backward_reads = ir_bw_none,
};

/* ---- Resize / Upsample -------------------------------------------------- */

static const char *const resize_in[] = {"X", "roi", "scales", "sizes"};
static const AttrSpec resize_attrs[] = {
    [RESIZE_COORDINATE_TRANSFORMATION_MODE] = {"coordinate_transformation_mode", ATTR_STRING, "half_pixel", 0},
    [RESIZE_CUBIC_COEFF_A] = {"cubic_coeff_a", ATTR_FLOAT, "-0.75", 0},
    [RESIZE_EXCLUDE_OUTSIDE] = {"exclude_outside", ATTR_INT, "0", 0},
    [RESIZE_EXTRAPOLATION_VALUE] = {"extrapolation_value", ATTR_FLOAT, "0.0", 0},
    [RESIZE_MODE] = {"mode", ATTR_STRING, "nearest", 0},
    [RESIZE_NEAREST_MODE] = {"nearest_mode", ATTR_STRING, "round_prefer_floor", 0},
};
OP_ATTRS_CHECK(resize_attrs, RESIZE_COUNT);
static const char *const upsample_in[] = {"X", "scales"};
static const AttrSpec upsample_attrs[] = {[UPSAMPLE_MODE] = {"mode", ATTR_STRING, "nearest", 0}};
OP_ATTRS_CHECK(upsample_attrs, UPSAMPLE_COUNT);

enum { RM_NEAREST, RM_LINEAR, RM_CUBIC };
enum { CT_HALF_PIXEL, CT_ASYMMETRIC, CT_PYTORCH_HALF_PIXEL, CT_TF_CROP, CT_ALIGN_CORNERS };
enum { NM_ROUND_FLOOR, NM_ROUND_CEIL, NM_FLOOR, NM_CEIL };

typedef struct ResizePlan {
    int rank, mode, ctm, nearest;
    double a, extrap;
    int exclude;
    int64_t in[IR_MAX_RANK], out[IR_MAX_RANK];
    double scale[IR_MAX_RANK], roi_b[IR_MAX_RANK], roi_e[IR_MAX_RANK];
} ResizePlan;

static int pick(const char *s, const char *const *names, int count)
{
    for (int i = 0; i < count; i++)
        if (strcmp(s, names[i]) == 0) return i;
    return -1;
}

/* Optional input i that is present and non-empty (exporters pass empty
 * tensors for absent roi/scales). */
static const Value *nonempty_in(const Node *n, int i)
{
    if (i >= n->n_in || !n->in[i] || ir_numel(&n->in[i]->shape) == 0) return NULL;
    return n->in[i];
}

/* Reads a constant float vector input (scales, roi) of length len into v. */
static int const_floats(const Node *n, int i, int len, double *v, Diag *d)
{
    const Value *x = n->in[i];
    const char *name = ir_op(n->op)->in_names[i];
    char b1[160];
    if (x->kind != VK_CONST) return diag_node_error(d, n, "input '%s' must be a constant", name);
    if (!ir_dtype_is_float(x->dtype))
        return diag_node_error(d, n, "input '%s' has dtype %s; expected a floating-point type", name,
                               ir_dtype_name(x->dtype));
    if (x->shape.rank != 1 || x->shape.dims[0] != len)
        return diag_node_error(d, n, "input '%s' shape %s must be [%d] (%s)", name,
                               ir_shape_str(&x->shape, b1, sizeof b1), len,
                               i == 1 ? "begins then ends, one per axis of X" : "one per axis of X");
    for (int k = 0; k < len; k++) v[k] = ir_load_f64(x->dtype, x->data, (size_t)k);
    return 0;
}

/* A shape-deciding float vector input i (roi, scales) read at run time:
 * checks its dtype and length as const_floats does. */
static int runtime_floats(const Node *n, int i, int len, Diag *d)
{
    const Value *x = n->in[i];
    const char *name = ir_op(n->op)->in_names[i];
    char b1[160];
    if (!ir_dtype_is_float(x->dtype))
        return diag_node_error(d, n, "input '%s' has dtype %s; expected a floating-point type", name, ir_dtype_name(x->dtype));
    if (x->shape.rank != 1 || x->shape.dims[0] != len || x->shape.sym[0])
        return diag_node_error(d, n, "input '%s' shape %s must be [%d] (%s)", name, ir_shape_str(&x->shape, b1, sizeof b1), len,
                               i == 1 ? "begins then ends, one per axis of X" : "one per axis of X");
    return 0;
}

/* The plan of n; with `runtime`, inputs roi, scales and sizes may be
 * tensors read at run time: their values are then left out (the roi stays
 * [0, 1], an output extent they decide is -1). */
static int resize_plan_rt(const Node *n, ResizePlan *p, int runtime, Diag *d);

static int resize_plan(const Node *n, ResizePlan *p, Diag *d) { return resize_plan_rt(n, p, 0, d); }
static int resize_plan_out(const Node *n, ResizePlan *p, const Value *scales, const Value *sizes, int runtime, Diag *d);

static int resize_plan_rt(const Node *n, ResizePlan *p, int runtime, Diag *d)
{
    static const char *const modes[] = {"nearest", "linear", "cubic"};
    static const char *const ctms[] = {"half_pixel", "asymmetric", "pytorch_half_pixel", "tf_crop_and_resize",
                                       "align_corners"};
    static const char *const nms[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
    const Shape *xs = &n->in[0]->shape;
    int r = p->rank = xs->rank;
    memcpy(p->in, xs->dims, sizeof(int64_t) * (size_t)r);
    p->a = -0.75;
    p->extrap = 0;
    p->exclude = 0;
    const Value *scales = NULL, *sizes = NULL;
    if (r < 1) return diag_node_error(d, n, "input 'X' must have rank >= 1, got a scalar");
    if (n->op == OP_Upsample) {
        p->mode = pick(n->attrs[UPSAMPLE_MODE].s, modes, 2);
        if (p->mode < 0)
            return diag_node_error(d, n, "attribute 'mode' must be nearest or linear, got '%s'", n->attrs[UPSAMPLE_MODE].s);
        p->ctm = CT_ASYMMETRIC;
        p->nearest = NM_FLOOR;
        scales = n->in[1];
        if (!scales) return diag_node_error(d, n, "input 'scales' is required");
    } else {
        p->mode = pick(n->attrs[RESIZE_MODE].s, modes, 3);
        if (p->mode < 0)
            return diag_node_error(d, n, "attribute 'mode' must be nearest, linear or cubic, got '%s'",
                                   n->attrs[RESIZE_MODE].s);
        p->ctm = pick(n->attrs[RESIZE_COORDINATE_TRANSFORMATION_MODE].s, ctms, 5);
        if (p->ctm < 0)
            return diag_node_error(d, n, "attribute 'coordinate_transformation_mode' must be half_pixel, asymmetric, pytorch_half_pixel, tf_crop_and_resize or align_corners, got '%s'",
                                   n->attrs[RESIZE_COORDINATE_TRANSFORMATION_MODE].s);
        p->nearest = pick(n->attrs[RESIZE_NEAREST_MODE].s, nms, 4);
        if (p->nearest < 0)
            return diag_node_error(d, n, "attribute 'nearest_mode' must be round_prefer_floor, round_prefer_ceil, floor or ceil, got '%s'",
                                   n->attrs[RESIZE_NEAREST_MODE].s);
        p->a = n->attrs[RESIZE_CUBIC_COEFF_A].f;
        p->exclude = n->attrs[RESIZE_EXCLUDE_OUTSIDE].i != 0;
        p->extrap = n->attrs[RESIZE_EXTRAPOLATION_VALUE].f;
        scales = nonempty_in(n, 2);
        sizes = nonempty_in(n, 3);
        if (scales && sizes) return diag_node_error(d, n, "only one of inputs 'scales' and 'sizes' may be given");
        if (!scales && !sizes) return diag_node_error(d, n, "one of inputs 'scales' and 'sizes' must be given");
        for (int i = 0; i < r; i++) {
            p->roi_b[i] = 0;
            p->roi_e[i] = 1;
        }
        if (p->ctm == CT_TF_CROP) {
            double roi[2 * IR_MAX_RANK];
            if (!nonempty_in(n, 1))
                return diag_node_error(d, n, "input 'roi' is required with coordinate_transformation_mode=tf_crop_and_resize");
            if (runtime && n->in[1]->kind != VK_CONST) return runtime_floats(n, 1, 2 * r, d) ? -1 : resize_plan_out(n, p, scales, sizes, runtime, d);
            if (const_floats(n, 1, 2 * r, roi, d)) return -1;
            for (int i = 0; i < 2 * r; i++)
                if (!isfinite(roi[i]))
                    return diag_node_error(d, n, "input 'roi' must be finite, got %g at index %d", roi[i], i);
            for (int i = 0; i < r; i++) {
                p->roi_b[i] = roi[i];
                p->roi_e[i] = roi[r + i];
            }
        }
    }
    return resize_plan_out(n, p, scales, sizes, runtime, d);
}

/* The output extents and scales of resize_plan_rt from scales or sizes. */
static int resize_plan_out(const Node *n, ResizePlan *p, const Value *scales, const Value *sizes, int runtime, Diag *d)
{
    int r = p->rank;
    char b1[160];
    const Value *src = scales ? scales : sizes;
    if (runtime && src->kind != VK_CONST) {
        if (scales && runtime_floats(n, n->op == OP_Upsample ? 1 : 2, r, d)) return -1;
        if (!scales && (!ir_dtype_is_int(sizes->dtype) || sizes->shape.rank != 1 || sizes->shape.dims[0] != r || sizes->shape.sym[0]))
            return diag_node_error(d, n, "input 'sizes' must be an integer tensor of shape [%d] (one per axis of X), got %s%s", r,
                                   ir_dtype_name(sizes->dtype), ir_shape_str(&sizes->shape, b1, sizeof b1));
        for (int i = 0; i < r; i++) {
            p->out[i] = -1;
            p->scale[i] = 1;
        }
        return 0;
    }
    if (scales) {
        if (const_floats(n, n->op == OP_Upsample ? 1 : 2, r, p->scale, d)) return -1;
        for (int i = 0; i < r; i++) {
            if (!(p->scale[i] > 0) || !isfinite(p->scale[i]))
                return diag_node_error(d, n, "input 'scales' must be positive and finite, got %g for axis %d",
                                       p->scale[i], i);
            double od = floor(p->scale[i] * (double)p->in[i]);
            if (od >= 0x1p62)
                return diag_node_error(d, n, "input 'scales' gives axis %d a size of %g elements", i, od);
            p->out[i] = (int64_t)od;
        }
    } else {
        int64_t sz[IR_MAX_RANK + 1];
        if (sizes->kind != VK_CONST) return diag_node_error(d, n, "input 'sizes' must be a constant");
        int cnt = ir_const_ints(sizes, sz, IR_MAX_RANK + 1);
        if (cnt < 0) return diag_node_error(d, n, "input 'sizes' must be an integer tensor, got %s",
                                            ir_dtype_name(sizes->dtype));
        if (cnt != r || sizes->shape.rank != 1)
            return diag_node_error(d, n, "input 'sizes' shape %s must be [%d] (one per axis of X)",
                                   ir_shape_str(&sizes->shape, b1, sizeof b1), r);
        for (int i = 0; i < r; i++) {
            if (sz[i] < 0)
                return diag_node_error(d, n, "input 'sizes' must be non-negative, got %s", nn_ints_str(sz, r, b1, sizeof b1));
            if (p->in[i] == 0 && sz[i] > 0)
                return diag_node_error(d, n, "axis %d of X is empty and cannot be resized to %lld", i, (long long)sz[i]);
            p->out[i] = sz[i];
            p->scale[i] = p->in[i] ? (double)sz[i] / (double)p->in[i] : 1.0;
        }
    }
    return 0;
}

static void cubic_coeffs(double t, double A, double *c)
{
    double u = t + 1, v = 1 - t, w = 2 - t;
    c[0] = ((A * u - 5 * A) * u + 8 * A) * u - 4 * A;
    c[1] = ((A + 2) * t - (A + 3)) * t * t + 1;
    c[2] = ((A + 2) * v - (A + 3)) * v * v + 1;
    c[3] = ((A * w - 5 * A) * w + 8 * A) * w - 4 * A;
}

/* Taps of output index o along axis ax: returns their count (zero-weight
 * taps dropped, equal clamped indices merged), 0 when outside the crop. */
static int plan_taps(const ResizePlan *p, int ax, int64_t o, int64_t *idx, double *w)
{
    int64_t in = p->in[ax];
    double s = p->scale[ax], ow = s * (double)in, x, fo = (double)o;
    switch (p->ctm) {
    case CT_ASYMMETRIC: x = fo / s; break;
    case CT_ALIGN_CORNERS: x = ow == 1 ? 0 : fo * (double)(in - 1) / (ow - 1); break;
    case CT_PYTORCH_HALF_PIXEL: x = ow == 1 ? -0.5 : (fo + 0.5) / s - 0.5; break;
    case CT_TF_CROP: {
        double rb = p->roi_b[ax], re = p->roi_e[ax];
        x = ow == 1 ? (re - rb) * (double)(in - 1) / 2 : fo * (re - rb) * (double)(in - 1) / (ow - 1);
        x += rb * (double)(in - 1);
        if (x < 0 || x > (double)(in - 1)) return 0;
        break;
    }
    default: x = (fo + 0.5) / s - 0.5; break;
    }
    double base = ceil(x) - 1, t = x - base;
    int64_t b = (int64_t)base, raw[4];
    double cw[4];
    int cnt;
    if (p->mode == RM_NEAREST) {
        int up;
        if (t == 1) up = 1;
        else if (p->nearest == NM_ROUND_FLOOR) up = t > 0.5;
        else if (p->nearest == NM_ROUND_CEIL) up = t >= 0.5;
        else up = p->nearest == NM_CEIL;
        raw[0] = b + up;
        cw[0] = 1;
        cnt = 1;
    } else if (p->mode == RM_LINEAR) {
        raw[0] = b;
        raw[1] = b + 1;
        cw[0] = 1 - t;
        cw[1] = t;
        cnt = 2;
    } else {
        cubic_coeffs(t, p->a, cw);
        for (int j = 0; j < 4; j++) raw[j] = b - 1 + j;
        cnt = 4;
        if (p->exclude) {
            double sum = 0;
            for (int j = 0; j < 4; j++) {
                if (raw[j] < 0 || raw[j] >= in) cw[j] = 0;
                sum += cw[j];
            }
            for (int j = 0; j < 4; j++) cw[j] /= sum;
        }
    }
    int k = 0;
    for (int j = 0; j < cnt; j++) {
        if (cw[j] == 0) continue;
        int64_t c = raw[j] < 0 ? 0 : raw[j] >= in ? in - 1 : raw[j];
        if (k > 0 && idx[k - 1] == c) {
            w[k - 1] += cw[j];
            continue;
        }
        idx[k] = c;
        w[k++] = cw[j];
    }
    if (k == 0) { /* all weights zero: keep one null tap */
        idx[0] = 0;
        w[0] = 0;
        k = 1;
    }
    return k;
}

/* See geometry.h. */
int ir_resize_axis_taps(const Node *n, int axis, int64_t *idx, double *w)
{
    ResizePlan p;
    if (resize_plan(n, &p, NULL)) return -1;
    int kmax = 1;
    for (int64_t o = 0; o < p.out[axis]; o++) {
        int k = plan_taps(&p, axis, o, idx + 4 * o, w + 4 * o);
        if (k == 0) {
            for (int j = 0; j < 4; j++) {
                idx[4 * o + j] = -1;
                w[4 * o + j] = 0;
            }
            continue;
        }
        for (int j = k; j < 4; j++) {
            idx[4 * o + j] = idx[4 * o];
            w[4 * o + j] = 0;
        }
        if (k > kmax) kmax = k;
    }
    return kmax;
}

/* See geometry.h. */
double ir_resize_extrapolation(const Node *n)
{
    return n->op == OP_Resize ? n->attrs[RESIZE_EXTRAPOLATION_VALUE].f : 0.0;
}

static int resize_infer(Node *n, Diag *d)
{
    ResizePlan p;
    char b1[160];
    if (resize_plan_rt(n, &p, 1, d)) return -1;
    if (p.mode != RM_NEAREST && !ir_dtype_is_float(n->in[0]->dtype))
        return diag_node_error(d, n, "mode '%s' needs a floating-point input 'X', got %s",
                               p.mode == RM_LINEAR ? "linear" : "cubic", ir_dtype_name(n->in[0]->dtype));
    Shape os = ir_shape(p.rank, p.out);
    if (p.out[0] < 0) {
        /* scales or sizes read at run time: every extent is data-dependent, bounded by --max-dim */
        for (int i = 0; i < p.rank; i++) {
            os.dims[i] = IR_DIM_UNBOUNDED;
            os.sym[i] = IR_SYM_NEW;
        }
        ir_set_out(n, 0, n->in[0]->dtype, &os);
        return 0;
    }
    int64_t cnt;
    if (ir_shape_numel(&os, &cnt))
        return diag_node_error(d, n, "output shape %s is too large", ir_shape_str(&os, b1, sizeof b1));
    ir_set_out(n, 0, n->in[0]->dtype, &os);
    return 0;
}

static int resize_eval(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    ResizePlan p;
    if (resize_plan(n, &p, d)) return -1;
    int r = p.rank;
    int64_t total = nn_prod(p.out, 0, r);
    if (total == 0) return 0;
    int64_t st[IR_MAX_RANK], o[IR_MAX_RANK] = {0};
    st[r - 1] = 1;
    for (int a = r - 2; a >= 0; a--) st[a] = st[a + 1] * p.in[a + 1];
    for (int64_t e = 0; e < total; e++, nn_next_index(o, p.out, r)) {
        int64_t idx[IR_MAX_RANK][4], kk[IR_MAX_RANK], t[IR_MAX_RANK] = {0};
        double w[IR_MAX_RANK][4];
        int outside = 0;
        for (int a = 0; a < r; a++) {
            kk[a] = plan_taps(&p, a, o[a], idx[a], w[a]);
            if (kk[a] == 0) outside = 1;
        }
        if (outside) {
            out[0][e] = p.extrap;
            continue;
        }
        double acc = 0;
        do {
            double wt = 1;
            int64_t off = 0;
            for (int a = 0; a < r; a++) {
                wt *= w[a][t[a]];
                off += idx[a][t[a]] * st[a];
            }
            acc += wt * in[0][off];
        } while (nn_next_index(t, kk, r));
        out[0][e] = acc;
    }
    return 0;
}

/* Y = X times one matrix per axis, m[o][i] = the summed weights of output o's
 * taps at input i (rows of zeros outside a tf_crop_and_resize roi, where the
 * extrapolation value stands in), so dX is dY folded back by each matrix
 * (ir_grad_fold_axis); axes whose matrix is the identity are skipped. Nearest
 * sums dY over the outputs that copy an input. roi, scales and sizes choose
 * the sampling grid and get no gradient. */
static int resize_grad(GradCtx *gc)
{
    const Node *n = gc->n;
    ResizePlan p;
    if (resize_plan(n, &p, gc->d)) return -1;
    Value *g = gb_dy(gc, 0);
    if (ir_numel(&g->shape) == 0 || ir_numel(&n->in[0]->shape) == 0) {
        gb_set(gc, 0, gb_zeros_like(gc, n->in[0]));
        return gb_done(gc);
    }
    for (int a = 0; a < p.rank && g; a++) {
        int64_t rows = p.out[a], cols = p.in[a], idx[4];
        double *m = calloc((size_t)(rows * cols) + 1, sizeof *m), w[4];
        GC_ASSERT(m);
        for (int64_t o = 0; o < rows; o++) {
            int k = plan_taps(&p, a, o, idx, w);
            for (int j = 0; j < k; j++) m[o * cols + idx[j]] += w[j];
        }
        int ident = rows == cols;
        for (int64_t e = 0; e < rows * cols && ident; e++) ident = m[e] == (e / cols == e % cols);
        if (!ident) g = ir_grad_fold_axis(gc, g, a, m, rows, cols);
        free(m);
    }
    gb_set(gc, 0, g);
    return gb_done(gc);
}

const OpDesc op_Resize = {
    .name = "Resize",
    .min_in = 1, .max_in = 4, .in_names = resize_in,
    .min_out = 1, .max_out = 1, .out_names = one_Y,
    OP_ATTRS(resize_attrs),
    .infer = resize_infer,
    .eval = resize_eval,
    .const_inputs = 1u << 1 | 1u << 2 | 1u << 3, /* roi, scales, sizes */
    /* roi decides no shape, but the reference evaluation reads it as a constant */
    .shape_inputs = 1u << 1 | 1u << 2 | 1u << 3,
    .gradient = resize_grad, .backward_reads = ir_bw_none,
};

const OpDesc op_Upsample = {
    .name = "Upsample",
    .min_in = 2, .max_in = 2, .in_names = upsample_in,
    .min_out = 1, .max_out = 1, .out_names = one_Y,
    OP_ATTRS(upsample_attrs),
    .infer = resize_infer,
    .eval = resize_eval,
    .const_inputs = 1u << 1, /* scales */
    .shape_inputs = 1u << 1,
    .gradient = resize_grad, .backward_reads = ir_bw_none,
};

/* ---- Hardmax ------------------------------------------------------------ */

static const AttrSpec hm_attrs[] = {[HARDMAX_AXIS] = {"axis", ATTR_INT, "-1", 0}};
OP_ATTRS_CHECK(hm_attrs, HARDMAX_COUNT);

/* See geometry.h. */
int ir_hardmax_split(const Node *n, int64_t *outer, int64_t *len, int64_t *inner)
{
    return nn_axis_split(n, HARDMAX_AXIS, outer, len, inner, NULL);
}

static int hm_infer(Node *n, Diag *d)
{
    int64_t o, l, i;
    if (nn_check_float(n, 0, d) || nn_axis_split(n, HARDMAX_AXIS, &o, &l, &i, d)) return -1;
    ir_set_out(n, 0, n->in[0]->dtype, &n->in[0]->shape);
    return 0;
}

static int hm_eval(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    int64_t outer, len, inner;
    if (nn_axis_split(n, HARDMAX_AXIS, &outer, &len, &inner, d)) return -1;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            const double *x = in[0] + o * len * inner + i;
            double *y = out[0] + o * len * inner + i;
            int64_t best = 0;
            for (int64_t j = 0; j < len; j++) {
                if (x[j * inner] > x[best * inner]) best = j;
                y[j * inner] = 0;
            }
            if (len > 0) y[best * inner] = 1;
        }
    return 0;
}

/* A one-hot of the argmax is piecewise constant: its gradient is zero
 * wherever it exists. */
static int hm_grad(GradCtx *gc)
{
    gb_set(gc, 0, gb_zeros_like(gc, gc->n->in[0]));
    return gb_done(gc);
}

const OpDesc op_Hardmax = {
    .name = "Hardmax",
    .min_in = 1, .max_in = 1, .in_names = one_input,
    .min_out = 1, .max_out = 1, .out_names = one_output,
    OP_ATTRS(hm_attrs),
    .infer = hm_infer,
    .eval = hm_eval,
    .gradient = hm_grad,
    .backward_reads = ir_bw_none,
};

/* ---- Dropout (inference) ------------------------------------------------ */

/* Y = X and mask = all true. Training mode (random drops) is refused unless
 * the ratio is a constant 0, where it is the identity as well. */

static const char *const dropout_in[] = {"data", "ratio", "training_mode"};
static const char *const dropout_out[] = {"output", "mask"};
static const AttrSpec dropout_attrs[] = {[DROPOUT_SEED] = {"seed", ATTR_INT, NULL, 0}};
OP_ATTRS_CHECK(dropout_attrs, DROPOUT_COUNT);

static int dropout_infer(Node *n, Diag *d)
{
    char b1[160];
    if (n->n_in > 1 && n->in[1]) {
        const Value *r = n->in[1];
        if (!ir_dtype_is_float(r->dtype) || ir_numel(&r->shape) != 1)
            return diag_node_error(d, n, "input 'ratio' must be a floating-point scalar, got %s%s",
                                   ir_dtype_name(r->dtype), ir_shape_str(&r->shape, b1, sizeof b1));
    }
    /* A constant ratio of 0 drops nothing: then training mode is the identity too. */
    const Value *rv = n->n_in > 1 ? n->in[1] : NULL;
    int zero_ratio = rv && rv->kind == VK_CONST && ir_load_f64(rv->dtype, rv->data, 0) == 0;
    if (n->n_in > 2 && n->in[2]) {
        const Value *t = n->in[2];
        if (t->dtype != DT_BOOL || ir_numel(&t->shape) != 1)
            return diag_node_error(d, n, "input 'training_mode' must be a bool scalar, got %s%s",
                                   ir_dtype_name(t->dtype), ir_shape_str(&t->shape, b1, sizeof b1));
        if (t->kind != VK_CONST && !zero_ratio)
            return diag_node_error(d, n, "input 'training_mode' must be a constant: training mode is not supported (inference only)");
        if (t->kind == VK_CONST && ir_load_f64(t->dtype, t->data, 0) != 0 && !zero_ratio)
            return diag_node_error(d, n, "training_mode=true is not supported (inference only: Dropout is the identity)");
    }
    ir_set_out(n, 0, n->in[0]->dtype, &n->in[0]->shape);
    if (n->n_out > 1) ir_set_out(n, 1, DT_BOOL, &n->in[0]->shape);
    return 0;
}

static int dropout_eval(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    (void)d;
    int64_t cnt = ir_numel(&n->in[0]->shape);
    for (int64_t i = 0; i < cnt; i++) {
        out[0][i] = in[0][i];
        if (n->n_out > 1) out[1][i] = 1;
    }
    return 0;
}

/* The identity (inference, or a zero ratio): dY to data; the ratio changes
 * nothing, so its gradient is zero. */
static int dropout_grad(GradCtx *gc)
{
    gb_set(gc, 0, gb_dy(gc, 0));
    if (ir_has_input(gc->n, 1) && gc->need[1]) gb_set(gc, 1, gb_zeros_like(gc, gc->n->in[1]));
    return gb_done(gc);
}

/* Inference form: no training_mode operand (the identity on output 0). */
static void dropout_to_inference(Node *n)
{
    if (n->n_in > 2) n->in[2] = NULL;
}

const OpDesc op_Dropout = {
    .name = "Dropout",
    .min_in = 1, .max_in = 3, .in_names = dropout_in,
    .min_out = 1, .max_out = 2, .out_names = dropout_out,
    OP_ATTRS(dropout_attrs),
    .infer = dropout_infer,
    .inplace = ir_inplace_00, .n_inplace = 1,
    .eval = dropout_eval,
    .gradient = dropout_grad,
    .backward_reads = ir_bw_none,
    .to_inference = dropout_to_inference,
};

/* ---- MeanVarianceNormalization ------------------------------------------ */

static const AttrSpec mvn_attrs[] = {[MVN_AXES] = {"axes", ATTR_INTS, "[0,2,3]", 0}};
OP_ATTRS_CHECK(mvn_attrs, MVN_COUNT);

/* See geometry.h: reduced-axis mask of a MeanVarianceNormalization node. */
int ir_mvn_axes(const Node *n, int *mask, Diag *d)
{
    const Shape *xs = &n->in[0]->shape;
    const AttrVal *a = &n->attrs[MVN_AXES];
    char b1[160], b2[160];
    for (int i = 0; i < xs->rank; i++) mask[i] = 0;
    for (int i = 0; i < a->n; i++) {
        int ax = ir_norm_axis(a->ints[i], xs->rank);
        if (ax < 0)
            return diag_node_error(d, n, "attribute 'axes' %s has axis %lld out of range for input 'X' of shape %s",
                                   nn_ints_str(a->ints, a->n, b1, sizeof b1), (long long)a->ints[i],
                                   ir_shape_str(xs, b2, sizeof b2));
        if (mask[ax])
            return diag_node_error(d, n, "attribute 'axes' %s names axis %d twice", nn_ints_str(a->ints, a->n, b1, sizeof b1),
                                   ax);
        mask[ax] = 1;
    }
    return 0;
}

static int mvn_infer(Node *n, Diag *d)
{
    int mask[IR_MAX_RANK];
    if (nn_check_float(n, 0, d) || ir_mvn_axes(n, mask, d)) return -1;
    ir_set_out(n, 0, n->in[0]->dtype, &n->in[0]->shape);
    return 0;
}

static int mvn_eval(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    int mask[IR_MAX_RANK];
    if (ir_mvn_axes(n, mask, d)) return -1;
    const Shape *xs = &n->in[0]->shape;
    int r = xs->rank;
    int64_t total = ir_numel(xs), st[IR_MAX_RANK], kdims[IR_MAX_RANK], rdims[IR_MAX_RANK];
    int kax[IR_MAX_RANK], rax[IR_MAX_RANK], nk = 0, nr = 0;
    if (total == 0) return 0;
    if (r == 0) { /* a scalar normalizes to 0 */
        out[0][0] = 0;
        return 0;
    }
    st[r - 1] = 1;
    for (int a = r - 2; a >= 0; a--) st[a] = st[a + 1] * xs->dims[a + 1];
    for (int a = 0; a < r; a++) {
        if (mask[a]) { rax[nr] = a; rdims[nr++] = xs->dims[a]; }
        else { kax[nk] = a; kdims[nk++] = xs->dims[a]; }
    }
    int64_t K = nn_prod(kdims, 0, nk), R = nn_prod(rdims, 0, nr);
    int64_t ki[IR_MAX_RANK] = {0};
    for (int64_t k = 0; k < K; k++, nn_next_index(ki, kdims, nk)) {
        int64_t base = 0, ri[IR_MAX_RANK] = {0};
        for (int j = 0; j < nk; j++) base += ki[j] * st[kax[j]];
        double s1 = 0, s2 = 0;
        for (int64_t q = 0; q < R; q++, nn_next_index(ri, rdims, nr)) {
            int64_t off = base;
            for (int j = 0; j < nr; j++) off += ri[j] * st[rax[j]];
            s1 += in[0][off];
            s2 += in[0][off] * in[0][off];
        }
        double mu = s1 / (double)R, var = s2 / (double)R - mu * mu;
        double sd = sqrt(var > 0 ? var : 0) + 1e-9;
        memset(ri, 0, sizeof ri);
        for (int64_t q = 0; q < R; q++, nn_next_index(ri, rdims, nr)) {
            int64_t off = base;
            for (int j = 0; j < nr; j++) off += ri[j] * st[rax[j]];
            out[0][off] = (in[0][off] - mu) / sd;
        }
    }
    return 0;
}

/* With mean() over the axes, s = sqrt(mean((x - mean(x))^2)) + 1e-9 and
 * y = (x - mean(x)) / s: dx = (dy - mean(dy) - y * mean(dy * y)) / s,
 * composed of reductions and elementwise ops. (Exactly, the last term is
 * divided by s - 1e-9 instead; the difference is 1e-9/sd relative, and this
 * form stays finite on constant slices, where y = 0.) */
static int mvn_grad(GradCtx *gc)
{
    const Node *n = gc->n;
    const AttrVal *a = &n->attrs[MVN_AXES];
    char ax[256];
    nn_ints_str(a->ints, a->n, ax, sizeof ax);
    const char *mean_attrs = gb_fmt(gc, "axes=%s", ax);
    Value *x = n->in[0], *y = n->out[0], *dy = gb_dy(gc, 0);
    Value *xc = gb2(gc, OP_Sub, NULL, x, gb1(gc, OP_ReduceMean, mean_attrs, x));
    Value *var = gb1(gc, OP_ReduceMean, mean_attrs, gb2(gc, OP_Mul, NULL, xc, xc));
    Value *s = gb2(gc, OP_Add, NULL, gb1(gc, OP_Sqrt, NULL, var), gb_scalar(gc, x->dtype, 1e-9));
    Value *dyy = gb1(gc, OP_ReduceMean, mean_attrs, gb2(gc, OP_Mul, NULL, dy, y));
    Value *t = gb2(gc, OP_Sub, NULL, gb2(gc, OP_Sub, NULL, dy, gb1(gc, OP_ReduceMean, mean_attrs, dy)),
                   gb2(gc, OP_Mul, NULL, y, dyy));
    gb_set(gc, 0, gb2(gc, OP_Div, NULL, t, s));
    return gb_done(gc);
}

const OpDesc op_MeanVarianceNormalization = {
    .name = "MeanVarianceNormalization",
    .min_in = 1, .max_in = 1, .in_names = one_X,
    .min_out = 1, .max_out = 1, .out_names = one_Y,
    OP_ATTRS(mvn_attrs),
    .infer = mvn_infer,
    .eval = mvn_eval,
    .gradient = mvn_grad,
    .backward_reads = ir_bw_all,
};

/* ---- RoiAlign ----------------------------------------------------------- */

/* RoiAlign pools each region of interest (x1, y1, x2, y2 in rois, scaled by
 * spatial_scale) of image batch_indices[r] of X[N,C,H,W] into an
 * output_height x output_width grid, the ONNX reference's way (opset 16):
 * half_pixel shifts the box by -0.5 and keeps degenerate boxes, while
 * output_half_pixel (RoiAlign-10) forces them to at least 1x1. Each bin
 * holds grid_h x grid_w samples (sampling_ratio, else ceil(box/bins)) at the
 * sample centres; a sample outside [-1, H] x [-1, W] counts as 0, others are
 * clamped and interpolated bilinearly from four pixels. avg averages the
 * samples; max takes, over the samples, the largest of the four weighted
 * pixels w_i * x_i (not the interpolated value: the reference's quirk). */
static const char *const roi_in[] = {"X", "rois", "batch_indices"};
static const AttrSpec roi_attrs[] = {
    [ROI_ALIGN_COORDINATE_TRANSFORMATION_MODE] = {"coordinate_transformation_mode", ATTR_STRING, "half_pixel", 0},
    [ROI_ALIGN_MODE] = {"mode", ATTR_STRING, "avg", 0},
    [ROI_ALIGN_OUTPUT_HEIGHT] = {"output_height", ATTR_INT, "1", 0},
    [ROI_ALIGN_OUTPUT_WIDTH] = {"output_width", ATTR_INT, "1", 0},
    [ROI_ALIGN_SAMPLING_RATIO] = {"sampling_ratio", ATTR_INT, "0", 0},
    [ROI_ALIGN_SPATIAL_SCALE] = {"spatial_scale", ATTR_FLOAT, "1.0", 0},
};
OP_ATTRS_CHECK(roi_attrs, ROI_ALIGN_COUNT);

static int roi_infer(Node *n, Diag *d)
{
    if (ir_need_inputs(n, d)) return -1;
    const Value *x = n->in[0], *rois = n->in[1], *bi = n->in[2];
    char b[128];
    const char *ctm = n->attrs[ROI_ALIGN_COORDINATE_TRANSFORMATION_MODE].s, *mode = n->attrs[ROI_ALIGN_MODE].s;
    int64_t oh = n->attrs[ROI_ALIGN_OUTPUT_HEIGHT].i, ow = n->attrs[ROI_ALIGN_OUTPUT_WIDTH].i;
    if (!ir_dtype_is_float(x->dtype)) return diag_node_error(d, n, "input 'X' must be a float tensor, got %s", ir_dtype_name(x->dtype));
    if (x->shape.rank != 4) return diag_node_error(d, n, "input 'X' must have rank 4 (N, C, H, W), got %d", x->shape.rank);
    if (rois->dtype != x->dtype)
        return diag_node_error(d, n, "input 'rois' has dtype %s, but input 'X' has dtype %s", ir_dtype_name(rois->dtype),
                               ir_dtype_name(x->dtype));
    if (rois->shape.rank != 2 || rois->shape.dims[1] != 4)
        return diag_node_error(d, n, "input 'rois' must have shape [num_rois, 4], got %s", ir_shape_str(&rois->shape, b, sizeof b));
    int64_t R = rois->shape.dims[0];
    if (bi->dtype != DT_I64) return diag_node_error(d, n, "input 'batch_indices' must be int64, got %s", ir_dtype_name(bi->dtype));
    if (bi->shape.rank != 1 || bi->shape.dims[0] != R)
        return diag_node_error(d, n, "input 'batch_indices' must have shape [%lld] (one per roi), got %s", (long long)R,
                               ir_shape_str(&bi->shape, b, sizeof b));
    if (strcmp(mode, "avg") != 0 && strcmp(mode, "max") != 0)
        return diag_node_error(d, n, "attribute 'mode' must be avg or max, got '%s'", mode);
    if (strcmp(ctm, "half_pixel") != 0 && strcmp(ctm, "output_half_pixel") != 0)
        return diag_node_error(d, n, "attribute 'coordinate_transformation_mode' must be half_pixel or output_half_pixel, got '%s'", ctm);
    if (oh < 1 || ow < 1)
        return diag_node_error(d, n, "attributes 'output_height' = %lld and 'output_width' = %lld must be >= 1", (long long)oh, (long long)ow);
    if (n->attrs[ROI_ALIGN_SAMPLING_RATIO].i < 0)
        return diag_node_error(d, n, "attribute 'sampling_ratio' = %lld must be >= 0",
                               (long long)n->attrs[ROI_ALIGN_SAMPLING_RATIO].i);
    if (bi->kind == VK_CONST)
        for (int64_t r = 0; r < R; r++) {
            int64_t v;
            memcpy(&v, (const char *)bi->data + 8 * r, 8);
            if (v < 0 || v >= x->shape.dims[0])
                return diag_node_error(d, n, "input 'batch_indices' value %lld is out of range [0, %lld)", (long long)v,
                                       (long long)x->shape.dims[0]);
        }
    int64_t dims[4] = {R, x->shape.dims[1], oh, ow};
    Shape s = ir_shape(4, dims);
    ir_set_out(n, 0, x->dtype, &s);
    return 0;
}

/* Bilinear taps (flat pixel positions, weights) of sample (y, x) in an
 * H x W plane; all weights 0 when the sample lies outside [-1, H] x [-1, W]. */
static void roi_taps(double y, double x, int64_t H, int64_t W, int64_t *pos, double *w)
{
    if (y < -1.0 || y > (double)H || x < -1.0 || x > (double)W) {
        for (int k = 0; k < 4; k++) pos[k] = 0, w[k] = 0;
        return;
    }
    y = y > 0 ? y : 0;
    x = x > 0 ? x : 0;
    int64_t y0 = (int64_t)y, x0 = (int64_t)x, y1 = y0 + 1, x1 = x0 + 1;
    if (y0 >= H - 1) y = (double)(y0 = y1 = H - 1);
    if (x0 >= W - 1) x = (double)(x0 = x1 = W - 1);
    double ly = y - (double)y0, lx = x - (double)x0, hy = 1.0 - ly, hx = 1.0 - lx;
    pos[0] = y0 * W + x0, pos[1] = y0 * W + x1, pos[2] = y1 * W + x0, pos[3] = y1 * W + x1;
    w[0] = hy * hx, w[1] = hy * lx, w[2] = ly * hx, w[3] = ly * lx;
}

/* Samples per bin along one axis: sampling_ratio, else ceil(extent / bins);
 * a degenerate (<= 0 or NaN) box has none, and the count is capped at 2^16
 * so that a huge box cannot overflow the conversion. */
static int64_t roi_grid(int64_t sr, double extent, int64_t bins)
{
    if (sr > 0) return sr;
    double g = ceil(extent / (double)bins);
    return g > 0 ? (g < 65536.0 ? (int64_t)g : 65536) : 0;
}

static int roi_eval(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    const int64_t *xd = n->in[0]->shape.dims;
    int64_t N = xd[0], C = xd[1], H = xd[2], W = xd[3], R = n->in[1]->shape.dims[0];
    int64_t oh = n->attrs[ROI_ALIGN_OUTPUT_HEIGHT].i, ow = n->attrs[ROI_ALIGN_OUTPUT_WIDTH].i;
    int64_t sr = n->attrs[ROI_ALIGN_SAMPLING_RATIO].i;
    int half = strcmp(n->attrs[ROI_ALIGN_COORDINATE_TRANSFORMATION_MODE].s, "half_pixel") == 0;
    int is_max = strcmp(n->attrs[ROI_ALIGN_MODE].s, "max") == 0;
    double scale = n->attrs[ROI_ALIGN_SPATIAL_SCALE].f, off = half ? 0.5 : 0.0;
    for (int64_t r = 0; r < R; r++) {
        double bv = in[2][r];
        if (!(bv >= 0 && bv < (double)N))
            return diag_node_error(d, n, "input 'batch_indices' value %g is out of range [0, %lld)", bv, (long long)N);
        const double *roi = in[1] + 4 * r;
        double x0 = roi[0] * scale - off, y0 = roi[1] * scale - off;
        double rw = roi[2] * scale - off - x0, rh = roi[3] * scale - off - y0;
        if (!half) {
            rw = rw > 1.0 ? rw : 1.0;
            rh = rh > 1.0 ? rh : 1.0;
        }
        double bh = rh / (double)oh, bw = rw / (double)ow;
        int64_t gh = roi_grid(sr, rh, oh), gw = roi_grid(sr, rw, ow), count = gh * gw > 1 ? gh * gw : 1;
        for (int64_t c = 0; c < C; c++) {
            const double *plane = in[0] + ((int64_t)bv * C + c) * H * W;
            for (int64_t ph = 0; ph < oh; ph++)
                for (int64_t pw = 0; pw < ow; pw++) {
                    double acc = 0.0;
                    int first = 1;
                    for (int64_t iy = 0; iy < gh; iy++) {
                        double y = y0 + (double)ph * bh + ((double)iy + 0.5) * bh / (double)gh;
                        for (int64_t ix = 0; ix < gw; ix++) {
                            double x = x0 + (double)pw * bw + ((double)ix + 0.5) * bw / (double)gw;
                            int64_t pos[4];
                            double w[4];
                            roi_taps(y, x, H, W, pos, w);
                            if (!is_max) {
                                acc += w[0] * plane[pos[0]] + w[1] * plane[pos[1]] + w[2] * plane[pos[2]] + w[3] * plane[pos[3]];
                                continue;
                            }
                            double v = w[0] * plane[pos[0]];
                            for (int k = 1; k < 4; k++) v = w[k] * plane[pos[k]] > v ? w[k] * plane[pos[k]] : v;
                            acc = first || v > acc ? v : acc;
                            first = 0;
                        }
                    }
                    out[0][((r * C + c) * oh + ph) * ow + pw] = is_max ? acc : acc / (double)count;
                }
        }
    }
    return 0;
}

/* Runtime shapes: any dim of X and a runtime roi count R (Faster R-CNN's
 * MultiScaleRoIAlign pools what the proposals' level assignment selected);
 * Y is [R, C, oh, ow]. rois' R and batch_indices' R may be different
 * runtime counts (from two computations that agree at run time): the
 * compiled code compares them and returns NAME_ERR_SHAPE when they differ,
 * roi_infer at the actual extents refuses them in the interpreter. */
static int roi_infer_sym(Graph *g, Node *n, Diag *d)
{
    const Shape *rs = &n->in[1]->shape;
    Shape *ys = &n->out[0]->shape;
    if (rs->sym[1]) {
        char b[160];
        return diag_node_error(d, n, "input 'rois' must be [num_rois, 4], got %s", ir_shape_str_g(g, rs, b, sizeof b));
    }
    ys->sym[0] = rs->sym[0] ? rs->sym[0] : n->in[2]->shape.sym[0];
    ys->sym[1] = n->in[0]->shape.sym[1];
    return 0;
}

const OpDesc op_RoiAlign = {
    .name = "RoiAlign",
    .min_in = 3, .max_in = 3, .in_names = roi_in,
    .min_out = 1, .max_out = 1, .out_names = one_Y,
    OP_ATTRS(roi_attrs),
    .infer = roi_infer,
    .infer_sym = roi_infer_sym,
    .eval = roi_eval,
};
