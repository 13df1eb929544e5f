/* gcrt_rnn.h — recurrent layer kernels the generated code calls: RNN, GRU
 * and LSTM over a whole sequence (ONNX semantics, default activations).
 * Plain C99; every size is an explicit argument; no allocation, no I/O, no
 * global state. Each kernel exists for float (_f32) and double (_f64).
 */
#ifndef GCRT_RNN_H
#define GCRT_RNN_H

#include <stdint.h>

#include "gcrt_base.h"

/* Cell kinds of gcrt_rnn_seq_*. */
#define GCRT_RNN_CELL_RNN 0
#define GCRT_RNN_CELL_GRU 1
#define GCRT_RNN_CELL_LSTM 2

/* Runs one recurrent layer. cell: GCRT_RNN_CELL_*; direction: 0 forward,
 * 1 reverse, 2 bidirectional; layout 0: X [S,N,I], Y [S,D,N,H], states
 * [D,N,H]; layout 1: X [N,S,I], Y [N,S,D,H], states [N,D,H]. flag is GRU's
 * linear_before_reset or LSTM's input_forget; clip <= 0 means no clipping.
 * W [D,G*H,I], R [D,G*H,H], B [D,2*G*H] (or 0); sequence lengths come from
 * sl32 or sl64 (or neither: every batch entry runs S steps; values are
 * clamped to [0,S]); h0/c0 [states] and P [D,3*H] may be 0; Y_h/Y_c may be
 * 0. ws: N*H*(2*G+3) elements of scratch (G = 1, 3 or 4). */
#define GCRT_RNN_DECLARE(S, T)                                                                 \
    GCRT_FN void gcrt_rnn_seq##S(int cell, int64_t seq, int64_t batch, int64_t input, int64_t hidden, \
                         int direction, int layout, int flag, T clip, const T *X, const T *W,  \
                         const T *R, const T *B, const int32_t *sl32, const int64_t *sl64,     \
                         const T *h0, const T *c0, const T *P, T *Y, T *Y_h, T *Y_c, T *ws);

GCRT_RNN_DECLARE(_f32, float)
GCRT_RNN_DECLARE(_f64, double)

#undef GCRT_RNN_DECLARE

#endif
