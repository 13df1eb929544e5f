/* cuda_kernels.c — the CUDA backend's generated kernels (see cuda_emit.h):
 * one thread per output element (or per row for Softmax, reductions and
 * normalizations), shapes baked in as constants, every kernel written in
 * the common subset of CUDA C++ and C99 (gc_cuda.h). Elementwise and Fused
 * nodes print their expression trees with the C-family printer's CUDA
 * dialect and read operands with numpy broadcasting: size-1 output dims
 * dropped, dims every operand reads alike merged, per-operand offsets built
 * from the flat index.
 */
#include "cuda_emit.h"
#include "../cfamily/cfam_expr.h"
#include "../../ir/ops/geometry.h"
#include "../../ir/ops/nn_attrs.h"
#include "../../ir/ops/nn_common.h"
#include "../../ir/ops/reduce_attrs.h"
#include "../../ir/ops/shape_attrs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- shared helpers --------------------------------------------------------------- */

const char *cu_ptr(Cu *c, const Value *v)
{
    c->used[v->id] = 1;
    return c->id[v->id];
}

void cu_comment_text(Writer *w, const char *s)
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

void cu_node_comment(const Graph *g, Writer *w, const Node *n)
{
    char sh[160];
    w_printf(w, "/* %s", ir_op(n->op)->name);
    if (n->name && *n->name) {
        w_puts(w, " '");
        cu_comment_text(w, n->name);
        w_puts(w, "'");
    }
    w_puts(w, ":");
    for (int j = 0; j < n->n_out; j++) {
        w_printf(w, " %s%s", ir_dtype_name(n->out[j]->dtype), ir_shape_str_g(g, &n->out[j]->shape, sh, sizeof sh));
    }
    w_puts(w, " <-");
    for (int j = 0; j < n->n_in; j++) {
        if (!n->in[j]) w_puts(w, " -");
        else w_printf(w, " %s%s", ir_dtype_name(n->in[j]->dtype), ir_shape_str_g(g, &n->in[j]->shape, sh, sizeof sh));
    }
    w_puts(w, " */\n");
}

const char *cu_wtext(const Writer *w) { return w->buf ? w->buf : ""; }

int cu_is_float(DType t) { return t == DT_F32 || t == DT_F64; }

DType cu_compute_type(DType t) { return t == DT_F16 || t == DT_BF16 ? DT_F32 : t; }

void cu_load(Writer *w, DType t, const char *elem)
{
    if (t == DT_F16) w_printf(w, "GC_F16_TO_F32(%s)", elem);
    else if (t == DT_BF16) w_printf(w, "GC_BF16_TO_F32(%s)", elem);
    else w_puts(w, elem);
}

void cu_store(Writer *w, DType t, const char *elem, const char *val)
{
    if (t == DT_F16) w_printf(w, "%s = GC_F32_TO_F16((float)(%s));\n", elem, val);
    else if (t == DT_BF16) w_printf(w, "%s = GC_F32_TO_BF16((float)(%s));\n", elem, val);
    else if (t == DT_BOOL) w_printf(w, "%s = (uint8_t)((%s) != 0);\n", elem, val);
    else w_printf(w, "%s = (%s)(%s);\n", elem, cfam_ctype(t), val);
}

int cu_check_float(const Node *n, Diag *d)
{
    if (cu_is_float(n->in[0]->dtype) && cu_is_float(n->out[0]->dtype)) return 0;
    return diag_node_error(d, n, "the CUDA backend computes op '%s' in f32 and f64 only, got %s", ir_op(n->op)->name,
                           ir_dtype_name(n->in[0]->dtype));
}

static int is_half_t(DType t) { return t == DT_F16 || t == DT_BF16; }

/* The expression reading element `elem` of a dtype-t tensor in its compute
 * type (cu_load's: f16/bf16 widened to float), written into buf. */
static const char *cu_ld(char *buf, size_t cap, DType t, const char *elem)
{
    Writer w;
    w_init(&w);
    cu_load(&w, t, elem);
    snprintf(buf, cap, "%s", w.buf ? w.buf : "");
    w_free(&w);
    return buf;
}

int cu_kernel_begin(Cu *c, const Node *n)
{
    cu_node_comment(c->g, &c->kern, n);
    return c->nk++;
}

void cu_bstrides(const Shape *s, const Shape *os, int64_t *st)
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

void cu_strides_of(const Shape *s, int64_t *st)
{
    int64_t acc = 1;
    for (int k = s->rank - 1; k >= 0; k--) {
        st[k] = acc;
        acc *= s->dims[k];
    }
}

/* ---- elementwise and Fused ------------------------------------------------------- */

#define CU_MAX_OPS 64

/* The compute type of an elementwise node over in[0..n): the first non-bool
 * input's type, else bool (the C backend's rule). */
static DType compute_type(Value *const *in, int n)
{
    for (int j = 0; j < n; j++)
        if (in[j] && in[j]->dtype != DT_BOOL) return cu_compute_type(in[j]->dtype);
    return n && in[0] ? cu_compute_type(in[0]->dtype) : DT_BOOL;
}

/* Node n's scalar expression, as op kind `op`'s description builds it (n's
 * own op, or Cast for CastLike). */
static void write_expr_as(Writer *ex, Arena *trees, const Node *n, int op, const char *const *names)
{
    SxBuild b;
    sx_build_init(&b, trees);
    const Sx **args = arena_alloc(trees, sizeof *args * (size_t)(n->n_in ? n->n_in : 1));
    for (int j = 0; j < n->n_in; j++)
        if (names[j]) args[j] = sx_arg(&b, j, cu_compute_type(n->in[j]->dtype));
    const Sx *e = ir_op(op)->scalar_expr(n, &b, args, compute_type(n->in, n->n_in));
    cfam_expr(ex, &cfam_cuda, e, names);
}

static void write_expr(Writer *ex, Arena *trees, const Node *n, const char *const *names)
{
    write_expr_as(ex, trees, n, n->op, names);
}

/* A per-channel bias added to one operand as it is loaded (a Conv's bias
 * folded into its epilogue kernel): slot's value becomes
 * a<slot>[i] + cb[i / npos % channels]. */
typedef struct EwBias {
    int slot;
    const Value *b;
    int64_t npos, channels;
} EwBias;

/* Strides of operand v read along output shape os (0 on broadcast dims),
 * in v's storage: NCHW's dense strides (products of runtime dims), or
 * NHWC's (channel stride 1; static shapes only). */
static void phys_bstrides(const Cu *c, const Value *v, const Shape *os, CgenProd *st)
{
    if (!cu_value_nhwc(c, v)) {
        cu_bstrides_p(&v->shape, os, st);
        return;
    }
    const int64_t *d = v->shape.dims, s4[4] = {d[1] * d[2] * d[3], 1, d[3] * d[1], d[1]};
    for (int k = 0; k < os->rank; k++) {
        const int kv = k - (os->rank - 4);
        st[k] = cgen_prod(kv < 0 || d[kv] == 1 ? 0 : s4[kv]);
    }
}

/* One kernel over out's elements: loads operands ops[j] (NULL: unused) with
 * broadcasting, adds bias (NULL: none) to its slot, and stores what fx
 * computes (or node n's own expression). */
