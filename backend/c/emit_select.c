/* emit_select.c — C emitters of the data-dependent selections (NonZero,
 * Unique, NonMaxSuppression; ir/ops/select.c), of Compress with a
 * runtime condition and of IfSelect (an If's output picked at run time).
 *
 * Each kernel counts what it selects, sets that count as the output's
 * data-dependent dim (cgen_set_dim: `dim[j] = count;` checked against the
 * bound the memory was planned for), and writes its outputs dense at that
 * extent, so strides along the counted dim are the runtime count. Runtime
 * input dims (NonZero's X, NonMaxSuppression's box count) are read from the
 * shape table (cgen_dim_str), scratch is planned at their bounds, and every
 * other size is a literal (Unique refuses runtime inputs). When shape
 * inference found the count at compile time (constant inputs), the output
 * dim is static and the same kernel runs without setting a dim.
 *
 * The selections follow the reference evaluations step for step: values
 * compare as doubles, Unique's slices lexicographically in row-major order
 * (first occurrences found by a quadratic scan, then an insertion sort when
 * sorted), NonMaxSuppression's candidates by descending score with ties
 * taken in index order, a box suppressed when its IoU with a kept one
 * exceeds the threshold. Scratch (positions, orders) lives in the node's
 * workspace.
 *
 * The text is written through a CgenDims (cgen.h): the C backend's over its
 * arena, and the CUDA backend's over host copies of the node's tensors
 * (backend/cuda/cuda_select.c), so both run the same statements.
 */
#include "cgen.h"
#include "emit_common.h"
#include "../../ir/ops/index_attrs.h"
#include "../../ir/ops/select_attrs.h"

#include <stdio.h>
#include <string.h>

/* Sets dim k of v to the C expression `expr` when it is data-dependent. */
static void set_data_dim(const CgenDims *o, const Value *v, int k, const char *expr)
{
    if (v->shape.sym[k] != 0) o->set_dim(o->ctx, v, k, expr);
}

/* "(double)LOAD" of element idx of v into w. */
static void load_f64(Writer *w, const Value *v, const char *ptr, const char *idx)
{
    w_printf(w, "(double)");
    cgen_load(w, v->dtype, ptr, idx);
}

/* ---- NonZero ------------------------------------------------------------------ */

void cgen_write_nonzero(const CgenDims *o, const Node *n)
{
    Writer *w = o->w;
    const Value *x = n->in[0], *y = n->out[0];
    const Shape *xs = &x->shape;
    CgenProd tp = cgen_dims_prod(xs, 0, xs->rank);
    char bx[EMIT_EXPR_CAP], by[EMIT_EXPR_CAP], total[160], dk[64];
    cgen_prod_str(&tp, total, sizeof total); /* runtime dims of X: read from the shape table */
    o->ptr(o->ctx, x, bx);
    o->ptr(o->ctx, y, by);
    w_line(w, "{");
    w->indent++;
    w_line(w, "int64_t cnt = 0, e, j = 0;");
    w_printf(w, "for (e = 0; e < %s; e++) cnt += ", total);
    cgen_load(w, x->dtype, bx, "e");
    w_printf(w, " != 0;\n");
    set_data_dim(o, y, 1, "cnt");
    w_line(w, "for (e = 0; e < %s; e++) {", total);
    w->indent++;
    w_line(w, "int64_t r = e;");
    w_printf(w, "if (");
    cgen_load(w, x->dtype, bx, "e");
    w_printf(w, " == 0) continue;\n");
    for (int k = xs->rank - 1; k > 0; k--) {
        cgen_dim_str(xs, k, dk, sizeof dk);
        w_line(w, "%s[%d * cnt + j] = r %% %s;", by, k, dk);
        w_line(w, "r /= %s;", dk);
    }
    w_line(w, "%s[j] = r;", by);
    w_line(w, "j++;");
    w->indent--;
    w_line(w, "}");
    w->indent--;
    w_line(w, "}");
}

/* ---- Compress with a runtime condition -------------------------------------- */

