/* emit_dynshape.c — C emitters for ops whose shape operands arrive at run
 * time: Slice (starts, ends, axes, steps), Split (split), TopK (K) and
 * ReduceSum (axes).
 *
 * Their shape inference (ir/ops/shape.c, index.c, reduce.c) gives each
 * output dim such an operand decides a data-dependent symbol bounded by
 * the input (ir/ir.h, SYM_DATA); memory is planned at that bound. The code
 * written here reads the operand values (any integer dtype, copied into
 * int64_t locals), resolves them with the same rules as the op's
 * description, sets the output extents with cgen_set_dim and runs the
 * kernel at those extents:
 *  - Slice: the ranges resolved as the op's slice_plan does become extents,
 *    a source offset and strides, then one gcrt_strided_copy;
 *  - Split: the sizes must be >= 0 and sum to the axis, then one box copy
 *    per output at the running offset;
 *  - TopK: K is the extent; the selection loop is emit_index.c's with K read
 *    from the shape table, and with X's runtime extents (a runtime axis:
 *    K must not exceed its actual extent) when X has runtime dims;
 *  - ReduceSum: the axes become a mask, and the kernel walks each output
 *    element's reduced box through runtime tables of kept and reduced
 *    extents and strides (innermost first), with the compensated sums of
 *    emit_reduce.c.
 * An invalid operand (axis out of range or repeated, a step of 0, sizes
 * that do not sum to the axis, K beyond the axis) gives its dims the value
 * -1, which the bound check of cgen_set_dim refuses: the run returns
 * NAME_ERR_SHAPE. The static emitters (operands constant) are untouched and
 * call these only when an operand is not a constant. The statements that
 * read and resolve the operands and set the extents are in dims_text.c,
 * which the CUDA backend writes too (over host copies of the operands);
 * what stays here is the C kernels after them.
 */
#include "emit_dynshape.h"
#include "emit_common.h"
#include "../../ir/ops/shape_attrs.h"
#include "../../ir/ops/index_attrs.h"
#include "../../ir/ops/reduce_attrs.h"

#include <stdio.h>
#include <string.h>

int cgen_operand_at_run_time(const Node *n, int j)
{
    return j < n->n_in && n->in[j] && n->in[j]->kind != VK_CONST;
}

/* Writes `int64_t NAME[len]; for (...) NAME[i] = (int64_t)operand[i];`
 * (the values of integer input j of n, any integer dtype). */
void cgen_read_operand(Cgen *c, const Node *n, int j, const char *name, const char *i)
{
    Writer *w = cgen_w(c);
    char b[EMIT_EXPR_CAP];
    int64_t len = ir_numel(&n->in[j]->shape);
    w_line(w, "int64_t %s[%lld];", name, (long long)(len > 0 ? len : 1));
    if (len > 0)
        w_line(w, "for (%s = 0; %s < %lld; %s++) %s[%s] = (int64_t)%s[%s];", i, i, (long long)len, i, name, i,
               emit_ptr_name(c, n->in[j], b), i);
}

/* ---- Slice ------------------------------------------------------------------ */

/* The ranges resolved (cgen_write_slice_dims), then one strided copy from
 * the first element read. */
int cgen_emit_slice_dyn(Cgen *c, const Node *n, Diag *d)
{
    (void)d;
    Writer *w = cgen_w(c);
    const Value *x = n->in[0], *y = n->out[0];
    int r = x->shape.rank;
    CgenDims o = cgen_dims_ctx(c);
    CgenSliceText t = {0};
    if (!cgen_write_slice_dims(&o, n, &t)) return 0;
    char bx[EMIT_EXPR_CAP], by[EMIT_EXPR_CAP];
    w_line(w, "gcrt_strided_copy(%s, %s, %s + %s, %s, %s, %d, %zu);", emit_ptr_name(c, y, by), t.dst, emit_ptr_name(c, x, bx),
           t.off, t.sst, t.len, r, ir_dtype_size(x->dtype));
    return 0;
}

/* ---- Split ------------------------------------------------------------------ */

