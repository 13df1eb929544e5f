/* gcrt_vision.c — vision kernels (see gcrt_vision.h).
 *
 * Like gcrt_nn.c, the typed kernels are written once over an element type T
 * and a name suffix S: the file includes itself twice with
 * GCRT_VISION_TEMPLATE defined, for float (_f32) and double (_f64).
 *
 * ConvTranspose scatters: Y starts at the bias and every input element adds
 * its products with the kernel taps into the output positions they reach,
 * so no scratch is needed. Resize reads tap tables that the compiler
 * computed (coordinate transforms, rounding and cubic weights all live in
 * the compiler), and sums the tensor product of the per-axis taps for each
 * output element. RoiAlign samples each bin on a regular grid with the
 * ONNX reference's clamping and bilinear taps (the same algorithm as the
 * reference evaluation in ir/ops/vision.c). The norm statistics accumulate
 * in T with compensated sums (gcrt_base.h), resize in T (a few taps per
 * output, weights in T); LRN window sums and RoiAlign (sums and coordinate
 * math) in double.
 */
#ifndef GCRT_VISION_TEMPLATE

#include "gcrt_vision.h"

#include <math.h>
#include <string.h>

#define GCRT_VISION_MAX_RANK 8

/* Copies element si of src to element di of dst, elements of es bytes. */
static void gcrt_vision_move(unsigned char *dst, int64_t di, const unsigned char *src, int64_t si, int64_t es)
{
    memcpy(dst + di * es, src + si * es, (size_t)es);
}

GCRT_FN void gcrt_depth_to_space(int64_t esize, int64_t N, int64_t C, int64_t H, int64_t W, int64_t b, int crd,
                         const void *X, void *Y)
{
    const unsigned char *x = (const unsigned char *)X;
    unsigned char *y = (unsigned char *)Y;
    int64_t Co = C / (b * b), e = 0, n, c, oy, ox;
    for (n = 0; n < N; n++)
        for (c = 0; c < Co; c++)
            for (oy = 0; oy < H * b; oy++)
                for (ox = 0; ox < W * b; ox++) {
                    int64_t bh = oy % b, bw = ox % b;
                    int64_t ci = crd ? (c * b + bh) * b + bw : (bh * b + bw) * Co + c;
                    gcrt_vision_move(y, e++, x, ((n * C + ci) * H + oy / b) * W + ox / b, esize);
                }
}

GCRT_FN void gcrt_space_to_depth(int64_t esize, int64_t N, int64_t C, int64_t H, int64_t W, int64_t b,
                         const void *X, void *Y)
{
    const unsigned char *x = (const unsigned char *)X;
    unsigned char *y = (unsigned char *)Y;
    int64_t Ho = H / b, Wo = W / b, Co = C * b * b, e = 0, n, c, iy, ix;
    for (n = 0; n < N; n++)
        for (c = 0; c < C; c++)
            for (iy = 0; iy < H; iy++)
                for (ix = 0; ix < W; ix++) {
                    int64_t co = ((iy % b) * b + ix % b) * C + c;
                    gcrt_vision_move(y, ((n * Co + co) * Ho + iy / b) * Wo + ix / b, x, e++, esize);
                }
}

/* RoiAlign's bilinear taps (flat positions, weights) of sample (y, x) in an
 * H x W plane: all weights 0 outside [-1, H] x [-1, W], else the sample is
 * clamped to the plane and its four neighbours weighed. */
static void gcrt_roi_taps(double y, double x, int64_t H, int64_t W, int64_t *pos, double *w)
{
    int64_t y0, x0, y1, x1;
    double ly, lx;
    int k;
    if (y < -1.0 || y > (double)H || x < -1.0 || x > (double)W) {
        for (k = 0; k < 4; k++) {
            pos[k] = 0;
            w[k] = 0;
        }
        return;
    }
    y = y > 0 ? y : 0;
    x = x > 0 ? x : 0;
    y0 = (int64_t)y;
    x0 = (int64_t)x;
    y1 = y0 + 1;
    x1 = x0 + 1;
    if (y0 >= H - 1) {
        y0 = y1 = H - 1;
        y = (double)y0;
    }
    if (x0 >= W - 1) {
        x0 = x1 = W - 1;
        x = (double)x0;
    }
    ly = y - (double)y0;
    lx = x - (double)x0;
    pos[0] = y0 * W + x0;
    pos[1] = y0 * W + x1;
    pos[2] = y1 * W + x0;
    pos[3] = y1 * W + x1;
    w[0] = (1.0 - ly) * (1.0 - lx);
    w[1] = (1.0 - ly) * lx;
    w[2] = ly * (1.0 - lx);
    w[3] = ly * lx;
}

