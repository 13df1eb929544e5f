/* emit_linalg.c — C emitters for MatMul, Gemm and Det.
 *
 * Both lower to calls of the runtime GEMM (gcrt_sgemm for f32, gcrt_dgemm
 * for f64) with every size written as a literal. MatMul takes its geometry
 * from the op description (ir_matmul_geometry, ir/ops/geometry.h) and writes
 * its calls through emit_matmul_call, which the quantized matmuls share
 * (emit_quant.c): it folds the batch into M when B is shared by every batch
 * and A is not broadcast (the common [B,S,K] x [K,N] case: one GEMM);
 * otherwise it loops over the broadcast batch dims with one GEMM per matrix,
 * offsetting A and B by their batch strides (0 along broadcast dims). Gemm
 * first fills Y with beta * C (broadcast through row/column strides) and
 * then accumulates alpha * A * B.
 * Det calls gcrt_det_* (LU in double, the node's workspace holding one
 * matrix). Other dtypes are refused with a diagnostic naming the node.
 * An `epilogue` (ir/fused.h) on MatMul or Gemm is applied by one loop over
 * Y right after the GEMM call(s) in the same node block (cgen_emit_epilogue).
 * f32 MatMul and Gemm of the common forms take the fast CPU path first
 * (emit_cpu.c: packed constant B, the epilogue on the tile, threads).
 */
#include "cgen.h"
#include "emit_common.h"
#include "../../ir/ops/linalg_attrs.h"
#include "../../ir/ops/geometry.h"

static const char *gemm_fn(DType t) { return t == DT_F32 ? "gcrt_sgemm" : "gcrt_dgemm"; }

/* See emit_common.h. */
void emit_matmul_call(Cgen *c, const IrMatMulGeom *g, DType t, const char *pa, const char *pb, const char *py)
{
    Writer *w = cgen_w(c);
    int64_t M = g->M, K = g->K, N = g->N, nbatch = ir_numel(&g->batch);
    char one[32], zero[32];
    emit_float_lit(one, sizeof one, 1.0, t);
    emit_float_lit(zero, sizeof zero, 0.0, t);
    if (g->nb == 1 && g->na == nbatch) {
        w_line(w, "%s(0, 0, %lld, %lld, %lld, %s, %s, %lld, %s, %lld, %s, %s, %lld);", gemm_fn(t),
               (long long)(nbatch * M), (long long)N, (long long)K, one, pa, (long long)K, pb, (long long)N,
               zero, py, (long long)N);
        return;
    }
    const Shape *batch = &g->batch;
    const char *iv[IR_MAX_RANK];
    for (int k = 0; k < batch->rank; k++) {
        iv[k] = cgen_tmp(c, "bi");
        w_line(w, "int64_t %s;", iv[k]);
    }
    int depth = w->indent;
    for (int k = 0; k < batch->rank; k++) {
        w_line(w, "for (%s = 0; %s < %lld; %s++)", iv[k], iv[k], (long long)batch->dims[k], iv[k]);
        w->indent++;
    }
    /* offsets: A and B by their strides, Y by the dense batch index */
    w_printf(w, "%s(0, 0, %lld, %lld, %lld, %s, %s + (0", gemm_fn(t), (long long)M, (long long)N,
             (long long)K, one, pa);
    for (int k = 0; k < batch->rank; k++)
        if (g->sa[k]) w_printf(w, " + %s * %lld", iv[k], (long long)g->sa[k]);
    w_printf(w, "), %lld, %s + (0", (long long)K, pb);
    for (int k = 0; k < batch->rank; k++)
        if (g->sb[k]) w_printf(w, " + %s * %lld", iv[k], (long long)g->sb[k]);
    w_printf(w, "), %lld, %s, %s + (0", (long long)N, zero, py);
    int64_t ys = M * N;
    for (int k = batch->rank - 1; k >= 0; k--) {
        w_printf(w, " + %s * %lld", iv[k], (long long)ys);
        ys *= batch->dims[k];
    }
    w_line(w, "), %lld);", (long long)N);
    w->indent = depth;
}

static int emit_matmul(Cgen *c, const Node *n, Diag *d)
{
    const Value *A = n->in[0], *B = n->in[1], *Y = n->out[0];
    DType t = Y->dtype;
    if (emit_check_float_dtype(n, t, d)) return -1;
    if (ir_numel(&Y->shape) == 0) return 0;
    int fast = cgen_cpu_emit(c, n, d);
    if (fast) return fast < 0 ? -1 : 0;
    cgen_use_runtime(c, CGEN_RT_linalg);
    IrMatMulGeom g;
    GC_ASSERT(ir_matmul_geometry(n, 0, 1, &g, NULL) == 0);
    const char *pa = cgen_ptr(c, A), *pb = cgen_ptr(c, B), *py = cgen_ptr(c, Y);
    emit_matmul_call(c, &g, t, pa, pb, py);
    return cgen_emit_epilogue(c, n, d);
}

