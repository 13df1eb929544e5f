/* cuda_quant.c — the CUDA backend's generated kernels for QuantizeLinear,
 * DequantizeLinear, DynamicQuantizeLinear, MatMulInteger, QLinearMatMul,
 * ConvInteger and QLinearConv (see cuda_emit.h).
 * Quantize/Dequantize: one thread per element, the
 * arithmetic of the C backend (backend/c/emit_quant.c) and the reference
 * (ir/ops/quant.c), so all give the same integers: x / scale divided in
 * float for float32 tensors and in double otherwise, rounded half to even
 * (rint), plus the zero point, saturated to the output's range; per-axis
 * parameters indexed by ir_quant_axis_geometry.
 */
#include "cuda_emit.h"
#include "../cfamily/cfam_expr.h"
#include "../../ir/ops/geometry.h"
#include "../../ir/ops/quant_attrs.h"

#include <stdio.h>
#include <string.h>

static int quant_check(const Node *n, Diag *d)
{
    int64_t nch, inner;
    if (ir_quant_axis_geometry(n, &nch, &inner)) return diag_node_error(d, n, "invalid quantization axis");
    DType q = n->op == OP_QuantizeLinear ? n->out[0]->dtype : n->in[0]->dtype;
    if (q != DT_U8 && q != DT_I8 && q != DT_I32)
        return diag_node_error(d, n, "the CUDA backend quantizes to u8, i8 and i32 only, got %s", ir_dtype_name(q));
    return 0;
}

/* Into a kernel over elements i: `const int64_t ch` the parameters' element
 * of element i (0 when per tensor); written only when a parameter has
 * more than one element. */
static void param_index(Writer *w, const Node *n)
{
    int64_t nch, inner;
    GC_ASSERT(ir_quant_axis_geometry(n, &nch, &inner) == 0);
    if (nch == 1) w_puts(w, "        const int64_t ch = 0;\n");
    else w_printf(w, "        const int64_t ch = i / %lld %% %lld;\n", (long long)inner, (long long)nch);
}

/* v[ch], or v[0] when v holds one value. */
static const char *param(char *buf, size_t cap, const char *name, const Value *v)
{
    snprintf(buf, cap, "%s[%s]", name, ir_numel(&v->shape) == 1 ? "0" : "ch");
    return buf;
}

static int emit_quant(Cu *c, const Node *n, Diag *d)
{
    (void)d;
    const Value *X = n->in[0], *S = n->in[1], *Z = n->n_in > 2 ? n->in[2] : NULL, *Y = n->out[0];
    const int64_t total = ir_numel(&X->shape);
    if (total == 0) return 0;
    const int q = n->op == OP_QuantizeLinear;
    Writer *w = &c->kern;
    const int kn = cu_kernel_begin(c, n);
    w_printf(w, "GC_KERNEL k%d(%s *y, const %s *x, const %s *sc", kn, cfam_ctype(Y->dtype), cfam_ctype(X->dtype), cfam_ctype(S->dtype));
    if (Z) w_printf(w, ", const %s *zp", cfam_ctype(Z->dtype));
    w_printf(w, ")\n{\n    GC_FOR_EACH(i, %lld) {\n", (long long)total);
    if (ir_numel(&S->shape) > 1 || (Z && ir_numel(&Z->shape) > 1)) param_index(w, n);
    char ps[32], pz[32];
    param(ps, sizeof ps, "sc", S);
    if (Z) param(pz, sizeof pz, "zp", Z);
    if (q) {
        const int dbl = X->dtype == DT_F64 || S->dtype == DT_F64 || ir_dtype_is_int(X->dtype);
        const DType t = Y->dtype;
        const char *lo = t == DT_I8 ? "-128.0" : t == DT_U8 ? "0.0" : "-2147483648.0";
        const char *hi = t == DT_I8 ? "127.0" : t == DT_U8 ? "255.0" : "2147483647.0";
        w_puts(w, "        const double v = ");
        cu_load(w, X->dtype, "x[i]");
        w_puts(w, ";\n");
        if (dbl) w_printf(w, "        const double q = rint(v / (double)%s)", ps);
        else w_printf(w, "        const double q = rint((double)((float)v / (float)%s))", ps);
        w_printf(w, " + %s%s;\n", Z ? "(double)" : "0.0", Z ? pz : "");
        w_printf(w, "        y[i] = (%s)(q < %s ? %s : q > %s ? %s : q);\n", cfam_ctype(t), lo, lo, hi, hi);
    } else {
        const char *ct = S->dtype == DT_F64 ? "double" : "float";
        char val[160];
        snprintf(val, sizeof val, "(%s)((int64_t)x[i] - %s%s) * %s", ct, Z ? "(int64_t)" : "0", Z ? pz : "", ps);
        w_puts(w, "        ");
        cu_store(w, Y->dtype, "y[i]", val);
    }
    w_puts(w, "    }\n}\n\n");
    w_printf(&c->body, "    GC_LAUNCH(k%d, %lld, stream, (%s, %s, %s", kn, (long long)total, cu_ptr(c, Y), cu_ptr(c, X), cu_ptr(c, S));
    if (Z) w_printf(&c->body, ", %s", cu_ptr(c, Z));
    w_puts(&c->body, "));\n");
    return 0;
}

