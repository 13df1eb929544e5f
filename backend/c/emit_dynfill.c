/* emit_dynfill.c — C emitters for ops whose output extents are read from
 * an operand at run time (data-dependent dims, ir/ir.h's SYM_DATA): Range
 * (start, limit, delta), ConstantOfShape (shape), Tile (repeats), OneHot
 * (depth), Expand (shape), Pad (pads) and Resize/Upsample (scales or
 * sizes) when that operand is not a constant.
 *
 * Each emitter first computes the output extents from the operand values
 * exactly as the op's shape inference does for constants, and stores them
 * in the schedule's shape table with cgen_set_dim (which also checks them
 * against their bounds, --max-dim for the unbounded ones); then the kernel
 * runs at those extents: loop bounds and the dims tables passed to the
 * runtime kernels (gcrt_fill, gcrt_tile, gcrt_pad, gcrt_strided_copy,
 * gcrt_resize) are C expressions over dim[]. Memory is planned at the
 * bounds, so pointers stay the static ones. Resize computes its tap tables
 * at run time (gcrt_resize_taps_*, the runtime unit `resize`, which only
 * such models include) into the node's workspace, where the static path
 * writes them as constant arrays.
 *
 * The families' own emitters call these for a node with symbolic dims; the
 * static code they write is untouched.
 */
#include "emit_dynfill.h"
#include "emit_common.h"
#include "../../ir/ops/index_attrs.h"
#include "../../ir/ops/shape_attrs.h"
#include "../../ir/ops/vision_attrs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Element count of dims [from, to) of s as a C expression. */
static const char *prod_str(const Shape *s, int from, int to, char *buf, size_t cap)
{
    CgenProd p = cgen_dims_prod(s, from, to);
    return cgen_prod_str(&p, buf, cap);
}

/* The operand that decides a shape must be a tensor of static extent (its
 * element count fixes how many values to read). */
static int need_static_operand(const Node *n, int i, Diag *d)
{
    const Value *v = n->in[i];
    if (v && ir_shape_has_sym(&v->shape))
        return diag_node_error(d, n, "input '%s' must have a static shape to be read at run time", ir_op(n->op)->in_names[i]);
    return 0;
}

/* ---- Range ------------------------------------------------------------------ */

/* count = max(ceil((limit - start) / delta), 0), in float for f32 inputs
 * (as the reference computes it); y[i] = start + i * delta. */
int emit_dyn_range(Cgen *c, const Node *n, Diag *d)
{
    (void)d;
    Writer *w = cgen_w(c);
    const Value *y = n->out[0];
    DType t = n->in[0]->dtype;
    char ps[EMIT_EXPR_CAP], pl[EMIT_EXPR_CAP], pd[EMIT_EXPR_CAP], py[EMIT_EXPR_CAP], len[64], val[3 * EMIT_EXPR_CAP];
    emit_ptr_name(c, n->in[0], ps);
    emit_ptr_name(c, n->in[1], pl);
    emit_ptr_name(c, n->in[2], pd);
    emit_ptr_name(c, y, py);
    const char *cnt = cgen_tmp(c, "count"), *i = cgen_tmp(c, "i");
    w_line(w, "{");
    w->indent++;
    if (t == DT_F32) w_line(w, "double %s = ceil((double)((%s[0] - %s[0]) / %s[0]));", cnt, pl, ps, pd);
    else w_line(w, "double %s = ceil(((double)%s[0] - (double)%s[0]) / (double)%s[0]);", cnt, pl, ps, pd);
    char e[256];
    snprintf(e, sizeof e, "!(%s > 0) ? 0 : %s > 9.0e15 ? INT64_C(9000000000000000) : (int64_t)%s", cnt, cnt, cnt);
    cgen_set_dim(c, y, 0, e);
    cgen_dim_str(&y->shape, 0, len, sizeof len);
    w_line(w, "int64_t %s;", i);
    w_line(w, "for (%s = 0; %s < %s; %s++)", i, i, len, i);
    w->indent++;
    snprintf(val, sizeof val, "(%s)((double)%s[0] + (double)%s * (double)%s[0])", cgen_ctype(cgen_compute_type(t)), ps, i, pd);
    cgen_store(w, t, py, i, val);
    w->indent -= 2;
    w_line(w, "}");
    return 0;
}

