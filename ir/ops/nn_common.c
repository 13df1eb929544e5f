/* nn_common.c — shared checks and helpers of the neural-network-style op
 * families (see nn_common.h). Conv/MaxPool/AveragePool (nn.c) and
 * ConvTranspose (vision.c) read their window attributes and auto_pad through
 * the same code, so both report a broken rule with the same words.
 */
#include "nn_common.h"

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

int nn_check_weight_rank(const Node *n, Diag *d)
{
    const Shape *xs = &n->in[0]->shape, *ws = &n->in[1]->shape;
    char b1[160];
    if (ws->rank != xs->rank)
        return diag_node_error(d, n, "input 'W' must have rank %d (same as X), got shape %s", xs->rank,
                               ir_shape_str(ws, b1, sizeof b1));
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

int nn_axis_split(const Node *n, int ai, int64_t *outer, int64_t *len, int64_t *inner, Diag *d)
{
    const Shape *xs = &n->in[0]->shape;
    int64_t ax = n->attrs[ai].i;
    int a = ir_norm_axis(ax, xs->rank);
    char b1[160];
    if (a < 0)
        return diag_node_error(d, n, "attribute 'axis' = %lld is out of range for input 'input' of shape %s",
                               (long long)ax, ir_shape_str(xs, b1, sizeof b1));
    *outer = nn_prod(xs->dims, 0, a);
    *len = xs->dims[a];
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
