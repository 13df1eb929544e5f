/* emit_shape.c — C emitters for the shape / data-movement family.
 *
 * None of these ops computes, so every emitter moves raw elements of
 * ir_dtype_size() bytes and serves every dtype. Shapes are static, so the
 * emitter folds all index arithmetic into constants:
 *  - Reshape, Flatten, Squeeze, Unsqueeze are one memcpy, skipped when the
 *    memory plan put output and input at the same address (in-place);
 *  - Transpose, Slice, Expand, Concat and Split are box copies described by
 *    (dims, destination strides, source strides, source offset). emit_copy
 *    first drops size-1 axes and merges axes that are contiguous on both
 *    sides, so most of them become one memcpy or a short gcrt_strided_copy;
 *  - Gather and Pad call their runtime kernels (runtime/gcrt_shape.c);
 *  - Shape stores its known dims; Constant copies a `static const` byte
 *    array holding the value's exact little-endian bytes.
 * Slice and Shape read their resolved index ranges from the op description
 * (ir/ops/geometry.h), so emitter and shape inference cannot disagree.
 */
#include "cgen.h"
#include "emit_common.h"
#include "emit_dynshape.h"
#include "../cfamily/cfam_eval.h"
#include "../../ir/ops/shape_attrs.h"
#include "../../ir/ops/geometry.h"
#include "emit_dynfill.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LIST 64

/* "p" or "p + off" */
static const char *ptr_off(Cgen *c, const Value *v, int64_t off, char *buf)
{
    if (off == 0) return emit_ptr_name(c, v, buf);
    snprintf(buf, EMIT_EXPR_CAP, "%s + %lld", cgen_ptr(c, v), (long long)off);
    return buf;
}

/* Emits a box copy: element i of the box `dims` goes from src + sum(i*sst)
 * to dst + sum(i*dst_st); dst and src are pointer expressions. */
static void emit_copy(Cgen *c, const char *dst, const char *src, int rank, const int64_t *dims, const int64_t *dst_st,
                      const int64_t *src_st, size_t esize)
{
    Writer *w = cgen_w(c);
    int64_t md[IR_MAX_RANK], mdst[IR_MAX_RANK], msrc[IR_MAX_RANK];
    int r = 0;
    for (int k = 0; k < rank; k++) {
        if (dims[k] == 0) {
            w_line(w, "/* empty copy */");
            return;
        }
        if (dims[k] == 1) continue;
        if (r > 0 && mdst[r - 1] == dst_st[k] * dims[k] && msrc[r - 1] == src_st[k] * dims[k]) {
            md[r - 1] *= dims[k];
            mdst[r - 1] = dst_st[k];
            msrc[r - 1] = src_st[k];
            continue;
        }
        md[r] = dims[k];
        mdst[r] = dst_st[k];
        msrc[r] = src_st[k];
        r++;
    }
    if (r == 0) {
        w_line(w, "memcpy(%s, %s, %zu);", dst, src, esize);
        return;
    }
    if (r == 1 && mdst[0] == 1 && msrc[0] == 1) {
        w_line(w, "memcpy(%s, %s, %lld);", dst, src, (long long)(md[0] * (int64_t)esize));
        return;
    }
    char nd[64], nds[64], nss[64];
    snprintf(nd, sizeof nd, "%s", cgen_tmp(c, "dims"));
    snprintf(nds, sizeof nds, "%s", cgen_tmp(c, "dst_st"));
    snprintf(nss, sizeof nss, "%s", cgen_tmp(c, "src_st"));
    w_line(w, "{");
    w->indent++;
    emit_i64_array(w, nd, md, r);
    emit_i64_array(w, nds, mdst, r);
    emit_i64_array(w, nss, msrc, r);
    w_line(w, "gcrt_strided_copy(%s, %s, %s, %s, %s, %d, %zu);", dst, nds, src, nss, nd, r, esize);
    w->indent--;
    w_line(w, "}");
}

