/* signal_attrs.h — attribute indices of the signal family's ops
 * (ir/ops/signal.c), shared with their emitters (backend/c/emit_signal.c).
 * Conventions in ir/op.h ("Attribute indices"). */
#ifndef GRAPHC_SIGNAL_ATTRS_H
#define GRAPHC_SIGNAL_ATTRS_H

enum { EINSUM_EQUATION, EINSUM_COUNT };
enum { GRID_SAMPLE_ALIGN_CORNERS, GRID_SAMPLE_MODE, GRID_SAMPLE_PADDING_MODE, GRID_SAMPLE_COUNT };
/* HannWindow, HammingWindow, BlackmanWindow */
enum { WINDOW_OUTPUT_DATATYPE, WINDOW_PERIODIC, WINDOW_COUNT };
enum { DFT_AXIS, DFT_INVERSE, DFT_ONESIDED, DFT_COUNT };
enum { STFT_ONESIDED, STFT_COUNT };
/* MelWeightMatrix */
enum { MEL_OUTPUT_DATATYPE, MEL_COUNT };

#endif
