/* emit_index.c — C emitters for the index family.
 *
 * Shapes are static, so every size is a literal. Three kinds of code:
 *  - data movement (GatherElements, GatherND, the `none` scatters, Trilu,
 *    Tile, ReverseSequence, ConstantOfShape, Compress) moves whole elements through
 *    typed pointers or raw bytes and serves every dtype;
 *  - data-dependent addressing goes through the runtime's offset functions
 *    (gcrt_elements_offset, gcrt_nd_offset in runtime/gcrt_index.c), which
 *    wrap negative indices and return -1 for an index out of range: a
 *    gather then writes 0 and a scatter skips the element, so generated code
 *    never touches memory outside its tensors;
 *  - arithmetic (scatter reductions, CumSum, ArgMax/ArgMin, TopK keys) is
 *    written inline with cgen_load/cgen_store in the compute type, so it
 *    covers every numeric dtype (f16/bf16 compute in float).
 * Range and ConstantOfShape values come from the op's reference evaluation,
 * stored in the output dtype, so interpreter and compiled code agree.
 */
#include "cgen.h"
#include "emit_common.h"
#include "emit_dynshape.h"
#include "emit_dynindex.h"
#include "../cfamily/cfam_eval.h"
#include "../../ir/ops/index_attrs.h"
#include "emit_dynfill.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int reduction_kind(const char *s)
{
    static const char *const names[] = {"none", "add", "mul", "max", "min"};
    for (int i = 0; i < 5; i++)
        if (strcmp(s, names[i]) == 0) return i;
    return -1;
}

/* Copies data (input 0) into the output unless they share memory. */
static void emit_copy_data(Cgen *c, const Node *n)
{
    int64_t bytes = ir_numel(&n->out[0]->shape) * (int64_t)ir_dtype_size(n->out[0]->dtype);
    char bx[EMIT_EXPR_CAP], by[EMIT_EXPR_CAP];
    emit_ptr_name(c, n->in[0], bx);
    emit_ptr_name(c, n->out[0], by);
    w_line(cgen_w(c), "if ((const void *)%s != (const void *)%s) memcpy(%s, %s, %lld);", by, bx, by, bx, (long long)bytes);
}

/* Opens the loops over an [outer, len, inner] view around an axis:
 * `for (o < outer)` then `for (i < inner) {` (bounds are C expressions);
 * axis_loop_close ends both. */
static void axis_loop_open(Writer *w, const char *outer, const char *inner)
{
    w_line(w, "for (int64_t o = 0; o < %s; o++)", outer);
    w->indent++;
    w_line(w, "for (int64_t i = 0; i < %s; i++) {", inner);
    w->indent++;
}

/* axis_loop_open with literal bounds. */
static void axis_loop_open_n(Writer *w, int64_t outer, int64_t inner)
{
    char so[32], si[32];
    snprintf(so, sizeof so, "%lld", (long long)outer);
    snprintf(si, sizeof si, "%lld", (long long)inner);
    axis_loop_open(w, so, si);
}

static void axis_loop_close(Writer *w)
{
    w->indent--;
    w_line(w, "}");
    w->indent--;
}

/* ---- generators ------------------------------------------------------------ */

static int emit_constant_of_shape(Cgen *c, const Node *n, Diag *d)
{
    if (cgen_node_has_sym(n)) return emit_dyn_constant_of_shape(c, n, d);
    if (emit_empty_out(c, n)) return 0;
    const Value *y = n->out[0];
    size_t es = ir_dtype_size(y->dtype);
    unsigned char elem[16] = {0};
    const AttrVal *a = &n->attrs[CONSTANT_OF_SHAPE_VALUE];
    if (a->set && a->t.dtype == y->dtype && a->t.nbytes == es) memcpy(elem, a->t.data, es);
    else ir_store_f64(y->dtype, elem, 0, a->set ? ir_load_f64(a->t.dtype, a->t.data, 0) : 0.0);
    (void)d;
    emit_const_bytes(c, y, "fill_value", elem, es, ir_numel(&y->shape));
    return 0;
}

