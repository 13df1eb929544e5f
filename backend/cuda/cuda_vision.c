/* cuda_vision.c — the CUDA backend's generated kernels for the vision family
 * (see cuda_emit.h): ConvTranspose, Resize/Upsample, GlobalMaxPool,
 * InstanceNormalization, LRN, MeanVarianceNormalization, Hardmax,
 * DepthToSpace, SpaceToDepth, inference Dropout and RoiAlign.
 *
 * Every kernel follows the C runtime's semantics (runtime/c/gcrt_vision.c)
 * with the geometry the op descriptions resolve (ir/ops/geometry.h), so the
 * two backends read the same numbers. ConvTranspose is written in gather
 * form: one thread per output element sums the input elements and kernel
 * taps that reach it (i * stride - pad + t * dil == o), so no thread writes
 * another's output. Resize reads the per-axis tap tables the compiler
 * computes, written as GC_TABLE constants (device constants under nvcc).
 * Sums run in double; the outputs are stored in the tensor's type.
 */
#include "cuda_emit.h"
#include "../c/emit_dynfill.h"
#include "../cfamily/cfam_expr.h"
#include "../../ir/ops/geometry.h"
#include "../../ir/ops/vision_attrs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- ConvTranspose -------------------------------------------------------------- */

static int convtranspose_check(const Node *n, Diag *d)
{
    if (cu_check_float(n, d)) return -1;
    int64_t k[IR_MAX_RANK], s[IR_MAX_RANK], dl[IR_MAX_RANK], pb[IR_MAX_RANK];
    int sr = ir_convtranspose_geometry(n, k, s, dl, pb);
    if (sr < 1 || sr > 3) return diag_node_error(d, n, "the CUDA backend has ConvTranspose with 1 to 3 spatial dims only");
    return 0;
}

/* One thread per output element (n, m, o0, o1, o2), three spatial dims
 * (leading ones of size 1): y = b[m] + sum over the group's input channels
 * c and the taps t with (o + pad - t * dil) a multiple of the stride that
 * lands inside the input. */
static int emit_convtranspose(Cu *c, const Node *n, Diag *d)
{
    (void)d;
    const Value *X = n->in[0], *W = n->in[1], *B = n->n_in > 2 ? n->in[2] : NULL, *Y = n->out[0];
    int64_t k[IR_MAX_RANK], s[IR_MAX_RANK], dl[IR_MAX_RANK], pb[IR_MAX_RANK];
    const int sr = ir_convtranspose_geometry(n, k, s, dl, pb);
    const int64_t total = ir_numel(&Y->shape);
    if (total == 0) return 0;
    int64_t in3[3], out3[3], k3[3], s3[3], d3[3], p3[3];
    for (int i = 0; i < 3; i++) {
        int j = i - (3 - sr);
        in3[i] = j < 0 ? 1 : X->shape.dims[2 + j];
        out3[i] = j < 0 ? 1 : Y->shape.dims[2 + j];
        k3[i] = j < 0 ? 1 : k[j];
        s3[i] = j < 0 ? 1 : s[j];
        d3[i] = j < 0 ? 1 : dl[j];
        p3[i] = j < 0 ? 0 : pb[j];
    }
    const int64_t C = X->shape.dims[1], M = Y->shape.dims[1], G = n->attrs[CONV_TRANSPOSE_GROUP].i;
    const int64_t Cg = C / G, Mg = M / G, IP = in3[0] * in3[1] * in3[2], OP = out3[0] * out3[1] * out3[2],
                  KP = k3[0] * k3[1] * k3[2];
    const char *T = cfam_ctype(Y->dtype);
    Writer *w = &c->kern;
    const int kn = cu_kernel_begin(c, n);
    w_printf(w, "GC_KERNEL k%d(%s *y, const %s *x, const %s *w%s%s%s)\n{\n", kn, T, T, T, B ? ", const " : "", B ? T : "",
             B ? " *b" : "");
    w_printf(w, "    GC_FOR_EACH(i, %lld) {\n", (long long)total);
    w_printf(w, "        const int64_t op = i %% %lld, m = i / %lld %% %lld, nb = i / %lld;\n", (long long)OP,
             (long long)OP, (long long)M, (long long)(OP * M));
    w_printf(w, "        const int64_t o[3] = {op / %lld, op / %lld %% %lld, op %% %lld};\n", (long long)(out3[1] * out3[2]),
             (long long)out3[2], (long long)out3[1], (long long)out3[2]);
    w_printf(w, "        const int64_t in[3] = {%lld, %lld, %lld}, kk[3] = {%lld, %lld, %lld}, st[3] = {%lld, %lld, %lld},\n",
             (long long)in3[0], (long long)in3[1], (long long)in3[2], (long long)k3[0], (long long)k3[1], (long long)k3[2],
             (long long)s3[0], (long long)s3[1], (long long)s3[2]);
    w_printf(w, "                      dl[3] = {%lld, %lld, %lld}, pd[3] = {%lld, %lld, %lld};\n", (long long)d3[0],
             (long long)d3[1], (long long)d3[2], (long long)p3[0], (long long)p3[1], (long long)p3[2]);
    w_printf(w, "        const int64_t g = m / %lld, mg = m %% %lld;\n", (long long)Mg, (long long)Mg);
    w_printf(w, "        double acc = %s;\n", B ? "b[m]" : "0");
    w_puts(w, "        for (int64_t t = 0; t < kk[0] * kk[1] * kk[2]; t++) {\n");
    w_puts(w, "            const int64_t tt[3] = {t / (kk[1] * kk[2]), t / kk[2] % kk[1], t % kk[2]};\n");
    w_puts(w, "            int64_t ip = 0, ok = 1;\n");
    w_puts(w, "            for (int a = 0; a < 3 && ok; a++) {\n");
    w_puts(w, "                const int64_t q = o[a] + pd[a] - tt[a] * dl[a];\n");
    w_puts(w, "                ok = q >= 0 && q % st[a] == 0 && q / st[a] < in[a];\n");
    w_puts(w, "                ip = ip * in[a] + (ok ? q / st[a] : 0);\n");
    w_puts(w, "            }\n");
    w_puts(w, "            if (!ok) continue;\n");
    w_printf(w, "            for (int64_t ci = g * %lld; ci < (g + 1) * %lld; ci++)\n", (long long)Cg, (long long)Cg);
    w_printf(w, "                acc += (double)x[(nb * %lld + ci) * %lld + ip] * w[(ci * %lld + mg) * %lld + t];\n",
             (long long)C, (long long)IP, (long long)Mg, (long long)KP);
    w_puts(w, "        }\n");
    w_printf(w, "        y[i] = (%s)acc;\n    }\n}\n\n", T);
    w_printf(&c->body, "    GC_LAUNCH(k%d, %lld, stream, (%s, %s, %s", kn, (long long)total, cu_ptr(c, Y), cu_ptr(c, X),
             cu_ptr(c, W));
    if (B) w_printf(&c->body, ", %s", cu_ptr(c, B));
    w_puts(&c->body, "));\n");
    return 0;
}

