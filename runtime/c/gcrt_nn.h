/* gcrt_nn.h — neural-network layer kernels the generated code calls: conv,
 * pooling, batch norm, softmax, layer norm. Plain C99; every size is an
 * explicit argument; no allocation, no I/O, no global state.
 *
 * Tensors are row-major NC<spatial>. Spatial geometry is always given as
 * 3-element arrays (depth, height, width): 1-D and 2-D ops pass 1 for the
 * missing leading sizes/kernels/strides/dilations and 0 for their pads.
 * Each kernel exists for float (_f32) and double (_f64); softmax,
 * log-softmax and layer norm over the last axis also have a fast f32 form
 * (_last_f32) that the emitter picks when the reduced axis is contiguous.
 */
#ifndef GCRT_NN_H
#define GCRT_NN_H

#include <stdint.h>

#include "gcrt_base.h"

#define GCRT_NN_DECLARE(S, T)                                                                 \
    /* Y[N,M,out] = conv(X[N,C,in], W[M,C/group,k]) + B[M] (B may be 0).                   \
     * pad = leading pads. ws: scratch of C/group*prod(k)*cols elements for im2col tiles  \
     * of `cols` output positions, or 0 to use the direct loops (always used when          \
     * C/group == 1). */                                                                   \
    GCRT_FN void gcrt_conv##S(int64_t N, int64_t C, int64_t M, int64_t group, const int64_t *in,      \
                      const int64_t *k, const int64_t *out, const int64_t *stride,            \
                      const int64_t *dil, const int64_t *pad, const T *X, const T *W,         \
                      const T *B, T *Y, T *ws, int64_t cols);                                 \
    /* im2col of gcrt_conv: copies the receptive fields of output positions [p0, p0+np)  \
     * of the Cg channels at x (one group of one image) into col [Cg*prod(k), np], zero     \
     * where a tap falls into padding (gcrt_grad.c's conv gradients use it too). */         \
    GCRT_FN void gcrt_im2col##S(int64_t Cg, const int64_t *in, const int64_t *k, const int64_t *out, \
                        const int64_t *stride, const int64_t *dil, const int64_t *pad,        \
                        const T *x, int64_t p0, int64_t np, T *col);                          \
    /* Max over each window; padding never wins. NC = N*C planes. */                         \
    GCRT_FN void gcrt_maxpool##S(int64_t NC, const int64_t *in, const int64_t *k, const int64_t *out, \
                         const int64_t *stride, const int64_t *dil, const int64_t *pad,       \
                         const T *X, T *Y);                                                   \
    /* Mean over each window; the divisor counts the positions inside the input, or,       \
     * with count_include_pad, inside the padded input (pad = leading, pad_end = trailing). */ \
    GCRT_FN void gcrt_avgpool##S(int64_t NC, const int64_t *in, const int64_t *k, const int64_t *out, \
                         const int64_t *stride, const int64_t *pad, const int64_t *pad_end,   \
                         int count_include_pad, const T *X, T *Y);                            \
    /* Y[p] = mean of X[p, 0..S) for each of NC planes. */                                    \
    GCRT_FN void gcrt_global_avgpool##S(int64_t NC, int64_t S, const T *X, T *Y);                     \
    /* Inference batch norm over X[N,C,S]. */                                                 \
    GCRT_FN void gcrt_batchnorm##S(int64_t N, int64_t C, int64_t S, const T *X, const T *scale,        \
                           const T *B, const T *mean, const T *var, T eps, T *Y);             \
    /* Training batch norm over X[N,C,Sz] with the batch statistics (population variance); \
     * running_* (may be 0) = momentum * mean/var + (1 - momentum) * batch statistic.        \
     * Y may be X. */                                                                         \
    GCRT_FN void gcrt_batchnorm_train##S(int64_t N, int64_t C, int64_t Sz, const T *X, const T *scale, \
                                 const T *B, const T *mean, const T *var, T eps, T momentum,  \
                                 T *Y, T *running_mean, T *running_var);                      \
    /* Softmax / log-softmax of X viewed as [outer, n, inner] along the middle axis. */       \
    GCRT_FN void gcrt_softmax##S(int64_t outer, int64_t n, int64_t inner, const T *X, T *Y);          \
    GCRT_FN void gcrt_logsoftmax##S(int64_t outer, int64_t n, int64_t inner, const T *X, T *Y);       \
    /* Layer norm of X viewed as [outer, inner] over inner. scale/B repeat with periods     \
     * scale_n/b_n dividing inner (inner: a full vector, 1: a scalar); B may be 0;          \
     * mean/invstd ([outer], may be 0) receive the statistics. */                          \
    GCRT_FN void gcrt_layernorm##S(int64_t outer, int64_t inner, const T *X, const T *scale,           \
                           int64_t scale_n, const T *B, int64_t b_n, T eps, T *Y,             \
                           T *mean, T *invstd);

/* The taps r in [0, run) of one output row whose input index i0 + r*step
 * lies in [0, n) form one span [*lo, *hi) (empty: *lo == *hi); the im2col
 * and col2im loops copy it without per-element checks. */
GCRT_FN void gcrt_conv_row_span(int64_t i0, int64_t step, int64_t n, int64_t run, int64_t *lo, int64_t *hi);

GCRT_NN_DECLARE(_f32, float)
GCRT_NN_DECLARE(_f64, double)

/* The fast f32 kernels for a reduction over the last, contiguous axis
 * (gcrt_nn.c: AVX-512F, AVX2+FMA or portable C, float accumulation in a
 * fixed order). Softmax / log-softmax of X viewed as [outer, n] along n: the
 * inner == 1 case of gcrt_softmax_f32 / gcrt_logsoftmax_f32, the same
 * NaN/inf behaviour. Y may be X. */
GCRT_FN void gcrt_softmax_last_f32(int64_t outer, int64_t n, const float *X, float *Y);
GCRT_FN void gcrt_logsoftmax_last_f32(int64_t outer, int64_t n, const float *X, float *Y);
/* Layer norm of X viewed as [outer, n] over n with full-length scale[n] and
 * B[n] (B may be 0) and no statistics outputs: gcrt_layernorm_f32 with
 * scale_n == b_n == n and mean == invstd == 0. Y may be X. */
GCRT_FN void gcrt_layernorm_last_f32(int64_t outer, int64_t n, const float *X, const float *scale,
                                     const float *B, float eps, float *Y);

#endif
