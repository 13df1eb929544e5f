/* cuda_libs.c — the CUDA backend's library calls (see cuda_emit.h): Gemm and
 * MatMul on cuBLAS (row-major as the transposed column-major product), Conv
 * on cuDNN (descriptors and a deterministic algorithm within the node's
 * arena workspace, chosen once by NAME_init); biases and fused epilogues
 * as generated kernels after the call.
 *
 * f16 and bf16: a node whose float inputs and output are all f16 (or all
 * bf16) runs on the same libraries in mixed precision, the operands in the
 * 16-bit type and the sums in fp32 (cublasGemmEx /
 * cublasGemmStridedBatchedEx with CUBLAS_COMPUTE_32F; cuDNN half or
 * bfloat16 descriptors with a FLOAT compute type), the library's result
 * rounded to the 16-bit type; the bias, Gemm's C and the epilogue kernels
 * load the 16-bit values into float and store them back (so a Conv bias or
 * Gemm's beta * C costs one more rounding). What the libraries cannot
 * say (a MatMul batch broadcast on both sides) is a generated kernel that
 * sums in double; any other mix of dtypes is refused.
 */
#include "cuda_emit.h"
#include "../cfamily/cfam_expr.h"
#include "../../ir/ops/geometry.h"
#include "../../ir/ops/linalg_attrs.h"
#include "../../ir/ops/nn_attrs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- cuBLAS ------------------------------------------------------------------------- */

/* 0 when the MatMul of n maps onto one strided-batched cuBLAS call; the
 * geometry in *g. */
static int matmul_plan(const Node *n, IrMatMulGeom *g)
{
    if (ir_matmul_geometry(n, 0, 1, g, NULL)) return -1;
    int64_t nb = ir_numel(&g->batch);
    if (!(g->na == 1 || g->na == nb) || !(g->nb == 1 || g->nb == nb)) return -1;
    if (g->M > INT32_MAX || g->N > INT32_MAX || g->K > INT32_MAX || nb > INT32_MAX) return -1;
    return 0;
}

static int is_half(DType t) { return t == DT_F16 || t == DT_BF16; }

/* Whether every input of n's own (not its epilogue's operands, which the
 * epilogue kernel loads in any dtype: an attention mask's bool) and its
 * output have the output's dtype. */
static int one_dtype(const Node *n)
{
    const int own = ir_epilogue_first(n->op);
    for (int i = 0; i < (own < 0 || own > n->n_in ? n->n_in : own); i++)
        if (n->in[i] && n->in[i]->dtype != n->out[0]->dtype) return 0;
    return 1;
}

/* Runtime shapes: how a MatMul operand of shape s (rank >= 2) goes along
 * output shape ys's batch: 0 shared (its batch dims all static 1), 1
 * batched like the output (the same batch dims), else -1. */
static int matmul_side(const Shape *s, const Shape *ys)
{
    int shared = 1, same = s->rank == ys->rank;
    for (int k = 0; k < s->rank - 2; k++) {
        if (s->dims[k] != 1 || s->sym[k]) shared = 0;
        if (same && (s->dims[k] != ys->dims[k] || s->sym[k] != ys->sym[k])) same = 0;
    }
    return shared ? 0 : same ? 1 : -1;
}

/* Whether Gemm/MatMul n maps onto cuBLAS: every tensor f32 (sgemm) or
 * every one f16, or bf16 (GemmEx), dims below 2^31 (cuBLAS takes int),
 * MatMul's batch dense or shared on each side. Others run as a generated
 * kernel. */
int cu_gemm_on_cublas(const Node *n)
{
    const DType t = n->out[0]->dtype;
    if (!one_dtype(n) || !(t == DT_F32 || is_half(t))) return 0;
    IrMatMulGeom g;
    if (n->op == OP_MatMul) return matmul_plan(n, &g) == 0;
    return n->out[0]->shape.dims[0] <= INT32_MAX && n->out[0]->shape.dims[1] <= INT32_MAX;
}

/* Gemm and MatMul: cuBLAS, or a generated kernel for f32, f64, f16 or
 * bf16 (one dtype). */
static int gemm_check(const Node *n, Diag *d)
{
    if (cgen_node_has_sym(n)) {
        const Shape *as = &n->in[0]->shape, *bs = &n->in[1]->shape, *ys = &n->out[0]->shape;
        if (!cu_gemm_on_cublas(n))
            return diag_node_error(d, n, "the CUDA backend takes runtime shapes through op '%s' on cuBLAS only (every "
                                         "tensor f32, or every one f16 or bf16)", ir_op(n->op)->name);
        if (n->op == OP_MatMul && (as->rank < 2 || bs->rank < 2 || matmul_side(as, ys) < 0 || matmul_side(bs, ys) < 0))
            return diag_node_error(d, n, "the CUDA backend takes runtime shapes through MatMul on operands of rank >= 2, "
                                         "each shared by the whole batch or batched like the output");
        return 0;
    }
    if (cu_gemm_on_cublas(n)) return 0;
    for (int i = 0; i < n->n_in + 1; i++) {
        const Value *v = i < n->n_in ? n->in[i] : n->out[0];
        if (v && (!(cu_is_float(v->dtype) || is_half(v->dtype)) || v->dtype != n->out[0]->dtype))
            return diag_node_error(d, n, "the CUDA backend computes op '%s' in f32, f64, f16 and bf16 (one dtype), got %s",
                                   ir_op(n->op)->name, ir_dtype_name(v->dtype));
    }
    return 0;
}

/* Gemm or MatMul as a generated kernel: one thread per output element,
 * the dot product in double (MatMul's operands offset along the broadcast
 * batch by IrMatMulGeom's strides; Gemm's alpha, transposes and beta * C
 * broadcast). */
