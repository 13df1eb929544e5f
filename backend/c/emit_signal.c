/* emit_signal.c — C emitters for the signal family.
 *
 * Einsum becomes one inline loop nest built from the op's EinsumPlan
 * (ir/ops/signal.h): output loops outside, summed loops inside, every
 * operand addressed by literal strides; the sum runs in double for float
 * dtypes and in int64_t for integers (elements go through cgen_load /
 * cgen_store, so every numeric dtype works). GridSample calls the runtime
 * (gcrt_grid_sample_f32/_f64). The windows are a loop over the cosine
 * formula evaluated in double, stored in the output dtype. DFT and STFT
 * (f32, f64) share one strided O(n^2) transform loop nest (DftLines) with
 * twiddles and sums in double. MelWeightMatrix has only constant inputs:
 * folding normally removes it; otherwise its emitter runs the reference
 * eval at compile time and stores the nonzeros.
 */
#include "cgen.h"
#include "../../ir/ops/signal.h"
#include "../../ir/ops/signal_attrs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPR_CAP 1024

/* Writes "name[off]" offset text for operand op of the plan. */
static void plan_offset(const EinsumPlan *p, int op, const char *const *lv, char *buf)
{
    size_t k = (size_t)snprintf(buf, EXPR_CAP, "0");
    for (int l = 0; l < p->n_loops; l++)
        if (p->stride[op][l] && k < EXPR_CAP)
            k += (size_t)snprintf(buf + k, EXPR_CAP - k, " + %s * %lld", lv[l], (long long)p->stride[op][l]);
}

static int emit_einsum(Cgen *c, const Node *n, Diag *d)
{
    Writer *w = cgen_w(c);
    EinsumPlan p;
    if (signal_einsum_plan(n, &p, d)) return -1;
    const Value *y = n->out[0];
    DType t = y->dtype;
    if (ir_numel(&y->shape) == 0) return 0;
    const char *lv[EINSUM_MAX_LABELS];
    for (int l = 0; l < p.n_loops; l++) lv[l] = cgen_tmp(c, "l");
    const char *acc = cgen_tmp(c, "acc");
    const char *at = ir_dtype_is_float(t) ? "double" : "int64_t";
    w_line(w, "{");
    w->indent++;
    if (p.n_loops) {
        w_printf(w, "int64_t ");
        for (int l = 0; l < p.n_loops; l++) w_printf(w, "%s%s", l ? ", " : "", lv[l]);
        w_printf(w, ";\n");
    }
    int depth = w->indent;
    for (int l = 0; l < p.n_out; l++) {
        w_line(w, "for (%s = 0; %s < %lld; %s++)", lv[l], lv[l], (long long)p.size[l], lv[l]);
        w->indent++;
    }
    w_line(w, "{");
    w->indent++;
    w_line(w, "%s %s = 0;", at, acc);
    int inner = w->indent;
    for (int l = p.n_out; l < p.n_loops; l++) {
        w_line(w, "for (%s = 0; %s < %lld; %s++)", lv[l], lv[l], (long long)p.size[l], lv[l]);
        w->indent++;
    }
    w_printf(w, "%s += ", acc);
    for (int op = 0; op < p.n_ops; op++) {
        char off[EXPR_CAP], ptr[256];
        plan_offset(&p, op, lv, off);
        snprintf(ptr, sizeof ptr, "%s", cgen_ptr(c, n->in[op]));
        w_printf(w, "%s(%s)(", op ? " * " : "", at);
        cgen_load(w, n->in[op]->dtype, ptr, off);
        w_printf(w, ")");
    }
    w_printf(w, ";\n");
    w->indent = inner;
    char oidx[EXPR_CAP], val[128];
    size_t k = (size_t)snprintf(oidx, sizeof oidx, "0");
    int64_t st = 1;
    for (int l = p.n_out - 1; l >= 0; l--) {
        if (k < sizeof oidx) k += (size_t)snprintf(oidx + k, sizeof oidx - k, " + %s * %lld", lv[l], (long long)st);
        st *= p.size[l];
    }
    snprintf(val, sizeof val, "(%s)%s", cgen_ctype(cgen_compute_type(t)), acc);
    cgen_store(w, t, cgen_ptr(c, y), oidx, val);
    w->indent--;
    w_line(w, "}");
    w->indent = depth - 1;
    w_line(w, "}");
    return 0;
}