/* Runtime shapes: the box copy of emit_copy with sizes and strides that are
 * products of runtime dims; the tables are locals filled at run time. */
static void emit_copy_dyn(Cgen *c, const char *dst, const char *src, int rank, const CgenProd *dims,
                          const CgenProd *dst_st, const CgenProd *src_st, size_t esize)
{
    Writer *w = cgen_w(c);
    CgenProd md[IR_MAX_RANK], mdst[IR_MAX_RANK], msrc[IR_MAX_RANK];
    int r = 0;
    for (int k = 0; k < rank; k++) {
        if (cgen_prod_is(&dims[k], 1)) continue;
        CgenProd wd = cgen_prod_mul(&dst_st[k], &dims[k]), ws = cgen_prod_mul(&src_st[k], &dims[k]);
        if (r > 0 && cgen_prod_eq(&mdst[r - 1], &wd) && cgen_prod_eq(&msrc[r - 1], &ws)) {
            md[r - 1] = cgen_prod_mul(&md[r - 1], &dims[k]);
            mdst[r - 1] = dst_st[k];
            msrc[r - 1] = src_st[k];
            continue;
        }
        md[r] = dims[k];
        mdst[r] = dst_st[k];
        msrc[r] = src_st[k];
        r++;
    }
    char b[160];
    if (r == 0) {
        w_line(w, "memcpy(%s, %s, %zu);", dst, src, esize);
        return;
    }
    if (r == 1 && cgen_prod_is(&mdst[0], 1) && cgen_prod_is(&msrc[0], 1)) {
        CgenProd nb = cgen_prod_mul(&md[0], &(CgenProd){(int64_t)esize, 0, {0}});
        w_line(w, "memcpy(%s, %s, %s);", dst, src, cgen_prod_str(&nb, b, sizeof b));
        return;
    }
    char nd[64], nds[64], nss[64];
    snprintf(nd, sizeof nd, "%s", cgen_tmp(c, "dims"));
    snprintf(nds, sizeof nds, "%s", cgen_tmp(c, "dst_st"));
    snprintf(nss, sizeof nss, "%s", cgen_tmp(c, "src_st"));
    const char *names[3] = {nd, nds, nss};
    const CgenProd *tabs[3] = {md, mdst, msrc};
    w_line(w, "{");
    w->indent++;
    for (int t = 0; t < 3; t++) {
        Writer row;
        w_init(&row);
        for (int k = 0; k < r; k++) w_printf(&row, "%s%s", k ? ", " : "", cgen_prod_str(&tabs[t][k], b, sizeof b));
        w_line(w, "const int64_t %s[%d] = {%s};", names[t], r, row.buf);
        w_free(&row);
    }
    w_line(w, "gcrt_strided_copy(%s, %s, %s, %s, %s, %d, %zu);", dst, nds, src, nss, nd, r, esize);
    w->indent--;
    w_line(w, "}");
}

/* Row-major strides of s as products of runtime dims. */
static void prod_strides(const Shape *s, CgenProd *st)
{
    CgenProd acc = cgen_prod(1);
    for (int i = s->rank - 1; i >= 0; i--) {
        st[i] = acc;
        cgen_prod_mul_dim(&acc, s, i);
    }
}

/* Runtime shapes: the views whose shape operand (Reshape's shape,
 * Squeeze/Unsqueeze's axes) arrives at run time set their output's
 * data-dependent dims (dims_text.c); the bytes are the input's either way. */
static void emit_view_dims(Cgen *c, const Node *n)
{
    char bo[EMIT_EXPR_CAP], q[64];
    CgenDims o = cgen_dims_ctx(c);
    snprintf(q, sizeof q, "%s", cgen_tmp(c, "req"));
    w_line(o.w, "const int64_t *%s = %s;", q, emit_ptr_name(c, n->in[1], bo));
    cgen_write_view_dims(&o, n, q);
}

