/* gcrt_nn.c — conv, pooling, normalization and softmax kernels.
 *
 * The kernels are written once over an element type T and a name suffix S:
 * the file includes itself twice with GCRT_NN_TEMPLATE defined, once for
 * float (_f32) and once for double (_f64), so the two variants cannot drift.
 *
 * Conv: for each image and group, im2col copies the receptive fields of a
 * tile of `cols` output positions into the caller's workspace as a
 * [C/group*prod(k), cols] matrix and one GEMM per tile multiplies the
 * group's filters with it (the tile bounds the workspace); a 1x1 stride-1 unpadded conv
 * multiplies X directly; when C/group == 1 (depthwise) or no workspace is
 * given, direct loops compute each output (no scratch). Spatial geometry is
 * 3-D; lower ranks are passed with unit leading dims.
 *
 * Reductions (pool means, softmax sums, layer-norm statistics) accumulate in
 * double, which keeps f32 results close to the double reference. Softmax
 * subtracts the row maximum before exponentiating (no overflow).
 */
#ifndef GCRT_NN_TEMPLATE

#include "gcrt_nn.h"
#include "gcrt_linalg.h"

#include <math.h>

/* See gcrt_nn.h. */
GCRT_FN void gcrt_conv_row_span(int64_t i0, int64_t step, int64_t n, int64_t run, int64_t *lo, int64_t *hi)
{
    int64_t a = i0 >= 0 ? 0 : (-i0 + step - 1) / step;
    int64_t b = i0 >= n ? 0 : (n - 1 - i0) / step + 1;
    if (b > run) b = run;
    if (a > b) a = b;
    *lo = a;
    *hi = b;
}

#define GCRT_NN_TEMPLATE
#define T float
#define S(name) name##_f32
#define GCRT_GEMM gcrt_sgemm
#define GCRT_EXP expf
#define GCRT_LOG logf
#define GCRT_SQRT sqrtf
#include "gcrt_nn.c"
#undef T
#undef S
#undef GCRT_GEMM
#undef GCRT_EXP
#undef GCRT_LOG
#undef GCRT_SQRT

#define T double
#define S(name) name##_f64
#define GCRT_GEMM gcrt_dgemm
#define GCRT_EXP exp
#define GCRT_LOG log
#define GCRT_SQRT sqrt
#include "gcrt_nn.c"
#undef T
#undef S
#undef GCRT_GEMM
#undef GCRT_EXP
#undef GCRT_LOG
#undef GCRT_SQRT

#else /* GCRT_NN_TEMPLATE: the kernels for one element type */

/* See gcrt_nn.h (also the conv gradients' im2col, gcrt_grad.c). The
 * positions are walked in runs along one output row, which share the depth
 * and height taps; within a run the taps inside the input form one span
 * (gcrt_conv_row_span) copied without per-element bounds checks. */
GCRT_FN void S(gcrt_im2col)(int64_t Cg, const int64_t *in, const int64_t *k, const int64_t *out,
                            const int64_t *st, const int64_t *dl, const int64_t *pd, const T *x, int64_t p0,
                            int64_t np, T *col)
{
    int64_t c, kd, kh, kw, j, r;
    for (c = 0; c < Cg; c++)
        for (kd = 0; kd < k[0]; kd++)
            for (kh = 0; kh < k[1]; kh++)
                for (kw = 0; kw < k[2]; kw++) {
                    T *dst = col + (((c * k[0] + kd) * k[1] + kh) * k[2] + kw) * np;
                    const T *xc = x + c * in[0] * in[1] * in[2];
                    int64_t ow = p0 % out[2], oh = p0 / out[2] % out[1], od = p0 / (out[2] * out[1]);
                    for (j = 0; j < np;) {
                        int64_t id = od * st[0] - pd[0] + kd * dl[0];
                        int64_t ih = oh * st[1] - pd[1] + kh * dl[1];
                        int64_t run = out[2] - ow < np - j ? out[2] - ow : np - j, lo = run, hi = run;
                        T *d = dst + j;
                        if (id >= 0 && id < in[0] && ih >= 0 && ih < in[1]) {
                            const T *xr = xc + (id * in[1] + ih) * in[2];
                            int64_t iw = ow * st[2] - pd[2] + kw * dl[2];
                            gcrt_conv_row_span(iw, st[2], in[2], run, &lo, &hi);
                            if (st[2] == 1)
                                for (r = lo; r < hi; r++) d[r] = xr[iw + r];
                            else
                                for (r = lo; r < hi; r++) d[r] = xr[iw + r * st[2]];
                        }
                        for (r = 0; r < lo; r++) d[r] = (T)0;
                        for (r = hi; r < run; r++) d[r] = (T)0;
                        j += run;
                        ow += run;
                        if (ow == out[2]) {
                            ow = 0;
                            if (++oh == out[1]) {
                                oh = 0;
                                od++;
                            }
                        }
                    }
                }
}