static int emit_gemm_kernel(Cu *c, const Node *n)
{
    const Value *A = n->in[0], *B = n->in[1], *C = n->op == OP_Gemm && n->n_in > 2 ? n->in[2] : NULL, *Y = n->out[0];
    const int64_t total = ir_numel(&Y->shape);
    if (total == 0) return 0;
    const char *T = cfam_ctype(Y->dtype);
    const DType dt = Y->dtype;
    Writer *w = &c->kern;
    const int kn = cu_kernel_begin(c, n);
    w_printf(w, "GC_KERNEL k%d(%s *y, const %s *a, const %s *b%s%s%s)\n{\n", kn, T, T, T, C ? ", const " : "", C ? T : "",
             C ? " *cc" : "");
    w_printf(w, "    GC_FOR_EACH(i, %lld) {\n", (long long)total);
    if (n->op == OP_MatMul) {
        IrMatMulGeom g;
        GC_ASSERT(ir_matmul_geometry(n, 0, 1, &g, NULL) == 0);
        w_printf(w, "        const int64_t col = i %% %lld, row = i / %lld %% %lld, bi = i / %lld;\n", (long long)g.N,
                 (long long)g.N, (long long)g.M, (long long)(g.M * g.N));
        w_puts(w, "        int64_t oa = 0, ob = 0, r = bi;\n");
        for (int k = g.batch.rank - 1; k >= 0; k--)
            w_printf(w, "        oa += r %% %lld * %lld;\n        ob += r %% %lld * %lld;\n        r /= %lld;\n",
                     (long long)g.batch.dims[k], (long long)g.sa[k], (long long)g.batch.dims[k], (long long)g.sb[k],
                     (long long)g.batch.dims[k]);
        w_puts(w, "        (void)r;\n        double acc = 0;\n");
        char ea[64], eb[64];
        snprintf(ea, sizeof ea, "a[oa + row * %lld + k]", (long long)g.K);
        snprintf(eb, sizeof eb, "b[ob + k * %lld + col]", (long long)g.N);
        w_printf(w, "        for (int64_t k = 0; k < %lld; k++) acc += (double)", (long long)g.K);
        cu_load(w, dt, ea);
        w_puts(w, " * ");
        cu_load(w, dt, eb);
        w_puts(w, ";\n        ");
        cu_store(w, dt, "y[i]", "acc");
    } else {
        const int ta = n->attrs[GEMM_TRANS_A].i != 0, tb = n->attrs[GEMM_TRANS_B].i != 0;
        const int64_t M = Y->shape.dims[0], N = Y->shape.dims[1], K = A->shape.dims[ta ? 0 : 1];
        char al[48], be[48];
        cfam_lit(al, sizeof al, DT_F64, n->attrs[GEMM_ALPHA].f);
        cfam_lit(be, sizeof be, DT_F64, n->attrs[GEMM_BETA].f);
        w_printf(w, "        const int64_t col = i %% %lld, row = i / %lld;\n        double acc = 0;\n", (long long)N, (long long)N);
        char ia[64], ib[64];
        if (ta) snprintf(ia, sizeof ia, "k * %lld + row", (long long)M);
        else snprintf(ia, sizeof ia, "row * %lld + k", (long long)K);
        if (tb) snprintf(ib, sizeof ib, "col * %lld + k", (long long)K);
        else snprintf(ib, sizeof ib, "k * %lld + col", (long long)N);
        char ea[80], eb[80];
        snprintf(ea, sizeof ea, "a[%s]", ia);
        snprintf(eb, sizeof eb, "b[%s]", ib);
        w_printf(w, "        for (int64_t k = 0; k < %lld; k++) acc += (double)", (long long)K);
        cu_load(w, dt, ea);
        w_puts(w, " * ");
        cu_load(w, dt, eb);
        w_printf(w, ";\n        acc *= %s;\n", al);
        if (C) {
            int64_t st[IR_MAX_RANK];
            char ec[80];
            cu_bstrides(&C->shape, &Y->shape, st);
            snprintf(ec, sizeof ec, "cc[row * %lld + col * %lld]", (long long)st[0], (long long)st[1]);
            w_printf(w, "        acc += %s * ", be);
            cu_load(w, dt, ec);
            w_puts(w, ";\n");
        }
        w_puts(w, "        ");
        cu_store(w, dt, "y[i]", "acc");
    }
    w_puts(w, "    }\n}\n\n");
    w_printf(&c->body, "    GC_LAUNCH(k%d, %lld, stream, (%s, %s, %s", kn, (long long)total, cu_ptr(c, Y), cu_ptr(c, A), cu_ptr(c, B));
    if (C) w_printf(&c->body, ", %s", cu_ptr(c, C));
    w_puts(&c->body, "));\n");
    return 0;
}

/* A leading dimension as cuBLAS requires it: at least 1, also for an empty matrix. */
static int64_t ld1(int64_t x) { return x > 1 ? x : 1; }

/* The sizes of one cuBLAS call as C text (literals, or products of runtime
 * dims, which are at least 1: no ld1 needed). */
typedef struct GemmSizes {
    char M[160], N[160], K[160], lda[160], ldb[160], ldy[160], sa[160], sb[160], sy[160], batch[160];
} GemmSizes;

static void lit(char *buf, int64_t v) { snprintf(buf, 160, "%lld", (long long)v); }

/* A leading dimension of extent p (cu_sz text) as cuBLAS requires it, at
 * least 1: p itself, unless a runtime dim in it may be 0 (a data-dependent
 * extent). */
static void ld_text(Cu *c, char *buf, CgenProd p)
{
    int may_be_0 = p.c == 0;
    for (int i = 0; i < p.n; i++) may_be_0 |= ir_sym(c->g, p.s[i])->lo < 1;
    const char *t = cu_sz(c, p);
    if (may_be_0) snprintf(buf, 160, "(%s > 1 ? %s : 1)", t, t);
    else snprintf(buf, 160, "%s", t);
}

/* Row-major Y (M x N) = op(A) (M x K) * op(B) (K x N) as the column-major
 * Y^T = op(B)^T op(A)^T: cuBLAS's first operand is B. f32: sgemm; f16 and
 * bf16 (every operand and Y of type t): GemmEx, or its strided-batched
 * form for a batch, with float alpha and beta and fp32 accumulation
 * (CUBLAS_COMPUTE_32F; CUBLAS_GEMM_DEFAULT lets cuBLAS use tensor cores). */
static void emit_gemm_call_s(Cu *c, DType t, int ta, int tb, const GemmSizes *z, double alpha, const char *A, const char *B,
                             double beta, const char *Y)
{
    char al[48], be[48];
    cfam_lit(al, sizeof al, DT_F32, alpha);
    cfam_lit(be, sizeof be, DT_F32, beta);
    const char *opa = ta ? "CUBLAS_OP_T" : "CUBLAS_OP_N", *opb = tb ? "CUBLAS_OP_T" : "CUBLAS_OP_N";
    Writer *b = &c->body;
    w_puts(b, "    {\n");
    w_printf(b, "        const float alpha = %s, beta = %s;\n", al, be);
    if (t == DT_F32) {
        w_printf(b, "        if (cublasSgemmStridedBatched(blas, %s, %s, %s, %s, %s, &alpha, %s, %s, %s, %s, %s, %s,\n", opb, opa, z->N,
                 z->M, z->K, B, z->ldb, z->sb, A, z->lda, z->sa);
        w_printf(b, "                                      &beta, %s, %s, %s, %s) != CUBLAS_STATUS_SUCCESS)\n", Y, z->ldy, z->sy,
                 z->batch);
    } else {
        GC_ASSERT(is_half(t));
        const char *ct = t == DT_F16 ? "CUDA_R_16F" : "CUDA_R_16BF";
        if (strcmp(z->batch, "1") == 0) {
            w_printf(b, "        if (cublasGemmEx(blas, %s, %s, %s, %s, %s, &alpha, %s, %s, %s, %s, %s, %s,\n", opb, opa, z->N, z->M, z->K,
                     B, ct, z->ldb, A, ct, z->lda);
            w_printf(b, "                         &beta, %s, %s, %s, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) != CUBLAS_STATUS_SUCCESS)\n",
                     Y, ct, z->ldy);
        } else {
            w_printf(b, "        if (cublasGemmStridedBatchedEx(blas, %s, %s, %s, %s, %s, &alpha, %s, %s, %s, %s, %s, %s, %s, %s,\n", opb,
                     opa, z->N, z->M, z->K, B, ct, z->ldb, z->sb, A, ct, z->lda, z->sa);
            w_printf(b, "                                       &beta, %s, %s, %s, %s, %s, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) != CUBLAS_STATUS_SUCCESS)\n",
                     Y, ct, z->ldy, z->sy, z->batch);
        }
    }
    w_puts(b, "            return -1;\n");
    w_puts(b, "    }\n");
}

