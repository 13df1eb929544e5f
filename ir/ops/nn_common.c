/* nn_common.c — shared checks and helpers of the neural-network-style op
 * families (see nn_common.h). Conv/MaxPool/AveragePool (nn.c), the quantized
 * convolutions (quant.c) and ConvTranspose (vision.c) read their window
 * attributes and auto_pad through the same code, so all report a broken
 * rule with the same words; the first four also share one geometry
 * (nn_window_geo) and the convolutions one reference loop (nn_conv_ref).
 */
#include "nn_common.h"
#include "../grad.h"

#include <stdio.h>
#include <string.h>

int nn_check_float(const Node *n, int i, Diag *d)
{
    const Value *v = n->in[i];
    if (!ir_dtype_is_float(v->dtype))
        return diag_node_error(d, n, "input '%s' has dtype %s; expected a floating-point type",
                               ir_op(n->op)->in_names[i], ir_dtype_name(v->dtype));
    return 0;
}

int nn_check_same_dtype(const Node *n, int i, Diag *d)
{
    const OpDesc *od = ir_op(n->op);
    if (n->in[i]->dtype != n->in[0]->dtype)
        return diag_node_error(d, n, "input '%s' has dtype %s but input '%s' has %s", od->in_names[i],
                               ir_dtype_name(n->in[i]->dtype), od->in_names[0], ir_dtype_name(n->in[0]->dtype));
    return 0;
}

int nn_check_vec(const Node *n, int i, int64_t c, const char *what, Diag *d)
{
    const Shape *s = &n->in[i]->shape;
    char b1[160];
    if (s->rank != 1 || s->dims[0] != c)
        return diag_node_error(d, n, "input '%s' shape %s does not match the %lld %s (expected [%lld])",
                               ir_op(n->op)->in_names[i], ir_shape_str(s, b1, sizeof b1), (long long)c, what,
                               (long long)c);
    return 0;
}

int nn_check_min_rank(const Node *n, int rank, const char *what, Diag *d)
{
    const Shape *xs = &n->in[0]->shape;
    char b1[160];
    if (xs->rank < rank)
        return diag_node_error(d, n, "input '%s' must have rank >= %d (%s), got shape %s",
                               ir_op(n->op)->in_names[0], rank, what, ir_shape_str(xs, b1, sizeof b1));
    return 0;
}

int nn_check_group(const Node *n, int64_t group, int64_t C, Diag *d)
{
    if (group <= 0) return diag_node_error(d, n, "attribute 'group' must be positive, got %lld", (long long)group);
    if (C % group != 0)
        return diag_node_error(d, n, "input 'X' has %lld channels, which group=%lld does not divide", (long long)C,
                               (long long)group);
    return 0;
}

int nn_check_weight_rank(const Node *n, int wi, Diag *d)
{
    const Shape *xs = &n->in[0]->shape, *ws = &n->in[wi]->shape;
    const char *const *names = ir_op(n->op)->in_names;
    char b1[160];
    if (ws->rank != xs->rank)
        return diag_node_error(d, n, "input '%s' must have rank %d (same as %s), got shape %s", names[wi], xs->rank,
                               names[0], ir_shape_str(ws, b1, sizeof b1));
    return 0;
}

int nn_check_kernel_positive(const Node *n, const int64_t *k, int sr, Diag *d)
{
    char b1[160];
    for (int i = 0; i < sr; i++)
        if (k[i] <= 0)
            return diag_node_error(d, n, "kernel dims must be positive, got %s", nn_ints_str(k, sr, b1, sizeof b1));
    return 0;
}

int nn_window_ints(const Node *n, const char *key, int sr, int len, int64_t dflt, int64_t minv, int64_t *v,
                   Diag *d)
{
    int ai = ir_attr_index(n, key);
    for (int i = 0; i < len; i++) v[i] = dflt;
    if (ai < 0 || !n->attrs[ai].set) return 0;
    const AttrVal *a = &n->attrs[ai];
    char b1[160];
    if (a->n != len)
        return diag_node_error(d, n, "attribute '%s' has %d values; expected %d (%s%d spatial dims of X)", key,
                               a->n, len, len == 2 * sr ? "begin and end for each of " : "one for each of ",
                               sr);
    for (int i = 0; i < len; i++)
        if (a->ints[i] < minv)
            return diag_node_error(d, n, "attribute '%s' must be %s, got %s", key,
                                   minv > 0 ? "positive" : "non-negative", nn_ints_str(a->ints, a->n, b1, sizeof b1));
    memcpy(v, a->ints, sizeof(int64_t) * (size_t)len);
    return 0;
}

