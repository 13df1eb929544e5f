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
 * call these only when an operand is not a constant.
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
static void read_operand(Cgen *c, const Node *n, int j, const char *name, const char *i)
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

/* The written code resolves each listed axis as slice_plan does (ir/ops/shape.c):
 * negative starts/ends count from the end, then clamp to [0, dim] for a
 * positive step and to [0, dim-1] / [-1, dim-1] for a negative one; then one
 * strided copy from the first element read, with the source strides scaled by
 * the steps (negative along a reversed axis). */
int cgen_emit_slice_dyn(Cgen *c, const Node *n, Diag *d)
{
    (void)d;
    Writer *w = cgen_w(c);
    const Value *x = n->in[0], *y = n->out[0];
    int r = x->shape.rank, rr = r ? r : 1;
    int64_t ns = n->in[1]->shape.dims[0];
    static const char *const what[] = {NULL, "starts", "ends", "axes", "steps"};
    char nm[5][64], ind[64], first[64], step[64], len[64], sst[64], dst[64], off[64], seen[64], ok[64], i[64];
    char a[64], st[64], s0[64], e0[64], dm[64], l[64], ist[64], ost[64], e[160];
    snprintf(ind, sizeof ind, "%s", cgen_tmp(c, "in_dims"));
    snprintf(first, sizeof first, "%s", cgen_tmp(c, "first"));
    snprintf(step, sizeof step, "%s", cgen_tmp(c, "step"));
    snprintf(len, sizeof len, "%s", cgen_tmp(c, "len"));
    snprintf(sst, sizeof sst, "%s", cgen_tmp(c, "src_st"));
    snprintf(dst, sizeof dst, "%s", cgen_tmp(c, "dst_st"));
    snprintf(off, sizeof off, "%s", cgen_tmp(c, "src_off"));
    snprintf(seen, sizeof seen, "%s", cgen_tmp(c, "seen"));
    snprintf(ok, sizeof ok, "%s", cgen_tmp(c, "ok"));
    snprintf(i, sizeof i, "%s", cgen_tmp(c, "i"));
    snprintf(ist, sizeof ist, "%s", cgen_tmp(c, "ist"));
    snprintf(ost, sizeof ost, "%s", cgen_tmp(c, "ost"));
    cgen_dims_table(w, ind, &x->shape); /* runtime dims of data off the sliced axes read from the shape table */
    w_line(w, "int64_t %s[%d], %s[%d], %s[%d], %s[%d], %s[%d], %s = 0, %s = 1, %s = 1, %s;", first, rr, step, rr, len, rr, sst,
           rr, dst, rr, off, ist, ost, i);
    if (ns > 0) w_line(w, "int %s[%d] = {0}, %s = 1;", seen, rr, ok);
    w_line(w, "for (%s = 0; %s < %d; %s++) {", i, i, r, i);
    w_line(w, "    %s[%s] = 0;", first, i);
    w_line(w, "    %s[%s] = 1;", step, i);
    w_line(w, "    %s[%s] = %s[%s];", len, i, ind, i);
    w_line(w, "}");
    for (int j = 1; j <= 4 && ns > 0; j++) {
        if (j >= n->n_in || !n->in[j]) continue;
        snprintf(nm[j], sizeof nm[j], "%s", cgen_tmp(c, what[j]));
        read_operand(c, n, j, nm[j], i);
    }
    if (ns > 0) {
        int has_axes = n->n_in > 3 && n->in[3], has_steps = n->n_in > 4 && n->in[4];
        snprintf(a, sizeof a, "%s", cgen_tmp(c, "a"));
        snprintf(st, sizeof st, "%s", cgen_tmp(c, "st"));
        snprintf(s0, sizeof s0, "%s", cgen_tmp(c, "s"));
        snprintf(e0, sizeof e0, "%s", cgen_tmp(c, "e"));
        snprintf(dm, sizeof dm, "%s", cgen_tmp(c, "dim"));
        snprintf(l, sizeof l, "%s", cgen_tmp(c, "l"));
        w_line(w, "for (%s = 0; %s < %lld; %s++) {", i, i, (long long)ns, i);
        w->indent++;
        char ax_e[160], st_e[160];
        if (has_axes) snprintf(ax_e, sizeof ax_e, "%s[%s]", nm[3], i);
        else snprintf(ax_e, sizeof ax_e, "%s", i);
        if (has_steps) snprintf(st_e, sizeof st_e, "%s[%s]", nm[4], i);
        else snprintf(st_e, sizeof st_e, "1");
        w_line(w, "int64_t %s = %s, %s = %s, %s = %s[%s], %s = %s[%s], %s, %s;", a, ax_e, st, st_e, s0, nm[1], i, e0, nm[2], i,
               dm, l);
        w_line(w, "if (%s < 0) %s += %d;", a, a, r);
        w_line(w, "if (%s < 0 || %s >= %d || %s[%s] || %s == 0) {", a, a, r, seen, a, st);
        w_line(w, "    %s = 0; /* an axis out of range or repeated, or a step of 0 */", ok);
        w_line(w, "    break;");
        w_line(w, "}");
        w_line(w, "%s[%s] = 1;", seen, a);
        w_line(w, "%s = %s[%s];", dm, ind, a);
        w_line(w, "if (%s < -INT64_MAX) %s = -INT64_MAX;", st, st);
        w_line(w, "if (%s < 0) %s += %s;", s0, s0, dm);
        w_line(w, "if (%s < 0) %s += %s;", e0, e0, dm);
        w_line(w, "if (%s > 0) {", st);
        w_line(w, "    %s = %s < 0 ? 0 : %s > %s ? %s : %s;", s0, s0, s0, dm, dm, s0);
        w_line(w, "    %s = %s < 0 ? 0 : %s > %s ? %s : %s;", e0, e0, e0, dm, dm, e0);
        w_line(w, "    %s = %s > %s ? (%s - %s - 1) / %s + 1 : 0;", l, e0, s0, e0, s0, st);
        w_line(w, "} else {");
        w_line(w, "    %s = %s < 0 ? 0 : %s > %s - 1 ? %s - 1 : %s;", s0, s0, s0, dm, dm, s0);
        w_line(w, "    %s = %s < -1 ? -1 : %s > %s - 1 ? %s - 1 : %s;", e0, e0, e0, dm, dm, e0);
        w_line(w, "    %s = %s > %s ? (%s - %s - 1) / -%s + 1 : 0;", l, s0, e0, s0, e0, st);
        w_line(w, "}");
        w_line(w, "%s[%s] = %s ? %s : 0;", first, a, l, s0);
        w_line(w, "%s[%s] = %s > 1 ? %s : 1; /* with one element the step is never taken */", step, a, l, st);
        w_line(w, "%s[%s] = %s;", len, a, l);
        w->indent--;
        w_line(w, "}");
    }
    for (int k = 0; k < r; k++) {
        if (!y->shape.sym[k]) continue;
        snprintf(e, sizeof e, "%s ? %s[%d] : -1", ok, len, k);
        cgen_set_dim(c, y, k, e);
    }
    if (ir_numel(&y->shape) == 0) {
        w_line(w, "/* empty output */");
        return 0;
    }
    /* source offset and strides over the dense input, dense output strides */
    w_line(w, "for (%s = %d; %s >= 0; %s--) {", i, r - 1, i, i);
    w_line(w, "    %s += %s[%s] * %s;", off, first, i, ist);
    w_line(w, "    %s[%s] = %s[%s] * %s;", sst, i, step, i, ist);
    w_line(w, "    %s[%s] = %s;", dst, i, ost);
    w_line(w, "    %s *= %s[%s];", ist, ind, i);
    w_line(w, "    %s *= %s[%s];", ost, len, i);
    w_line(w, "}");
    char bx[EMIT_EXPR_CAP], by[EMIT_EXPR_CAP];
    w_line(w, "gcrt_strided_copy(%s, %s, %s + %s, %s, %s, %d, %zu);", emit_ptr_name(c, y, by), dst, emit_ptr_name(c, x, bx),
           off, sst, len, r, ir_dtype_size(x->dtype));
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
    char sp[64], i[64], sum[64], ok[64], off[64], e[200], bd[64];
    snprintf(i, sizeof i, "%s", cgen_tmp(c, "i"));
    snprintf(sp, sizeof sp, "%s", cgen_tmp(c, "split"));
    snprintf(sum, sizeof sum, "%s", cgen_tmp(c, "sum"));
    snprintf(ok, sizeof ok, "%s", cgen_tmp(c, "ok"));
    snprintf(off, sizeof off, "%s", cgen_tmp(c, "off"));
    int any = 0; /* an output that is not empty at its bound: the copies need the offset */
    for (int j = 0; j < n->n_out; j++) any |= ir_numel(&n->out[j]->shape) != 0;
    w_line(w, "int64_t %s, %s = 0;", i, sum);
    if (any) w_line(w, "int64_t %s = 0;", off);
    w_line(w, "int %s = 1;", ok);
    read_operand(c, n, 1, sp, i);
    /* each size in [0, len] first, so the sum cannot overflow */
    w_line(w, "for (%s = 0; %s < %d; %s++) {", i, i, n->n_out, i);
    w->indent++;
    w_line(w, "if (%s[%s] < 0 || %s[%s] > %lld) %s = 0;", sp, i, sp, i, (long long)len, ok);
    w_line(w, "else %s += %s[%s];", sum, sp, i);
    w->indent--;
    w_line(w, "}");
    w_line(w, "if (%s != %lld) %s = 0;", sum, (long long)len, ok);
    for (int j = 0; j < n->n_out; j++) {
        snprintf(e, sizeof e, "%s ? %s[%d] : -1", ok, sp, j);
        cgen_set_dim(c, n->out[j], ax, e);
    }
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
    char outer[160], len[160], inner[160], bk[EMIT_EXPR_CAP], kv[EMIT_EXPR_CAP + 32], e[2 * sizeof kv + 200], k[64];
    cgen_prod_str(&po, outer, sizeof outer);
    cgen_dim_str(xs, ax, len, sizeof len);
    cgen_prod_str(&pi, inner, sizeof inner);
    if (!cgen_operand_at_run_time(n, 1)) snprintf(kv, sizeof kv, "INT64_C(%lld)", (long long)y->shape.dims[ax]);
    else snprintf(kv, sizeof kv, "(int64_t)%s[0]", emit_ptr_name(c, n->in[1], bk));
    /* K beyond the actual extent of a runtime axis: -1, which the check refuses */
    if (xs->sym[ax]) snprintf(e, sizeof e, "(%s <= %s ? %s : -1)", kv, len, kv);
    else snprintf(e, sizeof e, "%s", kv);
    cgen_set_dim(c, y, ax, e);
    cgen_dim_str(&y->shape, ax, k, sizeof k);
    /* Indices has its own data-dependent dim when Values has one */
    if (n->n_out > 1 && n->out[1] && cgen_own_dim(cgen_graph(c), n->out[1], ax)) cgen_set_dim(c, n->out[1], ax, k);
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
enum { RS_IND, RS_AXES, RS_MASK, RS_OK, RS_I, RS_KEPT, RS_NKEPT, RS_A, RS_KD, RS_KS, RS_RD, RS_RS, RS_NK, RS_NR, RS_ST,
       RS_NOUT, RS_NRED, RS_O, RS_E, RS_J, RS_BASE, RS_Q, RS_ACC, RS_AT, RS_P, RS_COUNT };

int cgen_emit_reduce_sum_dyn(Cgen *c, const Node *n, Diag *d)
{
    (void)d;
    static const char *const base[RS_COUNT] = {"in_dims", "axes", "mask", "ok", "i", "kept", "n_kept", "a", "kd", "ks", "rd",
                                               "rs", "nk", "nr", "st", "n_out", "n_red", "o", "e", "j", "base", "q", "acc",
                                               "at", "p"};
    char v[RS_COUNT][64], ex[160];
    for (int k = 0; k < RS_COUNT; k++) snprintf(v[k], sizeof v[k], "%s", cgen_tmp(c, base[k]));
    Writer *w = cgen_w(c);
    const Value *x = n->in[0], *y = n->out[0];
    const Shape *xs = &x->shape;
    int r = xs->rank, keep = n->attrs[REDUCE_SUM_KEEPDIMS].i != 0, rr = r ? r : 1;
    int64_t na = ir_numel(&n->in[1]->shape);
    DType t = x->dtype;
    int fl = t == DT_F32 || t == DT_F16 || t == DT_BF16;
    const char *acc_t = fl ? "float" : "double", *sfx = fl ? "f32" : "f64";
    const char *i = v[RS_I], *mask = v[RS_MASK], *ind = v[RS_IND], *ok = v[RS_OK], *axes = v[RS_AXES], *a = v[RS_A];
    const char *kd = v[RS_KD], *ks = v[RS_KS], *rd = v[RS_RD], *rs = v[RS_RS], *nk = v[RS_NK], *nr = v[RS_NR];
    const char *st = v[RS_ST], *o = v[RS_O], *e = v[RS_E], *j = v[RS_J], *acc = v[RS_ACC];
    emit_i64_array(w, ind, xs->dims, r);
    w_line(w, "int %s[%d] = {0}, %s = 1;", mask, rr, ok);
    if (keep) w_line(w, "int64_t %s;", i);
    else w_line(w, "int64_t %s, %s[%d], %s = 0;", i, v[RS_KEPT], rr, v[RS_NKEPT]);
    read_operand(c, n, 1, axes, i);
    w_line(w, "for (%s = 0; %s < %lld; %s++) {", i, i, (long long)na, i);
    w->indent++;
    w_line(w, "int64_t %s = %s[%s] < 0 ? %s[%s] + %d : %s[%s];", a, axes, i, axes, i, r, axes, i);
    w_line(w, "if (%s < 0 || %s >= %d || %s[%s]) %s = 0; /* an axis out of range or repeated */", a, a, r, mask, a, ok);
    w_line(w, "else %s[%s] = 1;", mask, a);
    w->indent--;
    w_line(w, "}");
    if (!keep) {
        w_line(w, "for (%s = 0; %s < %d; %s++)", i, i, r, i);
        w_line(w, "    if (!%s[%s]) %s[%s++] = %s[%s];", mask, i, v[RS_KEPT], v[RS_NKEPT], ind, i);
    }
    for (int k = 0; k < y->shape.rank; k++) {
        if (!y->shape.sym[k]) continue;
        if (keep) snprintf(ex, sizeof ex, "%s ? (%s[%d] ? 1 : %lld) : -1", ok, mask, k, (long long)xs->dims[k]);
        else snprintf(ex, sizeof ex, "%s ? %s[%d] : -1", ok, v[RS_KEPT], k);
        cgen_set_dim(c, y, k, ex);
    }
    if (ir_numel(&y->shape) == 0) {
        w_line(w, "/* empty output */");
        return 0;
    }
    /* the kept and reduced axes' extents and input strides, innermost first */
    w_line(w, "if (%s) {", ok);
    w->indent++;
    w_line(w, "int64_t %s[%d], %s[%d], %s[%d], %s[%d], %s = 0, %s = 0, %s = 1, %s = 1, %s = 1, %s, %s, %s;", kd, rr, ks, rr, rd,
           rr, rs, rr, nk, nr, st, v[RS_NOUT], v[RS_NRED], o, e, j);
    w_line(w, "for (%s = %d; %s >= 0; %s--) {", i, r - 1, i, i);
    w->indent++;
    w_line(w, "if (%s[%s]) {", mask, i);
    w_line(w, "    %s[%s] = %s[%s];", rd, nr, ind, i);
    w_line(w, "    %s[%s++] = %s;", rs, nr, st);
    w_line(w, "    %s *= %s[%s];", v[RS_NRED], ind, i);
    w_line(w, "} else {");
    w_line(w, "    %s[%s] = %s[%s];", kd, nk, ind, i);
    w_line(w, "    %s[%s++] = %s;", ks, nk, st);
    w_line(w, "    %s *= %s[%s];", v[RS_NOUT], ind, i);
    w_line(w, "}");
    w_line(w, "%s *= %s[%s];", st, ind, i);
    w->indent--;
    w_line(w, "}");
    /* output element o (row-major over the kept axes) sums the box of the reduced axes at its base */
    w_line(w, "for (%s = 0; %s < %s; %s++) {", o, o, v[RS_NOUT], o);
    w->indent++;
    w_line(w, "int64_t %s = 0, %s = %s;", v[RS_BASE], v[RS_Q], o);
    w_line(w, "%s %s = 0, %s_c = 0;", acc_t, acc, acc);
    w_line(w, "for (%s = 0; %s < %s; %s++) {", j, j, nk, j);
    w_line(w, "    %s += %s %% %s[%s] * %s[%s];", v[RS_BASE], v[RS_Q], kd, j, ks, j);
    w_line(w, "    %s /= %s[%s];", v[RS_Q], kd, j);
    w_line(w, "}");
    w_line(w, "for (%s = 0; %s < %s; %s++) {", e, e, v[RS_NRED], e);
    w->indent++;
    w_line(w, "int64_t %s = %s, %s = %s;", v[RS_AT], v[RS_BASE], v[RS_P], e);
    w_line(w, "for (%s = 0; %s < %s; %s++) {", j, j, nr, j);
    w_line(w, "    %s += %s %% %s[%s] * %s[%s];", v[RS_AT], v[RS_P], rd, j, rs, j);
    w_line(w, "    %s /= %s[%s];", v[RS_P], rd, j);
    w_line(w, "}");
    w_printf(w, "gcrt_ksum_add_%s(&%s, &%s_c, (%s)(", sfx, acc, acc, acc_t);
    char bx[EMIT_EXPR_CAP], by[EMIT_EXPR_CAP], sum[160];
    cgen_load(w, t, emit_ptr_name(c, x, bx), v[RS_AT]);
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