static int ew_kernel(Cu *c, const Node *n, int expr_op, const Value *out, const Value *const *ops, int nops,
                     const FusedExpr *fx, const EwBias *bias, Diag *d)
{
    if (nops > CU_MAX_OPS) return diag_node_error(d, n, "the CUDA backend takes at most %d operands here", CU_MAX_OPS);
    const Shape *os = &out->shape;
    if (ir_numel(os) == 0) return 0;
    /* merged loop dims: drop size-1 output dims, merge dims every operand reads alike */
    int rank = 0;
    CgenProd dims[IR_MAX_RANK], (*st)[IR_MAX_RANK] = calloc((size_t)nops + 1, sizeof *st),
                                (*fs)[IR_MAX_RANK] = calloc((size_t)nops + 1, sizeof *fs);
    GC_ASSERT(st && fs);
    phys_bstrides(c, out, os, fs[0]);
    for (int j = 0; j < nops; j++)
        if (ops[j]) phys_bstrides(c, ops[j], os, fs[j + 1]);
    /* the loop runs over out's elements in its storage order (NHWC: N, H,
     * W, C), so i is the output's offset */
    int ord[IR_MAX_RANK];
    for (int k = 0; k < os->rank; k++) ord[k] = k;
    if (cu_value_nhwc(c, out)) ord[1] = 2, ord[2] = 3, ord[3] = 1;
    for (int kk = 0; kk < os->rank; kk++) {
        const int k = ord[kk];
        if (os->dims[k] == 1 && !os->sym[k]) continue;
        const CgenProd dk = cgen_dims_prod(os, k, k + 1);
        int merge = rank > 0;
        for (int o = 0; o <= nops && merge; o++) {
            const CgenProd want = cgen_prod_mul(&fs[o][k], &dk);
            if (!cgen_prod_eq(&st[o][rank - 1], &want)) merge = 0;
        }
        if (merge) {
            dims[rank - 1] = cgen_prod_mul(&dims[rank - 1], &dk);
            for (int o = 0; o <= nops; o++) st[o][rank - 1] = fs[o][k];
        } else {
            dims[rank] = dk;
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
            if (!cgen_prod_eq(&st[j + 1][k], &st[0][k])) same = 0;
            if (!cgen_prod_is(&st[j + 1][k], 0)) zero = 0;
        }
        how[j] = same ? 0 : zero ? 1 : 2;
        if (how[j] == 2) any_off = 1;
    }

    Writer *k = &c->kern;
    const int kn = c->nk++;
    cu_node_comment(c->g, k, n);
    w_printf(k, "GC_KERNEL k%d(%s *y", kn, cfam_ctype(out->dtype));
    for (int j = 0; j < nops; j++)
        if (ops[j]) w_printf(k, ", const %s *a%d", cfam_ctype(ops[j]->dtype), j);
    if (bias) w_printf(k, ", const %s *cb", cfam_ctype(bias->b->dtype));
    w_printf(k, "%s)\n{\n", cu_kparam(c, n));
    cu_kuse(c, n, k);
    w_printf(k, "    GC_FOR_EACH(i, %s) {\n", cu_dims_sz(c, os, 0, os->rank));
    if (any_off) {
        for (int j = 0; j < nops; j++)
            if (ops[j] && how[j] == 2) w_printf(k, "        int64_t o%d = 0;\n", j);
        w_puts(k, "        int64_t r = i;\n");
        for (int q = rank - 1; q >= 0; q--) {
            int need = 0;
            for (int j = 0; j < nops; j++)
                if (ops[j] && how[j] == 2 && !cgen_prod_is(&st[j + 1][q], 0)) need = 1;
            if (q > 0) {
                if (need) w_printf(k, "        { const int64_t q = r %% %s;", cu_sz(c, dims[q]));
                else w_puts(k, "        {");
                for (int j = 0; j < nops; j++)
                    if (ops[j] && how[j] == 2 && !cgen_prod_is(&st[j + 1][q], 0))
                        w_printf(k, " o%d += q * %s;", j, cu_sz(c, st[j + 1][q]));
                w_printf(k, " r /= %s; }\n", cu_sz(c, dims[q]));
            } else {
                for (int j = 0; j < nops; j++)
                    if (ops[j] && how[j] == 2 && !cgen_prod_is(&st[j + 1][q], 0))
                        w_printf(k, "        o%d += r * %s;\n", j, cu_sz(c, st[j + 1][q]));
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
        char ld[64];
        snprintf(ld, sizeof ld, "a%d[%s]", j, idx);
        w_printf(k, "        const %s x%d = ", cfam_ctype(cu_compute_type(ops[j]->dtype)), j);
        if (bias && bias->slot == j) {
            GC_ASSERT(how[j] == 0); /* the bias index is the output's */
            /* f16/bf16: the biased value rounded to the slot's type, as the
             * Conv's own output (bias included) would be stored */
            const DType t = ops[j]->dtype;
            char cb[64];
            if (bias->npos == 1) snprintf(cb, sizeof cb, "cb[i %% %lld]", (long long)bias->channels);
            else snprintf(cb, sizeof cb, "cb[i / %lld %% %lld]", (long long)bias->npos, (long long)bias->channels);
            if (t == DT_F16 || t == DT_BF16) w_puts(k, t == DT_F16 ? "GC_F16_TO_F32(GC_F32_TO_F16(" : "GC_BF16_TO_F32(GC_F32_TO_BF16(");
            cu_load(k, t, ld);
            w_puts(k, " + ");
            cu_load(k, bias->b->dtype, cb);
            if (t == DT_F16 || t == DT_BF16) w_puts(k, "))");
        } else {
            cu_load(k, ops[j]->dtype, ld);
        }
        w_puts(k, ";\n");
    }
    free(st);
    Writer ex;
    w_init(&ex);
    Arena trees = {0};
    if (!fx) {
        write_expr_as(&ex, &trees, n, expr_op, loc);
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
            /* an f16/bf16 interior: rounded to its type and held as float,
             * as the unfused nodes would store and reload it (the
             * conversions of GC_CUDA_HALF, also where no tensor is half) */
            if (t == DT_F16 || t == DT_BF16) c->half = 1;
            if (t == DT_BOOL) w_printf(k, "        const uint8_t t%d = (uint8_t)((%s) != 0);\n", m, cu_wtext(&e));
            else if (t == DT_F16) w_printf(k, "        const float t%d = GC_F16_TO_F32(GC_F32_TO_F16((float)(%s)));\n", m, cu_wtext(&e));
            else if (t == DT_BF16) w_printf(k, "        const float t%d = GC_BF16_TO_F32(GC_F32_TO_BF16((float)(%s)));\n", m, cu_wtext(&e));
            else w_printf(k, "        const %s t%d = (%s)(%s);\n", cfam_ctype(t), m, cfam_ctype(t), cu_wtext(&e));
            w_free(&e);
        }
        free(mloc);
    }
    arena_free(&trees);
    w_puts(k, "        ");
    cu_store(k, out->dtype, "y[i]", cu_wtext(&ex));
    w_free(&ex);
    w_puts(k, "    }\n}\n\n");

    /* the launch */
    Writer *b = &c->body;
    w_printf(b, "    GC_LAUNCH(k%d, %s, stream, (%s", kn, cu_dims_sz(c, os, 0, os->rank), cu_ptr(c, out));
    for (int j = 0; j < nops; j++)
        if (ops[j]) w_printf(b, ", %s", cu_ptr(c, ops[j]));
    if (bias) w_printf(b, ", %s", cu_ptr(c, bias->b));
    w_printf(b, "%s));\n", cu_karg(c, n));
    return 0;
}

int cu_emit_ew(Cu *c, const Node *n, const Value *out, const Value *const *ops, int nops, const FusedExpr *fx,
               Diag *d)
{
    return ew_kernel(c, n, n->op, out, ops, nops, fx, NULL, d);
}

/* CastLike: Cast's expression (it reads only the node's input and output
 * dtypes) over input 0. */
static int emit_castlike(Cu *c, const Node *n, Diag *d)
{
    const Value *ops[2] = {n->in[0], NULL};
    return ew_kernel(c, n, OP_Cast, n->out[0], ops, 2, NULL, NULL, d);
}

/* The node's fused epilogue (Conv/Gemm/MatMul), applied to y in place;
 * with B, first y[n, c, ...] += B[c] (a Conv's bias), in the same kernel
 * when the epilogue reads y (else a kernel of its own). */
int cu_emit_epilogue_bias(Cu *c, const Node *n, const Value *B, Diag *d)
{
    const Value *Y = n->out[0];
    if (!ir_epilogue(n)) {
        if (B) cu_emit_channel_bias(c, n, Y, B);
        return 0;
    }
    FusedExpr fx;
    if (ir_fused_parse_node(n, &fx, d)) return -1;
    if (B && !fx.slot_used[n->n_in]) {
        cu_emit_channel_bias(c, n, Y, B);
        B = NULL;
    }
    const Value **ops = calloc((size_t)n->n_in + 1, sizeof *ops);
    GC_ASSERT(ops);
    for (int j = 0; j < n->n_in; j++) ops[j] = fx.slot_used[j] ? n->in[j] : NULL;
    ops[n->n_in] = fx.slot_used[n->n_in] ? Y : NULL;
    EwBias eb = {n->n_in, B,
                 !B ? 0 : cu_value_nhwc(c, Y) ? 1 : ir_numel(&Y->shape) / (Y->shape.dims[0] * Y->shape.dims[1]),
                 B ? Y->shape.dims[1] : 0};
    int rc = ew_kernel(c, n, n->op, Y, ops, n->n_in + 1, &fx, B ? &eb : NULL, d);
    ir_fused_free(&fx);
    free(ops);
    return rc;
}

int cu_emit_epilogue(Cu *c, const Node *n, Diag *d) { return cu_emit_epilogue_bias(c, n, NULL, d); }

/* An op with a scalar expression: its own kernel. */
static int emit_elementwise(Cu *c, const Node *n, Diag *d)
{
    return cu_emit_ew(c, n, n->out[0], (const Value *const *)n->in, n->n_in, NULL, d);
}

static int emit_fused(Cu *c, const Node *n, Diag *d)
{
    FusedExpr fx;
    if (ir_fused_parse_node(n, &fx, d)) return -1;
    int rc = cu_emit_ew(c, n, n->out[0], (const Value *const *)n->in, n->n_in, &fx, d);
    ir_fused_free(&fx);
    return rc;
}

/* ---- Softmax, LogSoftmax ------------------------------------------------------------- */

/* One row (outer x inner rows of len elements at stride inner) per
 * GC_LANES threads (a warp on the device, each lane every GC_LANES-th
 * element, partials combined by GC_LANE_MAX/GC_LANE_SUM; one thread in the
 * emulation): the max, the sum of exponentials, then the outputs, in the
 * input's type (every lane reads its elements of the row before the row's
 * writes, which are its own elements, so Y may be X's buffer). */
static int emit_softmax(Cu *c, const Node *n, Diag *d)
{
    int64_t outer, len, inner;
    if (nn_axis_split(n, SOFTMAX_AXIS, &outer, &len, &inner, d)) return -1;
    const Value *X = n->in[0], *Y = n->out[0];
    const Shape *xs = &X->shape;
    const int a = ir_norm_axis(n->attrs[SOFTMAX_AXIS].i, xs->rank);
    const int f64 = X->dtype == DT_F64, lg = n->op == OP_LogSoftmax;
    /* storage type T; CT computes (float for f16/bf16) */
    const char *T = cfam_ctype(X->dtype), *CT = cfam_ctype(cu_compute_type(X->dtype)), *ex = f64 ? "exp" : "expf",
               *lo = f64 ? "log" : "logf";
    if (outer * inner == 0 || len == 0) return 0;
    /* rows (outer x inner) and their length, products of runtime dims */
    const CgenProd po = cgen_dims_prod(xs, 0, a), pl = cgen_dims_prod(xs, a, a + 1), pi = cgen_dims_prod(xs, a + 1, xs->rank),
                   rows = cgen_prod_mul(&po, &pi), span = cgen_prod_mul(&pl, &pi);
    char xe[224], lx[288], ye[224], val[640];
    snprintf(xe, sizeof xe, "x[base + j * %s]", cu_sz(c, pi));
    snprintf(ye, sizeof ye, "y[base + j * %s]", cu_sz(c, pi));
    cu_ld(lx, sizeof lx, X->dtype, xe);
    Writer *k = &c->kern;
    const int kn = c->nk++;
    cu_node_comment(c->g, k, n);
    w_printf(k, "GC_KERNEL k%d(%s *y, const %s *x%s)\n{\n", kn, T, T, cu_kparam(c, n));
    cu_kuse(c, n, k);
    w_printf(k, "    GC_FOR_EACH(t, (int64_t)%s * GC_LANES) {\n", cu_sz(c, rows));
    w_puts(k, "        const int64_t r = t / GC_LANES, lane = t % GC_LANES;\n");
    w_printf(k, "        const int64_t base = r / %s * %s + r %% %s;\n", cu_sz(c, pi), cu_sz(c, span), cu_sz(c, pi));
    w_printf(k, "        %s mx = -INFINITY, s = 0;\n", CT);
    w_printf(k, "        for (int64_t j = lane; j < %s; j += GC_LANES) mx = %s > mx ? %s : mx;\n", cu_sz(c, pl), lx, lx);
    w_puts(k, "        mx = GC_LANE_MAX(mx);\n");
    w_printf(k, "        for (int64_t j = lane; j < %s; j += GC_LANES) s += %s(%s - mx);\n", cu_sz(c, pl), ex, lx);
    w_puts(k, "        s = GC_LANE_SUM(s);\n");
    if (lg) w_printf(k, "        const %s ls = %s(s);\n", CT, lo);
    w_printf(k, "        for (int64_t j = lane; j < %s; j += GC_LANES) {\n            ", cu_sz(c, pl));
    if (lg) snprintf(val, sizeof val, "%s - mx - ls", lx);
    else snprintf(val, sizeof val, "%s(%s - mx) / s", ex, lx);
    cu_store(k, Y->dtype, ye, val);
    w_puts(k, "        }\n    }\n}\n\n");
    w_printf(&c->body, "    GC_LAUNCH(k%d, (int64_t)%s * GC_LANES, stream, (%s, %s%s));\n", kn, cu_sz(c, rows), cu_ptr(c, Y),
             cu_ptr(c, X), cu_karg(c, n));
    return 0;
}

/* ---- pooling --------------------------------------------------------------------------- */

/* MaxPool without Indices, AveragePool, GlobalAveragePool: float types, 1 to
 * 3 spatial dims. */
static int pool_check(const Node *n, Diag *d)
{
    const char *op = ir_op(n->op)->name;
    const DType t = n->in[0]->dtype;
    if (!cu_is_float(t) && !is_half_t(t) && !(n->op == OP_MaxPool && (t == DT_U8 || t == DT_I8)))
        return diag_node_error(d, n, "the CUDA backend computes op '%s' in f32, f64, f16 and bf16 only, got %s", op,
                               ir_dtype_name(n->in[0]->dtype));
    if (is_half_t(t) && n->op == OP_MaxPool && n->n_out > 1 && n->out[1])
        return diag_node_error(d, n, "the CUDA backend takes MaxPool with Indices in f32, f64, u8 and i8 only, got %s",
                               ir_dtype_name(t));
    if (!cu_static_dims(&n->in[0]->shape, 1, n->in[0]->shape.rank))
        return diag_node_error(d, n, "the CUDA backend takes runtime shapes through op '%s' in the batch dim only", op);
    if (n->op == OP_GlobalAveragePool) return 0;
    int64_t k[IR_MAX_RANK], st[IR_MAX_RANK], dl[IR_MAX_RANK], pb[IR_MAX_RANK], pe[IR_MAX_RANK];
    int sr = ir_nn_window_geometry(n, k, st, dl, pb, pe);
    if (sr < 1 || sr > 3) return diag_node_error(d, n, "the CUDA backend takes 1 to 3 spatial dims for op '%s'", op);
    return 0;
}

/* MaxPool with the Indices output or on u8/i8 (gcrt_maxpool_idx's rules):
 * the first maximum of the taps inside the input (a NaN first tap yields
 * to any later number), its flat index in X (per plane row-major, or
 * column-major with storage_order=1, plus the plane's offset). The
 * geometry has three spatial dims, leading ones of size 1. */
static int emit_maxpool_idx(Cu *c, const Node *n, const int64_t *in3, const int64_t *out3, const int64_t *k3,
                            const int64_t *s3, const int64_t *d3, const int64_t *p3)
{
    const Value *X = n->in[0], *Y = n->out[0], *I = n->n_out > 1 ? n->out[1] : NULL;
    const int64_t plane = in3[0] * in3[1] * in3[2], P = out3[0] * out3[1] * out3[2];
    const int colmaj = n->attrs[MAXPOOL_STORAGE_ORDER].i == 1;
    const char *T = cfam_ctype(X->dtype);
    Writer *w = &c->kern;
    const int kn = cu_kernel_begin(c, n);
    w_printf(w, "GC_KERNEL k%d(%s *y, const %s *x%s%s)\n{\n", kn, T, T, I ? ", int64_t *idx" : "", cu_kparam(c, n));
    cu_kuse(c, n, w);
    w_printf(w, "    GC_FOR_EACH(i, %s) {\n", cu_dims_sz(c, &Y->shape, 0, Y->shape.rank));
    w_printf(w, "        const int64_t op = i %% %lld, q = i / %lld;\n", (long long)P, (long long)P);
    w_printf(w, "        const int64_t o[3] = {op / %lld, op / %lld %% %lld, op %% %lld};\n", (long long)(out3[1] * out3[2]),
             (long long)out3[2], (long long)out3[1], (long long)out3[2]);
    w_printf(w, "        const int64_t in[3] = {%lld, %lld, %lld}, kk[3] = {%lld, %lld, %lld}, st[3] = {%lld, %lld, %lld},\n",
             (long long)in3[0], (long long)in3[1], (long long)in3[2], (long long)k3[0], (long long)k3[1], (long long)k3[2],
             (long long)s3[0], (long long)s3[1], (long long)s3[2]);
    w_printf(w, "                      dl[3] = {%lld, %lld, %lld}, pd[3] = {%lld, %lld, %lld};\n", (long long)d3[0],
             (long long)d3[1], (long long)d3[2], (long long)p3[0], (long long)p3[1], (long long)p3[2]);
    w_printf(w, "        const %s *xq = x + q * %lld;\n", T, (long long)plane);
    w_printf(w, "        %s best = 0;\n%s        int found = 0;\n", T, I ? "        int64_t arg = 0;\n" : "");
    w_puts(w, "        for (int64_t t = 0; t < kk[0] * kk[1] * kk[2]; t++) {\n");
    w_puts(w, "            const int64_t tt[3] = {t / (kk[1] * kk[2]), t / kk[2] % kk[1], t % kk[2]};\n");
    w_puts(w, "            int64_t p[3], ok = 1;\n");
    w_puts(w, "            for (int a = 0; a < 3; a++) {\n");
    w_puts(w, "                p[a] = o[a] * st[a] - pd[a] + tt[a] * dl[a];\n");
    w_puts(w, "                ok = ok && p[a] >= 0 && p[a] < in[a];\n");
    w_puts(w, "            }\n");
    w_puts(w, "            if (!ok) continue;\n");
    w_puts(w, "            const int64_t off = (p[0] * in[1] + p[1]) * in[2] + p[2];\n");
    if (cu_is_float(X->dtype)) w_puts(w, "            if (!found || xq[off] > best || (best != best && xq[off] == xq[off])) {\n");
    else w_puts(w, "            if (!found || xq[off] > best) {\n");
    w_puts(w, "                best = xq[off];\n");
    if (I && colmaj) w_puts(w, "                arg = (p[2] * in[1] + p[1]) * in[0] + p[0];\n");
    else if (I) w_puts(w, "                arg = off;\n");
    w_puts(w, "            }\n            found = 1;\n        }\n        y[i] = best;\n");
    if (I) w_printf(w, "        idx[i] = q * %lld + arg;\n", (long long)plane);
    w_puts(w, "    }\n}\n\n");
    w_printf(&c->body, "    GC_LAUNCH(k%d, %s, stream, (%s, %s", kn, cu_dims_sz(c, &Y->shape, 0, Y->shape.rank), cu_ptr(c, Y),
             cu_ptr(c, X));
    if (I) w_printf(&c->body, ", %s", cu_ptr(c, I));
    w_printf(&c->body, "%s));\n", cu_karg(c, n));
    return 0;
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
    if (ir_numel(&Y->shape) == 0) return 0;
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
    if (is_max && ((n->n_out > 1 && n->out[1]) || (!cu_is_float(X->dtype) && !is_half_t(X->dtype))))
        return emit_maxpool_idx(c, n, in3, out3, k3, s3, d3, p3);
    /* storage type T; CT compares (float for f16/bf16) */
    const char *T = cfam_ctype(X->dtype), *CT = cfam_ctype(cu_compute_type(X->dtype));
    /* NHWC (cuda_layout.c; 2 spatial dims): x's taps C elements apart from
     * x + image * plane * C + channel; y's channel the fastest index */
    const int xin = cu_value_nhwc(c, X), yout = cu_value_nhwc(c, Y);
    const long long C = X->shape.dims[1], plane = (long long)(in3[0] * in3[1] * in3[2]);
    char xe[96], lx[160], xs[32] = "";
    if (xin) snprintf(xs, sizeof xs, " * %lld", C);
    if (xin) snprintf(xe, sizeof xe, "xq[((i0 * %lld + i1) * %lld + i2)%s]", (long long)in3[1], (long long)in3[2], xs);
    else snprintf(xe, sizeof xe, "xq[(i0 * %lld + i1) * %lld + i2]", (long long)in3[1], (long long)in3[2]);
    cu_ld(lx, sizeof lx, X->dtype, xe);
    Writer *kw = &c->kern;
    const int kn = c->nk++;
    cu_node_comment(c->g, kw, n);
    w_printf(kw, "GC_KERNEL k%d(%s *y, const %s *x%s)\n{\n", kn, T, T, cu_kparam(c, n));
    cu_kuse(c, n, kw);
    w_printf(kw, "    GC_FOR_EACH(i, %s) {\n", cu_dims_sz(c, &Y->shape, 0, Y->shape.rank));
    if (yout)
        w_printf(kw, "        const int64_t ch = i %% %lld, o2 = i / %lld %% %lld, o1 = i / %lld %% %lld, o0 = 0, img = i / %lld;\n", C,
                 C, (long long)out3[2], C * out3[2], (long long)out3[1], C * out3[1] * out3[2]);
    else
        w_printf(kw, "        const int64_t o2 = i %% %lld, o1 = i / %lld %% %lld, o0 = i / %lld %% %lld, q = i / %lld;\n",
                 (long long)out3[2], (long long)out3[2], (long long)out3[1], (long long)(out3[2] * out3[1]),
                 (long long)out3[0], (long long)(out3[0] * out3[1] * out3[2]));
    if (xin && !yout) w_printf(kw, "        const int64_t ch = q %% %lld, img = q / %lld;\n", C, C);
    if (xin) w_printf(kw, "        const %s *xq = x + img * %lld + ch;\n", T, plane * C);
    else if (yout) w_printf(kw, "        const %s *xq = x + (img * %lld + ch) * %lld;\n", T, C, plane);
    else w_printf(kw, "        const %s *xq = x + q * %lld;\n", T, plane);
    if (is_max) {
        w_printf(kw, "        %s best = -INFINITY;\n", CT);
        w_printf(kw, "        for (int64_t a = 0; a < %lld; a++) {\n", (long long)k3[0]);
        w_printf(kw, "            const int64_t i0 = o0 * %lld - %lld + a * %lld;\n", (long long)s3[0], (long long)p3[0], (long long)d3[0]);
        w_printf(kw, "            if (i0 < 0 || i0 >= %lld) continue;\n", (long long)in3[0]);
        w_printf(kw, "            for (int64_t b = 0; b < %lld; b++) {\n", (long long)k3[1]);
        w_printf(kw, "                const int64_t i1 = o1 * %lld - %lld + b * %lld;\n", (long long)s3[1], (long long)p3[1], (long long)d3[1]);
        w_printf(kw, "                if (i1 < 0 || i1 >= %lld) continue;\n", (long long)in3[1]);
        w_printf(kw, "                for (int64_t e = 0; e < %lld; e++) {\n", (long long)k3[2]);
        w_printf(kw, "                    const int64_t i2 = o2 * %lld - %lld + e * %lld;\n", (long long)s3[2], (long long)p3[2], (long long)d3[2]);
        w_printf(kw, "                    if (i2 >= 0 && i2 < %lld && %s > best) best = %s;\n", (long long)in3[2], lx, lx);
        w_puts(kw, "                }\n            }\n        }\n        ");
        cu_store(kw, Y->dtype, "y[i]", "best");
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
        snprintf(xe, sizeof xe, "xq[((a * %lld + b) * %lld + e)%s]", (long long)in3[1], (long long)in3[2], xs);
        w_printf(kw, "                for (int64_t e = lo[2]; e < hi[2]; e++) acc += %s;\n", cu_ld(lx, sizeof lx, X->dtype, xe));
        w_puts(kw, "        ");
        cu_store(kw, Y->dtype, "y[i]", "acc / (double)cnt");
    }
    w_puts(kw, "    }\n}\n\n");
    w_printf(&c->body, "    GC_LAUNCH(k%d, %s, stream, (%s, %s%s));\n", kn, cu_dims_sz(c, &Y->shape, 0, Y->shape.rank),
             cu_ptr(c, Y), cu_ptr(c, X), cu_karg(c, n));
    return 0;
}

/* GlobalAveragePool: one thread per (image, channel), the sum in double. */
static int emit_gap(Cu *c, const Node *n, Diag *d)
{
    (void)d;
    const Value *X = n->in[0], *Y = n->out[0];
    const int64_t NC = X->shape.dims[0] * X->shape.dims[1], Sz = NC ? ir_numel(&X->shape) / NC : 0,
                  C = X->shape.dims[1];
    if (NC == 0) return 0;
    const char *T = cfam_ctype(X->dtype);
    Writer *k = &c->kern;
    const int kn = c->nk++;
    cu_node_comment(c->g, k, n);
    w_printf(k, "GC_KERNEL k%d(%s *y, const %s *x%s)\n{\n", kn, T, T, cu_kparam(c, n));
    cu_kuse(c, n, k);
    w_printf(k, "    GC_FOR_EACH(q, %s) {\n        double acc = 0;\n", cu_dims_sz(c, &X->shape, 0, 2));
    char xe[160], lx[224], val[64];
    if (cu_value_nhwc(c, X)) /* NHWC: image q / C, channel q % C */
        snprintf(xe, sizeof xe, "x[(q / %lld * %lld + j) * %lld + q %% %lld]", (long long)C, (long long)Sz, (long long)C,
                 (long long)C);
    else snprintf(xe, sizeof xe, "x[q * %lld + j]", (long long)Sz);
    w_printf(k, "        for (int64_t j = 0; j < %lld; j++) acc += %s;\n        ", (long long)Sz, cu_ld(lx, sizeof lx, X->dtype, xe));
    snprintf(val, sizeof val, "acc / %lld.0", (long long)(Sz ? Sz : 1));
    cu_store(k, Y->dtype, "y[q]", val);
    w_puts(k, "    }\n}\n\n");
    w_printf(&c->body, "    GC_LAUNCH(k%d, %s, stream, (%s, %s%s));\n", kn, cu_dims_sz(c, &X->shape, 0, 2), cu_ptr(c, Y),
             cu_ptr(c, X), cu_karg(c, n));
    return 0;
}

/* ---- index maps: Transpose, Slice, Concat, Gather --------------------------------------- */

/* Whether product p may exceed 1 (a runtime dim may). */
static int above_one(const CgenProd *p) { return p->n > 0 ? p->c != 0 : p->c > 1; }

void cu_index_map_p(Cu *c, Writer *k, const char *var, int rank, const CgenProd *dims, const CgenProd *mult, int64_t base)
{
    w_printf(k, "        int64_t %s = %lld;\n", var, (long long)base);
    int last = -1; /* the outermost dim that matters */
    for (int q = 0; q < rank; q++)
        if (above_one(&dims[q]) && !cgen_prod_is(&mult[q], 0)) {
            last = q;
            break;
        }
    if (last < 0) return;
    w_puts(k, "        {\n            int64_t r = i;\n");
    for (int q = rank - 1; q > last; q--) {
        if (cgen_prod_is(&dims[q], 1)) continue;
        if (!cgen_prod_is(&mult[q], 0)) w_printf(k, "            %s += r %% %s * %s;\n", var, cu_sz(c, dims[q]), cu_sz(c, mult[q]));
        w_printf(k, "            r /= %s;\n", cu_sz(c, dims[q]));
    }
    int outer = 0; /* a dim of size > 1 outside `last` (its multiplier 0): r needs the modulus */
    for (int q = 0; q < last; q++)
        if (above_one(&dims[q])) outer = 1;
    if (outer) w_printf(k, "            %s += r %% %s * %s;\n        }\n", var, cu_sz(c, dims[last]), cu_sz(c, mult[last]));
    else w_printf(k, "            %s += r * %s;\n        }\n", var, cu_sz(c, mult[last]));
}

/* Writes, into a kernel over the elements i of an output of shape dims
 * (rank r), code that sets `int64_t VAR` to sum_k coord_k(i) * mult[k]
 * (+ add[k] * mult[k]): each coordinate taken by one % and one /. */
void cu_index_map(Writer *k, const char *var, int rank, const int64_t *dims, const int64_t *mult,
                         const int64_t *add)
{
    Cu scratch; /* only its text buffers: every size here is a literal */
    CgenProd pd[IR_MAX_RANK], pm[IR_MAX_RANK];
    int64_t base = 0;
    for (int q = 0; q < rank; q++) {
        base += (add ? add[q] : 0) * mult[q];
        pd[q] = cgen_prod(dims[q]);
        pm[q] = cgen_prod(mult[q]);
    }
    scratch.szk = 0;
    cu_index_map_p(&scratch, k, var, rank, pd, pm, base);
}

/* A kernel y[i] = x[base + map(i)] (one input, one output of the same
 * dtype; mult: the input offset of each output dim's step). */
static void emit_gather_map(Cu *c, const Node *n, const Value *X, const Value *Y, const CgenProd *mult, int64_t base)
{
    if (ir_numel(&Y->shape) == 0) return;
    const char *T = cfam_ctype(Y->dtype);
    CgenProd dims[IR_MAX_RANK];
    for (int q = 0; q < Y->shape.rank; q++) dims[q] = cgen_dims_prod(&Y->shape, q, q + 1);
    Writer *k = &c->kern;
    const int kn = c->nk++;
    cu_node_comment(c->g, k, n);
    w_printf(k, "GC_KERNEL k%d(%s *y, const %s *x%s)\n{\n", kn, T, T, cu_kparam(c, n));
    cu_kuse(c, n, k);
    w_printf(k, "    GC_FOR_EACH(i, %s) {\n", cu_dims_sz(c, &Y->shape, 0, Y->shape.rank));
    cu_index_map_p(c, k, "o", Y->shape.rank, dims, mult, 0);
    if (base) w_printf(k, "        y[i] = x[%lld + o];\n    }\n}\n\n", (long long)base);
    else w_puts(k, "        y[i] = x[o];\n    }\n}\n\n");
    w_printf(&c->body, "    GC_LAUNCH(k%d, %s, stream, (%s, %s%s));\n", kn, cu_dims_sz(c, &Y->shape, 0, Y->shape.rank), cu_ptr(c, Y),
             cu_ptr(c, X), cu_karg(c, n));
}

static int emit_transpose(Cu *c, const Node *n, Diag *d)
{
    (void)d;
    const Value *X = n->in[0], *Y = n->out[0];
    int perm[IR_MAX_RANK];
    CgenProd st[IR_MAX_RANK], mult[IR_MAX_RANK];
    ir_transpose_perm(n, perm);
    cu_strides_p(&X->shape, st);
    for (int q = 0; q < Y->shape.rank; q++) mult[q] = st[perm[q]];
    emit_gather_map(c, n, X, Y, mult, 0);
    return 0;
}

/* The inputs one Concat kernel takes at most (the emulation's and the JIT
 * launchers' 32 parameters): more inputs go through concat_groups. */
#define CONCAT_GROUP 24

/* Concat of many inputs (SSD's per-class selections: 90): one kernel per
 * group of CONCAT_GROUP inputs, one thread per element of the group's part
 * of the output, which starts at the extents of the inputs before it. */
static void concat_groups(Cu *c, const Node *n, int ax)
{
    const Value *Y = n->out[0];
    const Shape *ys = &Y->shape;
    const CgenProd inner = cgen_dims_prod(ys, ax + 1, ys->rank);
    const char *T = cfam_ctype(Y->dtype);
    char A[200], in_s[200];
    snprintf(A, sizeof A, "%s", cu_dims_sz(c, ys, ax, ax + 1));
    snprintf(in_s, sizeof in_s, "%s", cu_sz(c, inner));
    Writer before; /* the extents before the group: "dim[3] + dim[4] + " and a literal */
    w_init(&before);
    int64_t at = 0;
    for (int j0 = 0; j0 < n->n_in; j0 += CONCAT_GROUP) {
        const int j1 = j0 + CONCAT_GROUP < n->n_in ? j0 + CONCAT_GROUP : n->n_in;
        Writer span; /* the group's extent along the axis */
        w_init(&span);
        int64_t sc = 0;
        int any = 0;
        for (int j = j0; j < j1; j++) {
            const Value *v = n->in[j];
            if (!v || v->shape.dims[ax] == 0) continue;
            any = 1;
            if (v->shape.sym[ax]) w_printf(&span, "%s + ", cu_dims_sz(c, &v->shape, ax, ax + 1));
            else sc += v->shape.dims[ax];
        }
        char sp[1200], start[1200];
        snprintf(sp, sizeof sp, "(%s%lld)", span.len ? span.buf : "", (long long)sc);
        snprintf(start, sizeof start, "(%s%lld)", before.len ? before.buf : "", (long long)at);
        if (any) {
            CgenProd outer = cgen_dims_prod(ys, 0, ax);
            char total[1600];
            snprintf(total, sizeof total, "%s * %s * %s", cu_sz(c, outer), sp, in_s);
            Writer *k = &c->kern;
            const int kn = c->nk++;
            cu_node_comment(c->g, k, n);
            w_printf(k, "/* inputs %d to %d */\nGC_KERNEL k%d(%s *y", j0, j1 - 1, kn, T);
            for (int j = j0; j < j1; j++)
                if (n->in[j] && n->in[j]->shape.dims[ax] > 0) w_printf(k, ", const %s *a%d", T, j);
            w_printf(k, "%s)\n{\n", cu_kparam(c, n));
            cu_kuse(c, n, k);
            /* the ends of the group's inputs along the axis, from the group's start */
            int last = -1;
            for (int j = j0; j < j1; j++) {
                const Value *v = n->in[j];
                if (!v || v->shape.dims[ax] == 0) continue;
                w_printf(k, "    const int64_t e%d = ", j);
                if (last >= 0) w_printf(k, "e%d + ", last);
                w_printf(k, "%s;\n", cu_dims_sz(c, &v->shape, ax, ax + 1));
                last = j;
            }
            w_printf(k, "    GC_FOR_EACH(i, %s * e%d * %s) {\n", cu_sz(c, cgen_dims_prod(ys, 0, ax)), last, in_s);
            w_printf(k, "        const int64_t in = i %% %s, a = i / %s %% e%d, outer = i / %s / e%d;\n", in_s, in_s, last, in_s, last);
            w_printf(k, "        %s v;\n", T);
            int prev = -1;
            for (int j = j0; j < j1; j++) {
                const Value *v = n->in[j];
                if (!v || v->shape.dims[ax] == 0) continue;
                char b0[32] = "0";
                if (prev >= 0) snprintf(b0, sizeof b0, "e%d", prev);
                if (j == last) w_printf(k, "        %s", prev >= 0 ? "else " : "");
                else w_printf(k, "        %sif (a < e%d) ", prev >= 0 ? "else " : "", j);
                w_printf(k, "v = a%d[(outer * (e%d - %s) + a - %s) * %s + in];\n", j, j, b0, b0, in_s);
                prev = j;
            }
            w_printf(k, "        y[(outer * %s + %s + a) * %s + in] = v;\n    }\n}\n\n", A, start, in_s);
            Writer *b = &c->body;
            w_printf(b, "    GC_LAUNCH(k%d, %s, stream, (%s", kn, total, cu_ptr(c, Y));
            for (int j = j0; j < j1; j++)
                if (n->in[j] && n->in[j]->shape.dims[ax] > 0) w_printf(b, ", %s", cu_ptr(c, n->in[j]));
            w_printf(b, "%s));\n", cu_karg(c, n));
        }
        if (span.len) w_puts(&before, span.buf);
        at += sc;
        w_free(&span);
    }
    w_free(&before);
}

/* Concat: one thread per output element finds its input along the axis; a
 * runtime axis (e.g. data-dependent extents) reads the inputs' extents from
 * the shape table, each input's start the sum of those before it. */
static int emit_concat(Cu *c, const Node *n, Diag *d)
{
    (void)d;
    const Value *Y = n->out[0];
    if (ir_numel(&Y->shape) == 0) return 0;
    const Shape *ys = &Y->shape;
    const int ax = ir_norm_axis(n->attrs[CONCAT_AXIS].i, ys->rank);
    if (n->n_in > CONCAT_GROUP) {
        concat_groups(c, n, ax);
        return 0;
    }
    const CgenProd inner = cgen_dims_prod(ys, ax + 1, ys->rank), span = cgen_dims_prod(ys, ax, ys->rank); /* the axis and inside */
    const char *T = cfam_ctype(Y->dtype);
    Writer *k = &c->kern;
    const int kn = c->nk++;
    cu_node_comment(c->g, k, n);
    w_printf(k, "GC_KERNEL k%d(%s *y", kn, T);
    for (int j = 0; j < n->n_in; j++)
        if (n->in[j] && n->in[j]->shape.dims[ax] > 0) w_printf(k, ", const %s *a%d", T, j);
    w_printf(k, "%s)\n{\n", cu_kparam(c, n));
    cu_kuse(c, n, k);
    w_printf(k, "    GC_FOR_EACH(i, %s) {\n", cu_dims_sz(c, ys, 0, ys->rank));
    w_printf(k, "        const int64_t outer = i / %s, a = i / %s %% %s, in = i %% %s;\n", cu_sz(c, span), cu_sz(c, inner),
             cu_dims_sz(c, ys, ax, ax + 1), cu_sz(c, inner));
    int64_t at = 0;
    int first = 1;
    Writer atd; /* the runtime extents before this input, "dim[3] + dim[4] + " */
    w_init(&atd);
    for (int j = 0; j < n->n_in; j++) {
        const Value *v = n->in[j];
        if (!v || v->shape.dims[ax] == 0) continue;
        char aj[200], start[600], end[800];
        snprintf(aj, sizeof aj, "%s", cu_dims_sz(c, &v->shape, ax, ax + 1));
        if (!atd.len && !v->shape.sym[ax]) {
            snprintf(start, sizeof start, "%lld", (long long)at);
            snprintf(end, sizeof end, "%lld", (long long)(at + v->shape.dims[ax]));
        } else {
            snprintf(start, sizeof start, "(%s%lld)", atd.len ? atd.buf : "", (long long)at);
            snprintf(end, sizeof end, "(%s%s + %lld)", atd.len ? atd.buf : "", aj, (long long)at);
        }
        w_printf(k, "        %sif (a < %s) y[i] = a%d[(outer * %s + a - %s) * %s + in];\n", first ? "" : "else ", end, j, aj, start,
                 cu_sz(c, inner));
        first = 0;
        if (v->shape.sym[ax]) w_printf(&atd, "%s + ", aj);
        else at += v->shape.dims[ax];
    }
    w_free(&atd);
    w_puts(k, "    }\n}\n\n");
    Writer *b = &c->body;
    w_printf(b, "    GC_LAUNCH(k%d, %s, stream, (%s", kn, cu_dims_sz(c, ys, 0, ys->rank), cu_ptr(c, Y));
    for (int j = 0; j < n->n_in; j++)
        if (n->in[j] && n->in[j]->shape.dims[ax] > 0) w_printf(b, ", %s", cu_ptr(c, n->in[j]));
    w_printf(b, "%s));\n", cu_karg(c, n));
    return 0;
}

/* Gather: y[outer, j, inner] = x[outer, idx[j] (negative from the end;
 * clamped into range: an out-of-range index must not read outside x),
 * inner]. */
static int emit_gather(Cu *c, const Node *n, Diag *d)
{
    (void)d;
    const Value *X = n->in[0], *I = n->in[1], *Y = n->out[0];
    if (ir_numel(&Y->shape) == 0) return 0;
    const Shape *xs = &X->shape;
    const int ax = ir_norm_axis(n->attrs[GATHER_AXIS].i, xs->rank);
    const CgenProd inner = cgen_dims_prod(xs, ax + 1, xs->rank), ni = cgen_dims_prod(&I->shape, 0, I->shape.rank),
                   N = cgen_dims_prod(xs, ax, ax + 1), block = cgen_prod_mul(&inner, &ni);
    char last[200]; /* N - 1 */
    if (N.n == 0) snprintf(last, sizeof last, "%lld", (long long)(N.c - 1));
    else snprintf(last, sizeof last, "%s - 1", cu_sz(c, N));
    const char *T = cfam_ctype(Y->dtype), *TI = cfam_ctype(I->dtype);
    Writer *k = &c->kern;
    const int kn = c->nk++;
    cu_node_comment(c->g, k, n);
    w_printf(k, "GC_KERNEL k%d(%s *y, const %s *x, const %s *idx%s)\n{\n", kn, T, T, TI, cu_kparam(c, n));
    cu_kuse(c, n, k);
    w_printf(k, "    GC_FOR_EACH(i, %s) {\n", cu_dims_sz(c, &Y->shape, 0, Y->shape.rank));
    w_printf(k, "        const int64_t in = i %% %s, j = i / %s %% %s, outer = i / %s;\n", cu_sz(c, inner), cu_sz(c, inner),
             cu_sz(c, ni), cu_sz(c, block));
    w_printf(k, "        int64_t t = (int64_t)idx[j];\n        if (t < 0) t += %s;\n", cu_sz(c, N));
    w_printf(k, "        t = t < 0 ? 0 : t >= %s ? %s : t;\n", cu_sz(c, N), last);
    w_printf(k, "        y[i] = x[(outer * %s + t) * %s + in];\n    }\n}\n\n", cu_sz(c, N), cu_sz(c, inner));
    w_printf(&c->body, "    GC_LAUNCH(k%d, %s, stream, (%s, %s, %s%s));\n", kn, cu_dims_sz(c, &Y->shape, 0, Y->shape.rank),
             cu_ptr(c, Y), cu_ptr(c, X), cu_ptr(c, I), cu_karg(c, n));
    return 0;
}

/* Each axis's start and step of Slice n: the plan of its constant operands
 * (at the bounds for runtime dims), or, when `ends` is a shape value
 * (a runtime operand whose elements shape inference knows as terms, as
 * `x[:, :T]` exports it) with starts, axes and steps constant, those
 * (every step 1); the extents are then Y's. A runtime dim of X must start
 * at 0 with step 1 (its start would depend on the run's extent). */
static int slice_geom(const Node *n, int64_t *start, int64_t *step, Diag *d)
{
    const Shape *xs = &n->in[0]->shape;
    int rt = 0;
    for (int j = 1; j <= 4 && j < n->n_in; j++) rt |= n->in[j] && n->in[j]->kind != VK_CONST;
    if (!rt) {
        Shape out = {0};
        if (ir_slice_plan(n, start, step, &out, d)) return -1;
    } else {
        int64_t st[IR_MAX_RANK], ax[IR_MAX_RANK], sp[IR_MAX_RANK];
        const int ns = ir_const_ints(n->in[1], st, IR_MAX_RANK),
                  na = n->n_in > 3 && n->in[3] ? ir_const_ints(n->in[3], ax, IR_MAX_RANK) : ns,
                  np = n->n_in > 4 && n->in[4] ? ir_const_ints(n->in[4], sp, IR_MAX_RANK) : ns;
        if (!n->in[2]->shape_val || ns < 0 || na != ns || np != ns)
            return diag_node_error(d, n, "the CUDA backend takes Slice operands known only at run time for 'ends' alone, "
                                         "as a shape value (x[:, :T]), with constant starts, axes and steps");
        for (int k = 0; k < xs->rank; k++) start[k] = 0, step[k] = 1;
        for (int i = 0; i < ns; i++) {
            const int a = ir_norm_axis(n->n_in > 3 && n->in[3] ? ax[i] : i, xs->rank);
            if (a < 0 || (n->n_in > 4 && n->in[4] && sp[i] != 1) || (st[i] < 0 && xs->sym[a]))
                return diag_node_error(d, n, "the CUDA backend takes a runtime 'ends' with steps of 1 and starts that "
                                             "do not count from a runtime end");
            int64_t s0 = st[i] < 0 ? st[i] + xs->dims[a] : st[i];
            start[a] = s0 < 0 ? 0 : s0 > xs->dims[a] ? xs->dims[a] : s0;
        }
    }
    for (int k = 0; k < xs->rank; k++)
        if (xs->sym[k] && (start[k] != 0 || step[k] != 1))
            return diag_node_error(d, n, "the CUDA backend slices a runtime dim only from its start with step 1 (axis %d)", k);
    return 0;
}

/* Whether Slice n reads its operands back at run time: one is not a
 * constant, other than `ends` alone as a shape value (slice_geom's case). */
static int slice_reads_back(const Node *n)
{
    int rt = 0, others = 0;
    for (int j = 1; j <= 4 && j < n->n_in; j++) {
        const int r = n->in[j] && n->in[j]->kind != VK_CONST;
        rt |= r;
        others |= r && j != 2;
    }
    return rt && (others || !n->in[2]->shape_val);
}

/* Runtime shapes: operands read back (static shapes), or constant ones. */
static int slice_check(const Node *n, Diag *d)
{
    if (slice_reads_back(n))
        for (int j = 1; j <= 4 && j < n->n_in; j++)
            if (n->in[j] && ir_shape_has_sym(&n->in[j]->shape))
                return diag_node_error(d, n, "input '%s' must have a static shape to be read at run time", ir_op(n->op)->in_names[j]);
    return 0;
}

/* Slice resolved by the host as the C backend resolves it (dims_text.c):
 * operands given at run time read back (a model with data-dependent dims),
 * or constant ones on runtime extents (the start of a runtime dim counts
 * from its end, or a step other than 1). The host sets the output's
 * extents and launches y[i] = x[off + sum of coordinate q * stride q] with
 * the source offset and strides as the kernel's arguments; in a captured
 * graph that happens at capture, once per set of dims. */
static int emit_slice_host(Cu *c, const Node *n, Diag *d)
{
    const Value *X = n->in[0], *Y = n->out[0];
    const int r = X->shape.rank;
    Writer *b = &c->body;
    if (slice_reads_back(n) && !cu_eager(c->g)) /* a captured graph cannot wait for the host */
        return diag_node_error(d, n, "the CUDA backend reads Slice operands back only where they decide data-dependent dims");
    w_printf(b, "    { /* its ranges %s: the output's extents, first element and strides */\n",
             slice_reads_back(n) ? "from its operands, read back" : "at the run's extents");
    b->indent += 2;
    CgenDims o = cu_dims_ctx(c);
    CgenSliceText t = {1, "", "", "", ""}; /* the kernel walks the output itself: no dst */
    const int any = cgen_write_slice_dims(&o, n, &t);
    b->indent -= 2;
    if (cgen_sets_dims(c->g, n)) cu_dims_to_device(c);
    if (any) {
        const char *T = cfam_ctype(Y->dtype);
        Writer *k = &c->kern;
        const int kn = c->nk++;
        cu_node_comment(c->g, k, n);
        w_printf(k, "GC_KERNEL k%d(%s *y, const %s *x, int64_t off", kn, T, T);
        for (int a = 0; a < r; a++) w_printf(k, ", int64_t s%d", a);
        w_printf(k, "%s)\n{\n", cu_kparam(c, n));
        cu_kuse(c, n, k);
        w_printf(k, "    GC_FOR_EACH(i, %s) {\n        int64_t o = off, q = i;\n", cu_dims_sz(c, &Y->shape, 0, r));
        for (int a = r - 1; a >= 0; a--) {
            const char *e = cu_dims_sz(c, &Y->shape, a, a + 1);
            if (a) w_printf(k, "        o += q %% %s * s%d;\n        q /= %s;\n", e, a, e);
            else w_printf(k, "        o += q * s0;\n");
        }
        w_puts(k, "        y[i] = x[o];\n    }\n}\n\n");
        w_printf(b, "        GC_LAUNCH(k%d, %s, stream, (%s, %s, %s", kn, cu_dims_sz(c, &Y->shape, 0, r), cu_ptr(c, Y), cu_ptr(c, X),
                 t.off);
        for (int a = 0; a < r; a++) w_printf(b, ", %s[%d]", t.sst, a);
        w_printf(b, "%s));\n", cu_karg(c, n));
    }
    w_puts(b, "    }\n");
    return 0;
}

static int emit_slice(Cu *c, const Node *n, Diag *d)
{
    const Value *X = n->in[0], *Y = n->out[0];
    int64_t start[IR_MAX_RANK], step[IR_MAX_RANK];
    if (slice_reads_back(n) || (cgen_node_has_sym(n) && slice_geom(n, start, step, NULL))) return emit_slice_host(c, n, d);
    CgenProd st[IR_MAX_RANK], mult[IR_MAX_RANK], dims[IR_MAX_RANK];
    if (slice_geom(n, start, step, d)) return -1;
    cu_strides_p(&X->shape, st);
    /* the start offsets as a sum of products (a start is on a static axis;
     * its stride may hold runtime dims) */
    Writer off;
    w_init(&off);
    int64_t coff = 0;
    for (int q = 0; q < Y->shape.rank; q++) {
        mult[q] = st[q];
        mult[q].c *= step[q];
        if (!mult[q].c) mult[q] = cgen_prod(0);
        dims[q] = cgen_dims_prod(&Y->shape, q, q + 1);
        if (!start[q]) continue;
        CgenProd t = st[q];
        t.c *= start[q];
        if (t.n == 0) coff += t.c;
        else w_printf(&off, "%s + ", cu_sz(c, t));
    }
    if (ir_numel(&Y->shape) == 0) {
        w_free(&off);
        return 0;
    }
    const char *T = cfam_ctype(Y->dtype);
    Writer *k = &c->kern;
    const int kn = c->nk++;
    cu_node_comment(c->g, k, n);
    w_printf(k, "GC_KERNEL k%d(%s *y, const %s *x%s)\n{\n", kn, T, T, cu_kparam(c, n));
    cu_kuse(c, n, k);
    w_printf(k, "    GC_FOR_EACH(i, %s) {\n", cu_dims_sz(c, &Y->shape, 0, Y->shape.rank));
    cu_index_map_p(c, k, "o", Y->shape.rank, dims, mult, 0);
    w_printf(k, "        y[i] = x[%s%lld + o];\n    }\n}\n\n", cu_wtext(&off), (long long)coff);
    w_free(&off);
    w_printf(&c->body, "    GC_LAUNCH(k%d, %s, stream, (%s, %s%s));\n", kn, cu_dims_sz(c, &Y->shape, 0, Y->shape.rank),
             cu_ptr(c, Y), cu_ptr(c, X), cu_karg(c, n));
    return 0;
}

static int gather_check(const Node *n, Diag *d)
{
    return n->in[1]->dtype == DT_I32 || n->in[1]->dtype == DT_I64
               ? 0
               : diag_node_error(d, n, "the CUDA backend's Gather takes i32 or i64 indices");
}

/* ---- reductions and normalizations ---------------------------------------------------- */

/* ReduceSum whose axes arrive at run time (not empty): the host reads them
 * back (eager) and writes the kept and reduced axes' tables into the
 * workspace. */
static int reduce_reads_back(const Node *n)
{
    return n->op == OP_ReduceSum && n->n_in > 1 && n->in[1] && n->in[1]->kind != VK_CONST && ir_numel(&n->in[1]->shape) != 0;
}

/* nk, nr, n_red, then the tables kd, ks, rd, rs of rank entries each. */
static size_t reduce_workspace(const Node *n)
{
    return reduce_reads_back(n) ? sizeof(int64_t) * (size_t)(3 + 4 * n->in[0]->shape.rank) : 0;
}

static int reduce_check(const Node *n, Diag *d)
{
    const char *op = ir_op(n->op)->name;
    int mask[IR_MAX_RANK];
    if (n->in[0]->dtype == DT_BOOL)
        return diag_node_error(d, n, "the CUDA backend computes op '%s' on numbers only, got %s", op,
                               ir_dtype_name(n->in[0]->dtype));
    if (reduce_reads_back(n))
        return ir_shape_has_sym(&n->in[0]->shape) || ir_shape_has_sym(&n->in[1]->shape)
                   ? diag_node_error(d, n, "the CUDA backend reads ReduceSum's axes back for static shapes only")
                   : 0;
    if (ir_reduce_mask(n, mask, NULL) < 0)
        return diag_node_error(d, n, "the CUDA backend needs constant axes for op '%s'", op);
    return 0;
}

/* Into a reduction kernel: a loop over the cnt reduced elements of output
 * element o (offset p in x, value v as double) running `step`. */
static void reduce_loop(Cu *c, Writer *k, DType t, int nr, const CgenProd *rd, const CgenProd *rm, CgenProd cnt, const char *step)
{
    w_printf(k, "        for (int64_t j = 0; j < %s; j++) {\n", cu_sz(c, cnt));
    if (nr == 0) w_puts(k, "            const int64_t p = o;\n            (void)j;\n");
    else w_puts(k, "            int64_t p = o, r = j;\n");
    for (int q = nr - 1; q >= 0; q--) {
        if (q > 0)
            w_printf(k, "            p += r %% %s * %s;\n            r /= %s;\n", cu_sz(c, rd[q]), cu_sz(c, rm[q]), cu_sz(c, rd[q]));
        else w_printf(k, "            p += r * %s;\n", cu_sz(c, rm[q]));
    }
    w_puts(k, "            const double v = (double)");
    cu_load(k, t, "x[p]");
    w_printf(k, ";\n            %s\n        }\n", step);
}

/* ReduceSum with axes read back: the host checks them and sets the
 * output's extents as the C backend does (dims_text.c), and writes the
 * kept and reduced axes' tables into the workspace; one thread per output
 * element walks its reduced box through them, summing in double. */
static int emit_reduce_sum_read_back(Cu *c, const Node *n, Diag *d)
{
    const Value *X = n->in[0], *Y = n->out[0];
    const int r = X->shape.rank;
    Writer *b = &c->body;
    if (!cu_eager(c->g)) /* a captured graph cannot wait for the host */
        return diag_node_error(d, n, "the CUDA backend reads ReduceSum's axes back only where they decide data-dependent dims");
    GC_ASSERT(n->ws_offset >= 0 && n->ws_bytes >= reduce_workspace(n));
    w_puts(b, "    { /* its axes, read back: the output's extents and the kept and reduced axes */\n");
    b->indent += 2;
    CgenDims o = cu_dims_ctx(c);
    char v[CGEN_RS_COUNT][64];
    if (cgen_write_reduce_sum_dims(&o, n, v)) {
        w_printf(b, "int64_t rb_par[%d];\n", 3 + 4 * r);
        w_printf(b, "rb_par[0] = %s;\nrb_par[1] = %s;\nrb_par[2] = %s;\n", v[CGEN_RS_NK], v[CGEN_RS_NR], v[CGEN_RS_NRED]);
        w_printf(b, "for (int k = 0; k < %d; k++) {\n", r);
        w_printf(b, "    rb_par[3 + k] = k < %s ? %s[k] : 0;\n", v[CGEN_RS_NK], v[CGEN_RS_KD]);
        w_printf(b, "    rb_par[%d + k] = k < %s ? %s[k] : 0;\n", 3 + r, v[CGEN_RS_NK], v[CGEN_RS_KS]);
        w_printf(b, "    rb_par[%d + k] = k < %s ? %s[k] : 0;\n", 3 + 2 * r, v[CGEN_RS_NR], v[CGEN_RS_RD]);
        w_printf(b, "    rb_par[%d + k] = k < %s ? %s[k] : 0;\n}\n", 3 + 3 * r, v[CGEN_RS_NR], v[CGEN_RS_RS]);
        w_printf(b, "(void)%s, (void)%s, (void)%s, (void)%s;\n", v[CGEN_RS_NOUT], v[CGEN_RS_O], v[CGEN_RS_E], v[CGEN_RS_J]);
        w_printf(b, "if (cudaMemcpyAsync(arena + %lld, rb_par, sizeof rb_par, cudaMemcpyHostToDevice, stream) != cudaSuccess) return -1;\n",
                 (long long)n->ws_offset);
        b->indent--;
        w_puts(b, "}\n");
    }
    b->indent -= 2;
    cu_dims_to_device(c);
    w_puts(b, "    }\n");
    if (ir_numel(&Y->shape) == 0) return 0;
    const char *T = cfam_ctype(X->dtype);
    Writer *k = &c->kern;
    const int kn = cu_kernel_begin(c, n);
    w_printf(k, "GC_KERNEL k%d(%s *y, const %s *x, const int64_t *par%s)\n{\n", kn, cfam_ctype(Y->dtype), T, cu_kparam(c, n));
    cu_kuse(c, n, k);
    w_printf(k, "    GC_FOR_EACH(i, %s) {\n", cu_dims_sz(c, &Y->shape, 0, Y->shape.rank));
    w_puts(k, "        int64_t base = 0, q = i;\n");
    w_printf(k, "        for (int64_t j = 0; j < par[0]; j++) {\n            base += q %% par[3 + j] * par[%d + j];\n", 3 + r);
    w_puts(k, "            q /= par[3 + j];\n        }\n        double acc = 0;\n");
    w_puts(k, "        for (int64_t e = 0; e < par[2]; e++) {\n            int64_t at = base, p = e;\n");
    w_printf(k, "            for (int64_t j = 0; j < par[1]; j++) {\n                at += p %% par[%d + j] * par[%d + j];\n", 3 + 2 * r,
             3 + 3 * r);
    w_printf(k, "                p /= par[%d + j];\n            }\n            acc += (double)", 3 + 2 * r);
    cu_load(k, X->dtype, "x[at]");
    w_puts(k, ";\n        }\n        ");
    cu_store(k, Y->dtype, "y[i]", "acc");
    w_puts(k, "    }\n}\n\n");
    w_printf(b, "    GC_LAUNCH(k%d, %s, stream, (%s, %s, (const int64_t *)(arena + %lld)%s));\n", kn,
             cu_dims_sz(c, &Y->shape, 0, Y->shape.rank), cu_ptr(c, Y), cu_ptr(c, X), (long long)n->ws_offset, cu_karg(c, n));
    return 0;
}

/* Reduce*: one thread per output element, the reduced elements visited in
 * row-major order, accumulated in double (the C backend's rules: max/min
 * propagate NaN, the sum of nothing is 0, the product 1, the mean 0/0;
 * LogSumExp is m + log(sum exp(x - m)) after the maximum m, or m when m is
 * infinite or NaN). A no-op reduction copies. */
static int emit_reduce(Cu *c, const Node *n, Diag *d)
{
    if (reduce_reads_back(n)) return emit_reduce_sum_read_back(c, n, d);
    const Value *X = n->in[0], *Y = n->out[0];
    int mask[IR_MAX_RANK];
    const int noop = ir_reduce_mask(n, mask, NULL);
    if (ir_numel(&Y->shape) == 0) return 0;
    const char *T = cfam_ctype(X->dtype);
    const Shape *xs = &X->shape;
    CgenProd st[IR_MAX_RANK], kd[IR_MAX_RANK], km[IR_MAX_RANK], rd[IR_MAX_RANK], rm[IR_MAX_RANK], cnt = cgen_prod(1);
    cu_strides_p(xs, st);
    int nk = 0, nr = 0;
    for (int q = 0; q < xs->rank; q++) {
        const CgenProd dq = cgen_dims_prod(xs, q, q + 1);
        if (noop == 1 || !mask[q]) kd[nk] = dq, km[nk++] = st[q];
        else rd[nr] = dq, rm[nr++] = st[q], cnt = cgen_prod_mul(&cnt, &dq);
    }
    Writer *k = &c->kern;
    const int kn = cu_kernel_begin(c, n);
    w_printf(k, "GC_KERNEL k%d(%s *y, const %s *x%s)\n{\n", kn, T, T, cu_kparam(c, n));
    cu_kuse(c, n, k);
    w_printf(k, "    GC_FOR_EACH(i, %s) {\n", cu_dims_sz(c, &Y->shape, 0, Y->shape.rank));
    cu_index_map_p(c, k, "o", nk, kd, km, 0);
    const int op = n->op;
    const char *val = "acc";
    if (op == OP_ReduceLogSumExp) {
        w_puts(k, "        double mx = -INFINITY, acc = 0;\n");
        reduce_loop(c, k, X->dtype, nr, rd, rm, cnt, "if (v != v || v > mx) mx = v;");
        reduce_loop(c, k, X->dtype, nr, rd, rm, cnt, "acc += exp(v - mx);");
        val = "mx - mx == 0 ? mx + log(acc) : mx";
    } else if (op == OP_ReduceMax || op == OP_ReduceMin) {
        const int mx = op == OP_ReduceMax;
        w_printf(k, "        double acc = %sINFINITY;\n", mx ? "-" : "");
        reduce_loop(c, k, X->dtype, nr, rd, rm, cnt, mx ? "if (v != v || v > acc) acc = v;" : "if (v != v || v < acc) acc = v;");
    } else {
        w_printf(k, "        double acc = %d;\n", op == OP_ReduceProd);
        reduce_loop(c, k, X->dtype, nr, rd, rm, cnt,
                    op == OP_ReduceProd                                   ? "acc *= v;"
                    : op == OP_ReduceL1                                   ? "acc += fabs(v);"
                    : op == OP_ReduceL2 || op == OP_ReduceSumSquare ? "acc += v * v;"
                                                                          : "acc += v;");
        val = op == OP_ReduceL2 ? "sqrt(acc)" : op == OP_ReduceLogSum ? "log(acc)" : "acc";
    }
    char mean[240];
    if (cnt.n == 0) snprintf(mean, sizeof mean, "acc / %lld.0", (long long)cnt.c);
    else snprintf(mean, sizeof mean, "acc / (double)(%s)", cu_sz(c, cnt));
    w_puts(k, "        ");
    cu_store(k, Y->dtype, "y[i]", op == OP_ReduceMean ? mean : val);
    w_puts(k, "    }\n}\n\n");
    w_printf(&c->body, "    GC_LAUNCH(k%d, %s, stream, (%s, %s%s));\n", kn, cu_dims_sz(c, &Y->shape, 0, Y->shape.rank), cu_ptr(c, Y),
             cu_ptr(c, X), cu_karg(c, n));
    return 0;
}

static int layernorm_check(const Node *n, Diag *d)
{
    if ((!cu_is_float(n->in[0]->dtype) && !is_half_t(n->in[0]->dtype)) || n->in[1]->dtype != n->in[0]->dtype ||
        (n->n_in > 2 && n->in[2] && n->in[2]->dtype != n->in[0]->dtype))
        return diag_node_error(d, n, "the CUDA backend computes LayerNormalization in f32, f64, f16 and bf16, one dtype");
    for (int j = 1; j < n->n_out; j++)
        if (n->out[j] && n->out[j]->dtype != n->in[0]->dtype && !cu_is_float(n->out[j]->dtype))
            return diag_node_error(d, n, "the CUDA backend takes LayerNormalization's Mean/InvStdDev in f32, f64 or the dtype of X");
    const Shape *xs = &n->in[0]->shape;
    const int a = ir_norm_axis(n->attrs[LN_AXIS].i, xs->rank);
    if (a >= 0 && !cu_static_dims(xs, a, xs->rank))
        return diag_node_error(d, n, "the CUDA backend normalizes over static dims only (a runtime dim from axis %d on)", a);
    return 0;
}

/* LayerNormalization: one row (the dims from axis on) per GC_LANES threads
 * (a warp on the device, each lane every GC_LANES-th element, partial sums
 * combined by GC_LANE_SUM; one thread in the emulation): mean, variance
 * (two passes, in double; Mean and InvStdDev stored by lane 0 when asked),
 * then y = (x - mean) * rstd * scale + b,
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
    cu_bstrides(&Sc->shape, &row, ss);
    if (B) cu_bstrides(&B->shape, &row, bs);
    const char *T = cfam_ctype(X->dtype);
    char eps[48];
    cfam_lit(eps, sizeof eps, DT_F64, n->attrs[LN_EPSILON].f);
    Writer *k = &c->kern;
    const int kn = c->nk++;
    cu_node_comment(c->g, k, n);
    const Value *Mo = n->n_out > 1 ? n->out[1] : NULL, *Io = n->n_out > 2 ? n->out[2] : NULL;
    w_printf(k, "GC_KERNEL k%d(%s *y, const %s *x, const %s *sc%s%s%s", kn, T, T, T, B ? ", const " : "", B ? T : "",
             B ? " *bb" : "");
    if (Mo) w_printf(k, ", %s *mo", cfam_ctype(Mo->dtype));
    if (Io) w_printf(k, ", %s *io", cfam_ctype(Io->dtype));
    w_printf(k, "%s)\n{\n", cu_kparam(c, n));
    cu_kuse(c, n, k);
    w_printf(k, "    GC_FOR_EACH(t, (int64_t)%s * GC_LANES) {\n", cu_dims_sz(c, xs, 0, a));
    w_puts(k, "        const int64_t rw = t / GC_LANES, lane = t % GC_LANES;\n");
    w_printf(k, "        const %s *xr = x + rw * %lld;\n        %s *yr = y + rw * %lld;\n", T, (long long)inner, T,
             (long long)inner);
    w_puts(k, "        double mean = 0, var = 0;\n");
    char lj[96], li[96], ls[96], lb[96], val[320];
    cu_ld(lj, sizeof lj, X->dtype, "xr[j]");
    cu_ld(li, sizeof li, X->dtype, "xr[i]");
    cu_ld(ls, sizeof ls, Sc->dtype, "sc[s]");
    if (B) cu_ld(lb, sizeof lb, B->dtype, "bb[t]");
    w_printf(k, "        for (int64_t j = lane; j < %lld; j += GC_LANES) mean += %s;\n", (long long)inner, lj);
    w_printf(k, "        mean = GC_LANE_SUM(mean) / %lld.0;\n", (long long)inner);
    w_printf(k, "        for (int64_t j = lane; j < %lld; j += GC_LANES) var += (%s - mean) * (%s - mean);\n", (long long)inner,
             lj, lj);
    w_puts(k, "        var = GC_LANE_SUM(var);\n");
    w_printf(k, "        const double rstd = 1.0 / sqrt(var / %lld.0 + %s);\n", (long long)inner, eps);
    if (Mo) {
        w_puts(k, "        if (lane == 0) ");
        cu_store(k, Mo->dtype, "mo[rw]", "mean");
    }
    if (Io) {
        w_puts(k, "        if (lane == 0) ");
        cu_store(k, Io->dtype, "io[rw]", "rstd");
    }
    w_printf(k, "        for (int64_t i = lane; i < %lld; i += GC_LANES) {\n", (long long)inner);
    cu_index_map(k, "s", row.rank, row.dims, ss, NULL);
    if (B) cu_index_map(k, "t", row.rank, row.dims, bs, NULL);
    snprintf(val, sizeof val, "(%s - mean) * rstd * %s%s%s", li, ls, B ? " + " : "", B ? lb : "");
    w_puts(k, "        ");
    cu_store(k, Y->dtype, "yr[i]", val);
    w_puts(k, "        }\n    }\n}\n\n");
    w_printf(&c->body, "    GC_LAUNCH(k%d, (int64_t)%s * GC_LANES, stream, (%s, %s, %s", kn, cu_dims_sz(c, xs, 0, a), cu_ptr(c, Y),
             cu_ptr(c, X), cu_ptr(c, Sc));
    if (B) w_printf(&c->body, ", %s", cu_ptr(c, B));
    if (Mo) w_printf(&c->body, ", %s", cu_ptr(c, Mo));
    if (Io) w_printf(&c->body, ", %s", cu_ptr(c, Io));
    w_printf(&c->body, "%s));\n", cu_karg(c, n));
    return 0;
}

static int batchnorm_check(const Node *n, Diag *d)
{
    if (!cu_is_float(n->in[0]->dtype) && !is_half_t(n->in[0]->dtype))
        return diag_node_error(d, n, "the CUDA backend has BatchNormalization in f32, f64, f16 and bf16 only");
    if (is_half_t(n->in[0]->dtype) && n->attrs[BN_TRAINING_MODE].i)
        return diag_node_error(d, n, "the CUDA backend has training-mode BatchNormalization in f32/f64 only");
    for (int j = 1; j < 5; j++)
        if (n->in[j]->dtype != n->in[0]->dtype)
            return diag_node_error(d, n, "the CUDA backend's BatchNormalization takes one dtype for all inputs");
    if (n->in[0]->shape.rank < 2) return diag_node_error(d, n, "BatchNormalization needs a channel dim");
    if (!cu_static_dims(&n->in[0]->shape, 1, n->in[0]->shape.rank) || (n->attrs[BN_TRAINING_MODE].i && cgen_node_has_sym(n)))
        return diag_node_error(d, n, "the CUDA backend takes runtime shapes through BatchNormalization in the batch dim only, "
                                     "in inference mode");
    return 0;
}

/* BatchNormalization (inference): y = (x - mean[c]) / sqrt(var[c] + eps) * scale[c] + b[c]. */
static int emit_batchnorm(Cu *c, const Node *n, Diag *d)
{
    if (n->attrs[BN_TRAINING_MODE].i) return cu_emit_batchnorm_train(c, n);
    (void)d;
    const Value *X = n->in[0], *Y = n->out[0];
    const int64_t total = ir_numel(&Y->shape), C = X->shape.dims[1];
    if (total == 0) return 0;
    const int64_t inner = total / (X->shape.dims[0] * C);
    const char *T = cfam_ctype(X->dtype);
    char eps[48];
    cfam_lit(eps, sizeof eps, DT_F64, n->attrs[BN_EPSILON].f);
    Writer *k = &c->kern;
    const int kn = c->nk++;
    cu_node_comment(c->g, k, n);
    w_printf(k, "GC_KERNEL k%d(%s *y, const %s *x, const %s *sc, const %s *b, const %s *mean, const %s *var%s)\n{\n", kn, T,
             T, T, T, T, T, cu_kparam(c, n));
    cu_kuse(c, n, k);
    w_printf(k, "    GC_FOR_EACH(i, %s) {\n        const int64_t ch = i / %lld %% %lld;\n", cu_dims_sz(c, &Y->shape, 0, Y->shape.rank),
             (long long)inner, (long long)C);
    char lx[64], lm[64], lv[64], lsc[64], lb[64], val[512];
    const DType t = X->dtype;
    snprintf(val, sizeof val, "(%s - (double)%s) / sqrt((double)%s + %s) * %s + %s", cu_ld(lx, sizeof lx, t, "x[i]"),
             cu_ld(lm, sizeof lm, t, "mean[ch]"), cu_ld(lv, sizeof lv, t, "var[ch]"), eps, cu_ld(lsc, sizeof lsc, t, "sc[ch]"),
             cu_ld(lb, sizeof lb, t, "b[ch]"));
    w_puts(k, "        ");
    cu_store(k, Y->dtype, "y[i]", val);
    w_puts(k, "    }\n}\n\n");
    w_printf(&c->body, "    GC_LAUNCH(k%d, %s, stream, (%s, %s, %s, %s, %s, %s%s));\n", kn, cu_dims_sz(c, &Y->shape, 0, Y->shape.rank),
             cu_ptr(c, Y), cu_ptr(c, X), cu_ptr(c, n->in[1]), cu_ptr(c, n->in[2]), cu_ptr(c, n->in[3]), cu_ptr(c, n->in[4]),
             cu_karg(c, n));
    return 0;
}

/* ---- Det ------------------------------------------------------------------------------------- */

/* Det's scratch: each matrix of the batch as doubles for its LU factors. */
static size_t det_workspace(const Node *n)
{
    const Shape *s = &n->in[0]->shape;
    const int64_t m = s->dims[s->rank - 1];
    return sizeof(double) * (size_t)(m * m * ir_numel(&n->out[0]->shape));
}

/* Det: one thread per matrix, LU with partial pivoting in double in the
 * workspace (the C runtime's det_lu: a zero pivot gives 0, each row swap
 * flips the sign); the determinant of a 0 x 0 matrix is 1. */
static int emit_det(Cu *c, const Node *n, Diag *d)
{
    (void)d;
    const Value *X = n->in[0], *Y = n->out[0];
    const int64_t m = X->shape.dims[X->shape.rank - 1], nb = ir_numel(&Y->shape);
    if (nb == 0) return 0;
    const char *T = cfam_ctype(X->dtype);
    Writer *k = &c->kern;
    const int kn = cu_kernel_begin(c, n);
    w_printf(k, "GC_KERNEL k%d(%s *y, const %s *x, double *work)\n{\n    GC_FOR_EACH(b, %lld) {\n", kn, T, T, (long long)nb);
    if (m == 0) {
        w_puts(k, "        (void)x, (void)work;\n        y[b] = 1; /* det of 0x0 is 1 */\n    }\n}\n\n");
    } else {
        const long long M = (long long)m;
        w_printf(k, "        double *a = work + b * %lld, det = 1.0;\n", M * M);
        w_printf(k, "        for (int64_t i = 0; i < %lld; i++) a[i] = (double)x[b * %lld + i];\n", M * M, M * M);
        w_printf(k, "        for (int64_t kk = 0; kk < %lld && det != 0.0; kk++) {\n", M);
        w_puts(k, "            int64_t p = kk;\n");
        w_printf(k, "            for (int64_t i = kk + 1; i < %lld; i++)\n", M);
        w_printf(k, "                if (fabs(a[i * %lld + kk]) > fabs(a[p * %lld + kk])) p = i;\n", M, M);
        w_printf(k, "            if (a[p * %lld + kk] == 0.0) {\n                det = 0.0;\n                break;\n            }\n", M);
        w_puts(k, "            if (p != kk) {\n");
        w_printf(k, "                for (int64_t j = 0; j < %lld; j++) {\n", M);
        w_printf(k, "                    const double t = a[kk * %lld + j];\n", M);
        w_printf(k, "                    a[kk * %lld + j] = a[p * %lld + j];\n                    a[p * %lld + j] = t;\n", M, M, M);
        w_puts(k, "                }\n                det = -det;\n            }\n");
        w_printf(k, "            const double piv = a[kk * %lld + kk];\n            det *= piv;\n", M);
        w_printf(k, "            for (int64_t i = kk + 1; i < %lld; i++) {\n", M);
        w_printf(k, "                const double f = a[i * %lld + kk] / piv;\n", M);
        w_printf(k, "                for (int64_t j = kk + 1; j < %lld; j++) a[i * %lld + j] -= f * a[kk * %lld + j];\n", M, M, M);
        w_puts(k, "            }\n        }\n");
        w_printf(k, "        y[b] = (%s)det;\n    }\n}\n\n", T);
    }
    GC_ASSERT(m == 0 || n->ws_offset >= 0);
    char ws[64];
    if (m) snprintf(ws, sizeof ws, "(double *)(void *)(arena + %lld)", (long long)n->ws_offset);
    else snprintf(ws, sizeof ws, "NULL");
    w_printf(&c->body, "    GC_LAUNCH(k%d, %lld, stream, (%s, %s, %s));\n", kn, (long long)nb, cu_ptr(c, Y), cu_ptr(c, X), ws);
    return 0;
}

/* ---- the table ------------------------------------------------------------------------ */

#define ROW "a generated kernel, one thread per row"
#define OUT "a generated kernel, one thread per output element"

/* Ops with a scalar expression need no row: cuda_backend.c gives them
 * emit_elementwise through cuda_elementwise_entry. */
const CudaEntry cuda_kernel_entries[] = {
    {OP_Fused, NULL, emit_fused, NULL, "a generated elementwise kernel", 1, 1},
    {OP_CastLike, NULL, emit_castlike, NULL, "a generated elementwise kernel (Cast's expression)", 1, 1},
    {OP_Softmax, NULL, emit_softmax, NULL, ROW, 1, 1},
    {OP_LogSoftmax, NULL, emit_softmax, NULL, ROW, 1, 1},
    {OP_MaxPool, pool_check, emit_pool, NULL, OUT, 1, 1},
    {OP_AveragePool, pool_check, emit_pool, NULL, OUT, 1, 1},
    {OP_GlobalAveragePool, pool_check, emit_gap, NULL, "a generated kernel, one thread per image and channel", 1, 1},
    {OP_Transpose, NULL, emit_transpose, NULL, OUT, 1, 1},
    {OP_Slice, slice_check, emit_slice, NULL, OUT, 1, 2},
    {OP_Concat, NULL, emit_concat, NULL, OUT, 1, 1},
    {OP_Gather, gather_check, emit_gather, NULL, OUT, 1, 1},
    {OP_ReduceSum, reduce_check, emit_reduce, reduce_workspace, OUT, 1, 2},
    {OP_ReduceMean, reduce_check, emit_reduce, NULL, OUT, 1, 1},
    {OP_ReduceMax, reduce_check, emit_reduce, NULL, OUT, 1, 1},
    {OP_ReduceMin, reduce_check, emit_reduce, NULL, OUT, 1, 1},
    {OP_ReduceProd, reduce_check, emit_reduce, NULL, OUT, 1, 1},
    {OP_ReduceL1, reduce_check, emit_reduce, NULL, OUT, 1, 1},
    {OP_ReduceL2, reduce_check, emit_reduce, NULL, OUT, 1, 1},
    {OP_ReduceLogSum, reduce_check, emit_reduce, NULL, OUT, 1, 1},
    {OP_ReduceLogSumExp, reduce_check, emit_reduce, NULL, OUT, 1, 1},
    {OP_ReduceSumSquare, reduce_check, emit_reduce, NULL, OUT, 1, 1},
    {OP_LayerNormalization, layernorm_check, emit_layernorm, NULL, ROW, 1, 1},
    {OP_BatchNormalization, batchnorm_check, emit_batchnorm, NULL, OUT, 1, 1},
    {OP_Det, cu_check_float, emit_det, det_workspace, "a generated kernel, one thread per matrix (LU in its workspace)", 0, 0},
    {-1, NULL, NULL, NULL, NULL, 0, 0},
};

const CudaEntry cuda_elementwise_entry = {-1, NULL, emit_elementwise, NULL, "a generated elementwise kernel", 1, 1};
