/* Error case: a shape rule that takes its output as const (it must set it). */
#include <stdint.h>
#include <graphc/custom_op.h>

GRAPHC_OP("com.example", "Copy", GRAPHC_GENERAL)
void copy(const graphc_tensor *x, graphc_tensor *y)
{
    for (int64_t i = 0; i < graphc_numel(x); i++) ((float *)y->data)[i] = ((const float *)x->data)[i];
}

GRAPHC_SHAPE("com.example", "Copy")
const char *copy_shape(const graphc_tensor *x,
                       const graphc_tensor *y) { (void)x; (void)y; return NULL; }
