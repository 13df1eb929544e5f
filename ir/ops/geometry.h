/* geometry.h — resolved index geometry that an op's description computes for
 * shape inference and that emitters, passes and other op families need too,
 * so that all read the same numbers instead of recomputing them (pads after
 * auto_pad, Slice starts after clamping, MatMul's broadcast batch strides).
 * ir_matmul_ref, the reference product over the MatMul geometry, lives here
 * with it because the integer matmuls (quant.c) run it too. */
#ifndef GRAPHC_OPS_GEOMETRY_H
#define GRAPHC_OPS_GEOMETRY_H

#include "../ir.h"

/* Input index of a convolution's weights (Conv, ConvInteger: 1;
 * QLinearConv: 3), -1 for other ops (the pools: kernel_shape). */
int ir_conv_weight_input(const Node *n);
/* For a shape-inferred Conv, ConvInteger, QLinearConv, MaxPool or
 * AveragePool node: kernel, strides, dilations and resolved leading/trailing
 * pads per spatial dim (arrays of IR_MAX_RANK). Returns the spatial rank, or
 * -1 if the node is invalid. */
int ir_nn_window_geometry(const Node *n, int64_t *kernel, int64_t *strides, int64_t *dilations,
                          int64_t *pad_begin, int64_t *pad_end);

/* For a MaxUnpool node: the spatial dims (IR_MAX_RANK array) of the shape
 * its indices I refer to: per dim (in - 1) * stride + kernel - pads. The
 * output equals that shape, or with output_shape extends (or crops) it at
 * the end of each spatial dim. Returns the spatial rank, -1 if invalid. */
int ir_maxunpool_index_dims(const Node *n, int64_t *dims);

/* For a TfIdfVectorizer node: the n-grams that can count (length in
 * [min_gram_length, max_gram_length]), in gram order: each one's position
 * in pool_int64s, length, output column and weight (the attribute's float,
 * or 1 without weights); arrays with room for the pool's size. Returns
 * their number, or -1 if the node is invalid. */
int ir_tfidf_selected(const Node *n, int64_t *off, int64_t *len, int64_t *col, double *wt);

/* For a Reduce* node: fills mask[rank] (1 = reduced) from its axes (the
 * attribute, or ReduceSum's input: a constant, or an empty tensor whose
 * values need not be known). Returns 0, 1 when the node is
 * a no-op (ReduceSum, empty axes, noop_with_empty_axes=1), or -1 with a
 * diagnostic (d may be NULL). */
int ir_reduce_mask(const Node *n, int *mask, Diag *d);

/* For a Slice node: per data axis, the first index read and the step (0 and
 * 1 on untouched axes, start 0 on empty axes), and the output shape. */
int ir_slice_plan(const Node *n, int64_t *start, int64_t *step, Shape *out, Diag *d);

/* For gradient facets (ir/grad.h) of ops whose map is a product of per-axis
 * linear maps (Pad's reflect/edge modes, Resize): g with axis k, of length
 * rows, replaced by its product with the rows x cols row-major matrix m
 * (out[.., j, ..] = sum_i g[.., i, ..] * m[i][j]). */
struct GradCtx;
Value *ir_grad_fold_axis(struct GradCtx *gc, Value *g, int k, const double *m, int64_t rows, int64_t cols);

/* For a valid Transpose node: its permutation (default: the axes
 * reversed) into perm[rank]. */
void ir_transpose_perm(const Node *n, int *perm);

/* For a Shape node: the [start, end) range of input dims it returns
 * (opset 15: negative counts from the end, then clamped to [0, rank]). */
void ir_shape_range(const Node *n, int *start, int *end);

/* ---- linalg family (ir/ops/linalg.c) ---- */

/* numpy.matmul geometry of inputs ia (A) and ib (B) of MatMul, MatMulInteger
 * or QLinearMatMul: a 1-D A is promoted to [1,K] and a 1-D B to [K,1] (the
 * promoted dim is left out of `out`), the batch dims (all but the last two)
 * broadcast. sa/sb are each operand's element strides along the broadcast
 * batch dims (0 where it is broadcast); na/nb count the matrices in its own
 * batch dims. */