static int emit_gridsample(Cgen *c, const Node *n, Diag *d)
{
    const Value *x = n->in[0], *g = n->in[1], *y = n->out[0];
    if (x->dtype != DT_F32 && x->dtype != DT_F64)
        return diag_node_error(d, n, "the C backend supports GridSample only for f32 and f64, got %s", ir_dtype_name(x->dtype));
    if (ir_numel(&y->shape) == 0) return 0;
    const char *mode = n->attrs[GRID_SAMPLE_MODE].s, *pad = n->attrs[GRID_SAMPLE_PADDING_MODE].s;
    int m = !strcmp(mode, "nearest") ? 1 : !strcmp(mode, "bicubic") ? 2 : 0;
    int pm = !strcmp(pad, "border") ? 1 : !strcmp(pad, "reflection") ? 2 : 0;
    char px[256], pg[256];
    snprintf(px, sizeof px, "%s", cgen_ptr(c, x));
    snprintf(pg, sizeof pg, "%s", cgen_ptr(c, g));
    w_line(cgen_w(c), "gcrt_grid_sample_%s(%lld, %lld, %lld, %lld, %lld, %lld, %d, %d, %d, %s, %s, %s);",
           x->dtype == DT_F32 ? "f32" : "f64", (long long)x->shape.dims[0], (long long)x->shape.dims[1],
           (long long)x->shape.dims[2], (long long)x->shape.dims[3], (long long)y->shape.dims[2], (long long)y->shape.dims[3], m,
           pm, n->attrs[GRID_SAMPLE_ALIGN_CORNERS].i != 0, px, pg, cgen_ptr(c, y));
    return 0;
}

/* The window of a runtime size: its extent is set from the size input, and
 * N = size (periodic) or size - 1 is computed at run time. */
static int emit_window_dyn(Cgen *c, const Node *n, double a0, double a1, double a2)
{
    Writer *w = cgen_w(c);
    const Value *y = n->out[0];
    char sz[256], len[64], val[512];
    snprintf(sz, sizeof sz, "(int64_t)%s[0]", cgen_ptr(c, n->in[0]));
    cgen_set_dim(c, y, 0, sz);
    CgenProd p = cgen_dims_prod(&y->shape, 0, 1);
    cgen_prod_str(&p, len, sizeof len);
    const char *i = cgen_tmp(c, "i"), *nn = cgen_tmp(c, "n");
    const char *ct = cgen_ctype(cgen_compute_type(y->dtype));
    w_line(w, "{");
    w->indent++;
    w_line(w, "int64_t %s;", i);
    w_line(w, "double %s = (double)(%s)%s;", nn, len, n->attrs[WINDOW_PERIODIC].i ? "" : " - 1.0");
    snprintf(val, sizeof val,
             "%s > 0 ? (%s)(%.17g - %.17g * cos(6.283185307179586 * (double)%s / %s) + %.17g * cos(12.566370614359172 * (double)%s / %s)) "
             ": (%s)%.17g",
             nn, ct, a0, a1, i, nn, a2, i, nn, ct, a0 - a1 + a2);
    w_line(w, "for (%s = 0; %s < %s; %s++)", i, i, len, i);
    w->indent++;
    cgen_store(w, y->dtype, cgen_ptr(c, y), i, val);
    w->indent -= 2;
    w_line(w, "}");
    return 0;
}