/* The same with every size a number. */
static void emit_gemm_call(Cu *c, DType t, int ta, int tb, int64_t M, int64_t N, int64_t K, double alpha,
                           const char *A, int64_t sa, const char *B, int64_t sb, double beta, const char *Y, int64_t sy,
                           int64_t batch)
{
    GemmSizes z;
    lit(z.M, M), lit(z.N, N), lit(z.K, K), lit(z.ldb, ld1(tb ? K : N)), lit(z.lda, ld1(ta ? M : K)), lit(z.ldy, ld1(N));
    lit(z.sa, sa), lit(z.sb, sb), lit(z.sy, sy), lit(z.batch, batch);
    emit_gemm_call_s(c, t, ta, tb, &z, alpha, A, B, beta, Y);
}

/* Y = beta * C broadcast to Y's shape (before a Gemm that adds into it). */
static void emit_fill_c(Cu *c, const Node *n, double beta)
{
    const Value *Y = n->out[0], *C = n->in[2];
    CgenProd st[IR_MAX_RANK];
    cu_bstrides_p(&C->shape, &Y->shape, st);
    const CgenProd N = cgen_dims_prod(&Y->shape, 1, 2);
    char be[48], ec[400], val[480];
    cfam_lit(be, sizeof be, DT_F32, beta);
    const char *T = cfam_ctype(Y->dtype);
    Writer *k = &c->kern;
    const int kn = c->nk++;
    w_printf(k, "/* Gemm C (%s): y = %s * c broadcast */\n", ir_op(n->op)->name, be);
    w_printf(k, "GC_KERNEL k%d(%s *y, const %s *c%s)\n{\n", kn, T, T, cu_kparam(c, n));
    cu_kuse(c, n, k);
    w_printf(k, "    GC_FOR_EACH(i, %s) {\n        ", cu_dims_sz(c, &Y->shape, 0, 2));
    snprintf(ec, sizeof ec, "c[(i / %s) * %s + (i %% %s) * %s]", cu_sz(c, N), cu_sz(c, st[0]), cu_sz(c, N), cu_sz(c, st[1]));
    Writer lw;
    w_init(&lw);
    cu_load(&lw, C->dtype, ec);
    snprintf(val, sizeof val, "%s * %s", be, cu_wtext(&lw));
    w_free(&lw);
    cu_store(k, Y->dtype, "y[i]", val);
    w_puts(k, "    }\n}\n\n");
    w_printf(&c->body, "    GC_LAUNCH(k%d, %s, stream, (%s, %s%s));\n", kn, cu_dims_sz(c, &Y->shape, 0, 2), cu_ptr(c, Y), cu_ptr(c, C),
             cu_karg(c, n));
}

static int emit_gemm(Cu *c, const Node *n, Diag *d)
{
    if (!cu_gemm_on_cublas(n)) return emit_gemm_kernel(c, n) || cu_emit_epilogue(c, n, d) ? -1 : 0;
    const Value *A = n->in[0], *B = n->in[1], *C = n->n_in > 2 ? n->in[2] : NULL, *Y = n->out[0];
    const int ta = n->attrs[GEMM_TRANS_A].i != 0, tb = n->attrs[GEMM_TRANS_B].i != 0;
    const double alpha = n->attrs[GEMM_ALPHA].f, beta = C ? n->attrs[GEMM_BETA].f : 0.0;
    const int64_t M = Y->shape.dims[0], N = Y->shape.dims[1], K = A->shape.dims[ta ? 0 : 1];
    const int addc = C && beta != 0.0;
    if (addc) emit_fill_c(c, n, beta);
    const char *pa = cu_ptr(c, A), *pb = cu_ptr(c, B), *py = cu_ptr(c, Y);
    if (cu_dyn(c, n)) { /* runtime shapes: sizes from the shape table */
        GemmSizes z;
        const CgenProd pm = cgen_dims_prod(&Y->shape, 0, 1), pn = cgen_dims_prod(&Y->shape, 1, 2),
                       pk = cgen_dims_prod(&A->shape, ta ? 0 : 1, ta ? 1 : 2);
        snprintf(z.M, 160, "%s", cu_sz(c, pm));
        snprintf(z.N, 160, "%s", cu_sz(c, pn));
        snprintf(z.K, 160, "%s", cu_sz(c, pk));
        ld_text(c, z.ldb, tb ? pk : pn);
        ld_text(c, z.lda, ta ? pm : pk);
        ld_text(c, z.ldy, pn);
        lit(z.sa, 0), lit(z.sb, 0), lit(z.sy, 0), lit(z.batch, 1);
        emit_gemm_call_s(c, Y->dtype, ta, tb, &z, alpha, pa, pb, addc ? 1.0 : 0.0, py);
    } else {
        emit_gemm_call(c, Y->dtype, ta, tb, M, N, K, alpha, pa, 0, pb, 0, addc ? 1.0 : 0.0, py, 0, 1);
    }
    return cu_emit_epilogue(c, n, d);
}

/* MatMul n reading folded chains (cuda_fold.c, fold f): one strided-batched
 * call when each operand's batch is one stride, else one batched call over
 * the pointer arrays m->gemm_ptrs[P..P + 3 nb) (B's, A's, Y's) that
 * NAME_init fills; then the epilogue over the dense Y as usual. */