static int emit_size(Cgen *c, const Node *n, Diag *d)
{
    (void)d;
    char by[EMIT_EXPR_CAP];
    w_line(cgen_w(c), "%s[0] = (int64_t)%lld;", emit_ptr_name(c, n->out[0], by), (long long)ir_numel(&n->in[0]->shape));
    return 0;
}

static int emit_range(Cgen *c, const Node *n, Diag *d)
{
    if (cgen_node_has_sym(n)) return emit_dyn_range(c, n, d);
    if (emit_empty_out(c, n)) return 0;
    size_t nb;
    unsigned char *bytes = cfam_eval_bytes(n, "C", &nb, d);
    if (!bytes) return -1;
    emit_const_bytes(c, n->out[0], "range", bytes, nb, 0);
    free(bytes);
    return 0;
}

static int emit_eyelike(Cgen *c, const Node *n, Diag *d)
{
    (void)d;
    if (emit_empty_out(c, n)) return 0;
    Writer *w = cgen_w(c);
    const Value *y = n->out[0];
    int64_t rows = y->shape.dims[0], cols = y->shape.dims[1], k = n->attrs[EYELIKE_K].i;
    int64_t lo = k < 0 ? -k : 0, hi = cols - k < rows ? cols - k : rows;
    char by[EMIT_EXPR_CAP], idx[128];
    emit_ptr_name(c, y, by);
    w_line(w, "memset(%s, 0, %lld);", by, (long long)(rows * cols * (int64_t)ir_dtype_size(y->dtype)));
    if (hi <= lo) return 0;
    w_line(w, "for (int64_t i = %lld; i < %lld; i++)", (long long)lo, (long long)hi);
    w->indent++;
    snprintf(idx, sizeof idx, "i * %lld + i + %lld", (long long)cols, (long long)k);
    cgen_store(w, y->dtype, by, idx, "1");
    w->indent--;
    return 0;
}

/* ---- gathers and scatters ------------------------------------------------------ */

/* The loop over indices of GatherElements (scatter = 0) or ScatterElements. */
static int emit_elements(Cgen *c, const Node *n, int scatter, Diag *d)
{
    if (cgen_node_has_sym(n)) return cgen_emit_elements_dyn(c, n, d);
    Writer *w = cgen_w(c);
    const Value *x = n->in[0], *ind = n->in[1], *y = n->out[0];
    int r = x->shape.rank;
    int ax = ir_norm_axis(n->attrs[scatter ? SCATTER_ELEMENTS_AXIS : GATHER_ELEMENTS_AXIS].i, r);
    int64_t cnt = ir_numel(&ind->shape);
    int kind = scatter ? reduction_kind(n->attrs[SCATTER_ELEMENTS_REDUCTION].s) : 0;
    if (ax < 0 || kind < 0) return diag_node_error(d, n, "invalid node (run shape inference first)");
    if (scatter) {
        if (ir_numel(&y->shape) == 0) {
            w_line(w, "/* empty output */");
            return 0;
        }
        emit_copy_data(c, n);
    } else if (emit_empty_out(c, n)) {
        return 0;
    }
    if (cnt == 0) return 0;
    char bx[EMIT_EXPR_CAP], bi[EMIT_EXPR_CAP], by[EMIT_EXPR_CAP], bu[EMIT_EXPR_CAP], nid[64], ndd[64];
    emit_ptr_name(c, ind, bi);
    emit_ptr_name(c, y, by);
    snprintf(nid, sizeof nid, "%s", cgen_tmp(c, "idx_dims"));
    snprintf(ndd, sizeof ndd, "%s", cgen_tmp(c, "data_dims"));
    w_line(w, "{");
    w->indent++;
    emit_i64_array(w, nid, ind->shape.dims, r);
    emit_i64_array(w, ndd, x->shape.dims, r);
    w_line(w, "for (int64_t j = 0; j < %lld; j++) {", (long long)cnt);
    w->indent++;
    w_line(w, "int64_t o = gcrt_elements_offset(%s, %d, j, %d, %s, %s, %d);", bi, ind->dtype == DT_I64, r, nid, ndd, ax);
    if (scatter) {
        w_line(w, "if (o < 0) continue;");
        emit_scatter_reduce(w, y->dtype, kind, by, "o", emit_ptr_name(c, n->in[2], bu), "j");
    } else {
        w_line(w, "%s[j] = o >= 0 ? %s[o] : (%s)0;", by, emit_ptr_name(c, x, bx), cgen_ctype(y->dtype));
    }
    w->indent--;
    w_line(w, "}");
    w->indent--;
    w_line(w, "}");
    return 0;
}

