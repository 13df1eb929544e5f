/* shape.c — operator descriptions of the shape family (placeholder: names only). */
#include "../op.h"

const OpDesc op_Reshape = {.name = "Reshape", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_Flatten = {.name = "Flatten", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_Transpose = {.name = "Transpose", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_Concat = {.name = "Concat", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_Split = {.name = "Split", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_Slice = {.name = "Slice", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_Gather = {.name = "Gather", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_Squeeze = {.name = "Squeeze", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_Unsqueeze = {.name = "Unsqueeze", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_Pad = {.name = "Pad", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_Expand = {.name = "Expand", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_Shape = {.name = "Shape", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_Constant = {.name = "Constant", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
