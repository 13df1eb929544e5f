/* grad.c — operator descriptions of the grad family: dedicated backward
 * operators that the autodiff pass emits for forward ops whose gradient is
 * not a short composition of other ops. Each is an ordinary described op
 * (shape inference, double reference, C emitter in backend/c/emit_grad.c).
 *
 *   ConvGradData(dY, W) -> dX      {Conv's attributes, x_shape}
 *   ConvGradFilter(X, dY) -> dW    {Conv's attributes, w_shape}
 *   MaxPoolGrad(X, dY) -> dX       {MaxPool's attributes}
 *   AveragePoolGrad(dY) -> dX      {AveragePool's attributes, x_shape}
 *   SoftmaxGrad(dY, Y) -> dX       {axis}: dX = Y * (dY - sum_axis(dY * Y))
 *   LogSoftmaxGrad(dY, Y) -> dX    {axis}: dX = dY - exp(Y) * sum_axis(dY)
 *   LayerNormalizationGrad(dY, X, Scale) -> dX[, dScale[, dBias]]
 *   BatchNormalizationGrad(dY, X, scale) -> dX[, dScale[, dBias]]
 *
 * Every forward attribute keeps its forward name, kind and default, so a
 * gradient builder copies the forward node's attributes verbatim and adds
 * the shape of the forward tensor the backward op does not receive (x_shape,
 * w_shape). The windowed ops resolve their geometry with the forward ops'
 * own routine, nn_window_geo_of (nn_common.c), over the forward X and W
 * shapes, so auto_pad, ceil_mode and the output sizes are exactly the
 * forward ones; dY must have the forward output's shape.
 *
 * The windowed gradients are the transposes of the forward loops: each
 * (output position, kernel tap) pair that lands inside X in the forward op
 * contributes dY * W to dX (ConvGradData), dY * X to dW (ConvGradFilter),
 * dY / divisor to dX (AveragePoolGrad, the divisor of the forward
 * AveragePool) or dY to the first maximum of the window in tap scan order
 * (MaxPoolGrad: the element MaxPool's Indices names; ties keep the first,
 * a NaN maximum yields to a later number). Overlapping windows accumulate.
 *
 * The normalizations recompute their statistics from X (mean and
 * 1/sqrt(var + epsilon), biased variance), with xhat = (X - mean) * rstd:
 *   LayerNormalizationGrad, over the D elements of X.shape[axis:], g = dY *
 *   Scale: dX = rstd * (g - mean(g) - xhat * mean(g * xhat)); dScale and
 *   dBias (shape of Scale, which must equal X.shape[axis:]) sum dY * xhat
 *   and dY over the leading dims.
 *   BatchNormalizationGrad, training mode (statistics over every axis but
 *   1, count m): dBias = sum dY, dScale = sum dY * xhat, dX = scale * rstd
 *   * (dY - dBias / m - xhat * dScale / m). It keeps BatchNormalization's
 *   training_mode (default 0) and requires it to be 1, so that the forward
 *   node's attributes copied verbatim select it only for a training-mode
 *   forward; momentum is accepted and unused.
 * dScale and dBias are optional outputs (a node may ask for dX only).
 */
#include "../op.h"
#include "geometry.h"
#include "grad_attrs.h"
#include "nn_common.h"

#include <math.h>
#include <string.h>

static const char *const dx_out[] = {"dX"};

/* The shape held by ints attribute ai (x_shape, w_shape): between min_rank
 * and IR_MAX_RANK dims, none negative. */
static int grad_shape_attr(const Node *n, int ai, int min_rank, Shape *s, Diag *d)
{
    const AttrVal *a = &n->attrs[ai];
    const char *key = ir_op(n->op)->attrs[ai].name;
    char b1[160];
    if (a->n < min_rank || a->n > IR_MAX_RANK)
        return diag_node_error(d, n, "attribute '%s' has %d values; expected %d to %d (a shape%s)", key, a->n,
                               min_rank, IR_MAX_RANK, min_rank == 3 ? " [N, C, spatial...]" : "");
    *s = ir_shape(a->n, a->ints);
    for (int i = 0; i < a->n; i++)
        if (a->ints[i] < 0)
            return diag_node_error(d, n, "attribute '%s' %s has a negative dim", key, ir_shape_str(s, b1, sizeof b1));
    return 0;
}

