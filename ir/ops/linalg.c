/* linalg.c — operator descriptions of the linear-algebra family: MatMul and
 * Gemm (ONNX opset 17 semantics).
 *
 * MatMul follows numpy.matmul: a 1-D A is promoted to [1,K] and a 1-D B to
 * [K,1], the promoted dim is removed from the result again, and the batch
 * dims (all but the last two) broadcast with numpy rules. Gemm is the 2-D
 * Y = alpha * op(A) * op(B) + beta * C with C (optional) unidirectionally
 * broadcast to [M,N]. Det is the batched determinant (LU with partial
 * pivoting). Reference evaluations accumulate in double.
 */
#include "../op.h"
#include "linalg_attrs.h"
#include "../grad.h"
#include "../fused.h"
#include "geometry.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- shared checks ------------------------------------------------------ */

/* Both inputs numeric (not bool) and of the same dtype. */
static int check_same_numeric(Node *n, Diag *d, int i0, int i1)
{
    const OpDesc *od = ir_op(n->op);
    const Value *a = n->in[i0], *b = n->in[i1];
    if (a->dtype == DT_BOOL || a->dtype == DT_UNDEF)
        return diag_node_error(d, n, "input '%s' has dtype %s; expected a numeric type",
                               od->in_names[i0], ir_dtype_name(a->dtype));
    if (b->dtype != a->dtype)
        return diag_node_error(d, n, "input '%s' has dtype %s but input '%s' has %s",
                               od->in_names[i1], ir_dtype_name(b->dtype), od->in_names[i0],
                               ir_dtype_name(a->dtype));
    return 0;
}

/* ---- MatMul ------------------------------------------------------------- */

/* Inputs from x2 (MatMul) / x3 (Gemm) on are epilogue operands (ir/fused.h). */
static const char *const matmul_in[2 + FUSED_MAX_EPI] = {"A", "B", "x2", "x3", "x4", "x5", "x6", "x7", "x8", "x9"};
static const AttrSpec matmul_attrs[] = {[MATMUL_EPILOGUE] = {"epilogue", ATTR_STRING, NULL, 0}};
OP_ATTRS_CHECK(matmul_attrs, MATMUL_COUNT);
static const char *const one_out_Y[] = {"Y"};

/* Element strides of operand s's batch dims aligned to the broadcast batch
 * shape (0 along broadcast dims); `mat` is the size of one matrix. */
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

/* See geometry.h. */
int ir_matmul_geometry(const Node *n, int ia, int ib, IrMatMulGeom *g, Diag *d)
{
    const Shape *a = &n->in[ia]->shape, *b = &n->in[ib]->shape;
    const char *na = ir_op(n->op)->in_names[ia], *nb = ir_op(n->op)->in_names[ib];
    char sa[160], sb[160];
    if (a->rank < 1) return diag_node_error(d, n, "input '%s' must have rank >= 1, got a scalar", na);
    if (b->rank < 1) return diag_node_error(d, n, "input '%s' must have rank >= 1, got a scalar", nb);
    int64_t ka = a->dims[a->rank - 1];
    int64_t kb = b->rank == 1 ? b->dims[0] : b->dims[b->rank - 2];
    if (ka != kb)
        return diag_node_error(d, n, "input '%s' shape %s and input '%s' shape %s: inner dimensions differ (%lld vs %lld)",
                               na, ir_shape_str(a, sa, sizeof sa), nb, ir_shape_str(b, sb, sizeof sb),
                               (long long)ka, (long long)kb);
    g->K = ka;
    g->M = a->rank == 1 ? 1 : a->dims[a->rank - 2];
    g->N = b->rank == 1 ? 1 : b->dims[b->rank - 1];
    Shape ba = ir_shape(a->rank > 2 ? a->rank - 2 : 0, a->dims);
    Shape bb = ir_shape(b->rank > 2 ? b->rank - 2 : 0, b->dims);
    if (ir_broadcast(&ba, &bb, &g->batch))
        return diag_node_error(d, n, "input '%s' shape %s and input '%s' shape %s: batch dimensions do not broadcast",
                               na, ir_shape_str(a, sa, sizeof sa), nb, ir_shape_str(b, sb, sizeof sb));
    g->out = g->batch;
    if (a->rank > 1) g->out.dims[g->out.rank++] = g->M;
    if (b->rank > 1) g->out.dims[g->out.rank++] = g->N;
    g->na = ir_numel(&ba);
    g->nb = ir_numel(&bb);
    batch_strides(a, &g->batch, g->M * g->K, g->sa);
    batch_strides(b, &g->batch, g->K * g->N, g->sb);
    return 0;
}

