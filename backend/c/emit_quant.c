/* emit_quant.c — C emitters for the quantization family.
 *
 * Quantize/Dequantize are written inline as one loop nest with literal
 * sizes (the shapes are static). The arithmetic mirrors the reference
 * evaluations in ir/ops/quant.c exactly, so interpreter and compiled code
 * give the same integers: x / scale is divided in float when the reference
 * does (float32 tensors) and in double otherwise, then rounded half to even
 * with rint() (the default rounding mode) and saturated to the zero point's
 * range.
 *
 * The integer matmuls and convolutions reuse the float kernels: their
 * operands minus the zero points are copied to double arrays in the node's
 * workspace, the shared MatMul / Conv call (emit_matmul_call,
 * emit_conv_call: gcrt_dgemm, gcrt_conv_f64 with the geometry the op
 * description computed) writes a double result, and one loop stores it:
 * as int32, or requantized (QLinearMatMul, QLinearConv: the sum plus the
 * bias times a_scale * b_scale / y_scale computed in double, rounded, plus
 * the output zero point, saturated). Every partial sum is an integer far
 * below 2^53, so the double kernels are exact whatever their summation
 * order (blocked loops, BLAS). Loop variables come from cgen_tmp() so they
 * never shadow tensor identifiers. Input dtypes are validated by shape
 * inference (u8/i8 quantized tensors, float scales).
 */
#include "cgen.h"
#include "../../ir/ops/quant_attrs.h"
#include "emit_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPR_CAP 512

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

/* For Quantize/DequantizeLinear: the channel of element `i` for the
 * per-axis parameters into ch (64 chars; "0" when per tensor, geometry from
 * ir_quant_axis_geometry) and the load of its scale (input 1) into ls. */
static void axis_scale(Cgen *c, const Node *n, const char *i, char *ch, char *ls)
{
    const Value *s = n->in[1];
    int64_t nch, inner;
    char ps[EXPR_CAP];
    GC_ASSERT(ir_quant_axis_geometry(n, &nch, &inner) == 0);
    if (nch == 1) snprintf(ch, 64, "0");
    else snprintf(ch, 64, "%s / %lld %% %lld", i, (long long)inner, (long long)nch);
    snprintf(ps, sizeof ps, "%s", cgen_ptr(c, s));
    load_str(s->dtype, ps, ir_numel(&s->shape) == 1 ? "0" : ch, ls, EXPR_CAP);
}

