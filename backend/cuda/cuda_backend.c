/* cuda_backend.c — the CUDA backend (--target=cuda), first stage.
 *
 * It writes a folder of CUDA C for a planned graph: NAME.h (the API),
 * NAME.cu (host code and kernels), NAME_weights.c (the weights blob as a C
 * array, copied to the device once by NAME_init), gc_cuda.h and
 * gc_cuda_emu.h (runtime/cuda/), a Makefile (nvcc, or `make emu`: the same
 * sources as C99 on the CPU emulation) and, with --emit-main, NAME_main.c.
 *
 * What this stage compiles, and how:
 *   - every op with a scalar expression, and Fused nodes: one generated
 *     kernel per node, one thread per output element, the expression
 *     printed by the C-family printer (backend/cfamily) in its CUDA dialect,
 *     operands read with numpy broadcasting (per-operand offsets built from
 *     the flat index over merged dims, as the C backend's loops merge them);
 *   - Gemm and MatMul (f32): cuBLAS (row-major as the transposed column-major
 *     product), Gemm's C and the node's fused epilogue as generated kernels;
 *   - views (Reshape, Flatten, Squeeze, Unsqueeze, Identity): no code when
 *     memory planning aliased them, else a device-to-device copy.
 * Any other op, f16/bf16 tensors and training graphs are refused at compile
 * time with one line naming the node, the op and the backend.
 *
 * Memory is what the planner decided: one device arena of
 * NAME_DEVICE_ARENA_BYTES (arena offsets as in the C backend), the weights
 * blob on the device, graph inputs and outputs in the caller's device
 * buffers; NAME_run allocates nothing.
 */
#include "../backend.h"
#include "../c/cgen_model.h"
#include "../cfamily/cfam_expr.h"
#include "../../ir/fused.h"
#include "../../ir/ops/geometry.h"
#include "../../ir/ops/linalg_attrs.h"
#include "../../ir/ops/nn_attrs.h"
#include "../../ir/ops/nn_common.h"
#include "../../ir/ops/reduce_attrs.h"
#include "../../ir/ops/shape_attrs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- what the backend compiles ------------------------------------------------ */

static int dtype_ok(DType t) { return t != DT_F16 && t != DT_BF16 && t != DT_UNDEF; }

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

/* Conv (cuDNN: f32, 1 or 2 spatial dims, the same pad at both ends),
 * MaxPool without Indices, AveragePool and GlobalAveragePool (generated
 * kernels, float types, 1 to 3 spatial dims). */
static int window_supported(const Node *n, Diag *d)
{
    const char *op = ir_op(n->op)->name;
    const Value *X = n->in[0];
    if (X->dtype != DT_F32 && X->dtype != DT_F64)
        return diag_node_error(d, n, "the CUDA backend computes op '%s' in f32 and f64 only, got %s", op,
                               ir_dtype_name(X->dtype));
    if (n->op == OP_GlobalAveragePool) return 0;
    if (n->op == OP_MaxPool && n->n_out > 1 && n->out[1])
        return diag_node_error(d, n, "the CUDA backend has no MaxPool with the Indices output yet");
    int64_t k[IR_MAX_RANK], st[IR_MAX_RANK], dl[IR_MAX_RANK], pb[IR_MAX_RANK], pe[IR_MAX_RANK];
    int sr = ir_nn_window_geometry(n, k, st, dl, pb, pe);
    if (sr < 1 || sr > 3) return diag_node_error(d, n, "the CUDA backend takes 1 to 3 spatial dims for op '%s'", op);
    if (n->op != OP_Conv) return 0;
    if (X->dtype != DT_F32) return diag_node_error(d, n, "the CUDA backend computes Conv in f32 only (cuDNN)");
    if (sr > 2) return diag_node_error(d, n, "the CUDA backend has no 3-D Conv yet");
    for (int i = 0; i < sr; i++)
        if (pb[i] != pe[i])
            return diag_node_error(d, n, "the CUDA backend's Conv (cuDNN) takes the same pad at both ends, got %lld and %lld",
                                   (long long)pb[i], (long long)pe[i]);
    for (int i = 0; i < X->shape.rank; i++)
        if (X->shape.dims[i] > INT32_MAX || n->out[0]->shape.dims[i] > INT32_MAX)
            return diag_node_error(d, n, "the CUDA backend's Conv takes dims below 2^31");
    return 0;
}


static int is_float(DType t) { return t == DT_F32 || t == DT_F64; }

/* The index and normalization ops of this stage: 0, or -1 naming why not. */
static int index_supported(const Node *n, Diag *d)
{
    const char *op = ir_op(n->op)->name;
    switch (n->op) {
    case OP_Transpose:
    case OP_Concat:
    case OP_Slice:
        return 0;
    case OP_Gather:
        return n->in[1]->dtype == DT_I32 || n->in[1]->dtype == DT_I64
                   ? 0
                   : diag_node_error(d, n, "the CUDA backend's Gather takes i32 or i64 indices");
    case OP_ReduceSum:
    case OP_ReduceMean:
    case OP_ReduceMax:
    case OP_ReduceMin: {
        int mask[IR_MAX_RANK];
        if (!is_float(n->in[0]->dtype))
            return diag_node_error(d, n, "the CUDA backend computes op '%s' in f32 and f64 only", op);
        if (ir_reduce_mask(n, mask, NULL) < 0)
            return diag_node_error(d, n, "the CUDA backend needs constant axes for op '%s'", op);
        return 0;
    }
    case OP_LayerNormalization:
        if (!is_float(n->in[0]->dtype) || n->in[1]->dtype != n->in[0]->dtype ||
            (n->n_in > 2 && n->in[2] && n->in[2]->dtype != n->in[0]->dtype))
            return diag_node_error(d, n, "the CUDA backend computes LayerNormalization in f32 and f64, one dtype");
        for (int j = 1; j < n->n_out; j++)
            if (n->out[j]) return diag_node_error(d, n, "the CUDA backend has no LayerNormalization Mean/InvStdDev outputs yet");
        return 0;
    case OP_BatchNormalization:
        if (!is_float(n->in[0]->dtype) || n->attrs[BN_TRAINING_MODE].i)
            return diag_node_error(d, n, "the CUDA backend has BatchNormalization in inference mode, f32/f64, only");
        for (int j = 1; j < 5; j++)
            if (n->in[j]->dtype != n->in[0]->dtype)
                return diag_node_error(d, n, "the CUDA backend's BatchNormalization takes one dtype for all inputs");
        return n->in[0]->shape.rank >= 2 ? 0 : diag_node_error(d, n, "BatchNormalization needs a channel dim");
    default:
        return 1; /* not one of these */
    }
}

static int cuda_supports(const Node *n, Diag *d)
{
    const OpDesc *od = ir_op(n->op);
    for (int i = 0; i < n->n_in + n->n_out; i++) {
        const Value *v = i < n->n_in ? n->in[i] : n->out[i - n->n_in];
        if (v && !dtype_ok(v->dtype))
            return diag_node_error(d, n, "the CUDA backend has no %s kernels yet (op '%s')", ir_dtype_name(v->dtype),
                                   od->name);
    }
    if (od->view || od->scalar_expr || n->op == OP_Fused || n->op == OP_Softmax || n->op == OP_LogSoftmax) return 0;
    if (n->op == OP_Conv || n->op == OP_MaxPool || n->op == OP_AveragePool || n->op == OP_GlobalAveragePool)
        return window_supported(n, d);
    int ix = index_supported(n, d);
    if (ix <= 0) return ix;
    if (n->op == OP_Gemm || n->op == OP_MatMul) {
        for (int i = 0; i < n->n_in; i++)
            if (n->in[i] && n->in[i]->dtype != DT_F32)
                return diag_node_error(d, n, "the CUDA backend computes op '%s' in f32 only, got %s", od->name,
                                       ir_dtype_name(n->in[i]->dtype));
        IrMatMulGeom g;
        if (n->op == OP_MatMul && matmul_plan(n, &g))
            return diag_node_error(d, n, "the CUDA backend has no kernel for this MatMul's batch broadcast yet");
        if (n->op == OP_Gemm && (n->out[0]->shape.dims[0] > INT32_MAX || n->out[0]->shape.dims[1] > INT32_MAX))
            return diag_node_error(d, n, "the CUDA backend's Gemm takes at most 2^31-1 rows and columns");
        return 0;
    }
    return diag_node_error(d, n, "the CUDA backend has no kernel for op '%s' yet", od->name);
}

/* ---- the writer state ------------------------------------------------------------- */

typedef struct Cu {
    const Graph *g;
    const char *name;
    char **id;        /* C identifier of each value's pointer */
    int *out_slot;    /* output index a value is written to in place, or -1 */
    int64_t *woff;    /* weights-blob offset of each constant the code reads, or -1 */
    unsigned char *used;
    int64_t wbytes;
    Writer kern, body;
    int nk;           /* kernels written */
    int uses_blas;
    int nconv;        /* Conv nodes: cuDNN descriptors m->cx[i], cw, cc, cy, algo */
    Writer init, fini; /* their set-up in NAME_init and release in NAME_free */
} Cu;

static int64_t value_bytes(const Value *v) { return ir_numel(&v->shape) * (int64_t)ir_dtype_size(v->dtype); }

static const Value *root_of(const Value *v) { return v->alias ? v->alias : v; }

/* The pointer expression of v (marks it used: it gets a declaration, and
 * its storage's constant a place in the weights). */
static const char *P(Cu *c, const Value *v)
{
    c->used[v->id] = 1;
    return c->id[v->id];
}

/* Appends s to a C comment: printable ASCII, no comment terminator. */
static void comment_text(Writer *w, const char *s)
{
    char prev = 0;
    for (; *s; s++) {
        char ch = (*s >= 32 && *s < 127) ? *s : '?';
        if (prev == '*' && ch == '/') ch = '|';
        if (prev == '/' && ch == '*') ch = '|';
        w_printf(w, "%c", ch);
        prev = ch;
    }
}

static void node_comment(Writer *w, const Node *n)
{
    char sh[160];
    w_printf(w, "/* %s", ir_op(n->op)->name);
    if (n->name && *n->name) {
        w_puts(w, " '");
        comment_text(w, n->name);
        w_puts(w, "'");
    }
    w_puts(w, ":");
    for (int j = 0; j < n->n_out; j++) {
        w_printf(w, " %s%s", ir_dtype_name(n->out[j]->dtype), ir_shape_str(&n->out[j]->shape, sh, sizeof sh));
    }
    w_puts(w, " <-");
    for (int j = 0; j < n->n_in; j++) {
        if (!n->in[j]) w_puts(w, " -");
        else w_printf(w, " %s%s", ir_dtype_name(n->in[j]->dtype), ir_shape_str(&n->in[j]->shape, sh, sizeof sh));
    }
    w_puts(w, " */\n");
}

/* ---- elementwise kernels ------------------------------------------------------- */

#define CU_MAX_OPS 64

/* Strides of operand shape s read along output shape os (0 on broadcast dims). */
static void bstrides(const Shape *s, const Shape *os, int64_t *st)
{
    int64_t acc = 1;
    for (int k = os->rank - 1; k >= 0; k--) {
        int ks = s->rank - os->rank + k;
        if (ks < 0 || s->dims[ks] == 1) st[k] = 0;
        else {
            st[k] = acc;
            acc *= s->dims[ks];
        }
    }
}

/* The compute type of an elementwise node over in[0..n): the first non-bool
 * input's type, else bool (the C backend's rule). */
static DType compute_type(Value *const *in, int n)
{
    for (int j = 0; j < n; j++)
        if (in[j] && in[j]->dtype != DT_BOOL) return in[j]->dtype;
    return n && in[0] ? in[0]->dtype : DT_BOOL;
}

static void write_expr(Writer *ex, Arena *trees, const Node *n, const char *const *names)
{
    SxBuild b;
    sx_build_init(&b, trees);
    const Sx **args = arena_alloc(trees, sizeof *args * (size_t)(n->n_in ? n->n_in : 1));
    for (int j = 0; j < n->n_in; j++)
        if (names[j]) args[j] = sx_arg(&b, j, n->in[j]->dtype);
    const Sx *e = ir_op(n->op)->scalar_expr(n, &b, args, compute_type(n->in, n->n_in));
    cfam_expr(ex, &cfam_cuda, e, names);
}

static const char *wtext(const Writer *w) { return w->buf ? w->buf : ""; }

/* One kernel over out's elements: loads operands ops[j] (NULL: unused) with
 * broadcasting and stores what fx computes (or node n's own expression). */