/* Input i (dY) has shape want, the forward op's output shape. */
static int grad_check_dy(const Node *n, int i, const Shape *want, const char *fwd, Diag *d)
{
    char b1[160], b2[160];
    if (!ir_shape_eq(&n->in[i]->shape, want))
        return diag_node_error(d, n, "input '%s' shape %s does not match the %s output shape %s",
                               ir_op(n->op)->in_names[i], ir_shape_str(&n->in[i]->shape, b1, sizeof b1), fwd,
                               ir_shape_str(want, b2, sizeof b2));
    return 0;
}

/* [N, channels, w->out...]: the forward output shape of a window over X xs. */
static Shape grad_window_out(const Shape *xs, const NnWindow *w, int64_t channels)
{
    Shape s = {0};
    s.rank = w->sr + 2;
    s.dims[0] = xs->dims[0];
    s.dims[1] = channels;
    for (int i = 0; i < w->sr; i++) s.dims[2 + i] = w->out[i];
    return s;
}

/* ---- ConvGradData / ConvGradFilter --------------------------------------- */

static const char *const convgraddata_in[] = {"dY", "W"};
static const char *const convgradfilter_in[] = {"X", "dY"};
static const char *const convgradfilter_out[] = {"dW"};
static const AttrSpec convgraddata_attrs[] = {
    [CONVGRAD_AUTO_PAD] = {"auto_pad", ATTR_STRING, "NOTSET", 0},
    [CONVGRAD_DILATIONS] = {"dilations", ATTR_INTS, NULL, 0},
    [CONVGRAD_GROUP] = {"group", ATTR_INT, "1", 0},
    [CONVGRAD_KERNEL_SHAPE] = {"kernel_shape", ATTR_INTS, NULL, 0},
    [CONVGRAD_PADS] = {"pads", ATTR_INTS, NULL, 0},
    [CONVGRAD_STRIDES] = {"strides", ATTR_INTS, NULL, 0},
    [CONVGRAD_SHAPE] = {"x_shape", ATTR_INTS, NULL, 1},
};
OP_ATTRS_CHECK(convgraddata_attrs, CONVGRAD_COUNT);
static const AttrSpec convgradfilter_attrs[] = {
    [CONVGRAD_AUTO_PAD] = {"auto_pad", ATTR_STRING, "NOTSET", 0},
    [CONVGRAD_DILATIONS] = {"dilations", ATTR_INTS, NULL, 0},
    [CONVGRAD_GROUP] = {"group", ATTR_INT, "1", 0},
    [CONVGRAD_KERNEL_SHAPE] = {"kernel_shape", ATTR_INTS, NULL, 0},
    [CONVGRAD_PADS] = {"pads", ATTR_INTS, NULL, 0},
    [CONVGRAD_STRIDES] = {"strides", ATTR_INTS, NULL, 0},
    [CONVGRAD_SHAPE] = {"w_shape", ATTR_INTS, NULL, 1},
};
OP_ATTRS_CHECK(convgradfilter_attrs, CONVGRAD_COUNT);

/* The forward Conv of a ConvGradData / ConvGradFilter node: X's and W's
 * shapes (one an input, the other x_shape / w_shape), its window and
 * output shape, checked with Conv's rules. */
typedef struct ConvGradGeo {
    NnWindow w;
    Shape x, wt, y;
    int64_t group;
} ConvGradGeo;

