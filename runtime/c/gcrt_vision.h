/* gcrt_vision.h — vision kernels the generated code calls: transposed
 * convolution, global max pooling, instance and local-response
 * normalization, mean-variance normalization, hardmax, separable resize
 * (nearest/linear/cubic through precomputed tap tables), RoiAlign and the
 * depth/space block rearrangements. Plain C99; every size is an explicit
 * argument; no allocation, no I/O, no global state.
 *
 * Tensors are row-major. ConvTranspose geometry is given as 3-element
 * arrays (depth, height, width) like gcrt_nn.h: lower ranks pass 1 for the
 * missing sizes/kernels/strides/dilations and 0 for their pads. Typed
 * kernels exist for float (_f32) and double (_f64); the block
 * rearrangements move elements of any size.
 */
#ifndef GCRT_VISION_H
#define GCRT_VISION_H

#include <stdint.h>

#include "gcrt_base.h"

#define GCRT_VISION_DECLARE(S, T)                                                              \
    /* Y[N,M,out] = B[m] (or 0) + sum of X[n,c,i]*W[c,m%(M/group),t] over the taps with        \
     * i*stride - pad + t*dil == o; channels c of the group of m. pad may be negative. */     \
    GCRT_FN void gcrt_convtranspose##S(int64_t N, int64_t C, int64_t M, int64_t group, const int64_t *in, \
                               const int64_t *k, const int64_t *out, const int64_t *stride,   \
                               const int64_t *dil, const int64_t *pad, const T *X, const T *W, \
                               const T *B, T *Y);                                              \
    /* Y[p] = max of X[p, 0..S) for each of NC planes (S > 0). */                             \
    GCRT_FN void gcrt_global_maxpool##S(int64_t NC, int64_t S, const T *X, T *Y);                      \
    /* Instance norm of X[N,C,S] over S with per-channel scale and B. */                      \
    GCRT_FN void gcrt_instancenorm##S(int64_t N, int64_t C, int64_t S, const T *X, const T *scale,      \
                              const T *B, T eps, T *Y);                                        \
    /* LRN across channels of X[N,C,S]. */                                                   \
    GCRT_FN void gcrt_lrn##S(int64_t N, int64_t C, int64_t S, int64_t size, double alpha, double beta, \
                     double bias, const T *X, T *Y);                                           \
    /* Mean-variance normalization of X[dims] over the axes with mask[a] != 0. */           \
    GCRT_FN void gcrt_mvn##S(int rank, const int64_t *dims, const int *mask, const T *X, T *Y);        \
    /* One-hot of the first maximum along the middle axis of X[outer, n, inner]. */          \
    GCRT_FN void gcrt_hardmax##S(int64_t outer, int64_t n, int64_t inner, const T *X, T *Y);          \
    /* Separable resize of X[in] into Y[out] (rank <= 8). Axis a has K[a] taps per output     \
     * index; its tables start after those of the earlier axes (out[b]*K[b] entries each):   \
     * idx = clamped input index, w = weight; idx < 0 on an output index's first tap marks    \
     * it outside the crop, where Y = extrap. */                                             \
    GCRT_FN void gcrt_resize##S(int rank, const int64_t *in, const int64_t *out, const int64_t *K,    \
                        const int64_t *idx, const T *w, T extrap, const T *X, T *Y);         \
    /* RoiAlign (ONNX opset 16) of X[N,C,H,W] over the boxes rois[R,4] (x1, y1, x2, y2) of    \
     * images bidx[R] into Y[R,C,oh,ow]; sr = sampling_ratio (0: adaptive), half_pixel or      \
     * output_half_pixel, average or max pooling. A batch index outside [0, N) gives 0s. */  \
    GCRT_FN void gcrt_roialign##S(int64_t N, int64_t C, int64_t H, int64_t W, int64_t R, int64_t oh,     \
                          int64_t ow, int64_t sr, double scale, int half_pixel, int max_mode,  \
                          const T *X, const T *rois, const int64_t *bidx, T *Y);

GCRT_VISION_DECLARE(_f32, float)
GCRT_VISION_DECLARE(_f64, double)

/* DepthToSpace of X[N,C,H,W] into Y[N,C/b^2,H*b,W*b] (crd: CRD mode, else
 * DCR); elements of esize bytes. */
GCRT_FN void gcrt_depth_to_space(int64_t esize, int64_t N, int64_t C, int64_t H, int64_t W, int64_t b, int crd,
                         const void *X, void *Y);
/* SpaceToDepth of X[N,C,H,W] into Y[N,C*b^2,H/b,W/b]. */
GCRT_FN void gcrt_space_to_depth(int64_t esize, int64_t N, int64_t C, int64_t H, int64_t W, int64_t b,
                         const void *X, void *Y);

#endif
