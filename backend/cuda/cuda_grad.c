/* cuda_grad.c — the CUDA backend's generated kernels for the grad family's
 * backward ops (see cuda_emit.h): ConvGradData, ConvGradFilter,
 * MaxPoolGrad, AveragePoolGrad, SoftmaxGrad and LogSoftmaxGrad, and the
 * losses that training graphs end in (NegativeLogLikelihoodLoss,
 * SoftmaxCrossEntropyLoss), LayerNormalizationGrad, BatchNormalizationGrad
 * and BatchNormalization in training mode (one thread per channel).
 *
 * The C runtime scatters (runtime/c/gcrt_grad.c: each dY element adds into
 * the dX elements of its window). Here every kernel gathers instead: one
 * thread per element of the result finds the dY elements that reach it
 * (the taps t with p + pad - t * dil a multiple of the stride, landing
 * inside dY), so no two threads write one element and no atomics are
 * needed: the result is deterministic. MaxPoolGrad recomputes each
 * candidate window's first maximum (gcrt_maxpool_grad's choice) and takes
 * the dY of the windows whose maximum is this element. Sums run in double.
 * Geometry comes from ir_grad_window_geometry (ir/ops/geometry.h), as for
 * the C backend.
 */
#include "cuda_emit.h"
#include "../cfamily/cfam_expr.h"
#include "../../ir/ops/geometry.h"
#include "../../ir/ops/grad_attrs.h"
#include "../../ir/ops/loss_attrs.h"
#include "../../ir/ops/nn_attrs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A grad node's window, three spatial dims (leading ones of size 1): the
 * forward input's dims in, the forward output's (dY's) out. */
typedef struct GradGeo3 {
    int sr;
    int64_t in[3], out[3], k[3], s[3], dl[3], pb[3], pe[3];
} GradGeo3;

static int geo3(const Node *n, GradGeo3 *g)
{
    int64_t in[IR_MAX_RANK], out[IR_MAX_RANK], k[IR_MAX_RANK], s[IR_MAX_RANK], dl[IR_MAX_RANK], pb[IR_MAX_RANK],
        pe[IR_MAX_RANK];
    g->sr = ir_grad_window_geometry(n, in, out, k, s, dl, pb, pe);
    if (g->sr < 1 || g->sr > 3) return -1;
    for (int i = 0; i < 3; i++) {
        int j = i - (3 - g->sr);
        g->in[i] = j < 0 ? 1 : in[j];
        g->out[i] = j < 0 ? 1 : out[j];
        g->k[i] = j < 0 ? 1 : k[j];
        g->s[i] = j < 0 ? 1 : s[j];
        g->dl[i] = j < 0 ? 1 : dl[j];
        g->pb[i] = j < 0 ? 0 : pb[j];
        g->pe[i] = j < 0 ? 0 : pe[j];
    }
    return 0;
}

static int grad_check(const Node *n, Diag *d)
{
    GradGeo3 g;
    if (!cu_is_float(n->out[0]->dtype))
        return diag_node_error(d, n, "the CUDA backend computes op '%s' in f32 and f64 only", ir_op(n->op)->name);
    if (n->op != OP_SoftmaxGrad && n->op != OP_LogSoftmaxGrad && geo3(n, &g))
        return diag_node_error(d, n, "the CUDA backend takes 1 to 3 spatial dims for op '%s'", ir_op(n->op)->name);
    return 0;
}

/* The window constants of g as local arrays of a kernel. */
static void geo_consts(Writer *w, const GradGeo3 *g)
{
    w_printf(w, "        const int64_t in[3] = {%lld, %lld, %lld}, out[3] = {%lld, %lld, %lld}, kk[3] = {%lld, %lld, %lld},\n",
             (long long)g->in[0], (long long)g->in[1], (long long)g->in[2], (long long)g->out[0], (long long)g->out[1],
             (long long)g->out[2], (long long)g->k[0], (long long)g->k[1], (long long)g->k[2]);
    w_printf(w, "                      st[3] = {%lld, %lld, %lld}, dl[3] = {%lld, %lld, %lld}, pd[3] = {%lld, %lld, %lld};\n",
             (long long)g->s[0], (long long)g->s[1], (long long)g->s[2], (long long)g->dl[0], (long long)g->dl[1],
             (long long)g->dl[2], (long long)g->pb[0], (long long)g->pb[1], (long long)g->pb[2]);
}

/* Into a kernel whose thread owns input position p[3]: a loop over the taps
 * t (tt[3]) that reach it from an output position, `op` its flat index in
 * the output plane (the loop's body follows, then "}\n"). */
static void taps_reaching(Writer *w)
{
    w_puts(w, "        for (int64_t t = 0; t < kk[0] * kk[1] * kk[2]; t++) {\n");
    w_puts(w, "            const int64_t tt[3] = {t / (kk[1] * kk[2]), t / kk[2] % kk[1], t % kk[2]};\n");
    w_puts(w, "            int64_t op = 0, ok = 1;\n");
    w_puts(w, "            for (int a = 0; a < 3 && ok; a++) {\n");
    w_puts(w, "                const int64_t q = p[a] + pd[a] - tt[a] * dl[a];\n");
    w_puts(w, "                ok = q >= 0 && q % st[a] == 0 && q / st[a] < out[a];\n");
    w_puts(w, "                op = op * out[a] + (ok ? q / st[a] : 0);\n");
    w_puts(w, "            }\n");
    w_puts(w, "            if (!ok) continue;\n");
}

/* Into a kernel over elements i of planes of `plane` elements: q (the
 * plane), p[3] (the position in it). */
static void plane_pos(Writer *w, const int64_t *dims3)
{
    const long long P = (long long)(dims3[0] * dims3[1] * dims3[2]);
    w_printf(w, "        const int64_t pp = i %% %lld, q = i / %lld;\n", P, P);
    w_printf(w, "        const int64_t p[3] = {pp / %lld, pp / %lld %% %lld, pp %% %lld};\n", (long long)(dims3[1] * dims3[2]),
             (long long)dims3[2], (long long)dims3[1], (long long)dims3[2]);
}

/* ConvGradData(dY, W): dX[n, c, p] = sum over the group's output channels
 * m and the taps reaching p of dY[n, m, o] * W[m, c % Cg, t]. */
static int emit_conv_grad_data(Cu *c, const Node *n, Diag *d)
{
    (void)d;
    const Value *dY = n->in[0], *W = n->in[1], *dX = n->out[0];
    const int64_t total = ir_numel(&dX->shape);
    if (total == 0) return 0;
    GradGeo3 g;
    geo3(n, &g);
    const int64_t C = dX->shape.dims[1], M = W->shape.dims[0], Cg = W->shape.dims[1], G = C / Cg, Mg = M / G;
    const int64_t OP = g.out[0] * g.out[1] * g.out[2], KP = g.k[0] * g.k[1] * g.k[2];
    const char *T = cfam_ctype(dX->dtype);
    Writer *w = &c->kern;
    const int kn = cu_kernel_begin(c, n);
    w_printf(w, "GC_KERNEL k%d(%s *dx, const %s *dy, const %s *w)\n{\n    GC_FOR_EACH(i, %lld) {\n", kn, T, T, T, (long long)total);
    geo_consts(w, &g);
    plane_pos(w, g.in);
    w_printf(w, "        const int64_t ch = q %% %lld, nb = q / %lld, g = ch / %lld;\n", (long long)C, (long long)C, (long long)Cg);
    w_puts(w, "        double acc = 0;\n");
    taps_reaching(w);
    w_printf(w, "            for (int64_t m = g * %lld; m < (g + 1) * %lld; m++)\n", (long long)Mg, (long long)Mg);
    w_printf(w, "                acc += (double)dy[(nb * %lld + m) * %lld + op] * w[(m * %lld + ch %% %lld) * %lld + t];\n",
             (long long)M, (long long)OP, (long long)Cg, (long long)Cg, (long long)KP);
    w_puts(w, "        }\n");
    w_puts(w, "        (void)in;\n");
    w_printf(w, "        dx[i] = (%s)acc;\n    }\n}\n\n", T);
    w_printf(&c->body, "    GC_LAUNCH(k%d, %lld, stream, (%s, %s, %s));\n", kn, (long long)total, cu_ptr(c, dX), cu_ptr(c, dY),
             cu_ptr(c, W));
    return 0;
}

/* ConvGradFilter(X, dY): dW[m, c, t] = sum over images and output
 * positions o of dY[n, m, o] * X[n, g * Cg + c, o * stride - pad + t * dil]
 * (positions inside X). */
static int emit_conv_grad_filter(Cu *c, const Node *n, Diag *d)
{
    (void)d;
    const Value *X = n->in[0], *dY = n->in[1], *dW = n->out[0];
    const int64_t total = ir_numel(&dW->shape);
    if (total == 0) return 0;
    GradGeo3 g;
    geo3(n, &g);
    const int64_t N = X->shape.dims[0], C = X->shape.dims[1], M = dW->shape.dims[0], Cg = dW->shape.dims[1],
                  G = C / Cg, Mg = M / G;
    const int64_t IP = g.in[0] * g.in[1] * g.in[2], OP = g.out[0] * g.out[1] * g.out[2], KP = g.k[0] * g.k[1] * g.k[2];
    const char *T = cfam_ctype(dW->dtype);
    Writer *w = &c->kern;
    const int kn = cu_kernel_begin(c, n);
    w_printf(w, "GC_KERNEL k%d(%s *dw, const %s *x, const %s *dy)\n{\n    GC_FOR_EACH(i, %lld) {\n", kn, T, T, T, (long long)total);
    geo_consts(w, &g);
    w_printf(w, "        const int64_t t = i %% %lld, cg = i / %lld %% %lld, m = i / %lld;\n", (long long)KP, (long long)KP,
             (long long)Cg, (long long)(KP * Cg));
    w_printf(w, "        const int64_t tt[3] = {t / (kk[1] * kk[2]), t / kk[2] %% kk[1], t %% kk[2]}, ch = m / %lld * %lld + cg;\n",
             (long long)Mg, (long long)Cg);
    w_puts(w, "        double acc = 0;\n");
    w_printf(w, "        for (int64_t op = 0; op < %lld; op++) {\n", (long long)OP);
    w_puts(w, "            const int64_t o[3] = {op / (out[1] * out[2]), op / out[2] % out[1], op % out[2]};\n");
    w_puts(w, "            int64_t ip = 0, ok = 1;\n");
    w_puts(w, "            for (int a = 0; a < 3 && ok; a++) {\n");
    w_puts(w, "                const int64_t r = o[a] * st[a] - pd[a] + tt[a] * dl[a];\n");
    w_puts(w, "                ok = r >= 0 && r < in[a];\n");
    w_puts(w, "                ip = ip * in[a] + (ok ? r : 0);\n");
    w_puts(w, "            }\n");
    w_puts(w, "            if (!ok) continue;\n");
    w_printf(w, "            for (int64_t nb = 0; nb < %lld; nb++)\n", (long long)N);
    w_printf(w, "                acc += (double)dy[(nb * %lld + m) * %lld + op] * x[(nb * %lld + ch) * %lld + ip];\n", (long long)M,
             (long long)OP, (long long)C, (long long)IP);
    w_puts(w, "        }\n");
    w_printf(w, "        dw[i] = (%s)acc;\n    }\n}\n\n", T);
    w_printf(&c->body, "    GC_LAUNCH(k%d, %lld, stream, (%s, %s, %s));\n", kn, (long long)total, cu_ptr(c, dW), cu_ptr(c, X),
             cu_ptr(c, dY));
    return 0;
}

/* MaxPoolGrad(X, dY): dX[p] = sum of dY[o] over the windows o reaching p
 * whose first maximum (scan order; a NaN maximum yields to any later
 * number) is p. */
static int emit_maxpool_grad(Cu *c, const Node *n, Diag *d)
{
    (void)d;
    const Value *X = n->in[0], *dY = n->in[1], *dX = n->out[0];
    const int64_t total = ir_numel(&dX->shape);
    if (total == 0) return 0;
    GradGeo3 g;
    geo3(n, &g);
    const int64_t IP = g.in[0] * g.in[1] * g.in[2], OP = g.out[0] * g.out[1] * g.out[2];
    const char *T = cfam_ctype(dX->dtype);
    Writer *w = &c->kern;
    const int kn = cu_kernel_begin(c, n);
    w_printf(w, "GC_KERNEL k%d(%s *dx, const %s *x, const %s *dy)\n{\n    GC_FOR_EACH(i, %lld) {\n", kn, T, T, T, (long long)total);
    geo_consts(w, &g);
    plane_pos(w, g.in);
    w_printf(w, "        const %s *xq = x + q * %lld;\n", T, (long long)IP);
    w_puts(w, "        double acc = 0;\n");
    taps_reaching(w);
    w_puts(w, "            const int64_t o[3] = {op / (out[1] * out[2]), op / out[2] % out[1], op % out[2]};\n");
    w_printf(w, "            %s best = 0;\n            int64_t arg = -1;\n", T);
    w_puts(w, "            for (int64_t u = 0; u < kk[0] * kk[1] * kk[2]; u++) {\n");
    w_puts(w, "                const int64_t uu[3] = {u / (kk[1] * kk[2]), u / kk[2] % kk[1], u % kk[2]};\n");
    w_puts(w, "                int64_t off = 0, in_x = 1;\n");
    w_puts(w, "                for (int a = 0; a < 3 && in_x; a++) {\n");
    w_puts(w, "                    const int64_t r = o[a] * st[a] - pd[a] + uu[a] * dl[a];\n");
    w_puts(w, "                    in_x = r >= 0 && r < in[a];\n");
    w_puts(w, "                    off = off * in[a] + (in_x ? r : 0);\n");
    w_puts(w, "                }\n");
    w_puts(w, "                if (in_x && (arg < 0 || xq[off] > best || (best != best && xq[off] == xq[off]))) {\n");
    w_puts(w, "                    best = xq[off];\n                    arg = off;\n                }\n");
    w_puts(w, "            }\n");
    w_printf(w, "            if (arg == pp) acc += dy[q * %lld + op];\n", (long long)OP);
    w_puts(w, "        }\n");
    w_printf(w, "        dx[i] = (%s)acc;\n    }\n}\n\n", T);
    w_printf(&c->body, "    GC_LAUNCH(k%d, %lld, stream, (%s, %s, %s));\n", kn, (long long)total, cu_ptr(c, dX), cu_ptr(c, X),
             cu_ptr(c, dY));
    return 0;
}

/* AveragePoolGrad(dY): dX[p] = sum over the windows o reaching p of dY[o]
 * divided by the window's divisor (gcrt_avgpool's: with count_include_pad
 * the pads inside the padded input count). */
static int emit_avgpool_grad(Cu *c, const Node *n, Diag *d)
{
    (void)d;
    const Value *dY = n->in[0], *dX = n->out[0];
    const int64_t total = ir_numel(&dX->shape);
    if (total == 0) return 0;
    GradGeo3 g;
    geo3(n, &g);
    for (int a = 0; a < 3; a++) g.dl[a] = 1;
    const int64_t OP = g.out[0] * g.out[1] * g.out[2];
    const int cip = n->attrs[AVGPOOLGRAD_COUNT_INCLUDE_PAD].i != 0;
    const char *T = cfam_ctype(dX->dtype);
    Writer *w = &c->kern;
    const int kn = cu_kernel_begin(c, n);
    w_printf(w, "GC_KERNEL k%d(%s *dx, const %s *dy)\n{\n    GC_FOR_EACH(i, %lld) {\n", kn, T, T, (long long)total);
    geo_consts(w, &g);
    w_printf(w, "        const int64_t pe[3] = {%lld, %lld, %lld};\n", (long long)g.pe[0], (long long)g.pe[1], (long long)g.pe[2]);
    plane_pos(w, g.in);
    w_puts(w, "        double acc = 0;\n");
    taps_reaching(w);
    w_puts(w, "            const int64_t o[3] = {op / (out[1] * out[2]), op / out[2] % out[1], op % out[2]};\n");
    w_puts(w, "            int64_t cnt = 1;\n");
    w_puts(w, "            for (int a = 0; a < 3; a++) {\n");
    w_puts(w, "                const int64_t s = o[a] * st[a] - pd[a], e = s + kk[a];\n");
    if (cip) w_puts(w, "                cnt *= (e < in[a] + pe[a] ? e : in[a] + pe[a]) - s;\n");
    else w_puts(w, "                cnt *= (e < in[a] ? e : in[a]) - (s < 0 ? 0 : s);\n");
    w_puts(w, "            }\n");
    if (!cip) w_puts(w, "            (void)pe;\n");
    w_printf(w, "            acc += (double)dy[q * %lld + op] / (double)cnt;\n", (long long)OP);
    w_puts(w, "        }\n");
    w_printf(w, "        dx[i] = (%s)acc;\n    }\n}\n\n", T);
    w_printf(&c->body, "    GC_LAUNCH(k%d, %lld, stream, (%s, %s));\n", kn, (long long)total, cu_ptr(c, dX), cu_ptr(c, dY));
    return 0;
}

/* SoftmaxGrad: dX = Y * (dY - sum(dY * Y)); LogSoftmaxGrad: dX = dY -
 * exp(Y) * sum(dY); one thread per row along the axis (the row's sum read
 * before its first write, so dX may be dY's buffer). */
static int emit_softmax_grad(Cu *c, const Node *n, Diag *d)
{
    const Value *dY = n->in[0], *Y = n->in[1], *dX = n->out[0];
    int64_t outer, len, inner;
    if (ir_softmax_grad_split(n, &outer, &len, &inner, d)) return -1;
    if (outer * len * inner == 0) return 0;
    const int lg = n->op == OP_LogSoftmaxGrad;
    const char *T = cfam_ctype(dX->dtype);
    Writer *w = &c->kern;
    const int kn = cu_kernel_begin(c, n);
    w_printf(w, "GC_KERNEL k%d(%s *dx, const %s *dy, const %s *y)\n{\n    GC_FOR_EACH(r, %lld) {\n", kn, T, T, T,
             (long long)(outer * inner));
    w_printf(w, "        const int64_t base = r / %lld * %lld + r %% %lld;\n", (long long)inner, (long long)(len * inner),
             (long long)inner);
    w_puts(w, "        double s = 0;\n");
    if (lg) w_printf(w, "        for (int64_t j = 0; j < %lld; j++) s += (double)dy[base + j * %lld];\n", (long long)len, (long long)inner);
    else
        w_printf(w, "        for (int64_t j = 0; j < %lld; j++) s += (double)dy[base + j * %lld] * (double)y[base + j * %lld];\n",
                 (long long)len, (long long)inner, (long long)inner);
    w_printf(w, "        for (int64_t j = 0; j < %lld; j++) {\n", (long long)len);
    w_printf(w, "            const int64_t e = base + j * %lld;\n", (long long)inner);
    if (lg) w_printf(w, "            dx[e] = (%s)((double)dy[e] - exp((double)y[e]) * s);\n", T);
    else w_printf(w, "            dx[e] = (%s)((double)y[e] * ((double)dy[e] - s));\n", T);
    w_puts(w, "        }\n    }\n}\n\n");
    w_printf(&c->body, "    GC_LAUNCH(k%d, %lld, stream, (%s, %s, %s));\n", kn, (long long)(outer * inner), cu_ptr(c, dX),
             cu_ptr(c, dY), cu_ptr(c, Y));
    return 0;
}

/* ---- losses ---------------------------------------------------------------------------------- */

static int loss_check(const Node *n, Diag *d)
{
    DType t = n->in[0]->dtype, ti = n->in[1]->dtype;
    if (!(cu_is_float(t) || t == DT_F16 || t == DT_BF16) || (ti != DT_I32 && ti != DT_I64))
        return diag_node_error(d, n, "the CUDA backend's %s takes float scores and i32/i64 targets", ir_op(n->op)->name);
    return 0;
}

/* Element expression "P[IDX]" of dtype t loaded as double into w. */
static void load_d(Writer *w, DType t, const char *p, const char *idx)
{
    char e[128];
    snprintf(e, sizeof e, "%s[%s]", p, idx);
    w_puts(w, "(double)");
    cu_load(w, t, e);
}

/* NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss over the [N, C, D]
 * view of the scores (the C backend's rules, ir/ops/loss.c): for each (i,
 * j) the target t; an ignored one adds no loss and no weight, one outside
 * [0, C) gives NaN, others -w[t] * (x[i, t, j] - lse), lse the stable
 * log-sum-exp over C for the softmax loss (0 for NLL), log_prob = x - lse.
 * With reduction none one thread per (i, j); sum and mean fold every (i,
 * j) in order in one thread, in double (deterministic). */
static int emit_loss(Cu *c, const Node *n, Diag *d)
{
    (void)d;
    const Value *X = n->in[0], *Tg = n->in[1], *Wt = n->n_in > 2 ? n->in[2] : NULL, *Y = n->out[0];
    const int sm = n->op == OP_SoftmaxCrossEntropyLoss;
    const Value *LP = sm && n->n_out > 1 ? n->out[1] : NULL;
    const char *red = n->attrs[LOSS_REDUCTION].s;
    const int none = strcmp(red, "none") == 0, mean = strcmp(red, "mean") == 0;
    const AttrVal *ii = &n->attrs[LOSS_IGNORE_INDEX];
    const Shape *xs = &X->shape;
    int64_t N = xs->dims[0], C = xs->dims[1], D = 1;
    for (int k = 2; k < xs->rank; k++) D *= xs->dims[k];
    if (none && N * D == 0) return 0;
    const DType t = X->dtype;
    const char *T = cfam_ctype(t);
    Writer *w = &c->kern;
    const int kn = cu_kernel_begin(c, n);
    w_printf(w, "GC_KERNEL k%d(%s *y, const %s *x, const %s *tg", kn, T, T, cfam_ctype(Tg->dtype));
    if (Wt) w_printf(w, ", const %s *wt", T);
    if (LP) w_printf(w, ", %s *lp", T);
    w_printf(w, ")\n{\n    GC_FOR_EACH(s, %lld) {\n", (long long)(none ? N * D : 1));
    if (!none) w_puts(w, "        double num = 0;\n");
    if (mean) w_puts(w, "        double den = 0;\n");
    if (none) w_puts(w, "        for (int64_t e = s; e < s + 1; e++) {\n");
    else w_printf(w, "        for (int64_t e = s; e < %lld; e++) {\n", (long long)(N * D));
    w_printf(w, "            const int64_t base = e / %lld * %lld + e %% %lld;\n", (long long)D, (long long)(C * D), (long long)D);
    char idx[64];
    snprintf(idx, sizeof idx, "base + k * %lld", (long long)D);
    if (sm) {
        w_puts(w, "            double mx = -INFINITY, sum = 0;\n");
        w_printf(w, "            for (int64_t k = 0; k < %lld; k++) {\n                const double v = ", (long long)C);
        load_d(w, t, "x", idx);
        w_puts(w, ";\n                if (v != v || v > mx) mx = v;\n            }\n");
        w_printf(w, "            for (int64_t k = 0; k < %lld; k++) sum += exp(", (long long)C);
        load_d(w, t, "x", idx);
        w_puts(w, " - mx);\n            const double lse = mx + log(sum);\n");
        if (LP) {
            char el[96], val[32];
            snprintf(el, sizeof el, "lp[%s]", idx);
            w_printf(w, "            for (int64_t k = 0; k < %lld; k++) {\n                const double v = ", (long long)C);
            load_d(w, t, "x", idx);
            w_puts(w, ";\n                ");
            snprintf(val, sizeof val, "v - lse");
            cu_store(w, t, el, val);
            w_puts(w, "            }\n");
        }
    }
    w_puts(w, "            const int64_t t = (int64_t)tg[e];\n            double wv = 0, lv = 0;\n");
    if (ii->set) {
        if (ii->i == INT64_MIN) w_puts(w, "            if (t == INT64_MIN) {\n");
        else w_printf(w, "            if (t == %lldLL) {\n", (long long)ii->i);
        w_printf(w, "                /* ignored: no loss, no weight */\n            } else if (t < 0 || t >= %lld) {\n", (long long)C);
    } else {
        w_printf(w, "            if (t < 0 || t >= %lld) {\n", (long long)C);
    }
    w_puts(w, "                lv = NAN;\n                wv = NAN;\n            } else {\n");
    if (Wt) {
        w_puts(w, "                wv = ");
        load_d(w, t, "wt", "t");
        w_puts(w, ";\n");
    } else {
        w_puts(w, "                wv = 1.0;\n");
    }
    char xt[64];
    snprintf(xt, sizeof xt, "base + t * %lld", (long long)D);
    w_puts(w, "                lv = -wv * (");
    load_d(w, t, "x", xt);
    w_printf(w, "%s);\n            }\n", sm ? " - lse" : "");
    if (none) {
        w_puts(w, "            ");
        cu_store(w, Y->dtype, "y[e]", "lv");
        w_puts(w, "            (void)wv;\n");
    } else {
        w_puts(w, "            num += lv;\n");
        w_puts(w, mean ? "            den += wv;\n" : "            (void)wv;\n");
    }
    w_puts(w, "        }\n");
    if (!none) {
        w_puts(w, "        ");
        cu_store(w, Y->dtype, "y[0]", mean ? "num / den" : "num");
    }
    w_puts(w, "    }\n}\n\n");
    Writer *b = &c->body;
    w_printf(b, "    GC_LAUNCH(k%d, %lld, stream, (%s, %s, %s", kn, (long long)(none ? N * D : 1), cu_ptr(c, Y), cu_ptr(c, X),
             cu_ptr(c, Tg));
    if (Wt) w_printf(b, ", %s", cu_ptr(c, Wt));
    if (LP) w_printf(b, ", %s", cu_ptr(c, LP));
    w_puts(b, "));\n");
    return 0;
}

/* ---- normalizations: BatchNormalization in training mode, the norm grads ----------------------- */

static int norm_check(const Node *n, Diag *d)
{
    for (int i = 0; i < n->n_in; i++)
        if (n->in[i] && n->in[i]->dtype != n->in[0]->dtype)
            return diag_node_error(d, n, "the CUDA backend's %s takes one dtype for all inputs", ir_op(n->op)->name);
    for (int j = 0; j < n->n_out; j++)
        if (n->out[j] && n->out[j]->dtype != n->in[0]->dtype)
            return diag_node_error(d, n, "the CUDA backend's %s takes one dtype for all outputs", ir_op(n->op)->name);
    if (!cu_is_float(n->in[0]->dtype) || n->in[0]->shape.rank < (n->op == OP_LayerNormalizationGrad ? 1 : 2))
        return diag_node_error(d, n, "the CUDA backend computes %s in f32 and f64 only", ir_op(n->op)->name);
    return 0;
}

/* Into a per-channel kernel (channel c of X[N, C, Sz]): mu and var, the
 * batch statistics (population variance), in double. */
static void channel_stats(Writer *w, int64_t N, int64_t C, int64_t Sz)
{
    w_printf(w, "        const double cnt = %lld.0;\n        double mu = 0, var = 0;\n", (long long)(N * Sz));
    w_printf(w, "        for (int64_t e = 0; e < %lld; e++) mu += (double)x[(e / %lld * %lld + c) * %lld + e %% %lld];\n",
             (long long)(N * Sz), (long long)Sz, (long long)C, (long long)Sz, (long long)Sz);
    w_puts(w, "        mu /= cnt;\n");
    w_printf(w, "        for (int64_t e = 0; e < %lld; e++) {\n", (long long)(N * Sz));
    w_printf(w, "            const double dv = (double)x[(e / %lld * %lld + c) * %lld + e %% %lld] - mu;\n", (long long)Sz,
             (long long)C, (long long)Sz, (long long)Sz);
    w_puts(w, "            var += dv * dv;\n        }\n        var /= cnt;\n");
}

/* A per-channel kernel's loop over channel c's elements: `const int64_t p`
 * their flat index (the body follows, then "}\n"). */
static void channel_loop(Writer *w, int64_t N, int64_t C, int64_t Sz)
{
    w_printf(w, "        for (int64_t e = 0; e < %lld; e++) {\n", (long long)(N * Sz));
    w_printf(w, "            const int64_t p = (e / %lld * %lld + c) * %lld + e %% %lld;\n", (long long)Sz, (long long)C,
             (long long)Sz, (long long)Sz);
}

static int64_t spatial(const Shape *s)
{
    int64_t p = 1;
    for (int k = 2; k < s->rank; k++) p *= s->dims[k];
    return p;
}

/* BatchNormalization in training mode (gcrt_batchnorm_train's rules): one
 * thread per channel: the batch statistics, the running mean and variance
 * updated with the momentum, y = (x - mu) * scale / sqrt(var + eps) + b. */
int cu_emit_batchnorm_train(Cu *c, const Node *n)
{
    const Value *X = n->in[0], *Y = n->out[0], *Rm = n->n_out > 1 ? n->out[1] : NULL, *Rv = n->n_out > 2 ? n->out[2] : NULL;
    const int64_t N = X->shape.dims[0], C = X->shape.dims[1], Sz = spatial(&X->shape);
    if (C == 0) return 0;
    const char *T = cfam_ctype(X->dtype);
    char eps[48], mom[48];
    cfam_lit(eps, sizeof eps, DT_F64, n->attrs[BN_EPSILON].f);
    cfam_lit(mom, sizeof mom, DT_F64, n->attrs[BN_MOMENTUM].f);
    Writer *w = &c->kern;
    const int kn = cu_kernel_begin(c, n);
    w_printf(w, "GC_KERNEL k%d(%s *y, %s *rm, %s *rv, const %s *x, const %s *sc, const %s *bb, const %s *mean, const %s *vr)\n{\n", kn,
             T, T, T, T, T, T, T, T);
    w_printf(w, "    GC_FOR_EACH(c, %lld) {\n", (long long)C);
    channel_stats(w, N, C, Sz);
    w_printf(w, "        if (rm) rm[c] = (%s)((double)mean[c] * %s + mu * (1.0 - %s));\n", T, mom, mom);
    w_printf(w, "        if (rv) rv[c] = (%s)((double)vr[c] * %s + var * (1.0 - %s));\n", T, mom, mom);
    w_printf(w, "        const double a = (double)sc[c] / sqrt(var + %s);\n", eps);
    channel_loop(w, N, C, Sz);
    w_printf(w, "            y[p] = (%s)(((double)x[p] - mu) * a + bb[c]);\n        }\n    }\n}\n\n", T);
    w_printf(&c->body, "    GC_LAUNCH(k%d, %lld, stream, (%s, %s, %s, %s, %s, %s, %s, %s));\n", kn, (long long)C, cu_ptr(c, Y),
             Rm ? cu_ptr(c, Rm) : "NULL", Rv ? cu_ptr(c, Rv) : "NULL", cu_ptr(c, X), cu_ptr(c, n->in[1]), cu_ptr(c, n->in[2]),
             cu_ptr(c, n->in[3]), cu_ptr(c, n->in[4]));
    return 0;
}

/* Output j of a grad node if present and not empty. */
static const Value *opt_out(const Node *n, int j)
{
    const Value *v = j < n->n_out ? n->out[j] : NULL;
    return v && ir_numel(&v->shape) > 0 ? v : NULL;
}

/* BatchNormalizationGrad(dY, X, scale) -> dX, dScale, dBias
 * (gcrt_batchnorm_grad's rules): one thread per channel. */
static int emit_batchnorm_grad(Cu *c, const Node *n, Diag *d)
{
    (void)d;
    const Value *dY = n->in[0], *X = n->in[1], *Sc = n->in[2], *dX = n->out[0], *dS = opt_out(n, 1), *dB = opt_out(n, 2);
    const int64_t N = X->shape.dims[0], C = X->shape.dims[1], Sz = spatial(&X->shape);
    if (C == 0) return 0;
    const char *T = cfam_ctype(X->dtype);
    char eps[48];
    cfam_lit(eps, sizeof eps, DT_F64, n->attrs[BNGRAD_EPSILON].f);
    Writer *w = &c->kern;
    const int kn = cu_kernel_begin(c, n);
    w_printf(w, "GC_KERNEL k%d(%s *dx, %s *ds, %s *db, const %s *dy, const %s *x, const %s *sc)\n{\n", kn, T, T, T, T, T, T);
    w_printf(w, "    GC_FOR_EACH(c, %lld) {\n", (long long)C);
    channel_stats(w, N, C, Sz);
    w_printf(w, "        const double rs = 1.0 / sqrt(var + %s);\n        double sdy = 0, sdyx = 0;\n", eps);
    channel_loop(w, N, C, Sz);
    w_puts(w, "            sdy += (double)dy[p];\n            sdyx += (double)dy[p] * ((double)x[p] - mu) * rs;\n        }\n");
    w_printf(w, "        if (ds) ds[c] = (%s)sdyx;\n        if (db) db[c] = (%s)sdy;\n", T, T);
    w_puts(w, "        const double a = (double)sc[c] * rs;\n");
    channel_loop(w, N, C, Sz);
    w_printf(w, "            dx[p] = (%s)(a * ((double)dy[p] - sdy / cnt - ((double)x[p] - mu) * rs * sdyx / cnt));\n", T);
    w_puts(w, "        }\n    }\n}\n\n");
    w_printf(&c->body, "    GC_LAUNCH(k%d, %lld, stream, (%s, %s, %s, %s, %s, %s));\n", kn, (long long)C,
             ir_numel(&dX->shape) ? cu_ptr(c, dX) : "NULL", dS ? cu_ptr(c, dS) : "NULL", dB ? cu_ptr(c, dB) : "NULL",
             cu_ptr(c, dY), cu_ptr(c, X), cu_ptr(c, Sc));
    return 0;
}

/* LayerNormalizationGrad's scratch: each row's mean and 1/std (doubles). */
static size_t lngrad_workspace(const Node *n)
{
    int64_t outer, inner;
    if (ir_layernorm_grad_split(n, &outer, &inner, NULL) < 0) return 0;
    return (size_t)outer * 16;
}

/* LayerNormalizationGrad(dY, X, Scale) -> dX, dScale, dBias
 * (gcrt_layernorm_grad's rules): one thread per row computes its
 * statistics (kept in the workspace) and dX; then one thread per column
 * sums dScale and dBias over the rows in order. */
static int emit_layernorm_grad(Cu *c, const Node *n, Diag *d)
{
    const Value *dY = n->in[0], *X = n->in[1], *Sc = n->in[2], *dX = n->out[0], *dS = opt_out(n, 1), *dB = opt_out(n, 2);
    int64_t outer, inner;
    if (ir_layernorm_grad_split(n, &outer, &inner, d) < 0) return -1;
    if (outer * inner == 0) return 0;
    const char *T = cfam_ctype(X->dtype);
    char eps[48], ws[64];
    cfam_lit(eps, sizeof eps, DT_F64, n->attrs[LNGRAD_EPSILON].f);
    GC_ASSERT(n->ws_bytes >= (size_t)outer * 16 && n->ws_offset >= 0);
    snprintf(ws, sizeof ws, "(double *)(void *)(arena + %lld)", (long long)n->ws_offset);
    Writer *w = &c->kern;
    int kn = cu_kernel_begin(c, n);
    w_printf(w, "GC_KERNEL k%d(%s *dx, double *st, const %s *dy, const %s *x, const %s *sc)\n{\n", kn, T, T, T, T);
    w_printf(w, "    GC_FOR_EACH(o, %lld) {\n", (long long)outer);
    w_printf(w, "        const %s *xr = x + o * %lld, *dyr = dy + o * %lld;\n", T, (long long)inner, (long long)inner);
    w_puts(w, "        double mu = 0, var = 0, sg = 0, sgx = 0;\n");
    w_printf(w, "        for (int64_t j = 0; j < %lld; j++) mu += (double)xr[j];\n        mu /= %lld.0;\n", (long long)inner,
             (long long)inner);
    w_printf(w, "        for (int64_t j = 0; j < %lld; j++) var += ((double)xr[j] - mu) * ((double)xr[j] - mu);\n", (long long)inner);
    w_printf(w, "        var /= %lld.0;\n        const double rs = 1.0 / sqrt(var + %s);\n", (long long)inner, eps);
    w_puts(w, "        st[2 * o] = mu;\n        st[2 * o + 1] = rs;\n");
    w_printf(w, "        for (int64_t j = 0; j < %lld; j++) {\n", (long long)inner);
    w_puts(w, "            const double g = (double)dyr[j] * (double)sc[j];\n");
    w_puts(w, "            sg += g;\n            sgx += g * ((double)xr[j] - mu) * rs;\n        }\n");
    w_printf(w, "        sg /= %lld.0;\n        sgx /= %lld.0;\n", (long long)inner, (long long)inner);
    w_printf(w, "        for (int64_t j = 0; j < %lld; j++)\n", (long long)inner);
    w_printf(w, "            dx[o * %lld + j] = (%s)(rs * ((double)dyr[j] * (double)sc[j] - sg - ((double)xr[j] - mu) * rs * sgx));\n",
             (long long)inner, T);
    w_puts(w, "    }\n}\n\n");
    w_printf(&c->body, "    GC_LAUNCH(k%d, %lld, stream, (%s, %s, %s, %s, %s));\n", kn, (long long)outer, cu_ptr(c, dX), ws,
             cu_ptr(c, dY), cu_ptr(c, X), cu_ptr(c, Sc));
    if (!dS && !dB) return 0;
    kn = cu_kernel_begin(c, n);
    w_puts(w, "/* its dScale and dBias: sums over the rows, one thread per column */\n");
    w_printf(w, "GC_KERNEL k%d(%s *ds, %s *db, const double *st, const %s *dy, const %s *x)\n{\n", kn, T, T, T, T);
    w_printf(w, "    GC_FOR_EACH(j, %lld) {\n        double s = 0, b = 0;\n", (long long)inner);
    w_printf(w, "        for (int64_t o = 0; o < %lld; o++) {\n", (long long)outer);
    w_printf(w, "            const int64_t p = o * %lld + j;\n", (long long)inner);
    w_puts(w, "            s += (double)dy[p] * ((double)x[p] - st[2 * o]) * st[2 * o + 1];\n            b += (double)dy[p];\n");
    w_printf(w, "        }\n        if (ds) ds[j] = (%s)s;\n        if (db) db[j] = (%s)b;\n    }\n}\n\n", T, T);
    w_printf(&c->body, "    GC_LAUNCH(k%d, %lld, stream, (%s, %s, %s, %s, %s));\n", kn, (long long)inner, dS ? cu_ptr(c, dS) : "NULL",
             dB ? cu_ptr(c, dB) : "NULL", ws, cu_ptr(c, dY), cu_ptr(c, X));
    return 0;
}

#define GATHER "a generated kernel, one thread per element of the result (gather form: deterministic)"

const CudaEntry cuda_grad_entries[] = {
    {OP_ConvGradData, grad_check, emit_conv_grad_data, NULL, GATHER, 0, 0},
    {OP_ConvGradFilter, grad_check, emit_conv_grad_filter, NULL, GATHER, 0, 0},
    {OP_MaxPoolGrad, grad_check, emit_maxpool_grad, NULL, GATHER, 0, 0},
    {OP_AveragePoolGrad, grad_check, emit_avgpool_grad, NULL, GATHER, 0, 0},
    {OP_SoftmaxGrad, grad_check, emit_softmax_grad, NULL, "a generated kernel, one thread per row", 0, 0},
    {OP_LogSoftmaxGrad, grad_check, emit_softmax_grad, NULL, "a generated kernel, one thread per row", 0, 0},
    {OP_NegativeLogLikelihoodLoss, loss_check, emit_loss, NULL, "a generated kernel, one thread per element (none) or one in all", 1, 0},
    {OP_SoftmaxCrossEntropyLoss, loss_check, emit_loss, NULL, "a generated kernel, one thread per element (none) or one in all", 1, 0},
    {OP_BatchNormalizationGrad, norm_check, emit_batchnorm_grad, NULL, "a generated kernel, one thread per channel", 0, 0},
    {OP_LayerNormalizationGrad, norm_check, emit_layernorm_grad, lngrad_workspace,
     "generated kernels: one thread per row (dX; row statistics in the workspace), one per column (dScale, dBias)", 0, 0},
    {-1, NULL, NULL, NULL, NULL, 0, 0},
};