/* Reshape, Flatten, Squeeze, Unsqueeze: same bytes, new shape. */
static int emit_alias_copy(Cgen *c, const Node *n, Diag *d)
{
    (void)d;
    Writer *w = cgen_w(c);
    const Value *x = n->in[0], *y = n->out[0];
    if (n->op != OP_Flatten && n->n_in > 1 && n->in[1] && n->in[1]->kind != VK_CONST) emit_view_dims(c, n);
    if (y->alias) return 0; /* the view's bytes are its input's */
    int64_t bytes = ir_numel(&y->shape) * (int64_t)ir_dtype_size(y->dtype);
    if (bytes == 0) {
        w_line(w, "/* empty tensor */");
        return 0;
    }
    char bx[EMIT_EXPR_CAP], by[EMIT_EXPR_CAP], nb[160];
    emit_ptr_name(c, x, bx);
    emit_ptr_name(c, y, by);
    CgenProd p = cgen_dims_prod(&y->shape, 0, y->shape.rank);
    p.c *= (int64_t)ir_dtype_size(y->dtype);
    w_line(w, "if ((const void *)%s != (const void *)%s) memcpy(%s, %s, %s);", by, bx, by, bx, cgen_prod_str(&p, nb, sizeof nb));
    return 0;
}

static int emit_transpose(Cgen *c, const Node *n, Diag *d)
{
    if (emit_empty_out(c, n)) return 0;
    (void)d;
    const Value *x = n->in[0], *y = n->out[0];
    int r = x->shape.rank, perm[IR_MAX_RANK];
    ir_transpose_perm(n, perm);
    if (cgen_node_has_sym(n)) {
        CgenProd ist[IR_MAX_RANK], ost[IR_MAX_RANK], sst[IR_MAX_RANK], dims[IR_MAX_RANK];
        prod_strides(&x->shape, ist);
        prod_strides(&y->shape, ost);
        for (int i = 0; i < r; i++) {
            sst[i] = ist[perm[i]];
            dims[i] = cgen_dims_prod(&y->shape, i, i + 1);
        }
        char bx[EMIT_EXPR_CAP], by[EMIT_EXPR_CAP];
        emit_copy_dyn(c, emit_ptr_name(c, y, by), emit_ptr_name(c, x, bx), r, dims, ost, sst, ir_dtype_size(x->dtype));
        return 0;
    }
    int64_t ist[IR_MAX_RANK], ost[IR_MAX_RANK], sst[IR_MAX_RANK];
    ir_row_strides(&x->shape, ist);
    ir_row_strides(&y->shape, ost);
    for (int i = 0; i < r; i++) sst[i] = ist[perm[i]];
    char bx[EMIT_EXPR_CAP], by[EMIT_EXPR_CAP];
    emit_copy(c, emit_ptr_name(c, y, by), emit_ptr_name(c, x, bx), r, y->shape.dims, ost, sst, ir_dtype_size(x->dtype));
    return 0;
}

/* Runtime shapes (ir_sym_concat: a static axis): each input's rows land at
 * the running offset along the axis; sizes are products of runtime dims. */
/* Along a runtime axis (ir_sym_concat: the output's extent is a sum): the
 * rows of the inputs at a running offset, each of its actual length. */
static void emit_concat_runtime_axis(Cgen *c, const Node *n, int ax)
{
    Writer *w = cgen_w(c);
    const Value *y = n->out[0];
    const Shape *os = &y->shape;
    CgenProd outer = cgen_dims_prod(os, 0, ax), orow = cgen_dims_prod(os, ax, os->rank);
    char off[64], b[160];
    snprintf(off, sizeof off, "%s", cgen_tmp(c, "off"));
    w_line(w, "{");
    w->indent++;
    w_line(w, "int64_t %s = 0;", off);
    for (int i = 0; i < n->n_in; i++) {
        const Shape *xs = &n->in[i]->shape;
        if (xs->dims[ax] == 0) continue; /* empty at its bound */
        CgenProd row = cgen_dims_prod(xs, ax, xs->rank);
        CgenProd dims[2] = {outer, row}, dst_st[2] = {orow, cgen_prod(1)}, src_st[2] = {row, cgen_prod(1)};
        char bx[EMIT_EXPR_CAP], by[EMIT_EXPR_CAP];
        snprintf(by, sizeof by, "%s + %s", cgen_ptr(c, y), off);
        emit_copy_dyn(c, by, emit_ptr_name(c, n->in[i], bx), 2, dims, dst_st, src_st, ir_dtype_size(y->dtype));
        w_line(w, "%s += %s;", off, cgen_prod_str(&row, b, sizeof b));
    }
    w->indent--;
    w_line(w, "}");
}

