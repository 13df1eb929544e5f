/* reduce.c — operator descriptions of the reduce family: ReduceMean,
 * ReduceMax, ReduceMin (opset-17 form: `axes` is an ints attribute) and
 * ReduceSum (opset-13 form: `axes` is an optional constant i64 input, with
 * `noop_with_empty_axes`).
 *
 * Every reduction is described by a boolean mask over the input's axes
 * (reduce_mask). An empty axes list reduces every axis, except for
 * ReduceSum with noop_with_empty_axes=1, which is then the identity.
 * keepdims=1 keeps reduced axes as size 1, keepdims=0 drops them.
 *
 * Empty reductions follow numpy: a sum over nothing is 0, a mean is NaN,
 * and max/min over nothing has no identity, so it is rejected at shape
 * inference (unless the output is itself empty).
 *
 * Reference evaluation walks the input once in row-major order and folds
 * each element into the output element it maps to (reduced axes have
 * output stride 0).
 */
#include "../op.h"

#include <math.h>
#include <string.h>

enum { RED_AXES, RED_KEEPDIMS };           /* ReduceMean / ReduceMax / ReduceMin */
enum { RSUM_KEEPDIMS, RSUM_NOOP_EMPTY };   /* ReduceSum */

typedef enum RedKind { RK_SUM, RK_MEAN, RK_MAX, RK_MIN } RedKind;

static const char *const red_in[] = {"data"};
static const char *const rsum_in[] = {"data", "axes"};
static const char *const red_out[] = {"reduced"};

static const AttrSpec red_attrs[] = {
    {"axes", ATTR_INTS, NULL, 0},
    {"keepdims", ATTR_INT, "1", 0},
};
static const AttrSpec rsum_attrs[] = {
    {"keepdims", ATTR_INT, "1", 0},
    {"noop_with_empty_axes", ATTR_INT, "0", 0},
};

static RedKind red_kind(const Node *n)
{
    if (n->op == OP_ReduceSum) return RK_SUM;
    if (n->op == OP_ReduceMean) return RK_MEAN;
    if (n->op == OP_ReduceMax) return RK_MAX;
    return RK_MIN;
}

/* Fills mask[rank] (1 = reduced) from the node's axes; returns 0, 1 when the
 * node is a no-op (ReduceSum, empty axes, noop_with_empty_axes=1), or -1
 * with a diagnostic. */
static int reduce_mask(const Node *n, int *mask, Diag *d)
{
    int rank = n->in[0]->shape.rank;
    int64_t axes[IR_MAX_RANK + 1];
    int na = 0;
    const char *what;
    if (n->op == OP_ReduceSum) {
        what = "input 'axes'";
        if (n->n_in > 1 && n->in[1]) {
            const Value *a = n->in[1];
            if (a->kind != VK_CONST) return diag_node_error(d, n, "input 'axes' must be a constant");
            if (a->shape.rank != 1) return diag_node_error(d, n, "input 'axes' must be 1-D");
            na = ir_const_ints(a, axes, IR_MAX_RANK + 1);
            if (na < 0)
                return diag_node_error(d, n, "input 'axes' must be an integer tensor of at most %d values", IR_MAX_RANK);
        }
        if (na == 0 && n->attrs[RSUM_NOOP_EMPTY].i) {
            for (int i = 0; i < rank; i++) mask[i] = 0;
            return 1;
        }
    } else {
        what = "attribute 'axes'";
        const AttrVal *a = &n->attrs[RED_AXES];
        if (a->set) {
            if (a->n > IR_MAX_RANK) return diag_node_error(d, n, "attribute 'axes' has more than %d values", IR_MAX_RANK);
            na = a->n;
            for (int i = 0; i < na; i++) axes[i] = a->ints[i];
        }
    }
    for (int i = 0; i < rank; i++) mask[i] = na == 0;
    for (int i = 0; i < na; i++) {
        int ax = ir_norm_axis(axes[i], rank);
        if (ax < 0)
            return diag_node_error(d, n, "%s value %lld is out of range for rank %d", what, (long long)axes[i], rank);
        if (mask[ax]) return diag_node_error(d, n, "%s lists axis %d twice", what, ax);
        mask[ax] = 1;
    }
    return 0;
}

static int reduce_keepdims(const Node *n)
{
    return (int)(n->op == OP_ReduceSum ? n->attrs[RSUM_KEEPDIMS].i : n->attrs[RED_KEEPDIMS].i);
}