/* ---- ConstantOfShape ---------------------------------------------------------- */

int emit_dyn_constant_of_shape(Cgen *c, const Node *n, Diag *d)
{
    if (need_static_operand(n, 0, d)) return -1;
    Writer *w = cgen_w(c);
    const Value *y = n->out[0];
    char px[EMIT_EXPR_CAP], py[EMIT_EXPR_CAP], e[EMIT_EXPR_CAP + 32], cnt[160];
    emit_ptr_name(c, n->in[0], px);
    for (int k = 0; k < y->shape.rank; k++) {
        if (!cgen_own_dim(cgen_graph(c), y, k)) continue;
        snprintf(e, sizeof e, "(int64_t)%s[%d]", px, k);
        cgen_set_dim(c, y, k, e);
    }
    size_t es = ir_dtype_size(y->dtype);
    unsigned char elem[16] = {0};
    const AttrVal *a = &n->attrs[CONSTANT_OF_SHAPE_VALUE];
    if (a->set && a->t.dtype == y->dtype && a->t.nbytes == es) memcpy(elem, a->t.data, es);
    else ir_store_f64(y->dtype, elem, 0, a->set ? ir_load_f64(a->t.dtype, a->t.data, 0) : 0.0);
    const char *name = cgen_tmp(c, "fill_value");
    w_line(w, "{");
    w->indent++;
    w_printf(w, "static const unsigned char %s[%zu] = {", name, es);
    for (size_t i = 0; i < es; i++) w_printf(w, "%s%u", i ? ", " : "", elem[i]);
    w_puts(w, "};\n");
    w_line(w, "gcrt_fill(%s, %s, %zu, %s);", emit_ptr_name(c, y, py), name, es, prod_str(&y->shape, 0, y->shape.rank, cnt, sizeof cnt));
    w->indent--;
    w_line(w, "}");
    return 0;
}

/* ---- Tile ------------------------------------------------------------------- */

int emit_dyn_tile(Cgen *c, const Node *n, Diag *d)
{
    if (need_static_operand(n, 1, d)) return -1;
    Writer *w = cgen_w(c);
    const Value *x = n->in[0], *y = n->out[0];
    int r = x->shape.rank;
    char bx[EMIT_EXPR_CAP], by[EMIT_EXPR_CAP], br[EMIT_EXPR_CAP], e[2 * EMIT_EXPR_CAP];
    emit_ptr_name(c, x, bx);
    emit_ptr_name(c, y, by);
    emit_ptr_name(c, n->in[1], br);
    for (int k = 0; k < r; k++)
        if (cgen_own_dim(cgen_graph(c), y, k)) cgen_set_dim(c, y, k, cgen_tile_dim_expr(n, k, br, e, sizeof e));
    if (r == 0) {
        w_line(w, "memcpy(%s, %s, %zu);", by, bx, ir_dtype_size(x->dtype));
        return 0;
    }
    char ni[64], no[64];
    snprintf(ni, sizeof ni, "%s", cgen_tmp(c, "in_dims"));
    snprintf(no, sizeof no, "%s", cgen_tmp(c, "out_dims"));
    w_line(w, "{");
    w->indent++;
    cgen_dims_table(w, ni, &x->shape);
    cgen_dims_table(w, no, &y->shape);
    w_line(w, "gcrt_tile(%s, %s, %zu, %d, %s, %s);", by, bx, ir_dtype_size(x->dtype), r, ni, no);
    w->indent--;
    w_line(w, "}");
    return 0;
}

/* ---- OneHot ----------------------------------------------------------------- */