static int emit_matmul_folded(Cu *c, const Node *n, const CuFold *f, Diag *d)
{
    const Value *Y = n->out[0];
    const DType t = Y->dtype;
    const CuOperand *A = &f->op[0], *B = &f->op[1];
    const long long M = f->M, N = f->N, K = f->K, nb = f->nb, es = (long long)ir_dtype_size(t);
    const char *opa = A->trans ? "CUBLAS_OP_T" : "CUBLAS_OP_N", *opb = B->trans ? "CUBLAS_OP_T" : "CUBLAS_OP_N";
    const char *ct = t == DT_F16 ? "CUDA_R_16F" : "CUDA_R_16BF", *T = cfam_ctype(t);
    char al[48];
    cfam_lit(al, sizeof al, DT_F32, f->alpha);
    Writer *b = &c->body;
    w_printf(b, "    { /* A read from '");
    cu_comment_text(b, A->root->name ? A->root->name : "");
    w_printf(b, "'%s, B from '", A->len ? " through its chain" : "");
    cu_comment_text(b, B->root->name ? B->root->name : "");
    w_printf(b, "'%s */\n", B->len ? " through its chain" : "");
    w_printf(b, "        const float alpha = %s, beta = 0.0f;\n", al);
    if (!f->ptrs) {
        char pa[160], pb[160];
        snprintf(pa, sizeof pa, "%s + %lld", cu_ptr(c, A->root), (long long)A->off);
        snprintf(pb, sizeof pb, "%s + %lld", cu_ptr(c, B->root), (long long)B->off);
        const long long sa = A->nsub ? (long long)A->bstride[0] : 0, sb = B->nsub ? (long long)B->bstride[0] : 0;
        if (t == DT_F32)
            w_printf(b, "        if (cublasSgemmStridedBatched(blas, %s, %s, %lld, %lld, %lld, &alpha, %s, %lld, %lld, %s, %lld, %lld,\n"
                        "                                      &beta, %s, %lld, %lld, %lld) != CUBLAS_STATUS_SUCCESS)\n",
                     opb, opa, N, M, K, pb, (long long)B->ld, sb, pa, (long long)A->ld, sa, cu_ptr(c, Y), N, M * N, nb);
        else
            w_printf(b, "        if (cublasGemmStridedBatchedEx(blas, %s, %s, %lld, %lld, %lld, &alpha, %s, %s, %lld, %lld, %s, %s, %lld, %lld,\n"
                        "                                       &beta, %s, %s, %lld, %lld, %lld, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) != CUBLAS_STATUS_SUCCESS)\n",
                     opb, opa, N, M, K, pb, ct, (long long)B->ld, sb, pa, ct, (long long)A->ld, sa, cu_ptr(c, Y), ct, N, M * N, nb);
    } else {
        const long long P = (long long)c->nptrs;
        c->nptrs += 3 * nb;
        Writer *in = &c->ptrs;
        w_puts(in, "        /* MatMul '");
        cu_comment_text(in, n->name ? n->name : "");
        w_printf(in, "': B's, A's and Y's pointers per batch index (%s) */\n", T);
        w_printf(in, "        for (int64_t b = 0; b < %lld; b++) {\n            int64_t r, o;\n", nb);
        for (int w = 1; w >= 0; w--) {
            const CuOperand *o = &f->op[w];
            w_printf(in, "            r = b, o = %lld;\n", (long long)o->off);
            for (int q = o->nsub - 1; q >= 0; q--) {
                if (q) w_printf(in, "            o += r %% %lld * %lld, r /= %lld;\n", (long long)o->bsize[q], (long long)o->bstride[q], (long long)o->bsize[q]);
                else w_printf(in, "            o += r * %lld;\n", (long long)o->bstride[q]);
            }
            if (!o->nsub) w_puts(in, "            (void)r;\n");
            GC_ASSERT(o->root->kind == VK_TEMP && o->root->offset >= 0);
            w_printf(in, "            hp[%lld + b] = (void *)(m->arena + %lld + o * %lld);\n", P + (w ? 0 : nb), (long long)o->root->offset, es);
        }
        GC_ASSERT(Y->kind == VK_TEMP && Y->offset >= 0);
        w_printf(in, "            hp[%lld + b] = (void *)(m->arena + %lld + b * %lld);\n        }\n", P + 2 * nb, (long long)Y->offset, M * N * es);
        if (t == DT_F32)
            w_printf(b, "        if (cublasSgemmBatched(blas, %s, %s, %lld, %lld, %lld, &alpha, (const float *const *)(m->gemm_ptrs + %lld), %lld,\n"
                        "                               (const float *const *)(m->gemm_ptrs + %lld), %lld, &beta, (float *const *)(m->gemm_ptrs + %lld), %lld,\n"
                        "                               %lld) != CUBLAS_STATUS_SUCCESS)\n",
                     opb, opa, N, M, K, P, (long long)B->ld, P + nb, (long long)A->ld, P + 2 * nb, N, nb);
        else
            w_printf(b, "        if (cublasGemmBatchedEx(blas, %s, %s, %lld, %lld, %lld, &alpha, (const void *const *)(m->gemm_ptrs + %lld), %s, %lld,\n"
                        "                                (const void *const *)(m->gemm_ptrs + %lld), %s, %lld, &beta, (void *const *)(m->gemm_ptrs + %lld), %s, %lld,\n"
                        "                                %lld, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) != CUBLAS_STATUS_SUCCESS)\n",
                     opb, opa, N, M, K, P, ct, (long long)B->ld, P + nb, ct, (long long)A->ld, P + 2 * nb, ct, N, nb);
    }
    w_puts(b, "            return -1;\n    }\n");
    return cu_emit_epilogue(c, n, d);
}

/* Runtime shapes (gemm_check: operands of rank >= 2, each shared or batched
 * like Y): one GEMM over every row of A when B is shared and A batched,
 * else one strided-batched call over Y's batch (a shared operand's
 * stride 0), every size from the shape table. */
static int emit_matmul_dyn(Cu *c, const Node *n, Diag *d)
{
    const Shape *as = &n->in[0]->shape, *bs = &n->in[1]->shape, *ys = &n->out[0]->shape;
    const int ra = as->rank, rb = bs->rank, ry = ys->rank, a_full = matmul_side(as, ys) == 1, b_full = matmul_side(bs, ys) == 1;
    CgenProd M = cgen_dims_prod(as, ra - 2, ra - 1), K = cgen_dims_prod(as, ra - 1, ra), N = cgen_dims_prod(bs, rb - 1, rb),
             nb = cgen_dims_prod(ys, 0, ry - 2);
    if (!b_full && a_full) M = cgen_dims_prod(as, 0, ra - 1), nb = cgen_prod(1);
    const CgenProd MK = cgen_prod_mul(&M, &K), KN = cgen_prod_mul(&K, &N), MN = cgen_prod_mul(&M, &N);
    const int batched = !cgen_prod_is(&nb, 1);
    GemmSizes z;
    snprintf(z.M, 160, "%s", cu_sz(c, M));
    snprintf(z.N, 160, "%s", cu_sz(c, N));
    snprintf(z.K, 160, "%s", cu_sz(c, K));
    ld_text(c, z.lda, K);
    ld_text(c, z.ldb, N);
    ld_text(c, z.ldy, N);
    snprintf(z.sa, 160, "%s", batched && a_full ? cu_sz(c, MK) : "0");
    snprintf(z.sb, 160, "%s", batched && b_full ? cu_sz(c, KN) : "0");
    snprintf(z.sy, 160, "%s", batched ? cu_sz(c, MN) : "0");
    snprintf(z.batch, 160, "%s", cu_sz(c, nb));
    emit_gemm_call_s(c, n->out[0]->dtype, 0, 0, &z, 1.0, cu_ptr(c, n->in[0]), cu_ptr(c, n->in[1]), 0.0, cu_ptr(c, n->out[0]));
    return cu_emit_epilogue(c, n, d);
}

static int emit_matmul(Cu *c, const Node *n, Diag *d)
{
    if (!cu_gemm_on_cublas(n)) return emit_gemm_kernel(c, n) || cu_emit_epilogue(c, n, d) ? -1 : 0;
    const CuFold *f = c->folds->n_ids ? c->folds->at[n->id] : NULL;
    if (f) return emit_matmul_folded(c, n, f, d);
    if (cu_dyn(c, n)) return emit_matmul_dyn(c, n, d);
    IrMatMulGeom g;
    GC_ASSERT(matmul_plan(n, &g) == 0);
    int64_t nb = ir_numel(&g.batch), M = g.M;
    /* one B for a dense batch of A ([b..., M, K] x [K, N], a Linear's weight):
     * one GEMM of b * M rows rather than b small ones */
    if (nb > 1 && g.nb == 1 && g.na == nb && nb * g.M <= INT32_MAX) M = nb * g.M, nb = 1;
    const char *pa = cu_ptr(c, n->in[0]), *pb = cu_ptr(c, n->in[1]), *py = cu_ptr(c, n->out[0]);
    emit_gemm_call(c, n->out[0]->dtype, 0, 0, M, g.N, g.K, 1.0, pa, nb > 1 && g.na > 1 ? M * g.K : 0, pb,
                   nb > 1 && g.nb > 1 ? g.K * g.N : 0, 0.0, py, nb > 1 ? M * g.N : 0, nb);
    return cu_emit_epilogue(c, n, d);
}

