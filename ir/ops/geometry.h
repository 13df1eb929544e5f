/* geometry.h — resolved index geometry that an op's description computes for
 * shape inference and that emitters need too, so that both read the same
 * numbers instead of recomputing them (pads after auto_pad, Slice starts
 * after clamping). */
#ifndef GRAPHC_OPS_GEOMETRY_H
#define GRAPHC_OPS_GEOMETRY_H

#include "../ir.h"

/* For a shape-inferred Conv, MaxPool or AveragePool node: kernel, strides,
 * dilations and resolved leading/trailing pads per spatial dim (arrays of
 * IR_MAX_RANK). Returns the spatial rank, or -1 if the node is invalid. */
int ir_nn_window_geometry(const Node *n, int64_t *kernel, int64_t *strides, int64_t *dilations,
                          int64_t *pad_begin, int64_t *pad_end);

/* For a Slice node: per data axis, the first index read and the step (0 and
 * 1 on untouched axes, start 0 on empty axes), and the output shape. */
int ir_slice_plan(const Node *n, int64_t *start, int64_t *step, Shape *out, Diag *d);

/* For a Shape node: the [start, end) range of input dims it returns
 * (opset 15: negative counts from the end, then clamped to [0, rank]). */
void ir_shape_range(const Node *n, int *start, int *end);

#endif
