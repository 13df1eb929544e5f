/* Error case: the prototype reads, but the body does not compile. */
#include <stdint.h>
#include <graphc/custom_op.h>

GRAPHC_OP("com.example", "Broken", GRAPHC_ELEMENTWISE)
void broken(int64_t n, const float *x, float *y)
{ for (int64_t i = 0; i < n; i++) y[i] = x[i] + undeclared_name; }
