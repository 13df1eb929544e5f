/* signal.h — facts of the signal family shared by its description
 * (ir/ops/signal.c) and its emitters (backend/c/emit_signal.c,
 * backend/cuda/): the parsed form of an Einsum equation, the geometry of
 * DFT and STFT, and the windows' coefficients. */
#ifndef GRAPHC_OPS_SIGNAL_H
#define GRAPHC_OPS_SIGNAL_H

#include "../ir.h"

#define EINSUM_MAX_LABELS (52 + IR_MAX_RANK)
#define EINSUM_MAX_OPS 8

/* An Einsum as one loop nest: loop k runs over label lab[k] of size
 * size[k]; the first n_out loops index the output (row-major), the rest
 * are summed. stride[i][k] is operand i's element stride along loop k
 * (the sum over its dims carrying that label: diagonals; 0 where the
 * label is absent or broadcast). */
typedef struct EinsumPlan {
    int n_ops, n_loops, n_out;
    int64_t size[EINSUM_MAX_LABELS];
    int64_t stride[EINSUM_MAX_OPS][EINSUM_MAX_LABELS];
    Shape out;
} EinsumPlan;

/* Parses n's equation against its input shapes; -1 with a diagnostic. */
int signal_einsum_plan(const struct Node *n, EinsumPlan *p, Diag *d);

/* A DFT as outer x inner independent lines along the axis: n_in input
 * elements of `comps` (1 or 2) values, transform length L, K output bins. */
typedef struct DftGeom {
    int64_t outer, inner, n_in, L, K;
    int comps, inverse;
} DftGeom;
/* Geometry of an inferred DFT node (dft_length read from its constant). */
void signal_dft_geom(const struct Node *n, DftGeom *g);

/* An STFT: frames of length L, step apart, each transformed into K bins. */
typedef struct StftGeom {
    int64_t batch, sig_len, frames, step, L, K;
    int comps;
} StftGeom;
/* Geometry of an inferred STFT node (frame_step, frame_length constants). */
void signal_stft_geom(const struct Node *n, StftGeom *g);

/* A window generator's coefficients (HannWindow, HammingWindow,
 * BlackmanWindow): w[i] = a[0] - a[1] cos(2 pi i / N) + a[2] cos(4 pi i / N). */
void signal_window_coeffs(const struct Node *n, double a[3]);

#endif