void cgen_write_compress(const CgenDims *o, const Node *n)
{
    Writer *w = o->w;
    const Value *x = n->in[0], *cond = n->in[1], *y = n->out[0];
    const Shape *xs = &x->shape;
    const AttrVal *axis = &n->attrs[COMPRESS_AXIS];
    int64_t outer = 1, dim = ir_numel(xs), inner = 1, len = cond->shape.dims[0];
    int ax = 0;
    if (axis->set) {
        ax = ir_norm_axis(axis->i, xs->rank);
        outer = emit_dims_prod(xs, 0, ax);
        dim = xs->dims[ax];
        inner = emit_dims_prod(xs, ax + 1, xs->rank);
    }
    char bx[EMIT_EXPR_CAP], by[EMIT_EXPR_CAP], bc[EMIT_EXPR_CAP];
    o->ptr(o->ctx, x, bx);
    o->ptr(o->ctx, y, by);
    o->ptr(o->ctx, cond, bc);
    w_line(w, "{");
    w->indent++;
    w_line(w, "int64_t kept = 0, o, i, j;");
    w_line(w, "for (i = 0; i < %lld; i++) kept += %s[i] != 0;", (long long)len, bc);
    set_data_dim(o, y, ax, "kept");
    w_line(w, "for (o = 0; o < %lld; o++)", (long long)outer);
    w->indent++;
    w_line(w, "for (i = 0, j = 0; i < %lld; i++)", (long long)len);
    w->indent++;
    w_line(w, "if (%s[i] != 0) memcpy(%s + (o * kept + j++) * %lld, %s + (o * %lld + i) * %lld, %lld);", bc, by, (long long)inner, bx,
           (long long)dim, (long long)inner, (long long)(inner * (int64_t)ir_dtype_size(x->dtype)));
    w->indent -= 2;
    w->indent--;
    w_line(w, "}");
}

/* ---- Unique ------------------------------------------------------------------- */

/* outer x dim x inner view of X for n's axis (no axis: 1 x numel x 1). */
static void unique_split(const Node *n, int64_t *outer, int64_t *dim, int64_t *inner, int *ax)
{
    const Shape *xs = &n->in[0]->shape;
    *outer = *inner = 1;
    *ax = 0;
    if (!n->attrs[UNIQUE_AXIS].set) {
        *dim = ir_numel(xs);
        return;
    }
    *ax = ir_norm_axis(n->attrs[UNIQUE_AXIS].i, xs->rank);
    *outer = emit_dims_prod(xs, 0, *ax);
    *dim = xs->dims[*ax];
    *inner = emit_dims_prod(xs, *ax + 1, xs->rank);
}

static size_t unique_workspace(const Node *n)
{
    int64_t outer, dim, inner;
    int ax;
    unique_split(n, &outer, &dim, &inner, &ax);
    return (size_t)dim * 3 * sizeof(int64_t);
}

/* Writes `cmp = -1/0/1` comparing slices A and B (C expressions) of x. */
static void unique_cmp(Writer *w, const Value *x, const char *bx, int64_t outer, int64_t dim, int64_t inner, const char *a, const char *b)
{
    char ia[128], ib[128];
    snprintf(ia, sizeof ia, "(o * %lld + %s) * %lld + i", (long long)dim, a, (long long)inner);
    snprintf(ib, sizeof ib, "(o * %lld + %s) * %lld + i", (long long)dim, b, (long long)inner);
    w_line(w, "cmp = 0;");
    w_line(w, "for (o = 0; o < %lld && !cmp; o++)", (long long)outer);
    w->indent++;
    w_line(w, "for (i = 0; i < %lld && !cmp; i++) {", (long long)inner);
    w->indent++;
    w_printf(w, "double va = ");
    load_f64(w, x, bx, ia);
    w_printf(w, ", vb = ");
    load_f64(w, x, bx, ib);
    w_printf(w, ";\n");
    w_line(w, "cmp = va < vb ? -1 : va > vb ? 1 : 0;");
    w->indent--;
    w_line(w, "}");
    w->indent--;
}

