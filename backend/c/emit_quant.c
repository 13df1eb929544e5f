/* emit_quant.c — C emitters for the quantization family.
 *
 * Every kernel is written inline as one loop nest with literal sizes (the
 * shapes are static). The arithmetic mirrors the reference evaluations in
 * ir/ops/quant.c exactly, so interpreter and compiled code give the same
 * integers: x / scale is divided in float when the reference does
 * (float32 tensors) and in double otherwise, then rounded half to even with
 * rint() (the default rounding mode) and saturated to the zero point's
 * range; integer products accumulate in int64_t; requantization
 * (QLinearMatMul, QLinearConv) multiplies the accumulator by
 * a_scale * b_scale / y_scale computed in double. Loop variables come from
 * cgen_tmp() so they never shadow tensor identifiers. Input dtypes are
 * validated by shape inference (u8/i8 quantized tensors, float scales).
 */
#include "cgen.h"
#include "../../ir/ops/quant_attrs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPR_CAP 512

static int has_in(const Node *n, int i) { return i < n->n_in && n->in[i]; }

/* The text of cgen_load(t, ptr, idx) in buf. */
static const char *load_str(DType t, const char *ptr, const char *idx, char *buf, size_t cap)
{
    Writer tw;
    w_init(&tw);
    cgen_load(&tw, t, ptr, idx);
    snprintf(buf, cap, "%s", tw.buf ? tw.buf : "0");
    w_free(&tw);
    return buf;
}

/* The element of quantization parameter v at `idx` (or element 0 when v
 * holds one value) as a double expression; "0.0" when v is absent. */
static const char *param_str(Cgen *c, const Value *v, const char *idx, char *buf)
{
    char tmp[EXPR_CAP - 16], e[EXPR_CAP];
    if (!v) {
        snprintf(buf, EXPR_CAP, "0.0");
        return buf;
    }
    snprintf(e, sizeof e, "%s", cgen_ptr(c, v));
    load_str(v->dtype, e, ir_numel(&v->shape) == 1 ? "0" : idx, tmp, sizeof tmp);
    snprintf(buf, EXPR_CAP, "(double)(%s)", tmp);
    return buf;
}

/* Writes `Y[idx] = (T)(q clamped to T's range);` for a u8/i8/i32 output. */
static void store_sat(Writer *w, DType t, const char *y, const char *idx, const char *q)
{
    const char *lo = t == DT_I8 ? "-128.0" : t == DT_U8 ? "0.0" : "-2147483648.0";
    const char *hi = t == DT_I8 ? "127.0" : t == DT_U8 ? "255.0" : "2147483647.0";
    w_line(w, "%s[%s] = (%s)(%s < %s ? %s : (%s > %s ? %s : %s));", y, idx, cgen_ctype(t), q, lo, lo, q, hi, hi, q);
}

/* Channel expression `(i / inner % nch)` of a per-axis parameter. */
static void axis_geom(const Node *n, int64_t *nch, int64_t *inner)
{
    const Shape *xs = &n->in[0]->shape;
    int64_t len = ir_numel(&n->in[1]->shape);
    *nch = 1;
    *inner = 1;
    if (len == 1) return;
    int ax = ir_norm_axis(n->attrs[QL_AXIS].i, xs->rank);
    GC_ASSERT(ax >= 0);
    *nch = len;
    for (int k = ax + 1; k < xs->rank; k++) *inner *= xs->dims[k];
}

static int emit_quantize(Cgen *c, const Node *n, Diag *d)
{
    (void)d;
    Writer *w = cgen_w(c);
    const Value *x = n->in[0], *s = n->in[1], *z = has_in(n, 2) ? n->in[2] : NULL, *y = n->out[0];
    int64_t cnt = ir_numel(&x->shape), nch, inner;
    if (cnt == 0) return 0;
    axis_geom(n, &nch, &inner);
    const char *i = cgen_tmp(c, "i"), *q = cgen_tmp(c, "q");
    char ch[64], px[EXPR_CAP], ps[EXPR_CAP], lx[EXPR_CAP], ls[EXPR_CAP], zs[EXPR_CAP];
    if (nch == 1) snprintf(ch, sizeof ch, "0");
    else snprintf(ch, sizeof ch, "%s / %lld %% %lld", i, (long long)inner, (long long)nch);
    snprintf(px, sizeof px, "%s", cgen_ptr(c, x));
    snprintf(ps, sizeof ps, "%s", cgen_ptr(c, s));
    load_str(x->dtype, px, i, lx, sizeof lx);
    load_str(s->dtype, ps, ir_numel(&s->shape) == 1 ? "0" : ch, ls, sizeof ls);
    param_str(c, z, ch, zs);
    int dbl = x->dtype == DT_F64 || s->dtype == DT_F64 || ir_dtype_is_int(x->dtype);
    w_line(w, "{");
    w->indent++;
    w_line(w, "int64_t %s;", i);
    w_line(w, "for (%s = 0; %s < %lld; %s++) {", i, i, (long long)cnt, i);
    w->indent++;
    if (dbl) w_line(w, "double %s = rint((double)(%s) / (double)(%s)) + %s;", q, lx, ls, zs);
    else w_line(w, "double %s = rint((double)((float)(%s) / (float)(%s))) + %s;", q, lx, ls, zs);
    store_sat(w, y->dtype, cgen_ptr(c, y), i, q);
    w->indent--;
    w_line(w, "}");
    w->indent--;
    w_line(w, "}");
    return 0;
}

