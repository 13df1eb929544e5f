/* cuda_signal.c — the CUDA backend's generated kernels for the signal
 * family (see cuda_emit.h). GridSample: one thread per output element,
 * with helpers named after its kernel. DFT and STFT: one thread per output bin, the
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
#include "../../ir/ops/signal_attrs.h"

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

/* STFT: with a frame step or length given at run time (its frame count a
 * data-dependent dim), the C backend's loops on the host (cu_emit_on_host). */
static int emit_stft(Cu *c, const Node *n, Diag *d)
{
    if (cgen_node_has_sym(n)) return cu_emit_on_host(c, n, cgen_write_stft, 0, d);
    StftGeom g;
    signal_stft_geom(n, &g);
    CuDft p = {g.batch, g.frames, g.L, g.L, g.K, g.sig_len, g.step, 1, g.frames * g.K, g.K, 1, g.comps, 0};
    const Value *Wn = n->n_in > 2 && n->in[2] ? n->in[2] : NULL;
    if (ir_numel(&n->out[0]->shape)) emit_dft_lines(c, n, &p, n->in[0], Wn, n->out[0]);
    return 0;
}

/* ---- GridSample -------------------------------------------------------------------------------- */

static int gridsample_check(const Node *n, Diag *d)
{
    if (!cu_is_float(n->in[0]->dtype) || n->in[1]->dtype != n->in[0]->dtype || n->in[0]->shape.rank != 4)
        return diag_node_error(d, n, "the CUDA backend's GridSample takes 4-D f32 or f64 tensors of one dtype");
    return 0;
}

/* GridSample (the C runtime's rules, runtime/c/gcrt_signal.c): one thread
 * per output element unnormalizes its grid point (align_corners: -1 and 1
 * are the corner pixels' centres, else their outer edges), pads the
 * coordinate (border clips, reflection reflects), and samples nearest,
 * bilinear or bicubic (A = -0.75, padding applied to each of the 16
 * taps); out-of-range taps read 0. The helpers are named after the kernel
 * and written only when used. */