static int emit_ew(Cu *c, const Node *n, const Value *out, const Value *const *ops, int nops, const FusedExpr *fx,
                   Diag *d)
{
    if (nops > CU_MAX_OPS) return diag_node_error(d, n, "the CUDA backend takes at most %d operands here", CU_MAX_OPS);
    const Shape *os = &out->shape;
    const int64_t total = ir_numel(os);
    if (total == 0) return 0;
    /* merged loop dims: drop size-1 output dims, merge dims every operand reads alike */
    int rank = 0;
    int64_t dims[IR_MAX_RANK], (*st)[IR_MAX_RANK] = calloc((size_t)nops + 1, sizeof *st),
                               (*fs)[IR_MAX_RANK] = calloc((size_t)nops + 1, sizeof *fs);
    GC_ASSERT(st && fs);
    bstrides(os, os, fs[0]);
    for (int j = 0; j < nops; j++)
        if (ops[j]) bstrides(&ops[j]->shape, os, fs[j + 1]);
    for (int k = 0; k < os->rank; k++) {
        if (os->dims[k] == 1) continue;
        int merge = rank > 0;
        for (int o = 0; o <= nops && merge; o++)
            if (st[o][rank - 1] != fs[o][k] * os->dims[k]) merge = 0;
        if (merge) {
            dims[rank - 1] *= os->dims[k];
            for (int o = 0; o <= nops; o++) st[o][rank - 1] = fs[o][k];
        } else {
            dims[rank] = os->dims[k];
            for (int o = 0; o <= nops; o++) st[o][rank] = fs[o][k];
            rank++;
        }
    }
    free(fs);
    /* how each operand is indexed: 0 flat (same layout as the output), 1 a
     * broadcast scalar, 2 its own offset */
    int how[CU_MAX_OPS + 1];
    int any_off = 0;
    for (int j = 0; j < nops; j++) {
        if (!ops[j]) continue;
        int same = 1, zero = 1;
        for (int k = 0; k < rank; k++) {
            if (st[j + 1][k] != st[0][k]) same = 0;
            if (st[j + 1][k] != 0) zero = 0;
        }
        how[j] = same ? 0 : zero ? 1 : 2;
        if (how[j] == 2) any_off = 1;
    }

    Writer *k = &c->kern;
    const int kn = c->nk++;
    node_comment(k, n);
    w_printf(k, "GC_KERNEL k%d(%s *y", kn, cfam_ctype(out->dtype));
    for (int j = 0; j < nops; j++)
        if (ops[j]) w_printf(k, ", const %s *a%d", cfam_ctype(ops[j]->dtype), j);
    w_puts(k, ")\n{\n");
    w_printf(k, "    GC_FOR_EACH(i, %lld) {\n", (long long)total);
    if (any_off) {
        for (int j = 0; j < nops; j++)
            if (ops[j] && how[j] == 2) w_printf(k, "        int64_t o%d = 0;\n", j);
        w_puts(k, "        int64_t r = i;\n");
        for (int q = rank - 1; q >= 0; q--) {
            int need = 0;
            for (int j = 0; j < nops; j++)
                if (ops[j] && how[j] == 2 && st[j + 1][q]) need = 1;
            if (q > 0) {
                if (need) w_printf(k, "        { const int64_t q = r %% %lld;", (long long)dims[q]);
                else w_puts(k, "        {");
                for (int j = 0; j < nops; j++)
                    if (ops[j] && how[j] == 2 && st[j + 1][q]) w_printf(k, " o%d += q * %lld;", j, (long long)st[j + 1][q]);
                w_printf(k, " r /= %lld; }\n", (long long)dims[q]);
            } else {
                for (int j = 0; j < nops; j++)
                    if (ops[j] && how[j] == 2 && st[j + 1][q]) w_printf(k, "        o%d += r * %lld;\n", j, (long long)st[j + 1][q]);
                if (!need) w_puts(k, "        (void)r;\n");
            }
        }
    }
    const char *loc[CU_MAX_OPS];
    char names[CU_MAX_OPS][16];
    for (int j = 0; j < nops; j++) {
        loc[j] = NULL;
        if (!ops[j]) continue;
        snprintf(names[j], sizeof names[j], "x%d", j);
        loc[j] = names[j];
        char idx[24];
        if (how[j] == 0) snprintf(idx, sizeof idx, "i");
        else if (how[j] == 1) snprintf(idx, sizeof idx, "0");
        else snprintf(idx, sizeof idx, "o%d", j);
        w_printf(k, "        const %s x%d = a%d[%s];\n", cfam_ctype(ops[j]->dtype), j, j, idx);
    }
    free(st);
    Writer ex;
    w_init(&ex);
    Arena trees = {0};
    if (!fx) {
        write_expr(&ex, &trees, n, loc);
    } else {
        char (*mloc)[16] = calloc((size_t)fx->n_members, sizeof *mloc);
        GC_ASSERT(mloc);
        for (int m = 0; m < fx->n_members; m++) {
            const Node *mn = fx->members[m];
            const char *nm[64];
            GC_ASSERT(mn->n_in <= 64);
            for (int j = 0; j < mn->n_in; j++) {
                const FxSrc *s = &fx->src[m][j];
                nm[j] = s->kind == FX_SLOT ? loc[s->idx] : s->kind == FX_MEMBER ? mloc[s->idx] : NULL;
            }
            if (m + 1 == fx->n_members) {
                write_expr(&ex, &trees, mn, nm);
                continue;
            }
            Writer e;
            w_init(&e);
            write_expr(&e, &trees, mn, nm);
            DType t = mn->out[0]->dtype;
            snprintf(mloc[m], sizeof mloc[m], "t%d", m);
            if (t == DT_BOOL) w_printf(k, "        const uint8_t t%d = (uint8_t)((%s) != 0);\n", m, wtext(&e));
            else w_printf(k, "        const %s t%d = (%s)(%s);\n", cfam_ctype(t), m, cfam_ctype(t), wtext(&e));
            w_free(&e);
        }
        free(mloc);
    }
    arena_free(&trees);
    if (out->dtype == DT_BOOL) w_printf(k, "        y[i] = (uint8_t)((%s) != 0);\n", wtext(&ex));
    else w_printf(k, "        y[i] = (%s)(%s);\n", cfam_ctype(out->dtype), wtext(&ex));
    w_free(&ex);
    w_puts(k, "    }\n}\n\n");

    /* the launch */
    Writer *b = &c->body;
    w_printf(b, "    GC_LAUNCH(k%d, %lld, stream, (%s", kn, (long long)total, P(c, out));
    for (int j = 0; j < nops; j++)
        if (ops[j]) w_printf(b, ", %s", P(c, ops[j]));
    w_puts(b, "));\n");
    return 0;
}

/* The node's fused epilogue (Gemm/MatMul), applied to y in place. */
static int emit_epilogue(Cu *c, const Node *n, Diag *d)
{
    if (!ir_epilogue(n)) return 0;
    FusedExpr fx;
    if (ir_fused_parse_node(n, &fx, d)) return -1;
    const Value **ops = calloc((size_t)n->n_in + 1, sizeof *ops);
    GC_ASSERT(ops);
    for (int j = 0; j < n->n_in; j++) ops[j] = fx.slot_used[j] ? n->in[j] : NULL;
    ops[n->n_in] = fx.slot_used[n->n_in] ? n->out[0] : NULL;
    int rc = emit_ew(c, n, n->out[0], ops, n->n_in + 1, &fx, d);
    ir_fused_free(&fx);
    free(ops);
    return rc;
}

/* ---- cuBLAS ------------------------------------------------------------------------- */

/* A leading dimension as cuBLAS requires it: at least 1, also for an empty matrix. */
static int64_t ld1(int64_t x) { return x > 1 ? x : 1; }

/* Row-major Y (M x N) = op(A) (M x K) * op(B) (K x N) as the column-major
 * Y^T = op(B)^T op(A)^T: cuBLAS's first operand is B. */
static void emit_sgemm(Cu *c, int ta, int tb, int64_t M, int64_t N, int64_t K, double alpha, const char *A,
                       int64_t sa, const char *B, int64_t sb, double beta, const char *Y, int64_t sy, int64_t batch)
{
    char al[48], be[48];
    cfam_lit(al, sizeof al, DT_F32, alpha);
    cfam_lit(be, sizeof be, DT_F32, beta);
    Writer *b = &c->body;
    c->uses_blas = 1;
    w_puts(b, "    {\n");
    w_printf(b, "        const float alpha = %s, beta = %s;\n", al, be);
    w_printf(b, "        if (cublasSgemmStridedBatched(blas, %s, %s, %lld, %lld, %lld, &alpha, %s, %lld, %lld, %s, %lld, %lld,\n",
             tb ? "CUBLAS_OP_T" : "CUBLAS_OP_N", ta ? "CUBLAS_OP_T" : "CUBLAS_OP_N", (long long)N, (long long)M,
             (long long)K, B, (long long)ld1(tb ? K : N), (long long)sb, A, (long long)ld1(ta ? M : K), (long long)sa);
    w_printf(b, "                                      &beta, %s, %lld, %lld, %lld) != CUBLAS_STATUS_SUCCESS)\n", Y,
             (long long)ld1(N), (long long)sy, (long long)batch);
    w_puts(b, "            return -1;\n");
    w_puts(b, "    }\n");
}

/* Y = beta * C broadcast to Y's shape (before a Gemm that adds into it). */
static void emit_fill_c(Cu *c, const Node *n, double beta)
{
    const Value *Y = n->out[0], *C = n->in[2];
    int64_t st[IR_MAX_RANK];
    bstrides(&C->shape, &Y->shape, st);
    const int64_t N = Y->shape.dims[1], total = ir_numel(&Y->shape);
    char be[48];
    cfam_lit(be, sizeof be, DT_F32, beta);
    Writer *k = &c->kern;
    const int kn = c->nk++;
    w_printf(k, "/* Gemm C (%s): y = %s * c broadcast */\n", ir_op(n->op)->name, be);
    w_printf(k, "GC_KERNEL k%d(float *y, const float *c)\n{\n", kn);
    w_printf(k, "    GC_FOR_EACH(i, %lld) {\n", (long long)total);
    w_printf(k, "        y[i] = %s * c[(i / %lld) * %lld + (i %% %lld) * %lld];\n", be, (long long)N, (long long)st[0],
             (long long)N, (long long)st[1]);
    w_puts(k, "    }\n}\n\n");
    w_printf(&c->body, "    GC_LAUNCH(k%d, %lld, stream, (%s, %s));\n", kn, (long long)total, P(c, Y), P(c, C));
}

static int emit_gemm(Cu *c, const Node *n, Diag *d)
{
    const Value *A = n->in[0], *B = n->in[1], *C = n->n_in > 2 ? n->in[2] : NULL, *Y = n->out[0];
    const int ta = n->attrs[GEMM_TRANS_A].i != 0, tb = n->attrs[GEMM_TRANS_B].i != 0;
    const double alpha = n->attrs[GEMM_ALPHA].f, beta = C ? n->attrs[GEMM_BETA].f : 0.0;
    const int64_t M = Y->shape.dims[0], N = Y->shape.dims[1], K = A->shape.dims[ta ? 0 : 1];
    const int addc = C && beta != 0.0;
    if (addc) emit_fill_c(c, n, beta);
    const char *pa = P(c, A), *pb = P(c, B), *py = P(c, Y);
    emit_sgemm(c, ta, tb, M, N, K, alpha, pa, 0, pb, 0, addc ? 1.0 : 0.0, py, 0, 1);
    return emit_epilogue(c, n, d);
}

static int emit_matmul(Cu *c, const Node *n, Diag *d)
{
    IrMatMulGeom g;
    GC_ASSERT(matmul_plan(n, &g) == 0);
    const int64_t nb = ir_numel(&g.batch);
    const char *pa = P(c, n->in[0]), *pb = P(c, n->in[1]), *py = P(c, n->out[0]);
    emit_sgemm(c, 0, 0, g.M, g.N, g.K, 1.0, pa, g.na > 1 ? g.M * g.K : 0, pb, g.nb > 1 ? g.K * g.N : 0, 0.0, py,
               g.M * g.N, nb);
    return emit_epilogue(c, n, d);
}

/* ---- Softmax, LogSoftmax -------------------------------------------------------------- */

/* One thread per row (outer x inner rows of len elements at stride inner):
 * the max, the sum of exponentials, then the outputs, in the input's type
 * (rows are read whole before the first write, so Y may be X's buffer). */