/* Samples per RoiAlign bin along one axis (see gcrt_roialign). */
static int64_t gcrt_roi_grid(int64_t sr, double extent, int64_t bins)
{
    double g;
    if (sr > 0) return sr;
    g = ceil(extent / (double)bins);
    return g > 0 ? (g < 65536.0 ? (int64_t)g : 65536) : 0;
}

static inline float gcrt_vision_sqrt_f32(float x) { return sqrtf(x); }
static inline double gcrt_vision_sqrt_f64(double x) { return sqrt(x); }

#define GCRT_VISION_TEMPLATE
#define T float
#define S(name) name##_f32
#include "gcrt_vision.c"
#undef T
#undef S

#define T double
#define S(name) name##_f64
#include "gcrt_vision.c"
#undef T
#undef S

#else /* GCRT_VISION_TEMPLATE: the kernels for one element type */

GCRT_FN void S(gcrt_convtranspose)(int64_t N, int64_t C, int64_t M, int64_t group, const int64_t *in, const int64_t *k,
                           const int64_t *out, const int64_t *st, const int64_t *dl, const int64_t *pd,
                           const T *X, const T *W, const T *B, T *Y)
{
    int64_t Cg = C / group, Mg = M / group;
    int64_t IP = in[0] * in[1] * in[2], OP = out[0] * out[1] * out[2], KP = k[0] * k[1] * k[2];
    int64_t n, m, c, p, id, ih, iw, kd, kh, kw, mg;
    for (n = 0; n < N; n++)
        for (m = 0; m < M; m++) {
            T b = B ? B[m] : (T)0;
            T *y = Y + (n * M + m) * OP;
            for (p = 0; p < OP; p++) y[p] = b;
        }
    for (n = 0; n < N; n++)
        for (c = 0; c < C; c++) {
            int64_t g = c / Cg;
            const T *x = X + (n * C + c) * IP;
            T *yg = Y + (n * M + g * Mg) * OP;
            const T *wc = W + c * Mg * KP;
            for (id = 0; id < in[0]; id++)
                for (ih = 0; ih < in[1]; ih++)
                    for (iw = 0; iw < in[2]; iw++) {
                        T xv = x[(id * in[1] + ih) * in[2] + iw];
                        for (kd = 0; kd < k[0]; kd++) {
                            int64_t od = id * st[0] - pd[0] + kd * dl[0];
                            if (od < 0 || od >= out[0]) continue;
                            for (kh = 0; kh < k[1]; kh++) {
                                int64_t oh = ih * st[1] - pd[1] + kh * dl[1];
                                if (oh < 0 || oh >= out[1]) continue;
                                for (kw = 0; kw < k[2]; kw++) {
                                    int64_t ow = iw * st[2] - pd[2] + kw * dl[2];
                                    int64_t op = (od * out[1] + oh) * out[2] + ow, kp = (kd * k[1] + kh) * k[2] + kw;
                                    if (ow < 0 || ow >= out[2]) continue;
                                    for (mg = 0; mg < Mg; mg++) yg[mg * OP + op] += xv * wc[mg * KP + kp];
                                }
                            }
                        }
                    }
        }
}

GCRT_FN void S(gcrt_global_maxpool)(int64_t NC, int64_t Sz, const T *X, T *Y)
{
    int64_t q, i;
    for (q = 0; q < NC; q++) {
        T mx = X[q * Sz];
        for (i = 1; i < Sz; i++)
            if (X[q * Sz + i] > mx) mx = X[q * Sz + i];
        Y[q] = mx;
    }
}

GCRT_FN void S(gcrt_instancenorm)(int64_t N, int64_t C, int64_t Sz, const T *X, const T *scale, const T *B, T eps,
                          T *Y)
{
    int64_t n, c, i;
    for (n = 0; n < N; n++)
        for (c = 0; c < C; c++) {
            const T *x = X + (n * C + c) * Sz;
            T *y = Y + (n * C + c) * Sz;
            T mu = 0, mu_c = 0, var = 0, var_c = 0, a;
            for (i = 0; i < Sz; i++) S(gcrt_ksum_add)(&mu, &mu_c, x[i]);
            mu = (mu + mu_c) / (T)Sz;
            for (i = 0; i < Sz; i++) S(gcrt_ksum_add)(&var, &var_c, (x[i] - mu) * (x[i] - mu));
            var = (var + var_c) / (T)Sz;
            a = scale[c] / S(gcrt_vision_sqrt)(var + eps);
            for (i = 0; i < Sz; i++) y[i] = (x[i] - mu) * a + B[c];
        }
}