static int convgrad_geo(const Node *n, ConvGradGeo *g, Diag *d)
{
    int data = n->op == OP_ConvGradData;
    const char *xname = data ? "attribute 'x_shape'" : "input 'X'";
    const char *wname = data ? "input 'W'" : "attribute 'w_shape'";
    char b1[160];
    if (data) {
        if (grad_shape_attr(n, CONVGRAD_SHAPE, 3, &g->x, d)) return -1;
        g->wt = n->in[1]->shape;
    } else {
        g->x = n->in[0]->shape;
        if (grad_shape_attr(n, CONVGRAD_SHAPE, 1, &g->wt, d)) return -1;
    }
    NnWindowSrc src = {&g->x, xname, &g->wt, wname};
    if (nn_window_geo_of(n, &src, &g->w, d)) return -1;
    int64_t group = g->group = n->attrs[CONVGRAD_GROUP].i, C = g->x.dims[1], M = g->wt.dims[0];
    if (group <= 0) return diag_node_error(d, n, "attribute 'group' must be positive, got %lld", (long long)group);
    if (C % group != 0)
        return diag_node_error(d, n, "%s has %lld channels, which group=%lld does not divide", xname, (long long)C,
                               (long long)group);
    if (M % group != 0)
        return diag_node_error(d, n, "%s shape %s has %lld output channels, which group=%lld does not divide", wname,
                               ir_shape_str(&g->wt, b1, sizeof b1), (long long)M, (long long)group);
    if (g->wt.dims[1] != C / group)
        return diag_node_error(d, n, "%s has %lld input channels per group but X has %lld channels and group=%lld (expects %lld)",
                               wname, (long long)g->wt.dims[1], (long long)C, (long long)group,
                               (long long)(C / group));
    g->y = grad_window_out(&g->x, &g->w, M);
    return grad_check_dy(n, data ? 0 : 1, &g->y, "Conv", d);
}

static int convgrad_infer(Node *n, Diag *d)
{
    ConvGradGeo g;
    if (nn_check_float(n, 0, d) || nn_check_same_dtype(n, 1, d) || convgrad_geo(n, &g, d)) return -1;
    ir_set_out(n, 0, n->in[0]->dtype, n->op == OP_ConvGradData ? &g.x : &g.wt);
    return 0;
}

/* Runs the forward Conv's loops and, for every tap inside X, adds dY * W to
 * dX (ConvGradData) or dY * X to dW (ConvGradFilter). */
static int convgrad_eval(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    ConvGradGeo g;
    if (convgrad_geo(n, &g, d)) return -1;
    const NnWindow *w = &g.w;
    int data = n->op == OP_ConvGradData;
    int64_t N = g.x.dims[0], C = g.x.dims[1], M = g.wt.dims[0], Cg = C / g.group, Mg = M / g.group;
    int64_t plane = nn_prod(w->in, 0, w->sr), P = nn_prod(w->out, 0, w->sr), KP = nn_prod(w->k, 0, w->sr);
    const double *dy = in[data ? 0 : 1], *other = in[data ? 1 : 0];
    double *dst = out[0];
    int64_t total = ir_numel(data ? &g.x : &g.wt);
    for (int64_t i = 0; i < total; i++) dst[i] = 0.0;
    for (int64_t b = 0; b < N; b++)
        for (int64_t m = 0; m < M; m++) {
            int64_t c0 = (m / Mg) * Cg;
            int64_t o[IR_MAX_RANK] = {0};
            for (int64_t p = 0; p < P; p++, nn_next_index(o, w->out, w->sr)) {
                double gy = dy[(b * M + m) * P + p];
                for (int64_t c = 0; c < Cg; c++) {
                    int64_t xb = (b * C + c0 + c) * plane, wb = (m * Cg + c) * KP;
                    int64_t t[IR_MAX_RANK] = {0};
                    for (int64_t kp = 0; kp < KP; kp++, nn_next_index(t, w->k, w->sr)) {
                        int64_t off = 0, ok = 1;
                        for (int i = 0; i < w->sr && ok; i++) {
                            int64_t pos = o[i] * w->s[i] - w->pb[i] + t[i] * w->dl[i];
                            ok = pos >= 0 && pos < w->in[i];
                            off = off * w->in[i] + pos;
                        }
                        if (!ok) continue;
                        if (data) dst[xb + off] += gy * other[wb + kp];
                        else dst[wb + kp] += gy * other[xb + off];
                    }
                }
            }
        }
    return 0;
}

const OpDesc op_ConvGradData = {
    .name = "ConvGradData",
    .min_in = 2, .max_in = 2, .in_names = convgraddata_in,
    .min_out = 1, .max_out = 1, .out_names = dx_out,
    OP_ATTRS(convgraddata_attrs),
    .infer = convgrad_infer,
    .eval = convgrad_eval,
};

const OpDesc op_ConvGradFilter = {
    .name = "ConvGradFilter",
    .min_in = 2, .max_in = 2, .in_names = convgradfilter_in,
    .min_out = 1, .max_out = 1, .out_names = convgradfilter_out,
    OP_ATTRS(convgradfilter_attrs),
    .infer = convgrad_infer,
    .eval = convgrad_eval,
};