static int emit_softmax(Cu *c, const Node *n, Diag *d)
{
    int64_t outer, len, inner;
    if (nn_axis_split(n, SOFTMAX_AXIS, &outer, &len, &inner, d)) return -1;
    const Value *X = n->in[0], *Y = n->out[0];
    const int f64 = X->dtype == DT_F64, lg = n->op == OP_LogSoftmax;
    const char *T = cfam_ctype(X->dtype), *ex = f64 ? "exp" : "expf", *lo = f64 ? "log" : "logf";
    if (outer * inner == 0 || len == 0) return 0;
    Writer *k = &c->kern;
    const int kn = c->nk++;
    node_comment(k, n);
    w_printf(k, "GC_KERNEL k%d(%s *y, const %s *x)\n{\n", kn, T, T);
    w_printf(k, "    GC_FOR_EACH(r, %lld) {\n", (long long)(outer * inner));
    w_printf(k, "        const int64_t base = r / %lld * %lld + r %% %lld;\n", (long long)inner, (long long)(len * inner),
             (long long)inner);
    w_printf(k, "        %s mx = -INFINITY, s = 0;\n", T);
    w_printf(k, "        for (int64_t j = 0; j < %lld; j++) mx = x[base + j * %lld] > mx ? x[base + j * %lld] : mx;\n",
             (long long)len, (long long)inner, (long long)inner);
    w_printf(k, "        for (int64_t j = 0; j < %lld; j++) s += %s(x[base + j * %lld] - mx);\n", (long long)len, ex,
             (long long)inner);
    if (lg) w_printf(k, "        const %s ls = %s(s);\n", T, lo);
    w_printf(k, "        for (int64_t j = 0; j < %lld; j++)\n", (long long)len);
    if (lg) w_printf(k, "            y[base + j * %lld] = x[base + j * %lld] - mx - ls;\n", (long long)inner, (long long)inner);
    else w_printf(k, "            y[base + j * %lld] = %s(x[base + j * %lld] - mx) / s;\n", (long long)inner, ex, (long long)inner);
    w_puts(k, "    }\n}\n\n");
    w_printf(&c->body, "    GC_LAUNCH(k%d, %lld, stream, (%s, %s));\n", kn, (long long)(outer * inner), P(c, Y), P(c, X));
    return 0;
}

/* ---- Conv (cuDNN), pooling ------------------------------------------------------------ */

/* The workspace a Conv may use for its cuDNN algorithm: what an im2col
 * GEMM needs, at most 64 MiB (implicit GEMM needs none). */
static size_t conv_ws_bytes(const Node *n)
{
    const Value *W = n->in[1], *Y = n->out[0];
    int64_t per_out = 1;
    for (int i = 1; i < W->shape.rank; i++) per_out *= W->shape.dims[i];
    int64_t positions = ir_numel(&Y->shape) / (Y->shape.dims[1] ? Y->shape.dims[1] : 1);
    int64_t b = per_out * positions * 4;
    return (size_t)(b < ((int64_t)64 << 20) ? b : ((int64_t)64 << 20));
}

static size_t cuda_workspace(const Graph *g, const Node *n)
{
    (void)g;
    return n->op == OP_Conv && n->n_in >= 2 && n->out[0]->shape_known ? conv_ws_bytes(n) : 0;
}

/* y[n, c, ...] += b[c] (a per-channel bias after cuDNN). */
static void emit_channel_bias(Cu *c, const Node *n, const Value *Y, const Value *B)
{
    const int64_t total = ir_numel(&Y->shape), M = Y->shape.dims[1], npos = total / (Y->shape.dims[0] * M);
    const char *T = cfam_ctype(Y->dtype);
    Writer *k = &c->kern;
    const int kn = c->nk++;
    node_comment(k, n);
    w_puts(k, "/* its bias, one value per channel */\n");
    w_printf(k, "GC_KERNEL k%d(%s *y, const %s *b)\n{\n", kn, T, T);
    w_printf(k, "    GC_FOR_EACH(i, %lld) {\n        y[i] += b[i / %lld %% %lld];\n    }\n}\n\n", (long long)total,
             (long long)npos, (long long)M);
    w_printf(&c->body, "    GC_LAUNCH(k%d, %lld, stream, (%s, %s));\n", kn, (long long)total, P(c, Y), P(c, B));
}

static int emit_conv(Cu *c, const Node *n, Diag *d)
{
    const Value *X = n->in[0], *W = n->in[1], *B = n->n_in > 2 ? n->in[2] : NULL, *Y = n->out[0];
    int64_t k[IR_MAX_RANK], st[IR_MAX_RANK], dl[IR_MAX_RANK], pb[IR_MAX_RANK], pe[IR_MAX_RANK];
    int sr = ir_nn_window_geometry(n, k, st, dl, pb, pe);
    if (ir_numel(&Y->shape) == 0) return 0;
    const int two = sr == 2, i = c->nconv++;
    const int64_t G = n->attrs[CONV_GROUP].i;
    const long long xn = X->shape.dims[0], xc = X->shape.dims[1], xh = two ? X->shape.dims[2] : 1,
                    xw = X->shape.dims[1 + sr], ym = Y->shape.dims[1], yh = two ? Y->shape.dims[2] : 1,
                    yw = Y->shape.dims[1 + sr];
    Writer *in = &c->init;
    w_printf(in, "    /* Conv %d: ", i);
    comment_text(in, n->name ? n->name : "");
    w_puts(in, " */\n");
    w_printf(in, "    ok = ok && cudnnCreateTensorDescriptor(&m->cx[%d]) == CUDNN_STATUS_SUCCESS &&\n", i);
    w_printf(in, "         cudnnSetTensor4dDescriptor(m->cx[%d], CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, %lld, %lld, %lld, %lld) == CUDNN_STATUS_SUCCESS;\n",
             i, xn, xc, xh, xw);
    w_printf(in, "    ok = ok && cudnnCreateTensorDescriptor(&m->cy[%d]) == CUDNN_STATUS_SUCCESS &&\n", i);
    w_printf(in, "         cudnnSetTensor4dDescriptor(m->cy[%d], CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, %lld, %lld, %lld, %lld) == CUDNN_STATUS_SUCCESS;\n",
             i, xn, ym, yh, yw);
    w_printf(in, "    ok = ok && cudnnCreateFilterDescriptor(&m->cw[%d]) == CUDNN_STATUS_SUCCESS &&\n", i);
    w_printf(in, "         cudnnSetFilter4dDescriptor(m->cw[%d], CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, %lld, %lld, %lld, %lld) == CUDNN_STATUS_SUCCESS;\n",
             i, (long long)W->shape.dims[0], (long long)W->shape.dims[1], (long long)(two ? k[0] : 1),
             (long long)k[sr - 1]);
    w_printf(in, "    ok = ok && cudnnCreateConvolutionDescriptor(&m->cc[%d]) == CUDNN_STATUS_SUCCESS &&\n", i);
    w_printf(in, "         cudnnSetConvolution2dDescriptor(m->cc[%d], %lld, %lld, %lld, %lld, %lld, %lld, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT) == CUDNN_STATUS_SUCCESS &&\n",
             i, (long long)(two ? pb[0] : 0), (long long)pb[sr - 1], (long long)(two ? st[0] : 1), (long long)st[sr - 1],
             (long long)(two ? dl[0] : 1), (long long)dl[sr - 1]);
    w_printf(in, "         cudnnSetConvolutionGroupCount(m->cc[%d], %lld) == CUDNN_STATUS_SUCCESS &&\n", i, (long long)G);
    w_printf(in, "         cudnnSetConvolutionMathType(m->cc[%d], CUDNN_FMA_MATH) == CUDNN_STATUS_SUCCESS; /* fp32, no TF32 */\n", i);
    w_printf(in, "    ok = ok && gc_cudnn_pick(m->dnn, m->cx[%d], m->cw[%d], m->cc[%d], m->cy[%d], %lld, &m->algo[%d]) == 0;\n", i,
             i, i, i, (long long)n->ws_bytes, i);
    Writer *f = &c->fini;
    w_printf(f, "    if (m->cx[%d]) cudnnDestroyTensorDescriptor(m->cx[%d]);\n", i, i);
    w_printf(f, "    if (m->cy[%d]) cudnnDestroyTensorDescriptor(m->cy[%d]);\n", i, i);
    w_printf(f, "    if (m->cw[%d]) cudnnDestroyFilterDescriptor(m->cw[%d]);\n", i, i);
    w_printf(f, "    if (m->cc[%d]) cudnnDestroyConvolutionDescriptor(m->cc[%d]);\n", i, i);

    char ws[64];
    if (n->ws_bytes) {
        GC_ASSERT(n->ws_offset >= 0);
        snprintf(ws, sizeof ws, "arena + %lld", (long long)n->ws_offset);
    } else {
        snprintf(ws, sizeof ws, "NULL");
    }
    Writer *b = &c->body;
    w_puts(b, "    {\n        const float one = 1.0f, zero = 0.0f;\n");
    w_printf(b, "        if (cudnnConvolutionForward(m->dnn, &one, m->cx[%d], %s, m->cw[%d], %s, m->cc[%d], m->algo[%d],\n", i,
             P(c, X), i, P(c, W), i, i);
    w_printf(b, "                                    %s, %lld, &zero, m->cy[%d], %s) != CUDNN_STATUS_SUCCESS)\n", ws,
             (long long)n->ws_bytes, i, P(c, Y));
    w_puts(b, "            return -1;\n    }\n");
    if (B) emit_channel_bias(c, n, Y, B);
    return emit_epilogue(c, n, d);
}

/* MaxPool / AveragePool: one thread per output element over the window
 * (the C runtime's rules: padding never wins a max; the average's count
 * includes the pads within the padded input when count_include_pad). */
