/* gcrt_grad.h — backward kernels of the grad op family (ir/ops/grad.c):
 * the gradients of conv (data and filter), max and average pooling,
 * softmax, log-softmax, layer norm and training-mode batch norm. Plain C99;
 * every size is an explicit argument; no allocation, no I/O, no global
 * state.
 *
 * Geometry follows gcrt_nn.h: row-major NC<spatial> tensors, spatial sizes
 * as 3-element arrays (depth, height, width) with unit leading dims (and
 * zero pads) for 1-D and 2-D ops; `in` is the forward input's spatial size,
 * `out` the forward output's (dY's). Each kernel exists for float (_f32)
 * and double (_f64).
 */
#ifndef GCRT_GRAD_H
#define GCRT_GRAD_H

#include <stdint.h>

#include "gcrt_base.h"

#define GCRT_GRAD_DECLARE(S, T)                                                                          \
    /* dX[N,C,in] of Y = conv(X, W[M,C/group,k]) given dY[N,M,out]; pad = leading pads.     \
     * ws: scratch of C/group*prod(k)*cols elements for tiles of `cols` output positions      \
     * (gcrt_conv's im2col tile); unused (may be 0) for a 1x1 unit-stride unpadded conv. */   \
    GCRT_FN void gcrt_conv_grad_data##S(int64_t N, int64_t C, int64_t M, int64_t group, const int64_t *in, \
                                        const int64_t *k, const int64_t *out, const int64_t *stride,     \
                                        const int64_t *dil, const int64_t *pad, const T *dY, const T *W,  \
                                        T *dX, T *ws, int64_t cols);                                     \
    /* dW[M,C/group,k] of the same conv given X[N,C,in] and dY[N,M,out]; ws and cols as above. */   \
    GCRT_FN void gcrt_conv_grad_filter##S(int64_t N, int64_t C, int64_t M, int64_t group,                \
                                          const int64_t *in, const int64_t *k, const int64_t *out,       \
                                          const int64_t *stride, const int64_t *dil, const int64_t *pad, \
                                          const T *X, const T *dY, T *dW, T *ws, int64_t cols);          \
    /* dX of max pooling over NC planes: each dY goes to the first maximum of its window in    \
     * scan order (gcrt_maxpool_idx's choice); overlapping windows add up. */                    \
    GCRT_FN void gcrt_maxpool_grad##S(int64_t NC, const int64_t *in, const int64_t *k, const int64_t *out, \
                                      const int64_t *stride, const int64_t *dil, const int64_t *pad,      \
                                      const T *X, const T *dY, T *dX);                                   \
    /* dX of average pooling: each dY divided by its window's divisor (gcrt_avgpool's) goes to   \
     * every position of the window inside X. */                                                 \
    GCRT_FN void gcrt_avgpool_grad##S(int64_t NC, const int64_t *in, const int64_t *k, const int64_t *out, \
                                      const int64_t *stride, const int64_t *pad, const int64_t *pad_end,  \
                                      int count_include_pad, const T *dY, T *dX);                        \
    /* Softmax / log-softmax backward over [outer, n, inner] along the middle axis, from the     \
     * forward output Y: dX = Y * (dY - sum(dY * Y)), dX = dY - exp(Y) * sum(dY). dX may be dY. */ \
    GCRT_FN void gcrt_softmax_grad##S(int64_t outer, int64_t n, int64_t inner, const T *dY, const T *Y,  \
                                      T *dX);                                                            \
    GCRT_FN void gcrt_logsoftmax_grad##S(int64_t outer, int64_t n, int64_t inner, const T *dY,           \
                                         const T *Y, T *dX);                                             \
    /* Layer norm backward over rows X[outer, inner] with scale[inner]; dScale/dBias ([inner],   \
     * may be 0) receive sum over rows of dY * xhat and dY. */                                   \
    GCRT_FN void gcrt_layernorm_grad##S(int64_t outer, int64_t inner, const T *dY, const T *X,           \
                                        const T *scale, double eps, T *dX, T *dScale, T *dBias);        \
    /* Training-mode batch norm backward over X[N,C,Sz] (batch statistics, population         \
     * variance); dScale/dBias ([C], may be 0). */                                              \
    GCRT_FN void gcrt_batchnorm_grad##S(int64_t N, int64_t C, int64_t Sz, const T *dY, const T *X,       \
                                        const T *scale, double eps, T *dX, T *dScale, T *dBias);

GCRT_GRAD_DECLARE(_f32, float)
GCRT_GRAD_DECLARE(_f64, double)

#endif
