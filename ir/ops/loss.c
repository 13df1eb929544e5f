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
 */
#include "../op.h"
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
    Shape scalar;
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

const OpDesc op_NegativeLogLikelihoodLoss = {
    .name = "NegativeLogLikelihoodLoss",
    .min_in = 2, .max_in = 3, .in_names = nll_in,
    .min_out = 1, .max_out = 1, .out_names = nll_out,
    OP_ATTRS(loss_attrs),
    .infer = loss_infer,
    .eval = nll_eval,
};

const OpDesc op_SoftmaxCrossEntropyLoss = {
    .name = "SoftmaxCrossEntropyLoss",
    .min_in = 2, .max_in = 3, .in_names = sce_in,
    .min_out = 1, .max_out = 2, .out_names = sce_out,
    OP_ATTRS(loss_attrs),
    .infer = loss_infer,
    .eval = sce_eval,
};
