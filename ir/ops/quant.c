/* quant.c — operator descriptions of the quantization family (ONNX opset-17
 * semantics): QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, and
 * the integer kernels MatMulInteger, ConvInteger, QLinearMatMul, QLinearConv.
 *
 * Linear quantization maps a real x to q = saturate(round(x / scale) + zp),
 * rounding half to even and saturating to the range of the zero point's
 * dtype (u8 when the zero point is absent); dequantization is
 * (q - zp) * scale. Scales and zero points are per tensor (a scalar or a
 * one-element 1-D tensor) or per axis (1-D of the size of dimension `axis`;
 * for the matmuls: per row of A, per column of B; for the convolutions: per
 * output channel of the weights).
 *
 * The reference evaluations follow numpy's float32 arithmetic where ONNX's
 * formulas divide float32 tensors (the quotient x / scale is rounded to
 * float32 before rounding to an integer), so the interpreter and the
 * compiled C agree bit for bit on the integers they produce. Integer
 * accumulations are exact in double for the sizes graphc handles (every
 * partial sum stays far below 2^53), which is what lets the integer kernels
 * reuse the float ones: the matmuls and convolutions subtract the zero
 * points into double copies of their operands and run the shared MatMul
 * geometry and reference (ir_matmul_geometry, ir_matmul_ref) or Conv's
 * N-D window geometry and reference (nn_window_geo, nn_conv_ref, with
 * kernel_shape/strides/pads/dilations/group/auto_pad as in Conv); the C
 * backend does the same with the f64 GEMM and conv kernels in the node's
 * workspace (backend/c/emit_quant.c).
 */
#include "../op.h"
#include "quant_attrs.h"
#include "geometry.h"
#include "nn_common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SHP_BUF 160

static const char *in_name(const Node *n, int i) { return ir_op(n->op)->in_names[i]; }

static int need_dtype2(const Node *n, int i, DType a, DType b, Diag *d)
{
    DType t = n->in[i]->dtype;
    if (t != a && t != b)
        return diag_node_error(d, n, "input '%s' must be %s or %s, got %s", in_name(n, i), ir_dtype_name(a),
                               ir_dtype_name(b), ir_dtype_name(t));
    return 0;
}

static int need_float(const Node *n, int i, Diag *d)
{
    DType t = n->in[i]->dtype;
    if (t != DT_F32 && t != DT_F64 && t != DT_F16)
        return diag_node_error(d, n, "input '%s' must be a float tensor (f32, f64 or f16), got %s", in_name(n, i),
                               ir_dtype_name(t));
    return 0;
}

/* Input j must have input i's dtype (a zero point and its tensor). */
static int same_dtype(const Node *n, int i, int j, Diag *d)
{
    if (n->in[j]->dtype != n->in[i]->dtype)
        return diag_node_error(d, n, "input '%s' has dtype %s but input '%s' has %s", in_name(n, j),
                               ir_dtype_name(n->in[j]->dtype), in_name(n, i), ir_dtype_name(n->in[i]->dtype));
    return 0;
}

/* Shape rule of a quantization parameter (input i): per tensor (scalar or
 * one element 1-D) returns 1; 1-D of size `len` when per_axis returns len. */
static int64_t qparam_len(const Node *n, int i, int per_axis, int64_t len, const char *what, Diag *d)
{
    const Shape *s = &n->in[i]->shape;
    char b[SHP_BUF];
    if (s->rank == 0 || (s->rank == 1 && s->dims[0] == 1)) return 1;
    if (per_axis && s->rank == 1 && s->dims[0] == len) return len;
    if (per_axis)
        return diag_node_error(d, n, "input '%s' shape %s must be a scalar or 1-D of size %lld (%s)", in_name(n, i),
                               ir_shape_str(s, b, sizeof b), (long long)len, what);
    return diag_node_error(d, n, "input '%s' shape %s must be a scalar (one value)", in_name(n, i),
                           ir_shape_str(s, b, sizeof b));
}

/* Saturation range of a quantized dtype. */
static void qrange(DType t, double *lo, double *hi)
{
    if (t == DT_I8) { *lo = -128; *hi = 127; }
    else if (t == DT_U8) { *lo = 0; *hi = 255; }
    else { *lo = -2147483648.0; *hi = 2147483647.0; }
}

