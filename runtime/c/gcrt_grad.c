/* gcrt_grad.c — backward kernels of the grad op family (gcrt_grad.h).
 *
 * Written once over an element type T and a name suffix S: the file
 * includes itself for float (_f32) and double (_f64) with
 * GCRT_GRAD_TEMPLATE defined, as gcrt_nn.c does.
 *
 * Conv data gradient: a gather, so that each dX element is one sum in
 * double written once: input position x receives, for every output channel
 * of its group and kernel tap t, dY at the output position o with
 * o * stride - pad + t * dil == x (per dim; gcrt_grad_src finds o, if any).
 * Conv filter gradient: per weight, the sum over images and output
 * positions of dY times the input element its tap reads. The pools scatter
 * dY into a zeroed dX (windows overlap); the max pool picks each window's
 * maximum exactly as gcrt_maxpool_idx does (first in scan order, a NaN
 * yields to a later number). Normalization statistics and row sums are
 * accumulated in double.
 */
#ifndef GCRT_GRAD_TEMPLATE

#include "gcrt_grad.h"

#include <math.h>

/* The output index o along one spatial dim whose kernel tap t reads input
 * index x (o * stride - pad + t * dil == x, 0 <= o < out), or -1. */
GCRT_FN int64_t gcrt_grad_src(int64_t x, int64_t t, int64_t stride, int64_t dil, int64_t pad, int64_t out)
{
    int64_t num = x + pad - t * dil;
    if (num < 0 || num % stride != 0 || num / stride >= out) return -1;
    return num / stride;
}

#define GCRT_GRAD_TEMPLATE
#define T float
#define S(name) name##_f32
#include "gcrt_grad.c"
#undef T
#undef S

#define T double
#define S(name) name##_f64
#include "gcrt_grad.c"
#undef T
#undef S

#else /* GCRT_GRAD_TEMPLATE: the kernels for one element type */

GCRT_FN void S(gcrt_conv_grad_data)(int64_t N, int64_t C, int64_t M, int64_t group, const int64_t *in,
                                    const int64_t *k, const int64_t *out, const int64_t *stride, const int64_t *dil,
                                    const int64_t *pad, const T *dY, const T *W, T *dX)
{
    int64_t Cg = C / group, Mg = M / group, plane = in[0] * in[1] * in[2], P = out[0] * out[1] * out[2];
    int64_t KP = k[0] * k[1] * k[2];
    int64_t b, c, m, x0, x1, x2, t0, t1, t2, o0, o1, o2;
    for (b = 0; b < N; b++)
        for (c = 0; c < C; c++) {
            int64_t g = c / Cg, cc = c - g * Cg;
            T *dx = dX + (b * C + c) * plane;
            for (x0 = 0; x0 < in[0]; x0++)
                for (x1 = 0; x1 < in[1]; x1++)
                    for (x2 = 0; x2 < in[2]; x2++) {
                        double acc = 0;
                        for (m = g * Mg; m < (g + 1) * Mg; m++) {
                            const T *dy = dY + (b * M + m) * P, *w = W + (m * Cg + cc) * KP;
                            for (t0 = 0; t0 < k[0]; t0++) {
                                if ((o0 = gcrt_grad_src(x0, t0, stride[0], dil[0], pad[0], out[0])) < 0) continue;
                                for (t1 = 0; t1 < k[1]; t1++) {
                                    if ((o1 = gcrt_grad_src(x1, t1, stride[1], dil[1], pad[1], out[1])) < 0)
                                        continue;
                                    for (t2 = 0; t2 < k[2]; t2++) {
                                        if ((o2 = gcrt_grad_src(x2, t2, stride[2], dil[2], pad[2], out[2])) < 0)
                                            continue;
                                        acc += (double)dy[(o0 * out[1] + o1) * out[2] + o2] *
                                               (double)w[(t0 * k[1] + t1) * k[2] + t2];
                                    }
                                }
                            }
                        }
                        dx[(x0 * in[1] + x1) * in[2] + x2] = (T)acc;
                    }
        }
}