int cgen_emit_split_dyn(Cgen *c, const Node *n, Diag *d)
{
    (void)d;
    Writer *w = cgen_w(c);
    const Value *x = n->in[0];
    const Shape *xs = &x->shape;
    int ax = ir_norm_axis(n->attrs[SPLIT_AXIS].i, xs->rank);
    int64_t outer = emit_dims_prod(xs, 0, ax), inner = emit_dims_prod(xs, ax + 1, xs->rank), len = xs->dims[ax];
    size_t es = ir_dtype_size(x->dtype);
    char off[64], bd[64];
    int any = 0; /* an output that is not empty at its bound: the copies need the offset */
    for (int j = 0; j < n->n_out; j++) any |= ir_numel(&n->out[j]->shape) != 0;
    CgenDims o = cgen_dims_ctx(c);
    cgen_write_split_dims(&o, n, any ? off : NULL);
    for (int j = 0; j < n->n_out; j++) {
        const Value *y = n->out[j];
        /* the output's rows: its extent along the axis times the inner dims */
        CgenProd rp = cgen_dims_prod(&y->shape, ax, y->shape.rank);
        const char *row = cgen_prod_str(&rp, bd, sizeof bd);
        if (ir_numel(&y->shape) == 0) {
            w_line(w, "/* output %d is empty */", j);
            continue;
        }
        char bx[EMIT_EXPR_CAP], by[EMIT_EXPR_CAP], box[64], dst[64], sst[64];
        snprintf(box, sizeof box, "%s", cgen_tmp(c, "box"));
        snprintf(dst, sizeof dst, "%s", cgen_tmp(c, "dst_st"));
        snprintf(sst, sizeof sst, "%s", cgen_tmp(c, "src_st"));
        w_line(w, "{");
        w->indent++;
        w_line(w, "const int64_t %s[2] = {%lld, %s};", box, (long long)outer, row);
        w_line(w, "const int64_t %s[2] = {%s, 1};", dst, row);
        w_line(w, "static const int64_t %s[2] = {%lld, 1};", sst, (long long)(len * inner));
        w_line(w, "gcrt_strided_copy(%s, %s, %s + %s, %s, %s, 2, %zu);", emit_ptr_name(c, y, by), dst, emit_ptr_name(c, x, bx),
               off, sst, box, es);
        w->indent--;
        w_line(w, "}");
        if (j + 1 < n->n_out) w_line(w, "%s += %s;", off, row);
    }
    return 0;
}

/* ---- TopK ------------------------------------------------------------------- */

int cgen_emit_topk_dyn(Cgen *c, const Node *n, Diag *d)
{
    (void)d;
    Writer *w = cgen_w(c);
    const Value *x = n->in[0], *y = n->out[0];
    const Shape *xs = &x->shape;
    int ax = ir_norm_axis(n->attrs[TOPK_AXIS].i, xs->rank);
    int64_t len_max = xs->dims[ax];
    int largest = n->attrs[TOPK_LARGEST].i != 0;
    /* extents: literals, or runtime dims of X (topk_infer_sym) from the shape table */
    CgenProd po = cgen_dims_prod(xs, 0, ax), pi = cgen_dims_prod(xs, ax + 1, xs->rank);
    char outer[160], len[160], inner[160], bk[EMIT_EXPR_CAP], kv[EMIT_EXPR_CAP + 32], k[64];
    cgen_prod_str(&po, outer, sizeof outer);
    cgen_dim_str(xs, ax, len, sizeof len);
    cgen_prod_str(&pi, inner, sizeof inner);
    if (!cgen_operand_at_run_time(n, 1)) snprintf(kv, sizeof kv, "INT64_C(%lld)", (long long)y->shape.dims[ax]);
    else snprintf(kv, sizeof kv, "(int64_t)%s[0]", emit_ptr_name(c, n->in[1], bk));
    CgenDims dc = cgen_dims_ctx(c);
    cgen_write_topk_dims(&dc, n, kv);
    cgen_dim_str(&y->shape, ax, k, sizeof k);
    if (ir_numel(&y->shape) == 0) {
        w_line(w, "/* empty output */");
        return 0;
    }
    char bx[EMIT_EXPR_CAP], by[EMIT_EXPR_CAP], bi[EMIT_EXPR_CAP], ws[EMIT_EXPR_CAP], idx[800];
    char ky[64], ord[64], o[64], i[64], t[64];
    snprintf(ky, sizeof ky, "%s", cgen_tmp(c, "ky"));
    snprintf(ord, sizeof ord, "%s", cgen_tmp(c, "ord"));
    snprintf(o, sizeof o, "%s", cgen_tmp(c, "o"));
    snprintf(i, sizeof i, "%s", cgen_tmp(c, "i"));
    snprintf(t, sizeof t, "%s", cgen_tmp(c, "t"));
    emit_ptr_name(c, x, bx);
    emit_ptr_name(c, y, by);
    snprintf(ws, sizeof ws, "%s", cgen_workspace(c, n));
    /* per row along the axis: the keys, their order (gcrt_topk_order), the first K */
    w_line(w, "{");
    w->indent++;
    w_line(w, "double *%s = (double *)(void *)%s;", ky, ws);
    w_line(w, "int64_t *%s = (int64_t *)(void *)(%s + %lld);", ord, ws, (long long)(len_max * 8));
    w_line(w, "int64_t %s, %s, %s;", o, i, t);
    w_line(w, "for (%s = 0; %s < %s; %s++)", o, o, outer, o);
    w->indent++;
    w_line(w, "for (%s = 0; %s < %s; %s++) {", i, i, inner, i);
    w->indent++;
    snprintf(idx, sizeof idx, "(%s * %s + %s) * %s + %s", o, len, t, inner, i);
    w_printf(w, "for (%s = 0; %s < %s; %s++) %s[%s] = (double)", t, t, len, t, ky, t);
    cgen_load(w, x->dtype, bx, idx);
    w_printf(w, ";\n");
    w_line(w, "gcrt_topk_order(%s, %s, %s, %s, %d);", ky, ord, len, k, largest);
    w_line(w, "for (%s = 0; %s < %s; %s++) {", t, t, k, t);
    w->indent++;
    w_line(w, "%s[(%s * %s + %s) * %s + %s] = %s[(%s * %s + %s[%s]) * %s + %s];", by, o, k, t, inner, i, bx, o, len, ord, t,
           inner, i);
    if (n->n_out > 1 && n->out[1])
        w_line(w, "%s[(%s * %s + %s) * %s + %s] = %s[%s];", emit_ptr_name(c, n->out[1], bi), o, k, t, inner, i, ord, t);
    w->indent--;
    w_line(w, "}");
    w->indent--;
    w_line(w, "}");
    w->indent--;
    w->indent--;
    w_line(w, "}");
    return 0;
}

