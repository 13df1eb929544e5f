/* index.c — operator descriptions of the index family (placeholder: names only). */
#include "../op.h"

const OpDesc op_ConstantOfShape = {.name = "ConstantOfShape", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_Size = {.name = "Size", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_GatherElements = {.name = "GatherElements", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_ScatterElements = {.name = "ScatterElements", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_ScatterND = {.name = "ScatterND", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_GatherND = {.name = "GatherND", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_Trilu = {.name = "Trilu", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_Range = {.name = "Range", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_Tile = {.name = "Tile", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_CumSum = {.name = "CumSum", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_OneHot = {.name = "OneHot", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_ArgMax = {.name = "ArgMax", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_ArgMin = {.name = "ArgMin", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_TopK = {.name = "TopK", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_EyeLike = {.name = "EyeLike", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_ReverseSequence = {.name = "ReverseSequence", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