static void emit_concat_dyn(Cgen *c, const Node *n, int ax)
{
    const Value *y = n->out[0];
    const Shape *os = &y->shape;
    if (os->sym[ax]) {
        emit_concat_runtime_axis(c, n, ax);
        return;
    }
    CgenProd outer = cgen_dims_prod(os, 0, ax), inner = cgen_dims_prod(os, ax + 1, os->rank);
    CgenProd orow = cgen_prod_mul(&(CgenProd){os->dims[ax], 0, {0}}, &inner);
    int64_t off = 0;
    for (int i = 0; i < n->n_in; i++) {
        int64_t len = n->in[i]->shape.dims[ax];
        CgenProd row = cgen_prod_mul(&(CgenProd){len, 0, {0}}, &inner);
        CgenProd dims[2] = {outer, row}, dst_st[2] = {orow, cgen_prod(1)}, src_st[2] = {row, cgen_prod(1)};
        char bx[EMIT_EXPR_CAP], by[EMIT_EXPR_CAP], b[160];
        CgenProd po = cgen_prod_mul(&(CgenProd){off, 0, {0}}, &inner);
        if (off) snprintf(by, sizeof by, "%s + %s", cgen_ptr(c, y), cgen_prod_str(&po, b, sizeof b));
        else emit_ptr_name(c, y, by);
        if (len > 0) emit_copy_dyn(c, by, emit_ptr_name(c, n->in[i], bx), 2, dims, dst_st, src_st, ir_dtype_size(y->dtype));
        off += len;
    }
}

static int emit_concat(Cgen *c, const Node *n, Diag *d)
{
    (void)d;
    const Value *y = n->out[0];
    const Shape *os = &y->shape;
    int ax = ir_norm_axis(n->attrs[CONCAT_AXIS].i, os->rank);
    if (cgen_node_has_sym(n)) {
        emit_concat_dyn(c, n, ax);
        return 0;
    }
    int64_t outer = 1, inner = 1, off = 0;
    for (int k = 0; k < ax; k++) outer *= os->dims[k];
    for (int k = ax + 1; k < os->rank; k++) inner *= os->dims[k];
    int64_t orow = os->dims[ax] * inner;
    for (int i = 0; i < n->n_in; i++) {
        int64_t row = n->in[i]->shape.dims[ax] * inner;
        int64_t dims[2] = {outer, row}, dst_st[2] = {orow, 1}, src_st[2] = {row, 1};
        char bx[EMIT_EXPR_CAP], by[EMIT_EXPR_CAP];
        if (row > 0 && outer > 0)
            emit_copy(c, ptr_off(c, y, off, by), emit_ptr_name(c, n->in[i], bx), 2, dims, dst_st, src_st, ir_dtype_size(y->dtype));
        off += row;
    }
    return 0;
}

/* Runtime shapes (ir: split_infer_sym): a static split along a static axis
 * of data with runtime dims elsewhere; the rows are products of runtime
 * dims (emit_concat_dyn run backwards). */