GCRT_FN void S(gcrt_lrn)(int64_t N, int64_t C, int64_t Sz, int64_t size, double alpha, double beta, double bias,
                 const T *X, T *Y)
{
    int64_t lo = (size - 1) / 2, hi = size - 1 - lo, n, c, i, j;
    for (n = 0; n < N; n++)
        for (c = 0; c < C; c++) {
            int64_t j0 = c - lo < 0 ? 0 : c - lo, j1 = c + hi >= C ? C - 1 : c + hi;
            for (i = 0; i < Sz; i++) {
                double sq = 0;
                for (j = j0; j <= j1; j++) {
                    double v = X[(n * C + j) * Sz + i];
                    sq += v * v;
                }
                Y[(n * C + c) * Sz + i] =
                    (T)((double)X[(n * C + c) * Sz + i] / pow(bias + alpha / (double)size * sq, beta));
            }
        }
}

GCRT_FN void S(gcrt_mvn)(int rank, const int64_t *dims, const int *mask, const T *X, T *Y)
{
    int64_t st[GCRT_VISION_MAX_RANK], kd[GCRT_VISION_MAX_RANK], rd[GCRT_VISION_MAX_RANK];
    int64_t ks[GCRT_VISION_MAX_RANK], rs[GCRT_VISION_MAX_RANK], ki[GCRT_VISION_MAX_RANK], ri[GCRT_VISION_MAX_RANK];
    int64_t K = 1, R = 1, k, q;
    int nk = 0, nr = 0, a;
    st[rank - 1] = 1;
    for (a = rank - 2; a >= 0; a--) st[a] = st[a + 1] * dims[a + 1];
    for (a = 0; a < rank; a++) {
        if (mask[a]) { rd[nr] = dims[a]; rs[nr++] = st[a]; R *= dims[a]; }
        else { kd[nk] = dims[a]; ks[nk++] = st[a]; K *= dims[a]; }
    }
    for (a = 0; a < nk; a++) ki[a] = 0;
    for (k = 0; k < K; k++) {
        int64_t base = 0;
        /* set by passes 0 and 1; initialized for gcc -Wmaybe-uninitialized */
        T s1 = 0, s1_c = 0, s2 = 0, s2_c = 0, mu = 0, var, sd = 1;
        for (a = 0; a < nk; a++) base += ki[a] * ks[a];
        /* pass 0: the mean; pass 1: the variance as the mean squared deviation
         * (two passes, which stays accurate in float when the mean is large
         * against the spread); pass 2: Y */
        for (int pass = 0; pass < 3; pass++) {
            for (a = 0; a < nr; a++) ri[a] = 0;
            for (q = 0; q < R; q++) {
                int64_t off = base;
                for (a = 0; a < nr; a++) off += ri[a] * rs[a];
                if (pass == 0) S(gcrt_ksum_add)(&s1, &s1_c, X[off]);
                else if (pass == 1) S(gcrt_ksum_add)(&s2, &s2_c, (X[off] - mu) * (X[off] - mu));
                else Y[off] = (X[off] - mu) / sd;
                for (a = nr - 1; a >= 0; a--) {
                    if (++ri[a] < rd[a]) break;
                    ri[a] = 0;
                }
            }
            if (pass == 0) {
                mu = (s1 + s1_c) / (T)R;
            } else if (pass == 1) {
                var = (s2 + s2_c) / (T)R;
                sd = S(gcrt_vision_sqrt)(var) + (T)1e-9;
            }
        }
        for (a = nk - 1; a >= 0; a--) {
            if (++ki[a] < kd[a]) break;
            ki[a] = 0;
        }
    }
}

GCRT_FN void S(gcrt_hardmax)(int64_t outer, int64_t n, int64_t inner, const T *X, T *Y)
{
    int64_t o, i, j;
    for (o = 0; o < outer; o++)
        for (i = 0; i < inner; i++) {
            const T *x = X + o * n * inner + i;
            T *y = Y + o * n * inner + i;
            int64_t best = 0;
            for (j = 0; j < n; j++) {
                if (x[j * inner] > x[best * inner]) best = j;
                y[j * inner] = 0;
            }
            if (n > 0) y[best * inner] = 1;
        }
}