static int emit_gather_elements(Cgen *c, const Node *n, Diag *d) { return emit_elements(c, n, 0, d); }
static int emit_scatter_elements(Cgen *c, const Node *n, Diag *d) { return emit_elements(c, n, 1, d); }

/* Opens the loop of GatherND / ScatterND over the `tuples` index tuples
 * of ind (pointer bi): a block with the dims and strides tables of the data
 * axes [ax0, ax0 + m) that a tuple addresses, `for (j ...) {` and
 * `int64_t o` = the element offset of tuple j in the data (-1 when out of
 * range). nd_loop_close ends both. */
static void nd_loop_open(Cgen *c, const Shape *xs, int ax0, int m, int64_t tuples, const Value *ind, const char *bi)
{
    Writer *w = cgen_w(c);
    int64_t st[IR_MAX_RANK];
    char nd[64], ns[64];
    ir_row_strides(xs, st);
    snprintf(nd, sizeof nd, "%s", cgen_tmp(c, "nd_dims"));
    snprintf(ns, sizeof ns, "%s", cgen_tmp(c, "nd_strides"));
    w_line(w, "{");
    w->indent++;
    emit_i64_array(w, nd, xs->dims + ax0, m);
    emit_i64_array(w, ns, st + ax0, m);
    w_line(w, "for (int64_t j = 0; j < %lld; j++) {", (long long)tuples);
    w->indent++;
    w_line(w, "int64_t o = gcrt_nd_offset(%s, %d, j, %d, %s, %s);", bi, ind->dtype == DT_I64, m, nd, ns);
}

static void nd_loop_close(Writer *w)
{
    w->indent--;
    w_line(w, "}");
    w->indent--;
    w_line(w, "}");
}

static int emit_gather_nd(Cgen *c, const Node *n, Diag *d)
{
    if (cgen_node_has_sym(n)) return cgen_emit_gather_nd_dyn(c, n, d);
    if (emit_empty_out(c, n)) return 0;
    Writer *w = cgen_w(c);
    const Value *x = n->in[0], *ind = n->in[1], *y = n->out[0];
    const Shape *xs = &x->shape, *is = &ind->shape;
    int b = (int)n->attrs[GATHER_ND_BATCH_DIMS].i, q = is->rank, m = (int)is->dims[q - 1];
    int64_t slice = emit_dims_prod(xs, b + m, xs->rank), batch_stride = emit_dims_prod(xs, b, xs->rank);
    int64_t per_batch = emit_dims_prod(is, b, q - 1), tuples = emit_dims_prod(is, 0, q - 1);
    int64_t sbytes = slice * (int64_t)ir_dtype_size(y->dtype);
    char bx[EMIT_EXPR_CAP], bi[EMIT_EXPR_CAP], by[EMIT_EXPR_CAP];
    emit_ptr_name(c, x, bx);
    emit_ptr_name(c, ind, bi);
    emit_ptr_name(c, y, by);
    nd_loop_open(c, xs, b, m, tuples, ind, bi);
    if (b > 0)
        w_line(w, "if (o >= 0) memcpy(%s + j * %lld, %s + (j / %lld) * %lld + o, %lld);", by, (long long)slice, bx, (long long)per_batch,
               (long long)batch_stride, (long long)sbytes);
    else
        w_line(w, "if (o >= 0) memcpy(%s + j * %lld, %s + o, %lld);", by, (long long)slice, bx, (long long)sbytes);
    w_line(w, "else memset(%s + j * %lld, 0, %lld);", by, (long long)slice, (long long)sbytes);
    nd_loop_close(w);
    return 0;
}