/* a0 - a1 cos(2 pi i / N) + a2 cos(4 pi i / N) in double, stored in y's dtype. */
static int emit_window(Cgen *c, const Node *n, double a0, double a1, double a2)
{
    Writer *w = cgen_w(c);
    const Value *y = n->out[0];
    if (y->shape.sym[0]) return emit_window_dyn(c, n, a0, a1, a2);
    int64_t size = y->shape.dims[0];
    if (size == 0) return 0;
    int64_t N = n->attrs[WINDOW_PERIODIC].i ? size : size - 1;
    const char *i = cgen_tmp(c, "i");
    char val[256];
    snprintf(val, sizeof val,
             "(%s)(%.17g - %.17g * cos(6.283185307179586 * (double)%s / %lld.0) + %.17g * cos(12.566370614359172 * (double)%s / %lld.0))",
             cgen_ctype(cgen_compute_type(y->dtype)), a0, a1, i, (long long)(N > 0 ? N : 1), a2, i, (long long)(N > 0 ? N : 1));
    w_line(w, "{");
    w->indent++;
    w_line(w, "int64_t %s;", i);
    w_line(w, "for (%s = 0; %s < %lld; %s++)", i, i, (long long)size, i);
    w->indent++;
    if (N > 0) {
        cgen_store(w, y->dtype, cgen_ptr(c, y), i, val);
    } else {
        snprintf(val, sizeof val, "(%s)%.17g", cgen_ctype(cgen_compute_type(y->dtype)), a0 - a1 + a2);
        cgen_store(w, y->dtype, cgen_ptr(c, y), i, val);
    }
    w->indent -= 2;
    w_line(w, "}");
    return 0;
}

static int emit_window_op(Cgen *c, const Node *n, Diag *d)
{
    (void)d;
    double a[3];
    signal_window_coeffs(n, a);
    return emit_window(c, n, a[0], a[1], a[2]);
}

/* Strided description of a batch of transform lines: line (o, i) reads
 * element j at (o*xo + i*xi + j*xj) * comps and writes bin k (re, im) at
 * (o*yo + i*yi + k*yk) * 2. */
typedef struct DftLines {
    int64_t outer, inner, n_eff, L, K, xo, xi, xj, yo, yi, yk;
    int comps, inverse;
} DftLines;

/* Plain O(n^2) transform loops; twiddles and sums in double, the angle
 * reduced as (k * j) mod L. w is the window pointer or NULL. */
