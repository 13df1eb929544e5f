/* rnn_attrs.h — attribute indices of the rnn family's ops (ir/ops/rnn.c),
 * shared with their emitters (backend/c/emit_rnn.c). Conventions in
 * ir/op.h ("Attribute indices"). */
#ifndef GRAPHC_RNN_ATTRS_H
#define GRAPHC_RNN_ATTRS_H

/* RNN; GRU and LSTM share these indices and add their flag after them. */
enum {
    RNN_ACTIVATION_ALPHA, RNN_ACTIVATION_BETA, RNN_ACTIVATIONS, RNN_CLIP, RNN_DIRECTION, RNN_HIDDEN_SIZE,
    RNN_LAYOUT, RNN_COUNT
};
enum { GRU_LINEAR_BEFORE_RESET = RNN_COUNT, GRU_COUNT };
enum { LSTM_INPUT_FORGET = RNN_COUNT, LSTM_COUNT };

#endif