/* ---- MaxPoolGrad / AveragePoolGrad --------------------------------------- */

static const char *const maxpoolgrad_in[] = {"X", "dY"};
static const char *const avgpoolgrad_in[] = {"dY"};
static const AttrSpec maxpoolgrad_attrs[] = {
    [MAXPOOLGRAD_AUTO_PAD] = {"auto_pad", ATTR_STRING, "NOTSET", 0},
    [MAXPOOLGRAD_CEIL_MODE] = {"ceil_mode", ATTR_INT, "0", 0},
    [MAXPOOLGRAD_DILATIONS] = {"dilations", ATTR_INTS, NULL, 0},
    [MAXPOOLGRAD_KERNEL_SHAPE] = {"kernel_shape", ATTR_INTS, NULL, 1},
    [MAXPOOLGRAD_PADS] = {"pads", ATTR_INTS, NULL, 0},
    [MAXPOOLGRAD_STORAGE_ORDER] = {"storage_order", ATTR_INT, "0", 0},
    [MAXPOOLGRAD_STRIDES] = {"strides", ATTR_INTS, NULL, 0},
};
OP_ATTRS_CHECK(maxpoolgrad_attrs, MAXPOOLGRAD_COUNT);
static const AttrSpec avgpoolgrad_attrs[] = {
    [AVGPOOLGRAD_AUTO_PAD] = {"auto_pad", ATTR_STRING, "NOTSET", 0},
    [AVGPOOLGRAD_CEIL_MODE] = {"ceil_mode", ATTR_INT, "0", 0},
    [AVGPOOLGRAD_COUNT_INCLUDE_PAD] = {"count_include_pad", ATTR_INT, "0", 0},
    [AVGPOOLGRAD_KERNEL_SHAPE] = {"kernel_shape", ATTR_INTS, NULL, 1},
    [AVGPOOLGRAD_PADS] = {"pads", ATTR_INTS, NULL, 0},
    [AVGPOOLGRAD_STRIDES] = {"strides", ATTR_INTS, NULL, 0},
    [AVGPOOLGRAD_X_SHAPE] = {"x_shape", ATTR_INTS, NULL, 1},
};
OP_ATTRS_CHECK(avgpoolgrad_attrs, AVGPOOLGRAD_COUNT);

/* The forward pool of a MaxPoolGrad (X: input 'X') or AveragePoolGrad (X:
 * x_shape) node: X's shape into xs and the window into w; dY checked
 * against the pool's output shape. */
static int poolgrad_geo(const Node *n, NnWindow *w, Shape *xs, Diag *d)
{
    int is_max = n->op == OP_MaxPoolGrad;
    if (is_max) *xs = n->in[0]->shape;
    else if (grad_shape_attr(n, AVGPOOLGRAD_X_SHAPE, 3, xs, d)) return -1;
    NnWindowSrc src = {xs, is_max ? "input 'X'" : "attribute 'x_shape'", NULL, NULL};
    if (nn_window_geo_of(n, &src, w, d)) return -1;
    Shape ys = grad_window_out(xs, w, xs->dims[1]);
    return grad_check_dy(n, is_max ? 1 : 0, &ys, is_max ? "MaxPool" : "AveragePool", d);
}

static int poolgrad_infer(Node *n, Diag *d)
{
    NnWindow w;
    Shape xs = {0};
    if (nn_check_float(n, 0, d)) return -1;
    if (n->op == OP_MaxPoolGrad) {
        int64_t so = n->attrs[MAXPOOLGRAD_STORAGE_ORDER].i;
        if (nn_check_same_dtype(n, 1, d)) return -1;
        if (so != 0 && so != 1)
            return diag_node_error(d, n, "attribute 'storage_order' must be 0 (row major) or 1 (column major), got %lld",
                                   (long long)so);
    }
    if (poolgrad_geo(n, &w, &xs, d)) return -1;
    ir_set_out(n, 0, n->in[0]->dtype, &xs);
    return 0;
}

/* Runs the forward pool's windows: MaxPoolGrad adds each dY to the window's
 * first maximum (MaxPool's rule), AveragePoolGrad adds dY / divisor to
 * every tap inside X. */
