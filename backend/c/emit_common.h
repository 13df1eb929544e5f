/* emit_common.h — small helpers shared by the per-family C emitters
 * (backend/c/emit_*.c): float literals for kernel arguments (spelled by the
 * C-family literal writer, backend/cfamily/cfam_expr.h), the f32/f64 kernel
 * suffix with the backend's standard refusal, and writers for the int64
 * tables and compound literals that carry sizes into runtime kernels.
 * Everything here writes text only through the Writer it is given, so
 * emitters stay byte-for-byte deterministic. Attributes are read by index,
 * `n->attrs[CONV_GROUP]`, with the enums of ir/ops/<family>_attrs.h.
 */
#ifndef GRAPHC_EMIT_COMMON_H
#define GRAPHC_EMIT_COMMON_H

#include "cgen.h"
#include "../../ir/ops/geometry.h"

/* Capacity of the buffers that hold one C expression (emit_ptr_name's buf). */
#define EMIT_EXPR_CAP 256

/* A C literal of v in dtype t (f32: "0.5f", else a double: "0.5"; NAN,
 * INFINITY for non-finite v), written into buf: cfam_lit's spelling. */
const char *emit_float_lit(char *buf, size_t cap, double v, DType t);
/* 0 if t is f32 or f64, else -1 with "the C backend implements OP only for
 * f32 and f64" on d. */
int emit_check_float_dtype(const Node *n, DType t, Diag *d);
/* The runtime kernel suffix "f32"/"f64" for t, or NULL with the diagnostic
 * of emit_check_float_dtype. */
const char *emit_kernel_suffix(const Node *n, DType t, Diag *d);
/* Product of dims [from, to) of s. */
int64_t emit_dims_prod(const Shape *s, int from, int to);

/* Copies cgen_ptr(c, v) into buf of EMIT_EXPR_CAP chars (the core's string
 * may not outlive later calls). */
const char *emit_ptr_name(Cgen *c, const Value *v, char *buf);
/* Whether n's output 0 is empty: writes a comment and touches no tensor
 * (an untouched tensor gets no declaration, so no unused variable). */
int emit_empty_out(Cgen *c, const Node *n);
/* Writes `static const int64_t NAME[n] = {...};` ({0} with size 1 for n = 0). */
void emit_i64_array(Writer *w, const char *name, const int64_t *v, int n);
/* Writes "(const int64_t[3]){a, b, c}" from the last sr values of v padded
 * at the front with `fill`. */
void emit_dims3(Writer *w, const int64_t *v, int sr, int64_t fill);

/* Writes a block holding `static const unsigned char NAME[nb]` = b (NAME a
 * fresh identifier from base) and the statement that copies it into y:
 * `memcpy(y, NAME, nb);`, or with fill > 0 `gcrt_fill(y, NAME, nb, fill);`
 * (nb is then one element, repeated fill times). */
void emit_const_bytes(Cgen *c, const Value *y, const char *base, const unsigned char *b, size_t nb, int64_t fill);

/* ---- kernel calls shared by several ops' emitters ---- */

/* The GEMM call(s) of a batched matmul with geometry g in dtype t (f32 or
 * f64): Y[b] = A[b] x B[b], Y dense; pa/pb/py are pointer expressions
 * (emit_linalg.c; MatMul, MatMulInteger, QLinearMatMul). */
void emit_matmul_call(Cgen *c, const IrMatMulGeom *g, DType t, const char *pa, const char *pb, const char *py);
/* The gcrt_conv_f32/_f64 call (dtype t) of convolution node n (Conv,
 * ConvInteger, QLinearConv; 1 to 3 spatial dims, else -1 with a diagnostic):
 * sizes from X and the weights, geometry from ir_nn_window_geometry;
 * px/pw/pb/py are pointer expressions (pb "0": no bias), pws the byte
 * address of the im2col tile or NULL for the direct loops (emit_nn.c). */
/* The im2col tile of gcrt_conv_* for convolution node n whose kernel runs
 * on elements of elem bytes: how many output positions one im2col pass
 * covers, so that the scratch stays under EMIT_CONV_WS_CAP bytes; 0 when
 * the conv needs no im2col (pointwise or depthwise: the kernel runs direct
 * loops). emit_conv_im2col_bytes is the scratch of one tile. */
#define EMIT_CONV_WS_CAP ((int64_t)512 * 1024)
int64_t emit_conv_im2col_cols(const Node *n, size_t elem);
/* The tile width of an im2col matrix with `rows` rows (C/group * prod(k))
 * over P output positions: the most columns that fit EMIT_CONV_WS_CAP
 * bytes (at least 1, at most P); 0 when P or rows is 0. */
int64_t emit_im2col_tile_cols(int64_t rows, int64_t P, size_t elem);
size_t emit_conv_im2col_bytes(const Node *n, size_t elem);
int emit_conv_call(Cgen *c, const Node *n, DType t, const char *px, const char *pw, const char *pb, const char *py,
                   const char *pws, Diag *d);

/* Compress with a runtime condition (backend/c/emit_select.c): counts the
 * kept positions, sets the data-dependent dim and copies them. */
int cgen_emit_compress_dyn(Cgen *c, const Node *n, Diag *d);

#endif
