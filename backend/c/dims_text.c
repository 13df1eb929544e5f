/* dims_text.c — the statements that compute data-dependent output extents
 * from the values of runtime operands, shared by the C and the CUDA
 * backend (cgen.h, CgenDims).
 *
 * Shape inference gives each output dim that a runtime operand decides a
 * data-dependent symbol bounded by what the memory was planned for (ir/ir.h,
 * SYM_DATA). The code written here applies the op's rules to the operand
 * values as shape inference does for a constant, and sets each such dim
 * through CgenDims.set_dim, whose check returns NAME_ERR_SHAPE beyond the
 * bound; where the values break a rule it returns NAME_ERR_SHAPE itself
 * (or sets -1, which the check refuses). The C backend reads the values in
 * its arena; the CUDA backend reads them back into host arrays first, and
 * then copies the shape table to the device for the kernels. Local names
 * come from CgenDims.tmp, so no tensor name of the schedule is shadowed.
 */
#include "cgen.h"
#include "emit_common.h"
#include "../../ir/ops/shape_attrs.h"
#include "../../ir/ops/vision_attrs.h"
#include "../../ir/ops/index_attrs.h"
#include "../../ir/ops/reduce_attrs.h"

#include <stdio.h>
#include <string.h>

/* ---- Reshape, Squeeze, Unsqueeze ------------------------------------------- */

void cgen_write_view_dims(const CgenDims *o, const Node *n, const char *req)
{
    Writer *w = o->w;
    const Value *x = n->in[0], *y = n->out[0];
    const char *err = o->err, *q = req;
    char xd[64], od[64], i[64];
    int r = x->shape.rank, k = (int)n->in[1]->shape.dims[0], ro = y->shape.rank;
    snprintf(xd, sizeof xd, "%s", o->tmp(o->ctx, "in_dims"));
    snprintf(od, sizeof od, "%s", o->tmp(o->ctx, "out_dims"));
    snprintf(i, sizeof i, "%s", o->tmp(o->ctx, "i"));
    cgen_dims_table(w, xd, &x->shape);
    w_line(w, "(void)%s;", xd);
    w_line(w, "int64_t %s[%d];", od, ro + 1);
    w_line(w, "int %s;", i);
    if (n->op == OP_Reshape) {
        char known[64], at[64], v[64];
        snprintf(known, sizeof known, "%s", o->tmp(o->ctx, "known"));
        snprintf(at, sizeof at, "%s", o->tmp(o->ctx, "at"));
        snprintf(v, sizeof v, "%s", o->tmp(o->ctx, "v"));
        CgenProd tot = cgen_dims_prod(&x->shape, 0, r);
        char bt[160];
        w_line(w, "int64_t %s = 1;", known);
        w_line(w, "int %s = -1;", at);
        w_line(w, "for (%s = 0; %s < %d; %s++) {", i, i, k, i);
        w->indent++;
        w_line(w, "int64_t %s = %s[%s];", v, q, i);
        w_line(w, "if (%s == -1) {", v);
        w_line(w, "    if (%s >= 0) return %s; /* two -1 */", at, err);
        w_line(w, "    %s = %s;", at, i);
        w_line(w, "    %s = 1;", v);
        if (!n->attrs[RESHAPE_ALLOWZERO].i) {
            w_line(w, "} else if (%s == 0) {", v);
            w_line(w, "    if (%s >= %d) return %s; /* 0 copies a dim the input lacks */", i, r, err);
            w_line(w, "    %s = %s[%s];", v, xd, i);
        }
        w_line(w, "} else if (%s < 0) {", v);
        w_line(w, "    return %s;", err);
        w_line(w, "}");
        w_line(w, "if (%s > 0 && %s > INT64_MAX / %s) return %s;", v, known, v, err);
        w_line(w, "%s[%s] = %s;", od, i, v);
        w_line(w, "%s *= %s;", known, v);
        w->indent--;
        w_line(w, "}");
        w_line(w, "if (%s >= 0) {", at);
        w_line(w, "    if (%s == 0 || (%s) %% %s != 0) return %s;", known, cgen_prod_str(&tot, bt, sizeof bt), known, err);
        w_line(w, "    %s[%s] = (%s) / %s;", od, at, bt, known);
        w_line(w, "} else if (%s != %s) {", known, bt);
        w_line(w, "    return %s; /* another element count */", err);
        w_line(w, "}");
    } else {
        char flag[64], a[64], j[64];
        snprintf(flag, sizeof flag, "%s", o->tmp(o->ctx, n->op == OP_Squeeze ? "drop" : "ins"));
        snprintf(a, sizeof a, "%s", o->tmp(o->ctx, "a"));
        snprintf(j, sizeof j, "%s", o->tmp(o->ctx, "j"));
        int rr = n->op == OP_Squeeze ? r : ro; /* the rank the axes index */
        w_line(w, "int %s[%d] = {0};", flag, rr + 1);
        w_line(w, "int %s = 0;", j);
        w_line(w, "for (%s = 0; %s < %d; %s++) {", i, i, k, i);
        w_line(w, "    int64_t %s = %s[%s] < 0 ? %s[%s] + %d : %s[%s];", a, q, i, q, i, rr, q, i);
        if (n->op == OP_Squeeze)
            w_line(w, "    if (%s < 0 || %s >= %d || %s[%s] || %s[%s] != 1) return %s;", a, a, rr, flag, a, xd, a, err);
        else
            w_line(w, "    if (%s < 0 || %s >= %d || %s[%s]) return %s;", a, a, rr, flag, a, err);
        w_line(w, "    %s[%s] = 1;", flag, a);
        w_line(w, "}");
        w_line(w, "for (%s = 0; %s < %d; %s++) {", i, i, rr, i);
        if (n->op == OP_Squeeze)
            w_line(w, "    if (!%s[%s]) %s[%s++] = %s[%s];", flag, i, od, j, xd, i);
        else
            w_line(w, "    %s[%s] = %s[%s] ? 1 : %s[%s++];", od, i, flag, i, xd, j);
        w_line(w, "}");
        w_line(w, "(void)%s;", j);
    }
    for (int t = 0; t < ro; t++) {
        char e[96];
        snprintf(e, sizeof e, "%s[%d]", od, t);
        o->set_dim(o->ctx, y, t, e);
    }
}


