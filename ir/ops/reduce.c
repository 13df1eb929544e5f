/* reduce.c — operator descriptions of the reduce family (placeholder: names only). */
#include "../op.h"

const OpDesc op_ReduceMean = {.name = "ReduceMean", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_ReduceSum = {.name = "ReduceSum", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_ReduceMax = {.name = "ReduceMax", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_ReduceMin = {.name = "ReduceMin", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
