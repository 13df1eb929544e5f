/* Error case: GRAPHC_INPLACE names an output the op does not have. */
#include <stdint.h>
#include <graphc/custom_op.h>

GRAPHC_OP("com.example", "Copy", GRAPHC_GENERAL)
void copy(const graphc_tensor *x, graphc_tensor *y)
{
    for (int64_t i = 0; i < graphc_numel(x); i++) ((float *)y->data)[i] = ((const float *)x->data)[i];
}

GRAPHC_SHAPE("com.example", "Copy")
const char *copy_shape(const graphc_tensor *x, graphc_tensor *y) { *y = *x; return NULL; }

GRAPHC_INPLACE("com.example", "Copy", "out", "x")