static int emit_pool(Cu *c, const Node *n, Diag *d)
{
    const Value *X = n->in[0], *Y = n->out[0];
    int64_t k[IR_MAX_RANK], st[IR_MAX_RANK], dl[IR_MAX_RANK], pb[IR_MAX_RANK], pe[IR_MAX_RANK];
    int sr = ir_nn_window_geometry(n, k, st, dl, pb, pe);
    if (sr < 1) return diag_node_error(d, n, "invalid pooling geometry");
    const int64_t total = ir_numel(&Y->shape);
    if (total == 0) return 0;
    /* three spatial dims, leading ones of size 1 */
    int64_t in3[3], out3[3], k3[3], s3[3], d3[3], p3[3], e3[3];
    for (int i = 0; i < 3; i++) {
        int j = i - (3 - sr);
        in3[i] = j < 0 ? 1 : X->shape.dims[2 + j];
        out3[i] = j < 0 ? 1 : Y->shape.dims[2 + j];
        k3[i] = j < 0 ? 1 : k[j];
        s3[i] = j < 0 ? 1 : st[j];
        d3[i] = j < 0 ? 1 : dl[j];
        p3[i] = j < 0 ? 0 : pb[j];
        e3[i] = j < 0 ? 0 : pe[j];
    }
    const int is_max = n->op == OP_MaxPool;
    const char *T = cfam_ctype(X->dtype);
    Writer *kw = &c->kern;
    const int kn = c->nk++;
    node_comment(kw, n);
    w_printf(kw, "GC_KERNEL k%d(%s *y, const %s *x)\n{\n", kn, T, T);
    w_printf(kw, "    GC_FOR_EACH(i, %lld) {\n", (long long)total);
    w_printf(kw, "        const int64_t o2 = i %% %lld, o1 = i / %lld %% %lld, o0 = i / %lld %% %lld, q = i / %lld;\n",
             (long long)out3[2], (long long)out3[2], (long long)out3[1], (long long)(out3[2] * out3[1]), (long long)out3[0],
             (long long)(out3[0] * out3[1] * out3[2]));
    w_printf(kw, "        const %s *xq = x + q * %lld;\n", T, (long long)(in3[0] * in3[1] * in3[2]));
    if (is_max) {
        w_printf(kw, "        %s best = -INFINITY;\n", T);
        w_printf(kw, "        for (int64_t a = 0; a < %lld; a++) {\n", (long long)k3[0]);
        w_printf(kw, "            const int64_t i0 = o0 * %lld - %lld + a * %lld;\n", (long long)s3[0], (long long)p3[0], (long long)d3[0]);
        w_printf(kw, "            if (i0 < 0 || i0 >= %lld) continue;\n", (long long)in3[0]);
        w_printf(kw, "            for (int64_t b = 0; b < %lld; b++) {\n", (long long)k3[1]);
        w_printf(kw, "                const int64_t i1 = o1 * %lld - %lld + b * %lld;\n", (long long)s3[1], (long long)p3[1], (long long)d3[1]);
        w_printf(kw, "                if (i1 < 0 || i1 >= %lld) continue;\n", (long long)in3[1]);
        w_printf(kw, "                for (int64_t e = 0; e < %lld; e++) {\n", (long long)k3[2]);
        w_printf(kw, "                    const int64_t i2 = o2 * %lld - %lld + e * %lld;\n", (long long)s3[2], (long long)p3[2], (long long)d3[2]);
        w_printf(kw, "                    if (i2 >= 0 && i2 < %lld && xq[(i0 * %lld + i1) * %lld + i2] > best) best = xq[(i0 * %lld + i1) * %lld + i2];\n",
                 (long long)in3[2], (long long)in3[1], (long long)in3[2], (long long)in3[1], (long long)in3[2]);
        w_puts(kw, "                }\n            }\n        }\n        y[i] = best;\n");
    } else {
        const int cip = n->attrs[AVGPOOL_COUNT_INCLUDE_PAD].i != 0;
        w_puts(kw, "        int64_t lo[3], hi[3], cnt = 1;\n        const int64_t o[3] = {o0, o1, o2};\n");
        w_printf(kw, "        const int64_t in[3] = {%lld, %lld, %lld}, st[3] = {%lld, %lld, %lld}, pb[3] = {%lld, %lld, %lld},\n",
                 (long long)in3[0], (long long)in3[1], (long long)in3[2], (long long)s3[0], (long long)s3[1], (long long)s3[2],
                 (long long)p3[0], (long long)p3[1], (long long)p3[2]);
        if (cip)
            w_printf(kw, "                      pe[3] = {%lld, %lld, %lld}, kk[3] = {%lld, %lld, %lld};\n", (long long)e3[0],
                     (long long)e3[1], (long long)e3[2], (long long)k3[0], (long long)k3[1], (long long)k3[2]);
        else
            w_printf(kw, "                      kk[3] = {%lld, %lld, %lld};\n", (long long)k3[0], (long long)k3[1], (long long)k3[2]);
        w_puts(kw, "        for (int j = 0; j < 3; j++) {\n");
        w_puts(kw, "            const int64_t s = o[j] * st[j] - pb[j], e = s + kk[j];\n");
        w_puts(kw, "            lo[j] = s < 0 ? 0 : s;\n            hi[j] = e < in[j] ? e : in[j];\n");
        if (cip) w_puts(kw, "            cnt *= (e < in[j] + pe[j] ? e : in[j] + pe[j]) - s; /* pads inside the padded input count */\n        }\n");
        else w_puts(kw, "            cnt *= hi[j] - lo[j];\n        }\n");
        w_puts(kw, "        double acc = 0;\n");
        w_puts(kw, "        for (int64_t a = lo[0]; a < hi[0]; a++)\n            for (int64_t b = lo[1]; b < hi[1]; b++)\n");
        w_printf(kw, "                for (int64_t e = lo[2]; e < hi[2]; e++) acc += xq[(a * %lld + b) * %lld + e];\n",
                 (long long)in3[1], (long long)in3[2]);
        w_printf(kw, "        y[i] = (%s)(acc / (double)cnt);\n", T);
    }
    w_puts(kw, "    }\n}\n\n");
    w_printf(&c->body, "    GC_LAUNCH(k%d, %lld, stream, (%s, %s));\n", kn, (long long)total, P(c, Y), P(c, X));
    return 0;
}

/* GlobalAveragePool: one thread per (image, channel), the sum in double. */
static int emit_gap(Cu *c, const Node *n)
{
    const Value *X = n->in[0], *Y = n->out[0];
    const int64_t NC = X->shape.dims[0] * X->shape.dims[1], Sz = NC ? ir_numel(&X->shape) / NC : 0;
    if (NC == 0) return 0;
    const char *T = cfam_ctype(X->dtype);
    Writer *k = &c->kern;
    const int kn = c->nk++;
    node_comment(k, n);
    w_printf(k, "GC_KERNEL k%d(%s *y, const %s *x)\n{\n", kn, T, T);
    w_printf(k, "    GC_FOR_EACH(q, %lld) {\n        double acc = 0;\n", (long long)NC);
    w_printf(k, "        for (int64_t j = 0; j < %lld; j++) acc += x[q * %lld + j];\n", (long long)Sz, (long long)Sz);
    w_printf(k, "        y[q] = (%s)(acc / %lld.0);\n    }\n}\n\n", T, (long long)(Sz ? Sz : 1));
    w_printf(&c->body, "    GC_LAUNCH(k%d, %lld, stream, (%s, %s));\n", kn, (long long)NC, P(c, Y), P(c, X));
    return 0;
}

/* ---- index maps: Transpose, Concat, Slice, Gather --------------------------------------- */

/* Writes, into a kernel over the elements i of an output of shape dims
 * (rank r), code that sets `int64_t VAR` to sum_k coord_k(i) * mult[k]
 * (+ add[k] * mult[k]): each coordinate taken by one % and one /. */
static void emit_index_map(Writer *k, const char *var, int rank, const int64_t *dims, const int64_t *mult,
                           const int64_t *add)
{
    int64_t base = 0;
    for (int q = 0; q < rank; q++) base += (add ? add[q] : 0) * mult[q];
    w_printf(k, "        int64_t %s = %lld;\n", var, (long long)base);
    int last = -1; /* the outermost dim that matters */
    for (int q = 0; q < rank; q++)
        if (dims[q] > 1 && mult[q] != 0) {
            last = q;
            break;
        }
    if (last < 0) return;
    w_puts(k, "        {\n            int64_t r = i;\n");
    for (int q = rank - 1; q > last; q--) {
        if (dims[q] == 1) continue;
        if (mult[q]) w_printf(k, "            %s += r %% %lld * %lld;\n", var, (long long)dims[q], (long long)mult[q]);
        w_printf(k, "            r /= %lld;\n", (long long)dims[q]);
    }
    int outer = 0; /* a dim of size > 1 outside `last` (its multiplier 0): r needs the modulus */
    for (int q = 0; q < last; q++)
        if (dims[q] > 1) outer = 1;
    if (outer) w_printf(k, "            %s += r %% %lld * %lld;\n        }\n", var, (long long)dims[last], (long long)mult[last]);
    else w_printf(k, "            %s += r * %lld;\n        }\n", var, (long long)mult[last]);
}

static void strides_of(const Shape *s, int64_t *st)
{
    int64_t acc = 1;
    for (int k = s->rank - 1; k >= 0; k--) {
        st[k] = acc;
        acc *= s->dims[k];
    }
}

/* A kernel y[i] = x[map(i)] (one input, one output of the same dtype). */
static void emit_gather_map(Cu *c, const Node *n, const Value *X, const Value *Y, const int64_t *mult, const int64_t *add)
{
    const int64_t total = ir_numel(&Y->shape);
    if (total == 0) return;
    const char *T = cfam_ctype(Y->dtype);
    Writer *k = &c->kern;
    const int kn = c->nk++;
    node_comment(k, n);
    w_printf(k, "GC_KERNEL k%d(%s *y, const %s *x)\n{\n    GC_FOR_EACH(i, %lld) {\n", kn, T, T, (long long)total);
    emit_index_map(k, "o", Y->shape.rank, Y->shape.dims, mult, add);
    w_puts(k, "        y[i] = x[o];\n    }\n}\n\n");
    w_printf(&c->body, "    GC_LAUNCH(k%d, %lld, stream, (%s, %s));\n", kn, (long long)total, P(c, Y), P(c, X));
}

static int emit_transpose(Cu *c, const Node *n)
{
    const Value *X = n->in[0], *Y = n->out[0];
    int perm[IR_MAX_RANK];
    int64_t st[IR_MAX_RANK], mult[IR_MAX_RANK];
    ir_transpose_perm(n, perm);
    strides_of(&X->shape, st);
    for (int q = 0; q < Y->shape.rank; q++) mult[q] = st[perm[q]];
    emit_gather_map(c, n, X, Y, mult, NULL);
    return 0;
}

static int emit_slice(Cu *c, const Node *n, Diag *d)
{
    const Value *X = n->in[0], *Y = n->out[0];
    int64_t start[IR_MAX_RANK], step[IR_MAX_RANK], st[IR_MAX_RANK], mult[IR_MAX_RANK];
    Shape out;
    if (ir_slice_plan(n, start, step, &out, d)) return -1;
    strides_of(&X->shape, st);
    int64_t base[IR_MAX_RANK];
    for (int q = 0; q < Y->shape.rank; q++) {
        mult[q] = st[q] * step[q];
        base[q] = 0;
    }
    /* the start offsets as a constant: add[q] * mult[q] would scale them by step */
    int64_t off = 0;
    for (int q = 0; q < Y->shape.rank; q++) off += start[q] * st[q];
    const int64_t total = ir_numel(&Y->shape);
    if (total == 0) return 0;
    const char *T = cfam_ctype(Y->dtype);
    Writer *k = &c->kern;
    const int kn = c->nk++;
    node_comment(k, n);
    w_printf(k, "GC_KERNEL k%d(%s *y, const %s *x)\n{\n    GC_FOR_EACH(i, %lld) {\n", kn, T, T, (long long)total);
    emit_index_map(k, "o", Y->shape.rank, Y->shape.dims, mult, base);
    w_printf(k, "        y[i] = x[%lld + o];\n    }\n}\n\n", (long long)off);
    w_printf(&c->body, "    GC_LAUNCH(k%d, %lld, stream, (%s, %s));\n", kn, (long long)total, P(c, Y), P(c, X));
    return 0;
}

static int emit_concat(Cu *c, const Node *n)
{
    const Value *Y = n->out[0];
    const int64_t total = ir_numel(&Y->shape);
    if (total == 0) return 0;
    const int ax = ir_norm_axis(n->attrs[CONCAT_AXIS].i, Y->shape.rank);
    int64_t inner = 1, A = Y->shape.dims[ax];
    for (int q = ax + 1; q < Y->shape.rank; q++) inner *= Y->shape.dims[q];
    const char *T = cfam_ctype(Y->dtype);
    Writer *k = &c->kern;
    const int kn = c->nk++;
    node_comment(k, n);
    w_printf(k, "GC_KERNEL k%d(%s *y", kn, T);
    for (int j = 0; j < n->n_in; j++)
        if (n->in[j] && n->in[j]->shape.dims[ax] > 0) w_printf(k, ", const %s *a%d", T, j);
    w_printf(k, ")\n{\n    GC_FOR_EACH(i, %lld) {\n", (long long)total);
    w_printf(k, "        const int64_t outer = i / %lld, a = i / %lld %% %lld, in = i %% %lld;\n", (long long)(A * inner),
             (long long)inner, (long long)A, (long long)inner);
    int64_t at = 0;
    int first = 1;
    for (int j = 0; j < n->n_in; j++) {
        const Value *v = n->in[j];
        if (!v || v->shape.dims[ax] == 0) continue;
        const int64_t aj = v->shape.dims[ax];
        w_printf(k, "        %sif (a < %lld) y[i] = a%d[(outer * %lld + a - %lld) * %lld + in];\n", first ? "" : "else ",
                 (long long)(at + aj), j, (long long)aj, (long long)at, (long long)inner);
        first = 0;
        at += aj;
    }
    w_puts(k, "    }\n}\n\n");
    Writer *b = &c->body;
    w_printf(b, "    GC_LAUNCH(k%d, %lld, stream, (%s", kn, (long long)total, P(c, Y));
    for (int j = 0; j < n->n_in; j++)
        if (n->in[j] && n->in[j]->shape.dims[ax] > 0) w_printf(b, ", %s", P(c, n->in[j]));
    w_puts(b, "));\n");
    return 0;
}

/* Gather: y[outer, j, inner] = x[outer, idx[j] (negative from the end;
 * clamped into range: an out-of-range index must not read outside x),
 * inner]. */
