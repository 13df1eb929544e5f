/* gcrt_grad.c — backward kernels of the grad op family (gcrt_grad.h).
 *
 * Written once over an element type T and a name suffix S: the file
 * includes itself for float (_f32) and double (_f64) with
 * GCRT_GRAD_TEMPLATE defined, as gcrt_nn.c does.
 *
 * The conv gradients run on the forward conv's pattern (gcrt_nn.c): per
 * image and group, tiles of `cols` output positions in the caller's
 * workspace and one GEMM per tile. Filter gradient: the tile's im2col
 * matrix col(X) [Cg*prod(k), cols] (gcrt_im2col, shared with the forward),
 * dW[g] += dY[n,g] (tile columns) * col^T, accumulated over images and
 * tiles. Data gradient: col = W[g]^T * dY[n,g] (tile columns), then col2im
 * adds each column entry into the input element its tap reads, in a dX
 * zeroed first. A 1x1 unit-stride unpadded conv multiplies X or dX
 * directly (no workspace). Sums are in T, in the GEMM's order. The pools scatter
 * dY into a zeroed dX (windows overlap); the max pool picks each window's
 * maximum exactly as gcrt_maxpool_idx does (first in scan order, a NaN
 * yields to a later number). Normalization statistics and row sums are
 * accumulated in double.
 */
#ifndef GCRT_GRAD_TEMPLATE

#include "gcrt_grad.h"
#include "gcrt_linalg.h"
#include "gcrt_nn.h"

#include <math.h>

#define GCRT_GRAD_TEMPLATE
#define T float
#define S(name) name##_f32
#define GCRT_GEMM gcrt_sgemm
#include "gcrt_grad.c"
#undef T
#undef S
#undef GCRT_GEMM

#define T double
#define S(name) name##_f64
#define GCRT_GEMM gcrt_dgemm
#include "gcrt_grad.c"
#undef T
#undef S
#undef GCRT_GEMM

#else /* GCRT_GRAD_TEMPLATE: the kernels for one element type */

/* Adds column j of each row (c, tap) of col [Cg*prod(k), np] (output
 * positions [p0, p0+np) of one group of one image) into the input element
 * of channel c that the tap reads at that position; taps in padding are
 * dropped. The adjoint of gcrt_im2col, walked in the same row runs. */
static void S(col2im_add)(int64_t Cg, const int64_t *in, const int64_t *k, const int64_t *out,
                          const int64_t *st, const int64_t *dl, const int64_t *pd, const T *col, int64_t p0,
                          int64_t np, T *x)
{
    int64_t c, kd, kh, kw, j;
    for (c = 0; c < Cg; c++)
        for (kd = 0; kd < k[0]; kd++)
            for (kh = 0; kh < k[1]; kh++)
                for (kw = 0; kw < k[2]; kw++) {
                    const T *src = col + (((c * k[0] + kd) * k[1] + kh) * k[2] + kw) * np;
                    T *xc = x + c * in[0] * in[1] * in[2];
                    int64_t ow = p0 % out[2], oh = p0 / out[2] % out[1], od = p0 / (out[2] * out[1]);
                    for (j = 0; j < np;) {
                        int64_t id = od * st[0] - pd[0] + kd * dl[0];
                        int64_t ih = oh * st[1] - pd[1] + kh * dl[1];
                        /* the rest of this output row at once: iw steps by st[2] */
                        int64_t run = out[2] - ow < np - j ? out[2] - ow : np - j, r;
                        if (id >= 0 && id < in[0] && ih >= 0 && ih < in[1]) {
                            T *xr = xc + (id * in[1] + ih) * in[2];
                            const T *sr = src + j;
                            int64_t iw = ow * st[2] - pd[2] + kw * dl[2], lo, hi;
                            gcrt_conv_row_span(iw, st[2], in[2], run, &lo, &hi);
                            if (st[2] == 1)
                                for (r = lo; r < hi; r++) xr[iw + r] += sr[r];
                            else
                                for (r = lo; r < hi; r++) xr[iw + r * st[2]] += sr[r];
                        }
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

/* A 1x1 kernel with unit strides and no padding: X's plane is the im2col
 * matrix itself. */
static int S(conv_grad_pointwise)(const int64_t *in, const int64_t *k, const int64_t *out, const int64_t *stride,
                                  const int64_t *pad)
{
    int i;
    for (i = 0; i < 3; i++)
        if (k[i] != 1 || stride[i] != 1 || pad[i] != 0 || out[i] != in[i]) return 0;
    return 1;
}

GCRT_FN void S(gcrt_conv_grad_data)(int64_t N, int64_t C, int64_t M, int64_t group, const int64_t *in,
                                    const int64_t *k, const int64_t *out, const int64_t *stride, const int64_t *dil,
                                    const int64_t *pad, const T *dY, const T *W, T *dX, T *ws, int64_t cols)
{
    int64_t Cg = C / group, Mg = M / group, plane = in[0] * in[1] * in[2], P = out[0] * out[1] * out[2];
    int64_t KK = Cg * k[0] * k[1] * k[2];
    int pointwise = S(conv_grad_pointwise)(in, k, out, stride, pad);
    int64_t n, g, p, i;
    if (!pointwise)
        for (i = 0; i < N * C * plane; i++) dX[i] = 0;
    for (n = 0; n < N; n++)
        for (g = 0; g < group; g++) {
            const T *dy = dY + (n * M + g * Mg) * P, *w = W + g * Mg * KK;
            T *dx = dX + (n * C + g * Cg) * plane;
            if (pointwise) {
                GCRT_GEMM(1, 0, Cg, P, Mg, (T)1, w, KK, dy, P, (T)0, dx, P);
                continue;
            }
            for (p = 0; cols > 0 && p < P; p += cols) {
                int64_t np = P - p < cols ? P - p : cols;
                GCRT_GEMM(1, 0, KK, np, Mg, (T)1, w, KK, dy + p, P, (T)0, ws, np);
                S(col2im_add)(Cg, in, k, out, stride, dil, pad, ws, p, np, dx);
            }
        }
}

GCRT_FN void S(gcrt_conv_grad_filter)(int64_t N, int64_t C, int64_t M, int64_t group, const int64_t *in,
                                      const int64_t *k, const int64_t *out, const int64_t *stride,
                                      const int64_t *dil, const int64_t *pad, const T *X, const T *dY, T *dW, T *ws,
                                      int64_t cols)
{
    int64_t Cg = C / group, Mg = M / group, plane = in[0] * in[1] * in[2], P = out[0] * out[1] * out[2];
    int64_t KK = Cg * k[0] * k[1] * k[2];
    int pointwise = S(conv_grad_pointwise)(in, k, out, stride, pad);
    int64_t n, g, p, i;
    for (i = 0; i < M * KK; i++) dW[i] = 0;
    for (n = 0; n < N; n++)
        for (g = 0; g < group; g++) {
            const T *x = X + (n * C + g * Cg) * plane, *dy = dY + (n * M + g * Mg) * P;
            T *dw = dW + g * Mg * KK;
            if (pointwise) {
                GCRT_GEMM(0, 1, Mg, Cg, P, (T)1, dy, P, x, P, (T)1, dw, KK);
                continue;
            }
            for (p = 0; cols > 0 && p < P; p += cols) {
                int64_t np = P - p < cols ? P - p : cols;
                S(gcrt_im2col)(Cg, in, k, out, stride, dil, pad, x, p, np, ws);
                GCRT_GEMM(0, 1, Mg, KK, np, (T)1, dy + p, P, ws, np, (T)1, dw, KK);
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