static int poolgrad_eval(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    NnWindow w;
    Shape xs = {0};
    if (poolgrad_geo(n, &w, &xs, d)) return -1;
    int is_max = n->op == OP_MaxPoolGrad;
    int cip = !is_max && n->attrs[AVGPOOLGRAD_COUNT_INCLUDE_PAD].i != 0;
    const double *dy = in[is_max ? 1 : 0];
    int64_t NC = xs.dims[0] * xs.dims[1], plane = nn_prod(w.in, 0, w.sr), P = nn_prod(w.out, 0, w.sr);
    int64_t KP = nn_prod(w.k, 0, w.sr);
    for (int64_t i = 0; i < NC * plane; i++) out[0][i] = 0.0;
    for (int64_t q = 0; q < NC; q++) {
        const double *x = is_max ? in[0] + q * plane : NULL;
        double *dx = out[0] + q * plane;
        int64_t o[IR_MAX_RANK] = {0};
        for (int64_t p = 0; p < P; p++, nn_next_index(o, w.out, w.sr)) {
            double g = dy[q * P + p], best = 0, cnt = 1;
            int64_t arg = -1;
            if (!is_max)
                for (int i = 0; i < w.sr; i++) {
                    int64_t s = o[i] * w.s[i] - w.pb[i], e = s + w.k[i];
                    int64_t lim = cip ? w.in[i] + w.pe[i] : w.in[i];
                    int64_t lo = cip ? s : (s < 0 ? 0 : s);
                    cnt *= (double)((e < lim ? e : lim) - lo);
                }
            int64_t t[IR_MAX_RANK] = {0};
            for (int64_t kp = 0; kp < KP; kp++, nn_next_index(t, w.k, w.sr)) {
                int64_t off = 0, ok = 1;
                for (int i = 0; i < w.sr && ok; i++) {
                    int64_t pos = o[i] * w.s[i] - w.pb[i] + t[i] * w.dl[i];
                    ok = pos >= 0 && pos < w.in[i];
                    off = off * w.in[i] + pos;
                }
                if (!ok) continue;
                if (!is_max) dx[off] += g / cnt;
                else if (arg < 0 || x[off] > best || (best != best && x[off] == x[off])) {
                    best = x[off];
                    arg = off;
                }
            }
            if (arg >= 0) dx[arg] += g;
        }
    }
    return 0;
}

const OpDesc op_MaxPoolGrad = {
    .name = "MaxPoolGrad",
    .min_in = 2, .max_in = 2, .in_names = maxpoolgrad_in,
    .min_out = 1, .max_out = 1, .out_names = dx_out,
    OP_ATTRS(maxpoolgrad_attrs),
    .infer = poolgrad_infer,
    .eval = poolgrad_eval,
};

const OpDesc op_AveragePoolGrad = {
    .name = "AveragePoolGrad",
    .min_in = 1, .max_in = 1, .in_names = avgpoolgrad_in,
    .min_out = 1, .max_out = 1, .out_names = dx_out,
    OP_ATTRS(avgpoolgrad_attrs),
    .infer = poolgrad_infer,
    .eval = poolgrad_eval,
};

/* See geometry.h. */
int ir_grad_window_geometry(const Node *n, int64_t *in, int64_t *out, int64_t *kernel, int64_t *strides,
                            int64_t *dilations, int64_t *pad_begin, int64_t *pad_end)
{
    NnWindow w;
    Shape xs = {0};
    if (n->op == OP_ConvGradData || n->op == OP_ConvGradFilter) {
        ConvGradGeo g;
        if (convgrad_geo(n, &g, NULL)) return -1;
        w = g.w;
    } else if (n->op == OP_MaxPoolGrad || n->op == OP_AveragePoolGrad) {
        if (poolgrad_geo(n, &w, &xs, NULL)) return -1;
    } else {
        return -1;
    }
    size_t sz = sizeof(int64_t) * (size_t)w.sr;
    memcpy(in, w.in, sz);
    memcpy(out, w.out, sz);
    memcpy(kernel, w.k, sz);
    memcpy(strides, w.s, sz);
    memcpy(dilations, w.dl, sz);
    memcpy(pad_begin, w.pb, sz);
    memcpy(pad_end, w.pe, sz);
    return w.sr;
}

/* ---- SoftmaxGrad / LogSoftmaxGrad ---------------------------------------- */

