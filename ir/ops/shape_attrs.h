/* shape_attrs.h — attribute indices of the shape family's ops
 * (ir/ops/shape.c), shared with their emitters (backend/c/emit_shape.c).
 * Conventions in ir/op.h ("Attribute indices"). */
#ifndef GRAPHC_SHAPE_ATTRS_H
#define GRAPHC_SHAPE_ATTRS_H

enum { RESHAPE_ALLOWZERO, RESHAPE_COUNT };
enum { FLATTEN_AXIS, FLATTEN_COUNT };
enum { TRANSPOSE_PERM, TRANSPOSE_COUNT };
enum { CONCAT_AXIS, CONCAT_COUNT };
enum { SPLIT_AXIS, SPLIT_COUNT };
enum { GATHER_AXIS, GATHER_COUNT };
enum { PAD_MODE, PAD_COUNT };
enum { SHAPE_START, SHAPE_END, SHAPE_COUNT };
/* Constant: exactly one of them is set. */
enum {
    CONSTANT_VALUE, CONSTANT_VALUE_FLOAT, CONSTANT_VALUE_FLOATS, CONSTANT_VALUE_INT, CONSTANT_VALUE_INTS,
    CONSTANT_COUNT
};

#endif
