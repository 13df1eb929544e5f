/* reduce.c — operator descriptions of the reduce family: ReduceMean,
 * ReduceMax, ReduceMin, ReduceL1, ReduceL2, ReduceLogSum, ReduceLogSumExp,
 * ReduceProd, ReduceSumSquare (opset-17 form: `axes` is an ints attribute)
 * and ReduceSum (opset-13 form: `axes` is an optional i64 input, with
 * `noop_with_empty_axes`). ReduceSum's axes may be known only at run time
 * (shape_inputs): its output dims are then data-dependent (reduce_infer_dyn)
 * and the interpreter infers the node again with the values; an empty axes
 * tensor needs no values, so it is the static case.
 *
 * Every reduction is described by a boolean mask over the input's axes
 * (ir_reduce_mask). An empty axes list reduces every axis, except for
 * ReduceSum with noop_with_empty_axes=1, which is then the identity.
 * keepdims=1 keeps reduced axes as size 1, keepdims=0 drops them.
 *
 * Empty reductions follow numpy: a sum over nothing is 0 (so L1, L2 and
 * SumSquare give 0, LogSum and LogSumExp give -inf), a product is 1, a mean
 * is NaN, and max/min over nothing is -inf/+inf for the float types (ONNX's
 * rule from opset 18: a detector's If on "no boxes" computes the max of
 * zero boxes in the branch it does not take) and has no value for the
 * integers, which shape inference rejects (unless the output is itself
 * empty); over a runtime dim that turns out 0, at run time
 * (reduce_infer_sym).
 *
 * Reference evaluation walks the input in row-major order and folds each
 * element into the output element it maps to (reduced axes have output
 * stride 0). ReduceLogSumExp is computed stably as m + log(sum exp(x - m))
 * with m the maximum (one extra pass); an infinite or NaN m is the result.
 */
#include "../op.h"
#include "reduce_attrs.h"
#include "../grad.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef enum RedKind {
    RK_SUM, RK_MEAN, RK_MAX, RK_MIN, RK_L1, RK_L2, RK_LOGSUM, RK_LOGSUMEXP, RK_PROD, RK_SUMSQ
} RedKind;

static const char *const red_in[] = {"data"};
static const char *const rsum_in[] = {"data", "axes"};
static const char *const red_out[] = {"reduced"};

static const AttrSpec red_attrs[] = {
    [REDUCE_AXES] = {"axes", ATTR_INTS, NULL, 0},
    [REDUCE_KEEPDIMS] = {"keepdims", ATTR_INT, "1", 0},
};
OP_ATTRS_CHECK(red_attrs, REDUCE_COUNT);
static const AttrSpec rsum_attrs[] = {
    [REDUCE_SUM_KEEPDIMS] = {"keepdims", ATTR_INT, "1", 0},
    [REDUCE_SUM_NOOP_WITH_EMPTY_AXES] = {"noop_with_empty_axes", ATTR_INT, "0", 0},
};
OP_ATTRS_CHECK(rsum_attrs, REDUCE_SUM_COUNT);

static RedKind red_kind(const Node *n)
{
    if (n->op == OP_ReduceSum) return RK_SUM;
    if (n->op == OP_ReduceMean) return RK_MEAN;
    if (n->op == OP_ReduceMax) return RK_MAX;
    if (n->op == OP_ReduceMin) return RK_MIN;
    if (n->op == OP_ReduceL1) return RK_L1;
    if (n->op == OP_ReduceL2) return RK_L2;
    if (n->op == OP_ReduceLogSum) return RK_LOGSUM;
    if (n->op == OP_ReduceLogSumExp) return RK_LOGSUMEXP;
    if (n->op == OP_ReduceProd) return RK_PROD;
    return RK_SUMSQ;
}