static int emit_dequantize(Cgen *c, const Node *n, Diag *d)
{
    (void)d;
    Writer *w = cgen_w(c);
    const Value *x = n->in[0], *s = n->in[1], *z = has_in(n, 2) ? n->in[2] : NULL, *y = n->out[0];
    int64_t cnt = ir_numel(&x->shape), nch, inner;
    if (cnt == 0) return 0;
    axis_geom(n, &nch, &inner);
    const char *i = cgen_tmp(c, "i");
    char ch[64], ps[EXPR_CAP], ls[EXPR_CAP], zs[EXPR_CAP + 32], val[4 * EXPR_CAP];
    if (nch == 1) snprintf(ch, sizeof ch, "0");
    else snprintf(ch, sizeof ch, "%s / %lld %% %lld", i, (long long)inner, (long long)nch);
    snprintf(ps, sizeof ps, "%s", cgen_ptr(c, s));
    load_str(s->dtype, ps, ir_numel(&s->shape) == 1 ? "0" : ch, ls, sizeof ls);
    if (z) {
        char pz[EXPR_CAP - 96];
        snprintf(pz, sizeof pz, "%s", cgen_ptr(c, z));
        snprintf(zs, sizeof zs, "(int64_t)%s[%s]", pz, ir_numel(&z->shape) == 1 ? "0" : ch);
    } else {
        snprintf(zs, sizeof zs, "0");
    }
    const char *ct = s->dtype == DT_F64 ? "double" : "float";
    snprintf(val, sizeof val, "(%s)((int64_t)%s[%s] - %s) * %s", ct, cgen_ptr(c, x), i, zs, ls);
    w_line(w, "{");
    w->indent++;
    w_line(w, "int64_t %s;", i);
    w_line(w, "for (%s = 0; %s < %lld; %s++)", i, i, (long long)cnt, i);
    w->indent++;
    cgen_store(w, y->dtype, cgen_ptr(c, y), i, val);
    w->indent -= 2;
    w_line(w, "}");
    return 0;
}

static int emit_dynquant(Cgen *c, const Node *n, Diag *d)
{
    (void)d;
    Writer *w = cgen_w(c);
    const Value *x = n->in[0];
    int64_t cnt = ir_numel(&x->shape);
    const char *i = cgen_tmp(c, "i"), *lo = cgen_tmp(c, "lo"), *hi = cgen_tmp(c, "hi"), *s = cgen_tmp(c, "scale"),
               *z = cgen_tmp(c, "zp"), *q = cgen_tmp(c, "q");
    char px[EXPR_CAP];
    snprintf(px, sizeof px, "%s", cgen_ptr(c, x));
    w_line(w, "{");
    w->indent++;
    w_line(w, "int64_t %s;", i);
    w_line(w, "float %s = 0.0f, %s = 0.0f, %s;", lo, hi, s);
    w_line(w, "double %s = 0.0;", z);
    w_line(w, "for (%s = 0; %s < %lld; %s++) {", i, i, (long long)cnt, i);
    w_line(w, "    if (%s[%s] < %s) %s = %s[%s];", px, i, lo, lo, px, i);
    w_line(w, "    if (%s[%s] > %s) %s = %s[%s];", px, i, hi, hi, px, i);
    w_line(w, "}");
    w_line(w, "%s = (%s - %s) / 255.0f;", s, hi, lo);
    w_line(w, "if (%s != 0.0f) {", s);
    w_line(w, "    %s = rint((double)(-%s / %s));", z, lo, s);
    w_line(w, "    %s = %s < 0.0 ? 0.0 : (%s > 255.0 ? 255.0 : %s);", z, z, z, z);
    w_line(w, "}");
    w_line(w, "%s[0] = %s;", cgen_ptr(c, n->out[1]), s);
    w_line(w, "%s[0] = (uint8_t)%s;", cgen_ptr(c, n->out[2]), z);
    w_line(w, "for (%s = 0; %s < %lld; %s++) {", i, i, (long long)cnt, i);
    w->indent++;
    w_line(w, "double %s = %s == 0.0f ? 0.0 : rint((double)(%s[%s] / %s)) + %s;", q, s, px, i, s, z);
    store_sat(w, DT_U8, cgen_ptr(c, n->out[0]), i, q);
    w->indent--;
    w_line(w, "}");
    w->indent--;
    w_line(w, "}");
    return 0;
}

