/* emit_dynindex.c — C emitters of the index family for nodes with runtime
 * dims (symbolic or data-dependent extents, ir/ir.h): GatherND,
 * GatherElements and ScatterElements on tensors whose extents are known
 * only at run time.
 *
 * The detectors (torchvision SSD, RetinaNet, Faster R-CNN) gather the
 * scores and boxes a NonZero selected, GatherND(data, Transpose(NonZero))
 * with an index count read at run time, and scatter the per-level RoiAlign
 * results back to their rows. Memory is planned at the bounds; the code
 * here reads the actual extents from the shape table (cgen_dim_str,
 * cgen_prod_str) for every loop count, the dims that indices are checked
 * against and the strides. The index checks are the static emitters'
 * (gcrt_nd_offset, gcrt_elements_offset): an index outside the actual
 * extent gathers 0 or is skipped by a scatter, so nothing is read or
 * written outside a tensor. The family's static emitters (emit_index.c)
 * call these only for a node with a runtime dim, so static models generate
 * what they always did.
 */
#include "emit_dynindex.h"
#include "emit_common.h"
#include "../../ir/ops/index_attrs.h"

#include <stdio.h>
#include <string.h>

/* Writes `const int64_t NAME[to - from] = {...};` with dims [from, to) of s
 * (runtime ones from the shape table), or with the row-major element
 * strides of s at those dims when strides is set. */
static void dims_range(Writer *w, const char *name, const Shape *s, int from, int to, int strides)
{
    Writer row;
    w_init(&row);
    char b[160];
    for (int k = from; k < to; k++) {
        CgenProd p = strides ? cgen_dims_prod(s, k + 1, s->rank) : cgen_dims_prod(s, k, k + 1);
        w_printf(&row, "%s%s", k > from ? ", " : "", cgen_prod_str(&p, b, sizeof b));
    }
    w_line(w, "const int64_t %s[%d] = {%s};", name, to > from ? to - from : 1, to > from ? row.buf : "0");
    w_free(&row);
}

int cgen_emit_gather_nd_dyn(Cgen *c, const Node *n, Diag *d)
{
    (void)d;
    Writer *w = cgen_w(c);
    const Value *x = n->in[0], *ind = n->in[1], *y = n->out[0];
    const Shape *xs = &x->shape, *is = &ind->shape;
    int b = (int)n->attrs[GATHER_ND_BATCH_DIMS].i, q = is->rank, m = (int)is->dims[q - 1];
    if (ir_numel(&y->shape) == 0) {
        w_line(w, "/* empty output */");
        return 0;
    }
    CgenProd slice = cgen_dims_prod(xs, b + m, xs->rank), bstride = cgen_dims_prod(xs, b, xs->rank);
    CgenProd per_batch = cgen_dims_prod(is, b, q - 1), tuples = cgen_dims_prod(is, 0, q - 1);
    char bx[EMIT_EXPR_CAP], bi[EMIT_EXPR_CAP], by[EMIT_EXPR_CAP], nd[64], ns[64], j[64], o[64], sl[64], src[64];
    char s1[160], s2[160], s3[160];
    snprintf(nd, sizeof nd, "%s", cgen_tmp(c, "nd_dims"));
    snprintf(ns, sizeof ns, "%s", cgen_tmp(c, "nd_strides"));
    snprintf(j, sizeof j, "%s", cgen_tmp(c, "j"));
    snprintf(o, sizeof o, "%s", cgen_tmp(c, "o"));
    snprintf(sl, sizeof sl, "%s", cgen_tmp(c, "slice"));
    snprintf(src, sizeof src, "%s", cgen_tmp(c, "src"));
    emit_ptr_name(c, x, bx);
    emit_ptr_name(c, ind, bi);
    emit_ptr_name(c, y, by);
    /* one tuple of m indices addresses data dims [b, b + m) at their actual extents */
    w_line(w, "{");
    w->indent++;
    dims_range(w, nd, xs, b, b + m, 0);
    dims_range(w, ns, xs, b, b + m, 1);
    w_line(w, "const int64_t %s = %s;", sl, cgen_prod_str(&slice, s1, sizeof s1));
    w_line(w, "int64_t %s;", j);
    w_line(w, "for (%s = 0; %s < %s; %s++) {", j, j, cgen_prod_str(&tuples, s2, sizeof s2), j);
    w->indent++;
    w_line(w, "int64_t %s = gcrt_nd_offset(%s, %d, %s, %d, %s, %s);", o, bi, ind->dtype == DT_I64, j, m, nd, ns);
    if (b > 0) /* the batch of tuple j: per_batch > 0 whenever a tuple exists */
        w_line(w, "int64_t %s = %s / (%s) * (%s) + %s;", src, j, cgen_prod_str(&per_batch, s2, sizeof s2),
               cgen_prod_str(&bstride, s3, sizeof s3), o);
    else
        w_line(w, "int64_t %s = %s;", src, o);
    w_line(w, "if (%s >= 0) memcpy(%s + %s * %s, %s + %s, (size_t)%s * %zu);", o, by, j, sl, bx, src, sl, ir_dtype_size(y->dtype));
    w_line(w, "else memset(%s + %s * %s, 0, (size_t)%s * %zu);", by, j, sl, sl, ir_dtype_size(y->dtype));
    w->indent--;
    w_line(w, "}");
    w->indent--;
    w_line(w, "}");
    return 0;
}

