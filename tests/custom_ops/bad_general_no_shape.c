/* Error case: a general op without a shape rule. */
#include <stdint.h>
#include <graphc/custom_op.h>

GRAPHC_OP("com.example", "Copy", GRAPHC_GENERAL)
void copy(const graphc_tensor *x, graphc_tensor *y)
{
    for (int64_t i = 0; i < graphc_numel(x); i++) ((float *)y->data)[i] = ((const float *)x->data)[i];
}