static const char *const smgrad_in[] = {"dY", "Y"};
static const AttrSpec smgrad_attrs[] = {[SOFTMAXGRAD_AXIS] = {"axis", ATTR_INT, "-1", 0}};
OP_ATTRS_CHECK(smgrad_attrs, SOFTMAXGRAD_COUNT);

/* See geometry.h. */
int ir_softmax_grad_split(const Node *n, int64_t *outer, int64_t *len, int64_t *inner, Diag *d)
{
    const Shape *s = &n->in[0]->shape;
    int64_t ax = n->attrs[SOFTMAXGRAD_AXIS].i;
    int a = ir_norm_axis(ax, s->rank);
    char b1[160];
    if (a < 0)
        return diag_node_error(d, n, "attribute 'axis' = %lld is out of range for input 'dY' of shape %s",
                               (long long)ax, ir_shape_str(s, b1, sizeof b1));
    *outer = nn_prod(s->dims, 0, a);
    *len = s->dims[a];
    *inner = nn_prod(s->dims, a + 1, s->rank);
    return 0;
}

static int smgrad_infer(Node *n, Diag *d)
{
    int64_t o, l, i;
    char b1[160], b2[160];
    if (nn_check_float(n, 0, d) || nn_check_same_dtype(n, 1, d)) return -1;
    if (!ir_shape_eq(&n->in[1]->shape, &n->in[0]->shape))
        return diag_node_error(d, n, "input 'Y' shape %s differs from input 'dY' shape %s",
                               ir_shape_str(&n->in[1]->shape, b1, sizeof b1),
                               ir_shape_str(&n->in[0]->shape, b2, sizeof b2));
    if (ir_softmax_grad_split(n, &o, &l, &i, d)) return -1;
    ir_set_out(n, 0, n->in[0]->dtype, &n->in[0]->shape);
    return 0;
}

static int smgrad_eval(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    int64_t outer, len, inner;
    if (ir_softmax_grad_split(n, &outer, &len, &inner, d)) return -1;
    int log_sm = n->op == OP_LogSoftmaxGrad;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            const double *dy = in[0] + o * len * inner + i, *y = in[1] + o * len * inner + i;
            double *dx = out[0] + o * len * inner + i, s = 0;
            for (int64_t j = 0; j < len; j++) s += log_sm ? dy[j * inner] : dy[j * inner] * y[j * inner];
            for (int64_t j = 0; j < len; j++)
                dx[j * inner] = log_sm ? dy[j * inner] - exp(y[j * inner]) * s : y[j * inner] * (dy[j * inner] - s);
        }
    return 0;
}

/* In place (ir_inplace_00): a row's sum is complete before its first dX is
 * written, and each dX element is written right after its dY is read. */
const OpDesc op_SoftmaxGrad = {
    .name = "SoftmaxGrad",
    .min_in = 2, .max_in = 2, .in_names = smgrad_in,
    .min_out = 1, .max_out = 1, .out_names = dx_out,
    OP_ATTRS(smgrad_attrs),
    .infer = smgrad_infer,
    .inplace = ir_inplace_00, .n_inplace = 1,
    .eval = smgrad_eval,
};

const OpDesc op_LogSoftmaxGrad = {
    .name = "LogSoftmaxGrad",
    .min_in = 2, .max_in = 2, .in_names = smgrad_in,
    .min_out = 1, .max_out = 1, .out_names = dx_out,
    OP_ATTRS(smgrad_attrs),
    .infer = smgrad_infer,
    .inplace = ir_inplace_00, .n_inplace = 1,
    .eval = smgrad_eval,
};

/* ---- LayerNormalizationGrad ---------------------------------------------- */

static const char *const lngrad_in[] = {"dY", "X", "Scale"};
static const char *const normgrad_out[] = {"dX", "dScale", "dBias"};
static const AttrSpec lngrad_attrs[] = {
    [LNGRAD_AXIS] = {"axis", ATTR_INT, "-1", 0},
    [LNGRAD_EPSILON] = {"epsilon", ATTR_FLOAT, "1e-5", 0},
    [LNGRAD_STASH_TYPE] = {"stash_type", ATTR_INT, "1", 0},
};
OP_ATTRS_CHECK(lngrad_attrs, LNGRAD_COUNT);

