/* cuda_index.c — the CUDA backend's generated kernels for data movement and
 * data-dependent indexing (see cuda_emit.h): Pad, Tile, Expand, Split,
 * Trilu, GatherElements, GatherND, ScatterElements, ScatterND, CumSum,
 * ArgMax/ArgMin, OneHot, TopK, Compress, ReverseSequence, MaxUnpool, and
 * the generators (Constant, ConstantOfShape, Range, Shape, Size, EyeLike,
 * HannWindow, HammingWindow, BlackmanWindow, MelWeightMatrix:
 * values known at compile time become GC_TABLE constants).
 *
 * Each follows the C backend's rules (backend/c/emit_index.c,
 * emit_shape.c, runtime/c/gcrt_index.c, gcrt_shape.c): a negative index
 * counts from the end, and one still out of range reads 0 (gathers) or is
 * skipped (scatters), so no kernel touches memory outside its tensors.
 * Movement kernels run one thread per output element and serve every
 * dtype. Scatters (and MaxUnpool) copy the data, then apply the updates
 * in order in one thread: duplicate indices then resolve as in the
 * reference (the last write wins, reductions fold in order),
 * deterministically. TopK ranks each element within its row instead of
 * sorting: ranks are unique, so its writes never collide.
 */
#include "cuda_emit.h"
#include "../cfamily/cfam_eval.h"
#include "../cfamily/cfam_expr.h"
#include "../../ir/ops/geometry.h"
#include "../../ir/ops/index_attrs.h"
#include "../../ir/ops/shape_attrs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int64_t dims_prod(const Shape *s, int from, int to)
{
    int64_t p = 1;
    for (int k = from; k < to; k++) p *= s->dims[k];
    return p;
}

/* Into a kernel over output elements i: `int64_t cK = coordinate K of i`
 * for the dims of shape s with used[K] (NULL: all; c0 outermost). */
static void coords(Writer *w, const Shape *s, const int *used)
{
    int64_t st = 1;
    for (int k = s->rank - 1; k >= 0; k--) {
        if (used && !used[k]) {
            st *= s->dims[k];
            continue;
        }
        if (k == 0) w_printf(w, "        const int64_t c0 = i / %lld;\n", (long long)st);
        else w_printf(w, "        const int64_t c%d = i / %lld %% %lld;\n", k, (long long)st, (long long)s->dims[k]);
        st *= s->dims[k];
    }
}

/* The launch of kernel kn over total elements with the pointers of vs. */
static void launch(Cu *c, int kn, int64_t total, const Value *const *vs, int nv)
{
    Writer *b = &c->body;
    w_printf(b, "    GC_LAUNCH(k%d, %lld, stream, (", kn, (long long)total);
    for (int j = 0; j < nv; j++) w_printf(b, "%s%s", j ? ", " : "", cu_ptr(c, vs[j]));
    w_puts(b, "));\n");
}

/* y = x (a device copy unless they share memory). */
static void copy_data(Cu *c, const Value *X, const Value *Y)
{
    const int64_t bytes = ir_numel(&Y->shape) * (int64_t)ir_dtype_size(Y->dtype);
    const char *px = cu_ptr(c, X), *py = cu_ptr(c, Y);
    w_printf(&c->body, "    if ((const void *)%s != (const void *)%s &&\n", py, px);
    w_printf(&c->body, "        cudaMemcpyAsync(%s, %s, %lld, cudaMemcpyDeviceToDevice, stream) != cudaSuccess) return -1;\n", py,
             px, (long long)bytes);
}

static int index_check(const Node *n, int i, Diag *d)
{
    DType t = n->in[i]->dtype;
    return t == DT_I32 || t == DT_I64 ? 0
                                      : diag_node_error(d, n, "the CUDA backend's %s takes i32 or i64 indices", ir_op(n->op)->name);
}

/* ---- movement: Pad, Tile, Expand, Split, Trilu ------------------------------------------- */

static int pad_check(const Node *n, Diag *d)
{
    int64_t pads[2 * IR_MAX_RANK];
    if (n->in[0]->shape.rank == 0 || ir_const_ints(n->in[1], pads, 2 * IR_MAX_RANK) != 2 * n->in[0]->shape.rank)
        return diag_node_error(d, n, "the CUDA backend's Pad takes constant pads and rank >= 1");
    if (n->n_in > 3 && n->in[3]) return diag_node_error(d, n, "the CUDA backend's Pad takes no axes input yet");
    return 0;
}

/* Pad: per axis the source index of output index o - pad_begin (constant:
 * none outside; edge: clamped; reflect: mirrored with period 2 (dim - 1)). */
static int emit_pad(Cu *c, const Node *n, Diag *d)
{
    (void)d;
    const Value *X = n->in[0], *Y = n->out[0], *V = n->n_in > 2 ? n->in[2] : NULL;
    const int64_t total = ir_numel(&Y->shape);
    if (total == 0) return 0;
    const int r = X->shape.rank;
    int64_t pads[2 * IR_MAX_RANK], st[IR_MAX_RANK];
    ir_const_ints(n->in[1], pads, 2 * IR_MAX_RANK);
    cu_strides_of(&X->shape, st);
    const char *ms = n->attrs[PAD_MODE].s;
    const int mode = strcmp(ms, "reflect") == 0 ? 1 : strcmp(ms, "edge") == 0 ? 2 : 0;
    const char *T = cfam_ctype(Y->dtype);
    Writer *w = &c->kern;
    const int kn = cu_kernel_begin(c, n);
    w_printf(w, "GC_KERNEL k%d(%s *y, const %s *x%s%s%s)\n{\n    GC_FOR_EACH(i, %lld) {\n", kn, T, T, V ? ", const " : "",
             V ? T : "", V ? " *v" : "", (long long)total);
    coords(w, &Y->shape, NULL);
    w_puts(w, "        int64_t off = 0, j;\n");
    for (int k = 0; k < r; k++) {
        const long long dim = (long long)X->shape.dims[k];
        w_printf(w, "        j = c%d - %lld;\n", k, (long long)pads[k]);
        if (mode == 2 || (mode == 1 && dim == 1)) {
            w_printf(w, "        j = j < 0 ? 0 : j >= %lld ? %lld : j;\n", dim, dim - 1);
        } else if (mode == 1) {
            w_printf(w, "        if (j < 0 || j >= %lld) {\n            j %%= %lld;\n            if (j < 0) j += %lld;\n", dim,
                     2 * (dim - 1), 2 * (dim - 1));
            w_printf(w, "            if (j >= %lld) j = %lld - j;\n        }\n", dim, 2 * (dim - 1));
        } else {
            w_printf(w, "        if (off >= 0 && (j < 0 || j >= %lld)) off = -1;\n", dim);
        }
        w_printf(w, "        if (off >= 0) off += j * %lld;\n", (long long)st[k]);
    }
    if (mode == 0) w_printf(w, "        y[i] = off >= 0 ? x[off] : %s;\n", V ? "v[0]" : "0");
    else w_puts(w, "        y[i] = x[off];\n");
    w_puts(w, "    }\n}\n\n");
    const Value *vs[3] = {Y, X, V};
    launch(c, kn, total, vs, V ? 3 : 2);
    return 0;
}

