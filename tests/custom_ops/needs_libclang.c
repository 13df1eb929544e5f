/* Error case: a typedef'd parameter type, which only a C parser can read. */
#include <stdint.h>
#include <graphc/custom_op.h>

typedef float real;

GRAPHC_OP("com.example", "Twice", GRAPHC_ELEMENTWISE)
void twice(int64_t n, const real *x, real *y)
{ for (int64_t i = 0; i < n; i++) y[i] = 2 * x[i]; }