static double saturate(double v, DType t)
{
    double lo, hi;
    qrange(t, &lo, &hi);
    return v < lo ? lo : v > hi ? hi : v;
}

/* x / s as the ONNX reference computes it: in float32 when neither is f64
 * nor an integer (numpy's float32 division), else in double. */
static double q_div(DType xt, DType st, double x, double s)
{
    double v = x / s;
    int dbl = xt == DT_F64 || st == DT_F64 || ir_dtype_is_int(xt);
    return dbl ? v : ir_round_to(DT_F32, v);
}

static const char *const out_y[] = {"y"};
static const char *const out_Y[] = {"Y"};

/* ---- QuantizeLinear / DequantizeLinear ------------------------------------ */

static const AttrSpec ql_attrs[] = {[QL_AXIS] = {"axis", ATTR_INT, "1", 0}};
OP_ATTRS_CHECK(ql_attrs, QL_COUNT);
static const char *const quant_in[] = {"x", "y_scale", "y_zero_point"};
static const char *const dequant_in[] = {"x", "x_scale", "x_zero_point"};

/* Per-axis geometry: the number of channels (1 when per tensor) and the
 * element count after the axis; -1 with a diagnostic. */
static int qaxis_geom(const Node *n, int64_t *nch, int64_t *inner, Diag *d)
{
    const Shape *xs = &n->in[0]->shape;
    *nch = 1;
    *inner = 1;
    const Shape *ss = &n->in[1]->shape;
    if (ss->rank == 0 || (ss->rank == 1 && ss->dims[0] == 1)) {
        if (ir_has_input(n, 2) && qparam_len(n, 2, 0, 1, "", d) < 0) return -1;
        return 0;
    }
    int ax = ir_norm_axis(n->attrs[QL_AXIS].i, xs->rank);
    if (ax < 0)
        return diag_node_error(d, n, "attribute 'axis' %lld is out of range for input 'x' of rank %d",
                               (long long)n->attrs[QL_AXIS].i, xs->rank);
    char what[64];
    snprintf(what, sizeof what, "dimension %d of input 'x'", ax);
    int64_t len = qparam_len(n, 1, 1, xs->dims[ax], what, d);
    if (len < 0) return -1;
    if (ir_has_input(n, 2)) {
        const Shape *zs = &n->in[2]->shape;
        if (!ir_shape_eq(zs, ss)) {
            char b1[SHP_BUF], b2[SHP_BUF];
            return diag_node_error(d, n, "input '%s' shape %s must equal input '%s' shape %s", in_name(n, 2),
                                   ir_shape_str(zs, b1, sizeof b1), in_name(n, 1), ir_shape_str(ss, b2, sizeof b2));
        }
    }
    *nch = len;
    for (int k = ax + 1; k < xs->rank; k++) *inner *= xs->dims[k];
    return 0;
}

/* See geometry.h. */
int ir_quant_axis_geometry(const Node *n, int64_t *nch, int64_t *inner) { return qaxis_geom(n, nch, inner, NULL); }

static int quant_infer(Node *n, Diag *d)
{
    int64_t nch, inner;
    if (ir_need_inputs(n, d)) return -1;
    DType xt = n->in[0]->dtype;
    if (xt != DT_F32 && xt != DT_F64 && xt != DT_F16 && xt != DT_I32)
        return diag_node_error(d, n, "input 'x' must be f32, f64, f16 or i32, got %s", ir_dtype_name(xt));
    if (need_float(n, 1, d)) return -1;
    DType yt = DT_U8;
    if (ir_has_input(n, 2)) {
        if (need_dtype2(n, 2, DT_U8, DT_I8, d)) return -1;
        yt = n->in[2]->dtype;
    }
    if (qaxis_geom(n, &nch, &inner, d)) return -1;
    ir_set_out(n, 0, yt, &n->in[0]->shape);
    return 0;
}

static int quant_eval(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    int64_t nch, inner;
    if (qaxis_geom(n, &nch, &inner, d)) return -1;
    DType xt = n->in[0]->dtype, st = n->in[1]->dtype, yt = n->out[0]->dtype;
    int64_t cnt = ir_numel(&n->in[0]->shape);
    for (int64_t i = 0; i < cnt; i++) {
        int64_t c = (i / inner) % nch;
        double zp = ir_has_input(n, 2) ? in[2][c] : 0.0;
        out[0][i] = saturate(nearbyint(q_div(xt, st, in[0][i], in[1][c])) + zp, yt);
    }
    return 0;
}