static void emit_dft_lines(Cgen *c, const DftLines *p, const char *x, const char *w, const char *y, DType t)
{
    Writer *wr = cgen_w(c);
    const char *o = cgen_tmp(c, "o"), *i = cgen_tmp(c, "i"), *k = cgen_tmp(c, "k"), *j = cgen_tmp(c, "j");
    const char *re = cgen_tmp(c, "re"), *im = cgen_tmp(c, "im"), *a = cgen_tmp(c, "a"), *xr = cgen_tmp(c, "xr");
    const char *xi = cgen_tmp(c, "xi"), *cs = cgen_tmp(c, "cs"), *sn = cgen_tmp(c, "sn");
    const char *ct = cgen_ctype(t);
    double scale = p->inverse ? 1.0 / (double)p->L : 1.0;
    w_line(wr, "{");
    wr->indent++;
    w_line(wr, "int64_t %s, %s, %s, %s;", o, i, k, j);
    w_line(wr, "for (%s = 0; %s < %lld; %s++)", o, o, (long long)p->outer, o);
    w_line(wr, "for (%s = 0; %s < %lld; %s++)", i, i, (long long)p->inner, i);
    w_line(wr, "for (%s = 0; %s < %lld; %s++) {", k, k, (long long)p->K, k);
    wr->indent++;
    w_line(wr, "double %s = 0, %s = 0;", re, im);
    w_line(wr, "for (%s = 0; %s < %lld; %s++) {", j, j, (long long)p->n_eff, j);
    wr->indent++;
    w_line(wr, "double %s = 6.283185307179586476925 * (double)((%s * %s) %% %lld) / %lld.0;", a, k, j, (long long)p->L,
           (long long)p->L);
    w_line(wr, "double %s = cos(%s), %s = %s sin(%s);", cs, a, sn, p->inverse ? "" : "-", a);
    char idx[256];
    snprintf(idx, sizeof idx, "(%s * %lld + %s * %lld + %s * %lld) * %d", o, (long long)p->xo, i, (long long)p->xi, j,
             (long long)p->xj, p->comps);
    if (w) w_line(wr, "double %s = (double)%s[%s] * (double)%s[%s];", xr, x, idx, w, j);
    else w_line(wr, "double %s = (double)%s[%s];", xr, x, idx);
    if (p->comps == 2) {
        if (w) w_line(wr, "double %s = (double)%s[%s + 1] * (double)%s[%s];", xi, x, idx, w, j);
        else w_line(wr, "double %s = (double)%s[%s + 1];", xi, x, idx);
        w_line(wr, "%s += %s * %s - %s * %s;", re, xr, cs, xi, sn);
        w_line(wr, "%s += %s * %s + %s * %s;", im, xr, sn, xi, cs);
    } else {
        w_line(wr, "%s += %s * %s;", re, xr, cs);
        w_line(wr, "%s += %s * %s;", im, xr, sn);
    }
    wr->indent--;
    w_line(wr, "}");
    snprintf(idx, sizeof idx, "(%s * %lld + %s * %lld + %s * %lld) * 2", o, (long long)p->yo, i, (long long)p->yi, k, (long long)p->yk);
    w_line(wr, "%s[%s] = (%s)(%s * %.17g);", y, idx, ct, re, scale);
    w_line(wr, "%s[%s + 1] = (%s)(%s * %.17g);", y, idx, ct, im, scale);
    wr->indent--;
    w_line(wr, "}");
    wr->indent--;
    w_line(wr, "}");
}

static int emit_dft(Cgen *c, const Node *n, Diag *d)
{
    const Value *x = n->in[0], *y = n->out[0];
    if (x->dtype != DT_F32 && x->dtype != DT_F64)
        return diag_node_error(d, n, "the C backend supports DFT only for f32 and f64, got %s", ir_dtype_name(x->dtype));
    if (ir_numel(&y->shape) == 0) return 0;
    DftGeom g;
    signal_dft_geom(n, &g);
    DftLines p = {g.outer, g.inner, g.n_in < g.L ? g.n_in : g.L, g.L, g.K, g.n_in * g.inner, 1, g.inner, g.K * g.inner, 1, g.inner,
                  g.comps, g.inverse};
    char px[256], py[256];
    snprintf(px, sizeof px, "%s", cgen_ptr(c, x));
    snprintf(py, sizeof py, "%s", cgen_ptr(c, y));
    emit_dft_lines(c, &p, px, NULL, py, y->dtype);
    return 0;
}

/* Runtime shapes: STFT whose frame_step or frame_length arrives at run
 * time. The code checks them (NAME_ERR_SHAPE otherwise), sets the frame
 * count (and the bin count, for a runtime length) and runs the transform
 * loops on those extents, twiddles computed as in emit_dft_lines. */
