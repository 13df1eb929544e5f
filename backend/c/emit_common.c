/* emit_common.c — helpers shared by the per-family C emitters (see
 * emit_common.h). They were written once per emit_*.c file before; keeping
 * one copy keeps literal spelling and refusal messages identical across
 * families; float literals come from the C-family literal writer, so kernel
 * arguments and elementwise expressions spell numbers alike.
 */
#include "emit_common.h"
#include "../cfamily/cfam_expr.h"

#include <stdio.h>

const char *emit_float_lit(char *buf, size_t cap, double v, DType t)
{
    return cfam_lit(buf, cap, t == DT_F32 ? DT_F32 : DT_F64, v);
}

int emit_check_float_dtype(const Node *n, DType t, Diag *d)
{
    if (t != DT_F32 && t != DT_F64)
        return diag_node_error(d, n, "the C backend implements %s only for f32 and f64, got %s",
                               ir_op(n->op)->name, ir_dtype_name(t));
    return 0;
}

const char *emit_kernel_suffix(const Node *n, DType t, Diag *d)
{
    if (t == DT_F32) return "f32";
    if (t == DT_F64) return "f64";
    emit_check_float_dtype(n, t, d);
    return NULL;
}

int64_t emit_dims_prod(const Shape *s, int from, int to)
{
    int64_t p = 1;
    for (int i = from; i < to; i++) p *= s->dims[i];
    return p;
}

const char *emit_ptr_name(Cgen *c, const Value *v, char *buf)
{
    snprintf(buf, EMIT_EXPR_CAP, "%s", cgen_ptr(c, v));
    return buf;
}

int emit_empty_out(Cgen *c, const Node *n)
{
    if (ir_numel(&n->out[0]->shape) != 0) return 0;
    w_line(cgen_w(c), "/* empty output */");
    return 1;
}

void emit_i64_array(Writer *w, const char *name, const int64_t *v, int n)
{
    w_printf(w, "static const int64_t %s[%d] = {", name, n > 0 ? n : 1);
    for (int i = 0; i < n; i++) w_printf(w, "%s%lld", i ? ", " : "", (long long)v[i]);
    if (n == 0) w_printf(w, "0");
    w_printf(w, "};\n");
}

void emit_dims3(Writer *w, const int64_t *v, int sr, int64_t fill)
{
    int64_t t[3];
    for (int i = 0; i < 3; i++) t[i] = i < 3 - sr ? fill : v[i - (3 - sr)];
    w_printf(w, "(const int64_t[3]){%lld, %lld, %lld}", (long long)t[0], (long long)t[1], (long long)t[2]);
}
