/* emit_dynindex.h — the runtime-extent emitters of GatherND and
 * ScatterElements (backend/c/emit_dynindex.c). emit_index.c hands them a
 * node with a symbolic dim; the static path stays there, unchanged. */
#ifndef GRAPHC_EMIT_DYNINDEX_H
#define GRAPHC_EMIT_DYNINDEX_H

#include "cgen.h"

/* Writes `{ CT a = y[yi]; CT b = u[ui]; y[yi] = a OP b; }` for scatter
 * reduction kind (0 none: a plain copy, 1 add, 2 mul, 3 max, 4 min) in
 * the compute type of t. */
void emit_scatter_reduce(Writer *w, DType t, int kind, const char *y, const char *yi, const char *u, const char *ui);
int cgen_emit_gather_nd_dyn(Cgen *c, const Node *n, Diag *d);
/* GatherElements and ScatterElements. */
int cgen_emit_elements_dyn(Cgen *c, const Node *n, Diag *d);

#endif