typedef struct IrMatMulGeom {
    int64_t M, K, N;
    Shape batch, out;
    int64_t sa[IR_MAX_RANK], sb[IR_MAX_RANK];
    int64_t na, nb;
} IrMatMulGeom;
int ir_matmul_geometry(const Node *n, int ia, int ib, IrMatMulGeom *g, Diag *d);
/* The reference product over g in double: Y[b] = A[b] x B[b] for every
 * broadcast batch index b, Y dense [batch..., M, N]. */
void ir_matmul_ref(const IrMatMulGeom *g, const double *A, const double *B, double *Y);

/* ---- quantization family (ir/ops/quant.c) ---- */

/* For a QuantizeLinear or DequantizeLinear node: element i of x uses the
 * parameters' element (i / inner) % nch (nch 1 when they are per tensor).
 * Returns 0, or -1 if the node is invalid. */
int ir_quant_axis_geometry(const Node *n, int64_t *nch, int64_t *inner);

/* ---- vision family (ir/ops/vision.c) ---- */

/* For a shape-inferred ConvTranspose node: kernel, strides, dilations and
 * resolved leading pads per spatial dim (negative pads extend the output).
 * Returns the spatial rank, or -1 if the node is invalid. */
int ir_convtranspose_geometry(const Node *n, int64_t *kernel, int64_t *strides, int64_t *dilations,
                              int64_t *pad_begin);

/* DepthToSpace: flat index in X[N,C,H,W] of output element (n, c, y, x)
 * (output [N, C/b^2, H*b, W*b]; crd selects CRD mode, else DCR).
 * SpaceToDepth is its DCR inverse. */
int64_t ir_depth_to_space_src(int64_t C, int64_t H, int64_t W, int64_t b, int crd, int64_t n, int64_t c,
                              int64_t y, int64_t x);

/* For a shape-inferred Resize or Upsample node and one axis of X: for each
 * output index o of that axis, 4 slots idx[4*o+j] / w[4*o+j] with the input
 * indices (clamped) and weights of its taps, unused slots weight 0; an
 * output index outside the tf_crop_and_resize crop has idx[4*o] = -1 (its
 * elements are ir_resize_extrapolation(n)). Returns the largest number of
 * used taps (1..4), or -1 if the node is invalid. */
int ir_resize_axis_taps(const Node *n, int axis, int64_t *idx, double *w);
double ir_resize_extrapolation(const Node *n);

/* Hardmax: [outer, len, inner] view around the axis; -1 if invalid. */
int ir_hardmax_split(const Node *n, int64_t *outer, int64_t *len, int64_t *inner);

/* MeanVarianceNormalization: mask[a] = 1 for each reduced axis of X. */
int ir_mvn_axes(const Node *n, int *mask, Diag *d);

/* ---- grad family (ir/ops/grad.c) ---- */

/* For a shape-inferred ConvGradData, ConvGradFilter, MaxPoolGrad or
 * AveragePoolGrad node: its forward op's window (as ir_nn_window_geometry)
 * with the forward input's spatial dims `in` and the forward output's (dY's)
 * `out`. Returns the spatial rank, or -1 if the node is invalid. */
int ir_grad_window_geometry(const Node *n, int64_t *in, int64_t *out, int64_t *kernel, int64_t *strides,
                            int64_t *dilations, int64_t *pad_begin, int64_t *pad_end);
/* SoftmaxGrad, LogSoftmaxGrad: [outer, len, inner] view of dY around axis. */
int ir_softmax_grad_split(const Node *n, int64_t *outer, int64_t *len, int64_t *inner, Diag *d);
/* LayerNormalizationGrad: X as [outer, inner] rows normalized over inner;
 * returns the normalized axis, -1 if invalid. */
int ir_layernorm_grad_split(const Node *n, int64_t *outer, int64_t *inner, Diag *d);

#endif