static int emit_gather(Cu *c, const Node *n)
{
    const Value *X = n->in[0], *I = n->in[1], *Y = n->out[0];
    const int64_t total = ir_numel(&Y->shape);
    if (total == 0) return 0;
    const int ax = ir_norm_axis(n->attrs[GATHER_AXIS].i, X->shape.rank);
    int64_t inner = 1, ni = ir_numel(&I->shape), N = X->shape.dims[ax];
    for (int q = ax + 1; q < X->shape.rank; q++) inner *= X->shape.dims[q];
    const char *T = cfam_ctype(Y->dtype), *TI = cfam_ctype(I->dtype);
    Writer *k = &c->kern;
    const int kn = c->nk++;
    node_comment(k, n);
    w_printf(k, "GC_KERNEL k%d(%s *y, const %s *x, const %s *idx)\n{\n    GC_FOR_EACH(i, %lld) {\n", kn, T, T, TI,
             (long long)total);
    w_printf(k, "        const int64_t in = i %% %lld, j = i / %lld %% %lld, outer = i / %lld;\n", (long long)inner,
             (long long)inner, (long long)ni, (long long)(inner * ni));
    w_printf(k, "        int64_t t = (int64_t)idx[j];\n        if (t < 0) t += %lld;\n", (long long)N);
    w_printf(k, "        t = t < 0 ? 0 : t >= %lld ? %lld : t;\n", (long long)N, (long long)(N - 1));
    w_printf(k, "        y[i] = x[(outer * %lld + t) * %lld + in];\n    }\n}\n\n", (long long)N, (long long)inner);
    w_printf(&c->body, "    GC_LAUNCH(k%d, %lld, stream, (%s, %s, %s));\n", kn, (long long)total, P(c, Y), P(c, X), P(c, I));
    return 0;
}

/* ---- reductions and normalizations --------------------------------------------------------- */

/* ReduceSum/Mean/Max/Min: one thread per output element, the reduced
 * elements visited in row-major order, sums in double. */
static int emit_reduce(Cu *c, const Node *n)
{
    const Value *X = n->in[0], *Y = n->out[0];
    int mask[IR_MAX_RANK];
    const int noop = ir_reduce_mask(n, mask, NULL);
    const int64_t total = ir_numel(&Y->shape);
    if (total == 0) return 0;
    const char *T = cfam_ctype(X->dtype);
    const Shape *xs = &X->shape;
    int64_t st[IR_MAX_RANK], kd[IR_MAX_RANK], km[IR_MAX_RANK], rd[IR_MAX_RANK], rm[IR_MAX_RANK];
    strides_of(xs, st);
    int nk = 0, nr = 0;
    int64_t cnt = 1;
    for (int q = 0; q < xs->rank; q++) {
        if (noop == 1 || !mask[q]) kd[nk] = xs->dims[q], km[nk++] = st[q];
        else rd[nr] = xs->dims[q], rm[nr++] = st[q], cnt *= xs->dims[q];
    }
    Writer *k = &c->kern;
    const int kn = c->nk++;
    node_comment(k, n);
    w_printf(k, "GC_KERNEL k%d(%s *y, const %s *x)\n{\n    GC_FOR_EACH(i, %lld) {\n", kn, T, T, (long long)total);
    emit_index_map(k, "o", nk, kd, km, NULL);
    const int mx = n->op == OP_ReduceMax, mn = n->op == OP_ReduceMin;
    if (mx || mn) w_printf(k, "        %s acc = %sINFINITY;\n", T, mx ? "-" : "");
    else w_puts(k, "        double acc = 0;\n");
    w_printf(k, "        for (int64_t j = 0; j < %lld; j++) {\n", (long long)cnt);
    /* the reduced coordinates of j */
    w_puts(k, "            int64_t p = o, r = j;\n");
    for (int q = nr - 1; q >= 0; q--) {
        if (q > 0) w_printf(k, "            p += r %% %lld * %lld;\n            r /= %lld;\n", (long long)rd[q], (long long)rm[q], (long long)rd[q]);
        else w_printf(k, "            p += r * %lld;\n", (long long)rm[q]);
    }
    if (nr == 0) w_puts(k, "            (void)r;\n");
    if (mx) w_puts(k, "            acc = x[p] > acc || x[p] != x[p] ? x[p] : acc;\n");
    else if (mn) w_puts(k, "            acc = x[p] < acc || x[p] != x[p] ? x[p] : acc;\n");
    else w_puts(k, "            acc += x[p];\n");
    w_puts(k, "        }\n");
    if (n->op == OP_ReduceMean) w_printf(k, "        y[i] = (%s)(acc / %lld.0);\n", T, (long long)(cnt ? cnt : 1));
    else w_printf(k, "        y[i] = (%s)acc;\n", T);
    w_puts(k, "    }\n}\n\n");
    w_printf(&c->body, "    GC_LAUNCH(k%d, %lld, stream, (%s, %s));\n", kn, (long long)total, P(c, Y), P(c, X));
    return 0;
}

/* LayerNormalization: one thread per row (the dims from axis on): mean,
 * variance (two passes, in double), then y = (x - mean) * rstd * scale + b,
 * Scale and B broadcast over the row (numpy rules against X[axis:]). */
static int emit_layernorm(Cu *c, const Node *n, Diag *d)
{
    const Value *X = n->in[0], *Sc = n->in[1], *B = n->n_in > 2 ? n->in[2] : NULL, *Y = n->out[0];
    const Shape *xs = &X->shape;
    const int a = ir_norm_axis(n->attrs[LN_AXIS].i, xs->rank);
    if (a < 0) return diag_node_error(d, n, "invalid axis");
    int64_t outer = 1, inner = 1;
    for (int q = 0; q < a; q++) outer *= xs->dims[q];
    for (int q = a; q < xs->rank; q++) inner *= xs->dims[q];
    if (outer * inner == 0) return 0;
    /* row shape and the parameters' strides along it */
    Shape row = {0};
    row.rank = xs->rank - a;
    for (int q = 0; q < row.rank; q++) row.dims[q] = xs->dims[a + q];
    int64_t ss[IR_MAX_RANK], bs[IR_MAX_RANK];
    bstrides(&Sc->shape, &row, ss);
    if (B) bstrides(&B->shape, &row, bs);
    const char *T = cfam_ctype(X->dtype);
    char eps[48];
    cfam_lit(eps, sizeof eps, DT_F64, n->attrs[LN_EPSILON].f);
    Writer *k = &c->kern;
    const int kn = c->nk++;
    node_comment(k, n);
    w_printf(k, "GC_KERNEL k%d(%s *y, const %s *x, const %s *sc%s%s%s)\n{\n", kn, T, T, T, B ? ", const " : "", B ? T : "",
             B ? " *bb" : "");
    w_printf(k, "    GC_FOR_EACH(rw, %lld) {\n", (long long)outer);
    w_printf(k, "        const %s *xr = x + rw * %lld;\n        %s *yr = y + rw * %lld;\n", T, (long long)inner, T,
             (long long)inner);
    w_puts(k, "        double mean = 0, var = 0;\n");
    w_printf(k, "        for (int64_t j = 0; j < %lld; j++) mean += xr[j];\n", (long long)inner);
    w_printf(k, "        mean /= %lld.0;\n", (long long)inner);
    w_printf(k, "        for (int64_t j = 0; j < %lld; j++) var += (xr[j] - mean) * (xr[j] - mean);\n", (long long)inner);
    w_printf(k, "        const double rstd = 1.0 / sqrt(var / %lld.0 + %s);\n", (long long)inner, eps);
    w_printf(k, "        for (int64_t i = 0; i < %lld; i++) {\n", (long long)inner);
    emit_index_map(k, "s", row.rank, row.dims, ss, NULL);
    if (B) emit_index_map(k, "t", row.rank, row.dims, bs, NULL);
    w_printf(k, "        yr[i] = (%s)((xr[i] - mean) * rstd * sc[s]%s);\n", T, B ? " + bb[t]" : "");
    w_puts(k, "        }\n    }\n}\n\n");
    w_printf(&c->body, "    GC_LAUNCH(k%d, %lld, stream, (%s, %s, %s", kn, (long long)outer, P(c, Y), P(c, X), P(c, Sc));
    if (B) w_printf(&c->body, ", %s", P(c, B));
    w_puts(&c->body, "));\n");
    return 0;
}

/* BatchNormalization (inference): y = (x - mean[c]) / sqrt(var[c] + eps) * scale[c] + b[c]. */
static int emit_batchnorm(Cu *c, const Node *n)
{
    const Value *X = n->in[0], *Y = n->out[0];
    const int64_t total = ir_numel(&Y->shape), C = X->shape.dims[1];
    if (total == 0) return 0;
    const int64_t inner = total / (X->shape.dims[0] * C);
    const char *T = cfam_ctype(X->dtype);
    char eps[48];
    cfam_lit(eps, sizeof eps, DT_F64, n->attrs[BN_EPSILON].f);
    Writer *k = &c->kern;
    const int kn = c->nk++;
    node_comment(k, n);
    w_printf(k, "GC_KERNEL k%d(%s *y, const %s *x, const %s *sc, const %s *b, const %s *mean, const %s *var)\n{\n", kn, T, T,
             T, T, T, T);
    w_printf(k, "    GC_FOR_EACH(i, %lld) {\n        const int64_t ch = i / %lld %% %lld;\n", (long long)total,
             (long long)inner, (long long)C);
    w_printf(k, "        y[i] = (%s)((x[i] - (double)mean[ch]) / sqrt((double)var[ch] + %s) * sc[ch] + b[ch]);\n    }\n}\n\n", T,
             eps);
    w_printf(&c->body, "    GC_LAUNCH(k%d, %lld, stream, (%s, %s, %s, %s, %s, %s));\n", kn, (long long)total, P(c, Y),
             P(c, X), P(c, n->in[1]), P(c, n->in[2]), P(c, n->in[3]), P(c, n->in[4]));
    return 0;
}

/* ---- the model source ------------------------------------------------------------------ */

static void sanitize(const char *s, char *buf, size_t cap)
{
    size_t o = 0;
    for (; *s && o + 1 < cap; s++) {
        char ch = *s;
        buf[o++] = ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9')) ? ch : '_';
    }
    buf[o] = 0;
}

static void cu_init(Cu *c, const Graph *g, const char *name)
{
    memset(c, 0, sizeof *c);
    c->g = g;
    c->name = name;
    int nv = g->n_values;
    c->id = calloc((size_t)nv + 1, sizeof *c->id);
    c->out_slot = malloc(sizeof *c->out_slot * ((size_t)nv + 1));
    c->woff = malloc(sizeof *c->woff * ((size_t)nv + 1));
    c->used = calloc((size_t)nv + 1, 1);
    GC_ASSERT(c->id && c->out_slot && c->woff && c->used);
    for (int i = 0; i < nv; i++) {
        const Value *v = g->values[i];
        char base[40];
        sanitize(v->name ? v->name : "v", base, sizeof base);
        size_t n = strlen(base) + 32;
        c->id[i] = malloc(n);
        GC_ASSERT(c->id[i]);
        snprintf(c->id[i], n, "t%d_%s", i, base);
        c->out_slot[i] = -1;
        c->woff[i] = -1;
    }
    for (int k = 0; k < g->n_outputs; k++) {
        const Value *v = g->outputs[k];
        if (v->kind == VK_TEMP && !v->alias && c->out_slot[v->id] < 0) c->out_slot[v->id] = k;
    }
    w_init(&c->kern);
    w_init(&c->body);
    w_init(&c->init);
    w_init(&c->fini);
}

static void cu_fini(Cu *c)
{
    for (int i = 0; i < c->g->n_values; i++) free(c->id[i]);
    free(c->id);
    free(c->out_slot);
    free(c->woff);
    free(c->used);
    w_free(&c->kern);
    w_free(&c->body);
    w_free(&c->init);
    w_free(&c->fini);
}