/* Tile and Expand: y[i] = x[the output coordinates modulo (Tile) or
 * broadcast onto (Expand) the input's dims]. */
static int emit_tile_expand(Cu *c, const Node *n, Diag *d)
{
    (void)d;
    const Value *X = n->in[0], *Y = n->out[0];
    const int64_t total = ir_numel(&Y->shape);
    if (total == 0) return 0;
    const int tile = n->op == OP_Tile, r = Y->shape.rank, off = r - X->shape.rank;
    int64_t st[IR_MAX_RANK];
    cu_strides_of(&X->shape, st);
    const char *T = cfam_ctype(Y->dtype);
    Writer *w = &c->kern;
    const int kn = cu_kernel_begin(c, n);
    w_printf(w, "GC_KERNEL k%d(%s *y, const %s *x)\n{\n    GC_FOR_EACH(i, %lld) {\n", kn, T, T, (long long)total);
    int used[IR_MAX_RANK];
    for (int k = 0; k < r; k++) used[k] = k >= off && X->shape.dims[k - off] != 1;
    coords(w, &Y->shape, used);
    w_puts(w, "        int64_t o = 0;\n");
    for (int k = off; k < r; k++) {
        const int64_t dim = X->shape.dims[k - off];
        if (dim == 1) continue;
        if (tile) w_printf(w, "        o += c%d %% %lld * %lld;\n", k, (long long)dim, (long long)st[k - off]);
        else w_printf(w, "        o += c%d * %lld;\n", k, (long long)st[k - off]);
    }
    w_puts(w, "        y[i] = x[o];\n    }\n}\n\n");
    const Value *vs[2] = {Y, X};
    launch(c, kn, total, vs, 2);
    return 0;
}

/* Runtime shapes: Split along a static axis. */
static int split_check(const Node *n, Diag *d)
{
    const Shape *xs = &n->in[0]->shape;
    const int ax = ir_norm_axis(n->attrs[SPLIT_AXIS].i, xs->rank);
    if (ax >= 0 && xs->sym[ax])
        return diag_node_error(d, n, "the CUDA backend splits along a static axis only (axis %d is a runtime dim)", ax);
    return 0;
}

/* Split: one kernel per output, y[o, j, in] = x[o, at + j, in] (inner and
 * the outer count may be runtime dims). */
static int emit_split(Cu *c, const Node *n, Diag *d)
{
    (void)d;
    const Value *X = n->in[0];
    const Shape *xs = &X->shape;
    const int ax = ir_norm_axis(n->attrs[SPLIT_AXIS].i, xs->rank);
    const CgenProd inner = cgen_dims_prod(xs, ax + 1, xs->rank);
    const int64_t A = xs->dims[ax];
    const char *T = cfam_ctype(X->dtype);
    int64_t at = 0;
    for (int q = 0; q < n->n_out; q++) {
        const Value *Y = n->out[q];
        if (!Y) continue;
        const int64_t len = Y->shape.dims[ax];
        CgenProd row = inner; /* this output's part of one outer index */
        row.c *= len;
        if (ir_numel(&Y->shape) > 0) {
            Writer *w = &c->kern;
            const int kn = cu_kernel_begin(c, n);
            w_printf(w, "/* output %d */\n", q);
            w_printf(w, "GC_KERNEL k%d(%s *y, const %s *x%s)\n{\n", kn, T, T, cu_kparam(c, n));
            cu_kuse(c, n, w);
            w_printf(w, "    GC_FOR_EACH(i, %s) {\n", cu_dims_sz(c, &Y->shape, 0, Y->shape.rank));
            w_printf(w, "        y[i] = x[(i / %s * %lld + %lld) * %s + i %% %s];\n    }\n}\n\n", cu_sz(c, row), (long long)A,
                     (long long)at, cu_sz(c, inner), cu_sz(c, row));
            w_printf(&c->body, "    GC_LAUNCH(k%d, %s, stream, (%s, %s%s));\n", kn, cu_dims_sz(c, &Y->shape, 0, Y->shape.rank),
                     cu_ptr(c, Y), cu_ptr(c, X), cu_karg(c, n));
        }
        at += len;
    }
    return 0;
}

/* Trilu: y = x where column - row >= k (upper) or <= k (lower), else 0;
 * k from the constant or runtime input (0 without one). */
static int emit_trilu(Cu *c, const Node *n, Diag *d)
{
    (void)d;
    const Value *X = n->in[0], *Y = n->out[0], *K = n->n_in > 1 ? n->in[1] : NULL;
    const int64_t total = ir_numel(&Y->shape);
    if (total == 0) return 0;
    const int r = X->shape.rank;
    const int64_t rows = X->shape.dims[r - 2], cols = X->shape.dims[r - 1];
    const char *T = cfam_ctype(Y->dtype), *TK = K ? cfam_ctype(K->dtype) : "int64_t";
    Writer *w = &c->kern;
    const int kn = cu_kernel_begin(c, n);
    w_printf(w, "GC_KERNEL k%d(%s *y, const %s *x%s%s%s)\n{\n    GC_FOR_EACH(i, %lld) {\n", kn, T, T, K ? ", const " : "",
             K ? TK : "", K ? " *kk" : "", (long long)total);
    w_printf(w, "        const int64_t col = i %% %lld, row = i / %lld %% %lld, k = %s;\n", (long long)cols, (long long)cols,
             (long long)rows, K ? "(int64_t)kk[0]" : "0");
    w_printf(w, "        y[i] = col - row %s k ? x[i] : (%s)0;\n    }\n}\n\n", n->attrs[TRILU_UPPER].i ? ">=" : "<=", T);
    const Value *vs[3] = {Y, X, K};
    launch(c, kn, total, vs, K ? 3 : 2);
    return 0;
}

/* ---- gathers and scatters ------------------------------------------------------------------ */

static int gather_elements_check(const Node *n, Diag *d) { return index_check(n, 1, d); }

/* GatherElements: y[j] = x[j's coordinates, the axis one replaced by idx[j]]. */
static int emit_gather_elements(Cu *c, const Node *n, Diag *d)
{
    (void)d;
    const Value *X = n->in[0], *I = n->in[1], *Y = n->out[0];
    const int64_t total = ir_numel(&Y->shape);
    if (total == 0) return 0;
    const int r = X->shape.rank, ax = ir_norm_axis(n->attrs[GATHER_ELEMENTS_AXIS].i, r);
    int64_t st[IR_MAX_RANK];
    cu_strides_of(&X->shape, st);
    const char *T = cfam_ctype(Y->dtype), *TI = cfam_ctype(I->dtype);
    Writer *w = &c->kern;
    const int kn = cu_kernel_begin(c, n);
    w_printf(w, "GC_KERNEL k%d(%s *y, const %s *x, const %s *idx)\n{\n    GC_FOR_EACH(i, %lld) {\n", kn, T, T, TI, (long long)total);
    int used[IR_MAX_RANK];
    for (int k = 0; k < r; k++) used[k] = k != ax;
    coords(w, &I->shape, used);
    w_printf(w, "        int64_t t = (int64_t)idx[i];\n        if (t < 0) t += %lld;\n", (long long)X->shape.dims[ax]);
    w_puts(w, "        const int64_t o = ");
    for (int k = 0; k < r; k++) {
        if (k == ax) w_printf(w, "%st * %lld", k ? " + " : "", (long long)st[k]);
        else w_printf(w, "%sc%d * %lld", k ? " + " : "", k, (long long)st[k]);
    }
    w_puts(w, ";\n");
    w_printf(w, "        y[i] = t >= 0 && t < %lld ? x[o] : (%s)0;\n    }\n}\n\n", (long long)X->shape.dims[ax], T);
    const Value *vs[3] = {Y, X, I};
    launch(c, kn, total, vs, 3);
    return 0;
}