static void emit_split_sym(Cgen *c, const Node *n, int ax)
{
    const Value *x = n->in[0];
    const Shape *xs = &x->shape;
    CgenProd outer = cgen_dims_prod(xs, 0, ax), inner = cgen_dims_prod(xs, ax + 1, xs->rank);
    CgenProd irow = cgen_prod_mul(&(CgenProd){xs->dims[ax], 0, {0}}, &inner);
    int64_t off = 0;
    for (int i = 0; i < n->n_out; i++) {
        int64_t len = n->out[i]->shape.dims[ax];
        CgenProd row = cgen_prod_mul(&(CgenProd){len, 0, {0}}, &inner);
        CgenProd dims[2] = {outer, row}, dst_st[2] = {row, cgen_prod(1)}, src_st[2] = {irow, cgen_prod(1)};
        char bx[EMIT_EXPR_CAP], by[EMIT_EXPR_CAP], b[160];
        CgenProd po = cgen_prod_mul(&(CgenProd){off, 0, {0}}, &inner);
        if (off) snprintf(bx, sizeof bx, "%s + %s", cgen_ptr(c, x), cgen_prod_str(&po, b, sizeof b));
        else emit_ptr_name(c, x, bx);
        if (len > 0) emit_copy_dyn(c, emit_ptr_name(c, n->out[i], by), bx, 2, dims, dst_st, src_st, ir_dtype_size(x->dtype));
        off += len;
    }
}

static int emit_split(Cgen *c, const Node *n, Diag *d)
{
    if (cgen_operand_at_run_time(n, 1)) return cgen_emit_split_dyn(c, n, d);
    if (cgen_node_has_sym(n)) {
        emit_split_sym(c, n, ir_norm_axis(n->attrs[SPLIT_AXIS].i, n->in[0]->shape.rank));
        return 0;
    }
    const Value *x = n->in[0];
    const Shape *xs = &x->shape;
    int ax = ir_norm_axis(n->attrs[SPLIT_AXIS].i, xs->rank);
    int64_t outer = 1, inner = 1, off = 0;
    for (int k = 0; k < ax; k++) outer *= xs->dims[k];
    for (int k = ax + 1; k < xs->rank; k++) inner *= xs->dims[k];
    int64_t irow = xs->dims[ax] * inner;
    for (int i = 0; i < n->n_out; i++) {
        int64_t row = n->out[i]->shape.dims[ax] * inner;
        int64_t dims[2] = {outer, row}, dst_st[2] = {row, 1}, src_st[2] = {irow, 1};
        char bx[EMIT_EXPR_CAP], by[EMIT_EXPR_CAP];
        if (row > 0 && outer > 0)
            emit_copy(c, emit_ptr_name(c, n->out[i], by), ptr_off(c, x, off, bx), 2, dims, dst_st, src_st, ir_dtype_size(x->dtype));
        off += row;
    }
    return 0;
}

static int emit_slice(Cgen *c, const Node *n, Diag *d)
{
    for (int j = 1; j <= 4; j++)
        if (cgen_operand_at_run_time(n, j)) return cgen_emit_slice_dyn(c, n, d);
    /* runtime dims: strides and ranges at the run's extents (the operands' values are constants) */
    if (cgen_node_has_sym(n)) return cgen_emit_slice_dyn(c, n, d);
    if (emit_empty_out(c, n)) return 0;
    const Value *x = n->in[0], *y = n->out[0];
    int r = x->shape.rank;
    int64_t start[IR_MAX_RANK], step[IR_MAX_RANK], ist[IR_MAX_RANK], ost[IR_MAX_RANK], sst[IR_MAX_RANK], off = 0;
    Shape os = {0};
    if (ir_slice_plan(n, start, step, &os, d)) return -1;
    ir_row_strides(&x->shape, ist);
    ir_row_strides(&y->shape, ost);
    for (int k = 0; k < r; k++) {
        sst[k] = ist[k] * step[k];
        off += start[k] * ist[k];
    }
    char bx[EMIT_EXPR_CAP], by[EMIT_EXPR_CAP];
    emit_copy(c, emit_ptr_name(c, y, by), ptr_off(c, x, off, bx), r, y->shape.dims, ost, sst, ir_dtype_size(x->dtype));
    return 0;
}