/* Every node into kernels (c->kern) and host statements (c->body). */
static int gen_nodes(Cu *c, Diag *d)
{
    const Graph *g = c->g;
    Writer *b = &c->body;
    for (int i = 0; i < g->n_nodes; i++) {
        const Node *n = g->nodes[i];
        if (cuda_supports(n, d)) return -1;
        w_puts(b, "    ");
        node_comment(b, n);
        const OpDesc *od = ir_op(n->op);
        if (od->view) {
            const Value *x = n->in[0], *y = n->out[0];
            if (y->alias) {
                w_puts(b, "    /* a view of its input: no code */\n");
                continue;
            }
            if (value_bytes(y) > 0)
                w_printf(b, "    if (cudaMemcpyAsync(%s, %s, %lld, cudaMemcpyDeviceToDevice, stream) != cudaSuccess) return -1;\n",
                         P(c, y), P(c, x), (long long)value_bytes(y));
            continue;
        }
        int rc;
        if (n->op == OP_Gemm) rc = emit_gemm(c, n, d);
        else if (n->op == OP_MatMul) rc = emit_matmul(c, n, d);
        else if (n->op == OP_Softmax || n->op == OP_LogSoftmax) rc = emit_softmax(c, n, d);
        else if (n->op == OP_Conv) rc = emit_conv(c, n, d);
        else if (n->op == OP_MaxPool || n->op == OP_AveragePool) rc = emit_pool(c, n, d);
        else if (n->op == OP_GlobalAveragePool) rc = emit_gap(c, n);
        else if (n->op == OP_Transpose) rc = emit_transpose(c, n);
        else if (n->op == OP_Slice) rc = emit_slice(c, n, d);
        else if (n->op == OP_Concat) rc = emit_concat(c, n);
        else if (n->op == OP_Gather) rc = emit_gather(c, n);
        else if (n->op == OP_ReduceSum || n->op == OP_ReduceMean || n->op == OP_ReduceMax || n->op == OP_ReduceMin)
            rc = emit_reduce(c, n);
        else if (n->op == OP_LayerNormalization) rc = emit_layernorm(c, n, d);
        else if (n->op == OP_BatchNormalization) rc = emit_batchnorm(c, n);
        else if (n->op == OP_Fused) {
            FusedExpr fx;
            if (ir_fused_parse_node(n, &fx, d)) return -1;
            rc = emit_ew(c, n, n->out[0], (const Value *const *)n->in, n->n_in, &fx, d);
            ir_fused_free(&fx);
        } else {
            rc = emit_ew(c, n, n->out[0], (const Value *const *)n->in, n->n_in, NULL, d);
        }
        if (rc) return -1;
    }
    for (int k = 0; k < g->n_outputs; k++) {
        const Value *v = g->outputs[k];
        if (c->out_slot[v->id] == k || value_bytes(v) == 0) continue;
        w_printf(b, "    /* output %d is %s: copy */\n", k,
                 v->kind == VK_INPUT ? "a graph input" : v->kind != VK_TEMP ? "a constant" : "listed before");
        w_printf(b, "    if (cudaMemcpyAsync(outputs[%d], %s, %lld, cudaMemcpyDeviceToDevice, stream) != cudaSuccess) return -1;\n",
                 k, P(c, v), (long long)value_bytes(v));
    }
    return 0;
}

/* Weights offsets of the constants the code reads. */
static void layout_weights(Cu *c)
{
    int64_t off = 0;
    unsigned char *need = calloc((size_t)c->g->n_values + 1, 1);
    GC_ASSERT(need);
    for (int i = 0; i < c->g->n_values; i++)
        if (c->used[i]) need[root_of(c->g->values[i])->id] = 1;
    for (int i = 0; i < c->g->n_values; i++) {
        const Value *v = c->g->values[i];
        if (!need[i] || v->kind != VK_CONST) continue;
        c->woff[i] = off;
        off += ((int64_t)v->nbytes + 63) / 64 * 64;
    }
    free(need);
    c->wbytes = off;
}

static void gen_decls(Cu *c, Writer *w)
{
    const Graph *g = c->g;
    char sh[160];
    for (int i = 0; i < g->n_values; i++) {
        if (!c->used[i]) continue;
        const Value *v = g->values[i], *r = root_of(v);
        const char *ct = cfam_ctype(v->dtype), *id = c->id[i];
        if (r->kind == VK_INPUT) {
            int k = 0;
            while (g->inputs[k] != r) k++;
            w_printf(w, "    const %s *const %s = (const %s *)inputs[%d];", ct, id, ct, k);
        } else if (r->kind == VK_CONST) {
            GC_ASSERT(c->woff[r->id] >= 0);
            w_printf(w, "    const %s *const %s = (const %s *)(const void *)(weights + %lld);", ct, id, ct,
                     (long long)c->woff[r->id]);
        } else if (c->out_slot[r->id] >= 0) {
            w_printf(w, "    %s *const %s = (%s *)outputs[%d];", ct, id, ct, c->out_slot[r->id]);
        } else {
            GC_ASSERT(r->offset >= 0);
            w_printf(w, "    %s *const %s = (%s *)(void *)(arena + %lld);", ct, id, ct, (long long)r->offset);
        }
        w_printf(w, " /* %s%s '", ir_dtype_name(v->dtype), ir_shape_str(&v->shape, sh, sizeof sh));
        comment_text(w, v->name ? v->name : "");
        w_puts(w, "' */\n");
    }
}

static void port_macros(Writer *w, const char *N, const char *kind, int i, const Value *v)
{
    char dims[512];
    size_t o = 0;
    dims[o++] = '{';
    for (int k = 0; k < v->shape.rank && o + 24 < sizeof dims; k++)
        o += (size_t)snprintf(dims + o, sizeof dims - o, "%s%lld", k ? ", " : "", (long long)v->shape.dims[k]);
    snprintf(dims + o, sizeof dims - o, "}");
    w_printf(w, "#define %s_%s_%d_NAME ", N, kind, i);
    cgen_str_lit(w, v->name);
    w_puts(w, "\n");
    w_printf(w, "#define %s_%s_%d_DTYPE \"%s\"\n", N, kind, i, ir_dtype_name(v->dtype));
    w_printf(w, "#define %s_%s_%d_NPY_DESCR \"%s\"\n", N, kind, i, cgen_npy_descr(v->dtype));
    w_printf(w, "#define %s_%s_%d_RANK %d\n", N, kind, i, v->shape.rank);
    w_printf(w, "#define %s_%s_%d_DIMS %s\n", N, kind, i, v->shape.rank ? dims : "{0}");
    w_printf(w, "#define %s_%s_%d_NUMEL %lld\n", N, kind, i, (long long)ir_numel(&v->shape));
    w_printf(w, "#define %s_%s_%d_BYTES %lld\n\n", N, kind, i, (long long)value_bytes(v));
}

static void gen_header(Cu *c, Writer *w)
{
    const Graph *g = c->g;
    const char *N = c->name;
    w_printf(w, "/* %s.h: generated by graphc (--target=cuda); do not edit.\n", N);
    w_puts(w, " *\n");
    w_puts(w, " * The model on an NVIDIA GPU. Build the folder with `make` (nvcc from\n");
    w_puts(w, " * CUDA_HOME, default /usr/local/cuda; links cuBLAS and the CUDA runtime),\n");
    w_puts(w, " * or with `make emu` for the CPU emulation (no GPU, no CUDA toolkit).\n");
    w_puts(w, " *\n");
    w_printf(w, " * %s_init allocates the device arena (%s_DEVICE_ARENA_BYTES) and the\n", N, N);
    w_puts(w, " * weights on the device and copies the weights there, once; stream is a\n");
    w_puts(w, " * cudaStream_t (NULL: the default stream). It returns 0, or -1 with\n");
    w_printf(w, " * nothing allocated. %s_run launches the model on the stream, inputs and\n", N);
    w_puts(w, " * outputs in device memory, and returns without waiting; it allocates\n");
    w_printf(w, " * nothing. %s_run_host copies host inputs to the device, runs, copies\n", N);
    w_printf(w, " * the outputs back and waits. Both return 0, or -1 on a CUDA error.\n");
    w_printf(w, " * %s_free releases what %s_init allocated (NULL: nothing).\n */\n", N, N);
    w_printf(w, "#ifndef GRAPHC_CUDA_MODEL_%s_H\n#define GRAPHC_CUDA_MODEL_%s_H\n\n", N, N);
    w_puts(w, "#include <stddef.h>\n#include <stdint.h>\n\n");
    w_puts(w, "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n");
    w_printf(w, "#define %s_DEVICE_ARENA_BYTES %lld\n", N, (long long)g->arena_bytes);
    w_printf(w, "#define %s_WEIGHTS_BYTES %lld\n", N, (long long)c->wbytes);
    w_printf(w, "#define %s_NUM_INPUTS %d\n", N, g->n_inputs);
    w_printf(w, "#define %s_NUM_OUTPUTS %d\n\n", N, g->n_outputs);
    for (int i = 0; i < g->n_inputs; i++) port_macros(w, N, "INPUT", i, g->inputs[i]);
    for (int i = 0; i < g->n_outputs; i++) port_macros(w, N, "OUTPUT", i, g->outputs[i]);
    w_printf(w, "typedef struct %s_Model %s_Model;\n\n", N, N);
    w_printf(w, "int %s_init(%s_Model **model, void *stream);\n", N, N);
    w_printf(w, "int %s_run(%s_Model *model, const void *const *inputs, void *const *outputs);\n", N, N);
    w_printf(w, "int %s_run_host(%s_Model *model, const void *const *inputs, void *const *outputs);\n", N, N);
    w_printf(w, "void %s_free(%s_Model *model);\n\n", N, N);
    w_puts(w, "#ifdef __cplusplus\n}\n#endif\n\n#endif\n");
}

static void gen_source(Cu *c, Writer *w)
{
    const Graph *g = c->g;
    const char *N = c->name;
    const int ni = g->n_inputs ? g->n_inputs : 1, no = g->n_outputs ? g->n_outputs : 1;
    w_printf(w, "/* %s.cu: generated by graphc (--target=cuda); do not edit.\n", N);
    w_puts(w, " * CUDA C++ for nvcc, and C99 for the CPU emulation (-DGC_CUDA_EMULATE, gc_cuda.h). */\n");
    w_printf(w, "#include \"%s.h\"\n#include \"gc_cuda.h\"\n\n#include <stdlib.h>\n\n", N);
    w_printf(w, "#ifdef __cplusplus\nextern \"C\" {\n#endif\nextern const unsigned char %s_weights[];\n", N);
    w_puts(w, "#ifdef __cplusplus\n}\n#endif\n\n");
    w_printf(w, "struct %s_Model {\n", N);
    w_puts(w, "    cudaStream_t stream;\n    cublasHandle_t blas;\n    unsigned char *arena, *weights;\n");
    w_printf(w, "    void *in[%d], *out[%d];\n", ni, no);
    if (c->nconv) {
        w_puts(w, "    cudnnHandle_t dnn;\n");
        w_printf(w, "    cudnnTensorDescriptor_t cx[%d], cy[%d];\n    cudnnFilterDescriptor_t cw[%d];\n", c->nconv, c->nconv, c->nconv);
        w_printf(w, "    cudnnConvolutionDescriptor_t cc[%d];\n    cudnnConvolutionFwdAlgo_t algo[%d];\n", c->nconv, c->nconv);
    }
    w_puts(w, "};\n\n");
    w_puts(w, wtext(&c->kern));
    w_printf(w, "static int %s_schedule(%s_Model *m, const void *const *inputs, void *const *outputs)\n{\n", N, N);
    w_puts(w, "    unsigned char *const arena = m->arena;\n");
    w_puts(w, "    const unsigned char *const weights = m->weights;\n");
    w_puts(w, "    const cudaStream_t stream = m->stream;\n");
    w_puts(w, "    const cublasHandle_t blas = m->blas;\n");
    w_puts(w, "    (void)arena, (void)weights, (void)stream, (void)blas, (void)inputs, (void)outputs;\n");
    gen_decls(c, w);
    w_puts(w, "\n");
    w_puts(w, wtext(&c->body));
    w_puts(w, "    return cudaGetLastError() == cudaSuccess ? 0 : -1;\n}\n\n");

    w_printf(w, "void %s_free(%s_Model *m)\n{\n", N, N);
    w_puts(w, "    if (!m) return;\n");
    w_printf(w, "    for (int i = 0; i < %d; i++) cudaFree(m->in[i]);\n", ni);
    w_printf(w, "    for (int i = 0; i < %d; i++) cudaFree(m->out[i]);\n", no);
    w_puts(w, wtext(&c->fini));
    if (c->nconv) w_puts(w, "    if (m->dnn) cudnnDestroy(m->dnn);\n");
    w_puts(w, "    cudaFree(m->arena);\n    cudaFree(m->weights);\n");
    w_puts(w, "    if (m->blas) cublasDestroy(m->blas);\n    free(m);\n}\n\n");

    w_printf(w, "int %s_init(%s_Model **model, void *stream)\n{\n", N, N);
    w_printf(w, "    static const size_t in_bytes[%d] = {", ni);
    for (int i = 0; i < ni; i++) w_printf(w, "%s%lld", i ? ", " : "", (long long)(g->n_inputs ? value_bytes(g->inputs[i]) : 0));
    w_printf(w, "}, out_bytes[%d] = {", no);
    for (int i = 0; i < no; i++) w_printf(w, "%s%lld", i ? ", " : "", (long long)(g->n_outputs ? value_bytes(g->outputs[i]) : 0));
    w_puts(w, "};\n");
    w_printf(w, "    %s_Model *m = (%s_Model *)calloc(1, sizeof *m);\n", N, N);
    w_puts(w, "    *model = NULL;\n    if (!m) return -1;\n");
    w_puts(w, "    m->stream = (cudaStream_t)stream;\n");
    w_printf(w, "    int ok = cudaMalloc((void **)&m->arena, %lld) == cudaSuccess &&\n", (long long)(g->arena_bytes > 0 ? g->arena_bytes : 1));
    w_printf(w, "             cudaMalloc((void **)&m->weights, %lld) == cudaSuccess &&\n", (long long)(c->wbytes > 0 ? c->wbytes : 1));
    w_printf(w, "             cudaMemcpy(m->weights, %s_weights, %lld, cudaMemcpyHostToDevice) == cudaSuccess &&\n", N, (long long)c->wbytes);
    w_puts(w, "             cublasCreate(&m->blas) == CUBLAS_STATUS_SUCCESS && cublasSetStream(m->blas, m->stream) == CUBLAS_STATUS_SUCCESS;\n");
    w_printf(w, "    for (int i = 0; ok && i < %d; i++) ok = cudaMalloc(&m->in[i], in_bytes[i] ? in_bytes[i] : 1) == cudaSuccess;\n", ni);
    w_printf(w, "    for (int i = 0; ok && i < %d; i++) ok = cudaMalloc(&m->out[i], out_bytes[i] ? out_bytes[i] : 1) == cudaSuccess;\n", no);
    if (c->nconv) {
        w_puts(w, "    ok = ok && cudnnCreate(&m->dnn) == CUDNN_STATUS_SUCCESS && cudnnSetStream(m->dnn, m->stream) == CUDNN_STATUS_SUCCESS;\n");
        w_puts(w, wtext(&c->init));
    }
    w_printf(w, "    if (!ok) {\n        %s_free(m);\n        cudaGetLastError();\n        return -1;\n    }\n", N);
    w_puts(w, "    *model = m;\n    return 0;\n}\n\n");

    w_printf(w, "int %s_run(%s_Model *m, const void *const *inputs, void *const *outputs)\n{\n", N, N);
    w_printf(w, "    return m ? %s_schedule(m, inputs, outputs) : -1;\n}\n\n", N);

    w_printf(w, "int %s_run_host(%s_Model *m, const void *const *inputs, void *const *outputs)\n{\n", N, N);
    w_puts(w, "    if (!m) return -1;\n");
    for (int i = 0; i < g->n_inputs; i++)
        if (value_bytes(g->inputs[i]) > 0)
            w_printf(w, "    if (cudaMemcpyAsync(m->in[%d], inputs[%d], %lld, cudaMemcpyHostToDevice, m->stream) != cudaSuccess) return -1;\n",
                     i, i, (long long)value_bytes(g->inputs[i]));
    w_printf(w, "    if (%s_schedule(m, (const void *const *)m->in, m->out)) return -1;\n", N);
    for (int i = 0; i < g->n_outputs; i++)
        if (value_bytes(g->outputs[i]) > 0)
            w_printf(w, "    if (cudaMemcpyAsync(outputs[%d], m->out[%d], %lld, cudaMemcpyDeviceToHost, m->stream) != cudaSuccess) return -1;\n",
                     i, i, (long long)value_bytes(g->outputs[i]));
    w_puts(w, "    (void)inputs, (void)outputs; /* unread when every tensor is empty */\n");
    w_puts(w, "    return cudaStreamSynchronize(m->stream) == cudaSuccess ? 0 : -1;\n}\n");
}