const OpDesc op_QuantizeLinear = {
    .name = "QuantizeLinear",
    .min_in = 2, .max_in = 3, .in_names = quant_in,
    .min_out = 1, .max_out = 1, .out_names = out_y,
    OP_ATTRS(ql_attrs),
    .infer = quant_infer, .eval = quant_eval,
};

static int dequant_infer(Node *n, Diag *d)
{
    int64_t nch, inner;
    if (ir_need_inputs(n, d)) return -1;
    DType xt = n->in[0]->dtype;
    if (xt != DT_U8 && xt != DT_I8 && xt != DT_I32)
        return diag_node_error(d, n, "input 'x' must be u8, i8 or i32, got %s", ir_dtype_name(xt));
    if (need_float(n, 1, d)) return -1;
    if (ir_has_input(n, 2) && same_dtype(n, 0, 2, d)) return -1;
    if (qaxis_geom(n, &nch, &inner, d)) return -1;
    ir_set_out(n, 0, n->in[1]->dtype, &n->in[0]->shape);
    return 0;
}

static int dequant_eval(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    int64_t nch, inner;
    if (qaxis_geom(n, &nch, &inner, d)) return -1;
    DType st = n->in[1]->dtype;
    int64_t cnt = ir_numel(&n->in[0]->shape);
    for (int64_t i = 0; i < cnt; i++) {
        int64_t c = (i / inner) % nch;
        double zp = ir_has_input(n, 2) ? in[2][c] : 0.0;
        double v = in[0][i] - zp;
        if (st != DT_F64) v = ir_round_to(DT_F32, v);
        out[0][i] = v * in[1][c];
    }
    return 0;
}

const OpDesc op_DequantizeLinear = {
    .name = "DequantizeLinear",
    .min_in = 2, .max_in = 3, .in_names = dequant_in,
    .min_out = 1, .max_out = 1, .out_names = out_y,
    OP_ATTRS(ql_attrs),
    .infer = dequant_infer, .eval = dequant_eval,
};

/* ---- DynamicQuantizeLinear --------------------------------------------------- */

static const char *const dql_in[] = {"x"};
static const char *const dql_out[] = {"y", "y_scale", "y_zero_point"};

static int dql_infer(Node *n, Diag *d)
{
    if (ir_need_inputs(n, d)) return -1;
    if (n->in[0]->dtype != DT_F32)
        return diag_node_error(d, n, "input 'x' must be f32, got %s", ir_dtype_name(n->in[0]->dtype));
    if (n->n_out != 3) return diag_node_error(d, n, "expects 3 outputs (y, y_scale, y_zero_point), got %d", n->n_out);
    Shape sc = {0};
    memset(&sc, 0, sizeof sc);
    ir_set_out(n, 0, DT_U8, &n->in[0]->shape);
    ir_set_out(n, 1, DT_F32, &sc);
    ir_set_out(n, 2, DT_U8, &sc);
    return 0;
}

/* scale = (max(0, max x) - min(0, min x)) / 255 in float32; zp =
 * saturate(round(-min / scale)); a zero scale (x all zeros) gives zp 0 and y 0. */
static int dql_eval(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    (void)d;
    int64_t cnt = ir_numel(&n->in[0]->shape);
    double lo = 0, hi = 0;
    for (int64_t i = 0; i < cnt; i++) {
        if (in[0][i] < lo) lo = in[0][i];
        if (in[0][i] > hi) hi = in[0][i];
    }
    double scale = ir_round_to(DT_F32, ir_round_to(DT_F32, hi - lo) / 255.0);
    double zp = scale == 0 ? 0 : saturate(nearbyint(ir_round_to(DT_F32, -lo / scale)), DT_U8);
    for (int64_t i = 0; i < cnt; i++)
        out[0][i] = scale == 0 ? 0 : saturate(nearbyint(ir_round_to(DT_F32, in[0][i] / scale)) + zp, DT_U8);
    out[1][0] = scale;
    out[2][0] = zp;
    return 0;
}

const OpDesc op_DynamicQuantizeLinear = {
    .name = "DynamicQuantizeLinear",
    .min_in = 1, .max_in = 1, .in_names = dql_in,
    .min_out = 3, .max_out = 3, .out_names = dql_out,
    .infer = dql_infer, .eval = dql_eval,
};