static int scatter_elements_check(const Node *n, Diag *d) { return index_check(n, 1, d); }

/* The update statement of a scatter reduction ("none", "add", "mul", "max",
 * "min") of y[YI] with u[UI]; NULL for an unknown reduction. */
static const char *scatter_step(const char *red)
{
    static const char *const names[] = {"none", "add", "mul", "max", "min"};
    static const char *const steps[] = {"y[YI] = u[UI];", "y[YI] = (T)(y[YI] + u[UI]);", "y[YI] = (T)(y[YI] * u[UI]);",
                                        "if (u[UI] > y[YI]) y[YI] = u[UI];", "if (u[UI] < y[YI]) y[YI] = u[UI];"};
    for (int i = 0; i < 5; i++)
        if (strcmp(red, names[i]) == 0) return steps[i];
    return NULL;
}

/* Writes step with YI, UI and T replaced. */
static void write_step(Writer *w, const char *step, const char *yi, const char *ui, const char *T)
{
    for (const char *p = step; *p;) {
        if (strncmp(p, "YI", 2) == 0) w_puts(w, yi), p += 2;
        else if (strncmp(p, "UI", 2) == 0) w_puts(w, ui), p += 2;
        else if (*p == 'T' && p[1] == ')') w_puts(w, T), p++;
        else w_printf(w, "%c", *p++);
    }
}

/* ScatterElements: y = data, then in one thread for each update j in
 * order: y[j's coordinates, the axis one replaced by idx[j]] (op)= u[j]. */
static int emit_scatter_elements(Cu *c, const Node *n, Diag *d)
{
    const Value *X = n->in[0], *I = n->in[1], *U = n->in[2], *Y = n->out[0];
    if (ir_numel(&Y->shape) == 0) return 0;
    const char *step = scatter_step(n->attrs[SCATTER_ELEMENTS_REDUCTION].s);
    if (!step) return diag_node_error(d, n, "invalid reduction");
    copy_data(c, X, Y);
    const int64_t cnt = ir_numel(&I->shape);
    if (cnt == 0) return 0;
    const int r = X->shape.rank, ax = ir_norm_axis(n->attrs[SCATTER_ELEMENTS_AXIS].i, r);
    int64_t st[IR_MAX_RANK];
    cu_strides_of(&X->shape, st);
    const char *T = cfam_ctype(Y->dtype), *TI = cfam_ctype(I->dtype);
    Writer *w = &c->kern;
    const int kn = cu_kernel_begin(c, n);
    w_printf(w, "GC_KERNEL k%d(%s *y, const %s *idx, const %s *u)\n{\n    GC_FOR_EACH(s, 1) {\n", kn, T, TI, T);
    w_printf(w, "        for (int64_t i = s; i < %lld; i++) {\n", (long long)cnt);
    int used[IR_MAX_RANK];
    for (int k = 0; k < r; k++) used[k] = k != ax;
    Writer cw;
    w_init(&cw);
    coords(&cw, &I->shape, used);
    /* indent the coordinates one more level */
    for (const char *p = cu_wtext(&cw); *p; p++) {
        if (p == cu_wtext(&cw) || p[-1] == '\n') w_puts(w, "    ");
        w_printf(w, "%c", *p);
    }
    w_free(&cw);
    w_printf(w, "            int64_t t = (int64_t)idx[i];\n            if (t < 0) t += %lld;\n", (long long)X->shape.dims[ax]);
    w_printf(w, "            if (t < 0 || t >= %lld) continue;\n", (long long)X->shape.dims[ax]);
    w_puts(w, "            const int64_t o = ");
    for (int k = 0; k < r; k++) {
        if (k == ax) w_printf(w, "%st * %lld", k ? " + " : "", (long long)st[k]);
        else w_printf(w, "%sc%d * %lld", k ? " + " : "", k, (long long)st[k]);
    }
    w_puts(w, ";\n            ");
    write_step(w, step, "o", "i", T);
    w_puts(w, "\n        }\n    }\n}\n\n");
    const Value *vs[3] = {Y, I, U};
    launch(c, kn, 1, vs, 3);
    return 0;
}

static int nd_check(const Node *n, Diag *d)
{
    if (index_check(n, 1, d)) return -1;
    const Shape *is = &n->in[1]->shape;
    return is->rank >= 1 ? 0 : diag_node_error(d, n, "indices need a last dim");
}

/* Into a kernel: `int64_t o` = the offset in x of index tuple j (m
 * components of idx from j * m, over data dims dims[0..m) with strides
 * st), -1 when a component is out of range. */
static void nd_offset(Writer *w, const char *ind, int m, const int64_t *dims, const int64_t *st)
{
    w_printf(w, "%sint64_t o = 0;\n", ind);
    for (int k = 0; k < m; k++) {
        w_printf(w, "%s{\n%s    int64_t t = (int64_t)idx[j * %d + %d];\n", ind, ind, m, k);
        w_printf(w, "%s    if (t < 0) t += %lld;\n", ind, (long long)dims[k]);
        w_printf(w, "%s    if (o >= 0) o = t >= 0 && t < %lld ? o + t * %lld : -1;\n%s}\n", ind, (long long)dims[k],
                 (long long)st[k], ind);
    }
}

/* GatherND: output element i is element e of the slice of tuple j. */
static int emit_gather_nd(Cu *c, const Node *n, Diag *d)
{
    (void)d;
    const Value *X = n->in[0], *I = n->in[1], *Y = n->out[0];
    const int64_t total = ir_numel(&Y->shape);
    if (total == 0) return 0;
    const Shape *xs = &X->shape, *is = &I->shape;
    const int b = (int)n->attrs[GATHER_ND_BATCH_DIMS].i, q = is->rank, m = (int)is->dims[q - 1];
    const int64_t slice = dims_prod(xs, b + m, xs->rank), batch_stride = dims_prod(xs, b, xs->rank),
                  per_batch = dims_prod(is, b, q - 1);
    int64_t st[IR_MAX_RANK];
    cu_strides_of(xs, st);
    const char *T = cfam_ctype(Y->dtype), *TI = cfam_ctype(I->dtype);
    Writer *w = &c->kern;
    const int kn = cu_kernel_begin(c, n);
    w_printf(w, "GC_KERNEL k%d(%s *y, const %s *x, const %s *idx)\n{\n    GC_FOR_EACH(i, %lld) {\n", kn, T, T, TI, (long long)total);
    w_printf(w, "        const int64_t j = i / %lld, e = i %% %lld;\n", (long long)slice, (long long)slice);
    nd_offset(w, "        ", m, xs->dims + b, st + b);
    if (b > 0) w_printf(w, "        y[i] = o >= 0 ? x[j / %lld * %lld + o + e] : (%s)0;\n", (long long)per_batch, (long long)batch_stride, T);
    else w_printf(w, "        y[i] = o >= 0 ? x[o + e] : (%s)0;\n", T);
    w_puts(w, "    }\n}\n\n");
    const Value *vs[3] = {Y, X, I};
    launch(c, kn, total, vs, 3);
    return 0;
}