int nn_auto_pad(const Node *n, const char *ap, const int64_t *pads, int sr, NnAutoPad *mode, Diag *d)
{
    if (strcmp(ap, "SAME_UPPER") == 0) *mode = NN_PAD_SAME_UPPER;
    else if (strcmp(ap, "SAME_LOWER") == 0) *mode = NN_PAD_SAME_LOWER;
    else if (strcmp(ap, "VALID") == 0) *mode = NN_PAD_VALID;
    else if (strcmp(ap, "NOTSET") == 0) *mode = NN_PAD_NOTSET;
    else
        return diag_node_error(d, n, "attribute 'auto_pad' must be NOTSET, SAME_UPPER, SAME_LOWER or VALID, got '%s'", ap);
    int pads_nonzero = 0;
    for (int i = 0; i < 2 * sr; i++) pads_nonzero |= pads[i] != 0;
    if (*mode != NN_PAD_NOTSET && pads_nonzero)
        return diag_node_error(d, n, "attribute 'pads' cannot be used together with auto_pad=%s", ap);
    return 0;
}

/* ---- window geometry (Conv, ConvInteger, QLinearConv, MaxPool, AveragePool) ---- */

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

int ir_conv_weight_input(const Node *n)
{
    if (n->op == OP_Conv || n->op == OP_ConvInteger) return 1;
    return n->op == OP_QLinearConv ? 3 : -1;
}

int nn_window_geo(const Node *n, NnWindow *w, Diag *d)
{
    const char *const *names = ir_op(n->op)->in_names;
    int wi = ir_conv_weight_input(n);
    char xn[64], wn[64];
    snprintf(xn, sizeof xn, "input '%s'", names[0]);
    if (wi >= 0) snprintf(wn, sizeof wn, "input '%s'", names[wi]);
    NnWindowSrc src = {&n->in[0]->shape, xn, wi >= 0 ? &n->in[wi]->shape : NULL, wi >= 0 ? wn : NULL};
    return nn_window_geo_of(n, &src, w, d);
}

