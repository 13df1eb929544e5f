/* ew_common.h — helpers shared by the elementwise-style op families
 * (ir/ops/elementwise.c, ir/ops/math.c): input-count and dtype checks with
 * the standard messages, numpy broadcasting of several inputs, integer
 * wrapping for the references, the input/output name lists and in-place
 * pairs both families use, and the shorthands and macros of their scalar
 * expression builders. Messages name inputs by the op's ONNX names ("input 'B'");
 * variadic ops name input j "data_j".
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

/* Wraps an integral double into integer dtype t's range modulo 2^bits (C
 * conversion semantics); non-finite values give 0. 64-bit dtypes wrap only
 * negative values into u64 (rounded to a double); values above the range are
 * left for the store to saturate (2^63 and 2^64 are how INT64_MAX and
 * UINT64_MAX load). */
double ew_wrap_int(DType t, double v);

/* Inputs of one dtype of class c, broadcast together; the output dtype is
 * `out` (DT_UNDEF: the inputs' dtype). */
int ew_infer_nary(Node *n, EwClass c, DType out, Diag *d);

/* Input and output name lists shared by the two elementwise families. */
extern const char *const ew_names_X[], *const ew_names_Y[], *const ew_names_input[], *const ew_names_output[],
    *const ew_names_AB[], *const ew_names_C[], *const ew_names_XY[], *const ew_names_Z[], *const ew_names_data[];

/* Any input may share the output's memory: the generic emitter loads every
 * input element before it stores the output element at the same index, and
 * the planner only shares an input of the output's element count (never a
 * broadcast one). Pairs past a node's input count are ignored. */
extern const InplacePair ew_inplace_any[4];

/* Shorthands of the scalar_expr builders in elementwise.c and math.c: A and
 * B name the argument trees, the others build in `b` with constants in the
 * compute type `ct` (the builders' parameter names). */
#define A (args[0])
#define B (args[1])
#define NUM(v) sx_const(b, ct, (v))
#define BIN(k, x, y) sx_binary(b, SX_##k, (x), (y))
#define SEL(c, x, y) sx_select(b, (c), (x), (y))
#define CALL(f, x) sx_call(b, SX_FN_##f, (x), NULL)

/* Defines expr_Op and ref_Op for a unary op that is one math function:
 * SxFn fn of the argument (in the compute type), ref on doubles. */
#define EW_MATH_UNARY(Op, fn, ref)                                                         \
    static const Sx *expr_##Op(const Node *n, SxBuild *b, const Sx *const *args, DType ct) \
    {                                                                                      \
        (void)n, (void)ct;                                                                 \
        return sx_call(b, fn, args[0], NULL);                                              \
    }                                                                                      \
    static double ref_##Op(const Node *n, const double *x)                                 \
    {                                                                                      \
        (void)n;                                                                           \
        return ref(x[0]);                                                                  \
    }

#endif