/* Input i of n has the shape of input 0 (dY). */
static int grad_check_like_dy(const Node *n, int i, Diag *d)
{
    char b1[160], b2[160];
    const char *const *names = ir_op(n->op)->in_names;
    if (!ir_shape_eq(&n->in[i]->shape, &n->in[0]->shape))
        return diag_node_error(d, n, "input '%s' shape %s differs from input '%s' shape %s", names[0],
                               ir_shape_str(&n->in[0]->shape, b1, sizeof b1), names[i],
                               ir_shape_str(&n->in[i]->shape, b2, sizeof b2));
    return 0;
}

/* See geometry.h. */
int ir_layernorm_grad_split(const Node *n, int64_t *outer, int64_t *inner, Diag *d)
{
    const Shape *xs = &n->in[1]->shape;
    char b1[160];
    int a = ir_norm_axis(n->attrs[LNGRAD_AXIS].i, xs->rank);
    if (a < 0)
        return diag_node_error(d, n, "attribute 'axis' = %lld is out of range for input 'X' of shape %s",
                               (long long)n->attrs[LNGRAD_AXIS].i, ir_shape_str(xs, b1, sizeof b1));
    *outer = nn_prod(xs->dims, 0, a);
    *inner = nn_prod(xs->dims, a, xs->rank);
    return a;
}

static int lngrad_infer(Node *n, Diag *d)
{
    int64_t outer, inner;
    char b1[160], b2[160];
    if (nn_check_float(n, 0, d) || nn_check_same_dtype(n, 1, d) || nn_check_same_dtype(n, 2, d) ||
        grad_check_like_dy(n, 1, d))
        return -1;
    int a = ir_layernorm_grad_split(n, &outer, &inner, d);
    if (a < 0) return -1;
    if (n->attrs[LNGRAD_STASH_TYPE].i != 1)
        return diag_node_error(d, n, "attribute 'stash_type' = %lld is not supported (only 1, float32)",
                               (long long)n->attrs[LNGRAD_STASH_TYPE].i);
    const Shape *xs = &n->in[1]->shape, *ss = &n->in[2]->shape;
    Shape norm = ir_shape(xs->rank - a, xs->dims + a);
    if (!ir_shape_eq(ss, &norm))
        return diag_node_error(d, n, "input 'Scale' shape %s must equal the normalized shape %s (X.shape[%d:])",
                               ir_shape_str(ss, b1, sizeof b1), ir_shape_str(&norm, b2, sizeof b2), a);
    ir_set_out(n, 0, n->in[0]->dtype, xs);
    for (int j = 1; j < n->n_out; j++)
        if (n->out[j]) ir_set_out(n, j, n->in[0]->dtype, ss);
    return 0;
}

static int lngrad_eval(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    int64_t outer, inner;
    if (ir_layernorm_grad_split(n, &outer, &inner, d) < 0) return -1;
    double eps = n->attrs[LNGRAD_EPSILON].f;
    double *ds = n->n_out > 1 ? out[1] : NULL, *db = n->n_out > 2 ? out[2] : NULL;
    const double *sc = in[2];
    for (int64_t j = 0; j < inner; j++) {
        if (ds) ds[j] = 0.0;
        if (db) db[j] = 0.0;
    }
    for (int64_t o = 0; o < outer; o++) {
        const double *dy = in[0] + o * inner, *x = in[1] + o * inner;
        double *dx = out[0] + o * inner, mu = 0, var = 0, sg = 0, sgx = 0;
        for (int64_t j = 0; j < inner; j++) mu += x[j];
        mu /= (double)inner;
        for (int64_t j = 0; j < inner; j++) var += (x[j] - mu) * (x[j] - mu);
        var /= (double)inner;
        double rs = 1.0 / sqrt(var + eps);
        for (int64_t j = 0; j < inner; j++) {
            double xh = (x[j] - mu) * rs;
            sg += dy[j] * sc[j];
            sgx += dy[j] * sc[j] * xh;
            if (ds) ds[j] += dy[j] * xh;
            if (db) db[j] += dy[j];
        }
        sg /= (double)inner;
        sgx /= (double)inner;
        for (int64_t j = 0; j < inner; j++) dx[j] = rs * (dy[j] * sc[j] - sg - (x[j] - mu) * rs * sgx);
    }
    return 0;
}