static int emit_gemm(Cgen *c, const Node *n, Diag *d)
{
    Writer *w = cgen_w(c);
    const Value *A = n->in[0], *B = n->in[1], *C = n->n_in > 2 ? n->in[2] : NULL, *Y = n->out[0];
    DType t = Y->dtype;
    if (emit_check_float_dtype(n, t, d)) return -1;
    int64_t M = Y->shape.dims[0], N = Y->shape.dims[1];
    if (M * N == 0) return 0;
    int fast = cgen_cpu_emit(c, n, d);
    if (fast) return fast < 0 ? -1 : 0;
    cgen_use_runtime(c, CGEN_RT_linalg);
    int ta = n->attrs[GEMM_TRANS_A].i != 0, tb = n->attrs[GEMM_TRANS_B].i != 0;
    int64_t K = A->shape.dims[ta ? 0 : 1];
    char alpha[48], beta[48], zero[32], one[32];
    emit_float_lit(alpha, sizeof alpha, n->attrs[GEMM_ALPHA].f, t);
    emit_float_lit(beta, sizeof beta, n->attrs[GEMM_BETA].f, t);
    emit_float_lit(zero, sizeof zero, 0.0, t);
    emit_float_lit(one, sizeof one, 1.0, t);
    const char *py = cgen_ptr(c, Y);
    if (C) {
        const Shape *cs = &C->shape;
        int64_t crs = 0, ccs = 0;
        if (cs->rank >= 1 && cs->dims[cs->rank - 1] != 1) ccs = 1;
        if (cs->rank == 2 && cs->dims[0] != 1) crs = cs->dims[1];
        w_line(w, "gcrt_fill_bias2d_%s(%lld, %lld, %s, %lld, %lld, %s, %s);", t == DT_F32 ? "f32" : "f64",
               (long long)M, (long long)N, cgen_ptr(c, C), (long long)crs, (long long)ccs, beta, py);
    }
    w_line(w, "%s(%d, %d, %lld, %lld, %lld, %s, %s, %lld, %s, %lld, %s, %s, %lld);", gemm_fn(t), ta, tb,
           (long long)M, (long long)N, (long long)K, alpha, cgen_ptr(c, A), (long long)A->shape.dims[1],
           cgen_ptr(c, B), (long long)B->shape.dims[1], C ? one : zero, py, (long long)N);
    return cgen_emit_epilogue(c, n, d);
}

/* Det: one runtime call over the batch, the workspace holding the LU factors. */
static int emit_det(Cgen *c, const Node *n, Diag *d)
{
    const Value *X = n->in[0], *Y = n->out[0];
    const char *sfx = emit_kernel_suffix(n, X->dtype, d);
    if (!sfx) return -1;
    int64_t m = X->shape.dims[X->shape.rank - 1], nb = ir_numel(&Y->shape);
    if (nb == 0) return 0;
    char px[EMIT_EXPR_CAP], py[EMIT_EXPR_CAP];
    emit_ptr_name(c, X, px);
    emit_ptr_name(c, Y, py);
    if (m == 0) {
        w_line(cgen_w(c), "{ int64_t i; for (i = 0; i < %lld; i++) %s[i] = 1; } /* det of 0x0 is 1 */",
               (long long)nb, py);
        return 0;
    }
    w_line(cgen_w(c), "gcrt_det_%s(%lld, %lld, %s, %s, (double *)(void *)%s);", sfx, (long long)nb, (long long)m,
           px, py, cgen_workspace(c, n));
    return 0;
}

/* Det's scratch: one m x m matrix of doubles for the LU factors. */
static size_t det_workspace(const Node *n)
{
    const Shape *s = &n->in[0]->shape;
    int64_t m = s->dims[s->rank - 1];
    return sizeof(double) * (size_t)(m * m);
}

const CgenEntry cgen_linalg_entries[] = {
    {OP_Det, emit_det, CGEN_RT_linalg, det_workspace},
    /* the runtime unit follows the kernel picked: cpu (emit_cpu.c) or linalg */
    {OP_MatMul, emit_matmul, 0, NULL},
    {OP_Gemm, emit_gemm, 0, NULL},
    {-1, NULL, 0, NULL},
};
