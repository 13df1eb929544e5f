/* gcrt_shape.h — data-movement kernels for generated code: one strided box
 * copy (Transpose, Slice, Expand, Concat, Split), Gather and Pad. Every
 * kernel moves raw elements of `esize` bytes, so one kernel serves every
 * dtype. Strides and offsets are in elements and may be 0 or negative. */
#ifndef GCRT_SHAPE_H
#define GCRT_SHAPE_H

#include <stddef.h>
#include <stdint.h>

#include "gcrt_base.h"

/* For every index i of the box `dims` (rank 0..8): element at
 * sum(i_k * dst_st[k]) of dst = element at sum(i_k * src_st[k]) of src. */
GCRT_FN void gcrt_strided_copy(void *dst, const int64_t *dst_st, const void *src, const int64_t *src_st,
                       const int64_t *dims, int rank, size_t esize);

/* Gather along one axis: src viewed as [outer, axis_dim, inner], dst as
 * [outer, n_idx, inner]. Negative indices count from the end; an index
 * still out of range writes zeros (never reads out of bounds). */
GCRT_FN void gcrt_gather_i64(void *dst, const void *src, size_t esize, int64_t outer, int64_t axis_dim, int64_t inner,
                     const int64_t *idx, int64_t n_idx);
GCRT_FN void gcrt_gather_i32(void *dst, const void *src, size_t esize, int64_t outer, int64_t axis_dim, int64_t inner,
                     const int32_t *idx, int64_t n_idx);

/* Pad modes (ONNX Pad `mode`). */
enum { GCRT_PAD_CONSTANT = 0, GCRT_PAD_REFLECT = 1, GCRT_PAD_EDGE = 2 };

/* Output element at index o reads input index o - pad_begin on every axis;
 * outside the input it takes *cval (constant; zeros when cval is NULL), the
 * mirrored element without repeating the edge (reflect, numpy semantics,
 * repeated for large pads) or the nearest edge element (edge). */
GCRT_FN void gcrt_pad(void *dst, const void *src, const void *cval, size_t esize, int rank, const int64_t *in_dims,
              const int64_t *out_dims, const int64_t *pad_begin, int mode);

#endif
