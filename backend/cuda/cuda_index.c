/* cuda_index.c — the CUDA backend's generated kernels for index and data
 * movement ops (see cuda_emit.h).
 */
#include "cuda_emit.h"
#include "../cfamily/cfam_expr.h"
#include "../../ir/ops/geometry.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const CudaEntry cuda_index_entries[] = {
    {-1, NULL, NULL, NULL, NULL},
};