static int emit_scatter_nd(Cgen *c, const Node *n, Diag *d)
{
    if (emit_empty_out(c, n)) return 0;
    Writer *w = cgen_w(c);
    const Value *x = n->in[0], *ind = n->in[1], *y = n->out[0];
    const Shape *xs = &x->shape, *is = &ind->shape;
    int q = is->rank, m = (int)is->dims[q - 1];
    int kind = reduction_kind(n->attrs[SCATTER_ND_REDUCTION].s);
    if (kind < 0) return diag_node_error(d, n, "invalid node (run shape inference first)");
    int64_t slice = emit_dims_prod(xs, m, xs->rank), tuples = emit_dims_prod(is, 0, q - 1);
    emit_copy_data(c, n);
    if (tuples == 0 || slice == 0) return 0;
    char bi[EMIT_EXPR_CAP], by[EMIT_EXPR_CAP], bu[EMIT_EXPR_CAP];
    emit_ptr_name(c, ind, bi);
    emit_ptr_name(c, y, by);
    emit_ptr_name(c, n->in[2], bu);
    nd_loop_open(c, xs, 0, m, tuples, ind, bi);
    w_line(w, "if (o < 0) continue;");
    if (kind == 0) {
        w_line(w, "memcpy(%s + o, %s + j * %lld, %lld);", by, bu, (long long)slice, (long long)(slice * (int64_t)ir_dtype_size(y->dtype)));
    } else {
        w_line(w, "for (int64_t e = 0; e < %lld; e++)", (long long)slice);
        w->indent++;
        char ui[64];
        snprintf(ui, sizeof ui, "j * %lld + e", (long long)slice);
        emit_scatter_reduce(w, y->dtype, kind, by, "o + e", bu, ui);
        w->indent--;
    }
    nd_loop_close(w);
    return 0;
}

static int emit_onehot(Cgen *c, const Node *n, Diag *d)
{
    if (cgen_node_has_sym(n)) return emit_dyn_onehot(c, n, d);
    (void)d;
    if (emit_empty_out(c, n)) return 0;
    Writer *w = cgen_w(c);
    const Value *ind = n->in[0], *vals = n->in[2], *y = n->out[0];
    const Shape *os = &y->shape;
    int ax = ir_norm_axis(n->attrs[ONEHOT_AXIS].i, os->rank);
    int64_t depth = os->dims[ax], outer = emit_dims_prod(os, 0, ax), inner = emit_dims_prod(os, ax + 1, os->rank);
    char bi[EMIT_EXPR_CAP], bv[EMIT_EXPR_CAP], by[EMIT_EXPR_CAP], idx[128];
    emit_ptr_name(c, vals, bv);
    emit_ptr_name(c, y, by);
    w_line(w, "for (int64_t e = 0; e < %lld; e++) %s[e] = %s[0];", (long long)ir_numel(os), by, bv);
    if (outer * inner == 0) return 0;
    emit_ptr_name(c, ind, bi);
    snprintf(idx, sizeof idx, "o * %lld + i", (long long)inner);
    axis_loop_open_n(w, outer, inner);
    if (ir_dtype_is_float(ind->dtype)) {
        w_printf(w, "double v = (double)");
        cgen_load(w, ind->dtype, bi, idx);
        w_printf(w, ";\n");
        w_line(w, "int64_t k;");
        w_line(w, "if (!(v > %lld.0 && v < %lld.0)) continue;", (long long)(-depth - 1), (long long)depth);
        w_line(w, "k = (int64_t)v;");
    } else {
        w_line(w, "int64_t k = (int64_t)%s[%s];", bi, idx);
    }
    w_line(w, "if (k < 0) k += %lld;", (long long)depth);
    w_line(w, "if (k >= 0 && k < %lld) %s[(o * %lld + k) * %lld + i] = %s[1];", (long long)depth, by, (long long)depth, (long long)inner, bv);
    axis_loop_close(w);
    return 0;
}

/* ---- movement ------------------------------------------------------------------ */

