/* gcrt_rnn.c — recurrent layer kernels: RNN, GRU and LSTM over a sequence.
 *
 * The kernel is written once over an element type T and a name suffix S:
 * the file includes itself twice with GCRT_RNN_TEMPLATE defined, once for
 * float (_f32) and once for double (_f64).
 *
 * Per direction and per time step, two GEMMs compute the gate
 * pre-activations of the whole batch: gx = X_t W^T and gh = H_{t-1} R^T
 * (both [N,G*H], in the caller's workspace); an elementwise pass then adds
 * the biases (and LSTM peepholes), clips, applies the default activations
 * (Sigmoid for gates, Tanh otherwise) and updates the state in place. GRU
 * without linear_before_reset needs (r .* H) R_h^T: its recurrent GEMM
 * covers the z and r gates only, a first pass computes r .* H into a
 * temporary and a third GEMM fills the h gate columns of gh.
 *
 * Batch entries whose sequence is shorter than the step are left untouched
 * and get zeros in Y; the reverse direction walks t = S-1 down to 0, so an
 * entry of length L starts at t = L-1. Y_h/Y_c are the final states, zero
 * for a length-0 entry (as onnxruntime).
 */
#ifndef GCRT_RNN_TEMPLATE

#include "gcrt_rnn.h"
#include "gcrt_linalg.h"

#include <math.h>

#define GCRT_RNN_TEMPLATE
#define T float
#define S(name) name##_f32
#define GCRT_GEMM gcrt_sgemm
#define GCRT_EXP gcrt_expf
#define GCRT_TANH gcrt_tanhf
#include "gcrt_rnn.c"
#undef T
#undef S
#undef GCRT_GEMM
#undef GCRT_EXP
#undef GCRT_TANH

#define T double
#define S(name) name##_f64
#define GCRT_GEMM gcrt_dgemm
#define GCRT_EXP exp
#define GCRT_TANH tanh
#include "gcrt_rnn.c"
#undef T
#undef S
#undef GCRT_GEMM
#undef GCRT_EXP
#undef GCRT_TANH

#else /* GCRT_RNN_TEMPLATE: the kernel for one element type */

static T S(rnn_sigmoid)(T x) { return (T)1 / ((T)1 + GCRT_EXP(-x)); }

/* x clipped to [-c, c]; c <= 0 means no clipping. */
static T S(rnn_clip)(T x, T c)
{
    if (c <= (T)0) return x;
    return x < -c ? -c : x > c ? c : x;
}

