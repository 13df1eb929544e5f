/* Error case: a workspace request for an op whose function takes no workspace. */
#include <stdint.h>
#include <graphc/custom_op.h>

GRAPHC_OP("com.example", "Copy", GRAPHC_GENERAL)
void copy(const graphc_tensor *x, graphc_tensor *y)
{
    for (int64_t i = 0; i < graphc_numel(x); i++) ((float *)y->data)[i] = ((const float *)x->data)[i];
}

GRAPHC_SHAPE("com.example", "Copy")
const char *copy_shape(const graphc_tensor *x, graphc_tensor *y) { *y = *x; return NULL; }

GRAPHC_WORKSPACE("com.example", "Copy")
int64_t copy_workspace(const graphc_tensor *x, const graphc_tensor *y) { (void)x; (void)y; return 64; }