static int emit_expand(Cgen *c, const Node *n, Diag *d)
{
    if (cgen_node_has_sym(n)) return emit_dyn_expand(c, n, d);
    if (emit_empty_out(c, n)) return 0;
    (void)d;
    const Value *x = n->in[0], *y = n->out[0];
    const Shape *xs = &x->shape, *os = &y->shape;
    int64_t ist[IR_MAX_RANK], ost[IR_MAX_RANK], sst[IR_MAX_RANK];
    ir_row_strides(xs, ist);
    ir_row_strides(os, ost);
    for (int k = 0; k < os->rank; k++) {
        int j = k - (os->rank - xs->rank);
        sst[k] = j < 0 || xs->dims[j] == 1 ? 0 : ist[j];
    }
    char bx[EMIT_EXPR_CAP], by[EMIT_EXPR_CAP];
    emit_copy(c, emit_ptr_name(c, y, by), emit_ptr_name(c, x, bx), os->rank, os->dims, ost, sst, ir_dtype_size(x->dtype));
    return 0;
}

static int emit_gather(Cgen *c, const Node *n, Diag *d)
{
    if (emit_empty_out(c, n)) return 0;
    (void)d;
    Writer *w = cgen_w(c);
    const Value *x = n->in[0], *ind = n->in[1], *y = n->out[0];
    const Shape *xs = &x->shape;
    int ax = ir_norm_axis(n->attrs[GATHER_AXIS].i, xs->rank);
    if (ir_numel(&y->shape) == 0) {
        w_line(w, "/* empty gather */");
        return 0;
    }
    /* sizes as products of dims: literals, or with runtime dims (gather_infer_sym) read from the shape table */
    CgenProd outer = cgen_dims_prod(xs, 0, ax), inner = cgen_dims_prod(xs, ax + 1, xs->rank);
    CgenProd ni = cgen_dims_prod(&ind->shape, 0, ind->shape.rank);
    char bx[EMIT_EXPR_CAP], bi[EMIT_EXPR_CAP], by[EMIT_EXPR_CAP], so[160], sa[160], sn[160], sc[160];
    w_line(w, "gcrt_gather_%s(%s, %s, %zu, %s, %s, %s, %s, %s);", ind->dtype == DT_I32 ? "i32" : "i64",
           emit_ptr_name(c, y, by), emit_ptr_name(c, x, bx), ir_dtype_size(x->dtype), cgen_prod_str(&outer, so, sizeof so),
           cgen_dim_str(xs, ax, sa, sizeof sa), cgen_prod_str(&inner, sn, sizeof sn), emit_ptr_name(c, ind, bi),
           cgen_prod_str(&ni, sc, sizeof sc));
    return 0;
}

static int emit_pad(Cgen *c, const Node *n, Diag *d)
{
    if (cgen_node_has_sym(n)) return emit_dyn_pad(c, n, d);
    if (emit_empty_out(c, n)) return 0;
    Writer *w = cgen_w(c);
    const Value *x = n->in[0], *y = n->out[0];
    int r = x->shape.rank;
    int64_t pads[MAX_LIST];
    if (ir_const_ints(n->in[1], pads, MAX_LIST) != 2 * r)
        return diag_node_error(d, n, "Pad pads must be constant (run shape inference first)");
    const char *ms = n->attrs[PAD_MODE].s;
    int mode = strcmp(ms, "reflect") == 0 ? 1 : strcmp(ms, "edge") == 0 ? 2 : 0;
    char bx[EMIT_EXPR_CAP], by[EMIT_EXPR_CAP], bc[EMIT_EXPR_CAP];
    emit_ptr_name(c, x, bx);
    emit_ptr_name(c, y, by);
    if (n->n_in > 2 && n->in[2]) emit_ptr_name(c, n->in[2], bc);
    else snprintf(bc, sizeof bc, "(const void *)0");
    if (ir_numel(&y->shape) == 0) {
        w_line(w, "/* empty pad */");
        return 0;
    }
    if (r == 0) {
        w_line(w, "memcpy(%s, %s, %zu);", by, bx, ir_dtype_size(x->dtype));
        return 0;
    }
    char ni[64], no[64], np[64];
    snprintf(ni, sizeof ni, "%s", cgen_tmp(c, "in_dims"));
    snprintf(no, sizeof no, "%s", cgen_tmp(c, "out_dims"));
    snprintf(np, sizeof np, "%s", cgen_tmp(c, "pad_begin"));
    w_line(w, "{");
    w->indent++;
    emit_i64_array(w, ni, x->shape.dims, r);
    emit_i64_array(w, no, y->shape.dims, r);
    emit_i64_array(w, np, pads, r);
    w_line(w, "gcrt_pad(%s, %s, %s, %zu, %d, %s, %s, %s, %d);", by, bx, bc, ir_dtype_size(x->dtype), r, ni, no, np, mode);
    w->indent--;
    w_line(w, "}");
    return 0;
}

