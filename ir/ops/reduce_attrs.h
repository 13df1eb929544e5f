/* reduce_attrs.h — attribute indices of the reduce family's ops
 * (ir/ops/reduce.c), shared with their emitters (backend/c/emit_reduce.c).
 * Conventions in ir/op.h ("Attribute indices"). */
#ifndef GRAPHC_REDUCE_ATTRS_H
#define GRAPHC_REDUCE_ATTRS_H

/* Every reduction but ReduceSum (axes as an attribute) */
enum { REDUCE_AXES, REDUCE_KEEPDIMS, REDUCE_COUNT };
/* ReduceSum (axes as input 1) */
enum { REDUCE_SUM_KEEPDIMS, REDUCE_SUM_NOOP_WITH_EMPTY_AXES, REDUCE_SUM_COUNT };

#endif
