/* vision.c — operator descriptions of the vision family (placeholder: names only). */
#include "../op.h"

const OpDesc op_ConvTranspose = {.name = "ConvTranspose", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_GlobalMaxPool = {.name = "GlobalMaxPool", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_InstanceNormalization = {.name = "InstanceNormalization", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_LRN = {.name = "LRN", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_DepthToSpace = {.name = "DepthToSpace", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_SpaceToDepth = {.name = "SpaceToDepth", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_Resize = {.name = "Resize", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_Upsample = {.name = "Upsample", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_Hardmax = {.name = "Hardmax", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_Dropout = {.name = "Dropout", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_MeanVarianceNormalization = {.name = "MeanVarianceNormalization", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