/* ---- MatMulInteger, QLinearMatMul ------------------------------------------------------------ */

/* v[IDX] as a double, v's element 0 when it holds one value; "0.0" when v
 * is absent. */
static const char *pval(char *buf, size_t cap, const char *name, const Value *v, const char *idx)
{
    if (!v) snprintf(buf, cap, "0.0");
    else snprintf(buf, cap, "(double)%s[%s]", name, ir_numel(&v->shape) == 1 ? "0" : idx);
    return buf;
}

/* Into a kernel: `y[i] = ` the integer sum `acc` (double, exact) as int32,
 * or requantized (QLinear*: (acc + bias) * s1 * s2 / y_scale rounded half
 * to even, plus y_zero_point, saturated to y's type). */
static void store_q(Writer *w, const Node *n, int qlinear, const char *s1, const char *s2, const char *bias)
{
    if (!qlinear) {
        w_puts(w, "        y[i] = (int32_t)(int64_t)acc;\n");
        return;
    }
    const DType t = n->out[0]->dtype;
    const char *lo = t == DT_I8 ? "-128.0" : t == DT_U8 ? "0.0" : "-2147483648.0";
    const char *hi = t == DT_I8 ? "127.0" : t == DT_U8 ? "255.0" : "2147483647.0";
    const int yz = n->n_in > 7 && n->in[7];
    w_printf(w, "        const double q = rint((acc%s) * (%s * %s / (double)ys[0])) + %s;\n", bias, s1, s2, yz ? "(double)yz[0]" : "0.0");
    w_printf(w, "        y[i] = (%s)(q < %s ? %s : q > %s ? %s : q);\n", cfam_ctype(t), lo, lo, hi, hi);
}

/* MatMulInteger (A, B, a_zp, b_zp) and QLinearMatMul (a, a_scale, a_zp, b,
 * b_scale, b_zp, y_scale, y_zp): one thread per output element sums the
 * zero-point-shifted products exactly in double (A's parameters per row, B's
 * per column, as the C backend reads them). */
