/* gcrt_shape.c — data-movement kernels (see gcrt_shape.h).
 *
 * All kernels copy raw elements by size, so they serve every dtype. The box
 * copy walks all but the last axis with an odometer and copies the last axis
 * as one memcpy when both sides are contiguous there, element by element
 * otherwise. Plain C99: no allocation, no globals, no I/O. */
#include "gcrt_shape.h"

#include <string.h>

/* Copies one element of esize bytes (fixed-size fast paths). */
static void copy_elem(unsigned char *d, const unsigned char *s, size_t esize)
{
    switch (esize) {
    case 1: *d = *s; break;
    case 2: memcpy(d, s, 2); break;
    case 4: memcpy(d, s, 4); break;
    case 8: memcpy(d, s, 8); break;
    default: memcpy(d, s, esize); break;
    }
}

/* The transpose of 4-byte elements: d[i*dr + j] = s[i + j*sr] for i < ni,
 * j < nj, in GCRT_TILE x GCRT_TILE blocks, so that the strided side of
 * the copy reuses each cache line it loads across a block's rows. */
#define GCRT_TILE 16
static void transpose4(unsigned char *d, int64_t dr, const unsigned char *s, int64_t sr, int64_t ni, int64_t nj)
{
    int64_t i0, j0, i, j;
    for (i0 = 0; i0 < ni; i0 += GCRT_TILE) {
        const int64_t i1 = i0 + GCRT_TILE < ni ? i0 + GCRT_TILE : ni;
        for (j0 = 0; j0 < nj; j0 += GCRT_TILE) {
            const int64_t j1 = j0 + GCRT_TILE < nj ? j0 + GCRT_TILE : nj;
            for (i = i0; i < i1; i++)
                for (j = j0; j < j1; j++) memcpy(d + (i * dr + j) * 4, s + (i + j * sr) * 4, 4);
        }
    }
}

GCRT_FN void gcrt_strided_copy(void *dst, const int64_t *dst_st, const void *src, const int64_t *src_st,
                       const int64_t *dims, int rank, size_t esize)
{
    unsigned char *d = (unsigned char *)dst;
    const unsigned char *s = (const unsigned char *)src;
    int64_t idx[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    int64_t doff = 0, soff = 0, n, ds, ss, j;
    int k, tr;
    if (rank <= 0) {
        copy_elem(d, s, esize);
        return;
    }
    for (k = 0; k < rank; k++)
        if (dims[k] <= 0) return;
    n = dims[rank - 1];
    ds = dst_st[rank - 1];
    ss = src_st[rank - 1];
    /* the last two axes a transpose of 4-byte elements (each side contiguous
     * along one of them): blocked, and the odometer below walks the axes
     * before them */
    tr = rank >= 2 && esize == 4 && ds == 1 && src_st[rank - 2] == 1 && ss != 1 && n >= GCRT_TILE &&
         dims[rank - 2] >= GCRT_TILE;
    if (tr) rank--;
    for (;;) {
        if (tr) {
            transpose4(d + doff * 4, dst_st[rank - 1], s + soff * 4, ss, dims[rank - 1], n);
        } else if (ds == 1 && ss == 1) {
            memcpy(d + doff * (int64_t)esize, s + soff * (int64_t)esize, (size_t)n * esize);
        } else {
            for (j = 0; j < n; j++)
                copy_elem(d + (doff + j * ds) * (int64_t)esize, s + (soff + j * ss) * (int64_t)esize, esize);
        }
        for (k = rank - 2; k >= 0; k--) {
            doff += dst_st[k];
            soff += src_st[k];
            if (++idx[k] < dims[k]) break;
            doff -= dst_st[k] * idx[k];
            soff -= src_st[k] * idx[k];
            idx[k] = 0;
        }
        if (k < 0) return;
    }
}

#define GCRT_GATHER_BODY                                                                  \
    unsigned char *d = (unsigned char *)dst;                                              \
    const unsigned char *s = (const unsigned char *)src;                                  \
    size_t row = (size_t)inner * esize;                                                   \
    int64_t o, j;                                                                         \
    for (o = 0; o < outer; o++)                                                           \
        for (j = 0; j < n_idx; j++) {                                                     \
            int64_t v = (int64_t)idx[j];                                                  \
            unsigned char *out = d + (size_t)(o * n_idx + j) * row;                       \
            if (v < 0) v += axis_dim;                                                     \
            if (v < 0 || v >= axis_dim) memset(out, 0, row);                              \
            else memcpy(out, s + (size_t)(o * axis_dim + v) * row, row);                  \
        }

GCRT_FN void gcrt_gather_i64(void *dst, const void *src, size_t esize, int64_t outer, int64_t axis_dim, int64_t inner,
                     const int64_t *idx, int64_t n_idx)
{
    GCRT_GATHER_BODY
}

GCRT_FN void gcrt_gather_i32(void *dst, const void *src, size_t esize, int64_t outer, int64_t axis_dim, int64_t inner,
                     const int32_t *idx, int64_t n_idx)
{
    GCRT_GATHER_BODY
}

/* Input index along an axis of size dim for j = o - pad_begin; -1 means
 * "constant value". */
static int64_t pad_src(int64_t j, int64_t dim, int mode)
{
    int64_t period, m;
    if (j >= 0 && j < dim) return j;
    if (mode == GCRT_PAD_CONSTANT || dim <= 0) return -1;
    if (mode == GCRT_PAD_EDGE || dim == 1) return j < 0 ? 0 : dim - 1;
    period = 2 * (dim - 1);
    m = j % period;
    if (m < 0) m += period;
    return m < dim ? m : period - m;
}

GCRT_FN void gcrt_pad(void *dst, const void *src, const void *cval, size_t esize, int rank, const int64_t *in_dims,
              const int64_t *out_dims, const int64_t *pad_begin, int mode)
{
    unsigned char *d = (unsigned char *)dst;
    const unsigned char *s = (const unsigned char *)src;
    int64_t idx[8] = {0, 0, 0, 0, 0, 0, 0, 0}, ist[8];
    int64_t total = 1, e, acc = 1;
    int k;
    for (k = rank - 1; k >= 0; k--) {
        ist[k] = acc;
        acc *= in_dims[k];
        total *= out_dims[k];
    }
    for (e = 0; e < total; e++) {
        int64_t off = 0;
        unsigned char *out = d + (size_t)e * esize;
        for (k = 0; k < rank && off >= 0; k++) {
            int64_t j = pad_src(idx[k] - pad_begin[k], in_dims[k], mode);
            off = j < 0 ? -1 : off + j * ist[k];
        }
        if (off >= 0) copy_elem(out, s + (size_t)off * esize, esize);
        else if (cval) copy_elem(out, (const unsigned char *)cval, esize);
        else memset(out, 0, esize);
        for (k = rank - 1; k >= 0; k--) {
            if (++idx[k] < out_dims[k]) break;
            idx[k] = 0;
        }
    }
}