GCRT_FN void S(gcrt_conv_grad_filter)(int64_t N, int64_t C, int64_t M, int64_t group, const int64_t *in,
                                      const int64_t *k, const int64_t *out, const int64_t *stride,
                                      const int64_t *dil, const int64_t *pad, const T *X, const T *dY, T *dW)
{
    int64_t Cg = C / group, Mg = M / group, plane = in[0] * in[1] * in[2], P = out[0] * out[1] * out[2];
    int64_t KP = k[0] * k[1] * k[2];
    int64_t b, m, cc, t0, t1, t2, o0, o1, o2;
    for (m = 0; m < M; m++)
        for (cc = 0; cc < Cg; cc++) {
            int64_t c = (m / Mg) * Cg + cc;
            T *dw = dW + (m * Cg + cc) * KP;
            for (t0 = 0; t0 < k[0]; t0++)
                for (t1 = 0; t1 < k[1]; t1++)
                    for (t2 = 0; t2 < k[2]; t2++) {
                        double acc = 0;
                        for (b = 0; b < N; b++) {
                            const T *x = X + (b * C + c) * plane, *dy = dY + (b * M + m) * P;
                            for (o0 = 0; o0 < out[0]; o0++) {
                                int64_t i0 = o0 * stride[0] - pad[0] + t0 * dil[0];
                                if (i0 < 0 || i0 >= in[0]) continue;
                                for (o1 = 0; o1 < out[1]; o1++) {
                                    int64_t i1 = o1 * stride[1] - pad[1] + t1 * dil[1];
                                    if (i1 < 0 || i1 >= in[1]) continue;
                                    for (o2 = 0; o2 < out[2]; o2++) {
                                        int64_t i2 = o2 * stride[2] - pad[2] + t2 * dil[2];
                                        if (i2 < 0 || i2 >= in[2]) continue;
                                        acc += (double)dy[(o0 * out[1] + o1) * out[2] + o2] *
                                               (double)x[(i0 * in[1] + i1) * in[2] + i2];
                                    }
                                }
                            }
                        }
                        dw[(t0 * k[1] + t1) * k[2] + t2] = (T)acc;
                    }
        }
}

GCRT_FN void S(gcrt_maxpool_grad)(int64_t NC, const int64_t *in, const int64_t *k, const int64_t *out,
                                  const int64_t *stride, const int64_t *dil, const int64_t *pad, const T *X,
                                  const T *dY, T *dX)
{
    int64_t plane = in[0] * in[1] * in[2], P = out[0] * out[1] * out[2];
    int64_t q, i, od, oh, ow, kd, kh, kw;
    for (i = 0; i < NC * plane; i++) dX[i] = 0;
    for (q = 0; q < NC; q++) {
        const T *x = X + q * plane;
        T *dx = dX + q * plane;
        for (od = 0; od < out[0]; od++)
            for (oh = 0; oh < out[1]; oh++)
                for (ow = 0; ow < out[2]; ow++) {
                    int64_t arg = -1;
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
                                /* a NaN maximum yields to any later number */
                                if (arg < 0 || x[off] > best || (best != best && x[off] == x[off])) {
                                    best = x[off];
                                    arg = off;
                                }
                            }
                        }
                    }
                    if (arg >= 0) dx[arg] += dY[q * P + (od * out[1] + oh) * out[2] + ow];
                }
    }
}

GCRT_FN void S(gcrt_avgpool_grad)(int64_t NC, const int64_t *in, const int64_t *k, const int64_t *out,
                                  const int64_t *stride, const int64_t *pad, const int64_t *pad_end,
                                  int count_include_pad, const T *dY, T *dX)
{
    int64_t plane = in[0] * in[1] * in[2], P = out[0] * out[1] * out[2];
    int64_t q, o[3], lo[3], hi[3], cnt[3], i, d, h, w;
    for (i = 0; i < NC * plane; i++) dX[i] = 0;
    for (q = 0; q < NC; q++) {
        T *dx = dX + q * plane;
        for (o[0] = 0; o[0] < out[0]; o[0]++)
            for (o[1] = 0; o[1] < out[1]; o[1]++)
                for (o[2] = 0; o[2] < out[2]; o[2]++) {
                    T g;
                    for (i = 0; i < 3; i++) {
                        int64_t s = o[i] * stride[i] - pad[i], e = s + k[i];
                        int64_t ep = e < in[i] + pad_end[i] ? e : in[i] + pad_end[i];
                        lo[i] = s < 0 ? 0 : s;
                        hi[i] = e < in[i] ? e : in[i];
                        cnt[i] = count_include_pad ? ep - s : hi[i] - lo[i];
                    }
                    g = (T)((double)dY[q * P + (o[0] * out[1] + o[1]) * out[2] + o[2]] /
                            (double)(cnt[0] * cnt[1] * cnt[2]));
                    for (d = lo[0]; d < hi[0]; d++)
                        for (h = lo[1]; h < hi[1]; h++)
                            for (w = lo[2]; w < hi[2]; w++) dx[(d * in[1] + h) * in[2] + w] += g;
                }
    }
}

