/* gcrt_maxpool.h — 2-D max pooling of graphc's fast CPU kernels.
 *
 * ResNet's stem pools 64 planes of 112x112 with 3x3 windows at stride 2;
 * the generic kernel (runtime/c/gcrt_nn.c) tests every tap against the
 * image bounds and runs scalar, serially (2.3 ms of ResNet-18's 28 ms).
 * This one splits the planes over the thread pool and computes each output
 * row in two vectorized passes without bounds checks (gcrt_maxpool.c).
 *
 * Tensors are NCHW f32 (NC = N*C planes). Kernel sizes, strides and
 * dilations are >= 1, pads >= 0 (bottom/right pads are whatever OH/OW
 * imply), OH/OW >= 0. Y must not overlap X. The value of each output is the
 * generic kernel's: the largest tap inside the image, NaN taps ignored,
 * -inf when there is none (the sign of a zero maximum may differ when a
 * window holds both +0 and -0). Bit-for-bit the same for any thread count.
 */
#ifndef GCRT_MAXPOOL_H
#define GCRT_MAXPOOL_H

#include <stdint.h>

#include "gcrt_cpu.h"

/* Max pooling of X [NC,H,W] into Y [NC,OH,OW]: window KHxKW, strides sh,sw, dilations dh,dw, top/left
 * pads pt,pl. pool may be NULL (serial). */
GCRT_FN void gcrt_maxpool2d_f32(int64_t NC, int64_t H, int64_t W, int64_t OH, int64_t OW, int64_t KH, int64_t KW,
                                int64_t sh, int64_t sw, int64_t dh, int64_t dw, int64_t pt, int64_t pl,
                                const float *X, float *Y, const GcThreadPool *pool);

#endif