static int emit_trilu(Cgen *c, const Node *n, Diag *d)
{
    (void)d;
    if (emit_empty_out(c, n)) return 0;
    const Value *x = n->in[0], *y = n->out[0];
    const Shape *xs = &x->shape;
    int r = xs->rank;
    char bx[EMIT_EXPR_CAP], by[EMIT_EXPR_CAP], kx[EMIT_EXPR_CAP];
    int64_t kc = 0;
    if (n->n_in > 1 && n->in[1]) {
        if (n->in[1]->kind == VK_CONST && ir_const_ints(n->in[1], &kc, 1) == 1) snprintf(kx, sizeof kx, "(int64_t)%lld", (long long)kc);
        else snprintf(kx, sizeof kx, "%s[0]", cgen_ptr(c, n->in[1]));
    } else {
        snprintf(kx, sizeof kx, "(int64_t)0");
    }
    w_line(cgen_w(c), "gcrt_trilu(%s, %s, %zu, %lld, %lld, %lld, %s, %d);", emit_ptr_name(c, y, by), emit_ptr_name(c, x, bx),
           ir_dtype_size(x->dtype), (long long)emit_dims_prod(xs, 0, r - 2), (long long)xs->dims[r - 2], (long long)xs->dims[r - 1], kx,
           n->attrs[TRILU_UPPER].i != 0);
    return 0;
}

static int emit_tile(Cgen *c, const Node *n, Diag *d)
{
    if (cgen_node_has_sym(n)) return emit_dyn_tile(c, n, d);
    (void)d;
    if (emit_empty_out(c, n)) return 0;
    Writer *w = cgen_w(c);
    const Value *x = n->in[0], *y = n->out[0];
    int r = x->shape.rank;
    char bx[EMIT_EXPR_CAP], by[EMIT_EXPR_CAP], ni[64], no[64];
    emit_ptr_name(c, x, bx);
    emit_ptr_name(c, y, by);
    if (r == 0) {
        w_line(w, "memcpy(%s, %s, %zu);", by, bx, ir_dtype_size(x->dtype));
        return 0;
    }
    snprintf(ni, sizeof ni, "%s", cgen_tmp(c, "in_dims"));
    snprintf(no, sizeof no, "%s", cgen_tmp(c, "out_dims"));
    w_line(w, "{");
    w->indent++;
    emit_i64_array(w, ni, x->shape.dims, r);
    emit_i64_array(w, no, y->shape.dims, r);
    w_line(w, "gcrt_tile(%s, %s, %zu, %d, %s, %s);", by, bx, ir_dtype_size(x->dtype), r, ni, no);
    w->indent--;
    w_line(w, "}");
    return 0;
}

static int emit_reverse_sequence(Cgen *c, const Node *n, Diag *d)
{
    (void)d;
    if (emit_empty_out(c, n)) return 0;
    const Value *x = n->in[0], *y = n->out[0];
    const Shape *xs = &x->shape;
    char bx[EMIT_EXPR_CAP], by[EMIT_EXPR_CAP], bl[EMIT_EXPR_CAP];
    w_line(cgen_w(c), "gcrt_reverse_sequence(%s, %s, %zu, %lld, %lld, %lld, %d, %s);", emit_ptr_name(c, y, by), emit_ptr_name(c, x, bx),
           ir_dtype_size(x->dtype), (long long)xs->dims[0], (long long)xs->dims[1], (long long)emit_dims_prod(xs, 2, xs->rank),
           (int)n->attrs[REVERSE_SEQUENCE_BATCH_AXIS].i, emit_ptr_name(c, n->in[1], bl));
    return 0;
}

/* Compress: a constant condition makes the kept positions along the axis
 * a static table (a runtime one: emit_select.c); each (outer, kept) pair copies one inner block. */
