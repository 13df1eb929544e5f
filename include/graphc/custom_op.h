/* graphc/custom_op.h — annotations that turn plain C functions into graphc
 * operators (graphc compile/run/dump/gradcheck --ops FILE.c).
 *
 *     GRAPHC_OP("com.example", "ScaledTanh", GRAPHC_ELEMENTWISE)
 *     void scaled_tanh(int64_t n, const float *x, float *y, float alpha);
 *
 *     GRAPHC_GRAD("com.example", "ScaledTanh")
 *     void scaled_tanh_grad(int64_t n, const float *x, const float *y,
 *                           const float *dy, float *dx, float alpha);
 *
 * An elementwise op takes the element count, its inputs (const T *), its
 * outputs (T *), then its attributes as scalars named like the node's
 * attributes (float, double, int64_t, const char *). Its gradient takes the
 * count, the inputs, the outputs, the output gradients, the input gradients
 * it writes, then the same attributes. graphc reads the annotation lines and
 * the prototypes that follow them; to a C compiler the annotations are
 * nothing, so the file builds with any C99 compiler. GRAPHC_GENERAL is
 * reserved for operators that are not elementwise (not supported yet).
 */
#ifndef GRAPHC_CUSTOM_OP_H
#define GRAPHC_CUSTOM_OP_H

#include <math.h>
#include <stdint.h>

#define GRAPHC_ELEMENTWISE 1
#define GRAPHC_GENERAL 2

#define GRAPHC_OP(domain, name, kind)
#define GRAPHC_GRAD(domain, name)

#endif