static int reduce_infer(Node *n, Diag *d)
{
    const Value *x = n->in[0];
    if (!x) return diag_node_error(d, n, "input 'data' is required");
    if (x->dtype == DT_BOOL) return diag_node_error(d, n, "input 'data' has dtype bool; reductions need a numeric dtype");
    int mask[IR_MAX_RANK];
    int rc = reduce_mask(n, mask, d);
    if (rc < 0) return -1;
    if (rc == 1) {
        ir_set_out(n, 0, x->dtype, &x->shape);
        return 0;
    }
    int keep = reduce_keepdims(n);
    Shape s;
    memset(&s, 0, sizeof s);
    int64_t count = 1;
    for (int i = 0; i < x->shape.rank; i++) {
        if (mask[i]) {
            count *= x->shape.dims[i] ? 1 : 0;
            if (keep) s.dims[s.rank++] = 1;
        } else {
            s.dims[s.rank++] = x->shape.dims[i];
        }
    }
    RedKind k = red_kind(n);
    if (count == 0 && (k == RK_MAX || k == RK_MIN) && ir_numel(&s) > 0) {
        for (int i = 0; i < x->shape.rank; i++)
            if (mask[i] && x->shape.dims[i] == 0)
                return diag_node_error(d, n, "cannot reduce over zero-size axis %d: %s has no identity value", i,
                                       ir_op(n->op)->name);
    }
    ir_set_out(n, 0, x->dtype, &s);
    return 0;
}

static int reduce_eval(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    const Shape *xs = &n->in[0]->shape;
    int mask[IR_MAX_RANK];
    int rc = reduce_mask(n, mask, d);
    if (rc < 0) return -1;
    int64_t total = ir_numel(xs), on = ir_numel(&n->out[0]->shape);
    if (rc == 1) {
        memcpy(out[0], in[0], sizeof(double) * (size_t)total);
        return 0;
    }
    RedKind k = red_kind(n);
    double init = k == RK_MAX ? -INFINITY : k == RK_MIN ? INFINITY : 0.0;
    for (int64_t i = 0; i < on; i++) out[0][i] = init;
    /* output strides over the input's axes (0 on reduced axes) */
    int64_t ost[IR_MAX_RANK], st = 1, count = 1;
    for (int i = xs->rank - 1; i >= 0; i--) {
        if (mask[i]) {
            ost[i] = 0;
            count *= xs->dims[i];
        } else {
            ost[i] = st;
            st *= xs->dims[i];
        }
    }
    int64_t idx[IR_MAX_RANK] = {0}, o = 0;
    for (int64_t e = 0; e < total; e++) {
        double v = in[0][e], *acc = &out[0][o];
        if (k == RK_SUM || k == RK_MEAN) *acc += v;
        else if (k == RK_MAX) { if (v != v || v > *acc) *acc = v; }
        else if (v != v || v < *acc) *acc = v;
        for (int j = xs->rank - 1; j >= 0; j--) {
            o += ost[j];
            if (++idx[j] < xs->dims[j]) break;
            o -= ost[j] * idx[j];
            idx[j] = 0;
        }
    }
    if (k == RK_MEAN)
        for (int64_t i = 0; i < on; i++) out[0][i] = count ? out[0][i] / (double)count : NAN;
    return 0;
}

const OpDesc op_ReduceMean = {
    .name = "ReduceMean", .min_in = 1, .max_in = 1, .in_names = red_in,
    .min_out = 1, .max_out = 1, .out_names = red_out,
    .attrs = red_attrs, .n_attrs = 2, .infer = reduce_infer, .eval = reduce_eval,
};
const OpDesc op_ReduceSum = {
    .name = "ReduceSum", .min_in = 1, .max_in = 2, .in_names = rsum_in,
    .min_out = 1, .max_out = 1, .out_names = red_out,
    .attrs = rsum_attrs, .n_attrs = 2, .infer = reduce_infer, .eval = reduce_eval,
};
const OpDesc op_ReduceMax = {
    .name = "ReduceMax", .min_in = 1, .max_in = 1, .in_names = red_in,
    .min_out = 1, .max_out = 1, .out_names = red_out,
    .attrs = red_attrs, .n_attrs = 2, .infer = reduce_infer, .eval = reduce_eval,
};
const OpDesc op_ReduceMin = {
    .name = "ReduceMin", .min_in = 1, .max_in = 1, .in_names = red_in,
    .min_out = 1, .max_out = 1, .out_names = red_out,
    .attrs = red_attrs, .n_attrs = 2, .infer = reduce_infer, .eval = reduce_eval,
};

/* Placeholders (names only) until these reductions are described. */
const OpDesc op_ReduceL1 = {.name = "ReduceL1", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_ReduceL2 = {.name = "ReduceL2", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_ReduceLogSum = {.name = "ReduceLogSum", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_ReduceLogSumExp = {.name = "ReduceLogSumExp", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_ReduceProd = {.name = "ReduceProd", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_ReduceSumSquare = {.name = "ReduceSumSquare", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