void cgen_write_stft(const CgenDims *o, const Node *n)
{
    Writer *w = o->w;
    const Value *x = n->in[0], *y = n->out[0];
    int64_t batch = x->shape.dims[0], len = x->shape.dims[1];
    int comps = (int)x->shape.dims[2], onesided = n->attrs[STFT_ONESIDED].i != 0, win = ir_has_input(n, 2);
    const char *err = o->err, *ct = cgen_ctype(y->dtype);
    char px[256], py[256], pw[256] = "", ps[256], pl[256] = "";
    o->ptr(o->ctx, x, px);
    o->ptr(o->ctx, y, py);
    o->ptr(o->ctx, n->in[1], ps);
    if (win) o->ptr(o->ctx, n->in[2], pw);
    if (ir_has_input(n, 3)) o->ptr(o->ctx, n->in[3], pl);
    char step[64], L[64], fr[64], K[64], b[64], f[64], k[64], j[64], re[64], im[64], a[64], xr[64], xi[64], p[1024];
    const char *names[] = {"step", "len", "frames", "bins", "b", "f", "k", "j", "re", "im", "a", "xr", "xi"};
    char *bufs[] = {step, L, fr, K, b, f, k, j, re, im, a, xr, xi};
    for (int t = 0; t < 13; t++) snprintf(bufs[t], 64, "%s", o->tmp(o->ctx, names[t]));
    w_line(w, "int64_t %s = (int64_t)%s[0];", step, ps);
    if (win) w_line(w, "int64_t %s = %lld;", L, (long long)n->in[2]->shape.dims[0]);
    else w_line(w, "int64_t %s = (int64_t)%s[0];", L, pl);
    if (win && ir_has_input(n, 3))
        w_line(w, "if ((int64_t)%s[0] != %s) return %s; /* frame_length must be the window's */", pl, L, err);
    w_line(w, "if (%s < 1 || %s < 1 || %s > %lld) return %s;", step, L, L, (long long)len, err);
    w_line(w, "int64_t %s = (%lld - %s) / %s + 1, %s = %s%s;", fr, (long long)len, L, step, K, L, onesided ? " / 2 + 1" : "");
    o->set_dim(o->ctx, y, 1, fr);
    if (y->shape.sym[2]) o->set_dim(o->ctx, y, 2, K);
    w_line(w, "int64_t %s, %s, %s, %s;", b, f, k, j);
    w_line(w, "for (%s = 0; %s < %lld; %s++)", b, b, (long long)batch, b);
    w_line(w, "for (%s = 0; %s < %s; %s++)", f, f, fr, f);
    w_line(w, "for (%s = 0; %s < %s; %s++) {", k, k, K, k);
    w->indent++;
    w_line(w, "double %s = 0, %s = 0;", re, im);
    w_line(w, "for (%s = 0; %s < %s; %s++) {", j, j, L, j);
    w->indent++;
    w_line(w, "double %s = 6.283185307179586476925 * (double)((%s * %s) %% %s) / (double)%s;", a, k, j, L, L);
    snprintf(p, sizeof p, "%s[(%s * %lld + %s * %s + %s) * %d]", px, b, (long long)len, f, step, j, comps);
    if (win) w_line(w, "double %s = (double)%s * (double)%s[%s];", xr, p, pw, j);
    else w_line(w, "double %s = (double)%s;", xr, p);
    if (comps == 2) {
        snprintf(p, sizeof p, "%s[(%s * %lld + %s * %s + %s) * 2 + 1]", px, b, (long long)len, f, step, j);
        if (win) w_line(w, "double %s = (double)%s * (double)%s[%s];", xi, p, pw, j);
        else w_line(w, "double %s = (double)%s;", xi, p);
        w_line(w, "%s += %s * cos(%s) + %s * sin(%s);", re, xr, a, xi, a);
        w_line(w, "%s += %s * cos(%s) - %s * sin(%s);", im, xi, a, xr, a);
    } else {
        w_line(w, "%s += %s * cos(%s);", re, xr, a);
        w_line(w, "%s -= %s * sin(%s);", im, xr, a);
    }
    w->indent--;
    w_line(w, "}");
    snprintf(p, sizeof p, "((%s * %s + %s) * %s + %s) * 2", b, fr, f, K, k);
    w_line(w, "%s[%s] = (%s)%s;", py, p, ct, re);
    w_line(w, "%s[%s + 1] = (%s)%s;", py, p, ct, im);
    w->indent--;
    w_line(w, "}");
}

