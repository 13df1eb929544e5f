/* Error case: the gradient names an attribute the op does not have. */
#include <stdint.h>
#include <graphc/custom_op.h>

GRAPHC_OP("com.example", "ScaledTanh", GRAPHC_ELEMENTWISE)
void scaled_tanh(int64_t n, const float *x, float *y, float alpha)
{ for (int64_t i = 0; i < n; i++) y[i] = tanhf(alpha * x[i]); }

GRAPHC_GRAD("com.example", "ScaledTanh")
void scaled_tanh_grad(int64_t n, const float *x, const float *y, const float *dy, float *dx, float beta)
{ for (int64_t i = 0; i < n; i++) dx[i] = dy[i] * beta * (1.0f - y[i] * y[i]); }