/* ---- Conv without cuDNN -------------------------------------------------------------------- */

/* Conv as a generated kernel (what cuDNN's descriptors cannot say: pads
 * that differ at the two ends, 3 spatial dims, f64): one thread per output
 * element (n, m, o) sums x[n, g * Cg + c, o * stride - pad + t * dil] *
 * w[m, c, t] over the taps inside the input, in double, plus b[m]; with q,
 * ConvInteger / QLinearConv: the operands minus their zero points, the
 * exact integer sum stored by q->store. */
int cu_emit_conv_direct(Cu *c, const Node *n, const CuConvQuant *q)
{
    const Value *X = n->in[q ? q->ix : 0], *W = n->in[q ? q->iw : 1], *B = !q && n->n_in > 2 ? n->in[2] : NULL, *Y = n->out[0];
    int64_t k[IR_MAX_RANK], s[IR_MAX_RANK], dl[IR_MAX_RANK], pb[IR_MAX_RANK], pe[IR_MAX_RANK];
    const int sr = ir_nn_window_geometry(n, k, s, dl, pb, pe);
    const int64_t total = ir_numel(&Y->shape);
    if (total == 0) return 0;
    int64_t in3[3], out3[3], k3[3], s3[3], d3[3], p3[3];
    for (int i = 0; i < 3; i++) {
        int j = i - (3 - sr);
        in3[i] = j < 0 ? 1 : X->shape.dims[2 + j];
        out3[i] = j < 0 ? 1 : Y->shape.dims[2 + j];
        k3[i] = j < 0 ? 1 : k[j];
        s3[i] = j < 0 ? 1 : s[j];
        d3[i] = j < 0 ? 1 : dl[j];
        p3[i] = j < 0 ? 0 : pb[j];
    }
    const int64_t C = X->shape.dims[1], M = Y->shape.dims[1], Cg = W->shape.dims[1], G = C / Cg, Mg = M / G;
    const int64_t IP = in3[0] * in3[1] * in3[2], OP = out3[0] * out3[1] * out3[2], KP = k3[0] * k3[1] * k3[2];
    const char *T = cfam_ctype(Y->dtype);
    Writer *w = &c->kern;
    const int kn = cu_kernel_begin(c, n);
    w_printf(w, "GC_KERNEL k%d(%s *y, const %s *x, const %s *w%s%s%s", kn, T, cfam_ctype(X->dtype), cfam_ctype(W->dtype),
             B ? ", const " : "", B ? T : "", B ? " *b" : "");
    for (int j = 0; q && j < q->n_extra; j++) w_printf(w, ", const %s *%s", cfam_ctype(q->extra[j]->dtype), q->extra_names[j]);
    w_puts(w, ")\n{\n");
    w_printf(w, "    GC_FOR_EACH(i, %lld) {\n", (long long)total);
    w_printf(w, "        const int64_t op = i %% %lld, m = i / %lld %% %lld, nb = i / %lld;\n", (long long)OP,
             (long long)OP, (long long)M, (long long)(OP * M));
    w_printf(w, "        const int64_t o[3] = {op / %lld, op / %lld %% %lld, op %% %lld};\n", (long long)(out3[1] * out3[2]),
             (long long)out3[2], (long long)out3[1], (long long)out3[2]);
    w_printf(w, "        const int64_t in[3] = {%lld, %lld, %lld}, kk[3] = {%lld, %lld, %lld}, st[3] = {%lld, %lld, %lld},\n",
             (long long)in3[0], (long long)in3[1], (long long)in3[2], (long long)k3[0], (long long)k3[1], (long long)k3[2],
             (long long)s3[0], (long long)s3[1], (long long)s3[2]);
    w_printf(w, "                      dl[3] = {%lld, %lld, %lld}, pd[3] = {%lld, %lld, %lld};\n", (long long)d3[0],
             (long long)d3[1], (long long)d3[2], (long long)p3[0], (long long)p3[1], (long long)p3[2]);
    w_printf(w, "        const int64_t g = m / %lld;\n", (long long)Mg);
    w_printf(w, "        double acc = %s;\n", B ? "b[m]" : "0");
    w_puts(w, "        for (int64_t t = 0; t < kk[0] * kk[1] * kk[2]; t++) {\n");
    w_puts(w, "            const int64_t tt[3] = {t / (kk[1] * kk[2]), t / kk[2] % kk[1], t % kk[2]};\n");
    w_puts(w, "            int64_t ip = 0, ok = 1;\n");
    w_puts(w, "            for (int a = 0; a < 3 && ok; a++) {\n");
    w_puts(w, "                const int64_t q = o[a] * st[a] - pd[a] + tt[a] * dl[a];\n");
    w_puts(w, "                ok = q >= 0 && q < in[a];\n");
    w_puts(w, "                ip = ip * in[a] + (ok ? q : 0);\n");
    w_puts(w, "            }\n");
    w_puts(w, "            if (!ok) continue;\n");
    w_printf(w, "            for (int64_t ci = 0; ci < %lld; ci++)\n", (long long)Cg);
    w_printf(w, "                acc += ((double)x[(nb * %lld + g * %lld + ci) * %lld + ip] - %s) * ((double)w[(m * %lld + ci) * %lld + t] - %s);\n",
             (long long)C, (long long)Cg, (long long)IP, q ? q->zx : "0.0", (long long)Cg, (long long)KP, q ? q->zw : "0.0");
    w_puts(w, "        }\n");
    if (q) q->store(w, n);
    else w_printf(w, "        y[i] = (%s)acc;\n", T);
    w_puts(w, "    }\n}\n\n");
    w_printf(&c->body, "    GC_LAUNCH(k%d, %lld, stream, (%s, %s, %s", kn, (long long)total, cu_ptr(c, Y), cu_ptr(c, X),
             cu_ptr(c, W));
    if (B) w_printf(&c->body, ", %s", cu_ptr(c, B));
    for (int j = 0; q && j < q->n_extra; j++) w_printf(&c->body, ", %s", cu_ptr(c, q->extra[j]));
    w_puts(&c->body, "));\n");
    return 0;
}

/* ---- Resize, Upsample ------------------------------------------------------------------- */

static int resize_check(const Node *n, Diag *d)
{
    if (cu_check_float(n, d)) return -1;
    if (n->out[0]->shape.rank > 8) return diag_node_error(d, n, "the CUDA backend's Resize takes rank <= 8");
    if (ir_shape_has_sym(&n->in[0]->shape))
        return diag_node_error(d, n, "the CUDA backend resizes an input 'X' of static shape only");
    return 0;
}