/* The weights blob: NAME_weights.bin, linked in by the assembler's .incbin
 * (NAME_weights.S, GNU as, ELF), the default. */
static void gen_weights_s(Cu *c, Writer *w)
{
    const char *N = c->name;
    w_printf(w, "/* %s_weights.S: generated by graphc; do not edit. Links %s_weights.bin (%lld bytes)\n", N, N,
             (long long)c->wbytes);
    w_puts(w, " * into .rodata with the assembler's .incbin (GNU as, ELF); NAME_init copies it to the device. */\n");
    w_printf(w, "    .section .rodata\n    .balign 64\n    .globl %s_weights\n    .type %s_weights, %%object\n", N, N);
    w_printf(w, "%s_weights:\n    .incbin \"%s_weights.bin\"\n", N, N);
    if (!c->wbytes) w_puts(w, "    .byte 0\n");
    w_printf(w, "    .size %s_weights, . - %s_weights\n", N, N);
    w_puts(w, "    .section .note.GNU-stack,\"\",%progbits\n");
}

/* Writes the blob itself into dir/file. */
static int write_blob(Cu *c, const char *dir, const char *file, Diag *d)
{
    size_t n = strlen(dir) + strlen(file) + 2;
    char *path = malloc(n);
    GC_ASSERT(path);
    snprintf(path, n, "%s/%s", dir, file);
    FILE *f = fopen(path, "wb");
    int rc = 0;
    if (!f) rc = diag_error(d, "cannot write '%s'", path);
    static const unsigned char zeros[64];
    int64_t pos = 0;
    for (int i = 0; !rc && i < c->g->n_values; i++) {
        if (c->woff[i] < 0) continue;
        const Value *v = c->g->values[i];
        if (fwrite(zeros, 1, (size_t)(c->woff[i] - pos), f) != (size_t)(c->woff[i] - pos) ||
            fwrite(v->data, 1, v->nbytes, f) != v->nbytes)
            rc = diag_error(d, "cannot write '%s'", path);
        pos = c->woff[i] + (int64_t)v->nbytes;
    }
    if (!rc && fwrite(zeros, 1, (size_t)(c->wbytes - pos), f) != (size_t)(c->wbytes - pos))
        rc = diag_error(d, "cannot write '%s'", path);
    if (f && fclose(f) != 0 && !rc) rc = diag_error(d, "cannot write '%s'", path);
    free(path);
    return rc;
}

/* The weights blob as a C array (hex, 16 bytes a line): --weights=c-array,
 * for toolchains without GNU as (slow to compile for large models). */
static void gen_weights(Cu *c, Writer *w)
{
    w_printf(w, "/* %s_weights.c: generated by graphc; the constants the model reads, %lld bytes. */\n", c->name,
             (long long)c->wbytes);
    w_printf(w, "const unsigned char %s_weights[%lld] = {\n", c->name, (long long)(c->wbytes ? c->wbytes : 1));
    int64_t pos = 0, col = 0;
    for (int i = 0; i < c->g->n_values; i++) {
        if (c->woff[i] < 0) continue;
        const Value *v = c->g->values[i];
        for (; pos < c->woff[i]; pos++, col++) w_puts(w, col % 16 == 15 ? "0,\n" : "0,");
        for (size_t k = 0; k < v->nbytes; k++, pos++, col++)
            w_printf(w, col % 16 == 15 ? "0x%02x,\n" : "0x%02x,", ((const unsigned char *)v->data)[k]);
    }
    for (; pos < c->wbytes; pos++, col++) w_puts(w, col % 16 == 15 ? "0,\n" : "0,");
    if (!c->wbytes) w_puts(w, "0");
    w_puts(w, "};\n");
}

static void gen_makefile(Cu *c, Writer *w, int emit_main, const char *wsrc)
{
    const char *N = c->name;
    w_printf(w, "# Generated by graphc for model '%s' (--target=cuda); do not edit.\n#\n", N);
    w_printf(w, "#   make       lib%s.a%s with nvcc (CUDA_HOME, default /usr/local/cuda)\n", N,
             emit_main ? " and the runner" : "");
    if (emit_main)
        w_printf(w, "#   make emu   %s_main_emu: the runner built as C99 on the CPU emulation (gc_cuda_emu.h)\n", N);
    w_puts(w, "#\nCUDA_HOME ?= /usr/local/cuda\nNVCC ?= $(CUDA_HOME)/bin/nvcc\nNVCCFLAGS ?= -O2\n");
    w_puts(w, "CFLAGS ?= -O2 -std=c99 -Wall -Wextra\n\n");
    w_printf(w, ".PHONY: all%s clean\n\nall: lib%s.a", emit_main ? " emu" : "", N);
    if (emit_main) w_printf(w, " %s_main", N);
    w_puts(w, "\n\n");
    w_printf(w, "%s.o: %s.cu %s.h gc_cuda.h\n\t$(NVCC) $(NVCCFLAGS) -c %s.cu -o $@\n\n", N, N, N, N);
    w_printf(w, "%s_weights.o: %s\n\t$(CC) $(CFLAGS) -c %s -o $@\n\n", N, wsrc, wsrc);
    w_printf(w, "lib%s.a: %s.o %s_weights.o\n\t$(AR) rcs $@ %s.o %s_weights.o\n\n", N, N, N, N, N);
    if (emit_main) {
        w_printf(w, "%s_main: %s_main.c %s.h lib%s.a\n", N, N, N, N);
        w_printf(w, "\t$(NVCC) $(NVCCFLAGS) -o $@ %s_main.c lib%s.a -lcublas%s\n\n", N, N, c->nconv ? " -lcudnn" : "");
        w_printf(w, "emu: %s_main_emu\n\n", N);
        w_printf(w, "%s_main_emu: %s.cu %s.h %s_main.c %s gc_cuda.h gc_cuda_emu.h\n", N, N, N, N, wsrc);
        w_printf(w, "\t$(CC) $(CFLAGS) -DGC_CUDA_EMULATE -o $@ -x c %s.cu -x none %s_main.c %s -lm\n\n", N, N, wsrc);
    }
    w_printf(w, "clean:\n\trm -f %s.o %s_weights.o lib%s.a", N, N, N);
    if (emit_main) w_printf(w, " %s_main %s_main_emu", N, N);
    w_puts(w, "\n");
}

