/* gcrt_index.c — index kernels (see gcrt_index.h).
 *
 * Offsets are recomputed per element from row-major coordinates (a few
 * divisions per element), which keeps the kernels free of scratch memory.
 * The TopK order is a heap selection under a total order (value, then
 * index), so ties resolve the same way whatever the algorithm does.
 * Plain C99: no allocation, no globals, no I/O. */
#include "gcrt_index.h"

#include <string.h>

static int64_t load_index(const void *idx, int idx64, int64_t j)
{
    if (idx64) return ((const int64_t *)idx)[j];
    return (int64_t)((const int32_t *)idx)[j];
}

GCRT_FN int64_t gcrt_elements_offset(const void *idx, int idx64, int64_t j, int rank, const int64_t *idx_dims,
                             const int64_t *data_dims, int axis)
{
    int64_t off = 0, stride = 1, rest = j;
    int k;
    for (k = rank - 1; k >= 0; k--) {
        int64_t dim = idx_dims[k] > 0 ? idx_dims[k] : 1;
        int64_t c = rest % dim;
        rest /= dim;
        if (k == axis) {
            c = load_index(idx, idx64, j);
            if (c < 0) c += data_dims[k];
        }
        if (c < 0 || c >= data_dims[k]) return -1;
        off += c * stride;
        stride *= data_dims[k];
    }
    return off;
}

GCRT_FN int64_t gcrt_nd_offset(const void *idx, int idx64, int64_t j, int m, const int64_t *dims, const int64_t *strides)
{
    int64_t off = 0;
    int k;
    for (k = 0; k < m; k++) {
        int64_t c = load_index(idx, idx64, j * m + k);
        if (c < 0) c += dims[k];
        if (c < 0 || c >= dims[k]) return -1;
        off += c * strides[k];
    }
    return off;
}

GCRT_FN void gcrt_trilu(void *dst, const void *src, size_t esize, int64_t batch, int64_t rows, int64_t cols, int64_t k, int upper)
{
    unsigned char *d = (unsigned char *)dst;
    const unsigned char *s = (const unsigned char *)src;
    int64_t b, i;
    size_t row = (size_t)cols * esize;
    for (b = 0; b < batch; b++)
        for (i = 0; i < rows; i++) {
            size_t base = (size_t)(b * rows + i) * row;
            /* kept columns: [lo, hi) */
            int64_t lo = upper ? i + k : 0, hi = upper ? cols : i + k + 1;
            if (lo < 0) lo = 0;
            if (hi > cols) hi = cols;
            if (hi < lo) hi = lo;
            if (lo > cols) lo = hi = cols;
            if (d != s && hi > lo) memcpy(d + base + (size_t)lo * esize, s + base + (size_t)lo * esize, (size_t)(hi - lo) * esize);
            if (lo > 0) memset(d + base, 0, (size_t)lo * esize);
            if (hi < cols) memset(d + base + (size_t)hi * esize, 0, (size_t)(cols - hi) * esize);
        }
}

GCRT_FN void gcrt_tile(void *dst, const void *src, size_t esize, int rank, const int64_t *in_dims, const int64_t *out_dims)
{
    unsigned char *d = (unsigned char *)dst;
    const unsigned char *s = (const unsigned char *)src;
    int64_t oidx[8] = {0, 0, 0, 0, 0, 0, 0, 0}, ist[8], total = 1, e, n, j;
    int k;
    if (rank < 1 || rank > 8) return;
    for (k = rank - 1; k >= 0; k--) {
        ist[k] = total;
        total *= in_dims[k];
    }
    total = 1;
    for (k = 0; k < rank; k++) total *= out_dims[k];
    if (total == 0) return;
    n = out_dims[rank - 1];
    /* one output row at a time: the last axis repeats the input row */
    for (e = 0; e < total; e += n) {
        int64_t off = 0, w = in_dims[rank - 1];
        for (k = 0; k < rank - 1; k++) off += (oidx[k] % in_dims[k]) * ist[k];
        for (j = 0; j < n; j += w) memcpy(d + (size_t)(e + j) * esize, s + (size_t)off * esize, (size_t)w * esize);
        for (k = rank - 2; k >= 0; k--) {
            if (++oidx[k] < out_dims[k]) break;
            oidx[k] = 0;
        }
    }
}

GCRT_FN void gcrt_reverse_sequence(void *dst, const void *src, size_t esize, int64_t d0, int64_t d1, int64_t inner, int batch_axis,
                           const int64_t *lens)
{
    unsigned char *d = (unsigned char *)dst;
    const unsigned char *s = (const unsigned char *)src;
    int64_t tdim = batch_axis == 0 ? d1 : d0, i0, i1;
    size_t row = (size_t)inner * esize;
    for (i0 = 0; i0 < d0; i0++)
        for (i1 = 0; i1 < d1; i1++) {
            int64_t b = batch_axis == 0 ? i0 : i1, t = batch_axis == 0 ? i1 : i0;
            int64_t len = lens[b], st, s0, s1;
            if (len < 0) len = 0;
            if (len > tdim) len = tdim;
            st = t < len ? len - 1 - t : t;
            s0 = batch_axis == 0 ? i0 : st;
            s1 = batch_axis == 0 ? st : i1;
            memcpy(d + (size_t)(i0 * d1 + i1) * row, s + (size_t)(s0 * d1 + s1) * row, row);
        }
}

GCRT_FN void gcrt_fill(void *dst, const void *elem, size_t esize, int64_t n)
{
    unsigned char *d = (unsigned char *)dst;
    int64_t i;
    for (i = 0; i < n; i++) memcpy(d + (size_t)i * esize, elem, esize);
}

/* Whether index a comes before index b in the TopK order. */
static int topk_before(const double *key, int64_t a, int64_t b, int largest)
{
    double x = key[a], y = key[b];
    int xn = x != x, yn = y != y;
    if (xn || yn) {
        if (xn && yn) return a < b;
        return largest ? xn : yn;
    }
    if (x != y) return largest ? x > y : x < y;
    return a < b;
}

/* Restores the heap below position i of h[0..n) whose root is the LAST in order. */
static void sift_down(const double *key, int64_t *h, int64_t n, int64_t i, int largest)
{
    for (;;) {
        int64_t l = 2 * i + 1, r = l + 1, m = i, t;
        if (l < n && topk_before(key, h[m], h[l], largest)) m = l;
        if (r < n && topk_before(key, h[m], h[r], largest)) m = r;
        if (m == i) return;
        t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

GCRT_FN void gcrt_topk_order(const double *keys, int64_t *order, int64_t n, int64_t k, int largest)
{
    int64_t i, j, t;
    if (k <= 0 || n <= 0) return;
    if (k > n) k = n;
    /* a heap of the best k so far with the worst at the root */
    for (i = 0; i < k; i++) order[i] = i;
    for (i = k / 2 - 1; i >= 0; i--) sift_down(keys, order, k, i, largest);
    for (j = k; j < n; j++)
        if (topk_before(keys, j, order[0], largest)) {
            order[0] = j;
            sift_down(keys, order, k, 0, largest);
        }
    /* heapsort: repeatedly move the worst to the end */
    for (i = k - 1; i > 0; i--) {
        t = order[0];
        order[0] = order[i];
        order[i] = t;
        sift_down(keys, order, i, 0, largest);
    }
}