/* ---- Slice ---------------------------------------------------------------- */

/* Each listed axis resolved as slice_plan does (ir/ops/shape.c): negative
 * starts/ends count from the end, then clamp to [0, dim] for a positive
 * step and to [0, dim-1] / [-1, dim-1] for a negative one; then the source
 * offset of the first element read and the source strides scaled by the
 * steps (negative along a reversed axis), and dense output strides. */
int cgen_write_slice_dims(const CgenDims *o, const Node *n, CgenSliceText *t)
{
    Writer *w = o->w;
    const Value *x = n->in[0], *y = n->out[0];
    int r = x->shape.rank, rr = r ? r : 1;
    int64_t ns = n->in[1]->shape.dims[0];
    static const char *const what[] = {NULL, "starts", "ends", "axes", "steps"};
    char nm[5][64], ind[64], first[64], step[64], len[64], sst[64], dst[64], off[64], seen[64], ok[64], i[64];
    char a[64], st[64], s0[64], e0[64], dm[64], l[64], ist[64], ost[64], e[160];
    snprintf(ind, sizeof ind, "%s", o->tmp(o->ctx, "in_dims"));
    snprintf(first, sizeof first, "%s", o->tmp(o->ctx, "first"));
    snprintf(step, sizeof step, "%s", o->tmp(o->ctx, "step"));
    snprintf(len, sizeof len, "%s", o->tmp(o->ctx, "len"));
    snprintf(sst, sizeof sst, "%s", o->tmp(o->ctx, "src_st"));
    snprintf(dst, sizeof dst, "%s", o->tmp(o->ctx, "dst_st"));
    snprintf(off, sizeof off, "%s", o->tmp(o->ctx, "src_off"));
    snprintf(seen, sizeof seen, "%s", o->tmp(o->ctx, "seen"));
    snprintf(ok, sizeof ok, "%s", o->tmp(o->ctx, "ok"));
    snprintf(i, sizeof i, "%s", o->tmp(o->ctx, "i"));
    snprintf(ist, sizeof ist, "%s", o->tmp(o->ctx, "ist"));
    snprintf(ost, sizeof ost, "%s", o->tmp(o->ctx, "ost"));
    cgen_dims_table(w, ind, &x->shape); /* runtime dims of data off the sliced axes read from the shape table */
    if (t->no_dst)
        w_line(w, "int64_t %s[%d], %s[%d], %s[%d], %s[%d], %s = 0, %s = 1, %s;", first, rr, step, rr, len, rr, sst, rr, off, ist, i);
    else
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
        snprintf(nm[j], sizeof nm[j], "%s", o->tmp(o->ctx, what[j]));
        o->read(o->ctx, n, j, nm[j], i);
    }
    if (ns > 0) {
        int has_axes = n->n_in > 3 && n->in[3], has_steps = n->n_in > 4 && n->in[4];
        snprintf(a, sizeof a, "%s", o->tmp(o->ctx, "a"));
        snprintf(st, sizeof st, "%s", o->tmp(o->ctx, "st"));
        snprintf(s0, sizeof s0, "%s", o->tmp(o->ctx, "s"));
        snprintf(e0, sizeof e0, "%s", o->tmp(o->ctx, "e"));
        snprintf(dm, sizeof dm, "%s", o->tmp(o->ctx, "dim"));
        snprintf(l, sizeof l, "%s", o->tmp(o->ctx, "l"));
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
        o->set_dim(o->ctx, y, k, e);
    }
    snprintf(t->len, sizeof t->len, "%s", len);
    snprintf(t->off, sizeof t->off, "%s", off);
    snprintf(t->sst, sizeof t->sst, "%s", sst);
    snprintf(t->dst, sizeof t->dst, "%s", dst);
    if (ir_numel(&y->shape) == 0) {
        w_line(w, "/* empty output */");
        return 0;
    }
    /* source offset and strides over the dense input, dense output strides */
    w_line(w, "for (%s = %d; %s >= 0; %s--) {", i, r - 1, i, i);
    w_line(w, "    %s += %s[%s] * %s;", off, first, i, ist);
    w_line(w, "    %s[%s] = %s[%s] * %s;", sst, i, step, i, ist);
    if (!t->no_dst) w_line(w, "    %s[%s] = %s;", dst, i, ost);
    w_line(w, "    %s *= %s[%s];", ist, ind, i);
    if (!t->no_dst) w_line(w, "    %s *= %s[%s];", ost, len, i);
    w_line(w, "}");
    return 1;
}

