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

/* A product of runtime dims as C text in the next of 8 rotating buffers. */
static const char *pstr(char (*buf)[160], int *k, const CgenProd *p)
{
    char *b = buf[(*k)++ % 8];
    return cgen_prod_str(p, b, 160);
}
#define PSTR(p) pstr(pbuf, &pk, &(p))

/* Runtime shapes (rank >= 2, ir_sym_matmul): the batched matmul with every
 * size a product of runtime dims, by the portable GEMM. One call when B is
 * shared by every batch and A is not broadcast, else a loop over Y's batch
 * dims with A and B offset by their batch strides (0 where broadcast). */
static void emit_matmul_dyn(Cgen *c, const Node *n, DType t)
{
    Writer *w = cgen_w(c);
    const Shape *as = &n->in[0]->shape, *bs = &n->in[1]->shape, *ys = &n->out[0]->shape;
    int ra = as->rank, rb = bs->rank, ry = ys->rank;
    char pbuf[8][160];
    int pk = 0;
    char one[32], zero[32], pa[EMIT_EXPR_CAP], pb[EMIT_EXPR_CAP], py[EMIT_EXPR_CAP];
    emit_float_lit(one, sizeof one, 1.0, t);
    emit_float_lit(zero, sizeof zero, 0.0, t);
    emit_ptr_name(c, n->in[0], pa);
    emit_ptr_name(c, n->in[1], pb);
    emit_ptr_name(c, n->out[0], py);
    CgenProd M = cgen_dims_prod(as, ra - 2, ra - 1), K = cgen_dims_prod(as, ra - 1, ra), N = cgen_dims_prod(bs, rb - 1, rb);
    int b_shared = 1, a_full = ra == ry;
    for (int k = 0; k < rb - 2; k++)
        if (bs->dims[k] != 1 || bs->sym[k]) b_shared = 0;
    for (int k = 0; a_full && k < ry - 2; k++)
        if (as->dims[k] != ys->dims[k] || as->sym[k] != ys->sym[k]) a_full = 0;
    if (b_shared && a_full) {
        CgenProd rows = cgen_dims_prod(as, 0, ra - 1);
        w_line(w, "%s(0, 0, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s);", gemm_fn(t), PSTR(rows), PSTR(N), PSTR(K), one,
               pa, PSTR(K), pb, PSTR(N), zero, py, PSTR(N));
        return;
    }
    const char *iv[IR_MAX_RANK];
    for (int k = 0; k < ry - 2; k++) {
        iv[k] = cgen_tmp(c, "bi");
        w_line(w, "int64_t %s;", iv[k]);
    }
    int depth = w->indent;
    for (int k = 0; k < ry - 2; k++) {
        CgenProd e = cgen_dims_prod(ys, k, k + 1);
        w_line(w, "for (%s = 0; %s < %s; %s++)", iv[k], iv[k], PSTR(e), iv[k]);
        w->indent++;
    }
    Writer oa, ob, oy;
    w_init(&oa);
    w_init(&ob);
    w_init(&oy);
    for (int k = 0; k < ry - 2; k++) {
        int ka = k - (ry - ra), kb = k - (ry - rb);
        if (ka >= 0 && (as->dims[ka] != 1 || as->sym[ka])) {
            CgenProd s = cgen_dims_prod(as, ka + 1, ra);
            w_printf(&oa, " + %s * %s", iv[k], PSTR(s));
        }
        if (kb >= 0 && (bs->dims[kb] != 1 || bs->sym[kb])) {
            CgenProd s = cgen_dims_prod(bs, kb + 1, rb);
            w_printf(&ob, " + %s * %s", iv[k], PSTR(s));
        }
        CgenProd s = cgen_dims_prod(ys, k + 1, ry);
        w_printf(&oy, " + %s * %s", iv[k], PSTR(s));
    }
    w_line(w, "%s(0, 0, %s, %s, %s, %s, %s + (0%s), %s, %s + (0%s), %s, %s, %s + (0%s), %s);", gemm_fn(t), PSTR(M),
           PSTR(N), PSTR(K), one, pa, oa.buf ? oa.buf : "", PSTR(K), pb, ob.buf ? ob.buf : "", PSTR(N), zero, py,
           oy.buf ? oy.buf : "", PSTR(N));
    w_free(&oa);
    w_free(&ob);
    w_free(&oy);
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
    if (cgen_node_has_sym(n)) {
        emit_matmul_dyn(c, n, t);
        return cgen_emit_epilogue(c, n, d);
    }
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
    if (Y->shape.dims[0] * Y->shape.dims[1] == 0) return 0;
    int fast = cgen_cpu_emit(c, n, d);
    if (fast) return fast < 0 ? -1 : 0;
    cgen_use_runtime(c, CGEN_RT_linalg);
    int ta = n->attrs[GEMM_TRANS_A].i != 0, tb = n->attrs[GEMM_TRANS_B].i != 0;
    /* sizes as products of runtime dims: literals for static shapes */
    char pbuf[8][160];
    int pk = 0;
    CgenProd M = cgen_dims_prod(&Y->shape, 0, 1), N = cgen_dims_prod(&Y->shape, 1, 2);
    CgenProd K = cgen_dims_prod(&A->shape, ta ? 0 : 1, ta ? 1 : 2);
    CgenProd lda = cgen_dims_prod(&A->shape, 1, 2), ldb = cgen_dims_prod(&B->shape, 1, 2);
    char alpha[48], beta[48], zero[32], one[32];
    emit_float_lit(alpha, sizeof alpha, n->attrs[GEMM_ALPHA].f, t);
    emit_float_lit(beta, sizeof beta, n->attrs[GEMM_BETA].f, t);
    emit_float_lit(zero, sizeof zero, 0.0, t);
    emit_float_lit(one, sizeof one, 1.0, t);
    const char *py = cgen_ptr(c, Y);
    if (C) {
        const Shape *cs = &C->shape;
        CgenProd crs = cgen_prod(0);
        int64_t ccs = 0;
        if (cs->rank >= 1 && (cs->dims[cs->rank - 1] != 1 || cs->sym[cs->rank - 1])) ccs = 1;
        if (cs->rank == 2 && (cs->dims[0] != 1 || cs->sym[0])) crs = cgen_dims_prod(cs, 1, 2);
        w_line(w, "gcrt_fill_bias2d_%s(%s, %s, %s, %s, %lld, %s, %s);", t == DT_F32 ? "f32" : "f64", PSTR(M), PSTR(N),
               cgen_ptr(c, C), PSTR(crs), (long long)ccs, beta, py);
    }
    w_line(w, "%s(%d, %d, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s);", gemm_fn(t), ta, tb, PSTR(M), PSTR(N), PSTR(K),
           alpha, cgen_ptr(c, A), PSTR(lda), cgen_ptr(c, B), PSTR(ldb), C ? one : zero, py, PSTR(N));
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
    {OP_Det, emit_det, CGEN_RT_linalg, det_workspace, 0},
    /* the runtime unit follows the kernel picked: cpu (emit_cpu.c) or linalg */
    {OP_MatMul, emit_matmul, 0, NULL, 1},
    {OP_Gemm, emit_gemm, 0, NULL, 1},
    {-1, NULL, 0, NULL, 0},
};
