/* A general op whose shape rule gives one element fewer than its function
 * writes: graphc run (and check-op) must catch the write past the end. */
#include <stdint.h>
#include <graphc/custom_op.h>

GRAPHC_OP("com.example", "Short", GRAPHC_GENERAL)
void short_copy(const graphc_tensor *x, graphc_tensor *y)
{
    for (int64_t i = 0; i < graphc_numel(x); i++) ((float *)y->data)[i] = ((const float *)x->data)[i];
}

GRAPHC_SHAPE("com.example", "Short")
const char *short_shape(const graphc_tensor *x, graphc_tensor *y)
{
    y->dtype = x->dtype;
    y->rank = 1;
    y->dims[0] = graphc_numel(x) - 1;
    return NULL;
}
