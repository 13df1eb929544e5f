/* emit_dynfill.h — the runtime-extent emitters of the generators and
 * movers whose output shape comes from an operand's values (Range,
 * ConstantOfShape, Tile, OneHot, Expand, Pad, Resize/Upsample) when that
 * operand is not a constant (backend/c/emit_dynfill.c). Each family's own
 * emitter hands a node with symbolic dims to these; the static path stays
 * in the family's file, unchanged.
 */
#ifndef GRAPHC_EMIT_DYNFILL_H
#define GRAPHC_EMIT_DYNFILL_H

#include "cgen.h"

int emit_dyn_range(Cgen *c, const Node *n, Diag *d);
int emit_dyn_constant_of_shape(Cgen *c, const Node *n, Diag *d);
int emit_dyn_tile(Cgen *c, const Node *n, Diag *d);
int emit_dyn_onehot(Cgen *c, const Node *n, Diag *d);
int emit_dyn_expand(Cgen *c, const Node *n, Diag *d);
int emit_dyn_pad(Cgen *c, const Node *n, Diag *d);
int emit_dyn_resize(Cgen *c, const Node *n, Diag *d);
/* Whether Resize/Upsample node n needs emit_dyn_resize (runtime extents, or
 * a tf_crop_and_resize roi read at run time), and its workspace (the tap
 * tables; 0 for a node the static emitter writes). */
int emit_dyn_resize_needed(const Node *n);
size_t emit_dyn_resize_workspace(const Node *n);
/* The arguments of gcrt_resize_taps_* for Resize/Upsample n (the modes in
 * gcrt_resize.h's order; Upsample: asymmetric, floor) and its operands
 * (NULL when absent or empty); the CUDA backend's runtime Resize computes
 * its tables with the same call. */
typedef struct EmitResizeArgs {
    int K, mode, ctm, nearest, exclude;
    double A;
    const Value *scales, *sizes, *roi;
} EmitResizeArgs;
EmitResizeArgs emit_dyn_resize_args(const Node *n);

#endif
