/* ew_common.c — shared checks and expression helpers of the elementwise-style
 * op families (see ew_common.h). The message texts are the family-wide ones
 * that tests match exactly, so every family reports a broken rule the same
 * way.
 */
#include "ew_common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *ew_in_name(const Node *n, int j, char *buf, size_t cap)
{
    const OpDesc *od = ir_op(n->op);
    if (od->max_in == -1) {
        snprintf(buf, cap, "data_%d", j);
        return buf;
    }
    return j < od->max_in ? od->in_names[j] : "?";
}

int ew_check_count(Node *n, Diag *d)
{
    const OpDesc *od = ir_op(n->op);
    if (n->n_out != 1) return diag_node_error(d, n, "expects 1 output, got %d", n->n_out);
    if (od->max_in == -1) {
        if (n->n_in < od->min_in)
            return diag_node_error(d, n, "expects at least %d input%s, got %d", od->min_in,
                                   od->min_in == 1 ? "" : "s", n->n_in);
    } else if (n->n_in < od->min_in || n->n_in > od->max_in) {
        if (od->min_in == od->max_in)
            return diag_node_error(d, n, "expects %d input%s, got %d", od->min_in, od->min_in == 1 ? "" : "s",
                                   n->n_in);
        return diag_node_error(d, n, "expects %d to %d inputs, got %d", od->min_in, od->max_in, n->n_in);
    }
    char nb[32];
    int need = od->max_in == -1 ? n->n_in : od->min_in; /* every variadic input is required */
    for (int j = 0; j < n->n_in && j < need; j++)
        if (!n->in[j]) return diag_node_error(d, n, "input '%s' is required", ew_in_name(n, j, nb, sizeof nb));
    return 0;
}


static int class_ok(DType t, EwClass c)
{
    switch (c) {
    case EW_ANY: return 1;
    case EW_FLOAT: return ir_dtype_is_float(t);
    case EW_SIGNED: return ir_dtype_is_float(t) || ew_is_signed_int(t);
    case EW_NUMERIC: return t != DT_BOOL;
    case EW_BOOL: return t == DT_BOOL;
    }
    return 0;
}

static const char *class_text(EwClass c)
{
    switch (c) {
    case EW_FLOAT: return "a float dtype (f32, f64, f16, bf16)";
    case EW_SIGNED: return "a signed numeric dtype (float or signed integer)";
    case EW_NUMERIC: return "a numeric dtype (not bool)";
    case EW_BOOL: return "bool";
    default: return "any dtype";
    }
}

int ew_check_class(Node *n, int j, EwClass c, Diag *d)
{
    char nb[32];
    DType t = n->in[j]->dtype;
    if (class_ok(t, c)) return 0;
    return diag_node_error(d, n, "input '%s' has dtype %s; expected %s", ew_in_name(n, j, nb, sizeof nb),
                           ir_dtype_name(t), class_text(c));
}

int ew_check_same_dtype(Node *n, int j, int ref, Diag *d)
{
    char nb[32], rb[32];
    if (n->in[j]->dtype == n->in[ref]->dtype) return 0;
    return diag_node_error(d, n, "input '%s' has dtype %s but input '%s' has dtype %s",
                           ew_in_name(n, j, nb, sizeof nb), ir_dtype_name(n->in[j]->dtype),
                           ew_in_name(n, ref, rb, sizeof rb), ir_dtype_name(n->in[ref]->dtype));
}

int ew_broadcast_inputs(Node *n, int first, Shape *out, Diag *d)
{
    Shape acc;
    int have = 0;
    for (int j = first; j < n->n_in; j++) {
        if (!n->in[j]) continue;
        const Shape *s = &n->in[j]->shape;
        if (!have) {
            acc = *s;
            have = 1;
            continue;
        }
        Shape r;
        if (ir_broadcast(&acc, s, &r) == 0) {
            acc = r;
            continue;
        }
        char nb[32], rb[32], sb[128], ab[128];
        for (int k = first; k < j; k++) { /* name one earlier input that clashes */
            if (!n->in[k] || ir_broadcast(&n->in[k]->shape, s, &r) == 0) continue;
            return diag_node_error(d, n, "input '%s' shape %s does not broadcast with input '%s' shape %s",
                                   ew_in_name(n, j, nb, sizeof nb), ir_shape_str(s, sb, sizeof sb),
                                   ew_in_name(n, k, rb, sizeof rb),
                                   ir_shape_str(&n->in[k]->shape, ab, sizeof ab));
        }
        return diag_node_error(d, n,
                               "input '%s' shape %s does not broadcast with the shape %s of the inputs before it",
                               ew_in_name(n, j, nb, sizeof nb), ir_shape_str(s, sb, sizeof sb),
                               ir_shape_str(&acc, ab, sizeof ab));
    }
    GC_ASSERT(have);
    *out = acc;
    return 0;
}

int ew_is_unsigned(DType t) { return t == DT_U8 || t == DT_U16 || t == DT_U32 || t == DT_U64; }
int ew_is_signed_int(DType t) { return ir_dtype_is_int(t) && !ew_is_unsigned(t); }