/* See geometry.h. */
void ir_matmul_ref(const IrMatMulGeom *g, const double *A, const double *B, double *Y)
{
    int64_t idx[IR_MAX_RANK] = {0}, nbatch = ir_numel(&g->batch);
    for (int64_t bi = 0; bi < nbatch; bi++) {
        int64_t oa = 0, ob = 0;
        for (int k = 0; k < g->batch.rank; k++) { oa += idx[k] * g->sa[k]; ob += idx[k] * g->sb[k]; }
        const double *a = A + oa, *b = B + ob;
        double *y = Y + bi * g->M * g->N;
        for (int64_t i = 0; i < g->M; i++)
            for (int64_t j = 0; j < g->N; j++) {
                double s = 0;
                for (int64_t k = 0; k < g->K; k++) s += a[i * g->K + k] * b[k * g->N + j];
                y[i * g->N + j] = s;
            }
        for (int k = g->batch.rank - 1; k >= 0; k--) {
            if (++idx[k] < g->batch.dims[k]) break;
            idx[k] = 0;
        }
    }
}

static int matmul_infer(Node *n, Diag *d)
{
    IrMatMulGeom g;
    if (check_same_numeric(n, d, 0, 1)) return -1;
    if (ir_matmul_geometry(n, 0, 1, &g, d)) return -1;
    ir_set_out(n, 0, n->in[0]->dtype, &g.out);
    return ir_epilogue_infer(n, 2, d);
}

static int matmul_eval(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    IrMatMulGeom g;
    if (ir_matmul_geometry(n, 0, 1, &g, d)) return -1;
    ir_matmul_ref(&g, in[0], in[1], out[0]);
    return ir_epilogue_eval(n, in, out[0], d);
}

/* ---- gradients (ir/grad.h) ------------------------------------------------
 *
 * MatMul (numpy semantics): a 1-D operand is first made a matrix ([K] ->
 * [1,K] for A, [K,1] for B) and dY reshaped to match; then dA = dY B^T and
 * dB = A^T dY, each a MatMul with the last two dims of one operand
 * transposed, summed over broadcast batch dims back to the operand's shape.
 * Gemm: with A' = op(A), B' = op(B), dA' = alpha dY B'^T and dB' = alpha
 * A'^T dY, written as Gemms with the transpose flags chosen so that no
 * explicit Transpose is needed; dC = beta dY summed to C's shape. */

/* v with its last two dims swapped. */
static Value *swap_last2(GradCtx *gc, Value *v)
{
    int r = v->shape.rank;
    char perm[128];
    size_t len = 0;
    for (int i = 0; i < r; i++)
        len += (size_t)snprintf(perm + len, sizeof perm - len, "%s%d", i ? "," : "", i < r - 2 ? i : i == r - 2 ? r - 1 : r - 2);
    return gb1(gc, OP_Transpose, gb_fmt(gc, "perm=[%s]", perm), v);
}