/* ---- MatMulInteger / QLinearMatMul ------------------------------------------- */

static const char *const mmi_in[] = {"A", "B", "a_zero_point", "b_zero_point"};
static const char *const qmm_in[] = {"a", "a_scale", "a_zero_point", "b", "b_scale", "b_zero_point", "y_scale",
                                     "y_zero_point"};

/* Checks the matmul operands' dtypes and zero points / scales and fills
 * the shared matmul geometry. qlinear: the QLinearMatMul input layout. */
static int qmm_check(Node *n, int qlinear, IrMatMulGeom *g, Diag *d)
{
    int ia = 0, ib = qlinear ? 3 : 1;
    int iza = 2, izb = qlinear ? 5 : 3;
    if (ir_need_inputs(n, d)) return -1;
    if (need_dtype2(n, ia, DT_U8, DT_I8, d) || need_dtype2(n, ib, DT_U8, DT_I8, d)) return -1;
    if (ir_matmul_geometry(n, ia, ib, g, d)) return -1;
    if (ir_has_input(n, iza) && (same_dtype(n, ia, iza, d) || qparam_len(n, iza, 1, g->M, "rows of A", d) < 0)) return -1;
    if (ir_has_input(n, izb) && (same_dtype(n, ib, izb, d) || qparam_len(n, izb, 1, g->N, "columns of B", d) < 0)) return -1;
    if (qlinear) {
        if (need_float(n, 1, d) || qparam_len(n, 1, 1, g->M, "rows of A", d) < 0) return -1;
        if (need_float(n, 4, d) || qparam_len(n, 4, 1, g->N, "columns of B", d) < 0) return -1;
        if (need_float(n, 6, d) || qparam_len(n, 6, 0, 1, "", d) < 0) return -1;
        if (ir_has_input(n, 7) && (need_dtype2(n, 7, DT_U8, DT_I8, d) || qparam_len(n, 7, 0, 1, "", d) < 0)) return -1;
    }
    return 0;
}

static int mmi_infer(Node *n, Diag *d)
{
    IrMatMulGeom g;
    if (qmm_check(n, 0, &g, d)) return -1;
    ir_set_out(n, 0, DT_I32, &g.out);
    return 0;
}

/* Element i of per-row/per-column parameter p (count np; 0 when absent). */
static double qparam_at(const double *p, int64_t np, int64_t i) { return p ? p[np == 1 ? 0 : i] : 0; }

/* Copy of v (cnt elements) minus its zero point zp (np values, one per
 * channel (i / inner) % nch when np > 1; NULL: none); malloc'd. */
static double *zp_shifted(const double *v, int64_t cnt, const double *zp, int64_t np, int64_t inner, int64_t nch)
{
    double *s = malloc(sizeof(double) * (size_t)(cnt ? cnt : 1));
    if (!s) return NULL;
    for (int64_t i = 0; i < cnt; i++) s[i] = v[i] - qparam_at(zp, np, (i / inner) % nch);
    return s;
}

/* y[o] = saturate(round(acc[o] * scale) + zero point) in y's dtype (the
 * requantization of QLinearMatMul and QLinearConv). */
static double requant(double acc, double scale, double yz, DType yt) { return saturate(nearbyint(acc * scale) + yz, yt); }

/* The matmul reference: the product of the zero-point-shifted operands
 * (exact in double) through the shared matmul reference, then integer sums
 * (MatMulInteger) or requantized results (QLinearMatMul) into y. */
static int qmm_run(const Node *n, const double *const *in, int qlinear, double *y, Diag *d)
{
    IrMatMulGeom g;
    if (qmm_check((Node *)n, qlinear, &g, d)) return -1;
    int ia = 0, ib = qlinear ? 3 : 1, iza = 2, izb = qlinear ? 5 : 3;
    const double *za = ir_has_input(n, iza) ? in[iza] : NULL, *zb = ir_has_input(n, izb) ? in[izb] : NULL;
    int64_t nza = za ? ir_numel(&n->in[iza]->shape) : 0, nzb = zb ? ir_numel(&n->in[izb]->shape) : 0;
    double *a = zp_shifted(in[ia], ir_numel(&n->in[ia]->shape), za, nza, g.K, g.M);
    double *b = zp_shifted(in[ib], ir_numel(&n->in[ib]->shape), zb, nzb, 1, g.N);
    if (!a || !b) {
        free(a);
        free(b);
        return diag_node_error(d, n, "out of memory");
    }
    ir_matmul_ref(&g, a, b, y);
    free(a);
    free(b);
    if (!qlinear) return 0;
    int64_t cnt = ir_numel(&g.out), nas = ir_numel(&n->in[1]->shape), nbs = ir_numel(&n->in[4]->shape);
    double yz = ir_has_input(n, 7) ? in[7][0] : 0;
    for (int64_t o = 0; o < cnt; o++) {
        int64_t i = o / g.N % g.M, j = o % g.N;
        double sc = qparam_at(in[1], nas, i) * qparam_at(in[4], nbs, j) / in[6][0];
        y[o] = requant(y[o], sc, yz, n->out[0]->dtype);
    }
    return 0;
}

