/* nn_common.h — helpers shared by the neural-network-style op families
 * (ir/ops/nn.c, ir/ops/vision.c, and the quantized convolutions of
 * ir/ops/quant.c): input checks with the family-wide messages (which tests
 * match word for word), the ints-attribute reader and auto_pad parser behind
 * the windowed ops' geometry, the one N-D window geometry of Conv,
 * ConvInteger, QLinearConv, MaxPool and AveragePool with the convolution
 * reference it drives, and small index utilities for the reference
 * evaluations. Messages name inputs by the op's ONNX names (in_names).
 */
#ifndef GRAPHC_NN_COMMON_H
#define GRAPHC_NN_COMMON_H

#include "../op.h"
#include "geometry.h"
#include "nn_attrs.h"

/* Input i has a floating-point dtype. */
int nn_check_float(const Node *n, int i, Diag *d);
/* Input i has the dtype of input 0. */
int nn_check_same_dtype(const Node *n, int i, Diag *d);
/* Input i is a vector of length c (a per-channel parameter; `what` names c). */
int nn_check_vec(const Node *n, int i, int64_t c, const char *what, Diag *d);
/* Input 0 has rank >= rank (`what` names the dims, e.g. "N, C, ..."). */
int nn_check_min_rank(const Node *n, int rank, const char *what, Diag *d);
/* Attribute 'group' is positive and divides C, the channels of input 'X'. */
int nn_check_group(const Node *n, int64_t group, int64_t C, Diag *d);
/* The weights (input wi) have the rank of input 0. */
int nn_check_weight_rank(const Node *n, int wi, Diag *d);
/* Kernel dims k[0..sr) are all positive. */
int nn_check_kernel_positive(const Node *n, const int64_t *k, int sr, Diag *d);

/* Reads the optional ints attribute `key` (len values for sr spatial dims;
 * default dflt) into v; every value must be >= minv. */
int nn_window_ints(const Node *n, const char *key, int sr, int len, int64_t dflt, int64_t minv, int64_t *v,
                   Diag *d);

typedef enum NnAutoPad { NN_PAD_NOTSET, NN_PAD_VALID, NN_PAD_SAME_UPPER, NN_PAD_SAME_LOWER } NnAutoPad;
/* Parses auto_pad string ap into *mode; explicit pads[0..2*sr) must be all 0
 * unless the mode is NOTSET. */
int nn_auto_pad(const Node *n, const char *ap, const int64_t *pads, int sr, NnAutoPad *mode, Diag *d);

/* The attributes of every convolution (Conv, ConvInteger, QLinearConv),
 * indexed by the CONV_* enum of nn_attrs.h; the quantized convolutions take
 * the entries before CONV_EPILOGUE (Conv's own `epilogue`). */
extern const AttrSpec nn_conv_attrs[CONV_COUNT];

/* Window geometry per spatial dim (sr of them): input size, kernel,
 * stride, dilation, resolved leading/trailing pads, output size. */
typedef struct NnWindow {
    int sr;
    int64_t in[IR_MAX_RANK], k[IR_MAX_RANK], s[IR_MAX_RANK], dl[IR_MAX_RANK];
    int64_t pb[IR_MAX_RANK], pe[IR_MAX_RANK], out[IR_MAX_RANK];
} NnWindow;
/* Where nn_window_geo_of reads X's shape and, for a convolution, the
 * weights' shape, and how its messages name them ("input 'X'", "attribute
 * 'x_shape'"). w is NULL for a pool (the kernel is kernel_shape). The
 * gradient ops (ir/ops/grad.c) take X's or W's shape from an attribute. */
typedef struct NnWindowSrc {
    const Shape *x;
    const char *x_name;
    const Shape *w;
    const char *w_name;
} NnWindowSrc;
/* Validates the window attributes of n (kernel_shape, strides, dilations,
 * pads, auto_pad, ceil_mode where the op has it) against input 0 and, for a
 * convolution, the kernel dims of its weights; fills w (see nn.c's essay for
 * the output-size rules). */
int nn_window_geo(const Node *n, NnWindow *w, Diag *d);
/* The same over the shapes src names (nn_window_geo: input 0 and the
 * convolution's weight input). */
int nn_window_geo_of(const Node *n, const NnWindowSrc *src, NnWindow *w, Diag *d);
/* [N, channels, out...]: the output shape of a windowed node. */
void nn_window_out_shape(const Node *n, const NnWindow *w, int64_t channels, Shape *os);
/* Reference convolution in double over geometry w: y[N,M,out] = bias[m]
 * (0 when bias is NULL) + the sum over the group's C/group channels and the
 * kernel taps inside x[N,C,in] of x * wt[M,C/group,k]. */
void nn_conv_ref(const NnWindow *w, int64_t N, int64_t C, int64_t M, int64_t group, const double *x,
                 const double *wt, const double *bias, double *y);

/* [outer, len, inner] view of input 0 around axis attribute attrs[ai]
 * (Softmax, Hardmax: the input is named 'input'); outer and inner are 0
 * when the input is empty. */
int nn_axis_split(const Node *n, int ai, int64_t *outer, int64_t *len, int64_t *inner, Diag *d);
/* Infer facet of GlobalAveragePool/GlobalMaxPool: float X of rank >= 3,
 * output X's shape with spatial dims 1. */
int nn_infer_global_pool(Node *n, Diag *d);

/* Advances a row-major multi-index; returns 0 after the last one. */
int nn_next_index(int64_t *idx, const int64_t *dims, int r);
/* v[0..n) written like a shape ("[1,2]") into buf. */
const char *nn_ints_str(const int64_t *v, int n, char *buf, size_t cap);
/* Product of v[from..to). */
int64_t nn_prod(const int64_t *v, int from, int to);

/* Gradient helpers (ir/grad.h) of the per-channel parameters of a tensor
 * of rank r laid out [N, C, ...]: g summed over every axis but 1 ([C]),
 * and a [C] vector reshaped to [1, C, 1, ...] (rank r) to broadcast. */
struct GradCtx;
Value *nn_grad_sum_channels(struct GradCtx *gc, Value *g);
Value *nn_grad_per_channel(struct GradCtx *gc, Value *v, int r);

#endif