static int emit_compress(Cgen *c, const Node *n, Diag *d)
{
    if (n->in[1]->kind != VK_CONST) return cgen_emit_compress_dyn(c, n, d);
    if (emit_empty_out(c, n)) return 0;
    Writer *w = cgen_w(c);
    const Value *x = n->in[0], *cond = n->in[1], *y = n->out[0];
    const Shape *xs = &x->shape;
    const AttrVal *axis = &n->attrs[COMPRESS_AXIS];
    int64_t outer = 1, dim = ir_numel(xs), inner = 1, len = cond->shape.dims[0];
    if (axis->set) {
        int ax = ir_norm_axis(axis->i, xs->rank);
        outer = emit_dims_prod(xs, 0, ax);
        dim = xs->dims[ax];
        inner = emit_dims_prod(xs, ax + 1, xs->rank);
    }
    int64_t *sel = malloc(sizeof(int64_t) * (size_t)(len ? len : 1)), kept = 0;
    GC_ASSERT(sel);
    for (int64_t i = 0; i < len; i++)
        if (ir_load_f64(DT_BOOL, cond->data, (size_t)i) != 0.0) sel[kept++] = i;
    GC_ASSERT(kept > 0 && kept <= INT32_MAX);
    char bx[EMIT_EXPR_CAP], by[EMIT_EXPR_CAP], tab[64];
    emit_ptr_name(c, x, bx);
    emit_ptr_name(c, y, by);
    snprintf(tab, sizeof tab, "%s", cgen_tmp(c, "kept"));
    w_line(w, "{");
    w->indent++;
    emit_i64_array(w, tab, sel, (int)kept);
    w_line(w, "int64_t o, j;");
    w_line(w, "for (o = 0; o < %lld; o++)", (long long)outer);
    w->indent++;
    w_line(w, "for (j = 0; j < %lld; j++)", (long long)kept);
    w->indent++;
    w_line(w, "memcpy(%s + (o * %lld + j) * %lld, %s + (o * %lld + %s[j]) * %lld, %lld);", by, (long long)kept, (long long)inner, bx,
           (long long)dim, tab, (long long)inner, (long long)(inner * (int64_t)ir_dtype_size(x->dtype)));
    w->indent -= 2;
    w->indent--;
    w_line(w, "}");
    free(sel);
    return 0;
}

/* ---- arithmetic ------------------------------------------------------------------ */

/* CumSum. A constant axis folds the loop bounds into literals; a runtime
 * axis (output shape does not depend on it) computes them from a dims
 * table, an invalid one falling back to the last axis (never out of bounds). */
static int emit_cumsum(Cgen *c, const Node *n, Diag *d)
{
    (void)d;
    if (emit_empty_out(c, n)) return 0;
    Writer *w = cgen_w(c);
    const Value *x = n->in[0], *y = n->out[0];
    const Shape *xs = &x->shape;
    int r = xs->rank;
    int excl = n->attrs[CUMSUM_EXCLUSIVE].i != 0, rev = n->attrs[CUMSUM_REVERSE].i != 0;
    const char *cts = cgen_ctype(cgen_compute_type(y->dtype));
    char bx[EMIT_EXPR_CAP], by[EMIT_EXPR_CAP], ba[EMIT_EXPR_CAP], so[64], sd[64], si[64], tab[64];
    int64_t a;
    emit_ptr_name(c, x, bx);
    emit_ptr_name(c, y, by);
    w_line(w, "{");
    w->indent++;
    if (n->in[1]->kind == VK_CONST && ir_const_ints(n->in[1], &a, 1) == 1) {
        int ax = ir_norm_axis(a, r);
        snprintf(so, sizeof so, "%lld", (long long)emit_dims_prod(xs, 0, ax));
        snprintf(sd, sizeof sd, "%lld", (long long)xs->dims[ax]);
        snprintf(si, sizeof si, "%lld", (long long)emit_dims_prod(xs, ax + 1, r));
    } else {
        snprintf(tab, sizeof tab, "%s", cgen_tmp(c, "cumsum_dims"));
        emit_i64_array(w, tab, xs->dims, r);
        w_line(w, "int64_t ax = (int64_t)%s[0], no = 1, nd, ni = 1;", emit_ptr_name(c, n->in[1], ba));
        w_line(w, "if (ax < 0) ax += %d;", r);
        w_line(w, "if (ax < 0 || ax >= %d) ax = %d;", r, r - 1);
        w_line(w, "for (int64_t q = 0; q < ax; q++) no *= %s[q];", tab);
        w_line(w, "nd = %s[ax];", tab);
        w_line(w, "for (int64_t q = ax + 1; q < %d; q++) ni *= %s[q];", r, tab);
        snprintf(so, sizeof so, "no");
        snprintf(sd, sizeof sd, "nd");
        snprintf(si, sizeof si, "ni");
    }
    axis_loop_open(w, so, si);
    w_line(w, "%s acc = (%s)0;", cts, cts);
    w_line(w, "for (int64_t t = 0; t < %s; t++) {", sd);
    w->indent++;
    if (rev) w_line(w, "int64_t p = (o * %s + (%s - 1 - t)) * %s + i;", sd, sd, si);
    else w_line(w, "int64_t p = (o * %s + t) * %s + i;", sd, si);
    w_printf(w, "%s v = ", cts);
    cgen_load(w, x->dtype, bx, "p");
    w_printf(w, ";\n");
    if (excl) cgen_store(w, y->dtype, by, "p", "acc");
    w_line(w, "acc = (%s)(acc + v);", cts);
    if (!excl) cgen_store(w, y->dtype, by, "p", "acc");
    w->indent--;
    w_line(w, "}");
    axis_loop_close(w);
    w->indent--;
    w_line(w, "}");
    return 0;
}