/* The static kernel (emit_index.c) with depth read from the input. */
int emit_dyn_onehot(Cgen *c, const Node *n, Diag *d)
{
    (void)d;
    Writer *w = cgen_w(c);
    const Value *ind = n->in[0], *vals = n->in[2], *y = n->out[0];
    const Shape *os = &y->shape;
    int ax = ir_norm_axis(n->attrs[ONEHOT_AXIS].i, os->rank);
    char bi[EMIT_EXPR_CAP], bv[EMIT_EXPR_CAP], by[EMIT_EXPR_CAP], bd[EMIT_EXPR_CAP], e[EMIT_EXPR_CAP + 32];
    char dep[64], outer[128], inner[128], total[160], idx[160];
    emit_ptr_name(c, n->in[1], bd);
    if (cgen_own_dim(cgen_graph(c), y, ax)) {
        snprintf(e, sizeof e, "(int64_t)%s[0]", bd);
        cgen_set_dim(c, y, ax, e);
    }
    cgen_dim_str(os, ax, dep, sizeof dep);
    prod_str(os, 0, ax, outer, sizeof outer);
    prod_str(os, ax + 1, os->rank, inner, sizeof inner);
    prod_str(os, 0, os->rank, total, sizeof total);
    emit_ptr_name(c, vals, bv);
    emit_ptr_name(c, y, by);
    emit_ptr_name(c, ind, bi);
    w_line(w, "for (int64_t e = 0; e < %s; e++) %s[e] = %s[0];", total, by, bv);
    snprintf(idx, sizeof idx, "o * (%s) + i", inner);
    w_line(w, "for (int64_t o = 0; o < %s; o++)", outer);
    w->indent++;
    w_line(w, "for (int64_t i = 0; i < %s; i++) {", inner);
    w->indent++;
    if (ir_dtype_is_float(ind->dtype)) {
        w_printf(w, "double v = (double)");
        cgen_load(w, ind->dtype, bi, idx);
        w_printf(w, ";\n");
        w_line(w, "int64_t k;");
        w_line(w, "if (!(v > (double)(-(%s) - 1) && v < (double)(%s))) continue;", dep, dep);
        w_line(w, "k = (int64_t)v;");
    } else {
        w_line(w, "int64_t k = (int64_t)%s[%s];", bi, idx);
    }
    w_line(w, "if (k < 0) k += %s;", dep);
    w_line(w, "if (k >= 0 && k < %s) %s[(o * (%s) + k) * (%s) + i] = %s[1];", dep, by, dep, inner, bv);
    w->indent--;
    w_line(w, "}");
    w->indent--;
    return 0;
}

/* ---- Expand ----------------------------------------------------------------- */

/* Output dim k: the input's when it is not 1 (the requested value must then
 * be 1 or equal), else the requested one; a mismatch gives -1, which the
 * bounds check of cgen_set_dim turns into NAME_ERR_SHAPE. */
int emit_dyn_expand(Cgen *c, const Node *n, Diag *d)
{
    if (need_static_operand(n, 1, d)) return -1;
    Writer *w = cgen_w(c);
    const Value *x = n->in[0], *y = n->out[0];
    const Shape *xs = &x->shape, *os = &y->shape;
    int R = os->rank, r = xs->rank;
    char bx[EMIT_EXPR_CAP], by[EMIT_EXPR_CAP], bs[EMIT_EXPR_CAP], e[8 * EMIT_EXPR_CAP], xd[64];
    emit_ptr_name(c, x, bx);
    emit_ptr_name(c, y, by);
    emit_ptr_name(c, n->in[1], bs);
    for (int k = 0; k < R; k++)
        if (cgen_own_dim(cgen_graph(c), y, k)) cgen_set_dim(c, y, k, cgen_expand_dim_expr(n, k, bs, e, sizeof e));
    if (R == 0) {
        w_line(w, "memcpy(%s, %s, %zu);", by, bx, ir_dtype_size(x->dtype));
        return 0;
    }
    /* the box copy: source strides 0 on broadcast axes (input dim 1) */
    char nd[64], nds[64], nss[64], b[128];
    snprintf(nd, sizeof nd, "%s", cgen_tmp(c, "dims"));
    snprintf(nds, sizeof nds, "%s", cgen_tmp(c, "dst_st"));
    snprintf(nss, sizeof nss, "%s", cgen_tmp(c, "src_st"));
    w_line(w, "{");
    w->indent++;
    cgen_dims_table(w, nd, os);
    w_printf(w, "const int64_t %s[%d] = {", nds, R);
    for (int k = 0; k < R; k++) w_printf(w, "%s%s", k ? ", " : "", prod_str(os, k + 1, R, b, sizeof b));
    w_puts(w, "};\n");
    w_printf(w, "const int64_t %s[%d] = {", nss, R);
    for (int k = 0; k < R; k++) {
        int j = k - (R - r);
        if (j < 0 || (!xs->sym[j] && xs->dims[j] == 1)) w_printf(w, "%s0", k ? ", " : "");
        else if (!xs->sym[j]) w_printf(w, "%s%s", k ? ", " : "", prod_str(xs, j + 1, r, b, sizeof b));
        else w_printf(w, "%s%s == 1 ? 0 : %s", k ? ", " : "", cgen_dim_str(xs, j, xd, sizeof xd), prod_str(xs, j + 1, r, b, sizeof b));
    }
    w_puts(w, "};\n");
    w_line(w, "gcrt_strided_copy(%s, %s, %s, %s, %s, %d, %zu);", by, nds, bx, nss, nd, R, ir_dtype_size(x->dtype));
    w->indent--;
    w_line(w, "}");
    return 0;
}