/* ---- MatMulInteger / QLinearMatMul ---------------------------------------- */

/* Offset expression of batch index `b` into an operand with shape s. */
static void batch_offset_expr(const Shape *s, const Shape *batch, int64_t mat, const char *b, char *buf)
{
    int own_rank = s->rank > 2 ? s->rank - 2 : 0;
    int64_t acc = mat, div = 1;
    size_t k = (size_t)snprintf(buf, EXPR_CAP, "0");
    for (int j = batch->rank - 1; j >= 0; j--) {
        int own = j - (batch->rank - own_rank);
        if (own >= 0 && s->dims[own] != 1) {
            k += (size_t)snprintf(buf + k, EXPR_CAP - k, " + %s / %lld %% %lld * %lld", b, (long long)div,
                                  (long long)batch->dims[j], (long long)acc);
            acc *= s->dims[own];
        }
        div *= batch->dims[j];
    }
}

static int emit_qmatmul_common(Cgen *c, const Node *n, int qlinear)
{
    Writer *w = cgen_w(c);
    int ia = 0, ib = qlinear ? 3 : 1, iza = 2, izb = qlinear ? 5 : 3;
    const Value *A = n->in[ia], *B = n->in[ib], *Y = n->out[0];
    if (ir_numel(&Y->shape) == 0) return 0;
    const Shape *as = &A->shape, *bs = &B->shape;
    int64_t K = as->dims[as->rank - 1];
    int64_t M = as->rank == 1 ? 1 : as->dims[as->rank - 2];
    int64_t N = bs->rank == 1 ? 1 : bs->dims[bs->rank - 1];
    Shape ba = ir_shape(as->rank > 2 ? as->rank - 2 : 0, as->dims);
    Shape bb = ir_shape(bs->rank > 2 ? bs->rank - 2 : 0, bs->dims);
    Shape batch;
    GC_ASSERT(ir_broadcast(&ba, &bb, &batch) == 0);
    int64_t nb = ir_numel(&batch);
    const char *b = cgen_tmp(c, "b"), *i = cgen_tmp(c, "i"), *j = cgen_tmp(c, "j"), *k = cgen_tmp(c, "k"),
               *acc = cgen_tmp(c, "acc"), *oa = cgen_tmp(c, "oa"), *ob = cgen_tmp(c, "ob");
    char offa[EXPR_CAP], offb[EXPR_CAP], za[EXPR_CAP], zb[EXPR_CAP], pa[EXPR_CAP], pb[EXPR_CAP];
    batch_offset_expr(as, &batch, M * K, b, offa);
    batch_offset_expr(bs, &batch, K * N, b, offb);
    param_str(c, has_in(n, iza) ? n->in[iza] : NULL, i, za);
    param_str(c, has_in(n, izb) ? n->in[izb] : NULL, j, zb);
    snprintf(pa, sizeof pa, "%s", cgen_ptr(c, A));
    snprintf(pb, sizeof pb, "%s", cgen_ptr(c, B));
    w_line(w, "{");
    w->indent++;
    w_line(w, "int64_t %s, %s, %s, %s;", b, i, j, k);
    w_line(w, "for (%s = 0; %s < %lld; %s++) {", b, b, (long long)nb, b);
    w->indent++;
    w_line(w, "int64_t %s = %s, %s = %s;", oa, offa, ob, offb);
    w_line(w, "for (%s = 0; %s < %lld; %s++)", i, i, (long long)M, i);
    w_line(w, "for (%s = 0; %s < %lld; %s++) {", j, j, (long long)N, j);
    w->indent++;
    w_line(w, "int64_t %s = 0;", acc);
    w_line(w, "for (%s = 0; %s < %lld; %s++)", k, k, (long long)K, k);
    w_line(w, "    %s += ((int64_t)%s[%s + %s * %lld + %s] - (int64_t)%s) * ((int64_t)%s[%s + %s * %lld + %s] - (int64_t)%s);",
           acc, pa, oa, i, (long long)K, k, za, pb, ob, k, (long long)N, j, zb);
    char oidx[EXPR_CAP];
    snprintf(oidx, sizeof oidx, "(%s * %lld + %s) * %lld + %s", b, (long long)M, i, (long long)N, j);
    if (!qlinear) {
        w_line(w, "%s[%s] = (int32_t)%s;", cgen_ptr(c, Y), oidx, acc);
    } else {
        char sa[EXPR_CAP], sb[EXPR_CAP], sy[EXPR_CAP], yz[EXPR_CAP];
        const char *q = cgen_tmp(c, "q");
        param_str(c, n->in[1], i, sa);
        param_str(c, n->in[4], j, sb);
        param_str(c, n->in[6], "0", sy);
        param_str(c, has_in(n, 7) ? n->in[7] : NULL, "0", yz);
        w_line(w, "double %s = rint((double)%s * (%s * %s / %s)) + %s;", q, acc, sa, sb, sy, yz);
        store_sat(w, Y->dtype, cgen_ptr(c, Y), oidx, q);
    }
    w->indent--;
    w_line(w, "}");
    w->indent--;
    w_line(w, "}");
    w->indent--;
    w_line(w, "}");
    return 0;
}

