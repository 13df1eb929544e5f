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
#include "../../ir/ops/signal.h"
#include "../../ir/ops/signal_attrs.h"

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
 * for the dims of shape s with used[K] (NULL: all; c0 outermost); runtime
 * dims read from the kernel's shape table. */
static void coords(Cu *c, Writer *w, const Shape *s, const int *used)
{
    CgenProd st = cgen_prod(1);
    for (int k = s->rank - 1; k >= 0; k--) {
        if (!used || used[k]) {
            if (k == 0) w_printf(w, "        const int64_t c0 = i / %s;\n", cu_sz(c, st));
            else w_printf(w, "        const int64_t c%d = i / %s %% %s;\n", k, cu_sz(c, st), cu_dims_sz(c, s, k, k + 1));
        }
        cgen_prod_mul_dim(&st, s, k);
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

/* The same over all elements of vs[0] for node n (its runtime extents, and
 * the shape table, when it has runtime dims). */
static void launch_all(Cu *c, const Node *n, int kn, const Value *const *vs, int nv)
{
    Writer *b = &c->body;
    w_printf(b, "    GC_LAUNCH(k%d, %s, stream, (", kn, cu_dims_sz(c, &vs[0]->shape, 0, vs[0]->shape.rank));
    for (int j = 0; j < nv; j++) w_printf(b, "%s%s", j ? ", " : "", cu_ptr(c, vs[j]));
    w_printf(b, "%s));\n", cu_karg(c, n));
}

/* The block that reads operand j of n back and sets the data-dependent dims
 * of its output 0 from it: dim k = expr(n, k, values) (dims_text.c); none
 * when the node sets no dim. */
static void set_dims_from(Cu *c, const Node *n, int j, const char *what,
                          const char *(*expr)(const Node *, int, const char *, char *, size_t))
{
    const Value *Y = n->out[0];
    if (!cgen_sets_dims(c->g, n)) return;
    char e[4096];
    w_printf(&c->body, "    { /* its %s, read back: the output's extents */\n", what);
    cu_read_host(c, n->in[j], "rb_vals");
    for (int k = 0; k < Y->shape.rank; k++)
        if (cgen_own_dim(c->g, Y, k)) cu_set_dim(c, Y, k, expr(n, k, "rb_vals", e, sizeof e));
    cu_dims_to_device(c);
    w_puts(&c->body, "    }\n");
}

/* y = x (a device copy unless they share memory). */
static void copy_data(Cu *c, const Value *X, const Value *Y)
{
    CgenProd bytes = cgen_dims_prod(&Y->shape, 0, Y->shape.rank);
    bytes.c *= (int64_t)ir_dtype_size(Y->dtype);
    const char *px = cu_ptr(c, X), *py = cu_ptr(c, Y);
    w_printf(&c->body, "    if ((const void *)%s != (const void *)%s &&\n", py, px);
    w_printf(&c->body, "        cudaMemcpyAsync(%s, %s, %s, cudaMemcpyDeviceToDevice, stream) != cudaSuccess) return -1;\n", py,
             px, cu_sz(c, bytes));
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
    const int r = n->in[0]->shape.rank;
    if (r == 0 || (n->in[1]->kind == VK_CONST && ir_const_ints(n->in[1], pads, 2 * IR_MAX_RANK) != 2 * r))
        return diag_node_error(d, n, "the CUDA backend's Pad takes rank >= 1");
    if (n->in[1]->kind != VK_CONST && ir_numel(&n->in[1]->shape) != 2 * r)
        return diag_node_error(d, n, "the CUDA backend's Pad takes pads of 2 * rank values");
    if (n->n_in > 3 && n->in[3]) return diag_node_error(d, n, "the CUDA backend's Pad takes no axes input yet");
    return 0;
}

/* Pad: per axis the source index of output index o - pad_begin (constant:
 * none outside; edge: clamped; reflect: mirrored with period 2 (dim - 1)).
 * Pads given at run time: the kernel reads them from the operand, and
 * where they decide the output's extents (data-dependent dims) the host
 * reads them back first. */
static int emit_pad(Cu *c, const Node *n, Diag *d)
{
    (void)d;
    const Value *X = n->in[0], *Y = n->out[0], *V = n->n_in > 2 ? n->in[2] : NULL, *P = n->in[1];
    const int rt = P->kind != VK_CONST; /* runtime pads */
    if (rt) set_dims_from(c, n, 1, "pads", cgen_pad_dim_expr);
    if (ir_numel(&Y->shape) == 0) return 0;
    const int r = X->shape.rank;
    int64_t pads[2 * IR_MAX_RANK];
    CgenProd st[IR_MAX_RANK];
    if (!rt) ir_const_ints(P, pads, 2 * IR_MAX_RANK);
    cu_strides_p(&X->shape, st);
    const int mode = cgen_pad_mode(n);
    const char *T = cfam_ctype(Y->dtype);
    Writer *w = &c->kern;
    const int kn = cu_kernel_begin(c, n);
    w_printf(w, "GC_KERNEL k%d(%s *y, const %s *x%s%s%s%s%s)\n{\n", kn, T, T, V ? ", const " : "", V ? T : "", V ? " *v" : "",
             rt ? ", const int64_t *p" : "", cu_kparam(c, n));
    cu_kuse(c, n, w);
    w_printf(w, "    GC_FOR_EACH(i, %s) {\n", cu_dims_sz(c, &Y->shape, 0, Y->shape.rank));
    coords(c, w, &Y->shape, NULL);
    w_puts(w, "        int64_t off = 0, j;\n");
    for (int k = 0; k < r; k++) {
        char dm[192], d2[256];
        snprintf(dm, sizeof dm, "%s", cu_dims_sz(c, &X->shape, k, k + 1));
        const int dyn_dim = X->shape.sym[k] != 0;
        const long long dim = (long long)X->shape.dims[k];
        if (rt) w_printf(w, "        j = c%d - p[%d];\n", k, k);
        else w_printf(w, "        j = c%d - %lld;\n", k, (long long)pads[k]);
        if (dyn_dim) snprintf(d2, sizeof d2, "2 * (%s - 1)", dm);
        else snprintf(d2, sizeof d2, "%lld", 2 * (dim - 1));
        if (mode == 2 || (mode == 1 && !dyn_dim && dim == 1)) {
            if (dyn_dim) w_printf(w, "        j = j < 0 ? 0 : j >= %s ? %s - 1 : j;\n", dm, dm);
            else w_printf(w, "        j = j < 0 ? 0 : j >= %lld ? %lld : j;\n", dim, dim - 1);
        } else if (mode == 1) {
            w_printf(w, "        if (j < 0 || j >= %s) {\n", dm);
            if (dyn_dim) w_printf(w, "            if (%s == 1) j = 0;\n            else {\n    ", dm);
            w_printf(w, "            j %%= %s;\n", d2);
            if (dyn_dim) w_puts(w, "    ");
            w_printf(w, "            if (j < 0) j += %s;\n", d2);
            if (dyn_dim) w_puts(w, "    ");
            w_printf(w, "            if (j >= %s) j = %s - j;\n", dm, d2);
            if (dyn_dim) w_puts(w, "            }\n");
            w_puts(w, "        }\n");
        } else {
            w_printf(w, "        if (off >= 0 && (j < 0 || j >= %s)) off = -1;\n", dm);
        }
        w_printf(w, "        if (off >= 0) off += j * %s;\n", cu_sz(c, st[k]));
    }
    if (mode == 0) w_printf(w, "        y[i] = off >= 0 ? x[off] : %s;\n", V ? "v[0]" : "0");
    else w_puts(w, "        y[i] = x[off];\n");
    w_puts(w, "    }\n}\n\n");
    const Value *vs[4] = {Y, X};
    int nv = 2;
    if (V) vs[nv++] = V;
    if (rt) vs[nv++] = P;
    launch_all(c, n, kn, vs, nv);
    return 0;
}

/* Tile and Expand: y[i] = x[the output coordinates modulo (Tile) or
 * broadcast onto (Expand) the input's dims]. Repeats or a shape given at
 * run time that decides the output's extents is read back by the host. */
static int emit_tile_expand(Cu *c, const Node *n, Diag *d)
{
    (void)d;
    const Value *X = n->in[0], *Y = n->out[0];
    const int tile = n->op == OP_Tile, r = Y->shape.rank, off = r - X->shape.rank;
    if (n->in[1]->kind != VK_CONST)
        set_dims_from(c, n, 1, tile ? "repeats" : "shape", tile ? cgen_tile_dim_expr : cgen_expand_dim_expr);
    if (ir_numel(&Y->shape) == 0) return 0;
    CgenProd st[IR_MAX_RANK];
    cu_strides_p(&X->shape, st);
    const char *T = cfam_ctype(Y->dtype);
    Writer *w = &c->kern;
    const int kn = cu_kernel_begin(c, n);
    w_printf(w, "GC_KERNEL k%d(%s *y, const %s *x%s)\n{\n", kn, T, T, cu_kparam(c, n));
    cu_kuse(c, n, w);
    w_printf(w, "    GC_FOR_EACH(i, %s) {\n", cu_dims_sz(c, &Y->shape, 0, r));
    int used[IR_MAX_RANK];
    for (int k = 0; k < r; k++) used[k] = k >= off && (X->shape.sym[k - off] || X->shape.dims[k - off] != 1);
    coords(c, w, &Y->shape, used);
    w_puts(w, "        int64_t o = 0;\n");
    for (int k = off; k < r; k++) {
        if (!used[k]) continue;
        const char *xd = cu_dims_sz(c, &X->shape, k - off, k - off + 1);
        if (tile) w_printf(w, "        o += c%d %% %s * %s;\n", k, xd, cu_sz(c, st[k - off]));
        else if (X->shape.sym[k - off]) w_printf(w, "        if (%s != 1) o += c%d * %s;\n", xd, k, cu_sz(c, st[k - off]));
        else w_printf(w, "        o += c%d * %s;\n", k, cu_sz(c, st[k - off]));
    }
    w_puts(w, "        y[i] = x[o];\n    }\n}\n\n");
    const Value *vs[2] = {Y, X};
    launch_all(c, n, kn, vs, 2);
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
 * the outer count may be runtime dims). Sizes given at run time (`split`,
 * the outputs' extents along the axis data-dependent dims) are read back by
 * the host and set in the shape table; each output's start `at` is then the
 * sum of the extents before it, which its kernel reads there. */
static int emit_split(Cu *c, const Node *n, Diag *d)
{
    (void)d;
    const Value *X = n->in[0];
    const Shape *xs = &X->shape;
    const int ax = ir_norm_axis(n->attrs[SPLIT_AXIS].i, xs->rank);
    const CgenProd inner = cgen_dims_prod(xs, ax + 1, xs->rank);
    const int64_t A = xs->dims[ax];
    const char *T = cfam_ctype(X->dtype);
    if (n->n_in > 1 && n->in[1] && n->in[1]->kind != VK_CONST && cgen_sets_dims(c->g, n)) {
        Writer *b = &c->body;
        w_puts(b, "    { /* its split, read back: the outputs' extents */\n");
        b->indent += 2;
        CgenDims o = cu_dims_ctx(c);
        cgen_write_split_dims(&o, n, NULL);
        b->indent -= 2;
        cu_dims_to_device(c);
        w_puts(b, "    }\n");
    }
    int64_t at = 0;
    Writer atd; /* the runtime extents before this output, "dim[3] + dim[4] + " */
    w_init(&atd);
    for (int q = 0; q < n->n_out; q++) {
        const Value *Y = n->out[q];
        if (!Y) continue;
        const CgenProd row = cgen_dims_prod(&Y->shape, ax, Y->shape.rank); /* this output's part of one outer index */
        if (ir_numel(&Y->shape) > 0) {
            Writer *w = &c->kern;
            const int kn = cu_kernel_begin(c, n);
            w_printf(w, "/* output %d */\n", q);
            w_printf(w, "GC_KERNEL k%d(%s *y, const %s *x%s)\n{\n", kn, T, T, cu_kparam(c, n));
            cu_kuse(c, n, w);
            w_printf(w, "    GC_FOR_EACH(i, %s) {\n", cu_dims_sz(c, &Y->shape, 0, Y->shape.rank));
            if (atd.len)
                w_printf(w, "        y[i] = x[(i / %s * %lld + %s%lld) * %s + i %% %s];\n    }\n}\n\n", cu_sz(c, row), (long long)A,
                         atd.buf, (long long)at, cu_sz(c, inner), cu_sz(c, row));
            else
                w_printf(w, "        y[i] = x[(i / %s * %lld + %lld) * %s + i %% %s];\n    }\n}\n\n", cu_sz(c, row), (long long)A,
                         (long long)at, cu_sz(c, inner), cu_sz(c, row));
            w_printf(&c->body, "    GC_LAUNCH(k%d, %s, stream, (%s, %s%s));\n", kn, cu_dims_sz(c, &Y->shape, 0, Y->shape.rank),
                     cu_ptr(c, Y), cu_ptr(c, X), cu_karg(c, n));
        }
        if (Y->shape.sym[ax]) w_printf(&atd, "%s + ", cu_dims_sz(c, &Y->shape, ax, ax + 1));
        else at += Y->shape.dims[ax];
    }
    w_free(&atd);
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

/* GatherElements: y[j] = x[j's coordinates, the axis one replaced by idx[j]]
 * (runtime extents and strides read from the shape table). */
static int emit_gather_elements(Cu *c, const Node *n, Diag *d)
{
    (void)d;
    const Value *X = n->in[0], *I = n->in[1], *Y = n->out[0];
    if (ir_numel(&Y->shape) == 0) return 0;
    const int r = X->shape.rank, ax = ir_norm_axis(n->attrs[GATHER_ELEMENTS_AXIS].i, r);
    CgenProd st[IR_MAX_RANK];
    cu_strides_p(&X->shape, st);
    const char *T = cfam_ctype(Y->dtype), *TI = cfam_ctype(I->dtype);
    char len[200];
    snprintf(len, sizeof len, "%s", cu_dims_sz(c, &X->shape, ax, ax + 1));
    Writer *w = &c->kern;
    const int kn = cu_kernel_begin(c, n);
    w_printf(w, "GC_KERNEL k%d(%s *y, const %s *x, const %s *idx%s)\n{\n", kn, T, T, TI, cu_kparam(c, n));
    cu_kuse(c, n, w);
    w_printf(w, "    GC_FOR_EACH(i, %s) {\n", cu_dims_sz(c, &Y->shape, 0, Y->shape.rank));
    int used[IR_MAX_RANK] = {0};
    for (int k = 0; k < r; k++) used[k] = k != ax;
    coords(c, w, &I->shape, used);
    w_printf(w, "        int64_t t = (int64_t)idx[i];\n        if (t < 0) t += %s;\n", len);
    w_puts(w, "        const int64_t o = ");
    for (int k = 0; k < r; k++) {
        if (k == ax) w_printf(w, "%st * %s", k ? " + " : "", cu_sz(c, st[k]));
        else w_printf(w, "%sc%d * %s", k ? " + " : "", k, cu_sz(c, st[k]));
    }
    w_puts(w, ";\n");
    w_printf(w, "        y[i] = t >= 0 && t < %s ? x[o] : (%s)0;\n    }\n}\n\n", len, T);
    const Value *vs[3] = {Y, X, I};
    launch_all(c, n, kn, vs, 3);
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
 * order: y[j's coordinates, the axis one replaced by idx[j]] (op)= u[j]
 * (runtime extents and strides read from the shape table). */
static int emit_scatter_elements(Cu *c, const Node *n, Diag *d)
{
    const Value *X = n->in[0], *I = n->in[1], *U = n->in[2], *Y = n->out[0];
    if (ir_numel(&Y->shape) == 0) return 0;
    const char *step = scatter_step(n->attrs[SCATTER_ELEMENTS_REDUCTION].s);
    if (!step) return diag_node_error(d, n, "invalid reduction");
    copy_data(c, X, Y);
    if (ir_numel(&I->shape) == 0) return 0;
    const int r = X->shape.rank, ax = ir_norm_axis(n->attrs[SCATTER_ELEMENTS_AXIS].i, r);
    CgenProd st[IR_MAX_RANK];
    cu_strides_p(&X->shape, st);
    const char *T = cfam_ctype(Y->dtype), *TI = cfam_ctype(I->dtype);
    char len[200];
    snprintf(len, sizeof len, "%s", cu_dims_sz(c, &X->shape, ax, ax + 1));
    Writer *w = &c->kern;
    const int kn = cu_kernel_begin(c, n);
    w_printf(w, "GC_KERNEL k%d(%s *y, const %s *idx, const %s *u%s)\n{\n", kn, T, TI, T, cu_kparam(c, n));
    cu_kuse(c, n, w);
    w_printf(w, "    GC_FOR_EACH(s, 1) {\n        for (int64_t i = s; i < %s; i++) {\n", cu_dims_sz(c, &I->shape, 0, I->shape.rank));
    int used[IR_MAX_RANK] = {0};
    for (int k = 0; k < r; k++) used[k] = k != ax;
    Writer cw;
    w_init(&cw);
    coords(c, &cw, &I->shape, used);
    /* indent the coordinates one more level */
    for (const char *p = cu_wtext(&cw); *p; p++) {
        if (p == cu_wtext(&cw) || p[-1] == '\n') w_puts(w, "    ");
        w_printf(w, "%c", *p);
    }
    w_free(&cw);
    w_printf(w, "            int64_t t = (int64_t)idx[i];\n            if (t < 0) t += %s;\n", len);
    w_printf(w, "            if (t < 0 || t >= %s) continue;\n", len);
    w_puts(w, "            const int64_t o = ");
    for (int k = 0; k < r; k++) {
        if (k == ax) w_printf(w, "%st * %s", k ? " + " : "", cu_sz(c, st[k]));
        else w_printf(w, "%sc%d * %s", k ? " + " : "", k, cu_sz(c, st[k]));
    }
    w_puts(w, ";\n            ");
    write_step(w, step, "o", "i", T);
    w_puts(w, "\n        }\n    }\n}\n\n");
    w_printf(&c->body, "    GC_LAUNCH(k%d, 1, stream, (%s, %s, %s%s));\n", kn, cu_ptr(c, Y), cu_ptr(c, I), cu_ptr(c, U), cu_karg(c, n));
    return 0;
}

static int nd_check(const Node *n, Diag *d)
{
    if (index_check(n, 1, d)) return -1;
    const Shape *is = &n->in[1]->shape;
    if (is->rank < 1) return diag_node_error(d, n, "indices need a last dim");
    return is->sym[is->rank - 1] ? diag_node_error(d, n, "the CUDA backend needs the indices' last dim static") : 0;
}

/* Into a kernel: `int64_t o` = the offset in x of index tuple j (m
 * components of idx from j * m, over data dims [from, from + m) of xs with
 * strides st; runtime ones from the shape table), -1 when a component is out
 * of range. */
static void nd_offset(Cu *c, Writer *w, const char *ind, int m, const Shape *xs, int from, const CgenProd *st)
{
    w_printf(w, "%sint64_t o = 0;\n", ind);
    for (int k = 0; k < m; k++) {
        char dk[200];
        snprintf(dk, sizeof dk, "%s", cu_dims_sz(c, xs, from + k, from + k + 1));
        w_printf(w, "%s{\n%s    int64_t t = (int64_t)idx[j * %d + %d];\n", ind, ind, m, k);
        w_printf(w, "%s    if (t < 0) t += %s;\n", ind, dk);
        w_printf(w, "%s    if (o >= 0) o = t >= 0 && t < %s ? o + t * %s : -1;\n%s}\n", ind, dk, cu_sz(c, st[from + k]), ind);
    }
}

/* GatherND: output element i is element e of the slice of tuple j. */
static int emit_gather_nd(Cu *c, const Node *n, Diag *d)
{
    (void)d;
    const Value *X = n->in[0], *I = n->in[1], *Y = n->out[0];
    if (ir_numel(&Y->shape) == 0) return 0;
    const Shape *xs = &X->shape, *is = &I->shape;
    const int b = (int)n->attrs[GATHER_ND_BATCH_DIMS].i, q = is->rank, m = (int)is->dims[q - 1];
    const CgenProd slice = cgen_dims_prod(xs, b + m, xs->rank), batch_stride = cgen_dims_prod(xs, b, xs->rank),
                   per_batch = cgen_dims_prod(is, b, q - 1);
    CgenProd st[IR_MAX_RANK];
    cu_strides_p(xs, st);
    const char *T = cfam_ctype(Y->dtype), *TI = cfam_ctype(I->dtype);
    Writer *w = &c->kern;
    const int kn = cu_kernel_begin(c, n);
    w_printf(w, "GC_KERNEL k%d(%s *y, const %s *x, const %s *idx%s)\n{\n", kn, T, T, TI, cu_kparam(c, n));
    cu_kuse(c, n, w);
    w_printf(w, "    GC_FOR_EACH(i, %s) {\n", cu_dims_sz(c, &Y->shape, 0, Y->shape.rank));
    w_printf(w, "        const int64_t j = i / %s, e = i %% %s;\n", cu_sz(c, slice), cu_sz(c, slice));
    nd_offset(c, w, "        ", m, xs, b, st);
    if (b > 0) w_printf(w, "        y[i] = o >= 0 ? x[j / %s * %s + o + e] : (%s)0;\n", cu_sz(c, per_batch), cu_sz(c, batch_stride), T);
    else w_printf(w, "        y[i] = o >= 0 ? x[o + e] : (%s)0;\n", T);
    w_puts(w, "    }\n}\n\n");
    const Value *vs[3] = {Y, X, I};
    launch_all(c, n, kn, vs, 3);
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
    CgenProd st[IR_MAX_RANK];
    cu_strides_p(xs, st);
    const char *T = cfam_ctype(Y->dtype), *TI = cfam_ctype(I->dtype);
    Writer *w = &c->kern;
    const int kn = cu_kernel_begin(c, n);
    w_printf(w, "GC_KERNEL k%d(%s *y, const %s *idx, const %s *u)\n{\n    GC_FOR_EACH(s, 1) {\n", kn, T, TI, T);
    w_printf(w, "        for (int64_t j = s; j < %lld; j++) {\n", (long long)tuples);
    nd_offset(c, w, "            ", m, xs, 0, st);
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

/* Dim k of ConstantOfShape's output, or the window's length (k 0): the
 * operand value itself. */
static const char *value_dim_expr(const Node *n, int k, const char *v, char *buf, size_t cap)
{
    (void)n;
    snprintf(buf, cap, "(int64_t)%s[%d]", v, k);
    return buf;
}

/* ConstantOfShape with a shape given at run time: its extents read back,
 * then y[i] = the value over them. */
static int emit_constant_of_shape_dyn(Cu *c, const Node *n, Diag *d)
{
    const Value *Y = n->out[0];
    if (ir_shape_has_sym(&n->in[0]->shape))
        return diag_node_error(d, n, "input 'input' must have a static shape to be read at run time");
    set_dims_from(c, n, 0, "shape", value_dim_expr);
    if (ir_numel(&Y->shape) == 0) return 0;
    const size_t es = ir_dtype_size(Y->dtype);
    unsigned char elem[16] = {0};
    const AttrVal *a = &n->attrs[CONSTANT_OF_SHAPE_VALUE];
    if (a->set && a->t.dtype == Y->dtype && a->t.nbytes == es) memcpy(elem, a->t.data, es);
    else ir_store_f64(Y->dtype, elem, 0, a->set ? ir_load_f64(a->t.dtype, a->t.data, 0) : 0.0);
    char lit[64];
    Writer *w = &c->kern;
    const int kn = cu_kernel_begin(c, n);
    w_printf(w, "GC_KERNEL k%d(%s *y%s)\n{\n", kn, cfam_ctype(Y->dtype), cu_kparam(c, n));
    cu_kuse(c, n, w);
    w_printf(w, "    GC_FOR_EACH(i, %s) {\n        y[i] = %s;\n    }\n}\n\n", cu_dims_sz(c, &Y->shape, 0, Y->shape.rank),
             elem_lit(lit, sizeof lit, Y->dtype, elem, 0));
    launch_all(c, n, kn, &Y, 1);
    return 0;
}

/* HannWindow, HammingWindow, BlackmanWindow of a size given at run time:
 * the length read back, then a0 - a1 cos(2 pi i / N) + a2 cos(4 pi i / N)
 * in double with N the length (periodic) or the length - 1, as the C
 * backend computes it. */
static int emit_window_dyn(Cu *c, const Node *n)
{
    const Value *Y = n->out[0];
    set_dims_from(c, n, 0, "size", value_dim_expr);
    if (ir_numel(&Y->shape) == 0) return 0;
    double a[3];
    signal_window_coeffs(n, a);
    const double a0 = a[0], a1 = a[1], a2 = a[2];
    const char *len = cu_dims_sz(c, &Y->shape, 0, 1);
    char val[512];
    Writer *w = &c->kern;
    const int kn = cu_kernel_begin(c, n);
    w_printf(w, "GC_KERNEL k%d(%s *y%s)\n{\n", kn, cfam_ctype(Y->dtype), cu_kparam(c, n));
    cu_kuse(c, n, w);
    w_printf(w, "    const double n = (double)%s%s;\n", len, n->attrs[WINDOW_PERIODIC].i ? "" : " - 1.0");
    w_printf(w, "    GC_FOR_EACH(i, %s) {\n        ", len);
    snprintf(val, sizeof val,
             "n > 0 ? %.17g - %.17g * cos(6.283185307179586 * (double)i / n) + %.17g * cos(12.566370614359172 * (double)i / n) : %.17g",
             a0, a1, a2, a0 - a1 + a2);
    cu_store(w, Y->dtype, "y[i]", val);
    w_puts(w, "    }\n}\n\n");
    launch_all(c, n, kn, &Y, 1);
    return 0;
}

/* Constant, ConstantOfShape, Range, the windows, MelWeightMatrix (constant
 * inputs only): the op's reference evaluation at
 * compile time (a Constant's tensor attribute bit for bit), as a table. */
static int emit_evaluated(Cu *c, const Node *n, Diag *d)
{
    if (n->op == OP_Range && cu_dyn(c, n)) return emit_range_dyn(c, n);
    if (n->op == OP_ConstantOfShape && cu_dyn(c, n)) return emit_constant_of_shape_dyn(c, n, d);
    if ((n->op == OP_HannWindow || n->op == OP_HammingWindow || n->op == OP_BlackmanWindow) && cu_dyn(c, n))
        return emit_window_dyn(c, n);
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
 * there: ranks are unique, so no two threads write one output. A K given
 * at run time (a data-dependent dim) is read back by the host and set in
 * the shape table, from which the kernel reads it, as any runtime extent. */
static int emit_topk(Cu *c, const Node *n, Diag *d)
{
    const Value *X = n->in[0], *Y = n->out[0], *I = n->n_out > 1 ? n->out[1] : NULL;
    const Shape *xs = &X->shape;
    const int ax = ir_norm_axis(n->attrs[TOPK_AXIS].i, xs->rank), largest = n->attrs[TOPK_LARGEST].i != 0;
    const int rtk = n->in[1]->kind != VK_CONST;
    if (rtk || xs->sym[ax]) { /* K read back, or checked against a runtime axis */
        Writer *b = &c->body;
        char kv[64];
        if (rtk && !cu_eager(c->g)) /* a captured graph cannot wait for the host */
            return diag_node_error(d, n, "the CUDA backend reads TopK's K back only where it decides a data-dependent dim");
        w_puts(b, rtk ? "    { /* its K, read back: the outputs' extent along the axis */\n"
                      : "    { /* its K against the run's extent of the axis */\n");
        if (rtk) cu_read_host(c, n->in[1], "rb_k");
        snprintf(kv, sizeof kv, rtk ? "(int64_t)rb_k[0]" : "INT64_C(%lld)", (long long)Y->shape.dims[ax]);
        b->indent += 2;
        CgenDims o = cu_dims_ctx(c);
        cgen_write_topk_dims(&o, n, kv);
        b->indent -= 2;
        if (cgen_sets_dims(c->g, n)) cu_dims_to_device(c);
        w_puts(b, "    }\n");
    }
    if (ir_numel(xs) == 0 || ir_numel(&Y->shape) == 0) return 0;
    const CgenProd total = cgen_dims_prod(xs, 0, xs->rank), dim = cgen_dims_prod(xs, ax, ax + 1),
                   inner = cgen_dims_prod(xs, ax + 1, xs->rank), k = cgen_dims_prod(&Y->shape, ax, ax + 1),
                   block = cgen_prod_mul(&inner, &dim);
    const char *T = cfam_ctype(X->dtype);
    Writer *w = &c->kern;
    const int kn = cu_kernel_begin(c, n);
    w_printf(w, "GC_KERNEL k%d(%s *y, int64_t *yi, const %s *x%s)\n{\n", kn, T, T, cu_kparam(c, n));
    cu_kuse(c, n, w);
    w_printf(w, "    GC_FOR_EACH(i, %s) {\n", cu_sz(c, total));
    w_printf(w, "        const int64_t in = i %% %s, j = i / %s %% %s, o = i / %s, row = o * %s + in;\n", cu_sz(c, inner),
             cu_sz(c, inner), cu_sz(c, dim), cu_sz(c, block), cu_sz(c, block));
    w_puts(w, "        const double a = (double)");
    cu_load(w, X->dtype, "x[i]");
    w_puts(w, ";\n        int64_t rank = 0;\n");
    w_printf(w, "        for (int64_t q = 0; q < %s; q++) {\n", cu_sz(c, dim));
    w_printf(w, "            const double b = (double)");
    char e[256];
    snprintf(e, sizeof e, "x[row + q * %s]", cu_sz(c, inner));
    cu_load(w, X->dtype, e);
    w_puts(w, ";\n            const int an = a != a, bn = b != b;\n");
    w_printf(w, "            rank += (an || bn) ? (an && bn ? q < j : %s) : a != b ? b %s a : q < j;\n", largest ? "bn" : "an",
             largest ? ">" : "<");
    w_puts(w, "        }\n");
    w_printf(w, "        if (rank < %s) {\n", cu_sz(c, k));
    w_printf(w, "            const int64_t p = (o * %s + rank) * %s + in;\n", cu_sz(c, k), cu_sz(c, inner));
    w_puts(w, "            y[p] = x[i];\n            if (yi) yi[p] = j;\n        }\n    }\n}\n\n");
    w_printf(&c->body, "    GC_LAUNCH(k%d, %s, stream, (%s, %s, %s%s));\n", kn, cu_sz(c, total), cu_ptr(c, Y), I ? cu_ptr(c, I) : "NULL",
             cu_ptr(c, X), cu_karg(c, n));
    return 0;
}

/* Compress: the condition is a constant, so the kept positions along the
 * axis (or of the flattened input) are a table; one thread per output
 * element. */
static int emit_compress(Cu *c, const Node *n, Diag *d)
{
    if (n->in[1]->kind != VK_CONST) return cu_emit_select(c, n, d);
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

/* A runtime condition: on the host, with the selections (cuda_select.c). */
static int compress_check(const Node *n, Diag *d) { return n->in[1]->kind == VK_CONST ? 0 : cu_select_check(n, d); }

/* IfSelect whose branches differ in shape (the output's extents data-
 * dependent dims): the output takes branch v's extents and a device copy
 * of its bytes. */
static void ifsel_take(Cu *c, const Value *v, const Value *Y)
{
    char e[64];
    for (int k = 0; k < Y->shape.rank; k++)
        if (cgen_own_dim(c->g, Y, k)) cu_set_dim(c, Y, k, cgen_dim_str(&v->shape, k, e, sizeof e));
    CgenProd bytes = cgen_dims_prod(&v->shape, 0, v->shape.rank);
    bytes.c *= (int64_t)ir_dtype_size(v->dtype);
    if (cgen_prod_is(&bytes, 0)) return;
    const char *py = cu_ptr(c, Y), *pv = cu_ptr(c, v);
    w_printf(&c->body, "        if ((const void *)%s != (const void *)%s &&\n", py, pv);
    w_printf(&c->body, "            cudaMemcpyAsync(%s, %s, %s, cudaMemcpyDeviceToDevice, stream) != cudaSuccess) return -1;\n", py, pv,
             cu_sz(c, bytes));
}

/* IfSelect (an If whose runtime condition picks between its branches):
 * branches of one shape, one thread per element reads the condition and
 * copies from the branch; branches whose extents differ (data-dependent
 * dims), the condition read back and the branch copied (ifsel_take). */
static int emit_ifselect(Cu *c, const Node *n, Diag *d)
{
    (void)d;
    const Value *C = n->in[0], *A = n->in[1], *B = n->in[2], *Y = n->out[0];
    if (C->kind == VK_CONST || cgen_sets_dims(c->g, n)) { /* the branch known, or read back: a copy of it */
        Writer *b = &c->body;
        w_puts(b, C->kind == VK_CONST ? "    { /* its condition is a constant: a copy of the branch it takes */\n"
                                      : "    { /* its condition, read back: the branch it takes, and its extents */\n");
        if (C->kind == VK_CONST) {
            ifsel_take(c, ir_load_f64(C->dtype, C->data, 0) != 0.0 ? A : B, Y);
        } else {
            cu_read_host(c, C, "rb_c");
            w_puts(b, "        if (rb_c[0] != 0) {\n");
            b->indent++;
            ifsel_take(c, A, Y);
            b->indent--;
            w_puts(b, "        } else {\n");
            b->indent++;
            ifsel_take(c, B, Y);
            b->indent--;
            w_puts(b, "        }\n");
        }
        if (cgen_sets_dims(c->g, n)) cu_dims_to_device(c);
        w_puts(b, "    }\n");
        return 0;
    }
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

/* Branches of one shape (one kernel), or else of the output's rank, whose
 * extents are then data-dependent dims (a device copy of the branch taken);
 * any branches under a constant condition (a copy of the one it takes). */
static int ifselect_check(const Node *n, Diag *d)
{
    const int r = n->out[0]->shape.rank;
    return n->in[0]->kind == VK_CONST || (n->in[1]->shape.rank == r && n->in[2]->shape.rank == r)
               ? 0
               : diag_node_error(d, n, "the CUDA backend's IfSelect takes branches of the output's rank");
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
    if (ir_shape_has_sym(&n->in[0]->shape) || ir_shape_has_sym(&n->in[1]->shape))
        return diag_node_error(d, n, "the CUDA backend's MaxUnpool takes runtime dims from its output_shape only");
    return index_check(n, 1, d);
}

/* MaxUnpool: y = 0, then in one thread each x[i] in order to the place its
 * index names (gcrt_maxunpool's rules: the index refers to the unpadded
 * shape of ir_maxunpool_index_dims; one outside it or outside y is skipped).
 * An output_shape given at run time (data-dependent spatial dims) is read
 * back by the host first. */
static int emit_maxunpool(Cu *c, const Node *n, Diag *d)
{
    (void)d;
    const Value *X = n->in[0], *I = n->in[1], *Y = n->out[0];
    if (n->n_in > 2 && n->in[2] && n->in[2]->kind != VK_CONST && cgen_sets_dims(c->g, n))
        cu_read_back_dims(c, n, 2, "output_shape", cgen_write_maxunpool_dims);
    if (ir_numel(&Y->shape) == 0) return 0;
    int64_t src[IR_MAX_RANK];
    const int sr = ir_maxunpool_index_dims(n, src);
    int64_t s3[3];
    char d3[3][200];
    for (int i = 0; i < 3; i++) {
        int j = i - (3 - sr);
        s3[i] = j < 0 ? 1 : src[j];
        snprintf(d3[i], sizeof d3[i], "%s", j < 0 ? "1" : cu_dims_sz(c, &Y->shape, 2 + j, 3 + j));
    }
    const CgenProd pdst = cgen_dims_prod(&Y->shape, 2, Y->shape.rank);
    const int64_t NC = X->shape.dims[0] * X->shape.dims[1], psrc = s3[0] * s3[1] * s3[2];
    const char *T = cfam_ctype(Y->dtype);
    CgenProd bytes = cgen_dims_prod(&Y->shape, 0, Y->shape.rank);
    bytes.c *= (int64_t)ir_dtype_size(Y->dtype);
    w_printf(&c->body, "    if (cudaMemsetAsync(%s, 0, %s, stream) != cudaSuccess) return -1;\n", cu_ptr(c, Y), cu_sz(c, bytes));
    const int64_t nx = ir_numel(&X->shape);
    if (nx == 0) return 0;
    Writer *w = &c->kern;
    const int kn = cu_kernel_begin(c, n);
    w_printf(w, "GC_KERNEL k%d(%s *y, const %s *x, const %s *idx%s)\n{\n", kn, T, T, cfam_ctype(I->dtype), cu_kparam(c, n));
    cu_kuse(c, n, w);
    w_printf(w, "    GC_FOR_EACH(s, 1) {\n        for (int64_t i = s; i < %lld; i++) {\n", (long long)nx);
    w_puts(w, "            const int64_t q = (int64_t)idx[i];\n");
    w_printf(w, "            if (q < 0 || q >= %lld) continue;\n", (long long)(NC * psrc));
    w_printf(w, "            const int64_t r = q %% %lld, cw = r %% %lld, ch = r / %lld %% %lld, cd = r / %lld;\n", (long long)psrc,
             (long long)s3[2], (long long)s3[2], (long long)s3[1], (long long)(s3[1] * s3[2]));
    w_printf(w, "            if (cd < %s && ch < %s && cw < %s) y[q / %lld * %s + (cd * %s + ch) * %s + cw] = x[i];\n", d3[0], d3[1],
             d3[2], (long long)psrc, cu_sz(c, pdst), d3[1], d3[2]);
    w_puts(w, "        }\n    }\n}\n\n");
    w_printf(&c->body, "    GC_LAUNCH(k%d, 1, stream, (%s, %s, %s%s));\n", kn, cu_ptr(c, Y), cu_ptr(c, X), cu_ptr(c, I), cu_karg(c, n));
    return 0;
}

/* ---- the table --------------------------------------------------------------------------------- */

#define OUT "a generated kernel, one thread per output element"

const CudaEntry cuda_index_entries[] = {
    {OP_Pad, pad_check, emit_pad, NULL, OUT, 1, 2},
    {OP_Tile, NULL, emit_tile_expand, NULL, OUT, 1, 2},
    {OP_Expand, NULL, emit_tile_expand, NULL, OUT, 1, 2},
    {OP_Split, split_check, emit_split, NULL, "generated kernels, one per output, one thread per element", 1, 2},
    {OP_Trilu, NULL, emit_trilu, NULL, OUT, 1, 0},
    {OP_GatherElements, gather_elements_check, emit_gather_elements, NULL, OUT, 1, 1},
    {OP_ScatterElements, scatter_elements_check, emit_scatter_elements, NULL,
     "a device copy of the data, then a generated kernel applying the updates in order (one thread)", 0, 1},
    {OP_GatherND, nd_check, emit_gather_nd, NULL, OUT, 1, 1},
    {OP_ScatterND, nd_check, emit_scatter_nd, NULL,
     "a device copy of the data, then a generated kernel applying the updates in order (one thread)", 0, 0},
    {OP_CumSum, cumsum_check, emit_cumsum, NULL, OUT, 1, 0},
    {OP_ArgMax, arg_check, emit_arg, NULL, "a generated kernel, one thread per output element (a row of the axis)", 0, 0},
    {OP_ArgMin, arg_check, emit_arg, NULL, "a generated kernel, one thread per output element (a row of the axis)", 0, 0},
    {OP_OneHot, NULL, emit_onehot, NULL, OUT, 0, 2},
    {OP_Constant, NULL, emit_evaluated, NULL, "evaluated at compile time: a table copied by a generated kernel", 0, 0},
    {OP_ConstantOfShape, NULL, emit_evaluated, NULL, "evaluated at compile time: a table copied by a generated kernel", 0, 2},
    {OP_Range, NULL, emit_evaluated, NULL,
     "evaluated at compile time: a table copied by a generated kernel (runtime operands: the count read back, a kernel)", 0, 2},
    {OP_HannWindow, NULL, emit_evaluated, NULL, "evaluated at compile time: a table copied by a generated kernel", 0, 2},
    {OP_HammingWindow, NULL, emit_evaluated, NULL, "evaluated at compile time: a table copied by a generated kernel", 0, 2},
    {OP_BlackmanWindow, NULL, emit_evaluated, NULL, "evaluated at compile time: a table copied by a generated kernel", 0, 2},
    {OP_MelWeightMatrix, NULL, emit_evaluated, NULL, "evaluated at compile time: a table copied by a generated kernel", 0, 0},
    {OP_Shape, NULL, emit_shape_size, NULL, "the static dims as a table copied by a generated kernel", 0, 1},
    {OP_Size, NULL, emit_shape_size, NULL, "the static size as a table copied by a generated kernel", 0, 1},
    {OP_EyeLike, NULL, emit_eyelike, NULL, OUT, 1, 0},
    {OP_TopK, topk_check, emit_topk, NULL, "a generated kernel, one thread per input element (its rank in the row)", 1, 2},
    {OP_Compress, compress_check, emit_compress, NULL, OUT, 1, 2},
    {OP_ReverseSequence, NULL, emit_reverse_sequence, NULL, OUT, 1, 0},
    {OP_IfSelect, ifselect_check, emit_ifselect, NULL, OUT, 1, 2},
    {OP_MaxUnpool, maxunpool_check, emit_maxunpool, NULL, "a device memset, then a generated kernel placing the inputs in order (one thread)", 0, 2},
    {-1, NULL, NULL, NULL, NULL, 0, 0},
};