void cgen_write_unique(const CgenDims *o, const Node *n)
{
    Writer *w = o->w;
    const Value *x = n->in[0], *y = n->out[0];
    int64_t outer, dim, inner;
    int ax;
    unique_split(n, &outer, &dim, &inner, &ax);
    char bx[EMIT_EXPR_CAP], by[EMIT_EXPR_CAP], ws[EMIT_EXPR_CAP], bo[3][EMIT_EXPR_CAP];
    o->ptr(o->ctx, x, bx);
    o->ptr(o->ctx, y, by);
    for (int i = 1; i < n->n_out; i++) o->ptr(o->ctx, n->out[i], bo[i - 1]);
    snprintf(ws, sizeof ws, "%s", o->workspace(o->ctx, n));
    w_line(w, "{");
    w->indent++;
    w_line(w, "int64_t *first = (int64_t *)(void *)%s, *rep = first + %lld, *pos = rep + %lld;", ws, (long long)dim, (long long)dim);
    w_line(w, "int64_t u = 0, t, q, o, i;");
    w_line(w, "int cmp;");
    /* first occurrences */
    w_line(w, "for (t = 0; t < %lld; t++) {", (long long)dim);
    w->indent++;
    w_line(w, "rep[t] = t;");
    w_line(w, "for (q = 0; q < u && rep[t] == t; q++) {");
    w->indent++;
    unique_cmp(w, x, bx, outer, dim, inner, "first[q]", "t");
    w_line(w, "if (cmp == 0) rep[t] = first[q];");
    w->indent--;
    w_line(w, "}");
    w_line(w, "if (rep[t] == t) first[u++] = t;");
    w->indent--;
    w_line(w, "}");
    if (n->attrs[UNIQUE_SORTED].i != 0) {
        w_line(w, "for (q = 1; q < u; q++) {");
        w->indent++;
        w_line(w, "int64_t v = first[q], p = q;");
        w_line(w, "for (; p > 0; p--) {");
        w->indent++;
        unique_cmp(w, x, bx, outer, dim, inner, "first[p - 1]", "v");
        w_line(w, "if (cmp <= 0) break;");
        w_line(w, "first[p] = first[p - 1];");
        w->indent--;
        w_line(w, "}");
        w_line(w, "first[p] = v;");
        w->indent--;
        w_line(w, "}");
    }
    set_data_dim(o, y, ax, "u");
    if (n->n_out > 1) set_data_dim(o, n->out[1], 0, "u");
    if (n->n_out > 3) set_data_dim(o, n->out[3], 0, "u");
    w_line(w, "for (q = 0; q < u; q++) {");
    w->indent++;
    w_line(w, "pos[first[q]] = q;");
    w_line(w, "for (o = 0; o < %lld; o++) memcpy(%s + (o * u + q) * %lld, %s + (o * %lld + first[q]) * %lld, %lld);", (long long)outer, by,
           (long long)inner, bx, (long long)dim, (long long)inner, (long long)(inner * (int64_t)ir_dtype_size(x->dtype)));
    if (n->n_out > 1) w_line(w, "%s[q] = first[q];", bo[0]);
    if (n->n_out > 3) w_line(w, "%s[q] = 0;", bo[2]);
    w->indent--;
    w_line(w, "}");
    if (n->n_out > 2) {
        w_line(w, "for (t = 0; t < %lld; t++) {", (long long)dim);
        w->indent++;
        w_line(w, "%s[t] = pos[rep[t]];", bo[1]);
        if (n->n_out > 3) w_line(w, "%s[pos[rep[t]]]++;", bo[2]);
        w->indent--;
        w_line(w, "}");
    } else if (n->n_out > 3) {
        w_line(w, "for (t = 0; t < %lld; t++) %s[pos[rep[t]]]++;", (long long)dim, bo[2]);
    }
    w->indent--;
    w_line(w, "}");
}

/* ---- NonMaxSuppression -------------------------------------------------------- */

static size_t nms_workspace(const Node *n) { return (size_t)n->in[0]->shape.dims[1] * 2 * sizeof(int64_t); }

/* Writes the corners (y0, x0, y1, x1 with suffix s) of box `idx` of batch b. */
static void nms_corners(Writer *w, const char *bb, const char *nb, const char *idx, const char *s, int center)
{
    w_line(w, "p = %s + (b * %s + %s) * 4;", bb, nb, idx);
    if (center) {
        w_line(w, "y0%s = (double)p[1] - (double)p[3] / 2.0;", s);
        w_line(w, "y1%s = (double)p[1] + (double)p[3] / 2.0;", s);
        w_line(w, "x0%s = (double)p[0] - (double)p[2] / 2.0;", s);
        w_line(w, "x1%s = (double)p[0] + (double)p[2] / 2.0;", s);
    } else {
        w_line(w, "y0%s = p[0] < p[2] ? (double)p[0] : (double)p[2];", s);
        w_line(w, "y1%s = p[0] < p[2] ? (double)p[2] : (double)p[0];", s);
        w_line(w, "x0%s = p[1] < p[3] ? (double)p[1] : (double)p[3];", s);
        w_line(w, "x1%s = p[1] < p[3] ? (double)p[3] : (double)p[1];", s);
    }
}