static int emit_stft(Cgen *c, const Node *n, Diag *d)
{
    const Value *x = n->in[0], *y = n->out[0];
    if (x->dtype != DT_F32 && x->dtype != DT_F64)
        return diag_node_error(d, n, "the C backend supports STFT only for f32 and f64, got %s", ir_dtype_name(x->dtype));
    if (cgen_node_has_sym(n)) {
        CgenDims o = cgen_dims_ctx(c);
        cgen_write_stft(&o, n);
        return 0;
    }
    if (ir_numel(&y->shape) == 0) return 0;
    StftGeom g;
    signal_stft_geom(n, &g);
    DftLines p = {g.batch, g.frames, g.L, g.L, g.K, g.sig_len, g.step, 1, g.frames * g.K, g.K, 1, g.comps, 0};
    char px[256], py[256], pw[256];
    snprintf(px, sizeof px, "%s", cgen_ptr(c, x));
    snprintf(py, sizeof py, "%s", cgen_ptr(c, y));
    if (ir_has_input(n, 2)) snprintf(pw, sizeof pw, "%s", cgen_ptr(c, n->in[2]));
    emit_dft_lines(c, &p, px, ir_has_input(n, 2) ? pw : NULL, py, y->dtype);
    return 0;
}

/* MelWeightMatrix has only constant inputs: the reference eval computes the
 * (sparse) matrix here and the code zeroes the output and stores each
 * nonzero. Folding normally removes the node; this serves --no-fold. */
static int emit_mel(Cgen *c, const Node *n, Diag *d)
{
    Writer *w = cgen_w(c);
    const Value *y = n->out[0];
    int64_t total = ir_numel(&y->shape);
    double *in[5], *out = malloc((size_t)total * sizeof *out);
    int rc = out ? 0 : diag_node_error(d, n, "out of memory");
    for (int k = 0; k < 5; k++) {
        in[k] = rc ? NULL : malloc(sizeof(double));
        if (!in[k]) {
            rc = rc ? rc : diag_node_error(d, n, "out of memory");
            continue;
        }
        in[k][0] = ir_load_f64(n->in[k]->dtype, n->in[k]->data, 0);
    }
    if (!rc) rc = ir_op(n->op)->eval(n, (const double *const *)in, &out, d);
    if (!rc && total > 0) {
        const char *i = cgen_tmp(c, "i"), *ct = cgen_ctype(cgen_compute_type(y->dtype));
        char ptr[256], idx[32], val[64];
        snprintf(ptr, sizeof ptr, "%s", cgen_ptr(c, y));
        snprintf(val, sizeof val, "(%s)0", ct);
        w_line(w, "{");
        w->indent++;
        w_line(w, "int64_t %s;", i);
        w_line(w, "for (%s = 0; %s < %lld; %s++)", i, i, (long long)total, i);
        w->indent++;
        cgen_store(w, y->dtype, ptr, i, val);
        w->indent--;
        for (int64_t e = 0; e < total; e++) {
            if (out[e] == 0) continue;
            snprintf(idx, sizeof idx, "%lld", (long long)e);
            snprintf(val, sizeof val, "(%s)%.17g", ct, out[e]);
            cgen_store(w, y->dtype, ptr, idx, val);
        }
        w->indent--;
        w_line(w, "}");
    }
    for (int k = 0; k < 5; k++) free(in[k]);
    free(out);
    return rc;
}

const CgenEntry cgen_signal_entries[] = {
    {OP_Einsum, emit_einsum, 0, NULL, 0},
    {OP_GridSample, emit_gridsample, CGEN_RT_signal, NULL, 0},
    {OP_HannWindow, emit_window_op, 0, NULL, 1},
    {OP_HammingWindow, emit_window_op, 0, NULL, 1},
    {OP_BlackmanWindow, emit_window_op, 0, NULL, 1},
    {OP_DFT, emit_dft, 0, NULL, 0},
    {OP_STFT, emit_stft, 0, NULL, 1},
    {OP_MelWeightMatrix, emit_mel, 0, NULL, 0},
    {-1, NULL, 0, NULL, 0},
};