static int emit_shape(Cgen *c, const Node *n, Diag *d)
{
    if (emit_empty_out(c, n)) return 0;
    (void)d;
    Writer *w = cgen_w(c);
    const Value *y = n->out[0];
    int s, e;
    ir_shape_range(n, &s, &e);
    char by[EMIT_EXPR_CAP];
    emit_ptr_name(c, y, by);
    if (y->shape.dims[0] == 0) w_line(w, "/* empty shape slice */");
    const Shape *xs = &n->in[0]->shape;
    for (int64_t i = 0; i < y->shape.dims[0]; i++) {
        if (xs->sym[s + i]) w_line(w, "%s[%lld] = dim[%d]; /* runtime */", by, (long long)i, xs->sym[s + i] - 1);
        else w_line(w, "%s[%lld] = (int64_t)%lldLL;", by, (long long)i, (long long)xs->dims[s + i]);
    }
    return 0;
}

/* Constant: the value encoded in its dtype exactly as the interpreter
 * would (its reference evaluation), or its own bytes when the attribute
 * holds a tensor of the output dtype. */
static int emit_constant(Cgen *c, const Node *n, Diag *d)
{
    const Value *y = n->out[0];
    if (ir_numel(&y->shape) == 0) {
        w_line(cgen_w(c), "/* empty constant */");
        return 0;
    }
    size_t nb;
    unsigned char *bytes = cfam_eval_bytes(n, "C", &nb, d);
    if (!bytes) return -1;
    const AttrVal *tv = &n->attrs[CONSTANT_VALUE];
    if (tv->set && tv->t.dtype == y->dtype && tv->t.nbytes == nb) memcpy(bytes, tv->t.data, nb);
    emit_const_bytes(c, y, "cst", bytes, nb, 0);
    free(bytes);
    return 0;
}

const CgenEntry cgen_shape_entries[] = {
    {OP_Reshape, emit_alias_copy, 0, NULL, 1},
    {OP_Flatten, emit_alias_copy, 0, NULL, 1},
    {OP_Squeeze, emit_alias_copy, 0, NULL, 1},
    {OP_Unsqueeze, emit_alias_copy, 0, NULL, 1},
    {OP_Transpose, emit_transpose, CGEN_RT_shape, NULL, 1},
    {OP_Concat, emit_concat, CGEN_RT_shape, NULL, 1},
    {OP_Split, emit_split, CGEN_RT_shape, NULL, 1},
    {OP_Slice, emit_slice, CGEN_RT_shape, NULL, 1},
    {OP_Expand, emit_expand, CGEN_RT_shape, NULL, 1},
    {OP_Gather, emit_gather, CGEN_RT_shape, NULL, 1},
    {OP_Pad, emit_pad, CGEN_RT_shape, NULL, 1},
    {OP_Shape, emit_shape, 0, NULL, 1},
    {OP_Constant, emit_constant, 0, NULL, 0},
    {-1, NULL, 0, NULL, 0},
};
