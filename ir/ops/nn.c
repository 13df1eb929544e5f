/* nn.c — operator descriptions of the nn family (placeholder: names only). */
#include "../op.h"

const OpDesc op_Conv = {.name = "Conv", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_MaxPool = {.name = "MaxPool", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_AveragePool = {.name = "AveragePool", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_GlobalAveragePool = {.name = "GlobalAveragePool", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_BatchNormalization = {.name = "BatchNormalization", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_Softmax = {.name = "Softmax", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_LogSoftmax = {.name = "LogSoftmax", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_LayerNormalization = {.name = "LayerNormalization", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