int nn_window_geo_of(const Node *n, const NnWindowSrc *src, NnWindow *w, Diag *d)
{
    const Shape *xs = src->x;
    char b1[160], b2[160];
    int is_conv = src->w != NULL;
    if (xs->rank < 3)
        return diag_node_error(d, n, "%s must have rank >= 3 (N, C and at least one spatial dim), got shape %s",
                               src->x_name, ir_shape_str(xs, b1, sizeof b1));
    int sr = w->sr = xs->rank - 2;
    for (int i = 0; i < sr; i++) w->in[i] = xs->dims[2 + i];
    int ki = ir_attr_index(n, "kernel_shape");
    const AttrVal *ka = &n->attrs[ki];
    if (ka->set && ka->n != sr)
        return diag_node_error(d, n, "attribute 'kernel_shape' has %d values but X has %d spatial dims", ka->n, sr);
    if (is_conv) {
        const Shape *ws = src->w;
        if (ws->rank != xs->rank)
            return diag_node_error(d, n, "%s must have rank %d (same as X), got shape %s", src->w_name, xs->rank,
                                   ir_shape_str(ws, b1, sizeof b1));
        for (int i = 0; i < sr; i++) w->k[i] = ws->dims[2 + i];
        if (ka->set && memcmp(ka->ints, w->k, sizeof(int64_t) * (size_t)sr) != 0)
            return diag_node_error(d, n, "attribute 'kernel_shape' %s does not match the kernel dims %s of %s",
                                   nn_ints_str(ka->ints, ka->n, b1, sizeof b1), nn_ints_str(w->k, sr, b2, sizeof b2),
                                   src->w_name);
    } else {
        if (!ka->set) return diag_node_error(d, n, "required attribute 'kernel_shape' is missing");
        memcpy(w->k, ka->ints, sizeof(int64_t) * (size_t)sr);
    }
    if (nn_check_kernel_positive(n, w->k, sr, d)) return -1;
    int64_t pads[2 * IR_MAX_RANK];
    if (nn_window_ints(n, "strides", sr, sr, 1, 1, w->s, d) ||
        nn_window_ints(n, "dilations", sr, sr, 1, 1, w->dl, d) ||
        nn_window_ints(n, "pads", sr, 2 * sr, 0, 0, pads, d))
        return -1;
    int ci = ir_attr_index(n, "ceil_mode");
    int ceil_mode = ci >= 0 && n->attrs[ci].i != 0;
    if (ci >= 0 && n->attrs[ci].i != 0 && n->attrs[ci].i != 1)
        return diag_node_error(d, n, "attribute 'ceil_mode' must be 0 or 1, got %lld", (long long)n->attrs[ci].i);
    NnAutoPad mode;
    if (nn_auto_pad(n, n->attrs[ir_attr_index(n, "auto_pad")].s, pads, sr, &mode, d)) return -1;
    int same = mode == NN_PAD_SAME_UPPER || mode == NN_PAD_SAME_LOWER, upper = mode == NN_PAD_SAME_UPPER;
    for (int i = 0; i < sr; i++) {
        int64_t ek = (w->k[i] - 1) * w->dl[i] + 1;
        if (same) {
            w->out[i] = ceil_div(w->in[i], w->s[i]);
            int64_t total = (w->out[i] - 1) * w->s[i] + ek - w->in[i];
            if (total < 0) total = 0;
            w->pb[i] = upper ? total / 2 : total - total / 2;
            w->pe[i] = total - w->pb[i];
        } else {
            w->pb[i] = pads[i];
            w->pe[i] = pads[sr + i];
            int64_t span = w->in[i] + w->pb[i] + w->pe[i] - ek;
            /* With ceil_mode a kernel longer than the padded input still gives one window
             * when ceil(span / stride) + 1 >= 1 (as in ONNX Runtime and PyTorch). */
            if (span < 0 && (!ceil_mode || -span >= w->s[i]))
                return diag_node_error(d, n,
                                       "output spatial dim %d would be empty: input %lld + pads %lld+%lld is smaller than the kernel extent %lld",
                                       i, (long long)w->in[i], (long long)w->pb[i], (long long)w->pe[i], (long long)ek);
            if (span < 0) w->out[i] = 1; /* ceil_mode, -stride < span < 0 */
            else w->out[i] = (ceil_mode ? ceil_div(span, w->s[i]) : span / w->s[i]) + 1;
            if (ceil_mode && (w->out[i] - 1) * w->s[i] >= w->in[i] + w->pb[i]) w->out[i]--;
        }
        if (w->out[i] <= 0)
            return diag_node_error(d, n, "output spatial dim %d would be %lld (input %lld, kernel extent %lld, stride %lld)",
                                   i, (long long)w->out[i], (long long)w->in[i], (long long)ek, (long long)w->s[i]);
        if (!is_conv && (w->pb[i] >= ek || w->pe[i] >= ek))
            return diag_node_error(d, n, "pads %lld+%lld along spatial dim %d must be smaller than the kernel extent %lld",
                                   (long long)w->pb[i], (long long)w->pe[i], i, (long long)ek);
    }
    return 0;
}

void nn_window_out_shape(const Node *n, const NnWindow *w, int64_t channels, Shape *os)
{
    os->rank = w->sr + 2;
    os->dims[0] = n->in[0]->shape.dims[0];
    os->dims[1] = channels;
    for (int i = 0; i < w->sr; i++) os->dims[2 + i] = w->out[i];
}