static int emit_matmulinteger(Cgen *c, const Node *n, Diag *d)
{
    (void)d;
    return emit_qmatmul_common(c, n, 0);
}

static int emit_qlinearmatmul(Cgen *c, const Node *n, Diag *d)
{
    (void)d;
    return emit_qmatmul_common(c, n, 1);
}

/* ---- ConvInteger / QLinearConv -------------------------------------------- */

/* Element i of ints attribute ai (an index of the QC_ schema), or dflt. */
static int64_t attr_at(const Node *n, int ai, int i, int64_t dflt)
{
    const AttrVal *a = &n->attrs[ai];
    return a->set && a->n > i ? a->ints[i] : dflt;
}

static int emit_qconv_common(Cgen *c, const Node *n, int qlinear)
{
    Writer *w = cgen_w(c);
    int ix = 0, iw = qlinear ? 3 : 1, izx = 2, izw = qlinear ? 5 : 3;
    const Value *X = n->in[ix], *Wt = n->in[iw], *Y = n->out[0];
    if (ir_numel(&Y->shape) == 0) return 0;
    int64_t N = X->shape.dims[0], C = X->shape.dims[1], H = X->shape.dims[2], W = X->shape.dims[3];
    int64_t M = Wt->shape.dims[0], kh = Wt->shape.dims[2], kw = Wt->shape.dims[3];
    int64_t OH = Y->shape.dims[2], OW = Y->shape.dims[3], group = n->attrs[QC_GROUP].i;
    int64_t st[2], dl[2], pb[2], in_sz[2] = {H, W}, k[2] = {kh, kw}, osz[2] = {OH, OW};
    const char *ap = n->attrs[QC_AUTO_PAD].s;
    for (int a = 0; a < 2; a++) {
        st[a] = attr_at(n, QC_STRIDES, a, 1);
        dl[a] = attr_at(n, QC_DILATIONS, a, 1);
        if (strcmp(ap, "SAME_UPPER") == 0 || strcmp(ap, "SAME_LOWER") == 0) {
            int64_t tot = (osz[a] - 1) * st[a] + (k[a] - 1) * dl[a] + 1 - in_sz[a];
            if (tot < 0) tot = 0;
            pb[a] = ap[5] == 'U' ? tot / 2 : tot - tot / 2;
        } else {
            pb[a] = strcmp(ap, "VALID") == 0 ? 0 : attr_at(n, QC_PADS, a, 0);
        }
    }
    int64_t cpg = C / group, mpg = M / group;
    const char *b = cgen_tmp(c, "b"), *m = cgen_tmp(c, "m"), *oh = cgen_tmp(c, "oh"), *ow = cgen_tmp(c, "ow"),
               *ci = cgen_tmp(c, "ci"), *ki = cgen_tmp(c, "ki"), *kj = cgen_tmp(c, "kj"), *h = cgen_tmp(c, "h"),
               *wv = cgen_tmp(c, "w"), *acc = cgen_tmp(c, "acc");
    char zx[EXPR_CAP], zw[EXPR_CAP], px[EXPR_CAP], pw[EXPR_CAP];
    param_str(c, has_in(n, izx) ? n->in[izx] : NULL, "0", zx);
    param_str(c, has_in(n, izw) ? n->in[izw] : NULL, m, zw);
    snprintf(px, sizeof px, "%s", cgen_ptr(c, X));
    snprintf(pw, sizeof pw, "%s", cgen_ptr(c, Wt));
    w_line(w, "{");
    w->indent++;
    w_line(w, "int64_t %s, %s, %s, %s, %s, %s, %s;", b, m, oh, ow, ci, ki, kj);
    w_line(w, "for (%s = 0; %s < %lld; %s++)", b, b, (long long)N, b);
    w_line(w, "for (%s = 0; %s < %lld; %s++)", m, m, (long long)M, m);
    w_line(w, "for (%s = 0; %s < %lld; %s++)", oh, oh, (long long)OH, oh);
    w_line(w, "for (%s = 0; %s < %lld; %s++) {", ow, ow, (long long)OW, ow);
    w->indent++;
    w_line(w, "int64_t %s = 0;", acc);
    w_line(w, "for (%s = 0; %s < %lld; %s++)", ci, ci, (long long)cpg, ci);
    w_line(w, "for (%s = 0; %s < %lld; %s++)", ki, ki, (long long)kh, ki);
    w_line(w, "for (%s = 0; %s < %lld; %s++) {", kj, kj, (long long)kw, kj);
    w->indent++;
    w_line(w, "int64_t %s = %s * %lld - %lld + %s * %lld, %s = %s * %lld - %lld + %s * %lld;", h, oh, (long long)st[0],
           (long long)pb[0], ki, (long long)dl[0], wv, ow, (long long)st[1], (long long)pb[1], kj, (long long)dl[1]);
    w_line(w, "if (%s < 0 || %s >= %lld || %s < 0 || %s >= %lld) continue;", h, h, (long long)H, wv, wv, (long long)W);
    w_line(w, "%s += ((int64_t)%s[((%s * %lld + %s / %lld * %lld + %s) * %lld + %s) * %lld + %s] - (int64_t)%s)", acc, px, b,
           (long long)C, m, (long long)mpg, (long long)cpg, ci, (long long)H, h, (long long)W, wv, zx);
    w_line(w, "    * ((int64_t)%s[((%s * %lld + %s) * %lld + %s) * %lld + %s] - (int64_t)%s);", pw, m, (long long)cpg, ci,
           (long long)kh, ki, (long long)kw, kj, zw);
    w->indent--;
    w_line(w, "}");
    char oidx[EXPR_CAP];
    snprintf(oidx, sizeof oidx, "((%s * %lld + %s) * %lld + %s) * %lld + %s", b, (long long)M, m, (long long)OH, oh,
             (long long)OW, ow);
    if (!qlinear) {
        w_line(w, "%s[%s] = (int32_t)%s;", cgen_ptr(c, Y), oidx, acc);
    } else {
        char sx[EXPR_CAP], sw[EXPR_CAP], sy[EXPR_CAP], yz[EXPR_CAP];
        const char *q = cgen_tmp(c, "q");
        if (has_in(n, 8)) w_line(w, "%s += (int64_t)%s[%s];", acc, cgen_ptr(c, n->in[8]), m);
        param_str(c, n->in[1], "0", sx);
        param_str(c, n->in[4], m, sw);
        param_str(c, n->in[6], "0", sy);
        param_str(c, has_in(n, 7) ? n->in[7] : NULL, "0", yz);
        w_line(w, "double %s = rint((double)%s * (%s * %s / %s)) + %s;", q, acc, sx, sw, sy, yz);
        store_sat(w, Y->dtype, cgen_ptr(c, Y), oidx, q);
    }
    w->indent--;
    w_line(w, "}");
    w->indent--;
    w_line(w, "}");
    return 0;
}

static int emit_convinteger(Cgen *c, const Node *n, Diag *d)
{
    (void)d;
    return emit_qconv_common(c, n, 0);
}

static int emit_qlinearconv(Cgen *c, const Node *n, Diag *d)
{
    (void)d;
    return emit_qconv_common(c, n, 1);
}

const CgenEntry cgen_quant_entries[] = {
    {OP_QuantizeLinear, emit_quantize, 0},
    {OP_DequantizeLinear, emit_dequantize, 0},
    {OP_DynamicQuantizeLinear, emit_dynquant, 0},
    {OP_MatMulInteger, emit_matmulinteger, 0},
    {OP_ConvInteger, emit_convinteger, 0},
    {OP_QLinearMatMul, emit_qlinearmatmul, 0},
    {OP_QLinearConv, emit_qlinearconv, 0},
    {-1, NULL, 0},
};
