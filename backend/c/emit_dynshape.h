/* emit_dynshape.h — the C emitters of Slice, Split, TopK and ReduceSum for
 * nodes whose shape operands (starts/ends/axes/steps, split, K, axes) are
 * known only at run time (backend/c/emit_dynshape.c). The families'
 * emitters call them when cgen_operand_at_run_time says so; with constant
 * operands they write what they always did. */
#ifndef GRAPHC_EMIT_DYNSHAPE_H
#define GRAPHC_EMIT_DYNSHAPE_H

#include "cgen.h"

/* Whether input j of n is present and not a constant. */
int cgen_operand_at_run_time(const Node *n, int j);
/* Writes `int64_t NAME[len];` holding the values of integer input j of n
 * (any integer dtype), copied with the loop variable i (CgenDims.read). */
void cgen_read_operand(Cgen *c, const Node *n, int j, const char *name, const char *i);

int cgen_emit_slice_dyn(Cgen *c, const Node *n, Diag *d);
int cgen_emit_split_dyn(Cgen *c, const Node *n, Diag *d);
int cgen_emit_topk_dyn(Cgen *c, const Node *n, Diag *d);
/* ReduceSum with a runtime `axes` that is not empty. */
int cgen_emit_reduce_sum_dyn(Cgen *c, const Node *n, Diag *d);

#endif
