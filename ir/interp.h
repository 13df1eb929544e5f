/* interp.h — the reference interpreter: evaluates a shape-inferred graph on
 * the host using each op's reference evaluation. */
#ifndef GRAPHC_INTERP_H
#define GRAPHC_INTERP_H

#include "ir.h"

typedef enum InterpPrec {
    INTERP_F32, /* values are rounded to their dtype after every op */
    INTERP_F64  /* f32 and f64 values keep double precision; f16/bf16 still round */
} InterpPrec;

/* inputs[i]: raw little-endian data for g->inputs[i] in its dtype.
 * outputs[i]: receives g->outputs[i] in its dtype (caller-allocated). */
int ir_interp_run(const Graph *g, InterpPrec prec, const void *const *inputs,
                  void *const *outputs, Diag *d);
/* Same, with every tensor as doubles (for gradient checks). */
int ir_interp_run_f64(const Graph *g, InterpPrec prec, const double *const *inputs,
                      double *const *outputs, Diag *d);

#endif