static int emit_qmatmul(Cu *c, const Node *n, Diag *d)
{
    (void)d;
    const int ql = n->op == OP_QLinearMatMul, ia = 0, ib = ql ? 3 : 1, iza = 2, izb = ql ? 5 : 3;
    const Value *A = n->in[ia], *B = n->in[ib], *Y = n->out[0];
    const Value *Za = n->n_in > iza ? n->in[iza] : NULL, *Zb = n->n_in > izb ? n->in[izb] : NULL;
    const int64_t total = ir_numel(&Y->shape);
    if (total == 0) return 0;
    IrMatMulGeom g;
    GC_ASSERT(ir_matmul_geometry(n, ia, ib, &g, NULL) == 0);
    Writer *w = &c->kern;
    const int kn = cu_kernel_begin(c, n);
    const Value *args[8];
    const char *names[8];
    int na = 0;
#define ARG(v, nm) (args[na] = (v), names[na++] = (nm))
    ARG(A, "a");
    ARG(B, "b");
    if (Za) ARG(Za, "za");
    if (Zb) ARG(Zb, "zb");
    if (ql) {
        ARG(n->in[1], "sa");
        ARG(n->in[4], "sb");
        ARG(n->in[6], "ys");
        if (n->n_in > 7 && n->in[7]) ARG(n->in[7], "yz");
    }
#undef ARG
    w_printf(w, "GC_KERNEL k%d(%s *y", kn, cfam_ctype(Y->dtype));
    for (int j = 0; j < na; j++) w_printf(w, ", const %s *%s", cfam_ctype(args[j]->dtype), names[j]);
    w_printf(w, ")\n{\n    GC_FOR_EACH(i, %lld) {\n", (long long)total);
    w_printf(w, "        const int64_t col = i %% %lld, row = i / %lld %% %lld, bi = i / %lld;\n", (long long)g.N, (long long)g.N,
             (long long)g.M, (long long)(g.M * g.N));
    w_puts(w, "        int64_t oa = 0, ob = 0, r = bi;\n");
    for (int k = g.batch.rank - 1; k >= 0; k--)
        w_printf(w, "        oa += r %% %lld * %lld;\n        ob += r %% %lld * %lld;\n        r /= %lld;\n", (long long)g.batch.dims[k],
                 (long long)g.sa[k], (long long)g.batch.dims[k], (long long)g.sb[k], (long long)g.batch.dims[k]);
    char za[48], zb[48], s1[48] = "", s2[48] = "";
    pval(za, sizeof za, "za", Za, "row");
    pval(zb, sizeof zb, "zb", Zb, "col");
    w_puts(w, "        (void)r;\n        double acc = 0;\n");
    w_printf(w, "        for (int64_t k = 0; k < %lld; k++)\n", (long long)g.K);
    w_printf(w, "            acc += ((double)a[oa + row * %lld + k] - %s) * ((double)b[ob + k * %lld + col] - %s);\n", (long long)g.K, za,
             (long long)g.N, zb);
    if (ql) {
        pval(s1, sizeof s1, "sa", n->in[1], "row");
        pval(s2, sizeof s2, "sb", n->in[4], "col");
    }
    store_q(w, n, ql, s1, s2, "");
    w_puts(w, "    }\n}\n\n");
    w_printf(&c->body, "    GC_LAUNCH(k%d, %lld, stream, (%s", kn, (long long)total, cu_ptr(c, Y));
    for (int j = 0; j < na; j++) w_printf(&c->body, ", %s", cu_ptr(c, args[j]));
    w_puts(&c->body, "));\n");
    return 0;
}

/* ---- ConvInteger, QLinearConv ------------------------------------------------------------------ */

static void store_convinteger(Writer *w, const Node *n)
{
    store_q(w, n, 0, "", "", "");
}

static void store_qlinearconv(Writer *w, const Node *n)
{
    char s2[48];
    pval(s2, sizeof s2, "ws", n->in[4], "m");
    store_q(w, n, 1, "(double)xs[0]", s2, n->n_in > 8 && n->in[8] ? " + (double)bb[m]" : "");
}

static int qconv_check(const Node *n, Diag *d)
{
    int64_t k[IR_MAX_RANK], st[IR_MAX_RANK], dl[IR_MAX_RANK], pb[IR_MAX_RANK], pe[IR_MAX_RANK];
    int sr = ir_nn_window_geometry(n, k, st, dl, pb, pe);
    return sr >= 1 && sr <= 3 ? 0 : diag_node_error(d, n, "the CUDA backend takes 1 to 3 spatial dims for %s", ir_op(n->op)->name);
}

/* ConvInteger (x, w, x_zp, w_zp) and QLinearConv (x, x_scale, x_zp, w,
 * w_scale, w_zp, y_scale, y_zp, B): the direct Conv kernel over the
 * zero-point-shifted operands (W's zero point and scale per output
 * channel), its exact sum stored as int32 or requantized. */
static int emit_qconv(Cu *c, const Node *n, Diag *d)
{
    (void)d;
    const int ql = n->op == OP_QLinearConv, izx = 2, izw = ql ? 5 : 3;
    CuConvQuant q = {0};
    q.ix = 0;
    q.iw = ql ? 3 : 1;
    q.store = ql ? store_qlinearconv : store_convinteger;
    const Value *Zx = n->n_in > izx ? n->in[izx] : NULL, *Zw = n->n_in > izw ? n->in[izw] : NULL;
    char zx[48], zw[48];
#define ARG(v, nm) (q.extra[q.n_extra] = (v), q.extra_names[q.n_extra++] = (nm))
    if (Zx) ARG(Zx, "zx");
    if (Zw) ARG(Zw, "zw");
    if (ql) {
        ARG(n->in[1], "xs");
        ARG(n->in[4], "ws");
        ARG(n->in[6], "ys");
        if (n->n_in > 7 && n->in[7]) ARG(n->in[7], "yz");
        if (n->n_in > 8 && n->in[8]) ARG(n->in[8], "bb");
    }
#undef ARG
    q.zx = pval(zx, sizeof zx, "zx", Zx, "0");
    q.zw = pval(zw, sizeof zw, "zw", Zw, "m");
    return cu_emit_conv_direct(c, n, &q);
}

