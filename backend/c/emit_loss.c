/* emit_loss.c — C emitters for NegativeLogLikelihoodLoss and
 * SoftmaxCrossEntropyLoss.
 *
 * Shapes are static, so both losses are written as plain loops over the
 * [N, C, D] view of the input (see ir/ops/loss.c for the definitions) with
 * no workspace and no runtime kernel: for each (i, j) the target t is read
 * (i32 or i64), ignored targets contribute 0 loss and 0 weight, targets
 * outside [0, C) give NaN (the op leaves them undefined; NaN never reads out
 * of bounds), others give -w[t] * x[i, t, j]. SoftmaxCrossEntropyLoss first
 * computes the stable log-sum-exp over the C entries of (i, j) and uses
 * x - lse; when the log_prob output is present it stores x - lse for every
 * c. Loss, weight sums and the softmax accumulate in double for every float
 * dtype (f32, f64, f16, bf16: loaded and stored through cgen_load /
 * cgen_store), matching the double reference evaluation closely. Means
 * divide by the summed weight (0/0 = NaN when nothing counts).
 */
#include "cgen.h"
#include "../../ir/ops/loss_attrs.h"

#include <stdio.h>
#include <string.h>

/* Writes an int64 C literal (INT64_MIN has no literal form). */
static void int64_literal(char *buf, size_t cap, int64_t v)
{
    if (v == INT64_MIN) snprintf(buf, cap, "INT64_MIN");
    else snprintf(buf, cap, "(int64_t)%lldLL", (long long)v);
}

