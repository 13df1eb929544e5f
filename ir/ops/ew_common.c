/* ew_common.c — shared checks and helpers of the elementwise-style op
 * families (see ew_common.h). The message texts are the family-wide ones
 * that tests match exactly, so every family reports a broken rule the same
 * way.
 */
#include "ew_common.h"

#include <math.h>
#include <stdio.h>

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
    Shape acc = {0};
    int have = 0;
    for (int j = first; j < n->n_in; j++) {
        if (!n->in[j]) continue;
        const Shape *s = &n->in[j]->shape;
        if (!have) {
            acc = *s;
            have = 1;
            continue;
        }
        Shape r = {0};
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
    Shape s = {0};
    if (ew_broadcast_inputs(n, 0, &s, d)) return -1;
    ir_set_out(n, 0, out == DT_UNDEF ? n->in[0]->dtype : out, &s);
    return 0;
}

const char *const ew_names_X[] = {"X"};
const char *const ew_names_Y[] = {"Y"};
const char *const ew_names_input[] = {"input"};
const char *const ew_names_output[] = {"output"};
const char *const ew_names_AB[] = {"A", "B"};
const char *const ew_names_C[] = {"C"};
const char *const ew_names_XY[] = {"X", "Y"};
const char *const ew_names_Z[] = {"Z"};
const char *const ew_names_data[] = {"data_0"};

const InplacePair ew_inplace_any[4] = {{0, 0}, {1, 0}, {2, 0}, {3, 0}};
