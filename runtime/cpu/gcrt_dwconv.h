/* gcrt_dwconv.h — the depthwise 2-D convolution of graphc's fast CPU kernels.
 *
 * A depthwise convolution (group == C == output channels) filters every
 * channel by its own small KHxKW kernel: a few multiply-adds per output
 * and a whole tensor read and written, so it is bound by memory traffic,
 * not by arithmetic. The generic conv (runtime/c/gcrt_nn.c) walks it with
 * bounds checks on every tap; this kernel streams each (image, channel)
 * plane once, row by row, vectorized across output columns, and applies
 * the epilogue (bias, residual, activation) before the row leaves the
 * cache. See gcrt_dwconv.c for the algorithm.
 *
 * Tensors are NCHW f32. Kernel sizes, strides and dilations are >= 1, pads
 * >= 0 (any size relative to the image), OH/OW >= 0. Y must not overlap X,
 * Wt or epi->res. Bit-for-bit the same result for any thread count (not
 * across ISAs: the SIMD paths fuse multiply-adds, portable C does not).
 */
#ifndef GCRT_DWCONV_H
#define GCRT_DWCONV_H

#include <stdint.h>

#include "gcrt_cpu.h"

/* Depthwise 2-D convolution in NCHW, f32: one KHxKW filter per channel (group == C == output channels).
 * X [N,C,H,W], Wt [C,1,KH,KW] (row-major as ONNX stores it), Y [N,C,OH,OW]; strides sh,sw; dilations dh,dw;
 * top/left pads pt,pl (bottom/right pads are whatever OH/OW imply); epi: bias per channel (may be NULL),
 * res (NULL or a tensor of Y's shape, added after the bias), act (GCRT_ACT_NONE/RELU/CLIP with lo/hi),
 * epi itself may be NULL = no epilogue. pool may be NULL (serial). */
GCRT_FN void gcrt_dwconv2d_f32(int64_t N, int64_t C, int64_t H, int64_t W, int64_t OH, int64_t OW,
                               int64_t KH, int64_t KW, int64_t sh, int64_t sw, int64_t dh, int64_t dw,
                               int64_t pt, int64_t pl, const float *X, const float *Wt, const GcrtEpi *epi,
                               float *Y, const GcThreadPool *pool);

#endif