static int emit_loss_any(Cgen *c, const Node *n, Diag *d, int softmax)
{
    Writer *w = cgen_w(c);
    const Value *x = n->in[0], *tg = n->in[1];
    const Value *wt = n->n_in > 2 ? n->in[2] : NULL;
    const Value *y = n->out[0], *lpv = softmax && n->n_out > 1 ? n->out[1] : NULL;
    DType t = x->dtype;
    if (t != DT_F32 && t != DT_F64 && t != DT_F16 && t != DT_BF16)
        return diag_node_error(d, n, "C backend: input dtype %s is not supported (f32, f64, f16, bf16)",
                               ir_dtype_name(t));
    const char *red = n->attrs[LOSS_REDUCTION].s;
    int r_none = !strcmp(red, "none"), r_mean = !strcmp(red, "mean");
    const AttrVal *ii = &n->attrs[LOSS_IGNORE_INDEX];
    const Shape *xs = &x->shape;
    int64_t N = xs->dims[0], C = xs->dims[1], D = 1;
    for (int i = 2; i < xs->rank; i++) D *= xs->dims[i];
    if (N * D == 0 && r_none) {
        w_line(w, "/* empty loss output */");
        return 0;
    }
    char px[256], pt[256], pw[256] = "", py[256], plp[256] = "";
    snprintf(px, sizeof px, "%s", cgen_ptr(c, x));
    snprintf(pt, sizeof pt, "%s", cgen_ptr(c, tg));
    if (wt) snprintf(pw, sizeof pw, "%s", cgen_ptr(c, wt));
    snprintf(py, sizeof py, "%s", cgen_ptr(c, y));
    if (lpv) snprintf(plp, sizeof plp, "%s", cgen_ptr(c, lpv));
    char num[64], den[64], i_[64], j_[64], k_[64], tv[64], wv[64], lv[64], base[64], mx[64], s[64], lse[64],
        xv[64];
    snprintf(num, sizeof num, "%s", cgen_tmp(c, "num"));
    snprintf(den, sizeof den, "%s", cgen_tmp(c, "den"));
    snprintf(i_, sizeof i_, "%s", cgen_tmp(c, "i"));
    snprintf(j_, sizeof j_, "%s", cgen_tmp(c, "j"));
    snprintf(k_, sizeof k_, "%s", cgen_tmp(c, "c"));
    snprintf(tv, sizeof tv, "%s", cgen_tmp(c, "t"));
    snprintf(wv, sizeof wv, "%s", cgen_tmp(c, "w"));
    snprintf(lv, sizeof lv, "%s", cgen_tmp(c, "l"));
    snprintf(base, sizeof base, "%s", cgen_tmp(c, "base"));
    snprintf(mx, sizeof mx, "%s", cgen_tmp(c, "mx"));
    snprintf(s, sizeof s, "%s", cgen_tmp(c, "s"));
    snprintf(lse, sizeof lse, "%s", cgen_tmp(c, "lse"));
    snprintf(xv, sizeof xv, "%s", cgen_tmp(c, "xv"));

    w_line(w, "{");
    w->indent++;
    if (!r_none) w_line(w, "double %s = 0.0;", num);
    if (r_mean) w_line(w, "double %s = 0.0;", den);
    w_line(w, "for (int64_t %s = 0; %s < %lld; %s++) {", i_, i_, (long long)N, i_);
    w->indent++;
    w_line(w, "for (int64_t %s = 0; %s < %lld; %s++) {", j_, j_, (long long)D, j_);
    w->indent++;
    w_line(w, "const int64_t %s = %s * %lld + %s;", base, i_, (long long)(C * D), j_);
    if (softmax) {
        /* stable log-sum-exp over the C entries of (i, j), NaN propagating */
        char idx[192];
        snprintf(idx, sizeof idx, "%s + %s * %lld", base, k_, (long long)D);
        w_line(w, "double %s = -INFINITY, %s = 0.0, %s;", mx, s, lse);
        w_line(w, "for (int64_t %s = 0; %s < %lld; %s++) {", k_, k_, (long long)C, k_);
        w->indent++;
        w_printf(w, "const double %s = (double)(", xv);
        cgen_load(w, t, px, idx);
        w_printf(w, ");\n");
        w_line(w, "if (%s != %s || %s > %s) %s = %s;", xv, xv, xv, mx, mx, xv);
        w->indent--;
        w_line(w, "}");
        w_line(w, "for (int64_t %s = 0; %s < %lld; %s++) {", k_, k_, (long long)C, k_);
        w->indent++;
        w_printf(w, "%s += exp((double)(", s);
        cgen_load(w, t, px, idx);
        w_printf(w, ") - %s);\n", mx);
        w->indent--;
        w_line(w, "}");
        w_line(w, "%s = %s + log(%s);", lse, mx, s);
        if (lpv) {
            char val[256];
            w_line(w, "for (int64_t %s = 0; %s < %lld; %s++) {", k_, k_, (long long)C, k_);
            w->indent++;
            w_printf(w, "const double %s = (double)(", xv);
            cgen_load(w, t, px, idx);
            w_printf(w, ");\n");
            snprintf(val, sizeof val, "%s - %s", xv, lse);
            cgen_store(w, t, plp, idx, val);
            w->indent--;
            w_line(w, "}");
        }
    }
    w_line(w, "const int64_t %s = (int64_t)%s[%s * %lld + %s];", tv, pt, i_, (long long)D, j_);
    w_line(w, "double %s = 0.0, %s = 0.0;", wv, lv);
    if (ii->set) {
        char lit[64];
        int64_literal(lit, sizeof lit, ii->i);
        w_line(w, "if (%s == %s) {", tv, lit);
        w->indent++;
        w_line(w, "/* ignored: no loss, no weight */");
        w->indent--;
        w_line(w, "} else if (%s < 0 || %s >= %lld) {", tv, tv, (long long)C);
    } else {
        w_line(w, "if (%s < 0 || %s >= %lld) {", tv, tv, (long long)C);
    }
    w->indent++;
    w_line(w, "%s = NAN;", lv);
    w_line(w, "%s = NAN;", wv);
    w->indent--;
    w_line(w, "} else {");
    w->indent++;
    if (wt) {
        w_printf(w, "%s = (double)(", wv);
        cgen_load(w, t, pw, tv);
        w_printf(w, ");\n");
    } else {
        w_line(w, "%s = 1.0;", wv);
    }
    {
        char idx[192];
        snprintf(idx, sizeof idx, "%s + %s * %lld", base, tv, (long long)D);
        w_printf(w, "%s = -%s * ((double)(", lv, wv);
        cgen_load(w, t, px, idx);
        w_printf(w, ")%s%s);\n", softmax ? " - " : "", softmax ? lse : "");
    }
    w->indent--;
    w_line(w, "}");
    if (r_none) {
        char idx[192];
        snprintf(idx, sizeof idx, "%s * %lld + %s", i_, (long long)D, j_);
        cgen_store(w, y->dtype, py, idx, lv);
        w_line(w, "(void)%s;", wv);
    } else {
        w_line(w, "%s += %s;", num, lv);
        if (r_mean) w_line(w, "%s += %s;", den, wv);
        else w_line(w, "(void)%s;", wv);
    }
    w->indent--;
    w_line(w, "}");
    w->indent--;
    w_line(w, "}");
    if (!r_none) {
        char val[160];
        if (r_mean) snprintf(val, sizeof val, "%s / %s", num, den);
        else snprintf(val, sizeof val, "%s", num);
        cgen_store(w, y->dtype, py, "0", val);
    }
    w->indent--;
    w_line(w, "}");
    return 0;
}

static int emit_nll(Cgen *c, const Node *n, Diag *d) { return emit_loss_any(c, n, d, 0); }
static int emit_sce(Cgen *c, const Node *n, Diag *d) { return emit_loss_any(c, n, d, 1); }

const CgenEntry cgen_loss_entries[] = {
    {OP_NegativeLogLikelihoodLoss, emit_nll, 0, NULL, 0},
    {OP_SoftmaxCrossEntropyLoss, emit_sce, 0, NULL, 0},
    {-1, NULL, 0, NULL, 0},
};
