/* loss.c — operator descriptions of the loss family:
 * NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (ONNX opset 13-17).
 *
 * Both ops see their first input as [N, C, d1..dk] and the integer target as
 * [N, d1..dk]; with D = d1*..*dk the element (i, c, j) of the input sits at
 * (i*C + c)*D + j and target element (i, j) at i*D + j. For every (i, j)
 * with target t:
 *
 *     w(i,j)    = 0 if t == ignore_index, else weight[t] (1 without weight)
 *     loss(i,j) = -w(i,j) * x[i, t, j]
 *
 * where x is the input itself (NLL) or its log-softmax over axis 1 (SCE,
 * which can also output that log-softmax as `log_prob`). Reduction "none"
 * outputs loss with the target's shape; "sum" outputs sum(loss); "mean"
 * outputs sum(loss) / sum(w) — so with weights or ignored targets the mean
 * divides by the total weight of the targets that count, not by N*D (the
 * ONNX definition). Means over nothing are 0/0 = NaN.
 *
 * A target outside [0, C) that is not ignore_index has no meaning: the
 * reference evaluation rejects it; generated code writes NaN for it.
 *
 * Gradients (composed): with M(i,c,j) = [c == t and t != ignore_index] *
 * weight[c], the weighted one-hot of the target, and g(i,j) the gradient
 * of each loss(i,j) (dY for "none", dY for every element for "sum",
 * dY / sum(M) for "mean"), the gradient wrt x is -M * g. NLL's input takes
 * it as is; SCE's scores take it, plus log_prob's own gradient, through
 * LogSoftmaxGrad over axis 1. The weights get, per class c, the sum over
 * the targets equal to c of (-x - [mean] output) * g (the mean's
 * denominator depends on them too). The integer target has none.
 */
#include "../op.h"
#include "../grad.h"
#include "loss_attrs.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const AttrSpec loss_attrs[] = {
    [LOSS_IGNORE_INDEX] = {"ignore_index", ATTR_INT, NULL, 0},
    [LOSS_REDUCTION] = {"reduction", ATTR_STRING, "mean", 0},
};
OP_ATTRS_CHECK(loss_attrs, LOSS_COUNT);

static const char *const nll_in[] = {"input", "target", "weight"};
static const char *const nll_out[] = {"loss"};
static const char *const sce_in[] = {"scores", "labels", "weights"};
static const char *const sce_out[] = {"output", "log_prob"};

typedef enum LossReduction { LR_NONE, LR_SUM, LR_MEAN } LossReduction;

/* The reduction attribute as an enum; -1 if it is not none/sum/mean. */
static int loss_reduction(const Node *n)
{
    const char *r = n->attrs[LOSS_REDUCTION].s;
    if (!r) return -1;
    if (!strcmp(r, "none")) return LR_NONE;
    if (!strcmp(r, "sum")) return LR_SUM;
    if (!strcmp(r, "mean")) return LR_MEAN;
    return -1;
}

static int is_loss_float(DType t)
{
    return t == DT_F32 || t == DT_F64 || t == DT_F16 || t == DT_BF16;
}

static int loss_infer(Node *n, Diag *d)
{
    const char *const *names = ir_op(n->op)->in_names;
    const Value *x = n->in[0], *t = n->n_in > 1 ? n->in[1] : NULL, *wt = n->n_in > 2 ? n->in[2] : NULL;
    char b1[160], b2[160];
    if (!x) return diag_node_error(d, n, "input '%s' is required", names[0]);
    if (!t) return diag_node_error(d, n, "input '%s' is required", names[1]);
    if (!is_loss_float(x->dtype))
        return diag_node_error(d, n, "input '%s' has dtype %s; expected f32, f64, f16 or bf16", names[0],
                               ir_dtype_name(x->dtype));
    if (t->dtype != DT_I32 && t->dtype != DT_I64)
        return diag_node_error(d, n, "input '%s' has dtype %s; expected i32 or i64", names[1],
                               ir_dtype_name(t->dtype));
    const Shape *xs = &x->shape, *ts = &t->shape;
    if (xs->rank < 2)
        return diag_node_error(d, n, "input '%s' shape %s must have rank >= 2 ([N, C, d1..dk])", names[0],
                               ir_shape_str(xs, b1, sizeof b1));
    int ok = ts->rank == xs->rank - 1 && ts->dims[0] == xs->dims[0];
    for (int i = 1; ok && i < ts->rank; i++) ok = ts->dims[i] == xs->dims[i + 1];
    if (!ok)
        return diag_node_error(d, n, "input '%s' shape %s does not match input '%s' shape %s (expected [N, d1..dk])",
                               names[1], ir_shape_str(ts, b1, sizeof b1), names[0], ir_shape_str(xs, b2, sizeof b2));
    if (wt) {
        if (wt->dtype != x->dtype)
            return diag_node_error(d, n, "input '%s' has dtype %s; expected %s like input '%s'", names[2],
                                   ir_dtype_name(wt->dtype), ir_dtype_name(x->dtype), names[0]);
        if (wt->shape.rank != 1 || wt->shape.dims[0] != xs->dims[1])
            return diag_node_error(d, n, "input '%s' shape %s must be [C] = [%lld]", names[2],
                                   ir_shape_str(&wt->shape, b1, sizeof b1), (long long)xs->dims[1]);
    }
    int red = loss_reduction(n);
    if (red < 0)
        return diag_node_error(d, n, "attribute 'reduction' is \"%s\"; expected \"none\", \"sum\" or \"mean\"",
                               n->attrs[LOSS_REDUCTION].s ? n->attrs[LOSS_REDUCTION].s : "");
    Shape scalar = {0};
    memset(&scalar, 0, sizeof scalar);
    ir_set_out(n, 0, x->dtype, red == LR_NONE ? ts : &scalar);
    if (n->n_out > 1 && n->out[1]) ir_set_out(n, 1, x->dtype, xs);
    return 0;
}