void cgen_write_nms(const CgenDims *o, const Node *n)
{
    Writer *w = o->w;
    const Value *bv = n->in[0], *sv = n->in[1], *y = n->out[0];
    long long nbat = (long long)bv->shape.dims[0], nbmax = (long long)bv->shape.dims[1], ncl = (long long)sv->shape.dims[1];
    int center = n->attrs[NMS_CENTER_POINT_BOX].i != 0, has_score = ir_has_input(n, 4);
    const char *ct = cgen_ctype(bv->dtype);
    char bb[EMIT_EXPR_CAP], bs[EMIT_EXPR_CAP], by[EMIT_EXPR_CAP], ws[EMIT_EXPR_CAP], bt[EMIT_EXPR_CAP], idx[128], nb[64], nb2[64];
    /* the box count: a runtime one is read from the shape table (the
     * workspace is planned at its bound) */
    cgen_dim_str(&bv->shape, 1, nb, sizeof nb);
    cgen_dim_str(&sv->shape, 2, nb2, sizeof nb2);
    if (strcmp(nb, nb2) != 0) /* two runtime counts that only the run can compare (nms_infer_sym) */
        w_line(w, "if (%s != %s) return %s;", nb, nb2, o->err);
    o->ptr(o->ctx, bv, bb);
    o->ptr(o->ctx, sv, bs);
    o->ptr(o->ctx, y, by);
    snprintf(ws, sizeof ws, "%s", o->workspace(o->ctx, n));
    w_line(w, "{");
    w->indent++;
    w_line(w, "int64_t *ord = (int64_t *)(void *)%s, *sel = ord + %lld;", ws, nbmax);
    w_line(w, "int64_t cnt = 0, b, k, t, q, m, ns, mo = 0;");
    w_line(w, "double thr = 0.0;");
    if (ir_has_input(n, 2)) w_line(w, "mo = (int64_t)%s[0];", o->ptr(o->ctx, n->in[2], bt));
    if (ir_has_input(n, 3)) {
        w_printf(w, "thr = ");
        load_f64(w, n->in[3], o->ptr(o->ctx, n->in[3], bt), "0");
        w_printf(w, ";\n");
    }
    if (has_score) {
        w_printf(w, "double sth = ");
        load_f64(w, n->in[4], o->ptr(o->ctx, n->in[4], bt), "0");
        w_printf(w, ";\n");
    }
    w_line(w, "for (b = 0; b < %lld && mo > 0; b++)", nbat);
    w->indent++;
    w_line(w, "for (k = 0; k < %lld; k++) {", ncl);
    w->indent++;
    w_line(w, "const %s *sc = %s + (b * %lld + k) * %s;", cgen_ctype(sv->dtype), bs, ncl, nb);
    w_line(w, "m = 0;");
    w_line(w, "ns = 0;");
    if (has_score) w_line(w, "for (t = 0; t < %s; t++) if ((double)sc[t] > sth) ord[m++] = t;", nb);
    else w_line(w, "for (t = 0; t < %s; t++) ord[m++] = t;", nb);
    w_line(w, "for (q = 1; q < m; q++) {");
    w->indent++;
    w_line(w, "int64_t v = ord[q], p = q;");
    w_line(w, "for (; p > 0 && sc[ord[p - 1]] < sc[v]; p--) ord[p] = ord[p - 1];");
    w_line(w, "ord[p] = v;");
    w->indent--;
    w_line(w, "}");
    w_line(w, "for (t = 0; t < m && ns < mo; t++) {");
    w->indent++;
    w_line(w, "int keep = 1;");
    w_line(w, "for (q = 0; q < ns && keep; q++) {");
    w->indent++;
    w_line(w, "const %s *p;", ct);
    w_line(w, "double y0a, x0a, y1a, x1a, y0b, x0b, y1b, x1b, ih, iw, inter, aa, ab, un;");
    nms_corners(w, bb, nb, "ord[t]", "a", center);
    nms_corners(w, bb, nb, "sel[q]", "b", center);
    w_line(w, "ih = (y1a < y1b ? y1a : y1b) - (y0a > y0b ? y0a : y0b);");
    w_line(w, "iw = (x1a < x1b ? x1a : x1b) - (x0a > x0b ? x0a : x0b);");
    w_line(w, "if (ih <= 0.0 || iw <= 0.0) continue;");
    w_line(w, "inter = ih * iw;");
    w_line(w, "aa = (y1a - y0a) * (x1a - x0a);");
    w_line(w, "ab = (y1b - y0b) * (x1b - x0b);");
    w_line(w, "un = aa + ab - inter;");
    w_line(w, "if (aa <= 0.0 || ab <= 0.0 || un <= 0.0) continue;");
    w_line(w, "if (inter / un > thr) keep = 0;");
    w->indent--;
    w_line(w, "}");
    w_line(w, "if (!keep) continue;");
    w_line(w, "sel[ns++] = ord[t];");
    snprintf(idx, sizeof idx, "cnt * 3");
    w_line(w, "%s[%s] = b;", by, idx);
    w_line(w, "%s[%s + 1] = k;", by, idx);
    w_line(w, "%s[%s + 2] = ord[t];", by, idx);
    w_line(w, "cnt++;");
    w->indent--;
    w_line(w, "}");
    w->indent--;
    w_line(w, "}");
    w->indent--;
    set_data_dim(o, y, 0, "cnt");
    w->indent--;
    w_line(w, "}");
}

