/* elementwise.c — operator descriptions of the elementwise family (placeholder: names only). */
#include "../op.h"

const OpDesc op_Abs = {.name = "Abs", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_Neg = {.name = "Neg", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_Exp = {.name = "Exp", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_Log = {.name = "Log", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_Sqrt = {.name = "Sqrt", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_Reciprocal = {.name = "Reciprocal", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_Relu = {.name = "Relu", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_Sigmoid = {.name = "Sigmoid", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_Tanh = {.name = "Tanh", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_Erf = {.name = "Erf", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_LeakyRelu = {.name = "LeakyRelu", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_Elu = {.name = "Elu", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_Selu = {.name = "Selu", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_HardSigmoid = {.name = "HardSigmoid", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_HardSwish = {.name = "HardSwish", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_Softplus = {.name = "Softplus", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_Clip = {.name = "Clip", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_Floor = {.name = "Floor", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_Ceil = {.name = "Ceil", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_Sin = {.name = "Sin", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_Cos = {.name = "Cos", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_Not = {.name = "Not", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_Identity = {.name = "Identity", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_Cast = {.name = "Cast", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_Add = {.name = "Add", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_Sub = {.name = "Sub", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_Mul = {.name = "Mul", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_Div = {.name = "Div", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_Pow = {.name = "Pow", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_Max = {.name = "Max", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_Min = {.name = "Min", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_Equal = {.name = "Equal", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_Less = {.name = "Less", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_Greater = {.name = "Greater", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_Where = {.name = "Where", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