/* ScatterND: y = data, then in one thread for each tuple j in order its
 * slice (op)= u[j]. */
static int emit_scatter_nd(Cu *c, const Node *n, Diag *d)
{
    const Value *X = n->in[0], *I = n->in[1], *U = n->in[2], *Y = n->out[0];
    if (ir_numel(&Y->shape) == 0) return 0;
    const char *step = scatter_step(n->attrs[SCATTER_ND_REDUCTION].s);
    if (!step) return diag_node_error(d, n, "invalid reduction");
    copy_data(c, X, Y);
    const Shape *xs = &X->shape, *is = &I->shape;
    const int q = is->rank, m = (int)is->dims[q - 1];
    const int64_t slice = dims_prod(xs, m, xs->rank), tuples = dims_prod(is, 0, q - 1);
    if (tuples == 0 || slice == 0) return 0;
    int64_t st[IR_MAX_RANK];
    cu_strides_of(xs, st);
    const char *T = cfam_ctype(Y->dtype), *TI = cfam_ctype(I->dtype);
    Writer *w = &c->kern;
    const int kn = cu_kernel_begin(c, n);
    w_printf(w, "GC_KERNEL k%d(%s *y, const %s *idx, const %s *u)\n{\n    GC_FOR_EACH(s, 1) {\n", kn, T, TI, T);
    w_printf(w, "        for (int64_t j = s; j < %lld; j++) {\n", (long long)tuples);
    nd_offset(w, "            ", m, xs->dims, st);
    w_puts(w, "            if (o < 0) continue;\n");
    w_printf(w, "            for (int64_t e = 0; e < %lld; e++) {\n                ", (long long)slice);
    char ui[64];
    snprintf(ui, sizeof ui, "j * %lld + e", (long long)slice);
    write_step(w, step, "o + e", ui, T);
    w_puts(w, "\n            }\n        }\n    }\n}\n\n");
    const Value *vs[3] = {Y, I, U};
    launch(c, kn, 1, vs, 3);
    return 0;
}

/* ---- CumSum, ArgMax/ArgMin, OneHot ------------------------------------------------------------- */

static int cumsum_check(const Node *n, Diag *d)
{
    if (n->in[0]->dtype == DT_BOOL) return diag_node_error(d, n, "the CUDA backend's CumSum takes numbers only");
    return index_check(n, 1, d);
}

/* CumSum: one thread per element sums its predecessors (successors when
 * reversed; itself unless exclusive) along the axis in order, in the
 * tensor's type (the C backend's order). A runtime axis reads a dims
 * table; an invalid one falls back to the last axis. */
static int emit_cumsum(Cu *c, const Node *n, Diag *d)
{
    (void)d;
    const Value *X = n->in[0], *A = n->in[1], *Y = n->out[0];
    const int64_t total = ir_numel(&Y->shape);
    if (total == 0) return 0;
    const Shape *xs = &X->shape;
    const int r = xs->rank, excl = n->attrs[CUMSUM_EXCLUSIVE].i != 0, rev = n->attrs[CUMSUM_REVERSE].i != 0;
    int64_t a;
    const int cst = A->kind == VK_CONST && ir_const_ints(A, &a, 1) == 1;
    const char *T = cfam_ctype(Y->dtype);
    Writer *w = &c->kern;
    const int kn = cu_kernel_begin(c, n);
    w_printf(w, "GC_KERNEL k%d(%s *y, const %s *x%s%s%s)\n{\n    GC_FOR_EACH(i, %lld) {\n", kn, T, T, cst ? "" : ", const ",
             cst ? "" : cfam_ctype(A->dtype), cst ? "" : " *axis", (long long)total);
    if (cst) {
        const int ax = ir_norm_axis(a, r);
        w_printf(w, "        const int64_t nd = %lld, ni = %lld;\n", (long long)xs->dims[ax], (long long)dims_prod(xs, ax + 1, r));
    } else {
        w_printf(w, "        const int64_t dims[%d] = {", r);
        for (int k = 0; k < r; k++) w_printf(w, "%s%lld", k ? ", " : "", (long long)xs->dims[k]);
        w_puts(w, "};\n");
        w_printf(w, "        int64_t ax = (int64_t)axis[0], nd, ni = 1;\n        if (ax < 0) ax += %d;\n", r);
        w_printf(w, "        if (ax < 0 || ax >= %d) ax = %d;\n        nd = dims[ax];\n", r, r - 1);
        w_printf(w, "        for (int64_t q = ax + 1; q < %d; q++) ni *= dims[q];\n", r);
    }
    const char *CT = cfam_ctype(cu_compute_type(Y->dtype));
    w_puts(w, "        const int64_t pos = i / ni % nd, first = i - pos * ni;\n");
    w_printf(w, "        %s acc = 0;\n", CT);
    if (rev) w_printf(w, "        for (int64_t t = nd - 1; t %s pos; t--) acc = (%s)(acc + ", excl ? ">" : ">=", CT);
    else w_printf(w, "        for (int64_t t = 0; t %s pos; t++) acc = (%s)(acc + ", excl ? "<" : "<=", CT);
    cu_load(w, Y->dtype, "x[first + t * ni]");
    w_puts(w, ");\n        ");
    cu_store(w, Y->dtype, "y[i]", "acc");
    w_puts(w, "    }\n}\n\n");
    const Value *vs[3] = {Y, X, A};
    launch(c, kn, total, vs, cst ? 2 : 3);
    return 0;
}

static int arg_check(const Node *n, Diag *d)
{
    const Shape *xs = &n->in[0]->shape;
    const int ax = ir_norm_axis(n->attrs[ARG_AXIS].i, xs->rank);
    if (n->in[0]->dtype == DT_BOOL || ax < 0 || xs->dims[ax] == 0)
        return diag_node_error(d, n, "the CUDA backend's %s takes numbers and a non-empty axis", ir_op(n->op)->name);
    return 0;
}

/* ArgMax/ArgMin: one thread per (outer, inner): the first (or last) extreme. */
static int emit_arg(Cu *c, const Node *n, Diag *d)
{
    (void)d;
    const Value *X = n->in[0], *Y = n->out[0];
    const Shape *xs = &X->shape;
    const int ax = ir_norm_axis(n->attrs[ARG_AXIS].i, xs->rank), last = n->attrs[ARG_SELECT_LAST_INDEX].i != 0;
    const int64_t outer = dims_prod(xs, 0, ax), dim = xs->dims[ax], inner = dims_prod(xs, ax + 1, xs->rank);
    if (outer * inner == 0) return 0;
    const int mx = n->op == OP_ArgMax;
    const char *cmp = mx ? (last ? ">=" : ">") : (last ? "<=" : "<"), *T = cfam_ctype(X->dtype);
    Writer *w = &c->kern;
    const int kn = cu_kernel_begin(c, n);
    w_printf(w, "GC_KERNEL k%d(int64_t *y, const %s *x)\n{\n    GC_FOR_EACH(i, %lld) {\n", kn, T, (long long)(outer * inner));
    w_printf(w, "        const %s *xr = x + i / %lld * %lld + i %% %lld;\n", T, (long long)inner, (long long)(dim * inner),
             (long long)inner);
    w_printf(w, "        %s best = xr[0];\n        int64_t bi = 0;\n", T);
    w_printf(w, "        for (int64_t t = 1; t < %lld; t++)\n", (long long)dim);
    w_printf(w, "            if (xr[t * %lld] %s best) {\n                best = xr[t * %lld];\n                bi = t;\n            }\n",
             (long long)inner, cmp, (long long)inner);
    w_puts(w, "        y[i] = bi;\n    }\n}\n\n");
    const Value *vs[2] = {Y, X};
    launch(c, kn, outer * inner, vs, 2);
    return 0;
}