/* ---- Split ---------------------------------------------------------------- */

void cgen_write_split_dims(const CgenDims *o, const Node *n, char *off_name)
{
    Writer *w = o->w;
    const Shape *xs = &n->in[0]->shape;
    const int ax = ir_norm_axis(n->attrs[SPLIT_AXIS].i, xs->rank);
    const int64_t len = xs->dims[ax];
    char sp[64], i[64], sum[64], ok[64], off[64], e[200];
    snprintf(i, sizeof i, "%s", o->tmp(o->ctx, "i"));
    snprintf(sp, sizeof sp, "%s", o->tmp(o->ctx, "split"));
    snprintf(sum, sizeof sum, "%s", o->tmp(o->ctx, "sum"));
    snprintf(ok, sizeof ok, "%s", o->tmp(o->ctx, "ok"));
    snprintf(off, sizeof off, "%s", o->tmp(o->ctx, "off"));
    w_line(w, "int64_t %s, %s = 0;", i, sum);
    if (off_name) {
        w_line(w, "int64_t %s = 0;", off);
        snprintf(off_name, 64, "%s", off);
    }
    w_line(w, "int %s = 1;", ok);
    o->read(o->ctx, n, 1, sp, i);
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
        o->set_dim(o->ctx, n->out[j], ax, e);
    }
}

/* ---- TopK ----------------------------------------------------------------- */

void cgen_write_topk_dims(const CgenDims *o, const Node *n, const char *kv)
{
    const Shape *xs = &n->in[0]->shape;
    const Value *y = n->out[0];
    const int ax = ir_norm_axis(n->attrs[TOPK_AXIS].i, xs->rank);
    char len[160], e[2 * 300 + 200], k[64];
    cgen_dim_str(xs, ax, len, sizeof len);
    /* K beyond the actual extent of a runtime axis: -1, which the check refuses */
    if (xs->sym[ax]) snprintf(e, sizeof e, "(%s <= %s ? %s : -1)", kv, len, kv);
    else snprintf(e, sizeof e, "%s", kv);
    o->set_dim(o->ctx, y, ax, e);
    cgen_dim_str(&y->shape, ax, k, sizeof k);
    /* Indices has its own data-dependent dim when Values has one */
    if (n->n_out > 1 && n->out[1] && cgen_own_dim(o->g, n->out[1], ax)) o->set_dim(o->ctx, n->out[1], ax, k);
}