/* The loop of a Resize kernel over output elements i (extents out[a],
 * literals or shape-table text) reading tables ri and rw (their names):
 * axis a's K[a] taps per output index start at base[a] (text) + its
 * coordinate * K[a]; an output index whose first tap is -1 gets the
 * extrapolation value; the tensor product of the taps is summed in double. */
static void resize_loop(Writer *w, const Node *n, int r, const int64_t *K, const char *const *base, const char *const *out,
                        const int64_t *st, const char *ri, const char *rw)
{
    const Value *Y = n->out[0];
    char lit[48];
    int64_t ntaps = 1;
    for (int a = 0; a < r; a++) ntaps *= K[a];
    w_puts(w, "        int64_t r = i;\n");
    w_printf(w, "        int64_t b[%d];\n", r);
    for (int a = r - 1; a >= 0; a--)
        w_printf(w, "        b[%d] = %s + r %% %s * %lld;\n        r /= %s;\n", a, base[a], out[a], (long long)K[a], out[a]);
    w_puts(w, "        int outside = 0;\n");
    w_printf(w, "        for (int a = 0; a < %d; a++) outside |= %s[b[a]] < 0;\n", r, ri);
    cfam_lit(lit, sizeof lit, Y->dtype, ir_resize_extrapolation(n));
    w_printf(w, "        if (outside) {\n            y[i] = %s;\n            continue;\n        }\n", lit);
    w_puts(w, "        double acc = 0;\n");
    w_printf(w, "        for (int64_t t = 0; t < %lld; t++) {\n", (long long)ntaps);
    w_puts(w, "            int64_t q = t, off = 0;\n            double wt = 1;\n");
    for (int a = r - 1; a >= 0; a--)
        w_printf(w, "            { const int64_t j = b[%d] + q %% %lld; wt *= %s[j]; off += %s[j] * %lld; q /= %lld; }\n", a,
                 (long long)K[a], rw, ri, (long long)st[a], (long long)K[a]);
    w_puts(w, "            acc += wt * x[off];\n        }\n");
    w_printf(w, "        y[i] = (%s)acc;\n    }\n}\n\n", cfam_ctype(Y->dtype));
}

/* Resize/Upsample whose extents are data-dependent (runtime scales or
 * sizes): the host reads the operands back, sets the extents and computes
 * the tap tables with the C runtime's gcrt_resize_taps_* (the same call
 * and layout as the C backend: indices, then weights at the maximum
 * indices' end) into m->hws, copies them into the node's workspace, and
 * the kernel reads them there over the run's extents. */
static int emit_resize_dyn(Cu *c, const Node *n)
{
    const Value *X = n->in[0], *Y = n->out[0];
    const EmitResizeArgs ra = emit_dyn_resize_args(n);
    const int r = X->shape.rank, K = ra.K;
    const size_t ws = emit_dyn_resize_workspace(n);
    const int64_t tmax = (int64_t)(ws / (sizeof(int64_t) + ir_dtype_size(Y->dtype))); /* the tables' entries at the bounds */
    const char *T = cfam_ctype(Y->dtype);
    Writer *b = &c->body;
    char e[512];
    GC_ASSERT(ws && n->ws_offset >= 0);
    if ((int64_t)ws > c->hws_bytes) c->hws_bytes = (int64_t)ws;
    c->resize_host = 1;
    w_puts(b, "    { /* its scales or sizes (and roi), read back: the output's extents and the tap tables */\n");
    cu_read_host(c, ra.scales ? ra.scales : ra.sizes, ra.scales ? "sc" : "sz");
    w_printf(b, "        double scale[%d];\n", r);
    for (int a = 0; a < r; a++) {
        const long long xd = (long long)X->shape.dims[a];
        if (ra.scales) {
            w_printf(b, "        scale[%d] = (double)sc[%d];\n", a, a);
            snprintf(e, sizeof e, "scale[%d] > 0 && scale[%d] * %lld.0 < 4.0e18 ? (int64_t)floor(scale[%d] * %lld.0) : -1", a, a, xd, a,
                     xd);
        } else if (xd == 0) { /* an empty axis cannot grow */
            snprintf(e, sizeof e, "sz[%d] > 0 ? -1 : (int64_t)sz[%d]", a, a);
        } else {
            snprintf(e, sizeof e, "(int64_t)sz[%d]", a);
        }
        cu_set_dim(c, Y, a, e);
        if (!ra.scales) {
            if (xd > 0) w_printf(b, "        scale[%d] = (double)(%s) / %lld.0;\n", a, cu_dims_sz(c, &Y->shape, a, a + 1), xd);
            else w_printf(b, "        scale[%d] = 1.0;\n", a);
        }
    }
    if (ra.ctm == 3 && ra.roi) {
        cu_read_host(c, ra.roi, "rv");
        w_printf(b, "        double roi[%d];\n        for (int k = 0; k < %d; k++) roi[k] = (double)rv[k];\n", 2 * r, 2 * r);
    } else {
        w_printf(b, "        const double roi[%d] = {", 2 * r);
        for (int k = 0; k < 2 * r; k++) w_printf(b, "%s%s", k ? ", " : "", k < r ? "0.0" : "1.0");
        w_puts(b, "};\n");
    }
    w_printf(b, "        const int64_t in_dims[%d] = {", r);
    for (int a = 0; a < r; a++) w_printf(b, "%s%lld", a ? ", " : "", (long long)X->shape.dims[a]);
    w_printf(b, "}, out_dims[%d] = {", r);
    for (int a = 0; a < r; a++) w_printf(b, "%s%s", a ? ", " : "", cu_dims_sz(c, &Y->shape, a, a + 1));
    w_printf(b, "}, taps[%d] = {", r);
    for (int a = 0; a < r; a++) w_printf(b, "%s%d", a ? ", " : "", K);
    w_puts(b, "};\n");
    w_printf(b, "        gcrt_resize_taps_%s(%d, in_dims, out_dims, scale, roi, %d, %d, %d, %.17g, %d, taps, (int64_t *)m->hws,\n"
                "                             (%s *)(m->hws + %lld));\n",
             Y->dtype == DT_F64 ? "f64" : "f32", r, ra.mode, ra.ctm, ra.nearest, ra.A, ra.exclude, T, (long long)tmax * 8);
    w_printf(b, "        if (cudaMemcpyAsync(arena + %lld, m->hws, %lld, cudaMemcpyHostToDevice, stream) != cudaSuccess) return -1;\n",
             (long long)n->ws_offset, (long long)ws);
    cu_dims_to_device(c);
    w_puts(b, "    }\n");
    if (ir_numel(&Y->shape) == 0) return 0;
    /* the kernel: emit_resize's over the workspace's tables, every extent the run's */
    int64_t st[IR_MAX_RANK];
    cu_strides_of(&X->shape, st);
    Writer *w = &c->kern;
    const int kn = cu_kernel_begin(c, n);
    w_printf(w, "GC_KERNEL k%d(%s *y, const %s *x, const int64_t *ri, const %s *rw%s)\n{\n", kn, T, T, T, cu_kparam(c, n));
    cu_kuse(c, n, w);
    w_printf(w, "    GC_FOR_EACH(i, %s) {\n", cu_dims_sz(c, &Y->shape, 0, r));
    /* axis a's tables start after those of the axes before it, at the run's extents */
    char base[IR_MAX_RANK][512], out[IR_MAX_RANK][192];
    const char *bp[IR_MAX_RANK], *op[IR_MAX_RANK];
    int64_t Ks[IR_MAX_RANK];
    for (int a = 0; a < r; a++) {
        size_t o = 0;
        for (int q = 0; q < a && o < sizeof base[a]; q++)
            o += (size_t)snprintf(base[a] + o, sizeof base[a] - o, "%s%s * %d", q ? " + " : "", cu_dims_sz(c, &Y->shape, q, q + 1), K);
        if (!a) snprintf(base[a], sizeof base[a], "0");
        snprintf(out[a], sizeof out[a], "%s", cu_dims_sz(c, &Y->shape, a, a + 1));
        bp[a] = base[a], op[a] = out[a], Ks[a] = K;
    }
    resize_loop(w, n, r, Ks, bp, op, st, "ri", "rw");
    w_printf(&c->body, "    GC_LAUNCH(k%d, %s, stream, (%s, %s, (const int64_t *)(const void *)(arena + %lld), (const %s *)(const void *)(arena + %lld)%s));\n",
             kn, cu_dims_sz(c, &Y->shape, 0, r), cu_ptr(c, Y), cu_ptr(c, X), (long long)n->ws_offset, T,
             (long long)(n->ws_offset + tmax * 8), cu_karg(c, n));
    return 0;
}