/* One output plane of output channel m of one image by direct loops. */
static void S(conv_direct_plane)(int64_t Cg, int64_t c0, const int64_t *in, const int64_t *k,
                                 const int64_t *out, const int64_t *st, const int64_t *dl,
                                 const int64_t *pd, const T *x, const T *w, T bias, T *y)
{
    int64_t plane = in[0] * in[1] * in[2];
    int64_t od, oh, ow, c, kd, kh, kw;
    for (od = 0; od < out[0]; od++)
        for (oh = 0; oh < out[1]; oh++)
            for (ow = 0; ow < out[2]; ow++) {
                T acc = bias;
                for (c = 0; c < Cg; c++) {
                    const T *xc = x + (c0 + c) * plane;
                    const T *wc = w + c * k[0] * k[1] * k[2];
                    for (kd = 0; kd < k[0]; kd++) {
                        int64_t id = od * st[0] - pd[0] + kd * dl[0];
                        if (id < 0 || id >= in[0]) continue;
                        for (kh = 0; kh < k[1]; kh++) {
                            int64_t ih = oh * st[1] - pd[1] + kh * dl[1];
                            if (ih < 0 || ih >= in[1]) continue;
                            const T *xr = xc + (id * in[1] + ih) * in[2];
                            const T *wr = wc + (kd * k[1] + kh) * k[2];
                            for (kw = 0; kw < k[2]; kw++) {
                                int64_t iw = ow * st[2] - pd[2] + kw * dl[2];
                                if (iw >= 0 && iw < in[2]) acc += xr[iw] * wr[kw];
                            }
                        }
                    }
                }
                y[(od * out[1] + oh) * out[2] + ow] = acc;
            }
}

GCRT_FN void S(gcrt_conv)(int64_t N, int64_t C, int64_t M, int64_t group, const int64_t *in,
                  const int64_t *k, const int64_t *out, const int64_t *stride, const int64_t *dil,
                  const int64_t *pad, const T *X, const T *W, const T *B, T *Y, T *ws,
                  int64_t cols)
{
    int64_t Cg = C / group, Mg = M / group;
    int64_t plane = in[0] * in[1] * in[2], P = out[0] * out[1] * out[2];
    int64_t KK = Cg * k[0] * k[1] * k[2];
    int pointwise = k[0] == 1 && k[1] == 1 && k[2] == 1 && stride[0] == 1 && stride[1] == 1 &&
                    stride[2] == 1 && pad[0] == 0 && pad[1] == 0 && pad[2] == 0 &&
                    out[0] == in[0] && out[1] == in[1] && out[2] == in[2];
    int64_t n, g, m, p;
    for (n = 0; n < N; n++)
        for (g = 0; g < group; g++) {
            const T *x = X + (n * C + g * Cg) * plane;
            const T *w = W + g * Mg * KK;
            T *y = Y + (n * M + g * Mg) * P;
            if (!pointwise && (Cg == 1 || !ws)) {
                for (m = 0; m < Mg; m++)
                    S(conv_direct_plane)(Cg, 0, in, k, out, stride, dil, pad, x, w + m * KK,
                                         B ? B[g * Mg + m] : (T)0, y + m * P);
                continue;
            }
            if (B)
                for (m = 0; m < Mg; m++)
                    for (p = 0; p < P; p++) y[m * P + p] = B[g * Mg + m];
            if (pointwise) {
                GCRT_GEMM(0, 0, Mg, P, KK, (T)1, w, KK, x, P, B ? (T)1 : (T)0, y, P);
                continue;
            }
            for (p = 0; p < P; p += cols) {
                int64_t np = P - p < cols ? P - p : cols;
                S(gcrt_im2col)(Cg, in, k, out, stride, dil, pad, x, p, np, ws);
                GCRT_GEMM(0, 0, Mg, np, KK, (T)1, w, KK, ws, np, B ? (T)1 : (T)0, y + p, P);
            }
        }
}