/* Shared evaluation; `x` is the NLL input or the SCE log-probabilities. */
static int loss_eval_core(const Node *n, const double *x, const double *target, const double *weight,
                          double *out, Diag *d)
{
    const Shape *xs = &n->in[0]->shape;
    int64_t N = xs->dims[0], C = xs->dims[1], D = 1;
    for (int i = 2; i < xs->rank; i++) D *= xs->dims[i];
    int has_ii = n->attrs[LOSS_IGNORE_INDEX].set;
    int64_t ii = n->attrs[LOSS_IGNORE_INDEX].i;
    int red = loss_reduction(n);
    double num = 0.0, den = 0.0;
    for (int64_t i = 0; i < N; i++)
        for (int64_t j = 0; j < D; j++) {
            int64_t t = (int64_t)target[i * D + j];
            double w = 0.0, l = 0.0;
            if (!(has_ii && t == ii)) {
                if (t < 0 || t >= C)
                    return diag_node_error(d, n, "target value %lld at position %lld is out of range [0, %lld)",
                                           (long long)t, (long long)(i * D + j), (long long)C);
                w = weight ? weight[t] : 1.0;
                l = -w * x[(i * C + t) * D + j];
            }
            if (red == LR_NONE) out[i * D + j] = l;
            num += l;
            den += w;
        }
    if (red == LR_SUM) out[0] = num;
    else if (red == LR_MEAN) out[0] = num / den;
    return 0;
}

static int nll_eval(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    return loss_eval_core(n, in[0], in[1], n->n_in > 2 ? in[2] : NULL, out[0], d);
}

/* Log-softmax over axis 1 of the [N, C, D] view of in[0] into lp. */
static void log_softmax_axis1(const Shape *xs, const double *x, double *lp)
{
    int64_t N = xs->dims[0], C = xs->dims[1], D = 1;
    for (int i = 2; i < xs->rank; i++) D *= xs->dims[i];
    for (int64_t i = 0; i < N; i++)
        for (int64_t j = 0; j < D; j++) {
            const double *p = x + i * C * D + j;
            double mx = -INFINITY, s = 0.0;
            for (int64_t c = 0; c < C; c++)
                if (p[c * D] != p[c * D] || p[c * D] > mx) mx = p[c * D];
            for (int64_t c = 0; c < C; c++) s += exp(p[c * D] - mx);
            double lse = mx + log(s);
            for (int64_t c = 0; c < C; c++) lp[i * C * D + c * D + j] = p[c * D] - lse;
        }
}

static int sce_eval(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    int64_t total = ir_numel(&n->in[0]->shape);
    double *given = n->n_out > 1 ? out[1] : NULL;
    double *lp = given ? given : malloc(sizeof(double) * (size_t)(total ? total : 1));
    if (!lp) return diag_node_error(d, n, "out of memory");
    log_softmax_axis1(&n->in[0]->shape, in[0], lp);
    int rc = loss_eval_core(n, lp, in[1], n->n_in > 2 ? in[2] : NULL, out[0], d);
    if (!given) free(lp);
    return rc;
}

/* ---- gradients (ir/grad.h) ------------------------------------------------ */

/* The [N, C, d1..dk] mask, cast to x's dtype, of c == target (and target
 * != ignore_index): a target shaped [N, 1, d1..dk] against the classes
 * 0..C-1 shaped [1, C, 1..]. */
