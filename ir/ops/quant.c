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
 * accumulations are exact in double for the sizes graphc handles. The
 * convolutions are 2-D (NCHW) with kernel_shape/strides/pads/dilations/
 * group/auto_pad as in Conv.
 */
#include "../op.h"
#include "quant_attrs.h"

#include <math.h>
#include <stdio.h>
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
    Shape sc;
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

/* numpy.matmul geometry: 1-D operands promoted (the promoted dim dropped
 * from `out`), batch dims broadcast; sa/sb are the operands' element
 * strides along the broadcast batch dims (0 where broadcast). */
typedef struct QMatGeom {
    int64_t M, K, N;
    Shape batch, out;
    int64_t sa[IR_MAX_RANK], sb[IR_MAX_RANK];
} QMatGeom;

static int qmm_geom(const Node *n, int ia, int ib, QMatGeom *g, Diag *d);

static void batch_strides(const Shape *s, const Shape *batch, int64_t mat, int64_t *st)
{
    int own_rank = s->rank > 2 ? s->rank - 2 : 0;
    int64_t acc = mat;
    for (int k = batch->rank - 1; k >= 0; k--) {
        int own = k - (batch->rank - own_rank);
        if (own < 0) { st[k] = 0; continue; }
        st[k] = s->dims[own] == 1 ? 0 : acc;
        acc *= s->dims[own];
    }
}

static int64_t batch_offset(const QMatGeom *g, int64_t bi, const int64_t *st)
{
    int64_t off = 0;
    for (int k = g->batch.rank - 1; k >= 0; k--) {
        off += (bi % g->batch.dims[k]) * st[k];
        bi /= g->batch.dims[k];
    }
    return off;
}

/* Checks the matmul operands' dtypes and zero points / scales.
 * qlinear: the QLinearMatMul input layout. */