/* ---- Conv (cuDNN) ------------------------------------------------------------------ */

/* Whether cuDNN's legacy descriptors say Conv n: f32 (X's dtype), or f16
 * or bf16 with every tensor of that dtype, 1 or 2 spatial dims, the same
 * pad at both ends (one per dim), dims below 2^31. Other Convs run as a
 * generated kernel (cu_emit_conv_direct; f32 and f64 only). */
int cu_conv_on_cudnn(const Node *n)
{
    const Value *X = n->in[0];
    int64_t k[IR_MAX_RANK], st[IR_MAX_RANK], dl[IR_MAX_RANK], pb[IR_MAX_RANK], pe[IR_MAX_RANK];
    int sr = ir_nn_window_geometry(n, k, st, dl, pb, pe);
    if (!(X->dtype == DT_F32 || (is_half(X->dtype) && one_dtype(n))) || sr < 1 || sr > 2) return 0;
    for (int i = 0; i < sr; i++)
        if (pb[i] != pe[i]) return 0;
    for (int i = 0; i < X->shape.rank; i++)
        if (X->shape.dims[i] > INT32_MAX || n->out[0]->shape.dims[i] > INT32_MAX) return 0;
    return 1;
}

/* The workspace a Conv may use for its cuDNN algorithm: what an im2col
 * GEMM needs, or (the larger) twice X, W and Y together, at most 64 MiB
 * (implicit GEMM needs none); none for a generated kernel. The second
 * figure is for the half-precision tensor-core algorithms, which copy NCHW
 * data and the filter into their own layout first: held to the im2col
 * figure alone (small for ResNet-18's 7x7 layers, whose filters are
 * larger than their im2col matrix), ResNet-18 at fp16 took 3.29 ms a run
 * on an H100 at batch 1, 2.9x its fp32 time; with this budget 0.36 ms. */
size_t cu_conv_algo_ws_bytes(const Node *n)
{
    if (!cu_conv_on_cudnn(n)) return 0;
    const Value *X = n->in[0], *W = n->in[1], *Y = n->out[0];
    int64_t per_out = 1;
    for (int i = 1; i < W->shape.rank; i++) per_out *= W->shape.dims[i];
    int64_t positions = ir_numel(&Y->shape) / (Y->shape.dims[1] ? Y->shape.dims[1] : 1);
    const int64_t es = (int64_t)ir_dtype_size(Y->dtype), im2col = per_out * positions * es,
                  copies = 2 * (ir_numel(&X->shape) + ir_numel(&W->shape) + ir_numel(&Y->shape)) * es,
                  b = im2col > copies ? im2col : copies;
    return (size_t)(b < ((int64_t)64 << 20) ? b : ((int64_t)64 << 20));
}

static int64_t align256(int64_t b) { return (b + 255) / 256 * 256; }

/* An NHWC Conv's workspace: its algorithm's, then the NHWC copy of an
 * input X stored NCHW, then the NHWC output of a Y stored NCHW (each at a
 * 256-byte aligned offset); cu_conv_algo_ws_bytes for every other Conv. */
static size_t conv_nhwc_ws(const Node *n, int x_nchw, int y_nchw, int64_t *xoff, int64_t *yoff)
{
    const int64_t es = (int64_t)ir_dtype_size(n->in[0]->dtype), a = (int64_t)cu_conv_algo_ws_bytes(n);
    int64_t t = align256(a);
    *xoff = t;
    if (x_nchw) t += align256(ir_numel(&n->in[0]->shape) * es);
    *yoff = t;
    if (y_nchw) t += align256(ir_numel(&n->out[0]->shape) * es);
    return !x_nchw && !y_nchw ? (size_t)a : (size_t)t;
}

/* Whether 4-d V's bytes differ between NCHW and NHWC (not with one
 * channel or one position), so that an NHWC Conv copies it when stored NCHW. */
int cu_layouts_differ(const Value *V) { return V->shape.dims[1] > 1 && V->shape.dims[2] * V->shape.dims[3] > 1; }

/* Whether value V is stored in the layout a Conv on nhwc descriptors (or
 * NCHW ones) reads and writes it in, with no copy: stored so, or the same
 * bytes either way. */
static int stored_as(const CuLayout *L, const Value *V, int nhwc)
{
    const int cl = L && L->cl && V->id < L->n_values && L->cl[V->id];
    return cl == nhwc || (V->shape.rank == 4 && !cu_layouts_differ(V));
}

int cu_conv_fused(const CuLayout *L, const Node *n, int *z_in)
{
    *z_in = -1;
    const Value *X = n->in[0], *B = n->n_in > 2 ? n->in[2] : NULL, *Y = n->out[0];
    const char *epi = n->op == OP_Conv ? ir_epilogue(n) : NULL;
    if (!epi || !B || B->dtype != X->dtype || Y->dtype != X->dtype || !cu_conv_on_cudnn(n) ||
        ir_numel(&Y->shape) == 0)
        return 0;
    const int nhwc = L && L->nhwc && n->id < L->n_ids && L->nhwc[n->id];
    if (!stored_as(L, Y, nhwc)) return 0; /* an NHWC Conv's Y copied back: the kernel path */
    FusedExpr fx;
    Diag d = {0};
    if (ir_fused_parse_node(n, &fx, &d)) return 0;
    const int ys = n->n_in; /* the slot 'y' names */
    int ok = 0;
    const Node *root = fx.members[fx.n_members - 1];
    if (root->op == OP_Relu && root->out[0]->dtype == Y->dtype) {
        const FxSrc *r = &fx.src[fx.n_members - 1][0];
        if (fx.n_members == 1 && r->kind == FX_SLOT && r->idx == ys) {
            ok = 1;
        } else if (fx.n_members == 2 && r->kind == FX_MEMBER && r->idx == 0 && fx.members[0]->op == OP_Add &&
                   fx.members[0]->out[0]->dtype == Y->dtype) {
            const FxSrc *a = fx.src[0];
            const int k = a[0].kind == FX_SLOT && a[0].idx == ys ? 1 : a[1].kind == FX_SLOT && a[1].idx == ys ? 0 : -1;
            if (k >= 0 && a[k].kind == FX_SLOT && a[k].idx != ys) {
                const Value *Z = n->in[a[k].idx];
                if (Z && Z->dtype == Y->dtype && ir_shape_eq(&Z->shape, &Y->shape) && stored_as(L, Z, nhwc))
                    ok = 1, *z_in = a[k].idx;
            }
        }
    }
    ir_fused_free(&fx);
    return ok;
}