GCRT_FN void S(gcrt_maxpool)(int64_t NC, const int64_t *in, const int64_t *k, const int64_t *out,
                     const int64_t *stride, const int64_t *dil, const int64_t *pad, const T *X,
                     T *Y)
{
    int64_t plane = in[0] * in[1] * in[2], P = out[0] * out[1] * out[2];
    int64_t q, od, oh, ow, kd, kh, kw;
    for (q = 0; q < NC; q++) {
        const T *x = X + q * plane;
        T *y = Y + q * P;
        for (od = 0; od < out[0]; od++)
            for (oh = 0; oh < out[1]; oh++)
                for (ow = 0; ow < out[2]; ow++) {
                    T best = -(T)INFINITY;
                    for (kd = 0; kd < k[0]; kd++) {
                        int64_t id = od * stride[0] - pad[0] + kd * dil[0];
                        if (id < 0 || id >= in[0]) continue;
                        for (kh = 0; kh < k[1]; kh++) {
                            int64_t ih = oh * stride[1] - pad[1] + kh * dil[1];
                            if (ih < 0 || ih >= in[1]) continue;
                            const T *xr = x + (id * in[1] + ih) * in[2];
                            for (kw = 0; kw < k[2]; kw++) {
                                int64_t iw = ow * stride[2] - pad[2] + kw * dil[2];
                                if (iw >= 0 && iw < in[2] && xr[iw] > best) best = xr[iw];
                            }
                        }
                    }
                    y[(od * out[1] + oh) * out[2] + ow] = best;
                }
    }
}

GCRT_FN void S(gcrt_avgpool)(int64_t NC, const int64_t *in, const int64_t *k, const int64_t *out,
                     const int64_t *stride, const int64_t *pad, const int64_t *pad_end,
                     int count_include_pad, const T *X, T *Y)
{
    int64_t plane = in[0] * in[1] * in[2], P = out[0] * out[1] * out[2];
    int64_t q, o[3], lo[3], hi[3], cnt[3], i, d, h, w;
    for (q = 0; q < NC; q++) {
        const T *x = X + q * plane;
        T *y = Y + q * P;
        for (o[0] = 0; o[0] < out[0]; o[0]++)
            for (o[1] = 0; o[1] < out[1]; o[1]++)
                for (o[2] = 0; o[2] < out[2]; o[2]++) {
                    double acc = 0;
                    for (i = 0; i < 3; i++) {
                        int64_t s = o[i] * stride[i] - pad[i], e = s + k[i];
                        int64_t ep = e < in[i] + pad_end[i] ? e : in[i] + pad_end[i];
                        lo[i] = s < 0 ? 0 : s;
                        hi[i] = e < in[i] ? e : in[i];
                        cnt[i] = count_include_pad ? ep - s : hi[i] - lo[i];
                    }
                    for (d = lo[0]; d < hi[0]; d++)
                        for (h = lo[1]; h < hi[1]; h++)
                            for (w = lo[2]; w < hi[2]; w++) acc += x[(d * in[1] + h) * in[2] + w];
                    y[(o[0] * out[1] + o[1]) * out[2] + o[2]] =
                        (T)(acc / (double)(cnt[0] * cnt[1] * cnt[2]));
                }
    }
}

GCRT_FN void S(gcrt_global_avgpool)(int64_t NC, int64_t Sz, const T *X, T *Y)
{
    int64_t q, i;
    for (q = 0; q < NC; q++) {
        double acc = 0;
        for (i = 0; i < Sz; i++) acc += X[q * Sz + i];
        Y[q] = (T)(acc / (double)Sz);
    }
}

GCRT_FN void S(gcrt_batchnorm)(int64_t N, int64_t C, int64_t Sz, const T *X, const T *scale, const T *B,
                       const T *mean, const T *var, T eps, T *Y)
{
    int64_t n, c, i;
    for (c = 0; c < C; c++) {
        T a = scale[c] / GCRT_SQRT(var[c] + eps), mu = mean[c], b = B[c];
        for (n = 0; n < N; n++) {
            const T *x = X + (n * C + c) * Sz;
            T *y = Y + (n * C + c) * Sz;
            for (i = 0; i < Sz; i++) y[i] = (x[i] - mu) * a + b;
        }
    }
}