static int emit_gridsample(Cu *c, const Node *n, Diag *d)
{
    (void)d;
    const Value *X = n->in[0], *Gd = n->in[1], *Y = n->out[0];
    const int64_t total = ir_numel(&Y->shape);
    if (total == 0) return 0;
    const char *mode = n->attrs[GRID_SAMPLE_MODE].s, *pad = n->attrs[GRID_SAMPLE_PADDING_MODE].s;
    const int m = !strcmp(mode, "nearest") ? 1 : !strcmp(mode, "bicubic") ? 2 : 0;
    const int pm = !strcmp(pad, "border") ? 1 : !strcmp(pad, "reflection") ? 2 : 0;
    const int align = n->attrs[GRID_SAMPLE_ALIGN_CORNERS].i != 0;
    const long long C = (long long)X->shape.dims[1], H = (long long)X->shape.dims[2], W = (long long)X->shape.dims[3];
    const long long OH = (long long)Y->shape.dims[2], OW = (long long)Y->shape.dims[3];
    const char *T = cfam_ctype(X->dtype);
    Writer *w = &c->kern;
    const int kn = cu_kernel_begin(c, n);
    w_printf(w, "GC_DEVICE double k%d_at(const %s *p, int64_t y, int64_t x)\n{\n", kn, T);
    w_printf(w, "    return y < 0 || y >= %lld || x < 0 || x >= %lld ? 0.0 : (double)p[y * %lld + x];\n}\n", H, W, W);
    w_printf(w, "GC_DEVICE int64_t k%d_idx(double v)\n{\n", kn);
    w_puts(w, "    if (!(v > -2.0)) return -2;\n    return v < 4611686018427387904.0 ? (int64_t)v : (int64_t)4611686018427387904.0;\n}\n");
    if (pm == 2) {
        w_printf(w, "GC_DEVICE double k%d_reflect(double v, double lo2, double hi2)\n{\n", kn);
        w_puts(w, "    if (lo2 == hi2) return 0.0;\n    const double mn = lo2 / 2.0, span = (hi2 - lo2) / 2.0;\n");
        w_puts(w, "    v = fabs(v - mn);\n    const double extra = fmod(v, span);\n");
        w_puts(w, "    return fmod(floor(v / span), 2.0) == 0.0 ? extra + mn : span - extra + mn;\n}\n");
    }
    w_printf(w, "GC_DEVICE double k%d_pad(double v, int64_t sz)\n{\n", kn);
    if (pm == 1) w_puts(w, "    return fmin(fmax(v, 0.0), (double)(sz - 1));\n}\n");
    else if (pm == 2) {
        if (align) w_printf(w, "    v = k%d_reflect(v, 0.0, 2.0 * (double)(sz - 1));\n", kn);
        else w_printf(w, "    v = k%d_reflect(v, -1.0, 2.0 * (double)sz - 1.0);\n", kn);
        w_puts(w, "    return fmin(fmax(v, 0.0), (double)(sz - 1));\n}\n");
    } else w_puts(w, "    (void)sz;\n    return v;\n}\n");
    if (m == 2) {
        w_printf(w, "GC_DEVICE double k%d_cubic(double x0, double x1, double x2, double x3, double t)\n{\n", kn);
        w_puts(w, "    const double A = -0.75;\n    double u = t + 1.0;\n    const double v = 1.0 - t;\n");
        w_puts(w, "    const double c0 = ((A * u - 5.0 * A) * u + 8.0 * A) * u - 4.0 * A;\n");
        w_puts(w, "    const double c1 = ((A + 2.0) * t - (A + 3.0)) * t * t + 1.0;\n");
        w_puts(w, "    const double c2 = ((A + 2.0) * v - (A + 3.0)) * v * v + 1.0;\n");
        w_puts(w, "    u = v + 1.0;\n    const double c3 = ((A * u - 5.0 * A) * u + 8.0 * A) * u - 4.0 * A;\n");
        w_puts(w, "    return x0 * c0 + x1 * c1 + x2 * c2 + x3 * c3;\n}\n");
    }
    w_printf(w, "GC_KERNEL k%d(%s *y, const %s *x, const %s *grid)\n{\n    GC_FOR_EACH(i, %lld) {\n", kn, T, T, T, (long long)total);
    w_printf(w, "        const int64_t oj = i %% %lld, oi = i / %lld %% %lld, bc = i / %lld, nb = bc / %lld;\n", OW, OW, OH, OH * OW, C);
    w_printf(w, "        const %s *p = x + bc * %lld;\n", T, H * W);
    w_printf(w, "        const int64_t g = ((nb * %lld + oi) * %lld + oj) * 2;\n", OH, OW);
    if (align) {
        w_printf(w, "        const double gx = ((double)grid[g] + 1.0) / 2.0 * %lld.0;\n", W - 1);
        w_printf(w, "        const double gy = ((double)grid[g + 1] + 1.0) / 2.0 * %lld.0;\n", H - 1);
    } else {
        w_printf(w, "        const double gx = (((double)grid[g] + 1.0) * %lld.0 - 1.0) / 2.0;\n", W);
        w_printf(w, "        const double gy = (((double)grid[g + 1] + 1.0) * %lld.0 - 1.0) / 2.0;\n", H);
    }
    if (m == 2) {
        w_puts(w, "        const double fx = floor(gx), fy = floor(gy);\n        double r[4];\n");
        w_puts(w, "        for (int pp = 0; pp < 4; pp++) {\n            double qv[4];\n");
        w_printf(w, "            for (int ss = 0; ss < 4; ss++) {\n                const double yy = k%d_pad(fy - 1.0 + pp, %lld), xx = k%d_pad(fx - 1.0 + ss, %lld);\n",
                 kn, H, kn, W);
        w_printf(w, "                qv[ss] = k%d_at(p, k%d_idx(floor(yy)), k%d_idx(floor(xx)));\n            }\n", kn, kn, kn);
        w_printf(w, "            r[pp] = k%d_cubic(qv[0], qv[1], qv[2], qv[3], gx - fx);\n        }\n", kn);
        w_printf(w, "        y[i] = (%s)k%d_cubic(r[0], r[1], r[2], r[3], gy - fy);\n", T, kn);
    } else {
        w_printf(w, "        const double xc = k%d_pad(gx, %lld), yc = k%d_pad(gy, %lld);\n", kn, W, kn, H);
        if (m == 1) {
            w_printf(w, "        y[i] = (%s)k%d_at(p, k%d_idx(nearbyint(yc)), k%d_idx(nearbyint(xc)));\n", T, kn, kn, kn);
        } else {
            w_puts(w, "        const double x0 = floor(xc), y0 = floor(yc), tx = xc - x0, ty = yc - y0;\n");
            w_printf(w, "        const int64_t ix = k%d_idx(x0), iy = k%d_idx(y0);\n", kn, kn);
            w_printf(w, "        y[i] = (%s)(k%d_at(p, iy, ix) * (1.0 - tx) * (1.0 - ty) + k%d_at(p, iy, ix + 1) * tx * (1.0 - ty) +\n", T, kn, kn);
            w_printf(w, "                    k%d_at(p, iy + 1, ix) * (1.0 - tx) * ty + k%d_at(p, iy + 1, ix + 1) * tx * ty);\n", kn, kn);
        }
    }
    w_puts(w, "    }\n}\n\n");
    w_printf(&c->body, "    GC_LAUNCH(k%d, %lld, stream, (%s, %s, %s));\n", kn, (long long)total, cu_ptr(c, Y), cu_ptr(c, X), cu_ptr(c, Gd));
    return 0;
}

const CudaEntry cuda_signal_entries[] = {
    {OP_Einsum, einsum_check, emit_einsum, NULL, "a generated kernel, one thread per output element", 1, 0},
    {OP_DFT, dft_check, emit_dft, NULL, "a generated kernel, one thread per output bin (O(n^2))", 0, 0},
    {OP_STFT, dft_check, emit_stft, NULL, "a generated kernel, one thread per output bin (O(n^2))", 0, 2},
    {OP_GridSample, gridsample_check, emit_gridsample, NULL, "a generated kernel, one thread per output element", 0, 0},
    {-1, NULL, NULL, NULL, NULL, 0, 0},
};