/* OneHot: y[o, k, in] = values[1] where index (o, in) (negative from the
 * end; a float index truncated when inside (-depth - 1, depth)) is k, else
 * values[0]. A depth given at run time (a data-dependent dim) is read back
 * by the host and set in the shape table first; the kernel reads the
 * extents from it. */
static int emit_onehot(Cu *c, const Node *n, Diag *d)
{
    (void)d;
    const Value *I = n->in[0], *V = n->in[2], *Y = n->out[0];
    if (ir_numel(&Y->shape) == 0) return 0;
    const Shape *os = &Y->shape;
    const int ax = ir_norm_axis(n->attrs[ONEHOT_AXIS].i, os->rank);
    if (cgen_own_dim(c->g, Y, ax)) { /* the depth, read back */
        w_puts(&c->body, "    { /* its depth, read back: the extent of its axis */\n");
        cu_read_host(c, n->in[1], "depth");
        cu_set_dim(c, Y, ax, "(int64_t)depth[0]");
        cu_dims_to_device(c);
        w_puts(&c->body, "    }\n");
    }
    const CgenProd depth = cgen_dims_prod(os, ax, ax + 1), inner = cgen_dims_prod(os, ax + 1, os->rank),
                   block = cgen_prod_mul(&depth, &inner);
    char lo[200];
    if (depth.n == 0) snprintf(lo, sizeof lo, "%lld.0", (long long)(-depth.c - 1));
    else snprintf(lo, sizeof lo, "-(double)%s - 1.0", cu_sz(c, depth));
    const char *T = cfam_ctype(Y->dtype), *TI = cfam_ctype(I->dtype);
    Writer *w = &c->kern;
    const int kn = cu_kernel_begin(c, n);
    w_printf(w, "GC_KERNEL k%d(%s *y, const %s *idx, const %s *v%s)\n{\n", kn, T, TI, T, cu_kparam(c, n));
    cu_kuse(c, n, w);
    w_printf(w, "    GC_FOR_EACH(i, %s) {\n", cu_dims_sz(c, os, 0, os->rank));
    w_printf(w, "        const int64_t in = i %% %s, k = i / %s %% %s, o = i / %s;\n", cu_sz(c, inner), cu_sz(c, inner),
             cu_sz(c, depth), cu_sz(c, block));
    if (ir_dtype_is_float(I->dtype)) {
        w_printf(w, "        const double f = (double)idx[o * %s + in];\n", cu_sz(c, inner));
        if (depth.n == 0)
            w_printf(w, "        int64_t t = f > %s && f < %lld.0 ? (int64_t)f : %lld;\n", lo, (long long)depth.c, (long long)depth.c);
        else
            w_printf(w, "        int64_t t = f > %s && f < (double)%s ? (int64_t)f : %s;\n", lo, cu_sz(c, depth), cu_sz(c, depth));
    } else {
        w_printf(w, "        int64_t t = (int64_t)idx[o * %s + in];\n", cu_sz(c, inner));
    }
    w_printf(w, "        if (t < 0) t += %s;\n", cu_sz(c, depth));
    w_puts(w, "        y[i] = t == k ? v[1] : v[0];\n    }\n}\n\n");
    w_printf(&c->body, "    GC_LAUNCH(k%d, %s, stream, (%s, %s, %s%s));\n", kn, cu_dims_sz(c, os, 0, os->rank), cu_ptr(c, Y),
             cu_ptr(c, I), cu_ptr(c, V), cu_karg(c, n));
    return 0;
}

/* Range with runtime operands (its count a data-dependent dim): the host
 * reads start, limit and delta back and sets the count, max(ceil((limit -
 * start) / delta), 0) (the subtraction and division in float for f32, as
 * the reference does), then y[i] = start + i * delta from the device's
 * operands. */
static int emit_range_dyn(Cu *c, const Node *n)
{
    const Value *Y = n->out[0];
    const DType t = n->in[0]->dtype;
    w_puts(&c->body, "    { /* its count from start, limit and delta, read back */\n");
    cu_read_host(c, n->in[0], "start");
    cu_read_host(c, n->in[1], "limit");
    cu_read_host(c, n->in[2], "delta");
    if (t == DT_F32) w_puts(&c->body, "        const double cnt = ceil((double)((limit[0] - start[0]) / delta[0]));\n");
    else w_puts(&c->body, "        const double cnt = ceil(((double)limit[0] - (double)start[0]) / (double)delta[0]);\n");
    cu_set_dim(c, Y, 0, "!(cnt > 0) ? 0 : cnt > 9.0e15 ? INT64_C(9000000000000000) : (int64_t)cnt");
    cu_dims_to_device(c);
    w_puts(&c->body, "    }\n");
    if (ir_numel(&Y->shape) == 0) return 0;
    const char *T = cfam_ctype(Y->dtype);
    Writer *w = &c->kern;
    const int kn = cu_kernel_begin(c, n);
    w_printf(w, "GC_KERNEL k%d(%s *y, const %s *s, const %s *dl%s)\n{\n", kn, T, T, T, cu_kparam(c, n));
    cu_kuse(c, n, w);
    w_printf(w, "    GC_FOR_EACH(i, %s) {\n        ", cu_dims_sz(c, &Y->shape, 0, 1));
    cu_store(w, Y->dtype, "y[i]", "(double)s[0] + (double)i * (double)dl[0]");
    w_puts(w, "    }\n}\n\n");
    w_printf(&c->body, "    GC_LAUNCH(k%d, %s, stream, (%s, %s, %s%s));\n", kn, cu_dims_sz(c, &Y->shape, 0, 1), cu_ptr(c, Y),
             cu_ptr(c, n->in[0]), cu_ptr(c, n->in[2]), cu_karg(c, n));
    return 0;
}

/* ---- generators: Constant, ConstantOfShape, Range, Shape, Size, EyeLike ------------------------ */

/* Element i of data of dtype t as a C literal of t (integers exact, also
 * beyond 2^53). */
static const char *elem_lit(char *buf, size_t cap, DType t, const unsigned char *data, size_t i)
{
    if (t == DT_I64) {
        int64_t v;
        memcpy(&v, data + 8 * i, 8);
        if (v == INT64_MIN) snprintf(buf, cap, "(-9223372036854775807LL - 1)");
        else snprintf(buf, cap, "%lldLL", (long long)v);
        return buf;
    }
    if (t == DT_U64) {
        uint64_t v;
        memcpy(&v, data + 8 * i, 8);
        snprintf(buf, cap, "%lluULL", (unsigned long long)v);
        return buf;
    }
    return cfam_lit(buf, cap, t, ir_load_f64(t, data, i));
}