static int matmul_grad(GradCtx *gc)
{
    const Node *n = gc->n;
    if (n->attrs[MATMUL_EPILOGUE].set) return diag_node_error(gc->d, n, "has no gradient once fused (autodiff runs before fusion)");
    Value *a = n->in[0], *b = n->in[1];
    Shape as = a->shape, bs = b->shape;
    if (as.rank == 1) as = ir_shape(2, (int64_t[]){1, a->shape.dims[0]});
    if (bs.rank == 1) bs = ir_shape(2, (int64_t[]){b->shape.dims[0], 1});
    Value *a2 = gb_reshape(gc, a, &as), *b2 = gb_reshape(gc, b, &bs);
    /* dY with the 1-D promotions undone: the shape MatMul(a2, b2) has */
    Shape ys = {0};
    Shape ab = as, bb = bs;
    ab.rank -= 2;
    bb.rank -= 2;
    if (ir_broadcast(&ab, &bb, &ys)) return diag_node_error(gc->d, n, "internal error: batch dims do not broadcast");
    ys.dims[ys.rank++] = as.dims[as.rank - 2];
    ys.dims[ys.rank++] = bs.dims[bs.rank - 1];
    Value *dy = gb_reshape(gc, gb_dy(gc, 0), &ys);
    if (gc->need[0]) {
        Value *da = gb2(gc, OP_MatMul, NULL, dy, swap_last2(gc, b2));
        gb_set(gc, 0, gb_reshape(gc, gb_reduce_to(gc, da, &as), &a->shape));
    }
    if (gc->need[1]) {
        Value *db = gb2(gc, OP_MatMul, NULL, swap_last2(gc, a2), dy);
        gb_set(gc, 1, gb_reshape(gc, gb_reduce_to(gc, db, &bs), &b->shape));
    }
    return gb_done(gc);
}

static int gemm_grad(GradCtx *gc)
{
    const Node *n = gc->n;
    if (n->attrs[GEMM_EPILOGUE].set) return diag_node_error(gc->d, n, "has no gradient once fused (autodiff runs before fusion)");
    double alpha = n->attrs[GEMM_ALPHA].f, beta = n->attrs[GEMM_BETA].f;
    int ta = (int)n->attrs[GEMM_TRANS_A].i, tb = (int)n->attrs[GEMM_TRANS_B].i;
    Value *a = n->in[0], *b = n->in[1], *dy = gb_dy(gc, 0);
    if (gc->need[0]) {
        Value *da = ta ? gb2(gc, OP_Gemm, gb_fmt(gc, "alpha=%.17g transA=%d transB=1", alpha, tb), b, dy)
                       : gb2(gc, OP_Gemm, gb_fmt(gc, "alpha=%.17g transB=%d", alpha, !tb), dy, b);
        gb_set(gc, 0, da);
    }
    if (gc->need[1]) {
        Value *db = tb ? gb2(gc, OP_Gemm, gb_fmt(gc, "alpha=%.17g transA=1 transB=%d", alpha, ta), dy, a)
                       : gb2(gc, OP_Gemm, gb_fmt(gc, "alpha=%.17g transA=%d", alpha, !ta), a, dy);
        gb_set(gc, 1, db);
    }
    if (ir_has_input(n, 2) && gc->need[2]) {
        Value *dc = gb_reduce_to(gc, dy, &n->in[2]->shape);
        if (beta != 1) dc = gb2(gc, OP_Mul, NULL, dc, gb_scalar(gc, dy->dtype, beta));
        gb_set(gc, 2, dc);
    }
    return gb_done(gc);
}

/* The gradient of A reads B and that of B reads A; C's reads nothing. */
static int matmul_bw_reads(const Node *n, int is_output, int i) { (void)n; return !is_output && i < 2; }

const OpDesc op_MatMul = {
    .name = "MatMul",
    .min_in = 2, .max_in = 2 + FUSED_MAX_EPI, .in_names = matmul_in,
    .min_out = 1, .max_out = 1, .out_names = one_out_Y,
    OP_ATTRS(matmul_attrs),
    .infer = matmul_infer,
    .infer_sym = ir_sym_matmul,
    .eval = matmul_eval,
    .gradient = matmul_grad,
    .backward_reads = matmul_bw_reads,
};