size_t cu_conv_ws_bytes(const Graph *g, const Node *n)
{
    if (!cu_conv_nhwc_capable(g, n)) return cu_conv_algo_ws_bytes(n);
    CuLayout L;
    GC_ASSERT(cu_layout_build(g, &L) == 0);
    int64_t xoff, yoff;
    const Value *X = n->in[0], *Y = n->out[0];
    const int x_copy = !L.cl[X->id] && cu_layouts_differ(X), y_copy = !L.cl[Y->id] && cu_layouts_differ(Y);
    size_t b = L.nhwc[n->id] ? conv_nhwc_ws(n, x_copy, y_copy, &xoff, &yoff) : cu_conv_algo_ws_bytes(n);
    cu_layout_free(&L);
    return b;
}

/* Conv: on cuDNN where its descriptors say it, else a generated kernel for
 * f32/f64 and 1 to 3 spatial dims. */
static int conv_check(const Node *n, Diag *d)
{
    if (cgen_node_has_sym(n) && (!cu_conv_on_cudnn(n) || !cu_static_dims(&n->in[0]->shape, 1, n->in[0]->shape.rank)))
        return diag_node_error(d, n, "the CUDA backend takes runtime shapes through Conv on cuDNN only (f32, f16 or bf16, "
                                     "1 or 2 spatial dims, equal pads), in the batch dim");
    if (cu_conv_on_cudnn(n)) return 0;
    int64_t k[IR_MAX_RANK], st[IR_MAX_RANK], dl[IR_MAX_RANK], pb[IR_MAX_RANK], pe[IR_MAX_RANK];
    int sr = ir_nn_window_geometry(n, k, st, dl, pb, pe);
    for (int i = 0; i < n->n_in + 1; i++) {
        const Value *v = i < n->n_in ? n->in[i] : n->out[0];
        if (v && is_half(v->dtype))
            return diag_node_error(d, n, "the CUDA backend computes f16/bf16 Conv on cuDNN only: every tensor one dtype, "
                                         "1 or 2 spatial dims, equal pads at both ends");
    }
    if (!cu_is_float(n->in[0]->dtype)) return diag_node_error(d, n, "the CUDA backend computes Conv in f32 and f64 only");
    if (sr < 1 || sr > 3) return diag_node_error(d, n, "the CUDA backend has Conv with 1 to 3 spatial dims only");
    return 0;
}

/* y[n, c, ...] += b[c] (a per-channel bias after cuDNN; f16/bf16 added
 * in float and rounded once). */
void cu_emit_channel_bias(Cu *c, const Node *n, const Value *Y, const Value *B)
{
    const int64_t total = ir_numel(&Y->shape), M = Y->shape.dims[1],
                  npos = cu_value_nhwc(c, Y) ? 1 : total / (Y->shape.dims[0] * M); /* NHWC: the channel is i % M */
    const char *T = cfam_ctype(Y->dtype);
    Writer *k = &c->kern;
    const int kn = c->nk++;
    cu_node_comment(c->g, k, n);
    w_puts(k, "/* its bias, one value per channel */\n");
    w_printf(k, "GC_KERNEL k%d(%s *y, const %s *b%s)\n{\n", kn, T, T, cu_kparam(c, n));
    cu_kuse(c, n, k);
    char eb[64];
    if (npos == 1) snprintf(eb, sizeof eb, "b[i %% %lld]", (long long)M);
    else snprintf(eb, sizeof eb, "b[i / %lld %% %lld]", (long long)npos, (long long)M);
    Writer v;
    w_init(&v);
    cu_load(&v, Y->dtype, "y[i]");
    w_puts(&v, " + ");
    cu_load(&v, B->dtype, eb);
    w_printf(k, "    GC_FOR_EACH(i, %s) {\n        ", cu_dims_sz(c, &Y->shape, 0, Y->shape.rank));
    cu_store(k, Y->dtype, "y[i]", cu_wtext(&v));
    w_puts(k, "    }\n}\n\n");
    w_free(&v);
    w_printf(&c->body, "    GC_LAUNCH(k%d, %s, stream, (%s, %s%s));\n", kn, cu_dims_sz(c, &Y->shape, 0, Y->shape.rank), cu_ptr(c, Y),
             cu_ptr(c, B), cu_karg(c, n));
}

/* A copy of 4-d tensor V between NCHW and NHWC for an NHWC Conv (to_nhwc:
 * src NCHW into dst NHWC; else src NHWC into dst NCHW): one thread per
 * element of dst; src and dst are pointer expressions of the schedule. */
static void emit_nhwc_copy(Cu *c, const Node *n, const Value *V, const char *dst, const char *src, int to_nhwc)
{
    const long long C = V->shape.dims[1], HW = V->shape.dims[2] * V->shape.dims[3], total = ir_numel(&V->shape);
    const char *T = cfam_ctype(V->dtype);
    Writer *k = &c->kern;
    const int kn = c->nk++;
    cu_node_comment(c->g, k, n);
    w_printf(k, "/* its %s, %s */\n", to_nhwc ? "input X" : "output Y", to_nhwc ? "NCHW into NHWC" : "NHWC into NCHW");
    w_printf(k, "GC_KERNEL k%d(%s *y, const %s *x)\n{\n    GC_FOR_EACH(i, %lld) {\n", kn, T, T, total);
    if (to_nhwc)
        w_printf(k, "        const int64_t ch = i %% %lld, p = i / %lld %% %lld, b = i / %lld;\n        y[i] = x[(b * %lld + ch) * %lld + p];\n",
                 C, C, HW, C * HW, C, HW);
    else
        w_printf(k, "        const int64_t p = i %% %lld, ch = i / %lld %% %lld, b = i / %lld;\n        y[i] = x[(b * %lld + p) * %lld + ch];\n",
                 HW, HW, C, C * HW, HW, C);
    w_puts(k, "    }\n}\n\n");
    w_printf(&c->body, "    GC_LAUNCH(k%d, %lld, stream, ((%s *)(void *)(%s), (const %s *)(const void *)(%s)));\n", kn, total, T,
             dst, T, src);
}