static int emit_quantize(Cgen *c, const Node *n, Diag *d)
{
    (void)d;
    Writer *w = cgen_w(c);
    const Value *x = n->in[0], *s = n->in[1], *z = ir_has_input(n, 2) ? n->in[2] : NULL, *y = n->out[0];
    int64_t cnt = ir_numel(&x->shape);
    if (cnt == 0) return 0;
    const char *i = cgen_tmp(c, "i"), *q = cgen_tmp(c, "q");
    char ch[64], px[EXPR_CAP], lx[EXPR_CAP], ls[EXPR_CAP], zs[EXPR_CAP];
    axis_scale(c, n, i, ch, ls);
    snprintf(px, sizeof px, "%s", cgen_ptr(c, x));
    load_str(x->dtype, px, i, lx, sizeof lx);
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
    const Value *x = n->in[0], *s = n->in[1], *z = ir_has_input(n, 2) ? n->in[2] : NULL, *y = n->out[0];
    int64_t cnt = ir_numel(&x->shape);
    if (cnt == 0) return 0;
    const char *i = cgen_tmp(c, "i");
    char ch[64], ls[EXPR_CAP], zs[EXPR_CAP + 32], val[4 * EXPR_CAP];
    axis_scale(c, n, i, ch, ls);
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

/* ---- MatMulInteger / QLinearMatMul, ConvInteger / QLinearConv ------------------ */

/* The integer products run the float kernels in double on zero-point-shifted
 * copies (exact: every partial sum is an integer far below 2^53). The
 * node's workspace (qkernel_workspace below) holds, in this order, the two shifted
 * operands, the double result and (convolutions) the im2col tile. */
typedef struct QBufs {
    const char *a, *b, *acc; /* the three double arrays */
    char col[EXPR_CAP];      /* byte address of the im2col tile */
} QBufs;

/* Opens the node block: declares the workspace arrays for operands v0, v1
 * and the output, and the loop index *i. */
static void qbufs_open(Cgen *c, const Node *n, const Value *v0, const Value *v1, QBufs *q, const char **i)
{
    Writer *w = cgen_w(c);
    int64_t n0 = ir_numel(&v0->shape), n1 = ir_numel(&v1->shape), ny = ir_numel(&n->out[0]->shape);
    char ws[64];
    snprintf(ws, sizeof ws, "%s", cgen_workspace(c, n));
    q->a = cgen_tmp(c, "qa");
    q->b = cgen_tmp(c, "qb");
    q->acc = cgen_tmp(c, "qacc");
    *i = cgen_tmp(c, "i");
    int64_t es = (int64_t)sizeof(double);
    snprintf(q->col, sizeof q->col, "(%s + %lld)", ws, (long long)(es * (n0 + n1 + ny)));
    w_line(w, "{");
    w->indent++;
    w_line(w, "double *const %s = (double *)(void *)%s;", q->a, ws);
    w_line(w, "double *const %s = (double *)(void *)(%s + %lld);", q->b, ws, (long long)(es * n0));
    w_line(w, "double *const %s = (double *)(void *)(%s + %lld);", q->acc, ws, (long long)(es * (n0 + n1)));
    w_line(w, "int64_t %s;", *i);
}

/* `dst[i] = (double)v[i] - zero point` over v; the zero point's element is
 * chosen by index expression zidx (ignored when it holds one value). */
static void emit_zp_shift(Cgen *c, const char *dst, const Value *v, const Value *zp, const char *i, const char *zidx)
{
    char z[EXPR_CAP], pv[EXPR_CAP];
    param_str(c, zp, zidx, z);
    snprintf(pv, sizeof pv, "%s", cgen_ptr(c, v));
    w_line(cgen_w(c), "for (%s = 0; %s < %lld; %s++) %s[%s] = (double)%s[%s] - %s;", i, i, (long long)ir_numel(&v->shape),
           i, dst, i, pv, i, z);
}

/* Stores the double results q->acc into Y and closes the node block: the
 * integer sums as int32 through int64 (MatMulInteger, ConvInteger), or with
 * qlinear (QLinearMatMul, QLinearConv) the sum plus the optional i32 bias
 * B[bidx] (input 8), times scale1[sidx1] * scale2[sidx2] / y_scale (inputs
 * 1, 4, 6), rounded half to even, plus y_zero_point, saturated. */
static void qbufs_close(Cgen *c, const Node *n, const QBufs *q, const char *i, int qlinear, const char *sidx1,
                        const char *sidx2, const char *bidx)
{
    Writer *w = cgen_w(c);
    const Value *Y = n->out[0];
    char py[EXPR_CAP];
    snprintf(py, sizeof py, "%s", cgen_ptr(c, Y));
    w_line(w, "for (%s = 0; %s < %lld; %s++) {", i, i, (long long)ir_numel(&Y->shape), i);
    w->indent++;
    if (!qlinear) {
        w_line(w, "%s[%s] = (int32_t)(int64_t)%s[%s];", py, i, q->acc, i);
    } else {
        char s1[EXPR_CAP], s2[EXPR_CAP], sy[EXPR_CAP], yz[EXPR_CAP], b[EXPR_CAP], acc[2 * EXPR_CAP];
        const char *qv = cgen_tmp(c, "q");
        param_str(c, n->in[1], sidx1, s1);
        param_str(c, n->in[4], sidx2, s2);
        param_str(c, n->in[6], "0", sy);
        param_str(c, ir_has_input(n, 7) ? n->in[7] : NULL, "0", yz);
        if (bidx && ir_has_input(n, 8)) {
            snprintf(b, sizeof b, "%s", cgen_ptr(c, n->in[8]));
            snprintf(acc, sizeof acc, "(%s[%s] + (double)%s[%s])", q->acc, i, b, bidx);
        } else {
            snprintf(acc, sizeof acc, "%s[%s]", q->acc, i);
        }
        w_line(w, "double %s = rint(%s * (%s * %s / %s)) + %s;", qv, acc, s1, s2, sy, yz);
        store_sat(w, Y->dtype, py, i, qv);
    }
    w->indent--;
    w_line(w, "}");
    w->indent--;
    w_line(w, "}");
}

/* MatMulInteger (qlinear 0) or QLinearMatMul (1): shift, gcrt_dgemm through
 * the shared matmul call, store. */
static int emit_qmatmul(Cgen *c, const Node *n, int qlinear)
{
    int ia = 0, ib = qlinear ? 3 : 1, iza = 2, izb = qlinear ? 5 : 3;
    if (ir_numel(&n->out[0]->shape) == 0) return 0;
    IrMatMulGeom g;
    GC_ASSERT(ir_matmul_geometry(n, ia, ib, &g, NULL) == 0);
    QBufs q;
    const char *i;
    char row[EXPR_CAP], col[EXPR_CAP];
    qbufs_open(c, n, n->in[ia], n->in[ib], &q, &i);
    snprintf(row, sizeof row, "%s / %lld %% %lld", i, (long long)g.K, (long long)g.M);
    snprintf(col, sizeof col, "%s %% %lld", i, (long long)g.N);
    emit_zp_shift(c, q.a, n->in[ia], ir_has_input(n, iza) ? n->in[iza] : NULL, i, row);
    emit_zp_shift(c, q.b, n->in[ib], ir_has_input(n, izb) ? n->in[izb] : NULL, i, col);
    emit_matmul_call(c, &g, DT_F64, q.a, q.b, q.acc);
    snprintf(row, sizeof row, "%s / %lld %% %lld", i, (long long)g.N, (long long)g.M);
    qbufs_close(c, n, &q, i, qlinear, row, col, NULL);
    return 0;
}

static int emit_matmulinteger(Cgen *c, const Node *n, Diag *d)
{
    (void)d;
    return emit_qmatmul(c, n, 0);
}

static int emit_qlinearmatmul(Cgen *c, const Node *n, Diag *d)
{
    (void)d;
    return emit_qmatmul(c, n, 1);
}

/* ConvInteger (qlinear 0) or QLinearConv (1): shift, gcrt_conv_f64 through
 * the shared conv call, store. */
static int emit_qconv(Cgen *c, const Node *n, int qlinear, Diag *d)
{
    int ix = 0, iw = qlinear ? 3 : 1, izx = 2, izw = qlinear ? 5 : 3;
    const Value *X = n->in[ix], *Wt = n->in[iw], *Y = n->out[0];
    if (ir_numel(&Y->shape) == 0) return 0;
    int64_t M = Wt->shape.dims[0], per_m = ir_numel(&Wt->shape) / M, P = emit_dims_prod(&Y->shape, 2, Y->shape.rank);
    QBufs q;
    const char *i;
    char ch[EXPR_CAP];
    qbufs_open(c, n, X, Wt, &q, &i);
    snprintf(ch, sizeof ch, "%s / %lld", i, (long long)per_m);
    emit_zp_shift(c, q.a, X, ir_has_input(n, izx) ? n->in[izx] : NULL, i, "0");
    emit_zp_shift(c, q.b, Wt, ir_has_input(n, izw) ? n->in[izw] : NULL, i, ch);
    if (emit_conv_call(c, n, DT_F64, q.a, q.b, "0", q.acc, q.col, d)) return -1;
    snprintf(ch, sizeof ch, "%s / %lld %% %lld", i, (long long)P, (long long)M);
    qbufs_close(c, n, &q, i, qlinear, "0", ch, ch);
    return 0;
}

static int emit_convinteger(Cgen *c, const Node *n, Diag *d) { return emit_qconv(c, n, 0, d); }
static int emit_qlinearconv(Cgen *c, const Node *n, Diag *d) { return emit_qconv(c, n, 1, d); }

/* The integer matmuls and convolutions run the float kernels in double:
 * their scratch holds double copies of the two zero-point-shifted operands
 * and the double result, in that order, then (convolutions) the im2col tile. */
static size_t qkernel_workspace(const Node *n, int i0, int i1)
{
    int64_t cnt = ir_numel(&n->in[i0]->shape) + ir_numel(&n->in[i1]->shape) + ir_numel(&n->out[0]->shape);
    return sizeof(double) * (size_t)cnt;
}

static size_t mmi_workspace(const Node *n) { return qkernel_workspace(n, 0, 1); }
static size_t qmm_workspace(const Node *n) { return qkernel_workspace(n, 0, 3); }
static size_t convi_workspace(const Node *n) { return qkernel_workspace(n, 0, 1) + emit_conv_im2col_bytes(n, sizeof(double)); }
static size_t qconv_workspace(const Node *n) { return qkernel_workspace(n, 0, 3) + emit_conv_im2col_bytes(n, sizeof(double)); }

const CgenEntry cgen_quant_entries[] = {
    {OP_QuantizeLinear, emit_quantize, 0, NULL, 0},
    {OP_DequantizeLinear, emit_dequantize, 0, NULL, 0},
    {OP_DynamicQuantizeLinear, emit_dynquant, 0, NULL, 0},
    {OP_MatMulInteger, emit_matmulinteger, CGEN_RT_linalg, mmi_workspace, 0},
    {OP_ConvInteger, emit_convinteger, CGEN_RT_nn, convi_workspace, 0},
    {OP_QLinearMatMul, emit_qlinearmatmul, CGEN_RT_linalg, qmm_workspace, 0},
    {OP_QLinearConv, emit_qlinearconv, CGEN_RT_nn, qconv_workspace, 0},
    {-1, NULL, 0, NULL, 0},
};