GCRT_FN void S(gcrt_softmax_grad)(int64_t outer, int64_t n, int64_t inner, const T *dY, const T *Y, T *dX)
{
    int64_t o, i, j;
    for (o = 0; o < outer; o++)
        for (i = 0; i < inner; i++) {
            int64_t base = o * n * inner + i;
            double s = 0;
            for (j = 0; j < n; j++) s += (double)dY[base + j * inner] * (double)Y[base + j * inner];
            for (j = 0; j < n; j++)
                dX[base + j * inner] = (T)((double)Y[base + j * inner] * ((double)dY[base + j * inner] - s));
        }
}

GCRT_FN void S(gcrt_logsoftmax_grad)(int64_t outer, int64_t n, int64_t inner, const T *dY, const T *Y, T *dX)
{
    int64_t o, i, j;
    for (o = 0; o < outer; o++)
        for (i = 0; i < inner; i++) {
            int64_t base = o * n * inner + i;
            double s = 0;
            for (j = 0; j < n; j++) s += (double)dY[base + j * inner];
            for (j = 0; j < n; j++)
                dX[base + j * inner] = (T)((double)dY[base + j * inner] - exp((double)Y[base + j * inner]) * s);
        }
}

/* Each row's statistics and the two row means are complete before its dX
 * is written; dScale/dBias accumulate over the rows in T. */
GCRT_FN void S(gcrt_layernorm_grad)(int64_t outer, int64_t inner, const T *dY, const T *X, const T *scale,
                                    double eps, T *dX, T *dScale, T *dBias)
{
    int64_t o, j;
    for (j = 0; j < inner; j++) {
        if (dScale) dScale[j] = 0;
        if (dBias) dBias[j] = 0;
    }
    for (o = 0; o < outer; o++) {
        const T *x = X + o * inner, *dy = dY + o * inner;
        T *dx = dX + o * inner;
        double mu = 0, var = 0, sg = 0, sgx = 0, rs;
        for (j = 0; j < inner; j++) mu += (double)x[j];
        mu /= (double)inner;
        for (j = 0; j < inner; j++) var += ((double)x[j] - mu) * ((double)x[j] - mu);
        var /= (double)inner;
        rs = 1.0 / sqrt(var + eps);
        for (j = 0; j < inner; j++) {
            double xh = ((double)x[j] - mu) * rs, g = (double)dy[j] * (double)scale[j];
            sg += g;
            sgx += g * xh;
            if (dScale) dScale[j] += (T)((double)dy[j] * xh);
            if (dBias) dBias[j] += dy[j];
        }
        sg /= (double)inner;
        sgx /= (double)inner;
        for (j = 0; j < inner; j++) {
            double xh = ((double)x[j] - mu) * rs;
            dx[j] = (T)(rs * ((double)dy[j] * (double)scale[j] - sg - xh * sgx));
        }
    }
}

GCRT_FN void S(gcrt_batchnorm_grad)(int64_t N, int64_t C, int64_t Sz, const T *dY, const T *X, const T *scale,
                                    double eps, T *dX, T *dScale, T *dBias)
{
    int64_t n, c, i, e;
    double cnt = (double)(N * Sz);
    for (c = 0; c < C; c++) {
        double mu = 0, var = 0, sdy = 0, sdyx = 0, rs, a;
        for (n = 0; n < N; n++)
            for (i = 0; i < Sz; i++) mu += (double)X[(n * C + c) * Sz + i];
        mu /= cnt;
        for (n = 0; n < N; n++)
            for (i = 0; i < Sz; i++) {
                double dv = (double)X[(n * C + c) * Sz + i] - mu;
                var += dv * dv;
            }
        var /= cnt;
        rs = 1.0 / sqrt(var + eps);
        for (n = 0; n < N; n++)
            for (i = 0; i < Sz; i++) {
                e = (n * C + c) * Sz + i;
                sdy += (double)dY[e];
                sdyx += (double)dY[e] * ((double)X[e] - mu) * rs;
            }
        if (dScale) dScale[c] = (T)sdyx;
        if (dBias) dBias[c] = (T)sdy;
        a = (double)scale[c] * rs;
        for (n = 0; n < N; n++)
            for (i = 0; i < Sz; i++) {
                e = (n * C + c) * Sz + i;
                dX[e] = (T)(a * ((double)dY[e] - sdy / cnt - ((double)X[e] - mu) * rs * sdyx / cnt));
            }
    }
}

#endif /* GCRT_GRAD_TEMPLATE */