GCRT_FN void S(gcrt_resize)(int rank, const int64_t *in, const int64_t *out, const int64_t *K, const int64_t *idx,
                    const T *w, T extrap, const T *X, T *Y)
{
    int64_t st[GCRT_VISION_MAX_RANK], base[GCRT_VISION_MAX_RANK], o[GCRT_VISION_MAX_RANK], t[GCRT_VISION_MAX_RANK];
    int64_t total = 1, e;
    int a;
    st[rank - 1] = 1;
    for (a = rank - 2; a >= 0; a--) st[a] = st[a + 1] * in[a + 1];
    base[0] = 0;
    for (a = 0; a + 1 < rank; a++) base[a + 1] = base[a] + out[a] * K[a];
    for (a = 0; a < rank; a++) {
        total *= out[a];
        o[a] = 0;
    }
    for (e = 0; e < total; e++) {
        int outside = 0;
        for (a = 0; a < rank; a++) {
            t[a] = 0;
            if (idx[base[a] + o[a] * K[a]] < 0) outside = 1;
        }
        if (outside) {
            Y[e] = extrap;
        } else {
            T acc = 0;
            for (;;) {
                T wt = 1;
                int64_t off = 0;
                for (a = 0; a < rank; a++) {
                    int64_t j = base[a] + o[a] * K[a] + t[a];
                    wt *= w[j];
                    off += idx[j] * st[a];
                }
                acc += wt * X[off];
                for (a = rank - 1; a >= 0; a--) {
                    if (++t[a] < K[a]) break;
                    t[a] = 0;
                }
                if (a < 0) break;
            }
            Y[e] = acc;
        }
        for (a = rank - 1; a >= 0; a--) {
            if (++o[a] < out[a]) break;
            o[a] = 0;
        }
    }
}

GCRT_FN void S(gcrt_roialign)(int64_t N, int64_t C, int64_t H, int64_t W, int64_t R, int64_t oh, int64_t ow, int64_t sr,
                      double scale, int half_pixel, int max_mode, const T *X, const T *rois, const int64_t *bidx, T *Y)
{
    double off = half_pixel ? 0.5 : 0.0;
    int64_t r, c, ph, pw, iy, ix;
    for (r = 0; r < R; r++) {
        const T *roi = rois + 4 * r;
        T *yr = Y + r * C * oh * ow;
        double x0 = (double)roi[0] * scale - off, y0 = (double)roi[1] * scale - off;
        double rw = (double)roi[2] * scale - off - x0, rh = (double)roi[3] * scale - off - y0, bh, bw;
        int64_t gh, gw, count;
        if (bidx[r] < 0 || bidx[r] >= N) { /* out of range: zeros, never a read outside X */
            memset(yr, 0, sizeof(T) * (size_t)(C * oh * ow));
            continue;
        }
        if (!half_pixel) {
            rw = rw > 1.0 ? rw : 1.0;
            rh = rh > 1.0 ? rh : 1.0;
        }
        bh = rh / (double)oh;
        bw = rw / (double)ow;
        gh = gcrt_roi_grid(sr, rh, oh);
        gw = gcrt_roi_grid(sr, rw, ow);
        count = gh * gw > 1 ? gh * gw : 1;
        for (c = 0; c < C; c++) {
            const T *plane = X + (bidx[r] * C + c) * H * W;
            for (ph = 0; ph < oh; ph++)
                for (pw = 0; pw < ow; pw++) {
                    double acc = 0.0;
                    int first = 1;
                    for (iy = 0; iy < gh; iy++) {
                        double y = y0 + (double)ph * bh + ((double)iy + 0.5) * bh / (double)gh;
                        for (ix = 0; ix < gw; ix++) {
                            double x = x0 + (double)pw * bw + ((double)ix + 0.5) * bw / (double)gw, w[4], v;
                            int64_t pos[4];
                            int k;
                            gcrt_roi_taps(y, x, H, W, pos, w);
                            if (!max_mode) {
                                for (k = 0; k < 4; k++) acc += w[k] * (double)plane[pos[k]];
                                continue;
                            }
                            v = w[0] * (double)plane[pos[0]];
                            for (k = 1; k < 4; k++)
                                if (w[k] * (double)plane[pos[k]] > v) v = w[k] * (double)plane[pos[k]];
                            if (first || v > acc) acc = v;
                            first = 0;
                        }
                    }
                    yr[(c * oh + ph) * ow + pw] = (T)(max_mode ? acc : acc / (double)count);
                }
        }
    }
}

#endif
