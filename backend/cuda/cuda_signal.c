/* cuda_signal.c — the CUDA backend's generated kernels for the signal
 * family (see cuda_emit.h). DFT and STFT: one thread per output bin, the
 * plain O(n^2) sum of the C backend in double. Einsum: one thread per
 * output element over the
 * op's EinsumPlan (ir/ops/signal.h): the output labels decoded from the
 * element's index, the summed labels one flat loop, every operand
 * addressed by the plan's strides; the sum in double for float dtypes and
 * in int64_t for integers (the C backend's rules, backend/c/emit_signal.c).
 */
#include "cuda_emit.h"
#include "../cfamily/cfam_expr.h"
#include "../../ir/ops/signal.h"

#include <stdio.h>
#include <string.h>

static int einsum_check(const Node *n, Diag *d)
{
    EinsumPlan p;
    if (signal_einsum_plan(n, &p, d)) return -1;
    return n->out[0]->dtype == DT_BOOL ? diag_node_error(d, n, "the CUDA backend's Einsum takes numbers only") : 0;
}

static int emit_einsum(Cu *c, const Node *n, Diag *d)
{
    EinsumPlan p;
    if (signal_einsum_plan(n, &p, d)) return -1;
    const Value *Y = n->out[0];
    const int64_t total = ir_numel(&Y->shape);
    if (total == 0) return 0;
    const DType t = Y->dtype;
    const char *at = ir_dtype_is_float(t) ? "double" : "int64_t";
    int64_t nsum = 1;
    for (int l = p.n_out; l < p.n_loops; l++) nsum *= p.size[l];
    Writer *w = &c->kern;
    const int kn = cu_kernel_begin(c, n);
    w_printf(w, "GC_KERNEL k%d(%s *y", kn, cfam_ctype(t));
    for (int op = 0; op < p.n_ops; op++) w_printf(w, ", const %s *a%d", cfam_ctype(n->in[op]->dtype), op);
    w_printf(w, ")\n{\n    GC_FOR_EACH(i, %lld) {\n", (long long)total);
    /* each label's index by one / and one %, added into each operand's offset */
    int64_t inner[EINSUM_MAX_LABELS];
    int64_t acc_in = 1;
    for (int l = p.n_out - 1; l >= 0; l--) inner[l] = acc_in, acc_in *= p.size[l];
    acc_in = 1;
    for (int l = p.n_loops - 1; l >= p.n_out; l--) inner[l] = acc_in, acc_in *= p.size[l];
    w_printf(w, "        %s acc = 0;\n", at);
    if (nsum == 0) { /* an empty summed label: the sum of nothing */
        for (int op = 0; op < p.n_ops; op++) w_printf(w, "        (void)a%d;\n", op);
    } else {
        for (int op = 0; op < p.n_ops; op++) {
            w_printf(w, "        const int64_t o%d = 0", op);
            for (int l = 0; l < p.n_out; l++)
                if (p.stride[op][l])
                    w_printf(w, " + i / %lld %% %lld * %lld", (long long)inner[l], (long long)p.size[l], (long long)p.stride[op][l]);
            w_puts(w, ";\n");
        }
        w_printf(w, "        for (int64_t s = 0; s < %lld; s++) {\n            acc += ", (long long)nsum);
        for (int op = 0; op < p.n_ops; op++) {
            Writer e;
            w_init(&e);
            w_printf(&e, "a%d[o%d", op, op);
            for (int l = p.n_out; l < p.n_loops; l++)
                if (p.stride[op][l])
                    w_printf(&e, " + s / %lld %% %lld * %lld", (long long)inner[l], (long long)p.size[l], (long long)p.stride[op][l]);
            w_puts(&e, "]");
            w_printf(w, "%s(%s)(", op ? " * " : "", at);
            cu_load(w, n->in[op]->dtype, cu_wtext(&e));
            w_puts(w, ")");
            w_free(&e);
        }
        w_puts(w, ";\n        }\n");
    }
    w_puts(w, "        ");
    char val[64];
    snprintf(val, sizeof val, "(%s)acc", cfam_ctype(cu_compute_type(t)));
    cu_store(w, t, "y[i]", val);
    w_puts(w, "    }\n}\n\n");
    w_printf(&c->body, "    GC_LAUNCH(k%d, %lld, stream, (%s", kn, (long long)total, cu_ptr(c, Y));
    for (int op = 0; op < p.n_ops; op++) w_printf(&c->body, ", %s", cu_ptr(c, n->in[op]));
    w_puts(&c->body, "));\n");
    return 0;
}

/* ---- DFT, STFT --------------------------------------------------------------------------------- */

/* outer x inner lines of n_eff input elements (comps values each, strides
 * xo, xi, xj) transformed at length L into K bins (strides yo, yi, yk). */
typedef struct CuDft {
    int64_t outer, inner, n_eff, L, K, xo, xi, xj, yo, yi, yk;
    int comps, inverse;
} CuDft;