static size_t resize_workspace(const Node *n) { return cgen_node_has_sym(n) ? emit_dyn_resize_workspace(n) : 0; }

/* Per axis a, K[a] taps per output index: tables ri (input index, clamped;
 * -1 on the first tap marks an output index outside the crop) and rw
 * (weights). One thread per output element sums the tensor product of its
 * axes' taps. */
static int emit_resize(Cu *c, const Node *n, Diag *d)
{
    if (cu_dyn(c, n)) return emit_resize_dyn(c, n);
    const Value *X = n->in[0], *Y = n->out[0];
    const int64_t total = ir_numel(&Y->shape);
    if (total == 0) return 0;
    const int r = X->shape.rank;
    int64_t K[IR_MAX_RANK], base[IR_MAX_RANK + 1], st[IR_MAX_RANK];
    int64_t *idx[IR_MAX_RANK];
    double *wt[IR_MAX_RANK];
    base[0] = 0;
    for (int a = 0; a < r; a++) {
        const int64_t o = Y->shape.dims[a];
        idx[a] = malloc(sizeof(int64_t) * (size_t)(4 * o));
        wt[a] = malloc(sizeof(double) * (size_t)(4 * o));
        GC_ASSERT(idx[a] && wt[a]);
        int kt = ir_resize_axis_taps(n, a, idx[a], wt[a]);
        if (kt < 1) { /* the taps need an operand read at run time (a tf_crop_and_resize roi) */
            for (int b = 0; b <= a; b++) {
                free(idx[b]);
                free(wt[b]);
            }
            return diag_node_error(d, n, "the CUDA backend does not support a Resize roi read at run time yet");
        }
        K[a] = kt;
        base[a + 1] = base[a] + o * kt;
    }
    cu_strides_of(&X->shape, st);
    const char *T = cfam_ctype(Y->dtype);
    Writer *w = &c->kern;
    const int kn = cu_kernel_begin(c, n);
    char lit[48];
    w_printf(w, "GC_TABLE int64_t k%d_ri[%lld] = {", kn, (long long)base[r]);
    int64_t col = 0;
    for (int a = 0; a < r; a++)
        for (int64_t o = 0; o < Y->shape.dims[a]; o++)
            for (int j = 0; j < K[a]; j++, col++)
                w_printf(w, "%s%lld", col == 0 ? "" : col % 16 == 0 ? ",\n    " : ", ", (long long)idx[a][4 * o + j]);
    w_puts(w, "};\n");
    w_printf(w, "GC_TABLE %s k%d_rw[%lld] = {", T, kn, (long long)base[r]);
    col = 0;
    for (int a = 0; a < r; a++)
        for (int64_t o = 0; o < Y->shape.dims[a]; o++)
            for (int j = 0; j < K[a]; j++, col++) {
                cfam_lit(lit, sizeof lit, Y->dtype, wt[a][4 * o + j]);
                w_printf(w, "%s%s", col == 0 ? "" : col % 8 == 0 ? ",\n    " : ", ", lit);
            }
    w_puts(w, "};\n");
    for (int a = 0; a < r; a++) {
        free(idx[a]);
        free(wt[a]);
    }
    w_printf(w, "GC_KERNEL k%d(%s *y, const %s *x)\n{\n", kn, T, T);
    w_printf(w, "    GC_FOR_EACH(i, %lld) {\n", (long long)total);
    char bt[IR_MAX_RANK][32], ot[IR_MAX_RANK][32], ri[32], rw[32];
    const char *bp[IR_MAX_RANK], *op[IR_MAX_RANK];
    for (int a = 0; a < r; a++) {
        snprintf(bt[a], sizeof bt[a], "%lld", (long long)base[a]);
        snprintf(ot[a], sizeof ot[a], "%lld", (long long)Y->shape.dims[a]);
        bp[a] = bt[a], op[a] = ot[a];
    }
    snprintf(ri, sizeof ri, "k%d_ri", kn);
    snprintf(rw, sizeof rw, "k%d_rw", kn);
    resize_loop(w, n, r, K, bp, op, st, ri, rw);
    w_printf(&c->body, "    GC_LAUNCH(k%d, %lld, stream, (%s, %s));\n", kn, (long long)total, cu_ptr(c, Y), cu_ptr(c, X));
    return 0;
}

/* ---- per-plane kernels: GlobalMaxPool, InstanceNormalization, LRN ---------------------------- */

/* n's planes: N*C planes of S elements (X[N, C, spatial...]). */
static void planes(const Value *X, int64_t *NC, int64_t *S)
{
    *NC = X->shape.rank >= 2 ? X->shape.dims[0] * X->shape.dims[1] : 0;
    *S = *NC ? ir_numel(&X->shape) / *NC : 0;
}

static int gmp_check(const Node *n, Diag *d)
{
    if (cu_check_float(n, d)) return -1;
    int64_t NC, S;
    planes(n->in[0], &NC, &S);
    return NC && !S ? diag_node_error(d, n, "input 'X' has empty spatial dims: the maximum is undefined") : 0;
}