/* See geometry.h. */
int ir_reduce_mask(const Node *n, int *mask, Diag *d)
{
    int rank = n->in[0]->shape.rank;
    int64_t axes[IR_MAX_RANK + 1];
    int na = 0;
    const char *what;
    if (n->op == OP_ReduceSum) {
        what = "input 'axes'";
        if (n->n_in > 1 && n->in[1]) {
            const Value *a = n->in[1];
            if (a->kind != VK_CONST && ir_numel(&a->shape) != 0) return diag_node_error(d, n, "input 'axes' must be a constant");
            if (a->shape.rank != 1) return diag_node_error(d, n, "input 'axes' must be 1-D");
            /* an empty runtime axes tensor has no values to wait for */
            na = a->kind == VK_CONST ? ir_const_ints(a, axes, IR_MAX_RANK + 1) : 0;
            if (na < 0)
                return diag_node_error(d, n, "input 'axes' must be an integer tensor of at most %d values", IR_MAX_RANK);
        }
        if (na == 0 && n->attrs[REDUCE_SUM_NOOP_WITH_EMPTY_AXES].i) {
            for (int i = 0; i < rank; i++) mask[i] = 0;
            return 1;
        }
    } else {
        what = "attribute 'axes'";
        const AttrVal *a = &n->attrs[REDUCE_AXES];
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
    return (int)(n->op == OP_ReduceSum ? n->attrs[REDUCE_SUM_KEEPDIMS].i : n->attrs[REDUCE_KEEPDIMS].i);
}

/* ReduceSum whose `axes` (not empty) are known only at run time. With
 * keepdims each output dim is 1 or the input's: data-dependent, bounded by
 * the input's (static where it is 1); without, the output has rank
 * rank - len(axes) and dim j is some input dim j..j+len(axes): bounded by
 * their maximum (static where they are all equal). The kernel checks the
 * axes at run time. */
static int reduce_infer_dyn(Node *n, Diag *d)
{
    const Value *x = n->in[0], *a = n->in[1];
    const Shape *xs = &x->shape;
    if (!ir_dtype_is_int(a->dtype))
        return diag_node_error(d, n, "input 'axes' must be an integer tensor, got %s", ir_dtype_name(a->dtype));
    if (a->shape.rank != 1) return diag_node_error(d, n, "input 'axes' must be 1-D");
    int64_t na = a->shape.dims[0];
    if (na > xs->rank)
        return diag_node_error(d, n, "input 'axes' has %lld values, but input 'data' has rank %d", (long long)na, xs->rank);
    Shape s = {0};
    memset(&s, 0, sizeof s);
    if (reduce_keepdims(n)) {
        s.rank = xs->rank;
        for (int i = 0; i < xs->rank; i++) {
            s.dims[i] = xs->dims[i] > 1 ? xs->dims[i] : 1;
            if (xs->dims[i] != 1) s.sym[i] = IR_SYM_NEW;
        }
    } else {
        s.rank = xs->rank - (int)na;
        for (int j = 0; j < s.rank; j++) {
            int64_t lo = xs->dims[j], hi = xs->dims[j];
            for (int i = j + 1; i <= j + na; i++) {
                if (xs->dims[i] < lo) lo = xs->dims[i];
                if (xs->dims[i] > hi) hi = xs->dims[i];
            }
            s.dims[j] = hi;
            if (lo != hi) s.sym[j] = IR_SYM_NEW;
        }
    }
    ir_set_out(n, 0, x->dtype, &s);
    return 0;
}

static int reduce_infer(Node *n, Diag *d)
{
    const Value *x = n->in[0];
    if (!x) return diag_node_error(d, n, "input 'data' is required");
    if (x->dtype == DT_BOOL) return diag_node_error(d, n, "input 'data' has dtype bool; reductions need a numeric dtype");
    if (n->op == OP_ReduceSum && n->n_in > 1 && n->in[1] && n->in[1]->kind != VK_CONST && ir_numel(&n->in[1]->shape) != 0)
        return reduce_infer_dyn(n, d);
    int mask[IR_MAX_RANK];
    int rc = ir_reduce_mask(n, mask, d);
    if (rc < 0) return -1;
    if (rc == 1) {
        ir_set_out(n, 0, x->dtype, &x->shape);
        return 0;
    }
    int keep = reduce_keepdims(n);
    Shape s = {0};
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
    if (count == 0 && (k == RK_MAX || k == RK_MIN) && ir_numel(&s) > 0 && !ir_dtype_is_float(x->dtype)) {
        for (int i = 0; i < x->shape.rank; i++)
            if (mask[i] && x->shape.dims[i] == 0)
                return diag_node_error(d, n, "cannot reduce over zero-size axis %d: %s has no identity value", i,
                                       ir_op(n->op)->name);
    }
    ir_set_out(n, 0, x->dtype, &s);
    return 0;
}

/* Runtime shapes: a kept dim keeps its symbol, a reduced one becomes 1 or
 * goes. A runtime dim may be 0 at run time: a sum over it is 0 and a mean
 * NaN as above, while an integer max/min over nothing stays an error, found at run
 * time (the interpreter infers the node again at the actual extents; the
 * compiled code returns NAME_ERR_SHAPE). ReduceSum's runtime axes need a
 * static input (reduce_infer_dyn bounds the output dims by the input's). */
static int reduce_infer_sym(Graph *g, Node *n, Diag *d)
{
    const Shape *xs = &n->in[0]->shape;
    Shape *ys = &n->out[0]->shape;
    if (!ir_shape_has_sym(xs)) return 0;
    if (n->op == OP_ReduceSum && n->n_in > 1 && n->in[1] && n->in[1]->kind != VK_CONST && ir_numel(&n->in[1]->shape) != 0) {
        char b[160];
        return diag_node_error(d, n, "input 'axes' known only at run time needs a static input 'data' (got %s)",
                               ir_shape_str_g(g, xs, b, sizeof b));
    }
    int mask[IR_MAX_RANK];
    int rc = ir_reduce_mask(n, mask, d);
    if (rc < 0) return -1;
    if (rc == 1) {
        memcpy(ys->sym, xs->sym, sizeof ys->sym);
        return 0;
    }
    int keep = reduce_keepdims(n), j = 0;
    for (int i = 0; i < xs->rank; i++) {
        if (!mask[i]) ys->sym[j++] = xs->sym[i];
        else if (keep) j++;
    }
    GC_ASSERT(j == ys->rank);
    return 0;
}

/* Shape values (ir/ops/shape_values.c): ReduceProd and ReduceSum of a
 * whole list of terms (a shape's element count) is one term, a derived
 * symbol or a constant (ReduceMin/ReduceMax: ir_value_reduce_min_max). */
static void reduce_value(Graph *g, Node *n)
{
    IrSymTerm t[2 * IR_MAX_RANK];
    const Value *x = n->in[0];
    int nt = ir_value_terms(x, t, 2 * IR_MAX_RANK);
    if (nt < 1 || x->kind == VK_CONST || x->shape.rank != 1 || n->out[0]->shape.rank > 1) return;
    int mask[IR_MAX_RANK];
    if (ir_reduce_mask(n, mask, NULL) != 0 || !mask[0]) return;
    RedKind k = red_kind(n);
    if (k != RK_PROD && k != RK_SUM) return;
    IrSymKind sk = k == RK_PROD ? SYM_MUL : SYM_ADD;
    for (int i = 0; i < nt; i++)
        if (t[i].sym ? t[i].c != 0 : t[i].c < 0) return; /* derived symbols are kept for non-negative extents */
    IrSymTerm acc = t[0];
    for (int i = 1; i < nt; i++) {
        IrSymTerm b = t[i];
        if (!acc.sym && !b.sym) {
            int64_t a = acc.c, c = b.c, r;
            if (sk == SYM_MUL ? ir_mul_ok(a, c, &r) : ir_add_ok(a, c, &r)) return;
            acc = (IrSymTerm){0, r};
        } else {
            acc = (IrSymTerm){ir_sym_derive(g, sk, acc, b), 0};
        }
    }
    IrSymTerm *p = ir_alloc(g, sizeof *p);
    *p = acc;
    n->out[0]->shape_val = p;
    n->out[0]->n_shape_val = 1;
}

/* One fold step of kind k: acc combined with element v (m: the maximum of
 * the output element, used by LogSumExp's second pass). */
static double red_step(RedKind k, double acc, double v, double m)
{
    switch (k) {
    case RK_MAX: return (v != v || v > acc) ? v : acc;
    case RK_MIN: return (v != v || v < acc) ? v : acc;
    case RK_L1: return acc + fabs(v);
    case RK_L2:
    case RK_SUMSQ: return acc + v * v;
    case RK_PROD: return acc * v;
    case RK_LOGSUMEXP: return acc + exp(v - m);
    default: return acc + v; /* sum, mean, log-sum */
    }
}

/* Folds in[] into acc[] (pre-initialized) with kind k; m[] holds per-output
 * maxima for LogSumExp (NULL otherwise). */
static void red_fold(const Shape *xs, const int64_t *ost, RedKind k, const double *in, double *acc,
                     const double *m)
{
    int64_t total = ir_numel(xs), idx[IR_MAX_RANK] = {0}, o = 0;
    for (int64_t e = 0; e < total; e++) {
        acc[o] = red_step(k, acc[o], in[e], m ? m[o] : 0.0);
        for (int j = xs->rank - 1; j >= 0; j--) {
            o += ost[j];
            if (++idx[j] < xs->dims[j]) break;
            o -= ost[j] * idx[j];
            idx[j] = 0;
        }
    }
}

static int reduce_eval(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    const Shape *xs = &n->in[0]->shape;
    int mask[IR_MAX_RANK];
    int rc = ir_reduce_mask(n, mask, d);
    if (rc < 0) return -1;
    int64_t total = ir_numel(xs), on = ir_numel(&n->out[0]->shape);
    if (rc == 1) {
        memcpy(out[0], in[0], sizeof(double) * (size_t)total);
        return 0;
    }
    RedKind k = red_kind(n);
    /* output strides over the input's axes (0 on reduced axes) */
    int64_t ost[IR_MAX_RANK], st = 1, count = 1;
    for (int i = xs->rank - 1; i >= 0; i--) {
        if (mask[i]) {
            ost[i] = 0;
            /* an empty input has a reduced dim 0 and maybe huge others: count is 0, never an overflow */
            count = total == 0 ? 0 : count * xs->dims[i];
        } else {
            ost[i] = st;
            st *= xs->dims[i];
        }
    }
    if (k == RK_LOGSUMEXP) {
        double *m = malloc(sizeof(double) * (size_t)(on ? on : 1));
        if (!m) return diag_node_error(d, n, "out of memory");
        for (int64_t i = 0; i < on; i++) m[i] = -INFINITY;
        red_fold(xs, ost, RK_MAX, in[0], m, NULL);
        for (int64_t i = 0; i < on; i++) out[0][i] = 0.0;
        red_fold(xs, ost, RK_LOGSUMEXP, in[0], out[0], m);
        for (int64_t i = 0; i < on; i++) out[0][i] = isfinite(m[i]) ? m[i] + log(out[0][i]) : m[i];
        free(m);
        return 0;
    }
    double init = k == RK_MAX ? -INFINITY : k == RK_MIN ? INFINITY : k == RK_PROD ? 1.0 : 0.0;
    for (int64_t i = 0; i < on; i++) out[0][i] = init;
    red_fold(xs, ost, k, in[0], out[0], NULL);
    for (int64_t i = 0; i < on; i++) {
        if (k == RK_MEAN) out[0][i] = count ? out[0][i] / (double)count : NAN;
        else if (k == RK_L2) out[0][i] = sqrt(out[0][i]);
        else if (k == RK_LOGSUM) out[0][i] = log(out[0][i]);
    }
    return 0;
}

/* ---- gradients (ir/grad.h) ------------------------------------------------
 *
 * dy (and y where needed) is reshaped to the input's rank with the reduced
 * dims kept as 1, then broadcast against x: Sum copies dy to every reduced
 * element, Mean divides by the count, Max/Min send it to the elements equal
 * to the result, and the others multiply by their local derivative
 * (L1: sign x; L2: x / y; LogSum: 1 / exp(y); LogSumExp: exp(x - y);
 * Prod: y / x; SumSquare: 2x). */
static int reduce_grad(GradCtx *gc)
{
    const Node *n = gc->n;
    Value *x = n->in[0], *y = n->out[0];
    int mask[IR_MAX_RANK];
    int noop = ir_reduce_mask(n, mask, gc->d);
    if (noop < 0) return -1;
    Shape kd = x->shape;
    int64_t count = 1;
    for (int i = 0; i < kd.rank; i++)
        if (mask[i]) {
            count *= kd.dims[i];
            kd.dims[i] = 1;
        }
    Value *dyk = gb_reshape(gc, gb_dy(gc, 0), &kd);
    Value *g = gb_expand(gc, dyk, &x->shape);
    RedKind k = red_kind(n);
    DType t = x->dtype;
    Value *yk = (k == RK_SUM || k == RK_MEAN || k == RK_L1 || k == RK_SUMSQ) ? NULL : gb_reshape(gc, y, &kd);
    switch (k) {
    case RK_SUM: break;
    case RK_MEAN: g = gb2(gc, OP_Mul, NULL, g, gb_scalar(gc, t, count ? 1.0 / (double)count : 0)); break;
    case RK_MAX:
    case RK_MIN: g = gb3(gc, OP_Where, NULL, gb2(gc, OP_Equal, NULL, x, yk), g, gb_scalar(gc, t, 0)); break;
    case RK_L1: g = gb2(gc, OP_Mul, NULL, g, gb1(gc, OP_Sign, NULL, x)); break;
    case RK_L2: g = gb2(gc, OP_Mul, NULL, g, gb2(gc, OP_Div, NULL, x, yk)); break;
    case RK_LOGSUM: g = gb2(gc, OP_Div, NULL, g, gb1(gc, OP_Exp, NULL, yk)); break;
    case RK_LOGSUMEXP: g = gb2(gc, OP_Mul, NULL, g, gb1(gc, OP_Exp, NULL, gb2(gc, OP_Sub, NULL, x, yk))); break;
    case RK_PROD: g = gb2(gc, OP_Mul, NULL, g, gb2(gc, OP_Div, NULL, yk, x)); break;
    case RK_SUMSQ: g = gb2(gc, OP_Mul, NULL, g, gb2(gc, OP_Mul, NULL, x, gb_scalar(gc, t, 2))); break;
    }
    gb_set(gc, 0, g);
    return gb_done(gc);
}

/* Sum and Mean read only shapes; the others read x and y. */
static int reduce_bw_reads(const Node *n, int is_output, int i)
{
    RedKind k = red_kind(n);
    if (k == RK_SUM || k == RK_MEAN) return !is_output && i == 1; /* ReduceSum's axes */
    if (k == RK_L1 || k == RK_SUMSQ) return !is_output;
    return 1;
}

const OpDesc op_ReduceMean = {
    .name = "ReduceMean", .min_in = 1, .max_in = 1, .in_names = red_in,
    .min_out = 1, .max_out = 1, .out_names = red_out,
    .infer_sym = reduce_infer_sym,
    OP_ATTRS(red_attrs), .infer = reduce_infer, .eval = reduce_eval, .gradient = reduce_grad, .backward_reads = reduce_bw_reads,
};
const OpDesc op_ReduceSum = {
    .name = "ReduceSum", .min_in = 1, .max_in = 2, .in_names = rsum_in,
    .min_out = 1, .max_out = 1, .out_names = red_out,
    .infer_sym = reduce_infer_sym, .infer_value = reduce_value,
    OP_ATTRS(rsum_attrs), .infer = reduce_infer, .eval = reduce_eval, .gradient = reduce_grad, .backward_reads = reduce_bw_reads,
    .shape_inputs = 1u << 1,
};
const OpDesc op_ReduceMax = {
    .name = "ReduceMax", .min_in = 1, .max_in = 1, .in_names = red_in,
    .min_out = 1, .max_out = 1, .out_names = red_out,
    .infer_sym = reduce_infer_sym,
    OP_ATTRS(red_attrs), .infer = reduce_infer, .eval = reduce_eval, .gradient = reduce_grad, .backward_reads = reduce_bw_reads,
    .infer_value = ir_value_reduce_min_max,
};
const OpDesc op_ReduceMin = {
    .name = "ReduceMin", .min_in = 1, .max_in = 1, .in_names = red_in,
    .min_out = 1, .max_out = 1, .out_names = red_out,
    .infer_sym = reduce_infer_sym,
    OP_ATTRS(red_attrs), .infer = reduce_infer, .eval = reduce_eval, .gradient = reduce_grad, .backward_reads = reduce_bw_reads,
    .infer_value = ir_value_reduce_min_max,
};

#define RED_DESC(NAME)                                                                   \
    const OpDesc op_##NAME = {                                                           \
        .name = #NAME, .min_in = 1, .max_in = 1, .in_names = red_in,                      \
        .min_out = 1, .max_out = 1, .out_names = red_out,                                \
        .infer_sym = reduce_infer_sym, .infer_value = reduce_value,                      \
        OP_ATTRS(red_attrs), .infer = reduce_infer, .eval = reduce_eval, .gradient = reduce_grad, .backward_reads = reduce_bw_reads,                 \
    };
RED_DESC(ReduceL1)
RED_DESC(ReduceL2)
RED_DESC(ReduceLogSum)
RED_DESC(ReduceLogSumExp)
RED_DESC(ReduceProd)
RED_DESC(ReduceSumSquare)
#undef RED_DESC
