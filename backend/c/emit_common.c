/* emit_common.c — helpers shared by the per-family C emitters (see
 * emit_common.h). They were written once per emit_*.c file before; keeping
 * one copy keeps literal spelling and refusal messages identical across
 * families; float literals come from the C-family literal writer, so kernel
 * arguments and elementwise expressions spell numbers alike.
 */
#include "emit_common.h"
#include "../cfamily/cfam_expr.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

void emit_const_bytes(Cgen *c, const Value *y, const char *base, const unsigned char *b, size_t nb, int64_t fill)
{
    Writer *w = cgen_w(c);
    char name[64], py[EMIT_EXPR_CAP];
    snprintf(name, sizeof name, "%s", cgen_tmp(c, base));
    w_line(w, "{");
    w->indent++;
    w_printf(w, "static const unsigned char %s[%zu] = {", name, nb);
    for (size_t i = 0; i < nb; i++) w_printf(w, "%s%s%u", i ? "," : "", i % 16 == 0 ? "\n    " : "", b[i]);
    w_printf(w, "};\n");
    if (fill > 0) w_line(w, "gcrt_fill(%s, %s, %zu, %lld);", emit_ptr_name(c, y, py), name, nb, (long long)fill);
    else w_line(w, "memcpy(%s, %s, %zu);", emit_ptr_name(c, y, py), name, nb);
    w->indent--;
    w_line(w, "}");
}

int64_t emit_conv_im2col_cols(const Node *n, size_t elem)
{
    int64_t k[IR_MAX_RANK], st[IR_MAX_RANK], dl[IR_MAX_RANK], pb[IR_MAX_RANK], pe[IR_MAX_RANK];
    int sr = ir_nn_window_geometry(n, k, st, dl, pb, pe);
    if (sr < 0) return 0;
    const Shape *ys = &n->out[0]->shape;
    int64_t Cg = n->in[ir_conv_weight_input(n)]->shape.dims[1], KP = 1, P = 1;
    int pointwise = 1;
    for (int i = 0; i < sr; i++) {
        KP *= k[i];
        P *= ys->dims[2 + i];
        if (k[i] != 1 || st[i] != 1 || pb[i] != 0 || pe[i] != 0) pointwise = 0;
    }
    if (pointwise || Cg == 1) return 0;
    return emit_im2col_tile_cols(Cg * KP, P, elem);
}

int64_t emit_im2col_tile_cols(int64_t rows, int64_t P, size_t elem)
{
    if (P <= 0 || rows <= 0) return 0;
    int64_t cols = EMIT_CONV_WS_CAP / (rows * (int64_t)elem);
    if (cols < 1) cols = 1;
    return cols < P ? cols : P;
}

size_t emit_conv_im2col_bytes(const Node *n, size_t elem)
{
    int64_t cols = emit_conv_im2col_cols(n, elem);
    if (!cols) return 0;
    const Shape *ws = &n->in[ir_conv_weight_input(n)]->shape; /* [M, C/group, k...] */
    int64_t row = 1; /* C/group * k...: one im2col row (not numel / M: M may be 0) */
    for (int i = 1; i < ws->rank; i++) row *= ws->dims[i];
    return (size_t)(row * cols) * elem;
}