GCRT_FN void S(gcrt_rnn_seq)(int cell, int64_t seq, int64_t batch, int64_t input, int64_t hidden, int direction,
                     int layout, int flag, T clip, const T *X, const T *W, const T *R, const T *B,
                     const int32_t *sl32, const int64_t *sl64, const T *h0, const T *c0, const T *P, T *Y,
                     T *Y_h, T *Y_c, T *ws)
{
    const int64_t N = batch, H = hidden, In = input;
    const int64_t G = cell == GCRT_RNN_CELL_LSTM ? 4 : cell == GCRT_RNN_CELL_GRU ? 3 : 1, GH = G * H;
    const int D = direction == 2 ? 2 : 1;
    const int gru_reset_first = cell == GCRT_RNN_CELL_GRU && !flag;
    T *gx = ws, *gh = gx + N * GH, *h = gh + N * GH, *c = h + N * H, *tmp = c + N * H;
    int64_t b, j, s, k;
    int dir;
    if (N == 0 || H == 0) return;
    for (dir = 0; dir < D; dir++) {
        const int rev = direction == 1 || dir == 1;
        const T *Wd = W + dir * GH * In, *Rd = R + dir * GH * H;
        const T *Bd = B ? B + dir * 2 * GH : 0, *Pd = P ? P + dir * 3 * H : 0;
        for (b = 0; b < N; b++)
            for (j = 0; j < H; j++) {
                int64_t so = (layout ? b * D + dir : dir * N + b) * H + j;
                h[b * H + j] = h0 ? h0[so] : (T)0;
                c[b * H + j] = c0 ? c0[so] : (T)0;
            }
        for (s = 0; s < seq; s++) {
            const int64_t t = rev ? seq - 1 - s : s;
            const T *Xt = X + (layout ? t * In : t * N * In);
            GCRT_GEMM(0, 1, N, GH, In, (T)1, Xt, layout ? seq * In : In, Wd, In, (T)0, gx, GH);
            GCRT_GEMM(0, 1, N, gru_reset_first ? 2 * H : GH, H, (T)1, h, H, Rd, H, (T)0, gh, GH);
            if (gru_reset_first) {
                for (b = 0; b < N; b++)
                    for (j = 0; j < H; j++) {
                        T a = gx[b * GH + H + j] + gh[b * GH + H + j];
                        if (Bd) a += Bd[H + j] + Bd[GH + H + j];
                        tmp[b * H + j] = S(rnn_sigmoid)(S(rnn_clip)(a, clip)) * h[b * H + j];
                    }
                GCRT_GEMM(0, 1, N, H, H, (T)1, tmp, H, Rd + 2 * H * H, H, (T)0, gh + 2 * H, GH);
            }
            for (b = 0; b < N; b++) {
                int64_t L = sl32 ? (int64_t)sl32[b] : sl64 ? sl64[b] : seq;
                T *y = Y ? Y + (layout ? (b * seq + t) * D + dir : (t * D + dir) * N + b) * H : 0;
                T *hb = h + b * H, *cb = c + b * H;
                const T *ax = gx + b * GH, *ah = gh + b * GH;
                if (t >= L) {
                    if (y)
                        for (j = 0; j < H; j++) y[j] = (T)0;
                    continue;
                }
                for (j = 0; j < H; j++) {
                    T pre[4];
                    for (k = 0; k < G; k++) {
                        pre[k] = ax[k * H + j];
                        if (Bd) pre[k] += Bd[k * H + j];
                        if (!(cell == GCRT_RNN_CELL_GRU && k == 2)) {
                            pre[k] += ah[k * H + j];
                            if (Bd) pre[k] += Bd[GH + k * H + j];
                        }
                    }
                    if (cell == GCRT_RNN_CELL_RNN) {
                        hb[j] = GCRT_TANH(S(rnn_clip)(pre[0], clip));
                    } else if (cell == GCRT_RNN_CELL_GRU) {
                        T z = S(rnn_sigmoid)(S(rnn_clip)(pre[0], clip));
                        T rh = ah[2 * H + j] + (Bd ? Bd[GH + 2 * H + j] : (T)0);
                        T ht;
                        if (flag) rh *= S(rnn_sigmoid)(S(rnn_clip)(pre[1], clip));
                        ht = GCRT_TANH(S(rnn_clip)(pre[2] + rh, clip));
                        hb[j] = ((T)1 - z) * ht + z * hb[j];
                    } else {
                        T ig = S(rnn_sigmoid)(S(rnn_clip)(pre[0] + (Pd ? Pd[j] * cb[j] : (T)0), clip));
                        T fg = flag ? (T)1 - ig
                                    : S(rnn_sigmoid)(S(rnn_clip)(pre[2] + (Pd ? Pd[2 * H + j] * cb[j] : (T)0), clip));
                        T cc = GCRT_TANH(S(rnn_clip)(pre[3], clip));
                        T og;
                        cb[j] = fg * cb[j] + ig * cc;
                        og = S(rnn_sigmoid)(S(rnn_clip)(pre[1] + (Pd ? Pd[H + j] * cb[j] : (T)0), clip));
                        hb[j] = og * GCRT_TANH(cb[j]);
                    }
                    if (y) y[j] = hb[j];
                }
            }
        }
        for (b = 0; b < N; b++) {
            int64_t L = sl32 ? (int64_t)sl32[b] : sl64 ? sl64[b] : seq;
            for (j = 0; j < H; j++) {
                int64_t so = (layout ? b * D + dir : dir * N + b) * H + j;
                if (Y_h) Y_h[so] = L > 0 ? h[b * H + j] : (T)0;
                if (Y_c) Y_c[so] = L > 0 ? c[b * H + j] : (T)0;
            }
        }
    }
}

#endif /* GCRT_RNN_TEMPLATE */