/* Training batch norm: per channel, the batch mean and (population)
 * variance in double over N and Sz, then Y; each channel's statistics are
 * complete before its Y is written, so Y may be X. */
GCRT_FN void S(gcrt_batchnorm_train)(int64_t N, int64_t C, int64_t Sz, const T *X, const T *scale, const T *B,
                             const T *mean, const T *var, T eps, T momentum, T *Y, T *running_mean,
                             T *running_var)
{
    int64_t n, c, i;
    double cnt = (double)(N * Sz);
    for (c = 0; c < C; c++) {
        double mu = 0.0, v = 0.0, d;
        T a, b;
        for (n = 0; n < N; n++)
            for (i = 0; i < Sz; i++) mu += (double)X[(n * C + c) * Sz + i];
        mu /= cnt;
        for (n = 0; n < N; n++)
            for (i = 0; i < Sz; i++) {
                d = (double)X[(n * C + c) * Sz + i] - mu;
                v += d * d;
            }
        v /= cnt;
        if (running_mean) running_mean[c] = (T)(mean[c] * (double)momentum + mu * (1.0 - (double)momentum));
        if (running_var) running_var[c] = (T)(var[c] * (double)momentum + v * (1.0 - (double)momentum));
        a = (T)((double)scale[c] / sqrt(v + (double)eps));
        b = B[c];
        for (n = 0; n < N; n++) {
            const T *x = X + (n * C + c) * Sz;
            T *y = Y + (n * C + c) * Sz;
            for (i = 0; i < Sz; i++) y[i] = (T)((x[i] - (T)mu) * a + b);
        }
    }
}

/* Softmax (log_out == 0) or log-softmax (log_out != 0) along the middle axis. */
static void S(softmax_any)(int64_t outer, int64_t n, int64_t inner, const T *X, T *Y, int log_out)
{
    int64_t o, i, j;
    for (o = 0; o < outer; o++)
        for (i = 0; i < inner; i++) {
            const T *x = X + o * n * inner + i;
            T *y = Y + o * n * inner + i;
            T mx = -(T)INFINITY;
            double sum = 0;
            if (n == 0) continue;
            for (j = 0; j < n; j++)
                if (x[j * inner] > mx) mx = x[j * inner];
            if (log_out) {
                T lse;
                for (j = 0; j < n; j++) sum += GCRT_EXP(x[j * inner] - mx);
                lse = (T)log(sum);
                for (j = 0; j < n; j++) y[j * inner] = x[j * inner] - mx - lse;
            } else {
                for (j = 0; j < n; j++) {
                    T e = GCRT_EXP(x[j * inner] - mx);
                    y[j * inner] = e;
                    sum += e;
                }
                for (j = 0; j < n; j++) y[j * inner] = (T)(y[j * inner] / sum);
            }
        }
}

GCRT_FN void S(gcrt_softmax)(int64_t outer, int64_t n, int64_t inner, const T *X, T *Y)
{
    S(softmax_any)(outer, n, inner, X, Y, 0);
}

GCRT_FN void S(gcrt_logsoftmax)(int64_t outer, int64_t n, int64_t inner, const T *X, T *Y)
{
    S(softmax_any)(outer, n, inner, X, Y, 1);
}

GCRT_FN void S(gcrt_layernorm)(int64_t outer, int64_t inner, const T *X, const T *scale,
                       int64_t scale_n, const T *B, int64_t b_n, T eps, T *Y, T *mean,
                       T *invstd)
{
    int64_t o, j, js, jb;
    for (o = 0; o < outer; o++) {
        const T *x = X + o * inner;
        T *y = Y + o * inner;
        double s = 0, v = 0;
        T mu, rs;
        for (j = 0; j < inner; j++) s += x[j];
        mu = (T)(s / (double)inner);
        for (j = 0; j < inner; j++) {
            double dv = (double)x[j] - (double)mu;
            v += dv * dv;
        }
        rs = (T)(1.0 / sqrt(v / (double)inner + (double)eps));
        for (j = js = jb = 0; j < inner; j++) {
            T t = (x[j] - mu) * rs * scale[js];
            y[j] = B ? t + B[jb] : t;
            if (++js == scale_n) js = 0;
            if (++jb == b_n) jb = 0;
        }
        if (mean) mean[o] = mu;
        if (invstd) invstd[o] = rs;
    }
}

#endif /* GCRT_NN_TEMPLATE */