/* y[i] = tab[i] over a GC_TABLE of the values (cnt elements of y's dtype). */
static void emit_table_copy(Cu *c, const Node *n, const unsigned char *data, int64_t cnt)
{
    const Value *Y = n->out[0];
    const char *T = cfam_ctype(Y->dtype);
    Writer *w = &c->kern;
    const int kn = cu_kernel_begin(c, n);
    char lit[64];
    w_printf(w, "GC_TABLE %s k%d_v[%lld] = {", T, kn, (long long)cnt);
    for (int64_t i = 0; i < cnt; i++)
        w_printf(w, "%s%s", i == 0 ? "" : i % 8 == 0 ? ",\n    " : ", ", elem_lit(lit, sizeof lit, Y->dtype, data, (size_t)i));
    w_puts(w, "};\n");
    w_printf(w, "GC_KERNEL k%d(%s *y)\n{\n    GC_FOR_EACH(i, %lld) {\n        y[i] = k%d_v[i];\n    }\n}\n\n", kn, T, (long long)cnt, kn);
    launch(c, kn, cnt, &Y, 1);
}

/* Constant, ConstantOfShape, Range, the windows, MelWeightMatrix (constant
 * inputs only): the op's reference evaluation at
 * compile time (a Constant's tensor attribute bit for bit), as a table. */
static int emit_evaluated(Cu *c, const Node *n, Diag *d)
{
    if (n->op == OP_Range && cu_dyn(c, n)) return emit_range_dyn(c, n);
    const Value *Y = n->out[0];
    const int64_t cnt = ir_numel(&Y->shape);
    if (cnt == 0) return 0;
    size_t nb;
    unsigned char *bytes = cfam_eval_bytes(n, "CUDA", &nb, d);
    if (!bytes) return -1;
    if (n->op == OP_Constant) {
        const AttrVal *tv = &n->attrs[CONSTANT_VALUE];
        if (tv->set && tv->t.dtype == Y->dtype && tv->t.nbytes == nb) memcpy(bytes, tv->t.data, nb);
    }
    emit_table_copy(c, n, bytes, cnt);
    free(bytes);
    return 0;
}

/* Shape and Size of an input with runtime dims: a kernel writes the run's
 * extents from the shape table (static dims as literals). */
static void emit_shape_size_dyn(Cu *c, const Node *n)
{
    const Value *X = n->in[0], *Y = n->out[0];
    Writer *w = &c->kern;
    const int kn = cu_kernel_begin(c, n);
    const char *T = cfam_ctype(Y->dtype);
    int s = 0, e = 1;
    if (n->op == OP_Shape) ir_shape_range(n, &s, &e);
    const int cnt = e > s ? e - s : 0;
    if (!cnt) return;
    w_printf(w, "GC_KERNEL k%d(%s *y%s)\n{\n", kn, T, cu_kparam(c, n));
    cu_kuse(c, n, w);
    w_printf(w, "    GC_FOR_EACH(i, %d) {\n        const %s v[%d] = {", cnt, T, cnt);
    for (int k = s; k < e; k++)
        w_printf(w, "%s%s", k > s ? ", " : "",
                 n->op == OP_Size ? cu_dims_sz(c, &X->shape, 0, X->shape.rank) : cu_dims_sz(c, &X->shape, k, k + 1));
    w_puts(w, "};\n        y[i] = v[i];\n    }\n}\n\n");
    w_printf(&c->body, "    GC_LAUNCH(k%d, %d, stream, (%s%s));\n", kn, cnt, cu_ptr(c, Y), cu_karg(c, n));
}

/* Shape and Size: the input's static dims (or their product) as a table. */
static int emit_shape_size(Cu *c, const Node *n, Diag *d)
{
    (void)d;
    const Value *X = n->in[0];
    if (cu_dyn(c, n)) {
        emit_shape_size_dyn(c, n);
        return 0;
    }
    int64_t v[IR_MAX_RANK], cnt = 1;
    if (n->op == OP_Size) {
        v[0] = ir_numel(&X->shape);
    } else {
        int s, e;
        ir_shape_range(n, &s, &e);
        cnt = e > s ? e - s : 0;
        for (int k = s; k < e; k++) v[k - s] = X->shape.dims[k];
    }
    if (cnt > 0) emit_table_copy(c, n, (const unsigned char *)v, cnt);
    return 0;
}

/* EyeLike: y[row, col] = col - row == k. */
static int emit_eyelike(Cu *c, const Node *n, Diag *d)
{
    (void)d;
    const Value *Y = n->out[0];
    const int64_t total = ir_numel(&Y->shape);
    if (total == 0) return 0;
    const int64_t cols = Y->shape.dims[1];
    const char *T = cfam_ctype(Y->dtype);
    Writer *w = &c->kern;
    const int kn = cu_kernel_begin(c, n);
    w_printf(w, "GC_KERNEL k%d(%s *y)\n{\n    GC_FOR_EACH(i, %lld) {\n", kn, T, (long long)total);
    char val[96];
    snprintf(val, sizeof val, "i %% %lld - i / %lld == %lld", (long long)cols, (long long)cols, (long long)n->attrs[EYELIKE_K].i);
    w_puts(w, "        ");
    cu_store(w, Y->dtype, "y[i]", val);
    w_puts(w, "    }\n}\n\n");
    launch(c, kn, total, &Y, 1);
    return 0;
}

/* ---- TopK, Compress, ReverseSequence, MaxUnpool ------------------------------------------------ */

static int topk_check(const Node *n, Diag *d)
{
    if (n->in[0]->dtype == DT_BOOL) return diag_node_error(d, n, "the CUDA backend's TopK takes numbers only");
    return 0;
}

/* TopK: one thread per input element counts the elements of its row
 * before it in gcrt_topk_order's total order (NaN first when largest, ties
 * by index) and, when that rank is below k, writes itself and its index
 * there: ranks are unique, so no two threads write one output. */
static int emit_topk(Cu *c, const Node *n, Diag *d)
{
    (void)d;
    const Value *X = n->in[0], *Y = n->out[0], *I = n->n_out > 1 ? n->out[1] : NULL;
    const Shape *xs = &X->shape;
    const int ax = ir_norm_axis(n->attrs[TOPK_AXIS].i, xs->rank), largest = n->attrs[TOPK_LARGEST].i != 0;
    const int64_t total = ir_numel(xs), dim = xs->dims[ax], inner = dims_prod(xs, ax + 1, xs->rank), k = Y->shape.dims[ax];
    if (total == 0 || k == 0) return 0;
    const char *T = cfam_ctype(X->dtype);
    Writer *w = &c->kern;
    const int kn = cu_kernel_begin(c, n);
    w_printf(w, "GC_KERNEL k%d(%s *y, int64_t *yi, const %s *x)\n{\n    GC_FOR_EACH(i, %lld) {\n", kn, T, T, (long long)total);
    w_printf(w, "        const int64_t in = i %% %lld, j = i / %lld %% %lld, o = i / %lld, row = o * %lld + in;\n", (long long)inner,
             (long long)inner, (long long)dim, (long long)(inner * dim), (long long)(dim * inner));
    w_puts(w, "        const double a = (double)");
    cu_load(w, X->dtype, "x[i]");
    w_puts(w, ";\n        int64_t rank = 0;\n");
    w_printf(w, "        for (int64_t q = 0; q < %lld; q++) {\n", (long long)dim);
    w_printf(w, "            const double b = (double)");
    char e[64];
    snprintf(e, sizeof e, "x[row + q * %lld]", (long long)inner);
    cu_load(w, X->dtype, e);
    w_puts(w, ";\n            const int an = a != a, bn = b != b;\n");
    w_printf(w, "            rank += (an || bn) ? (an && bn ? q < j : %s) : a != b ? b %s a : q < j;\n", largest ? "bn" : "an",
             largest ? ">" : "<");
    w_puts(w, "        }\n");
    w_printf(w, "        if (rank < %lld) {\n", (long long)k);
    w_printf(w, "            const int64_t p = (o * %lld + rank) * %lld + in;\n", (long long)k, (long long)inner);
    w_puts(w, "            y[p] = x[i];\n            if (yi) yi[p] = j;\n        }\n    }\n}\n\n");
    w_printf(&c->body, "    GC_LAUNCH(k%d, %lld, stream, (%s, %s, %s));\n", kn, (long long)total, cu_ptr(c, Y), I ? cu_ptr(c, I) : "NULL",
             cu_ptr(c, X));
    return 0;
}

