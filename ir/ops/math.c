/* math.c — operator descriptions of the math family (placeholder: names only). */
#include "../op.h"

const OpDesc op_And = {.name = "And", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_Or = {.name = "Or", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_Xor = {.name = "Xor", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_Mod = {.name = "Mod", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_Sign = {.name = "Sign", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_Round = {.name = "Round", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_IsNaN = {.name = "IsNaN", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_IsInf = {.name = "IsInf", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_Acos = {.name = "Acos", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_Acosh = {.name = "Acosh", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_Asin = {.name = "Asin", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_Asinh = {.name = "Asinh", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_Atan = {.name = "Atan", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_Atanh = {.name = "Atanh", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_Cosh = {.name = "Cosh", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_Sinh = {.name = "Sinh", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_Tan = {.name = "Tan", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_Softsign = {.name = "Softsign", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_ThresholdedRelu = {.name = "ThresholdedRelu", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_Celu = {.name = "Celu", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_Shrink = {.name = "Shrink", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_PRelu = {.name = "PRelu", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_GreaterOrEqual = {.name = "GreaterOrEqual", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_LessOrEqual = {.name = "LessOrEqual", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_Sum = {.name = "Sum", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_Mean = {.name = "Mean", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_BitShift = {.name = "BitShift", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_CastLike = {.name = "CastLike", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
