/* gcrt_index.h — index kernels for generated code: offsets of data-dependent
 * gathers and scatters (GatherElements, ScatterElements, GatherND,
 * ScatterND), Trilu, Tile, ReverseSequence, a fill and the TopK order.
 *
 * Index tensors are int32 or int64 (`idx64` selects); a negative index
 * counts from the end of its axis, and an index still out of range yields
 * offset -1 so that the caller skips the element (never reads or writes out
 * of bounds). Data-movement kernels copy raw elements of `esize` bytes and
 * serve every dtype. Plain C99: no allocation, no globals, no I/O. */
#ifndef GCRT_INDEX_H
#define GCRT_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include "gcrt_base.h"

/* GatherElements / ScatterElements: element j of indices (shape idx_dims,
 * rank `rank`) addresses data (shape data_dims) at its own coordinates with
 * the one on `axis` replaced by its value. Returns the data element offset,
 * or -1 when the index or a coordinate is out of range. */
GCRT_FN int64_t gcrt_elements_offset(const void *idx, int idx64, int64_t j, int rank, const int64_t *idx_dims,
                             const int64_t *data_dims, int axis);

/* GatherND / ScatterND: the m values of index tuple j (idx[j*m .. j*m+m))
 * address dims of sizes dims[0..m) with element strides strides[0..m).
 * Returns sum(index_k * strides[k]) or -1 when an index is out of range. */
GCRT_FN int64_t gcrt_nd_offset(const void *idx, int idx64, int64_t j, int m, const int64_t *dims, const int64_t *strides);

/* Trilu over `batch` matrices rows x cols: keeps element (i, j) when
 * j - i >= k (upper) or j - i <= k (lower), zeroes it otherwise. dst may
 * equal src. */
GCRT_FN void gcrt_trilu(void *dst, const void *src, size_t esize, int64_t batch, int64_t rows, int64_t cols, int64_t k, int upper);

/* Tile: out index o reads in index o % in_dims on every axis (rank 1..8). */
GCRT_FN void gcrt_tile(void *dst, const void *src, size_t esize, int rank, const int64_t *in_dims, const int64_t *out_dims);

/* ReverseSequence over x viewed as [d0, d1, inner] with the batch on axis
 * batch_axis (0 or 1) and time on the other: the first lens[b] steps of
 * batch b are reversed, the rest copied. Lengths are clamped to [0, T]. */
GCRT_FN void gcrt_reverse_sequence(void *dst, const void *src, size_t esize, int64_t d0, int64_t d1, int64_t inner, int batch_axis,
                           const int64_t *lens);

/* dst[i] = *elem for i < n (elements of esize bytes). */
GCRT_FN void gcrt_fill(void *dst, const void *elem, size_t esize, int64_t n);

/* TopK order of n keys: order[0..k) receives the indices of the k largest
 * (largest != 0) or smallest keys, best first; NaN counts as the largest
 * value and ties go to the lower index. order must have room for n. */
GCRT_FN void gcrt_topk_order(const double *keys, int64_t *order, int64_t n, int64_t k, int largest);

#endif