/* Compress: the condition is a constant, so the kept positions along the
 * axis (or of the flattened input) are a table; one thread per output
 * element. */
static int emit_compress(Cu *c, const Node *n, Diag *d)
{
    (void)d;
    const Value *X = n->in[0], *Cd = n->in[1], *Y = n->out[0];
    const int64_t total = ir_numel(&Y->shape);
    if (total == 0) return 0;
    const Shape *xs = &X->shape;
    const AttrVal *axis = &n->attrs[COMPRESS_AXIS];
    int64_t dim = ir_numel(xs), inner = 1, len = Cd->shape.dims[0];
    if (axis->set) {
        const int ax = ir_norm_axis(axis->i, xs->rank);
        dim = xs->dims[ax];
        inner = dims_prod(xs, ax + 1, xs->rank);
    }
    const char *T = cfam_ctype(X->dtype);
    Writer *w = &c->kern;
    const int kn = cu_kernel_begin(c, n);
    int64_t kept = 0;
    w_printf(w, "GC_TABLE int64_t k%d_kept[] = {", kn);
    for (int64_t i = 0; i < len && i < dim; i++)
        if (ir_load_f64(DT_BOOL, Cd->data, (size_t)i) != 0.0) w_printf(w, "%s%lld", kept++ ? ", " : "", (long long)i);
    w_puts(w, "};\n");
    w_printf(w, "GC_KERNEL k%d(%s *y, const %s *x)\n{\n    GC_FOR_EACH(i, %lld) {\n", kn, T, T, (long long)total);
    w_printf(w, "        const int64_t in = i %% %lld, j = i / %lld %% %lld, o = i / %lld;\n", (long long)inner, (long long)inner,
             (long long)kept, (long long)(inner * kept));
    w_printf(w, "        y[i] = x[(o * %lld + k%d_kept[j]) * %lld + in];\n    }\n}\n\n", (long long)dim, kn, (long long)inner);
    w_printf(&c->body, "    GC_LAUNCH(k%d, %lld, stream, (%s, %s));\n", kn, (long long)total, cu_ptr(c, Y), cu_ptr(c, X));
    return 0;
}

static int compress_check(const Node *n, Diag *d)
{
    return n->in[1]->kind == VK_CONST ? 0 : diag_node_error(d, n, "the CUDA backend's Compress takes a constant condition");
}

/* IfSelect (an If whose runtime condition picks between branches of one
 * shape; differing shapes are runtime shapes, which this backend refuses):
 * one thread per element reads the condition and copies from the branch. */
static int emit_ifselect(Cu *c, const Node *n, Diag *d)
{
    (void)d;
    const Value *C = n->in[0], *A = n->in[1], *B = n->in[2], *Y = n->out[0];
    const int64_t total = ir_numel(&Y->shape);
    if (total == 0) return 0;
    const char *T = cfam_ctype(Y->dtype), *CT = cfam_ctype(C->dtype);
    Writer *w = &c->kern;
    const int kn = cu_kernel_begin(c, n);
    w_printf(w, "GC_KERNEL k%d(%s *y, const %s *c, const %s *a, const %s *b)\n{\n    GC_FOR_EACH(i, %lld) {\n", kn, T, CT, T, T,
             (long long)total);
    w_printf(w, "        y[i] = c[0] != 0 ? a[i] : b[i];\n    }\n}\n\n");
    w_printf(&c->body, "    GC_LAUNCH(k%d, %lld, stream, (%s, %s, %s, %s));\n", kn, (long long)total, cu_ptr(c, Y), cu_ptr(c, C),
             cu_ptr(c, A), cu_ptr(c, B));
    return 0;
}

static int ifselect_check(const Node *n, Diag *d)
{
    return ir_numel(&n->in[1]->shape) == ir_numel(&n->in[2]->shape) && n->in[1]->shape.rank == n->in[2]->shape.rank
               ? 0
               : diag_node_error(d, n, "the CUDA backend's IfSelect takes branches of one shape");
}

/* ReverseSequence: per (batch, time) the first lens[b] steps reversed
 * (lens clamped to [0, T]); one thread per output element. */
static int emit_reverse_sequence(Cu *c, const Node *n, Diag *d)
{
    (void)d;
    const Value *X = n->in[0], *L = n->in[1], *Y = n->out[0];
    const int64_t total = ir_numel(&Y->shape);
    if (total == 0) return 0;
    const Shape *xs = &X->shape;
    const int ba = (int)n->attrs[REVERSE_SEQUENCE_BATCH_AXIS].i;
    const int64_t d0 = xs->dims[0], d1 = xs->dims[1], inner = dims_prod(xs, 2, xs->rank), tdim = ba == 0 ? d1 : d0;
    const char *T = cfam_ctype(X->dtype);
    Writer *w = &c->kern;
    const int kn = cu_kernel_begin(c, n);
    w_printf(w, "GC_KERNEL k%d(%s *y, const %s *x, const %s *lens)\n{\n    GC_FOR_EACH(i, %lld) {\n", kn, T, T, cfam_ctype(L->dtype),
             (long long)total);
    w_printf(w, "        const int64_t in = i %% %lld, i1 = i / %lld %% %lld, i0 = i / %lld;\n", (long long)inner, (long long)inner,
             (long long)d1, (long long)(inner * d1));
    w_printf(w, "        const int64_t b = %s, t = %s;\n", ba == 0 ? "i0" : "i1", ba == 0 ? "i1" : "i0");
    w_printf(w, "        int64_t len = (int64_t)lens[b];\n        len = len < 0 ? 0 : len > %lld ? %lld : len;\n", (long long)tdim,
             (long long)tdim);
    w_puts(w, "        const int64_t st = t < len ? len - 1 - t : t;\n");
    w_printf(w, "        y[i] = x[(%s * %lld + %s) * %lld + in];\n    }\n}\n\n", ba == 0 ? "i0" : "st", (long long)d1,
             ba == 0 ? "st" : "i1", (long long)inner);
    w_printf(&c->body, "    GC_LAUNCH(k%d, %lld, stream, (%s, %s, %s));\n", kn, (long long)total, cu_ptr(c, Y), cu_ptr(c, X),
             cu_ptr(c, L));
    return 0;
}

