/* emit_reduce.c — C emitters for ReduceSum, ReduceMean, ReduceMax and
 * ReduceMin.
 *
 * Shapes are static, so a reduction is emitted as plain nested loops with
 * constant strides and no workspace: the input's axes are split into kept
 * and reduced axes (any set, contiguous or not), size-1 axes are dropped and
 * neighbouring axes of the same class are merged. The outer loops run over
 * the kept axes in order, which is exactly row-major order of the output, so
 * the output index is a running counter; the inner loops run over the
 * reduced axes. Each output element accumulates in a double (any dtype,
 * loaded and stored with cgen_load / cgen_store), which matches the double
 * reference evaluation closely. Max/min propagate NaN like numpy; the mean
 * of nothing is 0/0 = NaN, the sum of nothing is 0.
 */
#include "cgen.h"

#include <stdio.h>
#include <string.h>

#define IDX_CAP 1024

/* Fills mask[rank] (1 = reduced); returns 1 for the ReduceSum no-op case,
 * 0 otherwise, -1 when the axes are unreadable (inference not run). */
static int reduce_mask(const Node *n, int *mask)
{
    int rank = n->in[0]->shape.rank;
    int64_t axes[IR_MAX_RANK + 1];
    int na = 0;
    if (n->op == OP_ReduceSum) {
        if (n->n_in > 1 && n->in[1]) na = ir_const_ints(n->in[1], axes, IR_MAX_RANK + 1);
        if (na < 0) return -1;
        if (na == 0 && n->attrs[ir_attr_index(n, "noop_with_empty_axes")].i) return 1;
    } else {
        const AttrVal *a = &n->attrs[ir_attr_index(n, "axes")];
        if (a->set) {
            if (a->n > IR_MAX_RANK) return -1;
            na = a->n;
            for (int i = 0; i < na; i++) axes[i] = a->ints[i];
        }
    }
    for (int i = 0; i < rank; i++) mask[i] = na == 0;
    for (int i = 0; i < na; i++) {
        int ax = ir_norm_axis(axes[i], rank);
        if (ax < 0) return -1;
        mask[ax] = 1;
    }
    return 0;
}

/* Appends " + var * stride" (or the first term) to an index expression. */
static void idx_term(char *buf, const char *var, int64_t stride)
{
    size_t k = strlen(buf);
    const char *sep = k ? " + " : "";
    if (stride == 1) snprintf(buf + k, IDX_CAP - k, "%s%s", sep, var);
    else snprintf(buf + k, IDX_CAP - k, "%s%s * %lld", sep, var, (long long)stride);
}

static int emit_reduce(Cgen *c, const Node *n, Diag *d)
{
    Writer *w = cgen_w(c);
    const Value *x = n->in[0], *y = n->out[0];
    const Shape *xs = &x->shape;
    int mask[IR_MAX_RANK];
    int rc = reduce_mask(n, mask);
    if (rc < 0) return diag_node_error(d, n, "reduction axes must be constant and valid (run shape inference first)");
    int64_t on = ir_numel(&y->shape);
    if (on == 0) {
        w_line(w, "/* empty reduction output */");
        return 0;
    }
    char bx[256], by[256];
    snprintf(bx, sizeof bx, "%s", cgen_ptr(c, x));
    snprintf(by, sizeof by, "%s", cgen_ptr(c, y));
    size_t es = ir_dtype_size(x->dtype);
    if (rc == 1) {
        w_line(w, "if ((const void *)%s != (const void *)%s) memcpy(%s, %s, %lld);", by, bx, by, bx,
               (long long)(on * (int64_t)es));
        return 0;
    }
    /* merged axes: class (1 = reduced), size, input stride */
    int cls[IR_MAX_RANK], m = 0;
    int64_t size[IR_MAX_RANK], stride[IR_MAX_RANK], st = 1, count = 1;
    for (int k = xs->rank - 1; k >= 0; k--) {
        int64_t dk = xs->dims[k];
        if (mask[k]) count *= dk;
        if (dk != 1) {
            if (m > 0 && cls[m - 1] == mask[k] && stride[m - 1] * size[m - 1] == st) {
                size[m - 1] *= dk;
            } else {
                cls[m] = mask[k];
                size[m] = dk;
                stride[m] = st;
                m++;
            }
        }
        st *= dk;
    }
    /* cls/size/stride were built innermost first; loops go outermost first */
    DType t = x->dtype;
    int is_max = n->op == OP_ReduceMax, is_min = n->op == OP_ReduceMin;
    const char *init = is_max ? "-INFINITY" : is_min ? "INFINITY" : "0.0";
    char idx[IDX_CAP] = "", var[IR_MAX_RANK][64], o[64], acc[64], v[64];
    snprintf(o, sizeof o, "%s", cgen_tmp(c, "o"));
    snprintf(acc, sizeof acc, "%s", cgen_tmp(c, "acc"));
    snprintf(v, sizeof v, "%s", cgen_tmp(c, "v"));
    w_line(w, "{");
    w->indent++;
    w_line(w, "int64_t %s = 0;", o);
    int open = 0;
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) w_line(w, "double %s = %s;", acc, init);
        for (int j = m - 1; j >= 0; j--) {
            if (cls[j] != pass) continue;
            snprintf(var[j], sizeof var[j], "%s", cgen_tmp(c, pass ? "r" : "k"));
            w_line(w, "for (int64_t %s = 0; %s < %lld; %s++) {", var[j], var[j], (long long)size[j], var[j]);
            w->indent++;
            open++;
            idx_term(idx, var[j], stride[j]);
        }
        if (pass == 0) continue;
        if (!idx[0]) snprintf(idx, sizeof idx, "0");
        w_printf(w, "double %s = (double)(", v);
        cgen_load(w, t, bx, idx);
        w_printf(w, ");\n");
        if (is_max) w_line(w, "if (%s != %s || %s > %s) %s = %s;", v, v, v, acc, acc, v);
        else if (is_min) w_line(w, "if (%s != %s || %s < %s) %s = %s;", v, v, v, acc, acc, v);
        else w_line(w, "%s += %s;", acc, v);
    }
    /* close the reduced loops, store, then close the kept loops */
    int n_red = 0;
    for (int j = 0; j < m; j++) n_red += cls[j];
    for (int j = 0; j < n_red; j++) {
        w->indent--;
        w_line(w, "}");
    }
    char val[256];
    if (n->op == OP_ReduceMean) snprintf(val, sizeof val, "%s / (double)%lld", acc, (long long)count);
    else snprintf(val, sizeof val, "%s", acc);
    cgen_store(w, y->dtype, by, o, val);
    w_line(w, "%s++;", o);
    for (int j = n_red; j < open; j++) {
        w->indent--;
        w_line(w, "}");
    }
    w->indent--;
    w_line(w, "}");
    return 0;
}

const CgenEntry cgen_reduce_entries[] = {
    {OP_ReduceMean, emit_reduce},
    {OP_ReduceSum, emit_reduce},
    {OP_ReduceMax, emit_reduce},
    {OP_ReduceMin, emit_reduce},
    {-1, NULL},
};