static int emit_globalmaxpool(Cu *c, const Node *n, Diag *d)
{
    (void)d;
    const Value *X = n->in[0], *Y = n->out[0];
    int64_t NC, S;
    planes(X, &NC, &S);
    if (NC == 0) return 0;
    const char *T = cfam_ctype(X->dtype);
    Writer *w = &c->kern;
    const int kn = cu_kernel_begin(c, n);
    w_printf(w, "GC_KERNEL k%d(%s *y, const %s *x)\n{\n    GC_FOR_EACH(q, %lld) {\n", kn, T, T, (long long)NC);
    w_printf(w, "        %s mx = x[q * %lld];\n", T, (long long)S);
    w_printf(w, "        for (int64_t j = 1; j < %lld; j++) mx = x[q * %lld + j] > mx ? x[q * %lld + j] : mx;\n", (long long)S,
             (long long)S, (long long)S);
    w_puts(w, "        y[q] = mx;\n    }\n}\n\n");
    w_printf(&c->body, "    GC_LAUNCH(k%d, %lld, stream, (%s, %s));\n", kn, (long long)NC, cu_ptr(c, Y), cu_ptr(c, X));
    return 0;
}

static int instnorm_check(const Node *n, Diag *d)
{
    if (cu_check_float(n, d)) return -1;
    if (n->in[1]->dtype != n->in[0]->dtype || n->in[2]->dtype != n->in[0]->dtype)
        return diag_node_error(d, n, "the CUDA backend's InstanceNormalization takes one dtype for all inputs");
    return 0;
}

/* One thread per plane: mean, variance (two passes, in double), then y. */
static int emit_instancenorm(Cu *c, const Node *n, Diag *d)
{
    (void)d;
    const Value *X = n->in[0], *Y = n->out[0];
    int64_t NC, S;
    planes(X, &NC, &S);
    if (NC * S == 0) return 0;
    const int64_t C = X->shape.dims[1];
    const char *T = cfam_ctype(X->dtype);
    char eps[48];
    cfam_lit(eps, sizeof eps, DT_F64, n->attrs[INSTANCE_NORM_EPSILON].f);
    Writer *w = &c->kern;
    const int kn = cu_kernel_begin(c, n);
    w_printf(w, "GC_KERNEL k%d(%s *y, const %s *x, const %s *sc, const %s *bb)\n{\n", kn, T, T, T, T);
    w_printf(w, "    GC_FOR_EACH(q, %lld) {\n", (long long)NC);
    w_printf(w, "        const %s *xq = x + q * %lld;\n        %s *yq = y + q * %lld;\n", T, (long long)S, T, (long long)S);
    w_puts(w, "        double mean = 0, var = 0;\n");
    w_printf(w, "        for (int64_t j = 0; j < %lld; j++) mean += xq[j];\n", (long long)S);
    w_printf(w, "        mean /= %lld.0;\n", (long long)S);
    w_printf(w, "        for (int64_t j = 0; j < %lld; j++) var += (xq[j] - mean) * (xq[j] - mean);\n", (long long)S);
    w_printf(w, "        const double a = sc[q %% %lld] / sqrt(var / %lld.0 + %s);\n", (long long)C, (long long)S, eps);
    w_printf(w, "        for (int64_t j = 0; j < %lld; j++) yq[j] = (%s)((xq[j] - mean) * a + bb[q %% %lld]);\n", (long long)S,
             T, (long long)C);
    w_puts(w, "    }\n}\n\n");
    w_printf(&c->body, "    GC_LAUNCH(k%d, %lld, stream, (%s, %s, %s, %s));\n", kn, (long long)NC, cu_ptr(c, Y), cu_ptr(c, X),
             cu_ptr(c, n->in[1]), cu_ptr(c, n->in[2]));
    return 0;
}

/* LRN across channels: one thread per element, the window's squares in double. */
static int emit_lrn(Cu *c, const Node *n, Diag *d)
{
    (void)d;
    const Value *X = n->in[0], *Y = n->out[0];
    const int64_t total = ir_numel(&Y->shape);
    if (total == 0) return 0;
    int64_t NC, S;
    planes(X, &NC, &S);
    const int64_t C = X->shape.dims[1], size = n->attrs[LRN_SIZE].i, lo = (size - 1) / 2, hi = size - 1 - lo;
    char a[48], b[48], bi[48];
    cfam_lit(a, sizeof a, DT_F64, n->attrs[LRN_ALPHA].f / (double)size);
    cfam_lit(b, sizeof b, DT_F64, n->attrs[LRN_BETA].f);
    cfam_lit(bi, sizeof bi, DT_F64, n->attrs[LRN_BIAS].f);
    const char *T = cfam_ctype(X->dtype);
    Writer *w = &c->kern;
    const int kn = cu_kernel_begin(c, n);
    w_printf(w, "GC_KERNEL k%d(%s *y, const %s *x)\n{\n    GC_FOR_EACH(i, %lld) {\n", kn, T, T, (long long)total);
    w_printf(w, "        const int64_t s = i %% %lld, ch = i / %lld %% %lld, nb = i / %lld;\n", (long long)S, (long long)S,
             (long long)C, (long long)(S * C));
    w_printf(w, "        const int64_t j0 = ch - %lld < 0 ? 0 : ch - %lld, j1 = ch + %lld >= %lld ? %lld : ch + %lld;\n",
             (long long)lo, (long long)lo, (long long)hi, (long long)C, (long long)(C - 1), (long long)hi);
    w_puts(w, "        double sq = 0;\n");
    w_printf(w, "        for (int64_t j = j0; j <= j1; j++) {\n            const double v = x[(nb * %lld + j) * %lld + s];\n",
             (long long)C, (long long)S);
    w_puts(w, "            sq += v * v;\n        }\n");
    w_printf(w, "        y[i] = (%s)((double)x[i] / pow(%s + %s * sq, %s));\n    }\n}\n\n", T, bi, a, b);
    w_printf(&c->body, "    GC_LAUNCH(k%d, %lld, stream, (%s, %s));\n", kn, (long long)total, cu_ptr(c, Y), cu_ptr(c, X));
    return 0;
}

/* ---- MeanVarianceNormalization, Hardmax --------------------------------------------------- */

/* One thread per kept index: the reduced elements' mean, then the mean
 * squared deviation, then y = (x - mean) / (sqrt(var) + 1e-9). */