/* ---- Gemm --------------------------------------------------------------- */

static const char *const gemm_in[3 + FUSED_MAX_EPI] = {"A", "B", "C", "x3", "x4", "x5", "x6", "x7", "x8", "x9", "x10"};
static const AttrSpec gemm_attrs[] = {
    [GEMM_ALPHA] = {"alpha", ATTR_FLOAT, "1.0", 0},
    [GEMM_BETA] = {"beta", ATTR_FLOAT, "1.0", 0},
    [GEMM_TRANS_A] = {"transA", ATTR_INT, "0", 0},
    [GEMM_TRANS_B] = {"transB", ATTR_INT, "0", 0},
    [GEMM_EPILOGUE] = {"epilogue", ATTR_STRING, NULL, 0},
};
OP_ATTRS_CHECK(gemm_attrs, GEMM_COUNT);

static int gemm_dims(const Node *n, int64_t *M, int64_t *N, int64_t *K, Diag *d)
{
    const Shape *a = &n->in[0]->shape, *b = &n->in[1]->shape;
    char sa[160], sb[160];
    int ta = n->attrs[GEMM_TRANS_A].i != 0, tb = n->attrs[GEMM_TRANS_B].i != 0;
    if (a->rank != 2)
        return diag_node_error(d, n, "input 'A' must be 2-D, got shape %s", ir_shape_str(a, sa, sizeof sa));
    if (b->rank != 2)
        return diag_node_error(d, n, "input 'B' must be 2-D, got shape %s", ir_shape_str(b, sb, sizeof sb));
    *M = a->dims[ta ? 1 : 0];
    *K = a->dims[ta ? 0 : 1];
    int64_t kb = b->dims[tb ? 1 : 0];
    *N = b->dims[tb ? 0 : 1];
    if (*K != kb)
        return diag_node_error(d, n,
                               "input 'A' shape %s (transA=%d) and input 'B' shape %s (transB=%d): inner dimensions differ (%lld vs %lld)",
                               ir_shape_str(a, sa, sizeof sa), ta, ir_shape_str(b, sb, sizeof sb), tb,
                               (long long)*K, (long long)kb);
    if (n->n_in > 2 && n->in[2]) {
        const Shape *c = &n->in[2]->shape;
        int64_t want[2] = {*M, *N};
        int ok = c->rank <= 2;
        for (int k = 0; ok && k < c->rank; k++) {
            int64_t cd = c->dims[c->rank - 1 - k], wd = want[1 - k];
            if (cd != 1 && cd != wd) ok = 0;
        }
        if (!ok) {
            Shape ws = ir_shape(2, want);
            return diag_node_error(d, n, "input 'C' shape %s does not broadcast to the output shape %s",
                                   ir_shape_str(c, sa, sizeof sa), ir_shape_str(&ws, sb, sizeof sb));
        }
    }
    return 0;
}

static int gemm_infer(Node *n, Diag *d)
{
    int64_t M, N, K;
    if (check_same_numeric(n, d, 0, 1)) return -1;
    if (n->n_in > 2 && n->in[2] && check_same_numeric(n, d, 0, 2)) return -1;
    if (gemm_dims(n, &M, &N, &K, d)) return -1;
    int64_t od[2] = {M, N};
    Shape os = ir_shape(2, od);
    ir_set_out(n, 0, n->in[0]->dtype, &os);
    return ir_epilogue_infer(n, 3, d);
}

