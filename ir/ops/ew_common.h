/* ew_common.h — helpers shared by the elementwise-style op families
 * (ir/ops/elementwise.c, ir/ops/math.c): input-count and dtype checks with
 * the standard messages, numpy broadcasting of several inputs, and the
 * pieces scalar_expr writers need (typed C literals, <math.h> suffixes).
 * Messages name inputs by the op's ONNX names ("input 'B'"); variadic ops
 * name input j "data_j".
 */
#ifndef GRAPHC_EW_COMMON_H
#define GRAPHC_EW_COMMON_H

#include "../op.h"

/* Dtype classes an input may be required to belong to. */
typedef enum EwClass {
    EW_ANY,
    EW_FLOAT,   /* f32 f64 f16 bf16 */
    EW_SIGNED,  /* floats and signed integers (not u8 u16 u32 u64) */
    EW_NUMERIC, /* everything but bool */
    EW_BOOL
} EwClass;

/* Name of input j of n ("data_j" for variadic ops) written into buf. */
const char *ew_in_name(const Node *n, int j, char *buf, size_t cap);
/* One output, input count within the op's bounds, required inputs present. */
int ew_check_count(Node *n, Diag *d);
/* Input j's dtype belongs to class c ("input 'X' has dtype i32; expected ..."). */
int ew_check_class(Node *n, int j, EwClass c, Diag *d);
/* Input j has input ref's dtype. */
int ew_check_same_dtype(Node *n, int j, int ref, Diag *d);
/* Numpy-broadcasts the present inputs [first, n_in) into *out. */
int ew_broadcast_inputs(Node *n, int first, Shape *out, Diag *d);

/* u8 u16 u32 u64: the unsigned integer dtypes (compute types of their own). */
int ew_is_unsigned(DType t);
/* i8 i16 i32 i64. */
int ew_is_signed_int(DType t);

/* "f" for float compute types, "" for f64: suffix of <math.h> names. */
const char *ew_fs(DType ct);
/* Number v as a C literal of compute type ct ("1.0f", "0.5", "3"; integers
 * above INT64_MAX get a 'u' suffix). */
const char *ew_lit(char *buf, size_t cap, DType ct, double v);
/* C spelling of compute type ct: float, double, int8_t, uint8_t (also bool),
 * int16_t, int32_t, int64_t, uint16_t, uint32_t, uint64_t. */
const char *ew_ctype(DType ct);
/* Wraps an integral double into integer dtype t's range modulo 2^bits (C
 * conversion semantics); non-finite values give 0. 64-bit dtypes wrap only
 * negative values into u64 (rounded to a double); values above the range are
 * left for the store to saturate (2^63 and 2^64 are how INT64_MAX and
 * UINT64_MAX load). */
double ew_wrap_int(DType t, double v);
/* Writes the conversion of the double C expression `e` (written up to five
 * times: pass something cheap) to integer compute type ct with the
 * saturation of ir_store_f64: NaN gives 0, truncation toward zero, values
 * past the type's range give its limit. Never undefined behaviour. */
void ew_sat_int(Writer *w, DType ct, const char *e);

/* Inputs of one dtype of class c, broadcast together; the output dtype is
 * `out` (DT_UNDEF: the inputs' dtype). */
int ew_infer_nary(Node *n, EwClass c, DType out, Diag *d);

/* Defines expr_Op and ref_Op for a unary op that is one libm function
 * (cfn, suffixed by ew_fs for the compute type; ref on doubles). */
#define EW_LIBM_UNARY(Op, cfn, ref)                                                   \
    static void expr_##Op(const Node *n, Writer *w, const char *const *args, DType ct) \
    {                                                                                 \
        (void)n;                                                                      \
        w_printf(w, "%s%s(%s)", cfn, ew_fs(ct), args[0]);                             \
    }                                                                                 \
    static double ref_##Op(const Node *n, const double *x)                            \
    {                                                                                 \
        (void)n;                                                                      \
        return ref(x[0]);                                                             \
    }

#endif