static int emit_mvn(Cu *c, const Node *n, Diag *d)
{
    (void)d;
    const Value *X = n->in[0], *Y = n->out[0];
    const int64_t total = ir_numel(&Y->shape);
    if (total == 0) return 0;
    int mask[IR_MAX_RANK];
    GC_ASSERT(ir_mvn_axes(n, mask, NULL) == 0);
    const Shape *xs = &X->shape;
    int64_t st[IR_MAX_RANK], kd[IR_MAX_RANK], km[IR_MAX_RANK], rd[IR_MAX_RANK], rm[IR_MAX_RANK], K = 1, R = 1;
    int nk = 0, nr = 0;
    cu_strides_of(xs, st);
    for (int q = 0; q < xs->rank; q++) {
        if (mask[q]) rd[nr] = xs->dims[q], rm[nr++] = st[q], R *= xs->dims[q];
        else kd[nk] = xs->dims[q], km[nk++] = st[q], K *= xs->dims[q];
    }
    const char *T = cfam_ctype(X->dtype);
    Writer *w = &c->kern;
    const int kn = cu_kernel_begin(c, n);
    w_printf(w, "GC_KERNEL k%d(%s *y, const %s *x)\n{\n    GC_FOR_EACH(i, %lld) {\n", kn, T, T, (long long)K);
    cu_index_map(w, "o", nk, kd, km, NULL);
    w_puts(w, "        double mean = 0, var = 0;\n");
    w_puts(w, "        for (int pass = 0; pass < 3; pass++) {\n");
    w_printf(w, "            for (int64_t j = 0; j < %lld; j++) {\n", (long long)R);
    if (nr == 0) w_puts(w, "                const int64_t p = o;\n                (void)j;\n");
    else w_puts(w, "                int64_t p = o, r = j;\n");
    for (int q = nr - 1; q >= 0; q--) {
        if (q > 0) w_printf(w, "                p += r %% %lld * %lld;\n                r /= %lld;\n", (long long)rd[q], (long long)rm[q], (long long)rd[q]);
        else w_printf(w, "                p += r * %lld;\n", (long long)rm[q]);
    }
    w_puts(w, "                if (pass == 0) mean += x[p];\n");
    w_puts(w, "                else if (pass == 1) var += (x[p] - mean) * (x[p] - mean);\n");
    w_printf(w, "                else y[p] = (%s)((x[p] - mean) / (sqrt(var) + 1e-9));\n", T);
    w_puts(w, "            }\n");
    w_printf(w, "            if (pass == 0) mean /= %lld.0;\n", (long long)(R ? R : 1));
    w_printf(w, "            else if (pass == 1) var /= %lld.0;\n", (long long)(R ? R : 1));
    w_puts(w, "        }\n    }\n}\n\n");
    w_printf(&c->body, "    GC_LAUNCH(k%d, %lld, stream, (%s, %s));\n", kn, (long long)K, cu_ptr(c, Y), cu_ptr(c, X));
    return 0;
}

/* Hardmax: one thread per row along the axis; 1 at the first maximum. */
static int emit_hardmax(Cu *c, const Node *n, Diag *d)
{
    (void)d;
    const Value *X = n->in[0], *Y = n->out[0];
    int64_t outer, len, inner;
    GC_ASSERT(ir_hardmax_split(n, &outer, &len, &inner) == 0);
    if (outer * inner * len == 0) return 0;
    const char *T = cfam_ctype(X->dtype);
    Writer *w = &c->kern;
    const int kn = cu_kernel_begin(c, n);
    w_printf(w, "GC_KERNEL k%d(%s *y, const %s *x)\n{\n    GC_FOR_EACH(r, %lld) {\n", kn, T, T, (long long)(outer * inner));
    w_printf(w, "        const int64_t base = r / %lld * %lld + r %% %lld;\n", (long long)inner, (long long)(len * inner),
             (long long)inner);
    w_puts(w, "        int64_t best = 0;\n");
    w_printf(w, "        for (int64_t j = 0; j < %lld; j++)\n", (long long)len);
    w_printf(w, "            if (x[base + j * %lld] > x[base + best * %lld]) best = j;\n", (long long)inner, (long long)inner);
    w_printf(w, "        for (int64_t j = 0; j < %lld; j++) y[base + j * %lld] = (%s)(j == best);\n", (long long)len,
             (long long)inner, T);
    w_puts(w, "    }\n}\n\n");
    w_printf(&c->body, "    GC_LAUNCH(k%d, %lld, stream, (%s, %s));\n", kn, (long long)(outer * inner), cu_ptr(c, Y), cu_ptr(c, X));
    return 0;
}

/* ---- DepthToSpace, SpaceToDepth, Dropout ---------------------------------------------------- */

static int block_check(const Node *n, Diag *d)
{
    return n->in[0]->shape.rank == 4 ? 0 : diag_node_error(d, n, "the CUDA backend takes 4-D inputs here");
}

/* One thread per output element of DepthToSpace (its source by
 * ir_depth_to_space_src's rule) or SpaceToDepth (the DCR inverse). */
static int emit_block(Cu *c, const Node *n, Diag *d)
{
    (void)d;
    const Value *X = n->in[0], *Y = n->out[0];
    const int64_t total = ir_numel(&Y->shape);
    if (total == 0) return 0;
    const int d2s = n->op == OP_DepthToSpace;
    const int64_t b = n->attrs[d2s ? DEPTH_TO_SPACE_BLOCKSIZE : SPACE_TO_DEPTH_BLOCKSIZE].i;
    const int crd = d2s && strcmp(n->attrs[DEPTH_TO_SPACE_MODE].s, "CRD") == 0;
    const int64_t *xd = X->shape.dims, *yd = Y->shape.dims;
    const char *T = cfam_ctype(Y->dtype);
    Writer *w = &c->kern;
    const int kn = cu_kernel_begin(c, n);
    w_printf(w, "GC_KERNEL k%d(%s *y, const %s *x)\n{\n    GC_FOR_EACH(i, %lld) {\n", kn, T, T, (long long)total);
    w_printf(w, "        const int64_t ox = i %% %lld, oy = i / %lld %% %lld, ch = i / %lld %% %lld, nb = i / %lld;\n",
             (long long)yd[3], (long long)yd[3], (long long)yd[2], (long long)(yd[3] * yd[2]), (long long)yd[1],
             (long long)(yd[3] * yd[2] * yd[1]));
    if (d2s) {
        const long long Co = (long long)yd[1], B = (long long)b;
        if (crd) w_printf(w, "        const int64_t ci = (ch * %lld + oy %% %lld) * %lld + ox %% %lld;\n", B, B, B, B);
        else w_printf(w, "        const int64_t ci = (oy %% %lld * %lld + ox %% %lld) * %lld + ch;\n", B, B, B, Co);
        w_printf(w, "        y[i] = x[((nb * %lld + ci) * %lld + oy / %lld) * %lld + ox / %lld];\n", (long long)xd[1],
                 (long long)xd[2], B, (long long)xd[3], B);
    } else {
        /* output channel ch = ((iy % b) * b + ix % b) * C + c */
        const long long C = (long long)xd[1], B = (long long)b;
        w_printf(w, "        const int64_t cc = ch %% %lld, bx = ch / %lld %% %lld, by = ch / %lld;\n", C, C, B, C * B);
        w_printf(w, "        y[i] = x[((nb * %lld + cc) * %lld + oy * %lld + by) * %lld + ox * %lld + bx];\n", C,
                 (long long)xd[2], B, (long long)xd[3], B);
    }
    w_puts(w, "    }\n}\n\n");
    w_printf(&c->body, "    GC_LAUNCH(k%d, %lld, stream, (%s, %s));\n", kn, (long long)total, cu_ptr(c, Y), cu_ptr(c, X));
    return 0;
}

