/* emit_signal.c — C emitters for the signal family.
 *
 * Einsum becomes one inline loop nest built from the op's EinsumPlan
 * (ir/ops/signal.h): output loops outside, summed loops inside, every
 * operand addressed by literal strides; the sum runs in double for float
 * dtypes and in int64_t for integers (elements go through cgen_load /
 * cgen_store, so every numeric dtype works). GridSample calls the runtime
 * (gcrt_grid_sample_f32/_f64). The windows are a loop over the cosine
 * formula evaluated in double, stored in the output dtype.
 */
#include "cgen.h"
#include "../../ir/ops/signal.h"

#include <stdio.h>
#include <string.h>

#define EXPR_CAP 1024

static const AttrVal *attr(const Node *n, const char *key)
{
    int i = ir_attr_index(n, key);
    GC_ASSERT(i >= 0);
    return &n->attrs[i];
}

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
    const char *mode = attr(n, "mode")->s, *pad = attr(n, "padding_mode")->s;
    int m = !strcmp(mode, "nearest") ? 1 : !strcmp(mode, "bicubic") ? 2 : 0;
    int pm = !strcmp(pad, "border") ? 1 : !strcmp(pad, "reflection") ? 2 : 0;
    char px[256], pg[256];
    snprintf(px, sizeof px, "%s", cgen_ptr(c, x));
    snprintf(pg, sizeof pg, "%s", cgen_ptr(c, g));
    w_line(cgen_w(c), "gcrt_grid_sample_%s(%lld, %lld, %lld, %lld, %lld, %lld, %d, %d, %d, %s, %s, %s);",
           x->dtype == DT_F32 ? "f32" : "f64", (long long)x->shape.dims[0], (long long)x->shape.dims[1],
           (long long)x->shape.dims[2], (long long)x->shape.dims[3], (long long)y->shape.dims[2], (long long)y->shape.dims[3], m,
           pm, attr(n, "align_corners")->i != 0, px, pg, cgen_ptr(c, y));
    return 0;
}

/* a0 - a1 cos(2 pi i / N) + a2 cos(4 pi i / N) in double, stored in y's dtype. */
static int emit_window(Cgen *c, const Node *n, double a0, double a1, double a2)
{
    Writer *w = cgen_w(c);
    const Value *y = n->out[0];
    int64_t size = y->shape.dims[0];
    if (size == 0) return 0;
    int64_t N = attr(n, "periodic")->i ? size : size - 1;
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

static int emit_hann(Cgen *c, const Node *n, Diag *d)
{
    (void)d;
    return emit_window(c, n, 0.5, 0.5, 0.0);
}

static int emit_hamming(Cgen *c, const Node *n, Diag *d)
{
    (void)d;
    return emit_window(c, n, 25.0 / 46.0, 21.0 / 46.0, 0.0);
}

static int emit_blackman(Cgen *c, const Node *n, Diag *d)
{
    (void)d;
    return emit_window(c, n, 0.42, 0.5, 0.08);
}

const CgenEntry cgen_signal_entries[] = {
    {OP_Einsum, emit_einsum},
    {OP_GridSample, emit_gridsample},
    {OP_HannWindow, emit_hann},
    {OP_HammingWindow, emit_hamming},
    {OP_BlackmanWindow, emit_blackman},
    {-1, NULL},
};