static int emit_arg(Cgen *c, const Node *n, int want_max)
{
    if (emit_empty_out(c, n)) return 0;
    Writer *w = cgen_w(c);
    const Value *x = n->in[0], *y = n->out[0];
    const Shape *xs = &x->shape;
    int ax = ir_norm_axis(n->attrs[ARG_AXIS].i, xs->rank);
    int last = n->attrs[ARG_SELECT_LAST_INDEX].i != 0;
    int64_t outer = emit_dims_prod(xs, 0, ax), dim = xs->dims[ax], inner = emit_dims_prod(xs, ax + 1, xs->rank);
    const char *cts = cgen_ctype(cgen_compute_type(x->dtype));
    const char *cmp = want_max ? (last ? ">=" : ">") : (last ? "<=" : "<");
    char bx[EMIT_EXPR_CAP], by[EMIT_EXPR_CAP], idx[128];
    emit_ptr_name(c, x, bx);
    emit_ptr_name(c, y, by);
    axis_loop_open_n(w, outer, inner);
    snprintf(idx, sizeof idx, "o * %lld + i", (long long)(dim * inner));
    w_printf(w, "%s bst = ", cts);
    cgen_load(w, x->dtype, bx, idx);
    w_printf(w, ";\n");
    w_line(w, "int64_t bi = 0;");
    w_line(w, "for (int64_t t = 1; t < %lld; t++) {", (long long)dim);
    w->indent++;
    snprintf(idx, sizeof idx, "(o * %lld + t) * %lld + i", (long long)dim, (long long)inner);
    w_printf(w, "%s v = ", cts);
    cgen_load(w, x->dtype, bx, idx);
    w_printf(w, ";\n");
    w_line(w, "if (v %s bst) {", cmp);
    w->indent++;
    w_line(w, "bst = v;");
    w_line(w, "bi = t;");
    w->indent--;
    w_line(w, "}");
    w->indent--;
    w_line(w, "}");
    w_line(w, "%s[o * %lld + i] = bi;", by, (long long)inner);
    axis_loop_close(w);
    return 0;
}

static int emit_argmax(Cgen *c, const Node *n, Diag *d)
{
    (void)d;
    return emit_arg(c, n, 1);
}

static int emit_argmin(Cgen *c, const Node *n, Diag *d)
{
    (void)d;
    return emit_arg(c, n, 0);
}