static int qmm_check(Node *n, int qlinear, QMatGeom *g, Diag *d)
{
    int ia = 0, ib = qlinear ? 3 : 1;
    int iza = qlinear ? 2 : 2, izb = qlinear ? 5 : 3;
    if (ir_need_inputs(n, d)) return -1;
    if (need_dtype2(n, ia, DT_U8, DT_I8, d) || need_dtype2(n, ib, DT_U8, DT_I8, d)) return -1;
    if (qmm_geom(n, ia, ib, g, d)) return -1;
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

static int qmm_geom(const Node *n, int ia, int ib, QMatGeom *g, Diag *d)
{
    const Shape *a = &n->in[ia]->shape, *b = &n->in[ib]->shape;
    char sa[SHP_BUF], sb[SHP_BUF];
    if (a->rank < 1) return diag_node_error(d, n, "input '%s' must have rank >= 1, got a scalar", in_name(n, ia));
    if (b->rank < 1) return diag_node_error(d, n, "input '%s' must have rank >= 1, got a scalar", in_name(n, ib));
    g->K = a->dims[a->rank - 1];
    int64_t kb = b->rank == 1 ? b->dims[0] : b->dims[b->rank - 2];
    if (g->K != kb)
        return diag_node_error(d, n, "input '%s' shape %s and input '%s' shape %s: inner dimensions differ (%lld vs %lld)",
                               in_name(n, ia), ir_shape_str(a, sa, sizeof sa), in_name(n, ib),
                               ir_shape_str(b, sb, sizeof sb), (long long)g->K, (long long)kb);
    g->M = a->rank == 1 ? 1 : a->dims[a->rank - 2];
    g->N = b->rank == 1 ? 1 : b->dims[b->rank - 1];
    Shape ba = ir_shape(a->rank > 2 ? a->rank - 2 : 0, a->dims);
    Shape bb = ir_shape(b->rank > 2 ? b->rank - 2 : 0, b->dims);
    if (ir_broadcast(&ba, &bb, &g->batch))
        return diag_node_error(d, n, "input '%s' shape %s and input '%s' shape %s: batch dimensions do not broadcast",
                               in_name(n, ia), ir_shape_str(a, sa, sizeof sa), in_name(n, ib),
                               ir_shape_str(b, sb, sizeof sb));
    g->out = g->batch;
    if (a->rank > 1) g->out.dims[g->out.rank++] = g->M;
    if (b->rank > 1) g->out.dims[g->out.rank++] = g->N;
    batch_strides(a, &g->batch, g->M * g->K, g->sa);
    batch_strides(b, &g->batch, g->K * g->N, g->sb);
    return 0;
}

static int mmi_infer(Node *n, Diag *d)
{
    QMatGeom g;
    if (qmm_check(n, 0, &g, d)) return -1;
    ir_set_out(n, 0, DT_I32, &g.out);
    return 0;
}

/* The matmul reference: integer sums (MatMulInteger) or requantized
 * results (QLinearMatMul) into y. */
static int qmm_run(const Node *n, const double *const *in, int qlinear, double *y, Diag *d)
{
    QMatGeom g;
    if (qmm_check((Node *)n, qlinear, &g, d)) return -1;
    int ia = 0, ib = qlinear ? 3 : 1, iza = 2, izb = qlinear ? 5 : 3;
    const double *za = ir_has_input(n, iza) ? in[iza] : NULL, *zb = ir_has_input(n, izb) ? in[izb] : NULL;
    int64_t nza = za ? ir_numel(&n->in[iza]->shape) : 0, nzb = zb ? ir_numel(&n->in[izb]->shape) : 0;
    int64_t nb = ir_numel(&g.batch);
    for (int64_t bi = 0; bi < nb; bi++) {
        const double *A = in[ia] + batch_offset(&g, bi, g.sa), *B = in[ib] + batch_offset(&g, bi, g.sb);
        for (int64_t i = 0; i < g.M; i++)
            for (int64_t j = 0; j < g.N; j++) {
                double az = za ? za[nza == 1 ? 0 : i] : 0, bz = zb ? zb[nzb == 1 ? 0 : j] : 0, acc = 0;
                for (int64_t k = 0; k < g.K; k++) acc += (A[i * g.K + k] - az) * (B[k * g.N + j] - bz);
                int64_t o = (bi * g.M + i) * g.N + j;
                if (!qlinear) {
                    y[o] = acc;
                    continue;
                }
                int64_t nas = ir_numel(&n->in[1]->shape), nbs = ir_numel(&n->in[4]->shape);
                double sc = in[1][nas == 1 ? 0 : i] * in[4][nbs == 1 ? 0 : j] / in[6][0];
                double yz = ir_has_input(n, 7) ? in[7][0] : 0;
                y[o] = saturate(nearbyint(acc * sc) + yz, n->out[0]->dtype);
            }
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
    QMatGeom g;
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

static const AttrSpec qconv_attrs[] = {
    [QC_AUTO_PAD] = {"auto_pad", ATTR_STRING, "NOTSET", 0},
    [QC_DILATIONS] = {"dilations", ATTR_INTS, NULL, 0},
    [QC_GROUP] = {"group", ATTR_INT, "1", 0},
    [QC_KERNEL_SHAPE] = {"kernel_shape", ATTR_INTS, NULL, 0},
    [QC_PADS] = {"pads", ATTR_INTS, NULL, 0},
    [QC_STRIDES] = {"strides", ATTR_INTS, NULL, 0},
};
OP_ATTRS_CHECK(qconv_attrs, QC_COUNT);
static const char *const convi_in[] = {"x", "w", "x_zero_point", "w_zero_point"};
static const char *const qconv_in[] = {"x", "x_scale", "x_zero_point", "w", "w_scale", "w_zero_point",
                                       "y_scale", "y_zero_point", "B"};

/* A 2-element attribute list (or its default). */
static int attr_pair(const Node *n, int k, int64_t dflt, int64_t *v, Diag *d)
{
    const AttrVal *a = &n->attrs[k];
    v[0] = v[1] = dflt;
    if (!a->set) return 0;
    if (a->n != 2)
        return diag_node_error(d, n, "attribute '%s' must have 2 values for a 2-D convolution, got %d",
                               qconv_attrs[k].name, a->n);
    for (int i = 0; i < 2; i++) {
        if (a->ints[i] < (dflt ? 1 : 0))
            return diag_node_error(d, n, "attribute '%s' value %lld must be >= %d", qconv_attrs[k].name,
                                   (long long)a->ints[i], dflt ? 1 : 0);
        v[i] = a->ints[i];
    }
    return 0;
}

/* 2-D convolution geometry (NCHW input, MCkk weights); ph/pw are the
 * leading pads. */
typedef struct QConvGeom {
    int64_t N, C, H, W, M, group, kh, kw, sh, sw, dh, dw, ph, pw, OH, OW;
} QConvGeom;

static int conv_geom(const Node *n, int ix, int iw, QConvGeom *g, Diag *d)
{
    const Shape *xs = &n->in[ix]->shape, *ws = &n->in[iw]->shape;
    char b1[SHP_BUF], b2[SHP_BUF];
    if (xs->rank != 4)
        return diag_node_error(d, n, "input 'x' must be 4-D (N,C,H,W): only 2-D convolutions are supported, got shape %s",
                               ir_shape_str(xs, b1, sizeof b1));
    if (ws->rank != 4)
        return diag_node_error(d, n, "input 'w' must be 4-D (M,C/group,kH,kW), got shape %s", ir_shape_str(ws, b1, sizeof b1));
    g->N = xs->dims[0];
    g->C = xs->dims[1];
    g->H = xs->dims[2];
    g->W = xs->dims[3];
    g->M = ws->dims[0];
    g->group = n->attrs[QC_GROUP].i;
    if (g->group < 1 || g->C % g->group || g->M % g->group)
        return diag_node_error(d, n, "attribute 'group' %lld must be >= 1 and divide the %lld input and %lld output channels",
                               (long long)g->group, (long long)g->C, (long long)g->M);
    if (ws->dims[1] * g->group != g->C)
        return diag_node_error(d, n, "input 'w' shape %s: dimension 1 must be C/group = %lld (input 'x' shape %s)",
                               ir_shape_str(ws, b1, sizeof b1), (long long)(g->C / g->group), ir_shape_str(xs, b2, sizeof b2));
    g->kh = ws->dims[2];
    g->kw = ws->dims[3];
    const AttrVal *ks = &n->attrs[QC_KERNEL_SHAPE];
    if (ks->set && (ks->n != 2 || ks->ints[0] != g->kh || ks->ints[1] != g->kw))
        return diag_node_error(d, n, "attribute 'kernel_shape' does not match input 'w' shape %s", ir_shape_str(ws, b1, sizeof b1));
    int64_t st[2], dl[2];
    if (attr_pair(n, QC_STRIDES, 1, st, d) || attr_pair(n, QC_DILATIONS, 1, dl, d)) return -1;
    g->sh = st[0]; g->sw = st[1]; g->dh = dl[0]; g->dw = dl[1];
    int64_t in_sz[2] = {g->H, g->W}, k[2] = {g->kh, g->kw}, out[2], pb[2], pe[2];
    const char *ap = n->attrs[QC_AUTO_PAD].s;
    for (int i = 0; i < 2; i++) {
        int64_t ek = (k[i] - 1) * dl[i] + 1;
        if (strcmp(ap, "NOTSET") == 0) {
            const AttrVal *p = &n->attrs[QC_PADS];
            if (p->set && p->n != 4)
                return diag_node_error(d, n, "attribute 'pads' must have 4 values for a 2-D convolution, got %d", p->n);
            pb[i] = p->set ? p->ints[i] : 0;
            pe[i] = p->set ? p->ints[i + 2] : 0;
            if (pb[i] < 0 || pe[i] < 0) return diag_node_error(d, n, "attribute 'pads' values must be >= 0");
        } else if (strcmp(ap, "VALID") == 0) {
            pb[i] = pe[i] = 0;
        } else if (strcmp(ap, "SAME_UPPER") == 0 || strcmp(ap, "SAME_LOWER") == 0) {
            int64_t o = (in_sz[i] + st[i] - 1) / st[i];
            int64_t tot = (o - 1) * st[i] + ek - in_sz[i];
            if (tot < 0) tot = 0;
            pb[i] = ap[5] == 'U' ? tot / 2 : tot - tot / 2;
            pe[i] = tot - pb[i];
        } else {
            return diag_node_error(d, n, "attribute 'auto_pad' must be NOTSET, VALID, SAME_UPPER or SAME_LOWER, got '%s'", ap);
        }
        int64_t span = in_sz[i] + pb[i] + pe[i] - ek;
        if (span < 0)
            return diag_node_error(d, n, "the effective kernel (%lld) is larger than the padded input (%lld) along spatial axis %d",
                                   (long long)ek, (long long)(in_sz[i] + pb[i] + pe[i]), i);
        out[i] = span / st[i] + 1;
    }
    g->ph = pb[0]; g->pw = pb[1];
    g->OH = out[0]; g->OW = out[1];
    return 0;
}

static int qconv_check(Node *n, int qlinear, QConvGeom *g, Diag *d)
{
    int ix = 0, iw = qlinear ? 3 : 1, izx = 2, izw = qlinear ? 5 : 3;
    if (ir_need_inputs(n, d)) return -1;
    if (need_dtype2(n, ix, DT_U8, DT_I8, d) || need_dtype2(n, iw, DT_U8, DT_I8, d)) return -1;
    if (conv_geom(n, ix, iw, g, d)) return -1;
    if (ir_has_input(n, izx) && (same_dtype(n, ix, izx, d) || qparam_len(n, izx, 0, 1, "", d) < 0)) return -1;
    if (ir_has_input(n, izw) && (same_dtype(n, iw, izw, d) || qparam_len(n, izw, 1, g->M, "output channels", d) < 0)) return -1;
    if (qlinear) {
        if (need_float(n, 1, d) || qparam_len(n, 1, 0, 1, "", d) < 0) return -1;
        if (need_float(n, 4, d) || qparam_len(n, 4, 1, g->M, "output channels", d) < 0) return -1;
        if (need_float(n, 6, d) || qparam_len(n, 6, 0, 1, "", d) < 0) return -1;
        if (ir_has_input(n, 7) && (need_dtype2(n, 7, DT_U8, DT_I8, d) || qparam_len(n, 7, 0, 1, "", d) < 0)) return -1;
        if (ir_has_input(n, 8)) {
            const Shape *bs = &n->in[8]->shape;
            char b[SHP_BUF];
            if (n->in[8]->dtype != DT_I32)
                return diag_node_error(d, n, "input 'B' must be i32, got %s", ir_dtype_name(n->in[8]->dtype));
            if (bs->rank != 1 || bs->dims[0] != g->M)
                return diag_node_error(d, n, "input 'B' shape %s must be 1-D of size %lld (output channels)",
                                       ir_shape_str(bs, b, sizeof b), (long long)g->M);
        }
    }
    return 0;
}

static void qconv_out_shape(const QConvGeom *g, Shape *s)
{
    int64_t dims[4] = {g->N, g->M, g->OH, g->OW};
    *s = ir_shape(4, dims);
}

static int qconv_run(const Node *n, const double *const *in, int qlinear, double *y, Diag *d)
{
    QConvGeom g;
    if (qconv_check((Node *)n, qlinear, &g, d)) return -1;
    int ix = 0, iw = qlinear ? 3 : 1, izx = 2, izw = qlinear ? 5 : 3;
    const double *X = in[ix], *Wt = in[iw];
    double zx = ir_has_input(n, izx) ? in[izx][0] : 0;
    int64_t nzw = ir_has_input(n, izw) ? ir_numel(&n->in[izw]->shape) : 0;
    int64_t cpg = g.C / g.group, mpg = g.M / g.group;
    for (int64_t b = 0; b < g.N; b++)
        for (int64_t m = 0; m < g.M; m++) {
            double zw = nzw ? in[izw][nzw == 1 ? 0 : m] : 0;
            int64_t c0 = (m / mpg) * cpg;
            for (int64_t oh = 0; oh < g.OH; oh++)
                for (int64_t ow = 0; ow < g.OW; ow++) {
                    double acc = 0;
                    for (int64_t c = 0; c < cpg; c++)
                        for (int64_t i = 0; i < g.kh; i++)
                            for (int64_t j = 0; j < g.kw; j++) {
                                int64_t h = oh * g.sh - g.ph + i * g.dh, w = ow * g.sw - g.pw + j * g.dw;
                                if (h < 0 || h >= g.H || w < 0 || w >= g.W) continue;
                                double xv = X[((b * g.C + c0 + c) * g.H + h) * g.W + w] - zx;
                                acc += xv * (Wt[((m * cpg + c) * g.kh + i) * g.kw + j] - zw);
                            }
                    int64_t o = ((b * g.M + m) * g.OH + oh) * g.OW + ow;
                    if (!qlinear) {
                        y[o] = acc;
                        continue;
                    }
                    if (ir_has_input(n, 8)) acc += in[8][m];
                    int64_t nws = ir_numel(&n->in[4]->shape);
                    double sc = in[1][0] * in[4][nws == 1 ? 0 : m] / in[6][0];
                    double yz = ir_has_input(n, 7) ? in[7][0] : 0;
                    y[o] = saturate(nearbyint(acc * sc) + yz, n->out[0]->dtype);
                }
        }
    return 0;
}

static int convi_infer(Node *n, Diag *d)
{
    QConvGeom g;
    Shape s;
    if (qconv_check(n, 0, &g, d)) return -1;
    qconv_out_shape(&g, &s);
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
    OP_ATTRS(qconv_attrs),
    .infer = convi_infer, .eval = convi_eval,
};

static int qconv_infer(Node *n, Diag *d)
{
    QConvGeom g;
    Shape s;
    if (qconv_check(n, 1, &g, d)) return -1;
    qconv_out_shape(&g, &s);
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
    OP_ATTRS(qconv_attrs),
    .infer = qconv_infer, .eval = qconv_eval,
};