/* ---- Pad -------------------------------------------------------------------- */

/* Output dim k = input dim + begin + end, from the pads read at run time. */
int emit_dyn_pad(Cgen *c, const Node *n, Diag *d)
{
    if (need_static_operand(n, 1, d)) return -1;
    Writer *w = cgen_w(c);
    const Value *x = n->in[0], *y = n->out[0];
    int r = x->shape.rank;
    int mode = cgen_pad_mode(n);
    char bx[EMIT_EXPR_CAP], by[EMIT_EXPR_CAP], bc[EMIT_EXPR_CAP], bp[EMIT_EXPR_CAP], e[16 * EMIT_EXPR_CAP];
    emit_ptr_name(c, x, bx);
    emit_ptr_name(c, y, by);
    emit_ptr_name(c, n->in[1], bp);
    if (n->n_in > 2 && n->in[2]) emit_ptr_name(c, n->in[2], bc);
    else snprintf(bc, sizeof bc, "(const void *)0");
    for (int k = 0; k < r; k++)
        if (cgen_own_dim(cgen_graph(c), y, k)) cgen_set_dim(c, y, k, cgen_pad_dim_expr(n, k, bp, e, sizeof e));
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
    cgen_dims_table(w, ni, &x->shape);
    cgen_dims_table(w, no, &y->shape);
    w_printf(w, "const int64_t %s[%d] = {", np, r);
    for (int k = 0; k < r; k++) w_printf(w, "%s(int64_t)%s[%d]", k ? ", " : "", bp, k);
    w_puts(w, "};\n");
    w_line(w, "gcrt_pad(%s, %s, %s, %zu, %d, %s, %s, %s, %d);", by, bx, bc, ir_dtype_size(x->dtype), r, ni, no, np, mode);
    w->indent--;
    w_line(w, "}");
    return 0;
}

/* ---- Resize / Upsample ---------------------------------------------------------- */

/* Index of s in names[0..count), 0 when absent (resize_plan checked it). */
static int pick(const char *s, const char *const *names, int count)
{
    for (int i = 0; i < count; i++)
        if (strcmp(s, names[i]) == 0) return i;
    return 0;
}

/* Input i of n when present, non-empty and not a constant. */
static const Value *runtime_in(const Node *n, int i)
{
    if (i >= n->n_in || !n->in[i] || n->in[i]->kind == VK_CONST || ir_numel(&n->in[i]->shape) == 0) return NULL;
    return n->in[i];
}

/* Input i of n when present and non-empty. */
static const Value *given_in(const Node *n, int i)
{
    if (i >= n->n_in || !n->in[i] || ir_numel(&n->in[i]->shape) == 0) return NULL;
    return n->in[i];
}