static int maxunpool_check(const Node *n, Diag *d)
{
    int64_t src[IR_MAX_RANK];
    int sr = ir_maxunpool_index_dims(n, src);
    if (sr < 1 || sr > 3) return diag_node_error(d, n, "the CUDA backend takes 1 to 3 spatial dims for MaxUnpool");
    return index_check(n, 1, d);
}

/* MaxUnpool: y = 0, then in one thread each x[i] in order to the place its
 * index names (gcrt_maxunpool's rules: the index refers to the unpadded
 * shape of ir_maxunpool_index_dims; one outside it or outside y is skipped). */
static int emit_maxunpool(Cu *c, const Node *n, Diag *d)
{
    (void)d;
    const Value *X = n->in[0], *I = n->in[1], *Y = n->out[0];
    const int64_t total = ir_numel(&Y->shape);
    if (total == 0) return 0;
    int64_t src[IR_MAX_RANK];
    const int sr = ir_maxunpool_index_dims(n, src);
    int64_t s3[3], d3[3];
    for (int i = 0; i < 3; i++) {
        int j = i - (3 - sr);
        s3[i] = j < 0 ? 1 : src[j];
        d3[i] = j < 0 ? 1 : Y->shape.dims[2 + j];
    }
    const int64_t NC = X->shape.dims[0] * X->shape.dims[1], psrc = s3[0] * s3[1] * s3[2], pdst = d3[0] * d3[1] * d3[2];
    const char *T = cfam_ctype(Y->dtype);
    w_printf(&c->body, "    if (cudaMemsetAsync(%s, 0, %lld, stream) != cudaSuccess) return -1;\n", cu_ptr(c, Y),
             (long long)(total * (int64_t)ir_dtype_size(Y->dtype)));
    const int64_t nx = ir_numel(&X->shape);
    if (nx == 0) return 0;
    Writer *w = &c->kern;
    const int kn = cu_kernel_begin(c, n);
    w_printf(w, "GC_KERNEL k%d(%s *y, const %s *x, const %s *idx)\n{\n    GC_FOR_EACH(s, 1) {\n", kn, T, T, cfam_ctype(I->dtype));
    w_printf(w, "        for (int64_t i = s; i < %lld; i++) {\n", (long long)nx);
    w_puts(w, "            const int64_t q = (int64_t)idx[i];\n");
    w_printf(w, "            if (q < 0 || q >= %lld) continue;\n", (long long)(NC * psrc));
    w_printf(w, "            const int64_t r = q %% %lld, cw = r %% %lld, ch = r / %lld %% %lld, cd = r / %lld;\n", (long long)psrc,
             (long long)s3[2], (long long)s3[2], (long long)s3[1], (long long)(s3[1] * s3[2]));
    w_printf(w, "            if (cd < %lld && ch < %lld && cw < %lld) y[q / %lld * %lld + (cd * %lld + ch) * %lld + cw] = x[i];\n",
             (long long)d3[0], (long long)d3[1], (long long)d3[2], (long long)psrc, (long long)pdst, (long long)d3[1],
             (long long)d3[2]);
    w_puts(w, "        }\n    }\n}\n\n");
    w_printf(&c->body, "    GC_LAUNCH(k%d, 1, stream, (%s, %s, %s));\n", kn, cu_ptr(c, Y), cu_ptr(c, X), cu_ptr(c, I));
    return 0;
}

/* ---- the table --------------------------------------------------------------------------------- */

#define OUT "a generated kernel, one thread per output element"

const CudaEntry cuda_index_entries[] = {
    {OP_Pad, pad_check, emit_pad, NULL, OUT, 1, 0},
    {OP_Tile, NULL, emit_tile_expand, NULL, OUT, 1, 0},
    {OP_Expand, NULL, emit_tile_expand, NULL, OUT, 1, 0},
    {OP_Split, split_check, emit_split, NULL, "generated kernels, one per output, one thread per element", 1, 1},
    {OP_Trilu, NULL, emit_trilu, NULL, OUT, 1, 0},
    {OP_GatherElements, gather_elements_check, emit_gather_elements, NULL, OUT, 1, 0},
    {OP_ScatterElements, scatter_elements_check, emit_scatter_elements, NULL,
     "a device copy of the data, then a generated kernel applying the updates in order (one thread)", 0, 0},
    {OP_GatherND, nd_check, emit_gather_nd, NULL, OUT, 1, 0},
    {OP_ScatterND, nd_check, emit_scatter_nd, NULL,
     "a device copy of the data, then a generated kernel applying the updates in order (one thread)", 0, 0},
    {OP_CumSum, cumsum_check, emit_cumsum, NULL, OUT, 1, 0},
    {OP_ArgMax, arg_check, emit_arg, NULL, "a generated kernel, one thread per output element (a row of the axis)", 0, 0},
    {OP_ArgMin, arg_check, emit_arg, NULL, "a generated kernel, one thread per output element (a row of the axis)", 0, 0},
    {OP_OneHot, NULL, emit_onehot, NULL, OUT, 0, 2},
    {OP_Constant, NULL, emit_evaluated, NULL, "evaluated at compile time: a table copied by a generated kernel", 0, 0},
    {OP_ConstantOfShape, NULL, emit_evaluated, NULL, "evaluated at compile time: a table copied by a generated kernel", 0, 0},
    {OP_Range, NULL, emit_evaluated, NULL,
     "evaluated at compile time: a table copied by a generated kernel (runtime operands: the count read back, a kernel)", 0, 2},
    {OP_HannWindow, NULL, emit_evaluated, NULL, "evaluated at compile time: a table copied by a generated kernel", 0, 0},
    {OP_HammingWindow, NULL, emit_evaluated, NULL, "evaluated at compile time: a table copied by a generated kernel", 0, 0},
    {OP_BlackmanWindow, NULL, emit_evaluated, NULL, "evaluated at compile time: a table copied by a generated kernel", 0, 0},
    {OP_MelWeightMatrix, NULL, emit_evaluated, NULL, "evaluated at compile time: a table copied by a generated kernel", 0, 0},
    {OP_Shape, NULL, emit_shape_size, NULL, "the static dims as a table copied by a generated kernel", 0, 1},
    {OP_Size, NULL, emit_shape_size, NULL, "the static size as a table copied by a generated kernel", 0, 1},
    {OP_EyeLike, NULL, emit_eyelike, NULL, OUT, 1, 0},
    {OP_TopK, topk_check, emit_topk, NULL, "a generated kernel, one thread per input element (its rank in the row)", 1, 0},
    {OP_Compress, compress_check, emit_compress, NULL, OUT, 1, 0},
    {OP_ReverseSequence, NULL, emit_reverse_sequence, NULL, OUT, 1, 0},
    {OP_IfSelect, ifselect_check, emit_ifselect, NULL, OUT, 1, 0},
    {OP_MaxUnpool, maxunpool_check, emit_maxunpool, NULL, "a device memset, then a generated kernel placing the inputs in order (one thread)", 0, 0},
    {-1, NULL, NULL, NULL, NULL, 0, 0},
};