static Value *loss_onehot(GradCtx *gc, Value *tu)
{
    const Node *n = gc->n;
    const Shape *xs = &n->in[0]->shape;
    DType lt = tu->dtype;
    Shape cs = ir_shape(0, NULL);
    cs.rank = xs->rank;
    for (int k = 0; k < cs.rank; k++) cs.dims[k] = k == 1 ? xs->dims[1] : 1;
    void *data = ir_alloc(gc->g, ir_dtype_size(lt) * (size_t)(xs->dims[1] ? xs->dims[1] : 1));
    for (int64_t c = 0; c < xs->dims[1]; c++) ir_store_f64(lt, data, (size_t)c, (double)c);
    Value *eq = gb2(gc, OP_Equal, NULL, tu, ir_add_const(gc->g, NULL, lt, &cs, data, 0));
    if (n->attrs[LOSS_IGNORE_INDEX].set) {
        Value *ii = gb_scalar(gc, lt, (double)n->attrs[LOSS_IGNORE_INDEX].i);
        eq = gb2(gc, OP_And, NULL, eq, gb1(gc, OP_Not, NULL, gb2(gc, OP_Equal, NULL, tu, ii)));
    }
    return gb1(gc, OP_Cast, gb_fmt(gc, "to=%d", ir_dtype_to_onnx(n->in[0]->dtype)), eq);
}

/* See the file comment; x is the NLL input or the SCE log-probabilities. */
static int loss_grad(GradCtx *gc)
{
    const Node *n = gc->n;
    Value *scores = n->in[0], *target = n->in[1], *dy = gb_dy(gc, 0);
    Value *weight = ir_has_input(n, 2) ? n->in[2] : NULL;
    const Shape *xs = &scores->shape;
    int red = loss_reduction(n), sce = n->op == OP_SoftmaxCrossEntropyLoss;
    Shape us = ir_shape(0, NULL); /* [N, 1, d1..dk] */
    us.rank = xs->rank;
    for (int k = 0; k < us.rank; k++) us.dims[k] = k == 1 ? 1 : xs->dims[k];
    Value *onehot = loss_onehot(gc, gb_reshape(gc, target, &us)), *m = onehot;
    if (weight) {
        Shape ws = ir_shape(0, NULL);
        ws.rank = xs->rank;
        for (int k = 0; k < ws.rank; k++) ws.dims[k] = k == 1 ? xs->dims[1] : 1;
        m = gb2(gc, OP_Mul, NULL, m, gb_reshape(gc, weight, &ws));
    }
    Value *g = dy;
    if (red == LR_NONE) g = gb_reshape(gc, dy, &us);
    else if (red == LR_MEAN) g = gb2(gc, OP_Div, NULL, dy, gb1(gc, OP_ReduceSum, "keepdims=0", m));
    Value *x = scores;
    if (sce) x = n->n_out > 1 && n->out[1] ? n->out[1] : gb1(gc, OP_LogSoftmax, "axis=1", scores);
    if (gc->need[0]) {
        Value *dx = gb1(gc, OP_Neg, NULL, gb2(gc, OP_Mul, NULL, m, g));
        if (sce) {
            if (n->n_out > 1 && gc->dy[1]) dx = gb2(gc, OP_Add, NULL, dx, gc->dy[1]);
            dx = gb2(gc, OP_LogSoftmaxGrad, "axis=1", dx, x);
        }
        gb_set(gc, 0, dx);
    }
    if (weight && gc->need[2]) {
        Value *e = gb1(gc, OP_Neg, NULL, x);
        if (red == LR_MEAN) e = gb2(gc, OP_Sub, NULL, e, n->out[0]);
        int64_t axes[IR_MAX_RANK];
        int na = 0;
        for (int k = 0; k < xs->rank; k++)
            if (k != 1) axes[na++] = k;
        gb_set(gc, 2, gb_sum(gc, gb2(gc, OP_Mul, NULL, gb2(gc, OP_Mul, NULL, onehot, e), g), axes, na, 0));
    }
    return gb_done(gc);
}

const OpDesc op_NegativeLogLikelihoodLoss = {
    .name = "NegativeLogLikelihoodLoss",
    .min_in = 2, .max_in = 3, .in_names = nll_in,
    .min_out = 1, .max_out = 1, .out_names = nll_out,
    OP_ATTRS(loss_attrs),
    .infer = loss_infer,
    .eval = nll_eval,
    .gradient = loss_grad,
    .backward_reads = ir_bw_all,
};

const OpDesc op_SoftmaxCrossEntropyLoss = {
    .name = "SoftmaxCrossEntropyLoss",
    .min_in = 2, .max_in = 3, .in_names = sce_in,
    .min_out = 1, .max_out = 2, .out_names = sce_out,
    OP_ATTRS(loss_attrs),
    .infer = loss_infer,
    .eval = sce_eval,
    .gradient = loss_grad,
    .backward_reads = ir_bw_all,
};