const OpDesc op_LayerNormalizationGrad = {
    .name = "LayerNormalizationGrad",
    .min_in = 3, .max_in = 3, .in_names = lngrad_in,
    .min_out = 1, .max_out = 3, .out_names = normgrad_out,
    OP_ATTRS(lngrad_attrs),
    .infer = lngrad_infer,
    .eval = lngrad_eval,
};

/* ---- BatchNormalizationGrad ---------------------------------------------- */

static const char *const bngrad_in[] = {"dY", "X", "scale"};
static const AttrSpec bngrad_attrs[] = {
    [BNGRAD_EPSILON] = {"epsilon", ATTR_FLOAT, "1e-5", 0},
    [BNGRAD_MOMENTUM] = {"momentum", ATTR_FLOAT, "0.9", 0},
    [BNGRAD_TRAINING_MODE] = {"training_mode", ATTR_INT, "0", 0},
};
OP_ATTRS_CHECK(bngrad_attrs, BNGRAD_COUNT);

/* momentum is accepted and unused (the running statistics have no
 * gradient). training_mode keeps the forward default, 0, and must be 1:
 * this is the gradient through the batch statistics, and a forward node in
 * inference mode (copied verbatim) must not get it silently. */
static int bngrad_infer(Node *n, Diag *d)
{
    int64_t tm = n->attrs[BNGRAD_TRAINING_MODE].i;
    if (tm != 1)
        return diag_node_error(d, n, "attribute 'training_mode' must be 1 (the gradient of training-mode BatchNormalization), got %lld",
                               (long long)tm);
    if (nn_check_float(n, 0, d) || nn_check_same_dtype(n, 1, d) || nn_check_same_dtype(n, 2, d) ||
        grad_check_like_dy(n, 1, d))
        return -1;
    const Shape *xs = &n->in[1]->shape;
    char b1[160];
    if (xs->rank < 2)
        return diag_node_error(d, n, "input 'X' must have rank >= 2 (N, C, ...), got shape %s",
                               ir_shape_str(xs, b1, sizeof b1));
    if (nn_check_vec(n, 2, xs->dims[1], "channels of X", d)) return -1;
    ir_set_out(n, 0, n->in[0]->dtype, xs);
    for (int j = 1; j < n->n_out; j++)
        if (n->out[j]) ir_set_out(n, j, n->in[0]->dtype, &n->in[2]->shape);
    return 0;
}

static int bngrad_eval(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    (void)d;
    const Shape *xs = &n->in[1]->shape;
    int64_t N = xs->dims[0], C = xs->dims[1], S = nn_prod(xs->dims, 2, xs->rank);
    double eps = n->attrs[BNGRAD_EPSILON].f, cnt = (double)(N * S);
    const double *dy = in[0], *x = in[1];
    for (int64_t c = 0; c < C; c++) {
        double mu = 0, var = 0, sdy = 0, sdyx = 0;
        for (int64_t b = 0; b < N; b++)
            for (int64_t i = 0; i < S; i++) mu += x[(b * C + c) * S + i];
        mu /= cnt;
        for (int64_t b = 0; b < N; b++)
            for (int64_t i = 0; i < S; i++) {
                double e = x[(b * C + c) * S + i] - mu;
                var += e * e;
            }
        var /= cnt;
        double rs = 1.0 / sqrt(var + eps);
        for (int64_t b = 0; b < N; b++)
            for (int64_t i = 0; i < S; i++) {
                int64_t e = (b * C + c) * S + i;
                sdy += dy[e];
                sdyx += dy[e] * (x[e] - mu) * rs;
            }
        if (n->n_out > 1 && out[1]) out[1][c] = sdyx;
        if (n->n_out > 2 && out[2]) out[2][c] = sdy;
        for (int64_t b = 0; b < N; b++)
            for (int64_t i = 0; i < S; i++) {
                int64_t e = (b * C + c) * S + i;
                out[0][e] = in[2][c] * rs * (dy[e] - sdy / cnt - (x[e] - mu) * rs * sdyx / cnt);
            }
    }
    return 0;
}

const OpDesc op_BatchNormalizationGrad = {
    .name = "BatchNormalizationGrad",
    .min_in = 3, .max_in = 3, .in_names = bngrad_in,
    .min_out = 1, .max_out = 3, .out_names = normgrad_out,
    OP_ATTRS(bngrad_attrs),
    .infer = bngrad_infer,
    .eval = bngrad_eval,
};
