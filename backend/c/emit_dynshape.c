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
 *    from the shape table;
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

/* C text of dim k of v: its shape-table entry, or the literal. */
static const char *dim_str(const Value *v, int k, char *buf, size_t cap)
{
    CgenProd p = cgen_dims_prod(&v->shape, k, k + 1);
    return cgen_prod_str(&p, buf, cap);
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
    emit_i64_array(w, ind, x->shape.dims, r);
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
        char bx[EMIT_EXPR_CAP], by[EMIT_EXPR_CAP];
        w_line(w, "{");
        w->indent++;
        w_line(w, "const int64_t box[2] = {%lld, %s};", (long long)outer, row);
        w_line(w, "const int64_t dst_st[2] = {%s, 1};", row);
        w_line(w, "static const int64_t src_st[2] = {%lld, 1};", (long long)(len * inner));
        w_line(w, "gcrt_strided_copy(%s, dst_st, %s + %s, src_st, box, 2, %zu);", emit_ptr_name(c, y, by),
               emit_ptr_name(c, x, bx), off, es);
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
    int64_t outer = emit_dims_prod(xs, 0, ax), len = xs->dims[ax], inner = emit_dims_prod(xs, ax + 1, xs->rank);
    int largest = n->attrs[TOPK_LARGEST].i != 0;
    char bk[EMIT_EXPR_CAP], e[EMIT_EXPR_CAP + 32], k[64];
    snprintf(e, sizeof e, "(int64_t)%s[0]", emit_ptr_name(c, n->in[1], bk));
    cgen_set_dim(c, y, ax, e);
    dim_str(y, ax, k, sizeof k);
    if (n->n_out > 1 && n->out[1]) cgen_set_dim(c, n->out[1], ax, k);
    if (ir_numel(&y->shape) == 0) {
        w_line(w, "/* empty output */");
        return 0;
    }
    char bx[EMIT_EXPR_CAP], by[EMIT_EXPR_CAP], bi[EMIT_EXPR_CAP], ws[EMIT_EXPR_CAP], idx[128];
    emit_ptr_name(c, x, bx);
    emit_ptr_name(c, y, by);
    snprintf(ws, sizeof ws, "%s", cgen_workspace(c, n));
    w_line(w, "{");
    w->indent++;
    w_line(w, "double *ky = (double *)(void *)%s;", ws);
    w_line(w, "int64_t *ord = (int64_t *)(void *)(%s + %lld);", ws, (long long)(len * 8));
    w_line(w, "for (int64_t o = 0; o < %lld; o++)", (long long)outer);
    w->indent++;
    w_line(w, "for (int64_t i = 0; i < %lld; i++) {", (long long)inner);
    w->indent++;
    snprintf(idx, sizeof idx, "(o * %lld + t) * %lld + i", (long long)len, (long long)inner);
    w_printf(w, "for (int64_t t = 0; t < %lld; t++) ky[t] = (double)", (long long)len);
    cgen_load(w, x->dtype, bx, idx);
    w_printf(w, ";\n");
    w_line(w, "gcrt_topk_order(ky, ord, %lld, %s, %d);", (long long)len, k, largest);
    w_line(w, "for (int64_t t = 0; t < %s; t++) {", k);
    w->indent++;
    w_line(w, "%s[(o * %s + t) * %lld + i] = %s[(o * %lld + ord[t]) * %lld + i];", by, k, (long long)inner, bx, (long long)len,
           (long long)inner);
    if (n->n_out > 1 && n->out[1])
        w_line(w, "%s[(o * %s + t) * %lld + i] = ord[t];", emit_ptr_name(c, n->out[1], bi), k, (long long)inner);
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

int cgen_emit_reduce_sum_dyn(Cgen *c, const Node *n, Diag *d)
{
    (void)d;
    Writer *w = cgen_w(c);
    const Value *x = n->in[0], *y = n->out[0];
    const Shape *xs = &x->shape;
    int r = xs->rank, keep = n->attrs[REDUCE_SUM_KEEPDIMS].i != 0, rr = r ? r : 1;
    int64_t na = ir_numel(&n->in[1]->shape);
    DType t = x->dtype;
    int fl = t == DT_F32 || t == DT_F16 || t == DT_BF16;
    const char *acc_t = fl ? "float" : "double", *sfx = fl ? "f32" : "f64";
    char ind[64], axes[64], mask[64], ok[64], i[64], kept[64], e[160];
    snprintf(ind, sizeof ind, "%s", cgen_tmp(c, "in_dims"));
    snprintf(axes, sizeof axes, "%s", cgen_tmp(c, "axes"));
    snprintf(mask, sizeof mask, "%s", cgen_tmp(c, "mask"));
    snprintf(ok, sizeof ok, "%s", cgen_tmp(c, "ok"));
    snprintf(i, sizeof i, "%s", cgen_tmp(c, "i"));
    snprintf(kept, sizeof kept, "%s", cgen_tmp(c, "kept"));
    emit_i64_array(w, ind, xs->dims, r);
    w_line(w, "int %s[%d] = {0}, %s = 1;", mask, rr, ok);
    if (keep) w_line(w, "int64_t %s;", i);
    else w_line(w, "int64_t %s, %s[%d], n_kept = 0;", i, kept, rr);
    read_operand(c, n, 1, axes, i);
    w_line(w, "for (%s = 0; %s < %lld; %s++) {", i, i, (long long)na, i);
    w->indent++;
    w_line(w, "int64_t a = %s[%s] < 0 ? %s[%s] + %d : %s[%s];", axes, i, axes, i, r, axes, i);
    w_line(w, "if (a < 0 || a >= %d || %s[a]) %s = 0;", r, mask, ok);
    w_line(w, "else %s[a] = 1;", mask);
    w->indent--;
    w_line(w, "}");
    if (!keep) {
        w_line(w, "for (%s = 0; %s < %d; %s++)", i, i, r, i);
        w_line(w, "    if (!%s[%s]) %s[n_kept++] = %s[%s];", mask, i, kept, ind, i);
    }
    for (int k = 0; k < y->shape.rank; k++) {
        if (!y->shape.sym[k]) continue;
        if (keep) snprintf(e, sizeof e, "%s ? (%s[%d] ? 1 : %lld) : -1", ok, mask, k, (long long)xs->dims[k]);
        else snprintf(e, sizeof e, "%s ? %s[%d] : -1", ok, kept, k);
        cgen_set_dim(c, y, k, e);
    }
    if (ir_numel(&y->shape) == 0) {
        w_line(w, "/* empty output */");
        return 0;
    }
    /* the kept and reduced axes' extents and input strides, innermost first */
    w_line(w, "if (%s) {", ok);
    w->indent++;
    w_line(w, "int64_t kd[%d], ks[%d], rd[%d], rs[%d], nk = 0, nr = 0, st = 1, n_out = 1, n_red = 1, o, e, j;", rr, rr, rr, rr);
    w_line(w, "for (%s = %d; %s >= 0; %s--) {", i, r - 1, i, i);
    w->indent++;
    w_line(w, "if (%s[%s]) { rd[nr] = %s[%s]; rs[nr++] = st; n_red *= %s[%s]; }", mask, i, ind, i, ind, i);
    w_line(w, "else { kd[nk] = %s[%s]; ks[nk++] = st; n_out *= %s[%s]; }", ind, i, ind, i);
    w_line(w, "st *= %s[%s];", ind, i);
    w->indent--;
    w_line(w, "}");
    w_line(w, "for (o = 0; o < n_out; o++) {");
    w->indent++;
    w_line(w, "int64_t base = 0, q = o;");
    w_line(w, "%s acc = 0, acc_c = 0;", acc_t);
    w_line(w, "for (j = 0; j < nk; j++) { base += q %% kd[j] * ks[j]; q /= kd[j]; }");
    w_line(w, "for (e = 0; e < n_red; e++) {");
    w->indent++;
    w_line(w, "int64_t at = base, p = e;");
    w_line(w, "for (j = 0; j < nr; j++) { at += p %% rd[j] * rs[j]; p /= rd[j]; }");
    w_printf(w, "gcrt_ksum_add_%s(&acc, &acc_c, (%s)(", sfx, acc_t);
    char bx[EMIT_EXPR_CAP], by[EMIT_EXPR_CAP];
    cgen_load(w, t, emit_ptr_name(c, x, bx), "at");
    w_printf(w, "));\n");
    w->indent--;
    w_line(w, "}");
    cgen_store(w, y->dtype, emit_ptr_name(c, y, by), "o", "acc + acc_c");
    w->indent--;
    w_line(w, "}");
    w->indent--;
    w_line(w, "}");
    return 0;
}