/* Inference Dropout: output = data (a device copy unless planned in place),
 * mask all true. */
static int emit_dropout(Cu *c, const Node *n, Diag *d)
{
    (void)d;
    const Value *X = n->in[0], *Y = n->out[0];
    const int64_t cnt = ir_numel(&Y->shape);
    if (cnt == 0) return 0;
    Writer *b = &c->body;
    const char *px = cu_ptr(c, X), *py = cu_ptr(c, Y);
    w_printf(b, "    if ((const void *)%s != (const void *)%s &&\n", py, px);
    w_printf(b, "        cudaMemcpyAsync(%s, %s, %lld, cudaMemcpyDeviceToDevice, stream) != cudaSuccess) return -1;\n", py, px,
             (long long)(cnt * (int64_t)ir_dtype_size(X->dtype)));
    if (n->n_out > 1 && n->out[1])
        w_printf(b, "    if (cudaMemsetAsync(%s, 1, %lld, stream) != cudaSuccess) return -1;\n", cu_ptr(c, n->out[1]), (long long)cnt);
    return 0;
}

/* ---- RoiAlign ---------------------------------------------------------------------------------- */

static int roialign_check(const Node *n, Diag *d)
{
    if (cu_check_float(n, d)) return -1;
    if (n->in[1]->dtype != n->in[0]->dtype || n->in[2]->dtype != DT_I64)
        return diag_node_error(d, n, "the CUDA backend's RoiAlign takes rois in X's dtype and i64 batch indices");
    return 0;
}

/* Dim k of s as a double in kernel text: "9.0", or "(double)dim[2]". */
static const char *dbl_dim(Cu *c, const Shape *s, int k, char *buf, size_t cap)
{
    if (s->sym[k]) snprintf(buf, cap, "(double)%s", cu_dims_sz(c, s, k, k + 1));
    else snprintf(buf, cap, "%lld.0", (long long)s->dims[k]);
    return buf;
}

/* Dim k of s minus one: "8", or "(dim[2] - 1)". */
static const char *dim_m1(Cu *c, const Shape *s, int k, char *buf, size_t cap)
{
    if (s->sym[k]) snprintf(buf, cap, "(%s - 1)", cu_dims_sz(c, s, k, k + 1));
    else snprintf(buf, cap, "%lld", (long long)s->dims[k] - 1);
    return buf;
}

/* RoiAlign (opset 16; gcrt_roialign's rules): one thread per output
 * element (roi, channel, bin) samples its bin on a regular grid (adaptive:
 * ceil(extent / bins) per axis) with the reference's clamping and
 * bilinear taps, averaging or taking the maximum of the weighted taps; a
 * batch index outside [0, N) gives 0. Runtime extents (the detectors'
 * box counts, a runtime batch or image size) are read from the shape table. */