static int dft_check(const Node *n, Diag *d)
{
    if (!cu_is_float(n->in[0]->dtype))
        return diag_node_error(d, n, "the CUDA backend computes %s in f32 and f64 only", ir_op(n->op)->name);
    return 0;
}

/* One thread per output bin: the plain O(n^2) sum, twiddles and sums in
 * double, the angle reduced as (k * j) mod L (the C backend's loop); w the
 * STFT window or NULL. */
static void emit_dft_lines(Cu *c, const Node *n, const CuDft *p, const Value *X, const Value *Wn, const Value *Y)
{
    const int64_t total = p->outer * p->inner * p->K;
    if (total == 0) return;
    const char *T = cfam_ctype(Y->dtype);
    char sc[48];
    cfam_lit(sc, sizeof sc, DT_F64, p->inverse ? 1.0 / (double)p->L : 1.0);
    Writer *w = &c->kern;
    const int kn = cu_kernel_begin(c, n);
    w_printf(w, "GC_KERNEL k%d(%s *y, const %s *x%s%s%s)\n{\n    GC_FOR_EACH(q, %lld) {\n", kn, T, cfam_ctype(X->dtype),
             Wn ? ", const " : "", Wn ? cfam_ctype(Wn->dtype) : "", Wn ? " *win" : "", (long long)total);
    w_printf(w, "        const int64_t k = q %% %lld, i = q / %lld %% %lld, o = q / %lld;\n", (long long)p->K, (long long)p->K,
             (long long)p->inner, (long long)(p->K * p->inner));
    w_puts(w, "        double re = 0, im = 0;\n");
    w_printf(w, "        for (int64_t j = 0; j < %lld; j++) {\n", (long long)p->n_eff);
    w_printf(w, "            const double a = 6.283185307179586476925 * (double)((k * j) %% %lld) / %lld.0;\n", (long long)p->L,
             (long long)p->L);
    w_printf(w, "            const double cs = cos(a), sn = %ssin(a);\n", p->inverse ? "" : "-");
    w_printf(w, "            const int64_t e = (o * %lld + i * %lld + j * %lld) * %d;\n", (long long)p->xo, (long long)p->xi,
             (long long)p->xj, p->comps);
    w_printf(w, "            const double xr = (double)x[e]%s;\n", Wn ? " * (double)win[j]" : "");
    if (p->comps == 2) {
        w_printf(w, "            const double xi = (double)x[e + 1]%s;\n", Wn ? " * (double)win[j]" : "");
        w_puts(w, "            re += xr * cs - xi * sn;\n            im += xr * sn + xi * cs;\n");
    } else {
        w_puts(w, "            re += xr * cs;\n            im += xr * sn;\n");
    }
    w_puts(w, "        }\n");
    w_printf(w, "        const int64_t p = (o * %lld + i * %lld + k * %lld) * 2;\n", (long long)p->yo, (long long)p->yi, (long long)p->yk);
    w_printf(w, "        y[p] = (%s)(re * %s);\n        y[p + 1] = (%s)(im * %s);\n    }\n}\n\n", T, sc, T, sc);
    w_printf(&c->body, "    GC_LAUNCH(k%d, %lld, stream, (%s, %s", kn, (long long)total, cu_ptr(c, Y), cu_ptr(c, X));
    if (Wn) w_printf(&c->body, ", %s", cu_ptr(c, Wn));
    w_puts(&c->body, "));\n");
}

static int emit_dft(Cu *c, const Node *n, Diag *d)
{
    (void)d;
    DftGeom g;
    signal_dft_geom(n, &g);
    CuDft p = {g.outer, g.inner, g.n_in < g.L ? g.n_in : g.L, g.L, g.K, g.n_in * g.inner, 1, g.inner, g.K * g.inner, 1, g.inner,
               g.comps, g.inverse};
    if (ir_numel(&n->out[0]->shape)) emit_dft_lines(c, n, &p, n->in[0], NULL, n->out[0]);
    return 0;
}

static int emit_stft(Cu *c, const Node *n, Diag *d)
{
    (void)d;
    StftGeom g;
    signal_stft_geom(n, &g);
    CuDft p = {g.batch, g.frames, g.L, g.L, g.K, g.sig_len, g.step, 1, g.frames * g.K, g.K, 1, g.comps, 0};
    const Value *Wn = n->n_in > 2 && n->in[2] ? n->in[2] : NULL;
    if (ir_numel(&n->out[0]->shape)) emit_dft_lines(c, n, &p, n->in[0], Wn, n->out[0]);
    return 0;
}

const CudaEntry cuda_signal_entries[] = {
    {OP_Einsum, einsum_check, emit_einsum, NULL, "a generated kernel, one thread per output element", 1},
    {OP_DFT, dft_check, emit_dft, NULL, "a generated kernel, one thread per output bin (O(n^2))", 0},
    {OP_STFT, dft_check, emit_stft, NULL, "a generated kernel, one thread per output bin (O(n^2))", 0},
    {-1, NULL, NULL, NULL, NULL, 0},
};