static int gemm_eval(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    int64_t M, N, K;
    if (gemm_dims(n, &M, &N, &K, d)) return -1;
    int ta = n->attrs[GEMM_TRANS_A].i != 0, tb = n->attrs[GEMM_TRANS_B].i != 0;
    double alpha = n->attrs[GEMM_ALPHA].f, beta = n->attrs[GEMM_BETA].f;
    const double *C = n->n_in > 2 ? in[2] : NULL;
    int64_t crs = 0, ccs = 0;
    if (C) {
        const Shape *c = &n->in[2]->shape;
        if (c->rank >= 1 && c->dims[c->rank - 1] != 1) ccs = 1;
        if (c->rank == 2 && c->dims[0] != 1) crs = c->dims[1];
    }
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
            double s = 0;
            for (int64_t k = 0; k < K; k++) {
                double av = ta ? in[0][k * M + i] : in[0][i * K + k];
                double bv = tb ? in[1][j * K + k] : in[1][k * N + j];
                s += av * bv;
            }
            s *= alpha;
            if (C) s += beta * C[i * crs + j * ccs];
            out[0][i * N + j] = s;
        }
    return ir_epilogue_eval(n, in, out[0], d);
}

const OpDesc op_Gemm = {
    .name = "Gemm",
    .min_in = 2, .max_in = 3 + FUSED_MAX_EPI, .in_names = gemm_in,
    .min_out = 1, .max_out = 1, .out_names = one_out_Y,
    OP_ATTRS(gemm_attrs),
    .infer = gemm_infer,
    .infer_sym = ir_sym_gemm,
    .eval = gemm_eval,
    .gradient = gemm_grad,
    .backward_reads = matmul_bw_reads,
};

/* ---- Det ---------------------------------------------------------------- */

/* Det: the determinant of each [M,M] matrix in the last two dims of X,
 * output shape X's leading dims. Computed by LU decomposition with partial
 * pivoting (row swaps flip the sign; a zero pivot column gives 0), in
 * double; the C backend runs the same algorithm in gcrt_det_*. */

static const char *const det_in[] = {"X"};

static int det_infer(Node *n, Diag *d)
{
    const Value *x = n->in[0];
    char b[160];
    if (x->dtype != DT_F32 && x->dtype != DT_F64 && x->dtype != DT_F16 && x->dtype != DT_BF16)
        return diag_node_error(d, n, "input 'X' has dtype %s; expected a floating-point type",
                               ir_dtype_name(x->dtype));
    const Shape *s = &x->shape;
    if (s->rank < 2 || s->dims[s->rank - 1] != s->dims[s->rank - 2])
        return diag_node_error(d, n, "input 'X' shape %s must end in a square matrix [..., M, M]",
                               ir_shape_str(s, b, sizeof b));
    Shape o = ir_shape(s->rank - 2, s->dims);
    ir_set_out(n, 0, x->dtype, &o);
    return 0;
}

/* Determinant of the m x m matrix a (overwritten by its LU factors). */
static double det_lu(double *a, int64_t m)
{
    double det = 1.0;
    for (int64_t k = 0; k < m; k++) {
        int64_t p = k;
        for (int64_t i = k + 1; i < m; i++)
            if (fabs(a[i * m + k]) > fabs(a[p * m + k])) p = i;
        if (a[p * m + k] == 0.0) return 0.0;
        if (p != k) {
            for (int64_t j = 0; j < m; j++) {
                double t = a[k * m + j];
                a[k * m + j] = a[p * m + j];
                a[p * m + j] = t;
            }
            det = -det;
        }
        double piv = a[k * m + k];
        det *= piv;
        for (int64_t i = k + 1; i < m; i++) {
            double f = a[i * m + k] / piv;
            for (int64_t j = k + 1; j < m; j++) a[i * m + j] -= f * a[k * m + j];
        }
    }
    return det;
}

static int det_eval(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    const Shape *s = &n->in[0]->shape;
    int64_t m = s->dims[s->rank - 1], nb = ir_numel(&n->out[0]->shape);
    double *a = malloc(sizeof(double) * (size_t)(m * m + 1));
    if (!a) return diag_node_error(d, n, "out of memory");
    for (int64_t b = 0; b < nb; b++) {
        memcpy(a, in[0] + b * m * m, sizeof(double) * (size_t)(m * m));
        out[0][b] = det_lu(a, m);
    }
    free(a);
    return 0;
}