/* The runner: NAME_main OUTDIR IN0.npy ... -> OUTDIR/output_<i>.npy (plain C, host side). */
static void gen_main(Cu *c, Writer *w)
{
    const Graph *g = c->g;
    const char *N = c->name;
    const int ni = g->n_inputs ? g->n_inputs : 1, no = g->n_outputs ? g->n_outputs : 1;
    w_printf(w, "/* %s_main.c: generated by graphc (--target=cuda); do not edit.\n", N);
    w_printf(w, " *\n * Usage: %s_main OUTDIR IN0.npy IN1.npy ...\n", N);
    w_puts(w, " *\n * Reads every input from a .npy file (format 1.0-3.0, little-endian, C order,\n");
    w_puts(w, " * dtype and shape exactly the model's), runs the model on the GPU (or the CPU\n");
    w_puts(w, " * emulation) and writes OUTDIR/output_<i>.npy. Any error prints one line and\n");
    w_puts(w, " * exits with status 1. */\n");
    w_puts(w, "#define _POSIX_C_SOURCE 200809L\n");
    w_printf(w, "#include \"%s.h\"\n\n", N);
    w_puts(w, "#include <errno.h>\n#include <stdint.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n#include <sys/stat.h>\n\n");
    /* ports as tables */
    w_printf(w, "static const char *const in_descr[%d] = {", ni);
    for (int i = 0; i < g->n_inputs; i++) w_printf(w, "%s%s_INPUT_%d_NPY_DESCR", i ? ", " : "", N, i);
    if (!g->n_inputs) w_puts(w, "0");
    w_printf(w, "};\nstatic const int in_rank[%d] = {", ni);
    for (int i = 0; i < g->n_inputs; i++) w_printf(w, "%s%s_INPUT_%d_RANK", i ? ", " : "", N, i);
    if (!g->n_inputs) w_puts(w, "0");
    w_printf(w, "};\nstatic const long long in_dims[%d][%d] = {", ni, IR_MAX_RANK);
    for (int i = 0; i < g->n_inputs; i++) w_printf(w, "%s%s_INPUT_%d_DIMS", i ? ", " : "", N, i);
    if (!g->n_inputs) w_puts(w, "{0}");
    w_printf(w, "};\nstatic const size_t in_bytes[%d] = {", ni);
    for (int i = 0; i < g->n_inputs; i++) w_printf(w, "%s%s_INPUT_%d_BYTES", i ? ", " : "", N, i);
    if (!g->n_inputs) w_puts(w, "0");
    w_printf(w, "};\nstatic const char *const out_descr[%d] = {", no);
    for (int i = 0; i < g->n_outputs; i++) w_printf(w, "%s%s_OUTPUT_%d_NPY_DESCR", i ? ", " : "", N, i);
    if (!g->n_outputs) w_puts(w, "0");
    w_printf(w, "};\nstatic const int out_rank[%d] = {", no);
    for (int i = 0; i < g->n_outputs; i++) w_printf(w, "%s%s_OUTPUT_%d_RANK", i ? ", " : "", N, i);
    if (!g->n_outputs) w_puts(w, "0");
    w_printf(w, "};\nstatic const long long out_dims[%d][%d] = {", no, IR_MAX_RANK);
    for (int i = 0; i < g->n_outputs; i++) w_printf(w, "%s%s_OUTPUT_%d_DIMS", i ? ", " : "", N, i);
    if (!g->n_outputs) w_puts(w, "{0}");
    w_printf(w, "};\nstatic const size_t out_bytes[%d] = {", no);
    for (int i = 0; i < g->n_outputs; i++) w_printf(w, "%s%s_OUTPUT_%d_BYTES", i ? ", " : "", N, i);
    if (!g->n_outputs) w_puts(w, "0");
    w_puts(w, "};\n\n");
    static const char *const body[] = {
        "static int fail(const char *path, const char *why)\n",
        "{\n",
        "    fprintf(stderr, \"@N@_main: %s: %s\\n\", path, why);\n",
        "    return 1;\n",
        "}\n",
        "\n",
        "/* Reads a .npy of the given descr and shape into buf (bytes). 0 or -1. */\n",
        "static int read_npy(const char *path, const char *descr, int rank, const long long *dims, void *buf, size_t bytes)\n",
        "{\n",
        "    FILE *f = fopen(path, \"rb\");\n",
        "    if (!f) return fail(path, strerror(errno)), -1;\n",
        "    unsigned char pre[12];\n",
        "    size_t hl;\n",
        "    if (fread(pre, 1, 10, f) != 10 || memcmp(pre, \"\\x93NUMPY\", 6) != 0 || pre[6] < 1 || pre[6] > 3) {\n",
        "        fclose(f);\n",
        "        return fail(path, \"not a .npy file\"), -1;\n",
        "    }\n",
        "    if (pre[6] == 1) hl = (size_t)pre[8] | (size_t)pre[9] << 8;\n",
        "    else {\n",
        "        if (fread(pre + 10, 1, 2, f) != 2) { fclose(f); return fail(path, \"truncated header\"), -1; }\n",
        "        hl = (size_t)pre[8] | (size_t)pre[9] << 8 | (size_t)pre[10] << 16 | (size_t)pre[11] << 24;\n",
        "    }\n",
        "    char *h = (char *)malloc(hl + 1);\n",
        "    if (!h || fread(h, 1, hl, f) != hl) { free(h); fclose(f); return fail(path, \"truncated header\"), -1; }\n",
        "    h[hl] = 0;\n",
        "    char want[64];\n",
        "    snprintf(want, sizeof want, \"'descr': '%s'\", descr);\n",
        "    const char *sp = strstr(h, \"'shape': (\");\n",
        "    int ok = strstr(h, want) != NULL && strstr(h, \"'fortran_order': False\") != NULL && sp != NULL;\n",
        "    if (ok) {\n",
        "        char *p = (char *)sp + 10;\n",
        "        for (int k = 0; k < rank && ok; k++) {\n",
        "            char *e;\n",
        "            long long v = strtoll(p, &e, 10);\n",
        "            ok = e != p && v == dims[k];\n",
        "            p = e;\n",
        "            while (*p == ',' || *p == ' ') p++;\n",
        "        }\n",
        "        ok = ok && *p == ')';\n",
        "    }\n",
        "    free(h);\n",
        "    if (!ok) { fclose(f); return fail(path, \"dtype or shape differs from the model's input\"), -1; }\n",
        "    ok = fread(buf, 1, bytes, f) == bytes && fgetc(f) == EOF;\n",
        "    fclose(f);\n",
        "    return ok ? 0 : (fail(path, \"data size differs from the shape\"), -1);\n",
        "}\n",
        "\n",
        "static int write_npy(const char *path, const char *descr, int rank, const long long *dims, const void *buf, size_t bytes)\n",
        "{\n",
        "    char h[512], sh[400];\n",
        "    size_t o = 0;\n",
        "    sh[0] = 0;\n",
        "    for (int k = 0; k < rank; k++) o += (size_t)snprintf(sh + o, sizeof sh - o, \"%lld,%s\", dims[k], k + 1 < rank ? \" \" : \"\");\n",
        "    if (rank > 1) sh[o - 1] = 0;\n",
        "    int n = snprintf(h, sizeof h, \"{'descr': '%s', 'fortran_order': False, 'shape': (%s), }\", descr, sh);\n",
        "    while ((n + 11) % 64) h[n++] = ' ';\n",
        "    h[n++] = '\\n';\n",
        "    FILE *f = fopen(path, \"wb\");\n",
        "    if (!f) return fail(path, strerror(errno)), -1;\n",
        "    unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(n & 255), (unsigned char)(n >> 8)};\n",
        "    int ok = fwrite(pre, 1, 10, f) == 10 && fwrite(h, 1, (size_t)n, f) == (size_t)n && fwrite(buf, 1, bytes, f) == bytes;\n",
        "    ok = (fclose(f) == 0) && ok;\n",
        "    return ok ? 0 : (fail(path, \"cannot write\"), -1);\n",
        "}\n",
        "\n",
        "int main(int argc, char **argv)\n",
        "{\n",
        "    if (argc != 2 + @NI@) {\n",
        "        fprintf(stderr, \"usage: @N@_main OUTDIR\");\n",
        "        for (int i = 0; i < @NI@; i++) fprintf(stderr, \" IN%d.npy\", i);\n",
        "        fprintf(stderr, \"\\n\");\n",
        "        return 1;\n",
        "    }\n",
        "    void *in[@NIA@] = {0}, *out[@NOA@] = {0};\n",
        "    for (int i = 0; i < @NI@; i++)\n",
        "        if (!(in[i] = malloc(in_bytes[i] ? in_bytes[i] : 1)) || read_npy(argv[2 + i], in_descr[i], in_rank[i], in_dims[i], in[i], in_bytes[i])) return 1;\n",
        "    for (int i = 0; i < @NO@; i++)\n",
        "        if (!(out[i] = malloc(out_bytes[i] ? out_bytes[i] : 1))) return fail(argv[1], \"out of memory\");\n",
        "    @N@_Model *m;\n",
        "    if (@N@_init(&m, NULL)) return fail(\"@N@_init\", \"cannot set up the model on the GPU\");\n",
        "    if (@N@_run_host(m, (const void *const *)in, out)) return fail(\"@N@_run_host\", \"a CUDA call failed\");\n",
        "    @N@_free(m);\n",
        "    if (mkdir(argv[1], 0777) != 0 && errno != EEXIST) return fail(argv[1], strerror(errno));\n",
        "    for (int i = 0; i < @NO@; i++) {\n",
        "        char path[4096];\n",
        "        snprintf(path, sizeof path, \"%s/output_%d.npy\", argv[1], i);\n",
        "        if (write_npy(path, out_descr[i], out_rank[i], out_dims[i], out[i], out_bytes[i])) return 1;\n",
        "    }\n",
        "    for (int i = 0; i < @NIA@; i++) free(in[i]);\n",
        "    for (int i = 0; i < @NOA@; i++) free(out[i]);\n",
        "    return 0;\n",
        "}\n",
    };
    char ni_s[16], no_s[16], nia[16], noa[16];
    snprintf(ni_s, sizeof ni_s, "%d", g->n_inputs);
    snprintf(no_s, sizeof no_s, "%d", g->n_outputs);
    snprintf(nia, sizeof nia, "%d", ni);
    snprintf(noa, sizeof noa, "%d", no);
    for (size_t l = 0; l < sizeof body / sizeof body[0]; l++) {
        for (const char *s = body[l]; *s;) {
            if (strncmp(s, "@N@", 3) == 0) w_puts(w, N), s += 3;
            else if (strncmp(s, "@NI@", 4) == 0) w_puts(w, ni_s), s += 4;
            else if (strncmp(s, "@NO@", 4) == 0) w_puts(w, no_s), s += 4;
            else if (strncmp(s, "@NIA@", 5) == 0) w_puts(w, nia), s += 5;
            else if (strncmp(s, "@NOA@", 5) == 0) w_puts(w, noa), s += 5;
            else w_printf(w, "%c", *s++);
        }
    }
}

static int copy_runtime(const char *dir, const char *file, Diag *d)
{
    for (size_t f = 0; f < gc_runtime_files_count; f++)
        if (strcmp(gc_runtime_files[f].name, file) == 0) {
            Writer w;
            w_init(&w);
            w_puts(&w, (const char *)gc_runtime_files[f].data); /* text; NUL-terminated */
            int rc = cgen_save(&w, dir, file, d);
            w_free(&w);
            return rc;
        }
    return diag_error(d, "internal: the runtime file '%s' is not embedded", file);
}

static int cuda_write(const Graph *g, const char *dir, const BackendOptions *o, Diag *d)
{
    if (o->infer_graph) return diag_error(d, "the CUDA backend does not compile training steps yet");
    for (int i = 0; i < g->n_values; i++)
        if (g->values[i]->kind == VK_STATE) return diag_error(d, "the CUDA backend does not compile training state yet");
    if (o->weights != BACKEND_WEIGHTS_INCBIN && o->weights != BACKEND_WEIGHTS_CARRAY)
        return diag_error(d, "the CUDA backend links the weights in (incbin or c-array); --weights=file is not supported yet");
    Cu c;
    cu_init(&c, g, o->name);
    int rc = gen_nodes(&c, d);
    Writer hdr, src, wts, mk, mainw;
    w_init(&hdr), w_init(&src), w_init(&wts), w_init(&mk), w_init(&mainw);
    if (!rc) {
        layout_weights(&c);
        gen_header(&c, &hdr);
        gen_source(&c, &src);
        if (o->weights == BACKEND_WEIGHTS_CARRAY) gen_weights(&c, &wts);
        else gen_weights_s(&c, &wts);
        char wsrc[96];
        snprintf(wsrc, sizeof wsrc, o->weights == BACKEND_WEIGHTS_CARRAY ? "%s_weights.c" : "%s_weights.S", o->name);
        gen_makefile(&c, &mk, o->emit_main, wsrc);
        if (o->emit_main) gen_main(&c, &mainw);
    }
    char *tmp = rc ? NULL : cgen_dir_begin(dir, d);
    if (!rc && !tmp) rc = -1;
    if (!rc) {
        char f[128];
        snprintf(f, sizeof f, "%s.h", o->name);
        rc = cgen_save(&hdr, tmp, f, d);
        snprintf(f, sizeof f, "%s.cu", o->name);
        if (!rc) rc = cgen_save(&src, tmp, f, d);
        const int carray = o->weights == BACKEND_WEIGHTS_CARRAY;
        snprintf(f, sizeof f, carray ? "%s_weights.c" : "%s_weights.S", o->name);
        if (!rc) rc = cgen_save(&wts, tmp, f, d);
        snprintf(f, sizeof f, "%s_weights.bin", o->name);
        if (!rc && !carray) rc = write_blob(&c, tmp, f, d);
        if (!rc) rc = cgen_save(&mk, tmp, "Makefile", d);
        snprintf(f, sizeof f, "%s_main.c", o->name);
        if (!rc && o->emit_main) rc = cgen_save(&mainw, tmp, f, d);
        if (!rc) rc = copy_runtime(tmp, "gc_cuda.h", d);
        if (!rc) rc = copy_runtime(tmp, "gc_cuda_emu.h", d);
        if (rc) cgen_rmtree(tmp);
        else rc = cgen_dir_commit(tmp, dir, o->name, d);
    }
    free(tmp);
    w_free(&hdr), w_free(&src), w_free(&wts), w_free(&mk), w_free(&mainw);
    cu_fini(&c);
    return rc;
}

static int cuda_kernel_note(const Graph *g, const Node *n, char *buf, size_t cap)
{
    (void)g;
    const char *what = NULL;
    if (n->op == OP_Gemm || n->op == OP_MatMul) what = ir_epilogue(n) ? "cuBLAS sgemm, then a generated epilogue kernel" : "cuBLAS sgemm";
    else if (n->op == OP_Fused || ir_op(n->op)->scalar_expr) what = "a generated elementwise kernel";
    else if (n->op == OP_Softmax || n->op == OP_LogSoftmax) what = "a generated kernel, one thread per row";
    else if (n->op == OP_Conv) what = "cuDNN convolution forward (algorithm chosen at init within the workspace), then generated bias/epilogue kernels";
    else if (n->op == OP_MaxPool || n->op == OP_AveragePool || n->op == OP_GlobalAveragePool) what = "a generated kernel, one thread per output";
    if (!what) return 0;
    int k = snprintf(buf, cap, "%s", what);
    return k < 0 ? 0 : k;
}

const Backend backend_cuda = {
    .name = "cuda",
    .summary = "CUDA C for NVIDIA GPUs (first stage: elementwise, Fused, Gemm, MatMul, Conv, pooling, reductions, norms, index ops)",
    .supports = cuda_supports,
    .workspace = cuda_workspace,
    .kernel_note = cuda_kernel_note,
    .check_name = cgen_check_name,
    .write = cuda_write,
    .render = NULL,
};