/* ---- ReduceSum -------------------------------------------------------------- */

/* Names of the locals of the written ReduceSum code (cgen_tmp: unique in the
 * run function, so no tensor pointer is shadowed). */
int cgen_emit_reduce_sum_dyn(Cgen *c, const Node *n, Diag *d)
{
    (void)d;
    char v[CGEN_RS_COUNT][64];
    CgenDims dc = cgen_dims_ctx(c);
    if (!cgen_write_reduce_sum_dims(&dc, n, v)) return 0;
    Writer *w = cgen_w(c);
    const Value *x = n->in[0], *y = n->out[0];
    DType t = x->dtype;
    int fl = t == DT_F32 || t == DT_F16 || t == DT_BF16;
    const char *acc_t = fl ? "float" : "double", *sfx = fl ? "f32" : "f64";
    const char *kd = v[CGEN_RS_KD], *ks = v[CGEN_RS_KS], *rd = v[CGEN_RS_RD], *rs = v[CGEN_RS_RS], *nk = v[CGEN_RS_NK], *nr = v[CGEN_RS_NR];
    const char *o = v[CGEN_RS_O], *e = v[CGEN_RS_E], *j = v[CGEN_RS_J], *acc = v[CGEN_RS_ACC];
    /* output element o (row-major over the kept axes) sums the box of the reduced axes at its base */
    w_line(w, "for (%s = 0; %s < %s; %s++) {", o, o, v[CGEN_RS_NOUT], o);
    w->indent++;
    w_line(w, "int64_t %s = 0, %s = %s;", v[CGEN_RS_BASE], v[CGEN_RS_Q], o);
    w_line(w, "%s %s = 0, %s_c = 0;", acc_t, acc, acc);
    w_line(w, "for (%s = 0; %s < %s; %s++) {", j, j, nk, j);
    w_line(w, "    %s += %s %% %s[%s] * %s[%s];", v[CGEN_RS_BASE], v[CGEN_RS_Q], kd, j, ks, j);
    w_line(w, "    %s /= %s[%s];", v[CGEN_RS_Q], kd, j);
    w_line(w, "}");
    w_line(w, "for (%s = 0; %s < %s; %s++) {", e, e, v[CGEN_RS_NRED], e);
    w->indent++;
    w_line(w, "int64_t %s = %s, %s = %s;", v[CGEN_RS_AT], v[CGEN_RS_BASE], v[CGEN_RS_P], e);
    w_line(w, "for (%s = 0; %s < %s; %s++) {", j, j, nr, j);
    w_line(w, "    %s += %s %% %s[%s] * %s[%s];", v[CGEN_RS_AT], v[CGEN_RS_P], rd, j, rs, j);
    w_line(w, "    %s /= %s[%s];", v[CGEN_RS_P], rd, j);
    w_line(w, "}");
    w_printf(w, "gcrt_ksum_add_%s(&%s, &%s_c, (%s)(", sfx, acc, acc, acc_t);
    char bx[EMIT_EXPR_CAP], by[EMIT_EXPR_CAP], sum[160];
    cgen_load(w, t, emit_ptr_name(c, x, bx), v[CGEN_RS_AT]);
    w_printf(w, "));\n");
    w->indent--;
    w_line(w, "}");
    snprintf(sum, sizeof sum, "%s + %s_c", acc, acc);
    cgen_store(w, y->dtype, emit_ptr_name(c, y, by), o, sum);
    w->indent--;
    w_line(w, "}");
    w->indent--;
    w_line(w, "}");
    return 0;
}