/* dX = dY * det(X) * inverse(X)^T, which is dY times the cofactor matrix
 * C[i,j] = (-1)^(i+j) det(X without row i and column j). There is no
 * Inverse op; the cofactors compose from existing ops instead, and stay
 * defined for singular X: two Gathers with the constant indices of the
 * rows (columns) other than i (j) build every minor, [.., i, r, j, c],
 * a Transpose orders them [.., i, j, r, c], Det takes them all at once and
 * a constant checkerboard gives the signs. A 1x1 X has cofactor 1. */
static Value *det_const(GradCtx *gc, DType t, int rank, const int64_t *dims, const double *v)
{
    if (gc->err) return NULL;
    Shape s = ir_shape(rank, dims);
    int64_t ne = ir_numel(&s);
    unsigned char *buf = ir_alloc(gc->g, (size_t)ne * ir_dtype_size(t) + 1);
    for (int64_t e = 0; e < ne; e++) ir_store_f64(t, buf, (size_t)e, v[e]);
    return ir_add_const(gc->g, NULL, t, &s, buf, 0);
}

static int det_grad(GradCtx *gc)
{
    Value *x = gc->n->in[0];
    const Shape *xs = &x->shape;
    int r = xs->rank, b = r - 2;
    int64_t m = xs->dims[r - 1];
    Shape ks = *xs; /* dY with two trailing 1s */
    ks.dims[r - 2] = ks.dims[r - 1] = 1;
    Value *dy = gb_reshape(gc, gb_dy(gc, 0), &ks);
    if (m == 1) {
        gb_set(gc, 0, dy);
        return gb_done(gc);
    }
    double *others = ir_alloc(gc->g, sizeof(double) * (size_t)(m * (m - 1)));
    double *sign = ir_alloc(gc->g, sizeof(double) * (size_t)(m * m));
    for (int64_t i = 0; i < m; i++) {
        for (int64_t k = 0, q = 0; k < m; k++)
            if (k != i) others[i * (m - 1) + q++] = (double)k;
        for (int64_t j = 0; j < m; j++) sign[i * m + j] = (i + j) % 2 ? -1 : 1;
    }
    int64_t idims[2] = {m, m - 1}, sdims[2] = {m, m};
    Value *idx = det_const(gc, DT_I64, 2, idims, others);
    Value *rows = gb2(gc, OP_Gather, gb_fmt(gc, "axis=%d", r - 2), x, idx);         /* [.., i, r, n] */
    Value *minors = gb2(gc, OP_Gather, gb_fmt(gc, "axis=%d", r), rows, idx);       /* [.., i, r, j, c] */
    char perm[128];
    size_t len = 0;
    for (int k = 0; k < b; k++) len += (size_t)snprintf(perm + len, sizeof perm - len, "%d,", k);
    snprintf(perm + len, sizeof perm - len, "%d,%d,%d,%d", b, b + 2, b + 1, b + 3);
    Value *cof = gb1(gc, OP_Det, NULL, gb1(gc, OP_Transpose, gb_fmt(gc, "perm=[%s]", perm), minors));
    cof = gb2(gc, OP_Mul, NULL, cof, det_const(gc, x->dtype, 2, sdims, sign));
    gb_set(gc, 0, gb2(gc, OP_Mul, NULL, dy, cof));
    return gb_done(gc);
}

const OpDesc op_Det = {
    .name = "Det",
    .min_in = 1, .max_in = 1, .in_names = det_in,
    .min_out = 1, .max_out = 1, .out_names = one_out_Y,
    .infer = det_infer,
    .eval = det_eval,
    .gradient = det_grad,
    .backward_reads = ir_bw_inputs,
};
