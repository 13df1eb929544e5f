/* gcrt_pool.h — max pooling with argmax indices for float and 8-bit integer
 * tensors, and its inverse, max unpooling. Plain C99; every size is an
 * explicit argument; no allocation, no I/O, no global state.
 *
 * Geometry follows gcrt_nn.h: row-major NC<spatial> tensors, spatial sizes
 * as 3-element arrays (depth, height, width) with unit leading dims (and
 * zero pads) for 1-D and 2-D ops.
 */
#ifndef GCRT_POOL_H
#define GCRT_POOL_H

#include <stdint.h>

#include "gcrt_base.h"

#define GCRT_POOL_DECLARE(S, T)                                                                   \
    /* Max over each window (NaN never wins) into Y; when Idx is not 0, Idx receives the flat index \
     * of the first maximum over the whole input: plane * (n*C + c) + spatial offset, the       \
     * offset row major, or column major when col_major (ONNX storage_order 1). */              \
    GCRT_FN void gcrt_maxpool_idx##S(int64_t NC, const int64_t *in, const int64_t *k,                     \
                             const int64_t *out, const int64_t *stride, const int64_t *dil,       \
                             const int64_t *pad, int col_major, const T *X, T *Y, int64_t *Idx);    \
    /* Y[NC, dst] = 0, then X[i] goes to the coordinates that flat index Idx[i] has in          \
     * [NC, src]; indices outside [NC, src] and coordinates outside dst are skipped. */        \
    GCRT_FN void gcrt_maxunpool##S(int64_t n_x, const T *X, const int64_t *Idx, int64_t NC,              \
                           const int64_t *src, const int64_t *dst, T *Y);

GCRT_POOL_DECLARE(_f32, float)
GCRT_POOL_DECLARE(_f64, double)
GCRT_POOL_DECLARE(_u8, uint8_t)
GCRT_POOL_DECLARE(_i8, int8_t)

#endif