static int emit_topk(Cgen *c, const Node *n, Diag *d)
{
    if (cgen_operand_at_run_time(n, 1) || cgen_node_has_sym(n)) return cgen_emit_topk_dyn(c, n, d);
    if (emit_empty_out(c, n)) return 0;
    Writer *w = cgen_w(c);
    const Value *x = n->in[0], *y = n->out[0];
    const Shape *xs = &x->shape;
    int ax = ir_norm_axis(n->attrs[TOPK_AXIS].i, xs->rank);
    int64_t outer = emit_dims_prod(xs, 0, ax), dim = xs->dims[ax], inner = emit_dims_prod(xs, ax + 1, xs->rank);
    int64_t k = y->shape.dims[ax];
    int largest = n->attrs[TOPK_LARGEST].i != 0;
    char bx[EMIT_EXPR_CAP], by[EMIT_EXPR_CAP], bi[EMIT_EXPR_CAP], ws[EMIT_EXPR_CAP], idx[128];
    emit_ptr_name(c, x, bx);
    emit_ptr_name(c, y, by);
    snprintf(ws, sizeof ws, "%s", cgen_workspace(c, n));
    w_line(w, "{");
    w->indent++;
    w_line(w, "double *ky = (double *)(void *)%s;", ws);
    w_line(w, "int64_t *ord = (int64_t *)(void *)(%s + %lld);", ws, (long long)(dim * 8));
    axis_loop_open_n(w, outer, inner);
    snprintf(idx, sizeof idx, "(o * %lld + t) * %lld + i", (long long)dim, (long long)inner);
    w_printf(w, "for (int64_t t = 0; t < %lld; t++) ky[t] = (double)", (long long)dim);
    cgen_load(w, x->dtype, bx, idx);
    w_printf(w, ";\n");
    w_line(w, "gcrt_topk_order(ky, ord, %lld, %lld, %d);", (long long)dim, (long long)k, largest);
    w_line(w, "for (int64_t t = 0; t < %lld; t++) {", (long long)k);
    w->indent++;
    w_line(w, "%s[(o * %lld + t) * %lld + i] = %s[(o * %lld + ord[t]) * %lld + i];", by, (long long)k, (long long)inner, bx, (long long)dim,
           (long long)inner);
    if (n->n_out > 1)
        w_line(w, "%s[(o * %lld + t) * %lld + i] = ord[t];", emit_ptr_name(c, n->out[1], bi), (long long)k, (long long)inner);
    w->indent--;
    w_line(w, "}");
    axis_loop_close(w);
    w->indent--;
    w_line(w, "}");
    return 0;
}

/* TopK's scratch: one slice of keys (double) and its order (int64). */
static size_t topk_workspace(const Node *n)
{
    const Shape *xs = &n->in[0]->shape;
    int ax = ir_norm_axis(n->attrs[TOPK_AXIS].i, xs->rank);
    if (ax < 0) return 0;
    return (size_t)xs->dims[ax] * 16;
}

const CgenEntry cgen_index_entries[] = {
    {OP_ConstantOfShape, emit_constant_of_shape, CGEN_RT_index, NULL, 1},
    {OP_Size, emit_size, 0, NULL, 0},
    {OP_GatherElements, emit_gather_elements, CGEN_RT_index, NULL, 1},
    {OP_ScatterElements, emit_scatter_elements, CGEN_RT_index, NULL, 1},
    {OP_ScatterND, emit_scatter_nd, CGEN_RT_index, NULL, 0},
    {OP_GatherND, emit_gather_nd, CGEN_RT_index, NULL, 1},
    {OP_Trilu, emit_trilu, CGEN_RT_index, NULL, 0},
    {OP_Range, emit_range, 0, NULL, 1},
    {OP_Tile, emit_tile, CGEN_RT_index, NULL, 1},
    {OP_CumSum, emit_cumsum, 0, NULL, 0},
    {OP_OneHot, emit_onehot, 0, NULL, 1},
    {OP_ArgMax, emit_argmax, 0, NULL, 0},
    {OP_ArgMin, emit_argmin, 0, NULL, 0},
    {OP_TopK, emit_topk, CGEN_RT_index, topk_workspace, 1},
    {OP_EyeLike, emit_eyelike, 0, NULL, 0},
    {OP_ReverseSequence, emit_reverse_sequence, CGEN_RT_index, NULL, 0},
    {OP_Compress, emit_compress, 0, NULL, 1},
    {-1, NULL, 0, NULL, 0},
};
