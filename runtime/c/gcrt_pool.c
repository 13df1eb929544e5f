/* gcrt_pool.c — max pooling with indices and max unpooling (gcrt_pool.h).
 *
 * Written once over an element type T and a name suffix S: the file
 * includes itself once per type (f32, f64, u8, i8) with GCRT_POOL_TEMPLATE
 * defined. Each window starts from its first tap inside the input, and a
 * later tap replaces the maximum only when strictly greater, so ties keep
 * the first position; a NaN maximum yields to any later number (as the
 * reference evaluation in ir/ops/nn.c). Column-major spatial offsets
 * (storage_order 1) run depth fastest: offset = (w * H + h) * D + d.
 */
#ifndef GCRT_POOL_TEMPLATE

#include "gcrt_pool.h"

#define GCRT_POOL_TEMPLATE
#define T float
#define S(name) name##_f32
#define GCRT_IS_NAN(v) ((v) != (v))
#include "gcrt_pool.c"
#undef T
#undef S

#define T double
#define S(name) name##_f64
#include "gcrt_pool.c"
#undef T
#undef S
#undef GCRT_IS_NAN

/* integers are never NaN (and `v != v` would be a warning) */
#define GCRT_IS_NAN(v) 0

#define T uint8_t
#define S(name) name##_u8
#include "gcrt_pool.c"
#undef T
#undef S

#define T int8_t
#define S(name) name##_i8
#include "gcrt_pool.c"
#undef T
#undef S

#else /* GCRT_POOL_TEMPLATE: the kernels for one element type */

GCRT_FN void S(gcrt_maxpool_idx)(int64_t NC, const int64_t *in, const int64_t *k, const int64_t *out,
                         const int64_t *stride, const int64_t *dil, const int64_t *pad, int col_major,
                         const T *X, T *Y, int64_t *Idx)
{
    int64_t plane = in[0] * in[1] * in[2], P = out[0] * out[1] * out[2];
    int64_t q, od, oh, ow, kd, kh, kw;
    for (q = 0; q < NC; q++) {
        const T *x = X + q * plane;
        for (od = 0; od < out[0]; od++)
            for (oh = 0; oh < out[1]; oh++)
                for (ow = 0; ow < out[2]; ow++) {
                    int64_t o = q * P + (od * out[1] + oh) * out[2] + ow, arg = 0;
                    int found = 0;
                    T best = 0;
                    for (kd = 0; kd < k[0]; kd++) {
                        int64_t id = od * stride[0] - pad[0] + kd * dil[0];
                        if (id < 0 || id >= in[0]) continue;
                        for (kh = 0; kh < k[1]; kh++) {
                            int64_t ih = oh * stride[1] - pad[1] + kh * dil[1];
                            if (ih < 0 || ih >= in[1]) continue;
                            for (kw = 0; kw < k[2]; kw++) {
                                int64_t iw = ow * stride[2] - pad[2] + kw * dil[2], off;
                                if (iw < 0 || iw >= in[2]) continue;
                                off = (id * in[1] + ih) * in[2] + iw;
                                /* a NaN first tap yields to any later number */
                                if (!found || x[off] > best || (GCRT_IS_NAN(best) && !GCRT_IS_NAN(x[off]))) {
                                    best = x[off];
                                    arg = col_major ? (iw * in[1] + ih) * in[0] + id : off;
                                }
                                found = 1;
                            }
                        }
                    }
                    Y[o] = best;
                    if (Idx) Idx[o] = q * plane + arg;
                }
    }
}

GCRT_FN void S(gcrt_maxunpool)(int64_t n_x, const T *X, const int64_t *Idx, int64_t NC, const int64_t *src,
                       const int64_t *dst, T *Y)
{
    int64_t psrc = src[0] * src[1] * src[2], pdst = dst[0] * dst[1] * dst[2], i, r, cd, ch, cw;
    for (i = 0; i < NC * pdst; i++) Y[i] = 0;
    for (i = 0; i < n_x; i++) {
        if (Idx[i] < 0 || Idx[i] >= NC * psrc) continue;
        r = Idx[i] % psrc;
        cw = r % src[2];
        ch = (r / src[2]) % src[1];
        cd = r / (src[1] * src[2]);
        if (cd < dst[0] && ch < dst[1] && cw < dst[2])
            Y[(Idx[i] / psrc) * pdst + (cd * dst[1] + ch) * dst[2] + cw] = X[i];
    }
}

#endif /* GCRT_POOL_TEMPLATE */
