/* gcrt_resize.c — Resize's tap tables at run time (gcrt_resize.h).
 *
 * gcrt_resize_tap1 is the runtime twin of the compiler's plan_taps
 * (ir/ops/vision.c): the same coordinate transforms, nearest rounding,
 * linear and cubic (Keys, coefficient a) weights, exclude_outside
 * renormalization, clamping and merging of equal clamped indices, in
 * double, so compiled code with runtime scales samples exactly where the
 * interpreter does. The weights are stored in the element type.
 */
#include "gcrt_resize.h"

#include <math.h>

/* The taps of output index o along an axis of `in` inputs (gcrt_resize_taps_*;
 * the compiler's plan_taps in ir/ops/vision.c computes the same at compile
 * time): their count (zero weights dropped, equal clamped indices merged),
 * 0 outside a tf_crop_and_resize roi [rb, re]. */
static int gcrt_resize_tap1(int64_t in, int64_t o, double s, double rb, double re, int mode, int ctm, int nearest, double A,
                            int exclude, int64_t *idx, double *w)
{
    double ow = s * (double)in, x, fo = (double)o, base, t, cw[4], u, v, z, sum;
    int64_t b, raw[4];
    int cnt, j, k = 0;
    switch (ctm) {
    case GCRT_RESIZE_ASYMMETRIC: x = fo / s; break;
    case GCRT_RESIZE_ALIGN_CORNERS: x = ow == 1 ? 0 : fo * (double)(in - 1) / (ow - 1); break;
    case GCRT_RESIZE_PYTORCH_HALF_PIXEL: x = ow == 1 ? -0.5 : (fo + 0.5) / s - 0.5; break;
    case GCRT_RESIZE_TF_CROP:
        x = ow == 1 ? (re - rb) * (double)(in - 1) / 2 : fo * (re - rb) * (double)(in - 1) / (ow - 1);
        x += rb * (double)(in - 1);
        if (x < 0 || x > (double)(in - 1)) return 0;
        break;
    default: x = (fo + 0.5) / s - 0.5; break;
    }
    base = ceil(x) - 1;
    t = x - base;
    b = (int64_t)base;
    if (mode == GCRT_RESIZE_NEAREST) {
        int up;
        if (t == 1) up = 1;
        else if (nearest == GCRT_RESIZE_ROUND_FLOOR) up = t > 0.5;
        else if (nearest == GCRT_RESIZE_ROUND_CEIL) up = t >= 0.5;
        else up = nearest == GCRT_RESIZE_CEIL;
        raw[0] = b + up;
        cw[0] = 1;
        cnt = 1;
    } else if (mode == GCRT_RESIZE_LINEAR) {
        raw[0] = b;
        raw[1] = b + 1;
        cw[0] = 1 - t;
        cw[1] = t;
        cnt = 2;
    } else {
        u = t + 1;
        v = 1 - t;
        z = 2 - t;
        cw[0] = ((A * u - 5 * A) * u + 8 * A) * u - 4 * A;
        cw[1] = ((A + 2) * t - (A + 3)) * t * t + 1;
        cw[2] = ((A + 2) * v - (A + 3)) * v * v + 1;
        cw[3] = ((A * z - 5 * A) * z + 8 * A) * z - 4 * A;
        for (j = 0; j < 4; j++) raw[j] = b - 1 + j;
        cnt = 4;
        if (exclude) {
            sum = 0;
            for (j = 0; j < 4; j++) {
                if (raw[j] < 0 || raw[j] >= in) cw[j] = 0;
                sum += cw[j];
            }
            for (j = 0; j < 4; j++) cw[j] /= sum;
        }
    }
    for (j = 0; j < cnt; j++) {
        int64_t c;
        if (cw[j] == 0) continue;
        c = raw[j] < 0 ? 0 : raw[j] >= in ? in - 1 : raw[j];
        if (k > 0 && idx[k - 1] == c) {
            w[k - 1] += cw[j];
            continue;
        }
        idx[k] = c;
        w[k++] = cw[j];
    }
    if (k == 0) {
        idx[0] = 0;
        w[0] = 0;
        k = 1;
    }
    return k;
}

#define GCRT_RESIZE_TAPS(S, T) \
GCRT_FN void gcrt_resize_taps##S(int rank, const int64_t *in, const int64_t *out, const double *scale, const double *roi, int mode, \
                         int ctm, int nearest, double a, int exclude, const int64_t *K, int64_t *idx, T *w) \
{ \
    int64_t base = 0, o, ti[4]; \
    double tw[4]; \
    int ax, j, k; \
    for (ax = 0; ax < rank; ax++) { \
        for (o = 0; o < out[ax]; o++, base += K[ax]) { \
            k = gcrt_resize_tap1(in[ax], o, scale[ax], roi[ax], roi[rank + ax], mode, ctm, nearest, a, exclude, ti, tw); \
            for (j = 0; j < K[ax]; j++) { \
                idx[base + j] = k == 0 ? -1 : j < k ? ti[j] : ti[0]; \
                w[base + j] = (T)(k > 0 && j < k ? tw[j] : 0); \
            } \
        } \
    } \
}

GCRT_RESIZE_TAPS(_f32, float)
GCRT_RESIZE_TAPS(_f64, double)