static int emit_roialign(Cu *c, const Node *n, Diag *d)
{
    (void)d;
    const Value *X = n->in[0], *Ro = n->in[1], *Bi = n->in[2], *Y = n->out[0];
    if (ir_numel(&Y->shape) == 0) return 0;
    const Shape *xs = &X->shape, *ys = &Y->shape;
    char N[200], C[200], W[200], OH[200], OW[200], OHd[200], OWd[200], Hd[200], Wd[200], H1[200], W1[200], ow_oh[200], ow_oh_c[200],
        hw[200];
    snprintf(N, sizeof N, "%s", cu_dims_sz(c, xs, 0, 1));
    snprintf(C, sizeof C, "%s", cu_dims_sz(c, xs, 1, 2));
    snprintf(W, sizeof W, "%s", cu_dims_sz(c, xs, 3, 4));
    snprintf(OH, sizeof OH, "%s", cu_dims_sz(c, ys, 2, 3));
    snprintf(OW, sizeof OW, "%s", cu_dims_sz(c, ys, 3, 4));
    dbl_dim(c, ys, 2, OHd, sizeof OHd);
    dbl_dim(c, ys, 3, OWd, sizeof OWd);
    dbl_dim(c, xs, 2, Hd, sizeof Hd);
    dbl_dim(c, xs, 3, Wd, sizeof Wd);
    dim_m1(c, xs, 2, H1, sizeof H1);
    dim_m1(c, xs, 3, W1, sizeof W1);
    snprintf(ow_oh, sizeof ow_oh, "%s", cu_dims_sz(c, ys, 2, 4));
    snprintf(ow_oh_c, sizeof ow_oh_c, "%s", cu_dims_sz(c, ys, 1, 4));
    snprintf(hw, sizeof hw, "%s", cu_dims_sz(c, xs, 2, 4));
    const long long sr = (long long)n->attrs[ROI_ALIGN_SAMPLING_RATIO].i;
    const int half = strcmp(n->attrs[ROI_ALIGN_COORDINATE_TRANSFORMATION_MODE].s, "half_pixel") == 0;
    const int mx = strcmp(n->attrs[ROI_ALIGN_MODE].s, "max") == 0;
    const int dyn = cu_dyn(c, n);
    char scale[48];
    cfam_lit(scale, sizeof scale, DT_F64, n->attrs[ROI_ALIGN_SPATIAL_SCALE].f);
    const char *T = cfam_ctype(X->dtype);
    Writer *w = &c->kern;
    const int kn = cu_kernel_begin(c, n);
    /* the bilinear taps of sample (y, x): all weights 0 outside [-1, H] x [-1, W], else clamped */
    w_printf(w, "GC_DEVICE void k%d_taps(double y, double x, int64_t *pos, double *wt%s)\n{\n", kn, cu_kparam(c, n));
    if (dyn) w_puts(w, "    (void)dim;\n");
    if (dyn) w_printf(w, "    if (y < -1.0 || y > %s || x < -1.0 || x > %s) {\n", Hd, Wd);
    else w_printf(w, "    if (y < -1.0 || y > %lld.0 || x < -1.0 || x > %lld.0) {\n", (long long)xs->dims[2], (long long)xs->dims[3]);
    w_puts(w, "        for (int k = 0; k < 4; k++) pos[k] = 0, wt[k] = 0;\n        return;\n    }\n");
    w_puts(w, "    y = y > 0 ? y : 0;\n    x = x > 0 ? x : 0;\n");
    w_puts(w, "    int64_t y0 = (int64_t)y, x0 = (int64_t)x, y1 = y0 + 1, x1 = x0 + 1;\n");
    w_printf(w, "    if (y0 >= %s) {\n        y0 = y1 = %s;\n        y = (double)y0;\n    }\n", H1, H1);
    w_printf(w, "    if (x0 >= %s) {\n        x0 = x1 = %s;\n        x = (double)x0;\n    }\n", W1, W1);
    w_puts(w, "    const double ly = y - (double)y0, lx = x - (double)x0;\n");
    w_printf(w, "    pos[0] = y0 * %s + x0;\n    pos[1] = y0 * %s + x1;\n    pos[2] = y1 * %s + x0;\n    pos[3] = y1 * %s + x1;\n", W, W, W, W);
    w_puts(w, "    wt[0] = (1.0 - ly) * (1.0 - lx);\n    wt[1] = (1.0 - ly) * lx;\n    wt[2] = ly * (1.0 - lx);\n    wt[3] = ly * lx;\n}\n");
    if (sr <= 0) {
        w_printf(w, "GC_DEVICE int64_t k%d_grid(double extent, int64_t bins)\n{\n", kn);
        w_puts(w, "    const double g = ceil(extent / (double)bins);\n    return g > 0 ? (g < 65536.0 ? (int64_t)g : 65536) : 0;\n}\n");
    }
    w_printf(w, "GC_KERNEL k%d(%s *y, const %s *x, const %s *rois, const int64_t *bidx%s)\n{\n", kn, T, T, T, cu_kparam(c, n));
    cu_kuse(c, n, w);
    w_printf(w, "    GC_FOR_EACH(i, %s) {\n", cu_dims_sz(c, ys, 0, 4));
    w_printf(w, "        const int64_t pw = i %% %s, ph = i / %s %% %s, ch = i / %s %% %s, r = i / %s;\n", OW, OW, OH, ow_oh, C, ow_oh_c);
    w_printf(w, "        if (bidx[r] < 0 || bidx[r] >= %s) {\n            y[i] = 0;\n            continue;\n        }\n", N);
    w_printf(w, "        const %s *roi = rois + 4 * r, *plane = x + (bidx[r] * %s + ch) * %s;\n", T, C, hw);
    w_printf(w, "        const double off = %s;\n", half ? "0.5" : "0.0");
    w_printf(w, "        const double x0 = (double)roi[0] * %s - off, y0 = (double)roi[1] * %s - off;\n", scale, scale);
    w_printf(w, "        double rw = (double)roi[2] * %s - off - x0, rh = (double)roi[3] * %s - off - y0;\n", scale, scale);
    if (!half) w_puts(w, "        rw = rw > 1.0 ? rw : 1.0;\n        rh = rh > 1.0 ? rh : 1.0;\n");
    w_printf(w, "        const double bh = rh / %s, bw = rw / %s;\n", OHd, OWd);
    if (sr > 0) w_printf(w, "        const int64_t gh = %lld, gw = %lld;\n", sr, sr);
    else w_printf(w, "        const int64_t gh = k%d_grid(rh, %s), gw = k%d_grid(rw, %s);\n", kn, OH, kn, OW);
    w_puts(w, mx ? "        double acc = 0.0;\n        int first = 1;\n" : "        double acc = 0.0;\n");
    w_puts(w, "        for (int64_t iy = 0; iy < gh; iy++) {\n");
    w_puts(w, "            const double sy = y0 + (double)ph * bh + ((double)iy + 0.5) * bh / (double)gh;\n");
    w_puts(w, "            for (int64_t ix = 0; ix < gw; ix++) {\n");
    w_puts(w, "                const double sx = x0 + (double)pw * bw + ((double)ix + 0.5) * bw / (double)gw;\n");
    w_puts(w, "                double wt[4];\n                int64_t pos[4];\n");
    w_printf(w, "                k%d_taps(sy, sx, pos, wt%s);\n", kn, dyn ? ", dim" : "");
    if (mx) {
        w_puts(w, "                double v = wt[0] * (double)plane[pos[0]];\n");
        w_puts(w, "                for (int k = 1; k < 4; k++)\n                    if (wt[k] * (double)plane[pos[k]] > v) v = wt[k] * (double)plane[pos[k]];\n");
        w_puts(w, "                if (first || v > acc) acc = v;\n                first = 0;\n");
    } else {
        w_puts(w, "                for (int k = 0; k < 4; k++) acc += wt[k] * (double)plane[pos[k]];\n");
    }
    w_puts(w, "            }\n        }\n");
    if (mx) w_printf(w, "        y[i] = (%s)acc;\n", T);
    else w_printf(w, "        y[i] = (%s)(acc / (double)(gh * gw > 1 ? gh * gw : 1));\n", T);
    w_puts(w, "    }\n}\n\n");
    w_printf(&c->body, "    GC_LAUNCH(k%d, %s, stream, (%s, %s, %s, %s%s));\n", kn, cu_dims_sz(c, ys, 0, 4), cu_ptr(c, Y), cu_ptr(c, X),
             cu_ptr(c, Ro), cu_ptr(c, Bi), cu_karg(c, n));
    return 0;
}

#define OUT "a generated kernel, one thread per output element"

const CudaEntry cuda_vision_entries[] = {
    {OP_ConvTranspose, convtranspose_check, emit_convtranspose, NULL, "a generated kernel, one thread per output element (gather form)", 0, 0},
    {OP_Resize, resize_check, emit_resize, resize_workspace,
     "a generated kernel over the compiler's tap tables (runtime scales or sizes: the host's), one thread per output element", 0, 2},
    {OP_Upsample, resize_check, emit_resize, resize_workspace,
     "a generated kernel over the compiler's tap tables (runtime scales: the host's), one thread per output element", 0, 2},
    {OP_GlobalMaxPool, gmp_check, emit_globalmaxpool, NULL, "a generated kernel, one thread per image and channel", 0, 0},
    {OP_InstanceNormalization, instnorm_check, emit_instancenorm, NULL, "a generated kernel, one thread per image and channel", 0, 0},
    {OP_LRN, cu_check_float, emit_lrn, NULL, OUT, 0, 0},
    {OP_MeanVarianceNormalization, cu_check_float, emit_mvn, NULL, "a generated kernel, one thread per kept index", 0, 0},
    {OP_Hardmax, cu_check_float, emit_hardmax, NULL, "a generated kernel, one thread per row", 0, 0},
    {OP_DepthToSpace, block_check, emit_block, NULL, OUT, 1, 0},
    {OP_SpaceToDepth, block_check, emit_block, NULL, OUT, 1, 0},
    {OP_Dropout, NULL, emit_dropout, NULL, "a device copy (none when in place) and a memset of the mask", 1, 0},
    {OP_RoiAlign, roialign_check, emit_roialign, NULL, "a generated kernel, one thread per output element", 0, 1},
    {-1, NULL, NULL, NULL, NULL, 0, 0},
};