/* ---- ReduceSum ------------------------------------------------------------ */

/* The axes become a mask; then, inside `if (ok) {` (left open), the kept
 * and reduced axes' extents and input strides, innermost first. */
int cgen_write_reduce_sum_dims(const CgenDims *o, const Node *n, char (*v)[64])
{
    static const char *const base[CGEN_RS_COUNT] = {"in_dims", "axes", "mask", "ok", "i", "kept", "n_kept", "a", "kd", "ks", "rd",
                                                    "rs", "nk", "nr", "st", "n_out", "n_red", "o", "e", "j", "base", "q", "acc",
                                                    "at", "p"};
    char ex[160];
    for (int k = 0; k < CGEN_RS_COUNT; k++) snprintf(v[k], 64, "%s", o->tmp(o->ctx, base[k]));
    Writer *w = o->w;
    const Value *x = n->in[0], *y = n->out[0];
    const Shape *xs = &x->shape;
    int r = xs->rank, keep = n->attrs[REDUCE_SUM_KEEPDIMS].i != 0, rr = r ? r : 1;
    int64_t na = ir_numel(&n->in[1]->shape);
    const char *i = v[CGEN_RS_I], *mask = v[CGEN_RS_MASK], *ind = v[CGEN_RS_IND], *ok = v[CGEN_RS_OK], *axes = v[CGEN_RS_AXES], *a = v[CGEN_RS_A];
    const char *kd = v[CGEN_RS_KD], *ks = v[CGEN_RS_KS], *rd = v[CGEN_RS_RD], *rs = v[CGEN_RS_RS], *nk = v[CGEN_RS_NK], *nr = v[CGEN_RS_NR];
    const char *st = v[CGEN_RS_ST], *oo = v[CGEN_RS_O], *e = v[CGEN_RS_E], *j = v[CGEN_RS_J];
    emit_i64_array(w, ind, xs->dims, r);
    w_line(w, "int %s[%d] = {0}, %s = 1;", mask, rr, ok);
    if (keep) w_line(w, "int64_t %s;", i);
    else w_line(w, "int64_t %s, %s[%d], %s = 0;", i, v[CGEN_RS_KEPT], rr, v[CGEN_RS_NKEPT]);
    o->read(o->ctx, n, 1, axes, i);
    w_line(w, "for (%s = 0; %s < %lld; %s++) {", i, i, (long long)na, i);
    w->indent++;
    w_line(w, "int64_t %s = %s[%s] < 0 ? %s[%s] + %d : %s[%s];", a, axes, i, axes, i, r, axes, i);
    w_line(w, "if (%s < 0 || %s >= %d || %s[%s]) %s = 0; /* an axis out of range or repeated */", a, a, r, mask, a, ok);
    w_line(w, "else %s[%s] = 1;", mask, a);
    w->indent--;
    w_line(w, "}");
    if (!keep) {
        w_line(w, "for (%s = 0; %s < %d; %s++)", i, i, r, i);
        w_line(w, "    if (!%s[%s]) %s[%s++] = %s[%s];", mask, i, v[CGEN_RS_KEPT], v[CGEN_RS_NKEPT], ind, i);
    }
    for (int k = 0; k < y->shape.rank; k++) {
        if (!y->shape.sym[k]) continue;
        if (keep) snprintf(ex, sizeof ex, "%s ? (%s[%d] ? 1 : %lld) : -1", ok, mask, k, (long long)xs->dims[k]);
        else snprintf(ex, sizeof ex, "%s ? %s[%d] : -1", ok, v[CGEN_RS_KEPT], k);
        o->set_dim(o->ctx, y, k, ex);
    }
    if (ir_numel(&y->shape) == 0) {
        w_line(w, "/* empty output */");
        return 0;
    }
    /* the kept and reduced axes' extents and input strides, innermost first */
    w_line(w, "if (%s) {", ok);
    w->indent++;
    w_line(w, "int64_t %s[%d], %s[%d], %s[%d], %s[%d], %s = 0, %s = 0, %s = 1, %s = 1, %s = 1, %s, %s, %s;", kd, rr, ks, rr, rd,
           rr, rs, rr, nk, nr, st, v[CGEN_RS_NOUT], v[CGEN_RS_NRED], oo, e, j);
    w_line(w, "for (%s = %d; %s >= 0; %s--) {", i, r - 1, i, i);
    w->indent++;
    w_line(w, "if (%s[%s]) {", mask, i);
    w_line(w, "    %s[%s] = %s[%s];", rd, nr, ind, i);
    w_line(w, "    %s[%s++] = %s;", rs, nr, st);
    w_line(w, "    %s *= %s[%s];", v[CGEN_RS_NRED], ind, i);
    w_line(w, "} else {");
    w_line(w, "    %s[%s] = %s[%s];", kd, nk, ind, i);
    w_line(w, "    %s[%s++] = %s;", ks, nk, st);
    w_line(w, "    %s *= %s[%s];", v[CGEN_RS_NOUT], ind, i);
    w_line(w, "}");
    w_line(w, "%s *= %s[%s];", st, ind, i);
    w->indent--;
    w_line(w, "}");
    return 1;
}

