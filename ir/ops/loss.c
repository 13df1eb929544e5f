/* loss.c — operator descriptions of the loss family (placeholder: names only). */
#include "../op.h"

const OpDesc op_NegativeLogLikelihoodLoss = {.name = "NegativeLogLikelihoodLoss", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
const OpDesc op_SoftmaxCrossEntropyLoss = {.name = "SoftmaxCrossEntropyLoss", .min_in = 0, .max_in = -1, .min_out = 1, .max_out = -1};