static int resize_tf_crop(const Node *n)
{
    return n->op == OP_Resize && strcmp(n->attrs[RESIZE_COORDINATE_TRANSFORMATION_MODE].s, "tf_crop_and_resize") == 0;
}

int emit_dyn_resize_needed(const Node *n)
{
    return cgen_node_has_sym(n) || (resize_tf_crop(n) && runtime_in(n, 1));
}

/* Taps per output index: 1 nearest, 2 linear, 4 cubic. */
static int resize_taps(const Node *n)
{
    static const int k[] = {1, 2, 4};
    static const char *const modes[] = {"nearest", "linear", "cubic"};
    return k[pick(n->attrs[n->op == OP_Resize ? RESIZE_MODE : UPSAMPLE_MODE].s, modes, 3)];
}

size_t emit_dyn_resize_workspace(const Node *n)
{
    if (!emit_dyn_resize_needed(n)) return 0;
    const Shape *os = &n->out[0]->shape;
    int64_t total = 0;
    for (int a = 0; a < os->rank; a++) total += os->dims[a] * resize_taps(n);
    return (size_t)total * (sizeof(int64_t) + ir_dtype_size(n->out[0]->dtype));
}

EmitResizeArgs emit_dyn_resize_args(const Node *n)
{
    static const char *const ctms[] = {"half_pixel", "asymmetric", "pytorch_half_pixel", "tf_crop_and_resize", "align_corners"};
    static const char *const nms[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
    static const char *const modes[] = {"nearest", "linear", "cubic"};
    const int up = n->op == OP_Upsample;
    EmitResizeArgs a;
    a.K = resize_taps(n);
    a.mode = pick(n->attrs[up ? UPSAMPLE_MODE : RESIZE_MODE].s, modes, 3);
    a.ctm = up ? 1 : pick(n->attrs[RESIZE_COORDINATE_TRANSFORMATION_MODE].s, ctms, 5);
    a.nearest = up ? 2 : pick(n->attrs[RESIZE_NEAREST_MODE].s, nms, 4);
    a.A = up ? -0.75 : n->attrs[RESIZE_CUBIC_COEFF_A].f;
    a.exclude = up ? 0 : n->attrs[RESIZE_EXCLUDE_OUTSIDE].i != 0;
    a.scales = up ? n->in[1] : given_in(n, 2);
    a.sizes = up ? NULL : given_in(n, 3);
    a.roi = given_in(n, 1);
    return a;
}

/* The extents from scales (floor(scale * in)) or sizes, set at run time when
 * they are the node's own; the scales, roi and tap tables are computed at
 * run time (gcrt_resize_taps_*) into the workspace, then gcrt_resize runs. */
int emit_dyn_resize(Cgen *c, const Node *n, Diag *d)
{
    const Value *X = n->in[0], *Y = n->out[0];
    const char *sfx = emit_kernel_suffix(n, Y->dtype, d);
    if (!sfx) return -1;
    if (ir_shape_has_sym(&X->shape))
        return diag_node_error(d, n, "the C backend resizes at run time only an input 'X' of static shape");
    Writer *w = cgen_w(c);
    const EmitResizeArgs ra = emit_dyn_resize_args(n);
    const int r = X->shape.rank, K = ra.K, mode = ra.mode, ctm = ra.ctm, nearest = ra.nearest, exclude = ra.exclude;
    const double A = ra.A;
    const Value *scales = ra.scales, *sizes = ra.sizes, *roi = ra.roi;
    char ps[EMIT_EXPR_CAP], pr[EMIT_EXPR_CAP], xd[64], e[4 * EMIT_EXPR_CAP], b[160], lit[64];
    const char *sc = cgen_tmp(c, "scale"), *ro = cgen_tmp(c, "roi"), *ni = cgen_tmp(c, "in_dims"), *no = cgen_tmp(c, "out_dims");
    const char *nk = cgen_tmp(c, "taps");
    char sc_s[64], ro_s[64], ni_s[64], no_s[64], nk_s[64];
    snprintf(sc_s, sizeof sc_s, "%s", sc);
    snprintf(ro_s, sizeof ro_s, "%s", ro);
    snprintf(ni_s, sizeof ni_s, "%s", ni);
    snprintf(no_s, sizeof no_s, "%s", no);
    snprintf(nk_s, sizeof nk_s, "%s", nk);
    emit_ptr_name(c, scales ? scales : sizes, ps);
    w_line(w, "{");
    w->indent++;
    cgen_dims_table(w, ni_s, &X->shape);
    w_line(w, "double %s[%d];", sc_s, r);
    for (int a = 0; a < r; a++) {
        snprintf(xd, sizeof xd, "%lld", (long long)X->shape.dims[a]);
        if (scales) {
            w_line(w, "%s[%d] = (double)%s[%d];", sc_s, a, ps, a);
            if (cgen_own_dim(cgen_graph(c), Y, a)) {
                snprintf(e, sizeof e, "%s[%d] > 0 && %s[%d] * %s.0 < 4.0e18 ? (int64_t)floor(%s[%d] * %s.0) : -1", sc_s, a, sc_s, a, xd,
                         sc_s, a, xd);
                cgen_set_dim(c, Y, a, e);
            }
        } else {
            if (cgen_own_dim(cgen_graph(c), Y, a)) {
                /* an empty axis cannot grow */
                if (X->shape.dims[a] == 0) snprintf(e, sizeof e, "%s[%d] > 0 ? -1 : (int64_t)%s[%d]", ps, a, ps, a);
                else snprintf(e, sizeof e, "(int64_t)%s[%d]", ps, a);
                cgen_set_dim(c, Y, a, e);
            }
            if (X->shape.dims[a] > 0) w_line(w, "%s[%d] = (double)(%s) / %s.0;", sc_s, a, cgen_dim_str(&Y->shape, a, b, sizeof b), xd);
            else w_line(w, "%s[%d] = 1.0;", sc_s, a);
        }
    }
    cgen_dims_table(w, no_s, &Y->shape);
    w_printf(w, "const double %s[%d] = {", ro_s, 2 * r);
    if (ctm == 3 && roi) {
        emit_ptr_name(c, roi, pr);
        for (int k = 0; k < 2 * r; k++) w_printf(w, "%s(double)%s[%d]", k ? ", " : "", pr, k);
    } else {
        for (int k = 0; k < 2 * r; k++) w_printf(w, "%s%s", k ? ", " : "", k < r ? "0.0" : "1.0");
    }
    w_puts(w, "};\n");
    w_printf(w, "const int64_t %s[%d] = {", nk_s, r);
    for (int a = 0; a < r; a++) w_printf(w, "%s%d", a ? ", " : "", K);
    w_puts(w, "};\n");
    int64_t total = 0;
    for (int a = 0; a < r; a++) total += Y->shape.dims[a] * K;
    cgen_use_runtime(c, CGEN_RT_resize);
    const char *ws = cgen_workspace(c, n);
    char pidx[EMIT_EXPR_CAP + 64], pw[EMIT_EXPR_CAP + 64];
    snprintf(pidx, sizeof pidx, "(int64_t *)(%s)", ws);
    snprintf(pw, sizeof pw, "(%s *)(%s + %lld)", cgen_ctype(Y->dtype), ws, (long long)total * (long long)sizeof(int64_t));
    w_line(w, "gcrt_resize_taps_%s(%d, %s, %s, %s, %s, %d, %d, %d, %.17g, %d, %s, %s, %s);", sfx, r, ni_s, no_s, sc_s, ro_s, mode, ctm,
           nearest, A, exclude, nk_s, pidx, pw);
    w_line(w, "gcrt_resize_%s(%d, %s, %s, %s, %s, %s, %s, %s, %s);", sfx, r, ni_s, no_s, nk_s, pidx, pw,
           emit_float_lit(lit, sizeof lit, ir_resize_extrapolation(n), Y->dtype), cgen_ptr(c, X), cgen_ptr(c, Y));
    w->indent--;
    w_line(w, "}");
    return 0;
}