void emit_scatter_reduce(Writer *w, DType t, int kind, const char *y, const char *yi, const char *u, const char *ui)
{
    static const char *const exprs[] = {"b", "a + b", "a * b", "(b > a ? b : a)", "(b < a ? b : a)"};
    const char *ct = cgen_ctype(cgen_compute_type(t));
    if (kind == 0) {
        w_line(w, "%s[%s] = %s[%s];", y, yi, u, ui);
        return;
    }
    w_line(w, "{");
    w->indent++;
    w_printf(w, "%s a = ", ct);
    cgen_load(w, t, y, yi);
    w_printf(w, ";\n");
    w_printf(w, "%s b = ", ct);
    cgen_load(w, t, u, ui);
    w_printf(w, ";\n");
    cgen_store(w, t, y, yi, exprs[kind]);
    w->indent--;
    w_line(w, "}");
}

int cgen_emit_elements_dyn(Cgen *c, const Node *n, Diag *d)
{
    static const char *const reductions[] = {"none", "add", "mul", "max", "min"};
    Writer *w = cgen_w(c);
    const Value *x = n->in[0], *ind = n->in[1], *y = n->out[0];
    int scatter = n->op == OP_ScatterElements, r = x->shape.rank, kind = 0;
    int ax = ir_norm_axis(n->attrs[scatter ? SCATTER_ELEMENTS_AXIS : GATHER_ELEMENTS_AXIS].i, r);
    if (scatter)
        for (kind = 0; kind < 5 && strcmp(n->attrs[SCATTER_ELEMENTS_REDUCTION].s, reductions[kind]); kind++) {}
    if (ax < 0 || kind >= 5) return diag_node_error(d, n, "invalid node (run shape inference first)");
    if (ir_numel(&y->shape) == 0) {
        w_line(w, "/* empty output */");
        return 0;
    }
    CgenProd cnt = cgen_dims_prod(&ind->shape, 0, r), ny = cgen_dims_prod(&y->shape, 0, r);
    char bx[EMIT_EXPR_CAP], bi[EMIT_EXPR_CAP], by[EMIT_EXPR_CAP], bu[EMIT_EXPR_CAP], nid[64], ndd[64], j[64], o[64];
    char s1[160], s2[160];
    emit_ptr_name(c, x, bx);
    emit_ptr_name(c, ind, bi);
    emit_ptr_name(c, y, by);
    snprintf(nid, sizeof nid, "%s", cgen_tmp(c, "idx_dims"));
    snprintf(ndd, sizeof ndd, "%s", cgen_tmp(c, "data_dims"));
    snprintf(j, sizeof j, "%s", cgen_tmp(c, "j"));
    snprintf(o, sizeof o, "%s", cgen_tmp(c, "o"));
    w_line(w, "{");
    w->indent++;
    if (scatter) /* the output starts as data (unless they share memory) */
        w_line(w, "if ((const void *)%s != (const void *)%s) memcpy(%s, %s, (size_t)(%s) * %zu);", by, bx, by, bx,
               cgen_prod_str(&ny, s1, sizeof s1), ir_dtype_size(y->dtype));
    cgen_dims_table(w, nid, &ind->shape);
    cgen_dims_table(w, ndd, &x->shape);
    w_line(w, "int64_t %s;", j);
    w_line(w, "for (%s = 0; %s < %s; %s++) {", j, j, cgen_prod_str(&cnt, s2, sizeof s2), j);
    w->indent++;
    w_line(w, "int64_t %s = gcrt_elements_offset(%s, %d, %s, %d, %s, %s, %d);", o, bi, ind->dtype == DT_I64, j, r, nid, ndd, ax);
    if (scatter) {
        w_line(w, "if (%s < 0) continue;", o);
        emit_scatter_reduce(w, y->dtype, kind, by, o, emit_ptr_name(c, n->in[2], bu), j);
    } else {
        w_line(w, "%s[%s] = %s >= 0 ? %s[%s] : (%s)0;", by, j, o, bx, o, cgen_ctype(y->dtype));
    }
    w->indent--;
    w_line(w, "}");
    w->indent--;
    w_line(w, "}");
    return 0;
}