const char *ew_fs(DType ct) { return ct == DT_F64 ? "" : "f"; }

/* Floats: the shortest decimal that reads back as the same value of ct. */
const char *ew_lit(char *buf, size_t cap, DType ct, double v)
{
    if (!ir_dtype_is_float(ct)) {
        GC_ASSERT(v >= -9223372036854775808.0 && v < 18446744073709551616.0);
        if (v >= 9223372036854775808.0) snprintf(buf, cap, "%lluu", (unsigned long long)v);
        else snprintf(buf, cap, "%lld", (long long)v);
        return buf;
    }
    int f32 = ct != DT_F64;
    for (int prec = f32 ? 6 : 15; prec <= (f32 ? 9 : 17); prec++) {
        snprintf(buf, cap, "%.*g", prec, v);
        double back = strtod(buf, NULL);
        if (f32 ? (float)back == (float)v : back == v) break;
    }
    if (!strpbrk(buf, ".eEn")) strncat(buf, ".0", cap - strlen(buf) - 1);
    if (f32) strncat(buf, "f", cap - strlen(buf) - 1);
    return buf;
}

const char *ew_ctype(DType ct)
{
    switch (ct) {
    case DT_F64: return "double";
    case DT_I8: return "int8_t";
    case DT_U8: return "uint8_t";
    case DT_I16: return "int16_t";
    case DT_I32: return "int32_t";
    case DT_I64: return "int64_t";
    case DT_BOOL: return "uint8_t";
    case DT_U16: return "uint16_t";
    case DT_U32: return "uint32_t";
    case DT_U64: return "uint64_t";
    default: return "float";
    }
}

/* Limits of ew_sat_int: values <= lo give min, values >= hi give max; the
 * i64 maximum is the largest double below 2^63, where ir_store_f64 stops. */
static const struct { DType t; const char *min, *max; double lo, hi; } sat_lim[] = {
    {DT_I8, "INT8_MIN", "INT8_MAX", -128.0, 128.0},
    {DT_U8, "0", "UINT8_MAX", 0.0, 256.0},
    {DT_I16, "INT16_MIN", "INT16_MAX", -32768.0, 32768.0},
    {DT_I32, "INT32_MIN", "INT32_MAX", -2147483648.0, 2147483648.0},
    {DT_I64, "INT64_MIN", "(int64_t)9223372036854774784", -9223372036854775808.0, 9223372036854774784.0},
    {DT_U16, "0", "UINT16_MAX", 0.0, 65536.0},
    {DT_U32, "0", "UINT32_MAX", 0.0, 4294967296.0},
    {DT_U64, "0", "UINT64_MAX", 0.0, 18446744073709551616.0},
};

void ew_sat_int(Writer *w, DType ct, const char *e)
{
    for (size_t k = 0; k < sizeof sat_lim / sizeof sat_lim[0]; k++) {
        if (sat_lim[k].t != ct) continue;
        char lo[64], hi[64];
        ew_lit(lo, sizeof lo, DT_F64, sat_lim[k].lo);
        ew_lit(hi, sizeof hi, DT_F64, sat_lim[k].hi);
        const char *t = ew_ctype(ct);
        w_printf(w, "((%s) != (%s) ? (%s)0 : (%s) <= %s ? (%s)%s : (%s) >= %s ? (%s)%s : (%s)(%s))", e, e, t, e, lo, t,
                 sat_lim[k].min, e, hi, t, sat_lim[k].max, t, e);
        return;
    }
    GC_ASSERT(0 && "ew_sat_int: not an integer compute type");
}

double ew_wrap_int(DType t, double v)
{
    if (!isfinite(v)) return 0;
    v = trunc(v);
    int bits = (int)ir_dtype_size(t) * 8;
    if (bits >= 64) {
        /* A double at the top of the range stands for INT64_MAX / UINT64_MAX
         * as well (they load as 2^63 / 2^64), so it is kept for the store to
         * saturate; only negative u64 values wrap (fmod is exact). */
        if (t == DT_U64 && v < 0) {
            v = fmod(v, 18446744073709551616.0);
            return v < 0 ? v + 18446744073709551616.0 : 0;
        }
        return v;
    }
    double m = ldexp(1.0, bits); /* fmod is exact, and so are the shifts by m below 2^33 */
    v = fmod(v, m);
    if (v < 0) v += m;
    if (!ew_is_unsigned(t) && v >= m / 2) v -= m;
    return v;
}

int ew_infer_nary(Node *n, EwClass c, DType out, Diag *d)
{
    if (ew_check_count(n, d) || ew_check_class(n, 0, c, d)) return -1;
    for (int j = 1; j < n->n_in; j++)
        if (ew_check_same_dtype(n, j, 0, d)) return -1;
    Shape s;
    if (ew_broadcast_inputs(n, 0, &s, d)) return -1;
    ir_set_out(n, 0, out == DT_UNDEF ? n->in[0]->dtype : out, &s);
    return 0;
}
