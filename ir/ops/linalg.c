/* linalg.c — operator descriptions of the linalg family (placeholder: names only). */
#include "../op.h"

const OpDesc op_MatMul = {.name = "MatMul", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_Gemm = {.name = "Gemm", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