void nn_conv_ref(const NnWindow *w, int64_t N, int64_t C, int64_t M, int64_t group, const double *x,
                 const double *wt, const double *bias, double *y)
{
    int64_t Cg = C / group, Mg = M / group;
    int64_t plane = 1, P = 1, KP = 1;
    for (int i = 0; i < w->sr; i++) { plane *= w->in[i]; P *= w->out[i]; KP *= w->k[i]; }
    for (int64_t b = 0; b < N; b++)
        for (int64_t m = 0; m < M; m++) {
            int64_t c0 = (m / (Mg ? Mg : 1)) * Cg;
            int64_t o[IR_MAX_RANK] = {0};
            for (int64_t p = 0; p < P; p++, nn_next_index(o, w->out, w->sr)) {
                double acc = bias ? bias[m] : 0;
                for (int64_t c = 0; c < Cg; c++) {
                    const double *xc = x + (b * C + c0 + c) * plane;
                    const double *wc = wt + (m * Cg + c) * KP;
                    int64_t t[IR_MAX_RANK] = {0};
                    for (int64_t kp = 0; kp < KP; kp++, nn_next_index(t, w->k, w->sr)) {
                        int64_t off = 0, ok = 1;
                        for (int i = 0; i < w->sr && ok; i++) {
                            int64_t pos = o[i] * w->s[i] - w->pb[i] + t[i] * w->dl[i];
                            ok = pos >= 0 && pos < w->in[i];
                            off = off * w->in[i] + pos;
                        }
                        if (ok) acc += xc[off] * wc[kp];
                    }
                }
                y[(b * M + m) * P + p] = acc;
            }
        }
}

int nn_axis_split(const Node *n, int ai, int64_t *outer, int64_t *len, int64_t *inner, Diag *d)
{
    const Shape *xs = &n->in[0]->shape;
    int64_t ax = n->attrs[ai].i;
    int a = ir_norm_axis(ax, xs->rank);
    char b1[160];
    if (a < 0)
        return diag_node_error(d, n, "attribute 'axis' = %lld is out of range for input 'input' of shape %s",
                               (long long)ax, ir_shape_str(xs, b1, sizeof b1));
    *len = xs->dims[a];
    for (int i = 0; i < xs->rank; i++)
        if (xs->dims[i] == 0) { /* empty: the other dims' product may not fit in int64 (0 x 2^40 x 2^40) */
            *outer = *inner = 0;
            return 0;
        }
    *outer = nn_prod(xs->dims, 0, a); /* a non-empty input's element count fits (ir_check_tensor_size) */
    *inner = nn_prod(xs->dims, a + 1, xs->rank);
    return 0;
}

int nn_infer_global_pool(Node *n, Diag *d)
{
    if (nn_check_float(n, 0, d) || nn_check_min_rank(n, 3, "N, C and at least one spatial dim", d)) return -1;
    Shape os = n->in[0]->shape;
    for (int i = 2; i < os.rank; i++) os.dims[i] = 1;
    ir_set_out(n, 0, n->in[0]->dtype, &os);
    return 0;
}

int nn_next_index(int64_t *idx, const int64_t *dims, int r)
{
    for (int k = r - 1; k >= 0; k--) {
        if (++idx[k] < dims[k]) return 1;
        idx[k] = 0;
    }
    return 0;
}

const char *nn_ints_str(const int64_t *v, int n, char *buf, size_t cap)
{
    Shape s = ir_shape(n, v);
    return ir_shape_str(&s, buf, cap);
}

int64_t nn_prod(const int64_t *v, int from, int to)
{
    int64_t p = 1;
    for (int i = from; i < to; i++) p *= v[i];
    return p;
}

Value *nn_grad_sum_channels(GradCtx *gc, Value *g)
{
    if (!g) return NULL;
    int64_t axes[IR_MAX_RANK];
    int na = 0;
    for (int k = 0; k < g->shape.rank; k++)
        if (k != 1) axes[na++] = k;
    return gb_sum(gc, g, axes, na, 0);
}

Value *nn_grad_per_channel(GradCtx *gc, Value *v, int r)
{
    if (!v) return NULL;
    Shape s = ir_shape(0, NULL);
    s.rank = r;
    for (int k = 0; k < r; k++) s.dims[k] = k == 1 ? v->shape.dims[0] : 1;
    return gb_reshape(gc, v, &s);
}