static int mmi_eval(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    return qmm_run(n, in, 0, out[0], d);
}

const OpDesc op_MatMulInteger = {
    .name = "MatMulInteger",
    .min_in = 2, .max_in = 4, .in_names = mmi_in,
    .min_out = 1, .max_out = 1, .out_names = out_Y,
    .infer = mmi_infer, .eval = mmi_eval,
};

static int qmm_infer(Node *n, Diag *d)
{
    IrMatMulGeom g;
    if (qmm_check(n, 1, &g, d)) return -1;
    ir_set_out(n, 0, ir_has_input(n, 7) ? n->in[7]->dtype : DT_U8, &g.out);
    return 0;
}

static int qmm_eval(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    return qmm_run(n, in, 1, out[0], d);
}

const OpDesc op_QLinearMatMul = {
    .name = "QLinearMatMul",
    .min_in = 7, .max_in = 8, .in_names = qmm_in,
    .min_out = 1, .max_out = 1, .out_names = out_y,
    .infer = qmm_infer, .eval = qmm_eval,
};

/* ---- ConvInteger / QLinearConv ------------------------------------------------ */

/* Attributes: Conv's window attributes (nn_conv_attrs, without epilogue). */
static const char *const convi_in[] = {"x", "w", "x_zero_point", "w_zero_point"};
static const char *const qconv_in[] = {"x", "x_scale", "x_zero_point", "w", "w_scale", "w_zero_point",
                                       "y_scale", "y_zero_point", "B"};

/* Checks the convolution operands' dtypes, the channel/group rule and the
 * zero points / scales / bias, and fills the shared window geometry. */
static int qconv_check(Node *n, int qlinear, NnWindow *win, Diag *d)
{
    int ix = 0, iw = qlinear ? 3 : 1, izx = 2, izw = qlinear ? 5 : 3;
    if (ir_need_inputs(n, d)) return -1;
    if (need_dtype2(n, ix, DT_U8, DT_I8, d) || need_dtype2(n, iw, DT_U8, DT_I8, d)) return -1;
    if (nn_window_geo(n, win, d)) return -1;
    const Shape *xs = &n->in[ix]->shape, *ws = &n->in[iw]->shape;
    char b1[SHP_BUF], b2[SHP_BUF];
    int64_t C = xs->dims[1], M = ws->dims[0], group = n->attrs[CONV_GROUP].i;
    if (group < 1 || C % group || M % group)
        return diag_node_error(d, n, "attribute 'group' %lld must be >= 1 and divide the %lld input and %lld output channels",
                               (long long)group, (long long)C, (long long)M);
    if (ws->dims[1] * group != C)
        return diag_node_error(d, n, "input 'w' shape %s: dimension 1 must be C/group = %lld (input 'x' shape %s)",
                               ir_shape_str(ws, b1, sizeof b1), (long long)(C / group), ir_shape_str(xs, b2, sizeof b2));
    if (ir_has_input(n, izx) && (same_dtype(n, ix, izx, d) || qparam_len(n, izx, 0, 1, "", d) < 0)) return -1;
    if (ir_has_input(n, izw) && (same_dtype(n, iw, izw, d) || qparam_len(n, izw, 1, M, "output channels", d) < 0)) return -1;
    if (qlinear) {
        if (need_float(n, 1, d) || qparam_len(n, 1, 0, 1, "", d) < 0) return -1;
        if (need_float(n, 4, d) || qparam_len(n, 4, 1, M, "output channels", d) < 0) return -1;
        if (need_float(n, 6, d) || qparam_len(n, 6, 0, 1, "", d) < 0) return -1;
        if (ir_has_input(n, 7) && (need_dtype2(n, 7, DT_U8, DT_I8, d) || qparam_len(n, 7, 0, 1, "", d) < 0)) return -1;
        if (ir_has_input(n, 8)) {
            const Shape *bs = &n->in[8]->shape;
            if (n->in[8]->dtype != DT_I32)
                return diag_node_error(d, n, "input 'B' must be i32, got %s", ir_dtype_name(n->in[8]->dtype));
            if (bs->rank != 1 || bs->dims[0] != M)
                return diag_node_error(d, n, "input 'B' shape %s must be 1-D of size %lld (output channels)",
                                       ir_shape_str(bs, b1, sizeof b1), (long long)M);
        }
    }
    return 0;
}

