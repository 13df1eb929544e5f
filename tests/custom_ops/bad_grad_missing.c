/* Error case: the gradient lacks the output gradient parameter dy. */
#include <stdint.h>
#include <graphc/custom_op.h>

GRAPHC_OP("com.example", "ScaledTanh", GRAPHC_ELEMENTWISE)
void scaled_tanh(int64_t n, const float *x, float *y, float alpha)
{ for (int64_t i = 0; i < n; i++) y[i] = tanhf(alpha * x[i]); }

GRAPHC_GRAD("com.example", "ScaledTanh")
void scaled_tanh_grad(int64_t n, const float *x, const float *y, float *dx, float alpha)
{ for (int64_t i = 0; i < n; i++) dx[i] = alpha * (1.0f - y[i] * y[i]); }