/* ---- MaxUnpool ------------------------------------------------------------ */

void cgen_write_maxunpool_dims(const CgenDims *o, const Node *n, const char *os)
{
    const Value *X = n->in[0], *Y = n->out[0];
    w_line(o->w, "if (%s[0] != %lld || %s[1] != %lld) return %s;", os, (long long)X->shape.dims[0], os, (long long)X->shape.dims[1],
           o->err);
    for (int a = 2; a < Y->shape.rank; a++) {
        char e[300];
        snprintf(e, sizeof e, "%s[%d]", os, a);
        o->set_dim(o->ctx, Y, a, e);
    }
}

/* ---- Tile, Expand, Pad: one output dim from the operand values ---------------- */

const char *cgen_tile_dim_expr(const Node *n, int k, const char *rep, char *buf, size_t cap)
{
    char xd[64];
    snprintf(buf, cap, "%s * (int64_t)%s[%d]", cgen_dim_str(&n->in[0]->shape, k, xd, sizeof xd), rep, k);
    return buf;
}

const char *cgen_expand_dim_expr(const Node *n, int k, const char *req, char *buf, size_t cap)
{
    const Shape *xs = &n->in[0]->shape;
    const int R = n->out[0]->shape.rank, r = xs->rank, kq = (int)ir_numel(&n->in[1]->shape);
    const int j = k - (R - r), q = k - (R - kq);
    char xd[64], rq[1200];
    if (q < 0) snprintf(rq, sizeof rq, "INT64_C(1)");
    else snprintf(rq, sizeof rq, "(int64_t)%s[%d]", req, q);
    if (j < 0) snprintf(xd, sizeof xd, "1");
    else cgen_dim_str(xs, j, xd, sizeof xd);
    if (j < 0 || (!xs->sym[j] && xs->dims[j] == 1)) snprintf(buf, cap, "%s", rq);
    else if (q < 0) snprintf(buf, cap, "%s", xd);
    else if (!xs->sym[j]) snprintf(buf, cap, "%s == 1 || %s == %s ? %s : -1", rq, rq, xd, xd);
    else snprintf(buf, cap, "%s == 1 ? %s : (%s == 1 || %s == %s) ? %s : -1", xd, rq, rq, rq, xd, xd);
    return buf;
}

int cgen_pad_mode(const Node *n)
{
    const char *ms = n->attrs[PAD_MODE].s;
    return strcmp(ms, "reflect") == 0 ? 1 : strcmp(ms, "edge") == 0 ? 2 : 0;
}

const char *cgen_pad_dim_expr(const Node *n, int k, const char *pads, char *buf, size_t cap)
{
    const Shape *xs = &n->in[0]->shape;
    const int r = xs->rank, mode = cgen_pad_mode(n);
    char xd[64], bad[4400] = "";
    cgen_dim_str(xs, k, xd, sizeof xd);
    /* a pad that cuts more than the axis holds, or reflect/edge padding an
     * empty axis, is an error (-1) */
    if (mode != 0 && (xs->sym[k] || xs->dims[k] == 0))
        snprintf(bad, sizeof bad, " || (%s == 0 && ((int64_t)%s[%d] > 0 || (int64_t)%s[%d] > 0))", xd, pads, k, pads, r + k);
    snprintf(buf, cap, "(int64_t)%s[%d] < -(%s) || (int64_t)%s[%d] < -(%s)%s ? -1 : %s + (int64_t)%s[%d] + (int64_t)%s[%d]", pads, k,
             xd, pads, r + k, xd, bad, xd, pads, k, pads, r + k);
    return buf;
}