static int emit_conv(Cu *c, const Node *n, Diag *d)
{
    const Value *X = n->in[0], *W = n->in[1], *B = n->n_in > 2 ? n->in[2] : NULL, *Y = n->out[0];
    int64_t k[IR_MAX_RANK], st[IR_MAX_RANK], dl[IR_MAX_RANK], pb[IR_MAX_RANK], pe[IR_MAX_RANK];
    int sr = ir_nn_window_geometry(n, k, st, dl, pb, pe);
    if (ir_numel(&Y->shape) == 0) return 0;
    if (!cu_conv_on_cudnn(n)) return cu_emit_conv_direct(c, n, NULL) || cu_emit_epilogue(c, n, d) ? -1 : 0;
    const int two = sr == 2, i = c->nconv++;
    const int64_t G = n->attrs[CONV_GROUP].i;
    const long long xn = X->shape.dims[0], xc = X->shape.dims[1], xh = two ? X->shape.dims[2] : 1,
                    xw = X->shape.dims[1 + sr], ym = Y->shape.dims[1], yh = two ? Y->shape.dims[2] : 1,
                    yw = Y->shape.dims[1 + sr];
    /* f16/bf16: half or bfloat16 descriptors computing in fp32 (cuDNN's
     * PSEUDO_HALF / PSEUDO_BFLOAT16 configurations); f32: FMA math, no TF32 */
    const char *dt = X->dtype == DT_F16 ? "CUDNN_DATA_HALF" : X->dtype == DT_BF16 ? "CUDNN_DATA_BFLOAT16" : "CUDNN_DATA_FLOAT";
    /* NHWC (cuda_layout.c): x and y NHWC, the filter KRSC in the weights;
     * an input or output stored NCHW goes through the workspace, after the
     * algorithm's part */
    const int nhwc = cu_conv_nhwc(c, n), x_nchw = nhwc && !cu_value_nhwc(c, X) && cu_layouts_differ(X),
              y_nchw = nhwc && !cu_value_nhwc(c, Y) && cu_layouts_differ(Y);
    const char *fmt = nhwc ? "CUDNN_TENSOR_NHWC" : "CUDNN_TENSOR_NCHW";
    int64_t xoff = 0, yoff = 0;
    const long long algo_ws = nhwc ? (long long)cu_conv_algo_ws_bytes(n) : (long long)n->ws_bytes;
    if (nhwc) {
        const size_t planned = conv_nhwc_ws(n, x_nchw, y_nchw, &xoff, &yoff);
        GC_ASSERT(planned == n->ws_bytes); /* the layout the workspace policy saw */
    }
    Writer *in = &c->init;
    w_printf(in, "    /* Conv %d: ", i);
    cu_comment_text(in, n->name ? n->name : "");
    w_puts(in, nhwc ? " (NHWC, filter KRSC) */\n" : " */\n");
    w_printf(in, "    ok = ok && cudnnCreateTensorDescriptor(&m->cx[%d]) == CUDNN_STATUS_SUCCESS &&\n", i);
    w_printf(in, "         cudnnSetTensor4dDescriptor(m->cx[%d], %s, %s, %lld, %lld, %lld, %lld) == CUDNN_STATUS_SUCCESS;\n",
             i, fmt, dt, xn, xc, xh, xw);
    w_printf(in, "    ok = ok && cudnnCreateTensorDescriptor(&m->cy[%d]) == CUDNN_STATUS_SUCCESS &&\n", i);
    w_printf(in, "         cudnnSetTensor4dDescriptor(m->cy[%d], %s, %s, %lld, %lld, %lld, %lld) == CUDNN_STATUS_SUCCESS;\n",
             i, fmt, dt, xn, ym, yh, yw);
    w_printf(in, "    ok = ok && cudnnCreateFilterDescriptor(&m->cw[%d]) == CUDNN_STATUS_SUCCESS &&\n", i);
    w_printf(in, "         cudnnSetFilter4dDescriptor(m->cw[%d], %s, %s, %lld, %lld, %lld, %lld) == CUDNN_STATUS_SUCCESS;\n",
             i, dt, fmt, (long long)W->shape.dims[0], (long long)W->shape.dims[1], (long long)(two ? k[0] : 1),
             (long long)k[sr - 1]);
    w_printf(in, "    ok = ok && cudnnCreateConvolutionDescriptor(&m->cc[%d]) == CUDNN_STATUS_SUCCESS &&\n", i);
    w_printf(in, "         cudnnSetConvolution2dDescriptor(m->cc[%d], %lld, %lld, %lld, %lld, %lld, %lld, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT) == CUDNN_STATUS_SUCCESS &&\n",
             i, (long long)(two ? pb[0] : 0), (long long)pb[sr - 1], (long long)(two ? st[0] : 1), (long long)st[sr - 1],
             (long long)(two ? dl[0] : 1), (long long)dl[sr - 1]);
    w_printf(in, "         cudnnSetConvolutionGroupCount(m->cc[%d], %lld) == CUDNN_STATUS_SUCCESS &&\n", i, (long long)G);
    /* half tensors: tensor-core math, whose products of half (or bfloat16)
     * operands are exact and whose sums are fp32 as the compute type says,
     * so it costs no accuracy; it is what the mixed-precision mode is for
     * (CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION, which would round f32 data, is
     * not needed). f32: FMA math, no TF32, which would round the operands. */
    if (is_half(X->dtype))
        w_printf(in, "         cudnnSetConvolutionMathType(m->cc[%d], CUDNN_TENSOR_OP_MATH) == CUDNN_STATUS_SUCCESS; /* fp32 sums */\n", i);
    else
        w_printf(in, "         cudnnSetConvolutionMathType(m->cc[%d], CUDNN_FMA_MATH) == CUDNN_STATUS_SUCCESS; /* fp32, no TF32 */\n", i);
    /* -DGC_CUDNN_FIND's scratch tensors: x, then w and y at 256-byte aligned
     * offsets (the init allocates the largest Conv's c->find_bytes) */
    const int64_t es = (int64_t)ir_dtype_size(X->dtype), woff = (ir_numel(&X->shape) * es + 255) / 256 * 256,
                  fyoff = woff + (ir_numel(&W->shape) * es + 255) / 256 * 256, fb = fyoff + ir_numel(&Y->shape) * es;
    if (fb > c->find_bytes) c->find_bytes = fb;
    char wsp[64];
    if (algo_ws) snprintf(wsp, sizeof wsp, "m->arena + %lld", (long long)n->ws_offset);
    else snprintf(wsp, sizeof wsp, "NULL");
    w_printf(in, "    ok = ok && gc_cudnn_pick(m->dnn, m->cx[%d], m->cw[%d], m->cc[%d], m->cy[%d], %lld, %s, find, %lld, %lld, &m->algo[%d],\n"
                 "                             m->cand[%d], &m->ncand[%d]) == 0;\n",
             i, i, i, i, algo_ws, wsp, (long long)woff, (long long)fyoff, i, i, i);
    /* -DGC_CUDNN_FUSED: bias, residual and ReLU in cuDNN's fused call; the
     * bias's descriptor, and the one ReLU descriptor (m->relu) */
    int z_in = -1;
    const int fused = cu_conv_fused(&c->lay, n, &z_in);
    if (fused) {
        w_puts(in, "#ifdef GC_CUDNN_FUSED\n");
        if (!c->nfused)
            w_puts(in, "    ok = ok && cudnnCreateActivationDescriptor(&m->relu) == CUDNN_STATUS_SUCCESS &&\n"
                       "         cudnnSetActivationDescriptor(m->relu, CUDNN_ACTIVATION_RELU, CUDNN_PROPAGATE_NAN, 0.0) == CUDNN_STATUS_SUCCESS;\n");
        w_printf(in, "    ok = ok && cudnnCreateTensorDescriptor(&m->cb[%d]) == CUDNN_STATUS_SUCCESS &&\n", i);
        w_printf(in, "         cudnnSetTensor4dDescriptor(m->cb[%d], %s, %s, 1, %lld, 1, 1) == CUDNN_STATUS_SUCCESS;\n", i, fmt, dt,
                 ym);
        w_printf(in, "    m->fused[%d] = 1;\n#endif\n", i);
        c->nfused++;
    }
    Writer *f = &c->fini;
    if (fused) w_printf(f, "    if (m->cb[%d]) cudnnDestroyTensorDescriptor(m->cb[%d]);\n", i, i);
    w_printf(f, "    if (m->cx[%d]) cudnnDestroyTensorDescriptor(m->cx[%d]);\n", i, i);
    w_printf(f, "    if (m->cy[%d]) cudnnDestroyTensorDescriptor(m->cy[%d]);\n", i, i);
    w_printf(f, "    if (m->cw[%d]) cudnnDestroyFilterDescriptor(m->cw[%d]);\n", i, i);
    w_printf(f, "    if (m->cc[%d]) cudnnDestroyConvolutionDescriptor(m->cc[%d]);\n", i, i);

    char ws[64], xp[64], yp[64];
    if (n->ws_bytes) GC_ASSERT(n->ws_offset >= 0);
    if (algo_ws) snprintf(ws, sizeof ws, "arena + %lld", (long long)n->ws_offset);
    else snprintf(ws, sizeof ws, "NULL");
    snprintf(xp, sizeof xp, "%s", cu_ptr(c, X));
    snprintf(yp, sizeof yp, "%s", cu_ptr(c, Y));
    if (x_nchw) {
        snprintf(xp, sizeof xp, "arena + %lld", (long long)(n->ws_offset + xoff));
        emit_nhwc_copy(c, n, X, xp, cu_ptr(c, X), 1);
    }
    if (y_nchw) snprintf(yp, sizeof yp, "arena + %lld", (long long)(n->ws_offset + yoff));
    Writer *b = &c->body;
    /* -DGC_CUDNN_TIME: the warm-up run (m->probing) times the candidates here */
    w_puts(b, "#ifdef GC_CUDNN_TIME\n");
    w_printf(b, "    if (m->probing && gc_cudnn_time(m->dnn, m->cx[%d], %s, m->cw[%d], %s, m->cc[%d], m->cy[%d], %s, %s, %lld,\n", i, xp, i,
             cu_ptr(c, W), i, i, yp, ws, algo_ws);
    w_printf(b, "                                   m->cand[%d], m->ncand[%d], &m->algo[%d]))\n        return -1;\n#endif\n", i, i, i);
    char algo[48];
    snprintf(algo, sizeof algo, "m->algo[%d]", i);
    if (cu_dyn(c, n)) {
        /* runtime batch: x and y at the run's batch; the algorithm chosen at
         * the maximum unless its workspace now exceeds the planned one */
        snprintf(algo, sizeof algo, "algo%d", i);
        w_printf(b, "    cudnnConvolutionFwdAlgo_t algo%d = m->algo[%d];\n    {\n        size_t need = 0;\n", i, i);
        w_printf(b, "        if (cudnnSetTensor4dDescriptor(m->cx[%d], %s, %s, (int)%s, %lld, %lld, %lld) != CUDNN_STATUS_SUCCESS ||\n", i,
                 fmt, dt, cu_dims_sz(c, &X->shape, 0, 1), xc, xh, xw);
        w_printf(b, "            cudnnSetTensor4dDescriptor(m->cy[%d], %s, %s, (int)%s, %lld, %lld, %lld) != CUDNN_STATUS_SUCCESS)\n", i,
                 fmt, dt, cu_dims_sz(c, &X->shape, 0, 1), ym, yh, yw);
        w_puts(b, "            return -1;\n");
        w_printf(b, "        if (cudnnGetConvolutionForwardWorkspaceSize(m->dnn, m->cx[%d], m->cw[%d], m->cc[%d], m->cy[%d], algo%d, &need) !=\n"
                    "                CUDNN_STATUS_SUCCESS ||\n            need > %lld)\n", i, i, i, i, i, algo_ws);
        w_printf(b, "            algo%d = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;\n    }\n", i);
    }
    if (fused) {
        /* NAME_init's warm-up run (m->probing) turns the fused call off
         * where this cuDNN refuses it; the separate calls follow */
        w_printf(b, "    if (m->fused[%d]) { /* -DGC_CUDNN_FUSED: y = relu(conv(x) + %sb), one cuDNN call */\n", i,
                 z_in >= 0 ? "z + " : "");
        w_printf(b, "        const float one = 1.0f, a2 = %s;\n", z_in >= 0 ? "1.0f" : "0.0f");
        w_printf(b, "        if (cudnnConvolutionBiasActivationForward(m->dnn, &one, m->cx[%d], %s, m->cw[%d], %s, m->cc[%d],\n", i,
                 xp, i, cu_ptr(c, W), i);
        w_printf(b, "                %s, %s, %lld, &a2, m->cy[%d], %s, m->cb[%d], %s, m->relu, m->cy[%d], %s) !=\n", algo, ws,
                 algo_ws, i, z_in >= 0 ? cu_ptr(c, n->in[z_in]) : yp, i, cu_ptr(c, B), i, yp);
        w_puts(b, "            CUDNN_STATUS_SUCCESS) {\n");
        w_puts(b, "            if (!m->probing) return -1;\n");
        w_printf(b, "            m->fused[%d] = 0;\n        }\n    }\n", i);
        w_printf(b, "    if (!m->fused[%d]) {\n", i);
        b->indent++;
    }
    w_puts(b, "    {\n        const float one = 1.0f, zero = 0.0f;\n");
    w_printf(b, "        if (cudnnConvolutionForward(m->dnn, &one, m->cx[%d], %s, m->cw[%d], %s, m->cc[%d], %s,\n", i, xp, i,
             cu_ptr(c, W), i, algo);
    w_printf(b, "                                    %s, %lld, &zero, m->cy[%d], %s) != CUDNN_STATUS_SUCCESS)\n", ws,
             algo_ws, i, yp);
    w_puts(b, "            return -1;\n    }\n");
    if (y_nchw) emit_nhwc_copy(c, n, Y, cu_ptr(c, Y), yp, 0);
    const int rc = cu_emit_epilogue_bias(c, n, B, d);
    if (fused) {
        b->indent--;
        w_puts(b, "    }\n");
    }
    return rc;
}

const CudaEntry cuda_lib_entries[] = {
    {OP_Gemm, gemm_check, emit_gemm, NULL,
     "cuBLAS sgemm (f16/bf16: GemmEx, fp32 sums), then generated kernels for C and the epilogue (f64: a generated kernel)", 1, 1},
    {OP_MatMul, gemm_check, emit_matmul, NULL,
     "cuBLAS strided-batched sgemm (f16/bf16: GemmEx, fp32 sums), then a generated epilogue kernel (f64, batches broadcast on "
     "both sides: a generated kernel)", 1, 1},
    {OP_Conv, conv_check, emit_conv, cu_conv_algo_ws_bytes,
     "cuDNN convolution forward (f16/bf16: half descriptors, fp32 sums; algorithm chosen at init within the workspace), then "
     "generated bias and epilogue kernels; a generated kernel (f32/f64) where cuDNN's descriptors cannot say the Conv", 1, 1},
    {-1, NULL, NULL, NULL, NULL, 0, 0},
};