/* The convolution reference: the zero-point-shifted x and w (exact in
 * double) through the shared convolution reference, then integer sums
 * (ConvInteger) or bias-added, requantized results (QLinearConv) into y. */
static int qconv_run(const Node *n, const double *const *in, int qlinear, double *y, Diag *d)
{
    NnWindow win;
    if (qconv_check((Node *)n, qlinear, &win, d)) return -1;
    int ix = 0, iw = qlinear ? 3 : 1, izx = 2, izw = qlinear ? 5 : 3;
    const Shape *xs = &n->in[ix]->shape, *ws = &n->in[iw]->shape;
    int64_t N = xs->dims[0], C = xs->dims[1], M = ws->dims[0], per_m = ir_numel(ws) / (M ? M : 1);
    int64_t nzw = ir_has_input(n, izw) ? ir_numel(&n->in[izw]->shape) : 0;
    double *x = zp_shifted(in[ix], ir_numel(xs), ir_has_input(n, izx) ? in[izx] : NULL, 1, 1, 1);
    double *w = zp_shifted(in[iw], ir_numel(ws), nzw ? in[izw] : NULL, nzw, per_m, M);
    if (!x || !w) {
        free(x);
        free(w);
        return diag_node_error(d, n, "out of memory");
    }
    nn_conv_ref(&win, N, C, M, n->attrs[CONV_GROUP].i, x, w, qlinear && ir_has_input(n, 8) ? in[8] : NULL, y);
    free(x);
    free(w);
    if (!qlinear) return 0;
    int64_t P = nn_prod(win.out, 0, win.sr), cnt = N * M * P, nws = ir_numel(&n->in[4]->shape);
    double yz = ir_has_input(n, 7) ? in[7][0] : 0;
    for (int64_t o = 0; o < cnt; o++) {
        int64_t m = o / P % M;
        y[o] = requant(y[o], in[1][0] * qparam_at(in[4], nws, m) / in[6][0], yz, n->out[0]->dtype);
    }
    return 0;
}

static int convi_infer(Node *n, Diag *d)
{
    NnWindow win;
    Shape s = {0};
    if (qconv_check(n, 0, &win, d)) return -1;
    nn_window_out_shape(n, &win, n->in[1]->shape.dims[0], &s);
    ir_set_out(n, 0, DT_I32, &s);
    return 0;
}

static int convi_eval(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    return qconv_run(n, in, 0, out[0], d);
}

const OpDesc op_ConvInteger = {
    .name = "ConvInteger",
    .min_in = 2, .max_in = 4, .in_names = convi_in,
    .min_out = 1, .max_out = 1, .out_names = out_y,
    .attrs = nn_conv_attrs, .n_attrs = CONV_EPILOGUE,
    .infer = convi_infer, .eval = convi_eval,
};

static int qconv_infer(Node *n, Diag *d)
{
    NnWindow win;
    Shape s = {0};
    if (qconv_check(n, 1, &win, d)) return -1;
    nn_window_out_shape(n, &win, n->in[3]->shape.dims[0], &s);
    ir_set_out(n, 0, ir_has_input(n, 7) ? n->in[7]->dtype : DT_U8, &s);
    return 0;
}

static int qconv_eval(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    return qconv_run(n, in, 1, out[0], d);
}

const OpDesc op_QLinearConv = {
    .name = "QLinearConv",
    .min_in = 8, .max_in = 9, .in_names = qconv_in,
    .min_out = 1, .max_out = 1, .out_names = out_y,
    .attrs = nn_conv_attrs, .n_attrs = CONV_EPILOGUE,
    .infer = qconv_infer, .eval = qconv_eval,
};