/* ---- IfSelect ------------------------------------------------------------------ */

/* The output becomes v: its data-dependent dims take v's extents, then v's
 * elements are copied. */
static void ifsel_take(Cgen *c, const Value *v, const Value *y, const char *by)
{
    Writer *w = cgen_w(c);
    char bv[EMIT_EXPR_CAP], e[64], p[160];
    for (int k = 0; k < y->shape.rank; k++)
        if (cgen_own_dim(cgen_graph(c), y, k)) cgen_set_dim(c, y, k, cgen_dim_str(&v->shape, k, e, sizeof e));
    CgenProd cnt = cgen_dims_prod(&v->shape, 0, v->shape.rank);
    if (cgen_prod_is(&cnt, 0)) return;
    emit_ptr_name(c, v, bv);
    w_line(w, "memcpy(%s, %s, (size_t)(%s) * %d);", by, bv, cgen_prod_str(&cnt, p, sizeof p), (int)ir_dtype_size(v->dtype));
}

static int emit_ifselect(Cgen *c, const Node *n, Diag *d)
{
    (void)d;
    Writer *w = cgen_w(c);
    const Value *cv = n->in[0], *y = n->out[0];
    char bc[EMIT_EXPR_CAP], by[EMIT_EXPR_CAP];
    emit_ptr_name(c, y, by);
    if (cv->kind == VK_CONST) {
        ifsel_take(c, ir_load_f64(cv->dtype, cv->data, 0) != 0.0 ? n->in[1] : n->in[2], y, by);
        return 0;
    }
    emit_ptr_name(c, cv, bc);
    w_printf(w, "if (");
    cgen_load(w, cv->dtype, bc, "0");
    w_printf(w, " != 0) {\n");
    w->indent++;
    ifsel_take(c, n->in[1], y, by);
    w->indent--;
    w_line(w, "} else {");
    w->indent++;
    ifsel_take(c, n->in[2], y, by);
    w->indent--;
    w_line(w, "}");
    return 0;
}

size_t cgen_select_workspace(const Node *n)
{
    return n->op == OP_Unique ? unique_workspace(n) : n->op == OP_NonMaxSuppression ? nms_workspace(n) : 0;
}

/* The C backend's emitters: the host text above over the arena. */
static int emit_select(Cgen *c, const Node *n, Diag *d)
{
    (void)d;
    if (emit_empty_out(c, n)) return 0;
    CgenDims o = cgen_dims_ctx(c);
    if (n->op == OP_NonZero) cgen_write_nonzero(&o, n);
    else if (n->op == OP_Compress) cgen_write_compress(&o, n);
    else if (n->op == OP_Unique) cgen_write_unique(&o, n);
    else cgen_write_nms(&o, n);
    return 0;
}

int cgen_emit_compress_dyn(Cgen *c, const Node *n, Diag *d) { return emit_select(c, n, d); }

const CgenEntry cgen_select_entries[] = {
    {OP_NonZero, emit_select, 0, NULL, 1},
    {OP_Unique, emit_select, 0, unique_workspace, 1},
    {OP_NonMaxSuppression, emit_select, 0, nms_workspace, 1},
    {OP_IfSelect, emit_ifselect, 0, NULL, 1},
    {-1, NULL, 0, NULL, 0},
};