/* ---- DynamicQuantizeLinear ------------------------------------------------------------------- */

/* DynamicQuantizeLinear (the C backend's arithmetic): one thread finds the
 * range [min(x, 0), max(x, 0)] and writes y_scale = range / 255 and the
 * zero point; then one thread per element quantizes to u8. */
static int emit_dynquant(Cu *c, const Node *n, Diag *d)
{
    (void)d;
    const Value *X = n->in[0], *Y = n->out[0], *S = n->out[1], *Z = n->out[2];
    const int64_t total = ir_numel(&X->shape);
    Writer *w = &c->kern;
    int kn = cu_kernel_begin(c, n);
    w_puts(w, "/* its scale and zero point */\n");
    w_printf(w, "GC_KERNEL k%d(float *ys, uint8_t *yz, const float *x)\n{\n    GC_FOR_EACH(s, 1) {\n", kn);
    w_puts(w, "        float lo = 0.0f, hi = 0.0f;\n        double z = 0.0;\n");
    w_printf(w, "        for (int64_t i = s; i < %lld; i++) {\n", (long long)total);
    w_puts(w, "            if (x[i] < lo) lo = x[i];\n            if (x[i] > hi) hi = x[i];\n        }\n");
    w_puts(w, "        const float sc = (hi - lo) / 255.0f;\n");
    w_puts(w, "        if (sc != 0.0f) {\n            z = rint((double)(-lo / sc));\n            z = z < 0.0 ? 0.0 : z > 255.0 ? 255.0 : z;\n        }\n");
    w_puts(w, "        ys[0] = sc;\n        yz[0] = (uint8_t)z;\n    }\n}\n\n");
    w_printf(&c->body, "    GC_LAUNCH(k%d, 1, stream, (%s, %s, %s));\n", kn, cu_ptr(c, S), cu_ptr(c, Z), cu_ptr(c, X));
    if (total == 0) return 0;
    kn = cu_kernel_begin(c, n);
    w_printf(w, "GC_KERNEL k%d(uint8_t *y, const float *x, const float *ys, const uint8_t *yz)\n{\n    GC_FOR_EACH(i, %lld) {\n", kn,
             (long long)total);
    w_puts(w, "        const float sc = ys[0];\n");
    w_puts(w, "        const double q = sc == 0.0f ? 0.0 : rint((double)(x[i] / sc)) + (double)yz[0];\n");
    w_puts(w, "        y[i] = (uint8_t)(q < 0.0 ? 0.0 : q > 255.0 ? 255.0 : q);\n    }\n}\n\n");
    w_printf(&c->body, "    GC_LAUNCH(k%d, %lld, stream, (%s, %s, %s, %s));\n", kn, (long long)total, cu_ptr(c, Y), cu_ptr(c, X),
             cu_ptr(c, S), cu_ptr(c, Z));
    return 0;
}

static int dynquant_check(const Node *n, Diag *d)
{
    return n->in[0]->dtype == DT_F32 && n->n_out == 3 && n->out[1] && n->out[2]
               ? 0
               : diag_node_error(d, n, "the CUDA backend's DynamicQuantizeLinear takes f32 and all three outputs");
}

const CudaEntry cuda_quant_entries[] = {
    {OP_QuantizeLinear, quant_check, emit_quant, NULL, "a generated kernel, one thread per element", 1, 0},
    {OP_DequantizeLinear, quant_check, emit_quant, NULL, "a generated kernel, one thread per element", 1, 0},
    {OP_MatMulInteger, NULL, emit_qmatmul, NULL, "a generated kernel, one thread per output element (exact sums in double)", 0, 0},
    {OP_QLinearMatMul, NULL, emit_qmatmul, NULL, "a generated kernel, one thread per output element (exact sums in double)", 0, 0},
    {OP_ConvInteger, qconv_check, emit_qconv, NULL, "a generated kernel, one thread per output element (exact sums in double)", 0, 0},
    {OP_QLinearConv, qconv_check, emit_qconv, NULL, "a generated kernel, one thread per output element (exact sums in double)", 0, 0},
    {OP_DynamicQuantizeLinear, dynquant_check, emit_dynquant, NULL,
     "generated kernels: one thread for the scale and zero point, then one per element", 0, 0},
    {-1, NULL, NULL, NULL, NULL, 0, 0},
};
