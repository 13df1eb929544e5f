/* emit_dynindex.h — the runtime-extent emitters of GatherND and
 * ScatterElements (backend/c/emit_dynindex.c). emit_index.c hands them a
 * node with a symbolic dim; the static path stays there, unchanged. */
#ifndef GRAPHC_EMIT_DYNINDEX_H
#define GRAPHC_EMIT_DYNINDEX_H

#include "cgen.h"

int cgen_emit_gather_nd_dyn(Cgen *c, const Node *n, Diag *d);

#endif
